/* cupti_lib.c -- libcupti found and loaded (cupti_lib.h). */
#define _GNU_SOURCE /* readlink, dlopen */
#include "kernels/gpu/cupti_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/status.h"

/* `dir`/`name` (the loader's search for `name` when `dir` is NULL). From a
 * folder, its libnvperf_* go first, globally, so CUPTI finds those. */
static void *load_from(const char *dir, const char *name, char *library, size_t len) {
    char path[1280];
    if (dir) {
        static const char *const perf[] = {"libnvperf_host.so", "libnvperf_target.so"};
        for (size_t i = 0; i < sizeof perf / sizeof perf[0]; i++) {
            int n = snprintf(path, sizeof path, "%s/%s", dir, perf[i]);
            if (n > 0 && (size_t)n < sizeof path) dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* absent: CUPTI says */
        }
    }
    int n = dir ? snprintf(path, sizeof path, "%s/%s", dir, name) : snprintf(path, sizeof path, "%s", name);
    if (n < 0 || (size_t)n >= sizeof path) return NULL; /* no such file can be named */
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib) snprintf(library, len, "%s", path);
    return lib;
}

/* libcupti.so.13, then libcupti.so, in `dir` (NULL: the loader's search). */
static void *load_dir(const char *dir, char *library, size_t len) {
    void *lib = load_from(dir, "libcupti.so.13", library, len);
    return lib ? lib : load_from(dir, "libcupti.so", library, len);
}

void *cupti_lib_open(char *library, size_t len, char *reason) {
    void *lib;
    if (len) library[0] = '\0';
    const char *exact = getenv("DV_CUPTI_LIBRARY");
    if (exact && exact[0]) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", exact);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        if ((lib = load_from(slash ? dir : NULL, slash ? slash + 1 : exact, library, len))) return lib;
        const char *e = dlerror();
        dv_seterr(reason, "CUPTI: DV_CUPTI_LIBRARY=%s cannot be loaded: %s", exact, e ? e : "not found");
        return NULL;
    }
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 8);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        static const char *const rel[] = {"/lib", "/../lib"};
        for (size_t i = 0; slash && i < sizeof rel / sizeof rel[0]; i++) {
            snprintf(slash, sizeof self - (size_t)(slash - self), "%s", rel[i]);
            if ((lib = load_dir(self, library, len))) return lib;
        }
    }
#ifdef DV_CUPTI_BUILD_DIR
    if ((lib = load_dir(DV_CUPTI_BUILD_DIR, library, len))) return lib;
#endif
    if ((lib = load_dir(NULL, library, len))) return lib;
    const char *e = dlerror();
    dv_seterr(reason,
              "CUPTI: libcupti.so not found (beside the binary in lib/, in the toolkit, or on the "
              "loader path; set DV_CUPTI_LIBRARY to its path): %s",
              e ? e : "not found");
    return NULL;
}

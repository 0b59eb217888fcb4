/* cupti_lib.c -- libcupti for the process: found, loaded once, its entry
 * points resolved and its calls checked (cupti_lib.h).
 *
 * One mutex guards the process's handle and its path, which never change
 * once set; cuptiGetResultString is resolved with the library, so the
 * check names CUPTI's text for a result whichever unit made the call.
 */
#define _GNU_SOURCE /* readlink, dlopen */
#include "kernels/gpu/cupti_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/status.h"
#include "kernels/gpu/cuda_call.h"

#ifdef DV_HAVE_CUPTI
#include <cupti_result.h>
/* The results the advice covers, as cupti_result.h numbers them. */
_Static_assert((int)CUPTI_ERROR_INSUFFICIENT_PRIVILEGES == (int)CUPTI_LIB_ERR_INSUFFICIENT_PRIVILEGES, "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES == (int)CUPTI_LIB_ERR_VIRTUALIZED_PRIVILEGES,
               "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED == (int)CUPTI_LIB_ERR_MULTIPLE_SUBSCRIBERS,
               "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED == (int)CUPTI_LIB_ERR_OLD_PROFILER, "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_NOT_SUPPORTED == (int)CUPTI_LIB_ERR_NOT_SUPPORTED, "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED == (int)CUPTI_LIB_ERR_LEGACY_PROFILER, "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_NOT_COMPATIBLE == (int)CUPTI_LIB_ERR_NOT_COMPATIBLE, "cupti_result.h");
typedef CUptiResult (*result_string_fn)(CUptiResult result, const char **str);
#else
typedef int (*result_string_fn)(int result, const char **str); /* never resolved: no CUPTI call is made */
#endif

/* The process's library: set once, by the first search that finds it. */
static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static void *lib_handle;
static char lib_path[1280];
static result_string_fn result_string;

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

/* The search of cupti_lib.h, into `library` (`len` bytes). */
static void *search(char *library, size_t len, char *reason) {
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

void *cupti_lib_open(char *library, size_t len, char *reason) {
    pthread_mutex_lock(&lib_lock);
    if (!lib_handle && (lib_handle = search(lib_path, sizeof lib_path, reason)))
        result_string = (result_string_fn)dlsym(lib_handle, "cuptiGetResultString");
    void *lib = lib_handle;
    if (len) snprintf(library, len, "%s", lib ? lib_path : "");
    pthread_mutex_unlock(&lib_lock);
    return lib;
}

void *cupti_lib_sym(const char *name, const char *needs, char *reason) {
    pthread_mutex_lock(&lib_lock);
    void *fn = lib_handle ? dlsym(lib_handle, name) : NULL;
    if (!fn) {
        if (lib_handle) dv_seterr(reason, "CUPTI: %s has no %s (%s)", lib_path, name, needs);
        else dv_seterr(reason, "CUPTI: %s: the library is not loaded", name);
    }
    pthread_mutex_unlock(&lib_lock);
    return fn;
}

int cupti_lib_check(int result, const char *call, const char *file, int line, char *reason) {
    if (result == 0) return 0; /* CUPTI_SUCCESS */
    const char *text = NULL;
    char what[ERR_LEN];
    pthread_mutex_lock(&lib_lock);
    const result_string_fn fn = result_string;
    pthread_mutex_unlock(&lib_lock);
#ifdef DV_HAVE_CUPTI
    if (fn) fn((CUptiResult)result, &text);
#else
    if (fn) fn(result, &text);
#endif
    snprintf(what, sizeof what, "%s at %s:%d", call, cuda_source_path(file), line);
    cupti_lib_explain(result, text, what, reason);
    return -1;
}

void cupti_lib_explain(int result, const char *text, const char *what, char *reason) {
    const char *hint = "";
    switch (result) {
    case CUPTI_LIB_ERR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_LIB_ERR_VIRTUALIZED_PRIVILEGES:
        hint =
            "; the driver restricts GPU performance counters to administrators (RmProfilingAdminOnly: 1 in "
            "/proc/driver/nvidia/params): load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0 "
            "(a line 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/, then reload "
            "the module or reboot), or run the worker with CAP_SYS_ADMIN";
        break;
    case CUPTI_LIB_ERR_MULTIPLE_SUBSCRIBERS:
    case CUPTI_LIB_ERR_OLD_PROFILER:
        hint = "; another profiler (ncu, nsys, DCGM profiling) holds the GPU's counters: stop it and retry";
        break;
    case CUPTI_LIB_ERR_NOT_SUPPORTED:
    case CUPTI_LIB_ERR_LEGACY_PROFILER:
    case CUPTI_LIB_ERR_NOT_COMPATIBLE:
        hint = "; this GPU or driver does not support the range profiler (Volta or newer, CUDA 12.6 or newer)";
        break;
    default: break;
    }
    dv_seterr(reason, "%s: %s (%d)%s", what, text && text[0] ? text : "CUPTI error", result, hint);
}

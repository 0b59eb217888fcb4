/* toolkit.c -- the CUDA toolkit's programs on this host (toolkit.h). */
#define _GNU_SOURCE
#include "server/jobs/toolkit.h"

#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/status.h"

/* `path` (not NULL) names an executable file. */
static int executable(const char *path) { return path[0] && access(path, X_OK) == 0; }

/* out = dir/name, when that is an executable file: 1, else 0. */
static int in_dir(const char *dir, const char *name, char out[PATH_MAX]) {
    snprintf(out, PATH_MAX, "%s/%s", dir, name);
    return executable(out);
}

int toolkit_find(const char *name, char out[PATH_MAX]) {
    const char *dirs[] = {
#ifdef DV_CUDA_BIN_DIR
        DV_CUDA_BIN_DIR,
#endif
        "/usr/local/cuda/bin"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (in_dir(dirs[i], name, out)) return 0;
    const char *path = getenv("PATH");
    char buf[8192];
    snprintf(buf, sizeof buf, "%s", path ? path : "");
    char *save = NULL;
    for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save))
        if (in_dir(d, name, out)) return 0;
    out[0] = '\0';
    return -1;
}

int toolkit_disassembler(const char *exact, char out[PATH_MAX], char *why) {
    if (!exact) exact = getenv("DV_DISASSEMBLER");
    if (exact && strcmp(exact, "none") == 0) {
        dv_seterr(why, "the disassembler was turned off (--disassembler none)");
        return -1;
    }
    if (exact && exact[0]) {
        if (!executable(exact)) {
            dv_seterr(why, "the disassembler %s named is not an executable file", exact);
            return -1;
        }
        snprintf(out, PATH_MAX, "%s", exact);
        return 0;
    }
    if (toolkit_find("nvdisasm", out) == 0 || toolkit_find("cuobjdump", out) == 0) return 0;
    dv_seterr(why, "no disassembler: neither nvdisasm nor cuobjdump is in the CUDA toolkit's bin folder, in "
                   "/usr/local/cuda/bin or on PATH (--disassembler PATH or DV_DISASSEMBLER names one)");
    return -1;
}

int toolkit_ncu(const char *exact, char out[PATH_MAX]) {
    if (!exact) exact = getenv("DV_NCU");
    if (exact && exact[0]) {
        snprintf(out, PATH_MAX, "%s", exact);
        return executable(out) ? 0 : -1;
    }
    if (toolkit_find("ncu", out) == 0) return 0;
    glob_t g;
    if (glob("/opt/nvidia/nsight-compute/*/ncu", 0, NULL, &g) == 0 && g.gl_pathc) {
        snprintf(out, PATH_MAX, "%s", g.gl_pathv[g.gl_pathc - 1]);
        globfree(&g);
        return 0;
    }
    return -1;
}

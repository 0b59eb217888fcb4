/* sibling.c -- finding and exec'ing the binary beside this one (sibling.h). */
#define _POSIX_C_SOURCE 200809L
#include "server/cmd/sibling.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/status.h"

#define SIBLING_MAX_ARGS 256

int sibling_exe_dir(char *out, size_t len) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    return (size_t)snprintf(out, len, "%s", exe) < len ? 0 : -1;
}

int sibling_path(const char *name, char *out, size_t len) {
    char dir[PATH_MAX];
    if (sibling_exe_dir(dir, sizeof dir) != 0) return -1;
    return (size_t)snprintf(out, len, "%s/%s", dir, name) < len ? 0 : -1;
}

int sibling_exec(const char *name, char *const *argv, char *err) {
    char path[PATH_MAX];
    char *args[SIBLING_MAX_ARGS + 2];
    size_t n = 0;
    if (sibling_path(name, path, sizeof path) != 0) {
        dv_seterr(err, "%s: cannot find the folder of this binary", name);
        return -1;
    }
    args[n++] = path;
    for (; argv && argv[n - 1] && n <= SIBLING_MAX_ARGS; n++) args[n] = argv[n - 1];
    if (argv && argv[n - 1]) {
        dv_seterr(err, "%s: more than %d arguments", name, SIBLING_MAX_ARGS);
        return -1;
    }
    args[n] = NULL;
    execv(path, args);
    dv_seterr(err, "%s: cannot run %s: %s (it is installed beside divergence)", name, path, strerror(errno));
    return -1;
}

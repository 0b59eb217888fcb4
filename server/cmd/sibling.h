/* sibling.h -- the binaries installed side by side.
 *
 * `divergence` links no CUDA. What needs the GPU lives in `divergence-gpu`,
 * installed in the same folder: the server's GPU worker and `measure`. This
 * module finds that folder from /proc/self/exe (so a bundle unpacked
 * anywhere, or a build tree, finds its own pair) and execs the sibling.
 */
#ifndef DV_SIBLING_H
#define DV_SIBLING_H

#include <stddef.h>

#define SIBLING_GPU "divergence-gpu"

/* The folder of the running binary into out[len]. Returns 0 or -1. */
int sibling_exe_dir(char *out, size_t len);

/* The path of sibling binary `name` into out[len]. Returns 0, or -1 when
 * the folder cannot be read or the path does not fit. */
int sibling_path(const char *name, char *out, size_t len);

/* Replaces this process with `name` (a sibling), argv[0] its path and
 * argv[1..] = `argv`. Returns only on failure, with `err` saying why. */
int sibling_exec(const char *name, char *const *argv, char *err);

#endif /* DV_SIBLING_H */

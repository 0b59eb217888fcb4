/* buildinfo.h -- what built this binary: version, git revision, nvcc, the
 * flags and architectures the kernels were compiled with (both "" in a build
 * without nvcc, which compiles no kernels) and the digest of their sources.
 *
 * The definitions are generated at build time (cmake/buildinfo.cmake), so the
 * git revision is the one of the tree that was compiled, not the one CMake
 * saw when it configured; a tree with uncommitted changes says "-dirty".
 */
#ifndef DV_BUILDINFO_H
#define DV_BUILDINFO_H

#ifdef __cplusplus
extern "C" {
#endif

const char *buildinfo_version(void);           /* "0.1.0"                      */
const char *buildinfo_git_revision(void);      /* "1ade828a1b2c", "unknown"    */
const char *buildinfo_nvcc_version(void);      /* "13.0.88"                    */
const char *buildinfo_cuda_architectures(void);/* "75-real,80-real,90"         */
const char *buildinfo_cuda_flags(void);        /* every flag nvcc got, spaced  */
/* SHA-256 (16 hex digits) of the kernels' sources: the .cu and .cuh files of
 * kernels/gpu and the model headers they compile. The same with or without
 * nvcc. */
const char *buildinfo_kernel_digest(void);

#ifdef __cplusplus
}
#endif

#endif /* DV_BUILDINFO_H */

/* buildinfo.h -- what built this binary: version, git revision, nvcc and
 * the flags and architectures the kernels were compiled with.
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

#ifdef __cplusplus
}
#endif

#endif /* DV_BUILDINFO_H */

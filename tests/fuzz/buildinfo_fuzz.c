/* buildinfo_fuzz.c -- the provenance strings for the fuzz harnesses, which
 * are built by tests/fuzz/run.sh outside CMake (where buildinfo_gen.c is
 * generated). The parsers under test never read them. */
#include "kernels/base/buildinfo.h"

const char *buildinfo_version(void) { return "fuzz"; }
const char *buildinfo_git_revision(void) { return "unknown"; }
const char *buildinfo_nvcc_version(void) { return "none"; }
const char *buildinfo_cuda_architectures(void) { return "none"; }
const char *buildinfo_cuda_flags(void) { return ""; }
const char *buildinfo_kernel_digest(void) { return "fuzz"; }

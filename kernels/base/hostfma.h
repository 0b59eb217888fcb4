/* hostfma.h -- DV_FMA_CLONES, for a host function that runs long fmaf()
 * chains (the CPU references).
 *
 * On an x86-64 host with the FMA instructions such a function gets a copy
 * that runs them inline, chosen once when the program loads (GCC's
 * target_clones), instead of a call into libm per multiply-add. fmaf() is
 * correctly rounded either way, so both copies give the same bits. Other
 * compilers and hosts get the function as written.
 */
#ifndef DV_HOSTFMA_H
#define DV_HOSTFMA_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define DV_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define DV_FMA_CLONES
#endif

#endif /* DV_HOSTFMA_H */

/* cuda_call.h -- the one checker of CUDA runtime calls.
 *
 * Every CUDA call in kernels/gpu goes through it, and the error names the
 * call as it is written and where, taken from the call itself:
 *
 *     if ((rc = DV_CUDA_CALL(cudaMalloc(&p, n), err)) != 0) goto cleanup;
 *
 * fills `err` with "cudaMalloc(&p, n) at kernels/gpu/x.c:42: out of memory
 * (cudaErrorMemoryAllocation)". Because the text is the call's own, a
 * message can never name another call than the one that failed; a
 * hand-written label could (and did). The checker needs no locals with
 * magic names and jumps nowhere: it returns the code and the caller decides.
 * In a .cu file, DV_CUDA_LAUNCH() launches a kernel and checks
 * cudaGetLastError() right after it, the error naming that kernel as the
 * launch spells it.
 *
 * Classification (base/status.h): DV_ESTICKY for errors that poison the
 * context (after which the process must not touch CUDA again; the server
 * restarts its worker), DV_ENOGPU for no-device errors, DV_ERR otherwise.
 */
#ifndef DV_CUDA_CALL_H
#define DV_CUDA_CALL_H

#include <cuda_runtime_api.h>

#include "kernels/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when `e` is cudaSuccess, else the DV_* class of `e` with `err` filled as
 * "<call> at <file>:<line>: <cudaGetErrorString> (<cudaGetErrorName>)",
 * `file` shown from the repository's top. Use DV_CUDA_CALL(), which passes
 * the call's own text, file and line. */
int cuda_check(cudaError_t e, const char *call, const char *file, int line, char *err);

#define DV_CUDA_CALL(call, err) cuda_check((call), #call, __FILE__, __LINE__, (err))

/* The DV_* class of a failed call (cuda_check without the success case). */
int cuda_classify(cudaError_t e);

/* `file` (a __FILE__) as the path from the repository's top, so messages
 * name files the same way wherever the tree was built. */
const char *cuda_source_path(const char *file);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#define DV_CUDA_UNPAREN(...) __VA_ARGS__
#define DV_CUDA_TEXT_(...) #__VA_ARGS__
#define DV_CUDA_TEXT(...) DV_CUDA_TEXT_(__VA_ARGS__)
/* Launches `kernel`, written in parentheses so that template arguments may
 * hold commas ((mixOneBranch<ITERS, WITNESS>)), on `grid` x `block` with the
 * arguments that follow, then checks cudaGetLastError(): an expression with
 * the checker's value, the error reading "launch mixOneBranch<ITERS,
 * WITNESS> at <file>:<line>: ...". */
#define DV_CUDA_LAUNCH(kernel, grid, block, err, ...)                                                                  \
    (DV_CUDA_UNPAREN kernel<<<(grid), (block)>>>(__VA_ARGS__),                                                         \
     cuda_check(cudaGetLastError(), "launch " DV_CUDA_TEXT(DV_CUDA_UNPAREN kernel), __FILE__, __LINE__, (err)))
#endif

#endif /* DV_CUDA_CALL_H */

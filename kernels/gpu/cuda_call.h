/* cuda_call.h -- the one checker of CUDA runtime calls.
 *
 * Self-contained, as nvbench's cuda_call.cuh: it needs no locals with magic
 * names and jumps nowhere. Every CUDA call in kernels/gpu goes through it:
 *
 *     if ((rc = cuda_call(cudaMalloc(&p, n), "cudaMalloc(out)", err)) != 0) goto cleanup;
 *
 * and every launch is followed by cuda_launched("launch mixOneBranch", err),
 * which reads cudaGetLastError().
 *
 * Classification (base/status.h): DV_ESTICKY for errors that poison the
 * context (after which the process must not touch CUDA again; the server
 * restarts its worker), DV_ENOGPU for no-device errors, DV_ERR otherwise.
 * `err` receives "what: <cudaGetErrorString> (<cudaGetErrorName>)".
 */
#ifndef DV_CUDA_CALL_H
#define DV_CUDA_CALL_H

#include <cuda_runtime_api.h>

#include "kernels/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when `e` is cudaSuccess, else the DV_* class of `e` with `err` filled. */
int cuda_call(cudaError_t e, const char *what, char *err);

/* cuda_call(cudaGetLastError(), what, err): the check after a launch. */
int cuda_launched(const char *what, char *err);

/* The DV_* class of a failed call (cuda_call without the success case). */
int cuda_classify(cudaError_t e);

#ifdef __cplusplus
}
#endif

#endif /* DV_CUDA_CALL_H */

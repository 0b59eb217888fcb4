/* witness.c -- the witness launch of one row (witness.h). */
#include "kernels/gpu/witness.h"

#include <cuda_runtime_api.h>

#include "kernels/gpu/cuda_call.h"

int witness_run(unsigned blocks, witness_launch_fn launch, void *ctx, unsigned row, struct dv_witness_block *host,
                char *err) {
    struct dv_witness_block *d = NULL;
    const size_t bytes = sizeof(struct dv_witness_block) * blocks;
    int rc;
    if ((rc = cuda_call(cudaMalloc((void **)&d, bytes), "cudaMalloc(witness)", err)) != 0) return rc;
    if ((rc = cuda_call(cudaMemset(d, 0, bytes), "cudaMemset(witness)", err)) == 0 &&
        (rc = launch(ctx, row, d, err)) == 0 && (rc = cuda_call(cudaDeviceSynchronize(), "witness launch", err)) == 0)
        rc = cuda_call(cudaMemcpy(host, d, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(witness)", err);
    cudaFree(d);
    return rc;
}

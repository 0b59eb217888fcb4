/* witness.c -- the witness launch of one row (witness.h). */
#include "kernels/gpu/witness.h"

#include <cuda_runtime_api.h>

#include "kernels/gpu/cuda_call.h"

int witness_run(unsigned blocks, witness_launch_fn launch, void *ctx, unsigned row, struct dv_witness_block *host,
                char *err) {
    struct dv_witness_block *d = NULL;
    const size_t bytes = sizeof(struct dv_witness_block) * blocks;
    int rc;
    if ((rc = DV_CUDA_CALL(cudaMalloc((void **)&d, bytes), err)) != 0) return rc;
    if ((rc = DV_CUDA_CALL(cudaMemset(d, 0, bytes), err)) == 0 && (rc = launch(ctx, row, d, err)) == 0 &&
        (rc = DV_CUDA_CALL(cudaDeviceSynchronize(), err)) == 0)
        rc = DV_CUDA_CALL(cudaMemcpy(host, d, bytes, cudaMemcpyDeviceToHost), err);
    cudaFree(d);
    return rc;
}

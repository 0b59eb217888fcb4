/* witness.c -- the witness launch of one row (witness.h). */
#include "kernels/gpu/witness.h"

#include <cuda_runtime_api.h>

#include "kernels/gpu/cuda_call.h"

int witness_enqueue(unsigned blocks, witness_launch_fn launch, void *ctx, unsigned row, struct dv_witness_block *d_rec,
                    struct dv_witness_block *host, char *err) {
    const size_t bytes = sizeof(struct dv_witness_block) * blocks;
    int rc;
    /* Zeroed first: a block that never wrote its record reads as one that
     * saw nothing, not as the previous row's. */
    if ((rc = DV_CUDA_CALL(cudaMemsetAsync(d_rec, 0, bytes, 0), err)) != 0) return rc;
    if ((rc = launch(ctx, row, d_rec, err)) != 0) return rc;
    return DV_CUDA_CALL(cudaMemcpyAsync(host, d_rec, bytes, cudaMemcpyDeviceToHost, 0), err);
}

int witness_wait(char *err) { return DV_CUDA_CALL(cudaStreamSynchronize(0), err); }

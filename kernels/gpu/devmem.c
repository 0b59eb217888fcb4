/* devmem.c -- checked device buffers (devmem.h). */
#include "kernels/gpu/devmem.h"

#include "kernels/gpu/cuda_call.h"

int devmem_alloc(void **p, size_t bytes, char *err) {
    *p = NULL;
    int rc = DV_CUDA_CALL(cudaMalloc(p, bytes ? bytes : 1), err);
    if (rc != 0) *p = NULL;
    return rc;
}

void devmem_free(void *p) {
    if (p) cudaFree(p);
}

int devmem_upload(void *dst, const void *src, size_t bytes, char *err) {
    return DV_CUDA_CALL(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), err);
}

int devmem_download(void *dst, const void *src, size_t bytes, char *err) {
    return DV_CUDA_CALL(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), err);
}

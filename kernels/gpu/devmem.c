/* devmem.c -- checked device buffers (devmem.h). */
#include "kernels/gpu/devmem.h"

#include "kernels/gpu/cuda_call.h"

int devmem_alloc(void **p, size_t bytes, char *err) {
    *p = NULL;
    int rc = cuda_call(cudaMalloc(p, bytes ? bytes : 1), "cudaMalloc", err);
    if (rc != 0) *p = NULL;
    return rc;
}

void devmem_free(void *p) {
    if (p) cudaFree(p);
}

int devmem_upload(void *dst, const void *src, size_t bytes, char *err) {
    return cuda_call(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device", err);
}

int devmem_download(void *dst, const void *src, size_t bytes, char *err) {
    return cuda_call(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host", err);
}

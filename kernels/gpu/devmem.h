/* devmem.h -- device buffers for plain-C callers and tests: checked
 * allocation, copies and free, each failure a DV_* code with CUDA's words. */
#ifndef DV_DEVMEM_H
#define DV_DEVMEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* *p receives the buffer, or NULL on failure. */
int devmem_alloc(void **p, size_t bytes, char *err);
void devmem_free(void *p); /* NULL ok */
int devmem_upload(void *dst, const void *src, size_t bytes, char *err);
int devmem_download(void *dst, const void *src, size_t bytes, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_DEVMEM_H */

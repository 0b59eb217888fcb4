/* fileio.h -- a stream read whole, and a file written whole: what the
 * instruction profiler hands its programs (a cubin for the disassembler, a
 * request for Nsight Compute's run) and reads back (a request, a kept
 * disassembly).
 */
#ifndef DV_FILEIO_H
#define DV_FILEIO_H

#include <stdio.h>

/* Everything left in `f` as a NUL-terminated buffer (free() it) of *len
 * bytes (a NUL inside is kept, and counted), or NULL when out of memory. */
char *fileio_read(FILE *f, size_t *len);

/* `n` bytes of `data` as file `path` (created with mode 0600, or
 * truncated). Returns 0, or -1 with `err` ("PATH: why", "writing PATH:
 * why", "closing PATH: why"); a file it could not write whole is removed. */
int fileio_write(const char *path, const void *data, size_t n, char *err);

#endif /* DV_FILEIO_H */

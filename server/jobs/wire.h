/* wire.h -- the framing between the server and its GPU worker process.
 *
 * Every message is a 4-byte big-endian length followed by that many bytes of
 * JSON. The worker reads jobs on fd WIRE_FD_IN (3) and writes replies on
 * WIRE_FD_OUT (4); its stdout is not used, so a library that prints cannot
 * corrupt the stream.
 *
 * Messages (see worker.h for the sequence):
 *   worker -> server  {"hello": 1, "pid": N, "device": {...dv_device...}}
 *   server -> worker  {"id": "...", "kind": "measure", "request": {...}}
 *   worker -> server  {"id", "ok": true, "document": {...}, "gpu_time_ms": x,
 *                      "testimony_ms": y, "exiting": true (optional: the
 *                      worker ends after this reply, see workerproc.c)}
 *                     {"id", "ok": false, "code": -3, "error": "...",
 *                      "document": {...}, "testimony_ms": y (both optional)}
 * testimony_ms is the host time of the job's witness and counter passes and
 * of its instruction profiles (the document's testimony.*.host_ms
 * together), for /metrics.
 */
#ifndef DV_WIRE_H
#define DV_WIRE_H

#include <stddef.h>
#include "kernels/base/status.h"
#include "kernels/model/model/experiment.h"

#define WIRE_FD_IN 3
#define WIRE_FD_OUT 4
#define WIRE_MAX_MESSAGE (16u << 20) /* a report is tens of KiB */

enum wire_status { WIRE_OK = 0, WIRE_ERROR = -1, WIRE_EOF = 1, WIRE_TIMEOUT = 2 };

/* Writes one frame of `len` bytes. Returns 0, or -1 with `err` (EPIPE when
 * the peer is gone; SIGPIPE must be ignored by the caller). */
int wire_write(int fd, const char *msg, size_t len, char *err);

/* Reads one frame into a new NUL-terminated buffer `*msg` (free() it) of
 * `*len` bytes. Waits at most `timeout_ms` in total (-1: forever). Returns
 * WIRE_OK, WIRE_EOF (peer closed before a frame began), WIRE_TIMEOUT, or
 * WIRE_ERROR with `err` (short frame, oversized frame, read error). */
enum wire_status wire_read(int fd, char **msg, size_t *len, int timeout_ms, char *err);

/* The device identity as a JSON object text (malloc()ed, NULL on OOM). The
 * same names GET /device shows. */
char *wire_device_json(const struct dv_device *d);

#endif /* DV_WIRE_H */

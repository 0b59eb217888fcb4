/* wire.h -- the wire between the server and its GPU worker process: the
 * framing and the messages.
 *
 * Every message is a 4-byte big-endian length followed by that many bytes of
 * JSON, built here and nowhere else (wire_hello() ... wire_reply_error(),
 * with api/jsonout.h: whole or not at all), for both ends and for every
 * stand-in of the worker (jobs/nogpu.h, the tests' fake). The worker reads
 * jobs on fd WIRE_FD_IN (3) and writes replies on WIRE_FD_OUT (4); its
 * stdout is not used, so a library that prints cannot corrupt the stream.
 *
 * Messages (see worker.h for the sequence):
 *   worker -> server  {"hello": 1, "pid": N, "device": {...dv_device...},
 *                      "warm": {"kind": "...", "run_ms": x} (optional: the
 *                      warm-up's run of the widget's request, kernels/gpu/
 *                      warmup.h, and its job kind, api's options_job_kind();
 *                      the server seeds its drain estimate with it,
 *                      jobq_seed())}
 *   server -> worker  {"id": "...", "kind": "measure", "request": {...}}
 *                     {"kind": "batch", "jobs": [{"id", "request"}, ...]}
 *                     (several jobs measured in one session, jobq.h's
 *                     batches; the worker answers each job with a reply
 *                     of its own, below, in the order of "jobs")
 *                     {"kind": "groups", "groups": [[{"id", "request"},
 *                     ...], ...]} (several batches of one key popped
 *                     together, each measured as a batch, in order, then
 *                     the instruction profiles of all of them in one
 *                     request: jobs/instrproc.h instrproc_report_groups();
 *                     one reply per job, as for a batch)
 *   worker -> server  {"id", "ok": true, "document": {...}, "gpu_time_ms": x,
 *                      "testimony_ms": y, "exiting": true (optional: the
 *                      worker ends after this reply, see workerproc.c)}
 *                     {"id", "ok": false, "code": -3, "error": "...",
 *                      "document": {...}, "testimony_ms": y (both optional)}
 * testimony_ms is the host time of the job's witness and counter passes and
 * of its instruction profiles (the document's testimony.*.host_ms
 * together), for /metrics. A batch's member says its share of the batch's
 * (the batch's over its members), and so of the timed GPU work
 * (gpu_time_ms): the members' replies add up to the session's.
 */
#ifndef DV_WIRE_H
#define DV_WIRE_H

#include <jansson.h>
#include <stddef.h>
#include "kernels/base/status.h"

#define WIRE_FD_IN 3
#define WIRE_FD_OUT 4
#define WIRE_MAX_MESSAGE (16u << 20) /* a report is tens of KiB */
#define WIRE_MAX_GROUPS 4              /* the groups of one message      */

enum wire_status { WIRE_OK = 0, WIRE_ERROR = -1, WIRE_EOF = 1, WIRE_TIMEOUT = 2 };

/* Writes one frame of `len` bytes. Returns 0, or -1 with `err` (EPIPE when
 * the peer is gone; SIGPIPE must be ignored by the caller). */
int wire_write(int fd, const char *msg, size_t len, char *err);

/* Reads one frame into a new NUL-terminated buffer `*msg` (free() it) of
 * `*len` bytes. Waits at most `timeout_ms` in total (-1: forever). Returns
 * WIRE_OK, WIRE_EOF (peer closed before a frame began), WIRE_TIMEOUT, or
 * WIRE_ERROR with `err` (short frame, oversized frame, read error). */
enum wire_status wire_read(int fd, char **msg, size_t *len, int timeout_ms, char *err);

/* The messages, each as the text of one frame (malloc()ed), or NULL when
 * it cannot be built whole (out of memory, or a json_t argument that is
 * NULL: its builder failed). The json_t arguments are taken (stolen),
 * whatever the result. The hello and the job are written as jsonout_dumps()
 * writes; the replies with the document's precision (REPORT_REAL_PRECISION,
 * api/report.h), so the document arrives as report_json() writes it. */

/* What a worker's warm-up measured of one kind of job: the kind (a
 * options_job_kind() text) and that run's host milliseconds. */
struct wire_warm {
    const char *kind;
    double run_ms;
};

/* {"hello": 1, "pid": <this process>, "device": `device`[, "warm": {"kind",
 * "run_ms"}]}: `device` is the device as report_device_json() writes it, or
 * a stand-in's {"present": false, "reason"}; "warm" is written when `warm`
 * is given with a kind and a run that is a positive number, else left out. */
char *wire_hello(json_t *device, const struct wire_warm *warm);

/* {"id": `id`, "kind": "measure", "request": `request`}. */
char *wire_job(const char *id, json_t *request);

/* {"kind": "batch", "jobs": [{"id": ids[i], "request": requests[i]}...]}
 * for the `n` jobs (n >= 1); the requests are taken, as above. */
char *wire_batch(const char *const *ids, json_t **requests, unsigned n);

/* {"kind": "groups", "groups": [[{"id", "request"}...]...]}: group g is
 * the sizes[g] jobs after the earlier groups' in ids[] and requests[]
 * (ngroups >= 1, each size >= 1); the requests are taken, as above. */
char *wire_groups(const char *const *ids, json_t **requests, const unsigned *sizes, unsigned ngroups);

/* {"id", "ok": true, "gpu_time_ms", "testimony_ms"[, "exiting": true],
 * "document"}: a time that is not a number is written as 0. */
char *wire_reply_ok(const char *id, double gpu_ms, double testimony_ms, int exiting, json_t *document);

/* {"id", "ok": false, "code", "error"[, "document"[, "testimony_ms"]]}:
 * `document` may be NULL (none), testimony_ms is written beside a document
 * when >= 0. */
char *wire_reply_error(const char *id, int code, const char *error, json_t *document, double testimony_ms);

/* Writes message `msg` (a builder's result, freed here) as one frame.
 * Returns 0, or -1 with `err` (`msg` NULL: it could not be built; or
 * wire_write()'s error). */
int wire_send(int fd, char *msg, char *err);

#endif /* DV_WIRE_H */

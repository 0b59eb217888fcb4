/* nogpu.c -- the worker protocol with no GPU behind it (see nogpu.h).
 *
 * The hello names no device and gives NOGPU_REASON; each job (each member
 * of a batch) gets
 * {"id", "ok": false, "code": DV_ENOGPU, "error": NOGPU_REASON}, which is
 * what the real worker answers where CUDA finds no device, so the server
 * needs no case of its own for a build without CUDA.
 */
#define _POSIX_C_SOURCE 200809L
#include "server/jobs/nogpu.h"

#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/jsonout.h"
#include "kernels/base/status.h"
#include "server/jobs/wire.h"

/* The hello's device: none, and why. */
static json_t *no_device(void) {
    int bad = 0;
    json_t *d = json_object();
    jsonout_put(d, "present", json_false(), &bad);
    jsonout_put(d, "reason", jsonout_str(NOGPU_REASON), &bad);
    if (!bad) return d;
    json_decref(d);
    return NULL;
}

/* Refuses job `id` (NULL: none named). Returns 0, or -1 when the pipe is gone. */
static int refuse_one(const char *id) {
    char err[ERR_LEN];
    return wire_send(WIRE_FD_OUT, wire_reply_error(id ? id : "", DV_ENOGPU, NOGPU_REASON, NULL, -1), err);
}

/* Refuses every job of message `msg`: one job, or each of a batch's. */
static int refuse(const char *msg, size_t len) {
    json_t *root = jsonout_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL);
    const char *kind = json_string_value(json_object_get(root, "kind"));
    const json_t *jobs = kind && strcmp(kind, "batch") == 0 ? json_object_get(root, "jobs") : NULL;
    int rc = 0;
    if (!jobs) rc = refuse_one(json_string_value(json_object_get(root, "id")));
    for (size_t i = 0; jobs && i < json_array_size(jobs) && rc == 0; i++)
        rc = refuse_one(json_string_value(json_object_get(json_array_get(jobs, i), "id")));
    json_decref(root);
    return rc;
}

int nogpu_worker_main(void) {
    signal(SIGPIPE, SIG_IGN); /* a server that went away is an EPIPE, not a signal */
    char err[ERR_LEN];
    if (wire_send(WIRE_FD_OUT, wire_hello(no_device(), NULL), err) != 0) return 2;
    for (;;) {
        char *msg = NULL;
        size_t len = 0;
        enum wire_status rc = wire_read(WIRE_FD_IN, &msg, &len, -1, err);
        if (rc == WIRE_EOF) return 0;
        if (rc != WIRE_OK) return 2;
        int sent = refuse(msg, len);
        free(msg);
        if (sent != 0) return 2;
    }
}

/* nogpu.c -- the worker protocol with no GPU behind it (see nogpu.h).
 *
 * The hello names no device and gives NOGPU_REASON; each job gets
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

/* Builds and sends one message; -1 when it cannot be built or sent. */
static int send_json(json_t *o, int bad) {
    char err[ERR_LEN];
    char *s = bad ? NULL : jsonout_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!s) return -1;
    int rc = wire_write(WIRE_FD_OUT, s, strlen(s), err);
    free(s);
    return rc;
}

static int send_hello(void) {
    int bad = 0;
    json_t *o = json_object(), *d = json_object();
    jsonout_put(d, "present", json_false(), &bad);
    jsonout_put(d, "reason", jsonout_str(NOGPU_REASON), &bad);
    jsonout_put(o, "hello", json_integer(1), &bad);
    jsonout_put(o, "pid", json_integer((json_int_t)getpid()), &bad);
    jsonout_put(o, "device", d, &bad);
    return send_json(o, bad);
}

static int refuse(const char *msg, size_t len) {
    json_t *job = jsonout_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL);
    const char *id = job ? json_string_value(json_object_get(job, "id")) : NULL;
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "id", jsonout_str(id ? id : ""), &bad);
    jsonout_put(o, "ok", json_false(), &bad);
    jsonout_put(o, "code", json_integer(DV_ENOGPU), &bad);
    jsonout_put(o, "error", jsonout_str(NOGPU_REASON), &bad);
    json_decref(job);
    return send_json(o, bad);
}

int nogpu_worker_main(void) {
    signal(SIGPIPE, SIG_IGN); /* a server that went away is an EPIPE, not a signal */
    if (send_hello() != 0) return 2;
    for (;;) {
        char *msg = NULL, err[ERR_LEN];
        size_t len = 0;
        enum wire_status rc = wire_read(WIRE_FD_IN, &msg, &len, -1, err);
        if (rc == WIRE_EOF) return 0;
        if (rc != WIRE_OK) return 2;
        int sent = refuse(msg, len);
        free(msg);
        if (sent != 0) return 2;
    }
}

/* fake_instr_server.c -- a stand-in for `divergence-gpu instructions
 * --serve` in the profiling server's tests (tests/server/jobs/
 * test_instrserve.c): it speaks the real one's wire (jobs/instrserve.h)
 * without a GPU. Without --serve it is the one-shot stand-in
 * (fake_instructions.sh, exec'd with the same arguments): the profiler's
 * way back when the server cannot start.
 *
 * Its behaviour comes from $FAKE_INSTR_SERVER, else $FAKE_INSTRUCTIONS
 * (the one-shot stand-in's too), read when it starts:
 *   ok (the default), refuse          every row the same way;
 *   refuse-part-K                     a frame of parts: part K's rows refused,
 *                                     the others answered;
 *   hang                              every request: no answer, ever;
 *   crash-table-T-row-R               dies (SIGSEGV) when it reaches row T:R,
 *                                     the rows before it answered;
 *   garbage                           writes text that is not a frame;
 *   garbage-json                      a frame that is not JSON;
 *   fail-whole-once                   the first request of all its
 *                                     children (none logged "ending" yet):
 *                                     every row refused, a "done" that
 *                                     says "ending", then it ends (status
 *                                     1), as the real one does after passes
 *                                     that failed as a whole; later ones
 *                                     answered;
 *   not-ready                         says {"ready": false} and ends;
 *   slow-start                        ready only after 30 s.
 * $FAKE_INSTRUCTIONS_LOG, when set, gets "start PID" when it starts and
 * "request PID T:R,..." for each request (a frame of parts: "request PID
 * parts N T:R,...|T:R,...", its parts' rows; each row's answer then says
 * its "part").
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "server/jobs/wire.h"

#define ONE_SHOT DV_TEST_SOURCE_DIR "/tests/support/fake_instructions.sh"

static void say(const char *line) {
    char err[ERR_LEN];
    if (wire_write(1, line, strlen(line), err) != 0) _exit(1);
}

static void log_line(const char *what, const char *rest) {
    const char *path = getenv("FAKE_INSTRUCTIONS_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f) return;
    fprintf(f, "%s %ld%s%s\n", what, (long)getpid(), rest ? " " : "", rest ? rest : "");
    fclose(f);
}

static void answer(int part, int t, int r, const char *mode) {
    char line[2048], head[32] = "{";
    int k = -1;
    if (part >= 0) snprintf(head, sizeof head, "{\"part\":%d,", part);
    if (strcmp(mode, "refuse") == 0 || (sscanf(mode, "refuse-part-%d", &k) == 1 && k == part))
        snprintf(line, sizeof line,
                 "%s\"table\":%d,\"row\":%d,\"ok\":false,\"reason\":\"CUPTI: this GPU or driver does not support SASS "
                 "metrics (architecture unsupported)\"}",
                 head, t, r);
    else
        snprintf(line, sizeof line,
                 "%s\"table\":%d,\"row\":%d,\"ok\":true,\"stalls_reason\":null,\"instructions\":{\"source\":\"cupti-sass\","
                 "\"kernel\":\"_Z12fakeKernelv\",\"cubin_crc\":\"00000000000000aa\",\"mask_hash\":\"0000000000000001\","
                 "\"grid\":{\"blocks\":1,\"block\":[256,1]},\"scale\":4096,\"cached\":false,\"collected_utc\":"
                 "\"2026-12-01T12:00:00Z\",\"collect_ms\":1.5,\"disassembler\":\"nvdisasm V13.0.88 (fake)\","
                 "\"disassembly_reason\":null,\"mapped\":1,\"regions\":[{\"kind\":\"before\",\"instructions\":1,"
                 "\"warp_executions\":32768,\"thread_executions\":1048576,\"pred_on_thread_executions\":524288,"
                 "\"lanes_per_execution\":32,\"stalls\":null}],\"runs\":[{\"pc\":784,\"count\":1,\"opcode\":\"BRA\","
                 "\"sass\":\"@P0 BRA `(.L_x_52)\",\"last_sass\":\"@P0 BRA `(.L_x_52)\",\"file\":"
                 "\"kernels/gpu/lesson_kernels.cu\",\"line\":%d,\"region\":\"before\",\"guarded\":true,"
                 "\"warp_executions\":32768,\"thread_executions\":1048576,\"pred_on_thread_executions\":524288,"
                 "\"lanes\":32,\"divergent_targets\":32768}]}}",
                 head, t, r, r);
    say(line);
}

/* Rows `rows` ("T:R,...") of part `part` (-1: a request of one) answered
 * as `mode` says; dies at the row crash-table-T-row-R names. */
static void answer_rows(int part, const char *rows, const char *mode) {
    int at_t = -1, at_r = -1;
    if (sscanf(mode, "crash-table-%d-row-%d", &at_t, &at_r) != 2) at_t = at_r = -1;
    for (const char *p = rows; *p;) {
        char *end;
        const int t = (int)strtol(p, &end, 10), r = (int)strtol(end + 1, &end, 10);
        if (t == at_t && r == at_r) kill(getpid(), SIGSEGV);
        answer(part, t, r, mode);
        p = *end ? end + 1 : end;
    }
}

/* A frame of parts: logged, each part's rows answered, then "done". */
static void serve_parts(const json_t *parts, const char *mode) {
    char text[4096];
    size_t used = (size_t)snprintf(text, sizeof text, "parts %zu ", json_array_size(parts));
    for (size_t k = 0; k < json_array_size(parts) && used < sizeof text; k++) {
        const char *rows = json_string_value(json_object_get(json_array_get(parts, k), "rows"));
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%s", k ? "|" : "", rows ? rows : "?");
    }
    log_line("request", text);
    if (strcmp(mode, "hang") == 0)
        for (;;) pause();
    for (size_t k = 0; k < json_array_size(parts); k++) {
        const char *rows = json_string_value(json_object_get(json_array_get(parts, k), "rows"));
        if (rows) answer_rows((int)k, rows, mode);
    }
    say("{\"done\":true,\"rows\":0,\"profiled\":0,\"phases_ms\":{\"plan\":0.1,\"total\":0.2}}");
}

/* Whether the log has a line that starts with `word` and a space. */
static int log_has(const char *word) {
    const char *path = getenv("FAKE_INSTRUCTIONS_LOG");
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[4096];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strncmp(line, word, strlen(word)) == 0 && line[strlen(word)] == ' ';
    if (f) fclose(f);
    return found;
}

/* fail-whole-once's first request: each row refused with the reason of
 * passes that failed as a whole, "done" saying "ending", and the end. */
static void fail_whole(const char *rows) {
    char line[512];
    log_line("ending", NULL);
    for (const char *p = rows; *p;) {
        char *end;
        const int t = (int)strtol(p, &end, 10), r = (int)strtol(end + 1, &end, 10);
        snprintf(line, sizeof line,
                 "{\"table\":%d,\"row\":%d,\"ok\":false,\"reason\":\"api.cuptiSassMetricsSetConfig(&sc) at "
                 "kernels/gpu/instr.c:478: CUPTI_ERROR_INVALID_PARAMETER (1)\"}",
                 t, r);
        say(line);
        p = *end ? end + 1 : end;
    }
    say("{\"done\":true,\"rows\":0,\"profiled\":0,\"phases_ms\":{\"total\":0.2},\"ending\":true}");
    _exit(1);
}

/* One request: its rows answered as `mode` says, then "done". */
static void serve_one(const char *msg, size_t len, const char *mode) {
    json_t *m = json_loadb(msg, len, 0, NULL);
    const char *rows = json_string_value(json_object_get(m, "rows"));
    if (json_is_array(json_object_get(m, "parts"))) {
        serve_parts(json_object_get(m, "parts"), mode);
        json_decref(m);
        return;
    }
    log_line("request", rows ? rows : "?");
    if (!rows || !json_is_object(json_object_get(m, "request"))) {
        say("{\"ok\":false,\"reason\":\"fake: not a request\"}");
    } else if (strcmp(mode, "hang") == 0) {
        for (;;) pause();
    } else if (strcmp(mode, "fail-whole-once") == 0 && !log_has("ending")) {
        fail_whole(rows);
    } else if (strcmp(mode, "garbage") == 0) {
        if (write(1, "Segmentation fault in a library that prints\n", 44) < 0) _exit(1);
        for (;;) pause();
    } else if (strcmp(mode, "garbage-json") == 0) {
        say("Segmentation fault in a library that prints");
        for (;;) pause();
    } else {
        answer_rows(-1, rows, mode);
    }
    json_decref(m);
    say("{\"done\":true,\"rows\":0,\"profiled\":0,\"phases_ms\":{\"plan\":0.1,\"total\":0.2}}");
}

int main(int argc, char **argv) {
    int serve = 0;
    for (int i = 1; i < argc; i++) serve |= strcmp(argv[i], "--serve") == 0;
    if (!serve) {
        argv[0] = (char *)ONE_SHOT;
        execv(ONE_SHOT, argv);
        perror("fake_instr_server: " ONE_SHOT);
        return 127;
    }
    const char *mode = getenv("FAKE_INSTR_SERVER");
    if (!mode) mode = getenv("FAKE_INSTRUCTIONS");
    if (!mode) mode = "ok";
    log_line("start", NULL);
    if (strcmp(mode, "not-ready") == 0) {
        say("{\"ready\":false,\"pid\":0}");
        return 1;
    }
    if (strcmp(mode, "slow-start") == 0) sleep(30);
    say("{\"ready\":true,\"pid\":0,\"warm_ms\":0}");
    for (;;) {
        char *msg = NULL, err[ERR_LEN];
        size_t len = 0;
        const enum wire_status ws = wire_read(0, &msg, &len, -1, err);
        if (ws == WIRE_EOF) break;
        if (ws != WIRE_OK) return 1;
        serve_one(msg, len, mode);
        free(msg);
    }
    log_line("eof", NULL);
    return 0;
}

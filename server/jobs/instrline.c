/* instrline.c -- the answer lines of an instruction-profiling process
 * (instrline.h), built with api/jsonout.h: whole or not at all. */
#include "server/jobs/instrline.h"

#include <jansson.h>
#include <stdlib.h>

#include "api/jsonout.h"
#include "api/report.h"

/* The text of `o` (freed here) when it was built whole, else NULL. */
static char *line(json_t *o, int bad) {
    char *s = bad ? NULL : jsonout_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static json_t *phases_json(const struct instrline_phases *ph, int *bad) {
    json_t *o = json_object();
    for (unsigned k = 0; k < ph->n; k++) jsonout_put(o, ph->names[k], json_real(ph->ms[k]), bad);
    jsonout_put(o, "total", json_real(ph->total_ms), bad);
    return o;
}

static json_t *compare_json(const struct listing_diff *cmp, int *bad) {
    json_t *c = json_object();
    jsonout_put(c, "cells", json_integer((json_int_t)cmp->cells), bad);
    jsonout_put(c, "mismatches", json_integer((json_int_t)cmp->mismatches), bad);
    jsonout_put(c, "instructions", json_integer(cmp->instructions), bad);
    jsonout_put(c, "first", cmp->first[0] ? jsonout_str(cmp->first) : json_null(), bad);
    return c;
}

char *instrline_row(int table, int row, const struct listing *l, const char *reason, const char *stall_reason,
                    const struct instrline_phases *ph, const struct listing_diff *cmp) {
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "table", json_integer(table), &bad);
    jsonout_put(o, "row", json_integer(row), &bad);
    if (!l) {
        jsonout_put(o, "ok", json_false(), &bad);
        jsonout_put(o, "reason", jsonout_str(reason && reason[0] ? reason : "instructions: failed"), &bad);
    } else {
        jsonout_put(o, "ok", json_true(), &bad);
        jsonout_put(o, "instructions", report_instructions_json(l), &bad);
        jsonout_put(o, "stalls_reason", stall_reason && stall_reason[0] ? jsonout_str(stall_reason) : json_null(),
                    &bad);
    }
    if (ph) jsonout_put(o, "phases_ms", phases_json(ph, &bad), &bad);
    if (cmp) jsonout_put(o, "compare", compare_json(cmp, &bad), &bad);
    return line(o, bad);
}

char *instrline_done(unsigned rows, unsigned profiled, const struct instrline_phases *ph,
                     const struct instrline_served *sv) {
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "done", json_true(), &bad);
    jsonout_put(o, "rows", json_integer(rows), &bad);
    jsonout_put(o, "profiled", json_integer(profiled), &bad);
    jsonout_put(o, "phases_ms", phases_json(ph, &bad), &bad);
    if (sv) {
        json_t *d = json_object();
        jsonout_put(d, "memory", json_integer(sv->text_memory), &bad);
        jsonout_put(d, "folder", json_integer(sv->text_folder), &bad);
        jsonout_put(d, "tool", json_integer(sv->text_tool), &bad);
        jsonout_put(o, "disassembly", d, &bad);
        jsonout_put(o, "ending", json_boolean(sv->ending), &bad);
    }
    return line(o, bad);
}

char *instrline_failure(const char *reason) {
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "ok", json_false(), &bad);
    jsonout_put(o, "reason", jsonout_str(reason), &bad);
    return line(o, bad);
}

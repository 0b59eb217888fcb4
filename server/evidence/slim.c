/* slim.c -- see slim.h.
 *
 * The slim record is a deep copy with the runs deleted (the copy is what
 * changes, never the view's record, which other threads read); its text
 * is written once per record by the views (latest) or per read of an older
 * night, as the drawings are.
 */
#define _POSIX_C_SOURCE 200809L
#include "server/evidence/slim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonout.h"

/* `text` (malloc()ed by jsonout_dumps, or NULL) with a newline, its length
 * in *len. */
static char *with_newline(char *text, size_t *len) {
    if (!text) return NULL;
    size_t n = strlen(text);
    char *t = realloc(text, n + 2);
    if (!t) {
        free(text);
        return NULL;
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    *len = n + 1;
    return t;
}

/* Compact object text `text` (freed here) with member "history" added last,
 * its value `history` (a JSON text, history_page()'s, spliced in as it is:
 * not parsed again). NULL when out of memory. */
static char *with_history(char *text, const char *history) {
    static const char key[] = ",\"history\":";
    size_t n = strlen(text), h = strlen(history);
    while (h && (history[h - 1] == '\n' || history[h - 1] == ' ')) h--;
    if (n < 2 || text[n - 1] != '}' || h == 0) return text;
    char *t = malloc(n - 1 + sizeof key - 1 + h + 2);
    if (!t) {
        free(text);
        return NULL;
    }
    memcpy(t, text, n - 1);
    memcpy(t + n - 1, key, sizeof key - 1);
    memcpy(t + n - 1 + sizeof key - 1, history, h);
    memcpy(t + n - 1 + sizeof key - 1 + h, "}", 2);
    free(text);
    return t;
}

char *slim_record(const json_t *rec, const char *gpu, const char *date, const char *suite, const char *history,
                  size_t *len) {
    json_t *copy = json_deep_copy(rec);
    if (!copy) return NULL;

    json_t *tables = json_object_get(json_object_get(copy, "document"), "tables");
    int bad = 0;
    for (size_t t = 0; t < json_array_size(tables); t++) {
        json_t *rows = json_object_get(json_array_get(tables, t), "rows");
        for (size_t r = 0; r < json_array_size(rows); r++) {
            json_t *ins = json_object_get(json_array_get(rows, r), "instructions");
            if (!json_is_object(ins) || !json_object_get(ins, "runs")) continue;
            char url[256];
            snprintf(url, sizeof url, "/evidence/%s/%s/%s/rows/%zu.%zu/instructions.json", gpu, date, suite, t, r);
            json_object_del(ins, "runs");
            jsonout_put(ins, "listing_url", jsonout_str(url), &bad);
        }
    }
    char *text = bad ? NULL : jsonout_dumps(copy, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(copy);
    if (text && history && strlen(history) <= SLIM_HISTORY_MAX) text = with_history(text, history);
    return with_newline(text, len);
}

int slim_valid_row(const char *row) {
    const char *dot = row ? strchr(row, '.') : NULL;
    if (!dot) return 0;
    const char *parts[2] = {row, dot + 1};
    size_t lens[2] = {(size_t)(dot - row), strlen(dot + 1)};
    for (int i = 0; i < 2; i++) {
        if (lens[i] == 0 || lens[i] > 4 || strspn(parts[i], "0123456789") < lens[i]) return 0;
        if (lens[i] > 1 && parts[i][0] == '0') return 0;
    }
    return 1;
}

char *slim_listing(const json_t *rec, const char *row, size_t *len, int *oom) {
    *oom = 0;
    if (!slim_valid_row(row)) return NULL;
    size_t t = (size_t)strtoul(row, NULL, 10), r = (size_t)strtoul(strchr(row, '.') + 1, NULL, 10);
    const json_t *tables = json_object_get(json_object_get(rec, "document"), "tables");
    const json_t *rows = json_object_get(json_array_get(tables, t), "rows");
    const json_t *ins = json_object_get(json_array_get(rows, r), "instructions");
    if (!json_is_object(ins) || !json_is_array(json_object_get(ins, "runs"))) return NULL;
    char *text = with_newline(jsonout_dumps(ins, JSON_COMPACT | JSON_PRESERVE_ORDER), len);
    *oom = !text;
    return text;
}

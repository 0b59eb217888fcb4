/* jsonout.c -- see jsonout.h.
 *
 * The setters only turn every way a member can fail to go in into one flag.
 * jsonout_str() checks UTF-8 itself before it asks jansson for the string,
 * so that when jansson then returns NULL it is for want of memory; the check
 * accepts what jansson's own does (no overlong forms, no surrogates, nothing
 * above U+10FFFF), so a string it passes is never refused.
 *
 * The allocator under jansson counts failures per thread: jansson's
 * allocations for a parse or a dump happen on the thread that asked for it,
 * so a count taken before and after the call says whether one failed in it,
 * whatever jansson made of the failure.
 *
 * One walk over the tree decides the precision for the whole text: mixing
 * precisions inside one dump is not something jansson offers, and 15 digits
 * everywhere is only safe when it is exact. */
#include "api/jsonout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *(*jsonout_under)(size_t) = malloc;
static _Thread_local unsigned long jsonout_failed;

static void *jsonout_malloc(size_t n) {
    void *p = jsonout_under(n);
    if (!p) jsonout_failed++;
    return p;
}

void jsonout_use_malloc(void *(*fn)(size_t)) {
    jsonout_under = fn ? fn : malloc;
    json_set_alloc_funcs(jsonout_malloc, free);
}

/* What json_error_code() reads: jansson keeps the code in the text's last
 * byte. */
static void set_oom(json_error_t *je) {
    if (!je) return;
    memset(je, 0, sizeof *je);
    snprintf(je->text, sizeof je->text, "out of memory");
    je->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_out_of_memory;
}

json_t *jsonout_loadb(const char *text, size_t len, size_t flags, json_error_t *je) {
    unsigned long before = jsonout_failed;
    json_t *v = json_loadb(text, len, flags, je);
    if (jsonout_failed == before) return v;
    json_decref(v);
    set_oom(je);
    return NULL;
}

json_t *jsonout_loads(const char *text, size_t flags, json_error_t *je) {
    if (!text) {
        if (je) memset(je, 0, sizeof *je);
        return NULL;
    }
    return jsonout_loadb(text, strlen(text), flags, je);
}

int jsonout_oom(const json_error_t *je) { return je && json_error_code(je) == json_error_out_of_memory; }

unsigned long jsonout_failures(void) { return jsonout_failed; }

void jsonout_put(json_t *obj, const char *key, json_t *v, int *bad) {
    /* json_object_set_new() releases `v` on every path, NULL `obj` included. */
    if (!v || json_object_set_new(obj, key, v) != 0) *bad = 1;
}

void jsonout_append(json_t *arr, json_t *v, int *bad) {
    if (!v || json_array_append_new(arr, v) != 0) *bad = 1;
}

/* Length of the UTF-8 sequence at `p` (`left` bytes remain), or 0 when the
 * bytes there are not one. */
static size_t utf8_seq(const unsigned char *p, size_t left) {
    unsigned c = p[0];
    size_t n;
    unsigned v;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2, v = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, v = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, v = c & 0x07;
    else return 0;
    if (left < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    return n;
}

json_t *jsonout_str(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s), i = 0, k;
    const unsigned char *u = (const unsigned char *)s;
    while (i < n && (k = utf8_seq(u + i, n - i)) != 0) i += k;
    if (i == n) return json_stringn(s, n);
    char *copy = malloc(n + 1);
    if (!copy) return NULL;
    memcpy(copy, s, n + 1);
    while (i < n) {
        k = utf8_seq(u + i, n - i);
        if (k == 0) copy[i++] = '?';
        else i += k;
    }
    json_t *v = json_stringn(copy, n);
    free(copy);
    return v;
}

json_t *jsonout_str_or_null(const char *s) { return s ? jsonout_str(s) : json_null(); }

json_t *jsonout_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

#include "kernels/base/realfmt.h"

static int all_exact15(const json_t *v) {
    const char *key;
    json_t *x;
    size_t i;
    switch (json_typeof(v)) {
    case JSON_REAL:
        return realfmt_exact15(json_real_value(v));
    case JSON_OBJECT:
        json_object_foreach((json_t *)v, key, x)
            if (!all_exact15(x)) return 0;
        return 1;
    case JSON_ARRAY:
        json_array_foreach(v, i, x)
            if (!all_exact15(x)) return 0;
        return 1;
    default:
        return 1;
    }
}

char *jsonout_dumps(const json_t *v, size_t flags) {
    if (!v) return NULL;
    return jsonout_dumpf(v, flags | JSON_REAL_PRECISION(all_exact15(v) ? 15 : 17));
}

char *jsonout_dumpf(const json_t *v, size_t flags) {
    if (!v) return NULL;
    unsigned long before = jsonout_failed;
    /* Not json_dumps(): it grows its buffer as it writes, and jansson 2.14
     * ignores a failed append of an object's key (dump.c drops
     * dump_string()'s result), so under memory pressure it can return a
     * document with a key missing. json_dumpb() into a buffer sized by a
     * first pass appends nothing that can fail, and what it allocates (its
     * loop check) is counted. */
    size_t n = json_dumpb(v, NULL, 0, flags);
    if (n == 0) return NULL;
    char *s = malloc(n + 1);
    if (!s) return NULL;
    if (json_dumpb(v, s, n, flags) != n || jsonout_failed != before) {
        free(s);
        return NULL;
    }
    s[n] = '\0';
    return s;
}

/* listing_text.c -- the disassembly's text, once per cubin and function
 * (listing_text.h). */
#include "kernels/model/listing/listing_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/listing/listing_read.h"

void listing_texts_init(struct listing_texts *m) {
    memset(m, 0, sizeof *m);
}

void listing_texts_cleanup(struct listing_texts *m) {
    for (size_t k = 0; k < m->n; k++) listing_insns_cleanup(&m->v[k].insns);
    free(m->v);
    memset(m, 0, sizeof *m);
}

static struct listing_text *find(struct listing_texts *m, uint64_t crc, const char *function) {
    for (size_t k = 0; k < m->n; k++)
        if (m->v[k].crc == crc && strcmp(m->v[k].function, function) == 0) return &m->v[k];
    return NULL;
}

/* Why the tool gave no text for the cubin `crc`, when an entry says so. */
static const struct listing_text *tool_failure(const struct listing_texts *m, uint64_t crc) {
    for (size_t k = 0; k < m->n; k++)
        if (m->v[k].crc == crc && m->v[k].tool_failed) return &m->v[k];
    return NULL;
}

static struct listing_text *add(struct listing_texts *m, uint64_t crc, const char *function, char *why) {
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 4;
        struct listing_text *v = realloc(m->v, cap * sizeof *v);
        if (!v) {
            dv_seterr(why, "instructions: out of memory for the disassembly of %.100s", function);
            return NULL;
        }
        m->v = v;
        m->cap = cap;
    }
    struct listing_text *e = &m->v[m->n++];
    memset(e, 0, sizeof *e);
    e->crc = crc;
    snprintf(e->function, sizeof e->function, "%s", function);
    listing_insns_init(&e->insns);
    return e;
}

/* The tool's text read for `e->function` into `e`. */
static void read_text(struct listing_texts *m, struct listing_text *e, listing_text_fn fn, void *ctx,
                      const void *cubin, size_t size) {
    const struct listing_text *failed = tool_failure(m, e->crc);
    if (failed) {
        e->tool_failed = 1;
        snprintf(e->why, sizeof e->why, "%s", failed->why);
        return;
    }
    if (!fn) {
        e->tool_failed = 1;
        dv_seterr(e->why, "instructions: no disassembler was given");
        return;
    }
    size_t len = 0;
    m->tool_calls++;
    char *text = fn(ctx, e->crc, cubin, size, &len, e->why);
    if (!text) {
        e->tool_failed = 1;
        if (!e->why[0]) dv_seterr(e->why, "instructions: the disassembler gave no text");
        return;
    }
    m->reads++;
    if (listing_read_sass(text, len, e->function, &e->insns, e->why) == 0) {
        const char *nl = memchr(text, '\n', len);
        const int label = len >= 2 && text[0] == '#' && text[1] == ' ' && nl;
        snprintf(e->tool, sizeof e->tool, "%.*s", label ? (int)(nl - text - 2) : 0, label ? text + 2 : "");
        e->ok = 1;
    }
    free(text);
}

const struct listing_text *listing_texts_get(struct listing_texts *m, listing_text_fn fn, void *ctx, uint64_t crc,
                                             const void *cubin, size_t size, const char *function, char *why) {
    struct listing_text *e = find(m, crc, function);
    if (e) return e;
    if (!(e = add(m, crc, function, why))) return NULL;
    read_text(m, e, fn, ctx, cubin, size);
    return e;
}

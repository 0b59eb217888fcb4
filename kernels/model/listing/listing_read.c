/* listing_read.c -- a disassembly and Nsight Compute's Source page CSV into
 * struct listing_insns (listing_read.h).
 *
 * Both readers walk the text line by line and copy each line into a buffer
 * of their own, so the input needs no terminating NUL and is never written.
 * A line longer than the buffer is cut: no instruction's text or CSV row of
 * these tools comes near it, and a cut line fails to parse rather than
 * overrun.
 */
#include "kernels/model/listing/listing_read.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN 8192

/* The next line of [*at, end) into `buf` (without '\n' or '\r'); 0 at the end. */
static int next_line(const char **at, const char *end, char *buf, size_t size) {
    if (*at >= end) return 0;
    const char *p = *at, *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    *at = nl ? nl + 1 : end;
    if (n && p[n - 1] == '\r') n--;
    if (n >= size) n = size - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 1;
}

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    return s;
}

/* ---- a disassembly ------------------------------------------------------ */

struct label {
    char name[64];
    uint32_t pc;
    int placed;
};

struct labels {
    struct label *v;
    size_t n, cap;
};

static int label_add(struct labels *l, const char *name) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        struct label *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    struct label *x = &l->v[l->n++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->pc = 0;
    x->placed = 0;
    return 0;
}

static const struct label *label_find(const struct labels *l, const char *name) {
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].placed && strcmp(l->v[i].name, name) == 0) return &l->v[i];
    return NULL;
}

/* A line that is a label alone (".L_x_52:"), not a section header. */
static int is_label(const char *s) {
    size_t n = strlen(s);
    if (n < 2 || s[n - 1] != ':' || strncmp(s, ".text.", 6) == 0) return 0;
    if (!(s[0] == '.' || s[0] == '_' || s[0] == '$' || isalpha((unsigned char)s[0]))) return 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '$')) return 0;
    return 1;
}

/* The function a line opens, copied into `name`, or 0: nvdisasm's
 * ".text.<name>:" or cuobjdump's "Function : <name>". */
static int section_of(const char *s, char *name, size_t size) {
    size_t n = strlen(s);
    if (strncmp(s, ".text.", 6) == 0 && n > 7 && s[n - 1] == ':') {
        snprintf(name, size, "%.*s", (int)(n - 7), s + 6);
        return 1;
    }
    const char *f = strstr(s, "Function : ");
    if (f == s) {
        snprintf(name, size, "%s", f + 11);
        char *t = trim(name);
        memmove(name, t, strlen(t) + 1);
        return 1;
    }
    return 0;
}

/* The branch target of `i` from its text: a label "`(.L_x_52)", or the
 * offset that follows the opcode ("BRA 0x1380"). */
static void branch_target(struct listing_insn *i, const struct labels *l) {
    listing_decode(i);
    if (strcmp(i->opcode, "BRA") != 0) return;
    const char *q = strstr(i->sass, "`(");
    if (q) {
        char name[64];
        size_t n = 0;
        q += 2;
        while (q[n] && q[n] != ')' && n + 1 < sizeof name) n++;
        memcpy(name, q, n);
        name[n] = '\0';
        const struct label *x = label_find(l, name);
        if (x) {
            i->has_target = 1;
            i->target = x->pc;
        }
        return;
    }
    const char *op = strstr(i->sass, "BRA");
    const char *h = op ? strstr(op, "0x") : NULL;
    if (h) {
        char *end = NULL;
        unsigned long long v = strtoull(h, &end, 16);
        if (end != h + 2 && v <= 0xffffffffull) {
            i->has_target = 1;
            i->target = (uint32_t)v;
        }
    }
}

int listing_read_sass(const char *text, size_t len, const char *function, struct listing_insns *out, char *err) {
    const char *at = text, *end = text + len;
    char *line = malloc(LINE_MAX_LEN), name[LISTING_FUNCTION_LEN];
    struct labels labels = {0};
    int in = 0, found = 0, rc = -1;
    listing_insns_init(out);
    snprintf(out->function, sizeof out->function, "%s", function);
    if (!line) {
        dv_seterr(err, "disassembly: out of memory");
        return -1;
    }
    while (next_line(&at, end, line, LINE_MAX_LEN)) {
        char *s = trim(line);
        if (section_of(s, name, sizeof name)) {
            if (in) break; /* the function's section has ended */
            in = strcmp(name, function) == 0;
            found |= in;
            continue;
        }
        if (!in) continue;
        if (is_label(s)) {
            s[strlen(s) - 1] = '\0';
            if (label_add(&labels, s) != 0) goto oom;
            continue;
        }
        unsigned pc;
        int used = 0;
        if (!(s[0] == '/' && s[1] == '*' && isxdigit((unsigned char)s[2])) || sscanf(s, "/*%x*/%n", &pc, &used) != 1 ||
            used == 0)
            continue;
        char *t = trim(s + used), *semi = strchr(t, ';');
        if (semi) *semi = '\0';
        t = trim(t);
        struct listing_insn *i = listing_insns_at(out, pc);
        if (!i) goto oom;
        snprintf(i->sass, sizeof i->sass, "%s", t);
        for (size_t k = 0; k < labels.n; k++)
            if (!labels.v[k].placed) {
                labels.v[k].pc = pc;
                labels.v[k].placed = 1;
            }
    }
    if (!found || out->n == 0) {
        dv_seterr(err, "disassembly: no instructions of %s in it", function);
        goto cleanup;
    }
    for (size_t k = 0; k < out->n; k++) branch_target(&out->v[k], &labels);
    rc = 0;
    goto cleanup;
oom:
    dv_seterr(err, "disassembly: out of memory");
cleanup:
    if (rc != 0) listing_insns_cleanup(out);
    free(labels.v);
    free(line);
    return rc;
}

size_t listing_join_text(struct listing_insns *f, const struct listing_insns *text) {
    size_t n = 0;
    for (size_t k = 0; k < f->n; k++) {
        const struct listing_insn *t = listing_insns_find(text, f->v[k].pc);
        if (!t) continue;
        snprintf(f->v[k].sass, sizeof f->v[k].sass, "%s", t->sass);
        f->v[k].has_target = t->has_target;
        f->v[k].target = t->target;
        listing_decode(&f->v[k]);
        n++;
    }
    return n;
}

/* ---- the Source page CSV ------------------------------------------------ */

#define CSV_MAX_FIELDS 128

/* Splits a CSV row in place: quoted fields with "" for a quote. Returns the
 * number of fields, -1 for a field past CSV_MAX_FIELDS or an unterminated
 * quote. */
static int csv_split(char *s, char **fields) {
    int n = 0;
    char *p = s;
    if (!*p) return 0;
    for (;;) {
        if (n == CSV_MAX_FIELDS) return -1;
        char *w = p;
        fields[n++] = w;
        if (*p == '"') {
            p++;
            for (;;) {
                if (!*p) return -1;
                if (*p == '"' && p[1] == '"') {
                    *w++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *w++ = *p++;
                }
            }
            while (*p && *p != ',') p++;
        } else {
            while (*p && *p != ',') *w++ = *p++;
        }
        int more = *p == ',';
        *w = '\0';
        if (!more) break;
        p++;
        if (!*p) break; /* a trailing comma ends the row */
    }
    return n;
}

/* `src` without its leading and trailing blanks and with each run of
 * blanks inside as one space: ncu aligns the guard ("@P0   BRA"), the
 * disassemblers do not. */
static void collapse_blanks(char *dst, size_t size, const char *src) {
    size_t n = 0;
    int blank = 0;
    for (; *src && n + 1 < size; src++) {
        if (*src == ' ' || *src == '\t') {
            blank = n > 0;
            continue;
        }
        if (blank && n + 2 < size) dst[n++] = ' ';
        blank = 0;
        dst[n++] = *src;
    }
    dst[n] = '\0';
}

/* A count cell: digits (ncu writes "-" or "" for none: 0). */
static unsigned long long csv_count(const char *s) {
    unsigned long long v = 0;
    while (*s == ' ') s++;
    while (isdigit((unsigned char)*s)) v = v * 10 + (unsigned long long)(*s++ - '0');
    return v;
}

struct ncu_columns {
    int address, source, warp, thread, pred_on, divergent;
    int nstall;
    int stall_col[LISTING_MAX_REASONS];
    char stall_name[LISTING_MAX_REASONS][LISTING_REASON_LEN];
};

static int ncu_header(char **f, int n, struct ncu_columns *c) {
    memset(c, 0, sizeof *c);
    c->address = c->source = c->warp = c->thread = c->pred_on = c->divergent = -1;
    for (int k = 0; k < n; k++) {
        if (strcmp(f[k], "Address") == 0) c->address = k;
        else if (strcmp(f[k], "Source") == 0 && c->source < 0) c->source = k;
        else if (strcmp(f[k], "Instructions Executed") == 0) c->warp = k;
        else if (strcmp(f[k], "Thread Instructions Executed") == 0) c->thread = k;
        else if (strcmp(f[k], "Predicated-On Thread Instructions Executed") == 0) c->pred_on = k;
        else if (strcmp(f[k], "Divergent Branches") == 0) c->divergent = k;
        else if (strncmp(f[k], "stall_", 6) == 0 && !strchr(f[k], ' ') && c->nstall < LISTING_MAX_REASONS) {
            c->stall_col[c->nstall] = k;
            snprintf(c->stall_name[c->nstall++], LISTING_REASON_LEN, "%s", f[k]);
        }
    }
    return c->address >= 0 && c->source >= 0 && c->warp >= 0 && c->thread >= 0 && c->pred_on >= 0 &&
                   c->divergent >= 0
               ? 0
               : -1;
}

unsigned listing_ncu_launches(const char *csv, size_t len) {
    const char *at = csv, *end = csv + len;
    char line[64];
    unsigned n = 0;
    while (next_line(&at, end, line, sizeof line)) n += strncmp(line, "\"Kernel Name\"", 13) == 0;
    return n;
}

/* The absolute addresses of a launch's instructions and their branch
 * targets, in listing order, until the lowest address is known. */
struct ncu_abs {
    unsigned long long *addr, *target;
    size_t n, cap;
};

static int abs_room(struct ncu_abs *abs) {
    if (abs->n < abs->cap) return 0;
    size_t cap = abs->cap ? 2 * abs->cap : 512;
    unsigned long long *a = realloc(abs->addr, cap * sizeof *a);
    if (!a) return -1;
    abs->addr = a;
    unsigned long long *t = realloc(abs->target, cap * sizeof *t);
    if (!t) return -1;
    abs->target = t;
    abs->cap = cap;
    return 0;
}

/* One instruction row (fields `f`, `n` of them) into *tmp, its address and
 * its branch target (0 for none). -1 with `err` naming CSV row `row`. */
static int ncu_row(char **f, int n, const struct ncu_columns *c, unsigned row, struct listing_insn *tmp,
                   unsigned long long *addr, unsigned long long *target, char *err) {
    int maxcol = c->address;
    const int need[] = {c->source, c->warp, c->thread, c->pred_on, c->divergent};
    for (size_t k = 0; k < sizeof need / sizeof need[0]; k++)
        if (need[k] > maxcol) maxcol = need[k];
    if (n <= maxcol) {
        dv_seterr(err, "ncu CSV: row %u has %d fields, the header %d", row, n, maxcol + 1);
        return -1;
    }
    char *endp = NULL;
    *addr = strtoull(f[c->address], &endp, 16);
    if (endp == f[c->address] + 2) {
        dv_seterr(err, "ncu CSV: row %u: address %s", row, f[c->address]);
        return -1;
    }
    memset(tmp, 0, sizeof *tmp);
    collapse_blanks(tmp->sass, sizeof tmp->sass, f[c->source]);
    tmp->warp = csv_count(f[c->warp]);
    tmp->thread = csv_count(f[c->thread]);
    tmp->pred_on = csv_count(f[c->pred_on]);
    tmp->divergent = csv_count(f[c->divergent]);
    for (int k = 0; k < c->nstall; k++)
        if (c->stall_col[k] < n) tmp->stalls[k] = (uint32_t)csv_count(f[c->stall_col[k]]);
    listing_decode(tmp);
    const char *h = strcmp(tmp->opcode, "BRA") == 0 ? strstr(tmp->sass, "0x") : NULL;
    *target = h ? strtoull(h, NULL, 16) : 0;
    return 0;
}

/* The pcs as offsets from the lowest address `base`, branch targets too;
 * -1 when ncu's listing is not in address order. */
static int ncu_rebase(struct listing_insns *out, const struct ncu_abs *abs, unsigned long long base, char *err) {
    for (size_t k = 0; k < abs->n; k++) {
        out->v[k].pc = (uint32_t)(abs->addr[k] - base);
        if (abs->target[k] >= base && abs->target[k] - base <= 0xffffffffull) {
            out->v[k].has_target = 1;
            out->v[k].target = (uint32_t)(abs->target[k] - base);
        }
    }
    for (size_t k = 1; k < out->n; k++)
        if (out->v[k].pc <= out->v[k - 1].pc) {
            dv_seterr(err, "ncu CSV: addresses out of order at 0x%llx", abs->addr[k]);
            return -1;
        }
    return 0;
}

int listing_read_ncu(const char *csv, size_t len, unsigned index, struct listing_insns *out, char *err) {
    const char *at = csv, *end = csv + len;
    char *line = malloc(LINE_MAX_LEN);
    char *f[CSV_MAX_FIELDS];
    struct ncu_columns c;
    int block = -1, have_header = 0, rc = -1;
    unsigned row = 0;
    unsigned long long base = ~0ull;
    listing_insns_init(out);
    if (!line) {
        dv_seterr(err, "ncu CSV: out of memory");
        return -1;
    }
    /* Absolute addresses first; offsets once the block's lowest is known. */
    struct ncu_abs abs = {0};
    while (next_line(&at, end, line, LINE_MAX_LEN)) {
        row++;
        int n = csv_split(line, f);
        if (n < 0) {
            dv_seterr(err, "ncu CSV: row %u is not CSV", row);
            goto cleanup;
        }
        if (n >= 2 && strcmp(f[0], "Kernel Name") == 0) {
            if ((unsigned)block == index) break;
            block++;
            have_header = 0;
            if ((unsigned)block == index) snprintf(out->function, sizeof out->function, "%s", f[1]);
            continue;
        }
        if ((unsigned)block != index || block < 0) continue;
        if (n >= 1 && strcmp(f[0], "Address") == 0) {
            if (ncu_header(f, n, &c) != 0) {
                dv_seterr(err, "ncu CSV: row %u: the header lacks a count column (Instructions Executed, ...)", row);
                goto cleanup;
            }
            have_header = 1;
            for (int k = 0; k < c.nstall; k++) listing_insns_reason(out, c.stall_name[k]);
            out->sampled = c.nstall > 0;
            continue;
        }
        if (!have_header || n <= c.address || strncmp(f[c.address], "0x", 2) != 0) continue;
        struct listing_insn tmp;
        unsigned long long addr, target;
        if (ncu_row(f, n, &c, row, &tmp, &addr, &target, err) != 0) goto cleanup;
        if (addr < base) base = addr;
        if (abs_room(&abs) != 0) goto oom;
        abs.addr[abs.n] = addr;
        abs.target[abs.n] = target;
        /* Stored at a provisional index-keyed pc; rebased below. */
        tmp.pc = (uint32_t)abs.n;
        struct listing_insn *i = listing_insns_at(out, tmp.pc);
        if (!i) goto oom;
        *i = tmp;
        abs.n++;
    }
    if (block < 0 || (unsigned)block < index || abs.n == 0) {
        dv_seterr(err, "ncu CSV: no instructions for profiled launch %u (%d launches)", index, block + 1);
        goto cleanup;
    }
    rc = ncu_rebase(out, &abs, base, err);
    goto cleanup;
oom:
    dv_seterr(err, "ncu CSV: out of memory");
cleanup:
    if (rc != 0) listing_insns_cleanup(out);
    free(abs.addr);
    free(abs.target);
    free(line);
    return rc;
}

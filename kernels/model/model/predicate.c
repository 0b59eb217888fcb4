/* predicate.c -- the built-in predicate table and struct predicate.
 *
 * A predicate is either one of the lesson's built-in modes, evaluated by
 * dv_takes_path_a() (the very function the kernels call), or an expression
 * from the predicate language (expr.c), evaluated by the host. Each built-in
 * also carries its definition as an expression so the language can show it
 * and the tests can check that both spellings agree thread by thread.
 *
 * An expression's errors (it does not parse; it fails for some thread) come
 * back as a one-line message and as a struct predicate_fault: the column
 * expr.c found and the caret drawn under the very text it counted in, so
 * every caller (the request's error, the CLI) shows the same caret from
 * values and none reads a column back out of a message.
 */
#include <ctype.h>
#include <string.h>

#include "kernels/model/model/expr.h"
#include "kernels/model/model/predicate.h"

/* The expression is also the row's label: what a table calls a row is what
 * it evaluates, so a reader who copies a label into the predicate box gets
 * the very same row (the lesson writes "threadIdx.x & 1" for the first row,
 * whose takesPathA() is (threadIdx.x & 1) == 0). */
static const struct predicate_builtin builtins[DV_NUM_MODES] = {
    {"lane-parity", "(threadIdx.x & 1) == 0", "even lanes on path A, odd lanes on B: every warp splits",
     DV_LANE_PARITY},
    {"lane-half", "(threadIdx.x & 31) < 16", "lanes 0-15 of each warp on path A, 16-31 on B: every warp splits",
     DV_LANE_HALF},
    {"warp-parity", "(threadIdx.x / 32 & 1) == 0",
     "even warps of a 1D block on path A, odd warps on B: no warp splits (in a 2D block of 32 columns every "
     "threadIdx.x / 32 is 0: use (warp & 1) == 0 there)",
     DV_WARP_PARITY},
    {"block-parity", "(blockIdx.x & 1) == 0", "even blocks on path A, odd blocks on B: no warp splits",
     DV_BLOCK_PARITY},
    {"always-a", "1", "every thread on path A: the branch never splits anything", DV_ALWAYS_A},
    {"first-16", "threadIdx.x < 16",
     "threads 0-15 on path A: only warp 0 splits, and 16 threads do A's work instead of half the block", DV_FIRST_16},
};

/* Records where an error in expression `src` is into `f` (may be NULL):
 * column `col` (0: none) and the caret under it. */
static void set_fault(struct predicate_fault *f, const char *src, int col) {
    if (!f) return;
    f->column = col > 0 ? col : 0;
    f->caret[0] = '\0';
    if (f->column) expr_caret(src, f->column, f->caret, sizeof f->caret);
}

const struct predicate_builtin *predicate_builtins(size_t *count) {
    if (count) *count = DV_NUM_MODES;
    return builtins;
}

const struct predicate_builtin *predicate_find(const char *name) {
    for (size_t i = 0; i < DV_NUM_MODES; i++)
        if (strcmp(builtins[i].name, name) == 0) return &builtins[i];
    return NULL;
}

/* What a built-in reads: only block parity reads blockIdx.x; every built-in
 * reads threadIdx.x alone (the kernels pass it as `tid`). */
static unsigned uses_of_mode(enum dv_mode mode) { return mode == DV_BLOCK_PARITY ? PREDICATE_USES_BLOCK : 0u; }

static void set_builtin(const struct predicate_builtin *b, struct predicate *p) {
    snprintf(p->name, sizeof(p->name), "%s", b->name);
    snprintf(p->label, sizeof(p->label), "%s", b->expr);
    p->mode = b->mode;
    p->uses = uses_of_mode(b->mode);
}

int predicate_of_mode(enum dv_mode mode, struct predicate *p, char *err) {
    memset(p, 0, sizeof(*p));
    p->mode = DV_MODE_NONE;
    if (mode < 0 || mode >= DV_NUM_MODES) {
        dv_seterr(err, "predicate: mode %d is not a built-in", (int)mode);
        return -1;
    }
    set_builtin(&builtins[mode], p);
    return 0;
}

static unsigned uses_of_expr(const struct expr *e) {
    unsigned u = expr_uses(e), out = 0;
    if (u & (1u << EXPR_BLOCK_X)) out |= PREDICATE_USES_BLOCK;
    if (u & ((1u << EXPR_THREAD_Y) | (1u << EXPR_LANE) | (1u << EXPR_WARP))) out |= PREDICATE_USES_Y;
    return out;
}

int predicate_resolve(const char *text, struct predicate *p, struct predicate_fault *fault, char *err) {
    memset(p, 0, sizeof(*p));
    p->mode = DV_MODE_NONE;
    set_fault(fault, NULL, 0);
    if (!text) {
        dv_seterr(err, "predicate is missing");
        return -1;
    }
    /* Surrounding blanks are not part of a name. */
    while (isspace((unsigned char)*text)) text++;
    size_t len = strlen(text);
    while (len > 0 && isspace((unsigned char)text[len - 1])) len--;
    if (len == 0) {
        dv_seterr(err, "predicate is empty: give a built-in name or an expression");
        return -1;
    }
    if (len > EXPR_MAX_LEN) {
        dv_seterr(err, "predicate is %zu characters, the limit is %d", len, EXPR_MAX_LEN);
        return -1;
    }
    char buf[PREDICATE_TEXT_LEN];
    memcpy(buf, text, len);
    buf[len] = '\0';

    const struct predicate_builtin *b = predicate_find(buf);
    if (b) {
        set_builtin(b, p);
        return 0;
    }

    int col = 0;
    struct expr *e = expr_parse(buf, &col, err);
    if (!e) {
        set_fault(fault, buf, col);
        return -1;
    }
    snprintf(p->name, sizeof(p->name), "%s", buf);
    snprintf(p->label, sizeof(p->label), "%s", buf);
    p->expr = e;
    p->uses = uses_of_expr(e);
    return 0;
}

void predicate_cleanup(struct predicate *p) {
    if (!p) return;
    expr_free(p->expr);
    p->expr = NULL;
}

bool predicate_reads_block(const struct predicate *p) { return (p->uses & PREDICATE_USES_BLOCK) != 0; }

int predicate_text_reads_block(const char *text) {
    struct predicate p;
    char why[ERR_LEN];
    if (predicate_resolve(text, &p, NULL, why) != 0) return -1;
    const int reads = predicate_reads_block(&p);
    predicate_cleanup(&p);
    return reads;
}

int predicate_mode_reads_block(enum dv_mode mode) {
    struct predicate p;
    char why[ERR_LEN];
    if (predicate_of_mode(mode, &p, why) != 0) return -1;
    return predicate_reads_block(&p); /* a built-in holds nothing to clean up */
}

int predicate_eval(const struct predicate *p, const struct predicate_thread *t,
                   unsigned phase, struct predicate_fault *fault, char *err) {
    if (!p->expr) return dv_takes_path_a(p->mode, t->tx, t->bx, phase) ? 1 : 0;
    struct expr_env env = {t->tx, t->ty, t->bx, t->bdx, t->bdy};
    long long v;
    int col = 0;
    if (expr_eval(p->expr, &env, &v, &col, err) != 0) {
        set_fault(fault, expr_source(p->expr), col);
        return -1;
    }
    return v != 0;
}

/* predicate.h -- the one predicate shared by kernels, CPU reference and analysis.
 *
 * dv_takes_path_a() is the lesson's takesPathA(): it compiles as C11 for the
 * host (analysis, CPU reference, mask building) and as CUDA for the kernels,
 * so the page, the check and the hardware cannot describe different programs.
 * `mode` is a kernel argument, uniform over the grid, so the switch itself
 * never diverges; `phase` is 0 in Part 1 and the loop index in Part 2.
 *
 * The second half of the header is host-only C API: the table of built-in
 * predicates (stable names, the definition in the predicate language, which
 * is also the label, and a hint) and struct predicate, which is either a built-in
 * mode or a parsed expression (expr.h). predicate_eval() is the single entry
 * point the analysis and the mask builder use for any predicate.
 */
#ifndef DV_PREDICATE_H
#define DV_PREDICATE_H

#ifdef __CUDACC__
#define DV_HD __host__ __device__ static inline
#else
#define DV_HD static inline
#endif
/* constexpr in the CUDA (C++) build, so static_asserts can evaluate it. */
#ifdef __cplusplus
#define DV_CONSTEXPR constexpr
#else
#define DV_CONSTEXPR
#endif

#ifndef __cplusplus
#include <stdbool.h>
#endif
#include <stddef.h>
#include "kernels/base/status.h"

#define DV_WARP_SIZE 32u

/* Built-in modes; the numbering is part of the kernel ABI (the kernels take
 * the mode as an int argument). DV_MODE_NONE: not a built-in (an expression,
 * a scenario row). */
enum dv_mode {
    DV_MODE_NONE = -1,
    DV_LANE_PARITY = 0,  /* threadIdx.x & 1: splits every warp             */
    DV_LANE_HALF = 1,    /* (threadIdx.x & 31) < 16: splits every warp     */
    DV_WARP_PARITY = 2,  /* threadIdx.x / 32 & 1: warp-uniform              */
    DV_BLOCK_PARITY = 3, /* blockIdx.x & 1: block-uniform                   */
    DV_ALWAYS_A = 4,     /* no split                                        */
    DV_FIRST_16 = 5,     /* threadIdx.x < 16: the exercise, splits warp 0   */
    DV_NUM_MODES = 6
};

DV_HD DV_CONSTEXPR bool dv_takes_path_a(int mode, unsigned tid, unsigned block, unsigned phase) {
    switch (mode) {
    case DV_LANE_PARITY: return ((tid + phase) & 1u) == 0u;
    case DV_LANE_HALF: return ((tid + phase) % DV_WARP_SIZE) < (DV_WARP_SIZE / 2u);
    case DV_WARP_PARITY: return ((tid / DV_WARP_SIZE + phase) & 1u) == 0u;
    case DV_BLOCK_PARITY: return ((block + phase) & 1u) == 0u;
    case DV_FIRST_16: return tid < 16u; /* phase-free: Part 1 only */
    default: return true;
    }
}

#ifdef __cplusplus
extern "C" {
#endif

#define PREDICATE_NAME_LEN 64
#define PREDICATE_TEXT_LEN 257 /* an expression is at most 256 characters */
/* A predicate's text, a newline and the caret line under it (expr_caret()). */
#define PREDICATE_CARET_LEN (2 * PREDICATE_TEXT_LEN + 4)

struct expr; /* expr.h */

/* How the expression language reads a value: the one sentence every reader
 * (GET /predicates, the widget's hint, the help) shows. */
#define PREDICATE_RULE "a thread takes path A where the predicate is nonzero (true) and path B where it is 0"

/* One entry of the built-in table: the one source of a built-in's label,
 * definition and hint. `expr` is the predicate written in the expression
 * language (path A where it is nonzero), which is also its label in every
 * table, so the label is what the row evaluates; tests check that it and
 * dv_takes_path_a() agree for every thread of several grids. */
struct predicate_builtin {
    const char *name; /* stable id: "lane-parity"                      */
    const char *expr; /* definition and label: "(threadIdx.x & 1) == 0" */
    const char *hint; /* what it does to a block, in words              */
    enum dv_mode mode;
};

/* A resolved predicate: a built-in (mode >= 0, expr NULL) or an expression
 * (mode DV_MODE_NONE, expr owned). Initialise with predicate_resolve(), release with
 * predicate_cleanup(). */
struct predicate {
    char name[PREDICATE_TEXT_LEN];  /* built-in name, or the expression text */
    char label[PREDICATE_TEXT_LEN]; /* the built-in's expression, or the expression */
    enum dv_mode mode;
    struct expr *expr;
    unsigned uses; /* PREDICATE_USES_* bits: which inputs it reads */
};

#define PREDICATE_USES_BLOCK 1u /* depends on blockIdx.x: varies between blocks */
#define PREDICATE_USES_Y 2u     /* depends on threadIdx.y */

/* Thread coordinates the predicate can read. */
struct predicate_thread {
    unsigned tx, ty;   /* threadIdx.x, threadIdx.y */
    unsigned bx;       /* blockIdx.x */
    unsigned bdx, bdy; /* blockDim.x, blockDim.y */
};

/* Where in a predicate's expression an error is, as values beside the
 * message (STYLE.md rule 19: a caller that needs the column never reads it
 * back out of the text): `column` is 1-based in the predicate's text
 * without its surrounding blanks (what p->name holds), 0 for an error that
 * is about no column (an empty predicate, out of memory); `caret` is that
 * text, a newline, and a '^' under the column ("" when column is 0). */
struct predicate_fault {
    int column;
    char caret[PREDICATE_CARET_LEN];
};

/* The built-in table, DV_NUM_MODES entries, in mode order. */
const struct predicate_builtin *predicate_builtins(size_t *count);
/* Built-in by stable name, or NULL. */
const struct predicate_builtin *predicate_find(const char *name);

/* Resolves `text`, a built-in name or an expression (surrounding blanks are
 * not part of it), into `p`. Returns 0, or -1 with `err` (ERR_LEN) holding
 * "why" on one line and `fault` (may be NULL) where it is: for an
 * expression that does not parse, err "column N: why" and fault->column N
 * with its caret; otherwise fault->column 0. */
int predicate_resolve(const char *text, struct predicate *p, struct predicate_fault *fault, char *err);
void predicate_cleanup(struct predicate *p);

/* Built-in `mode` (DV_*) into `p`, exactly as predicate_resolve() of its
 * name. Returns 0, or -1 with `err` for a mode that is not a built-in. */
int predicate_of_mode(enum dv_mode mode, struct predicate *p, char *err);

/* Whether a predicate reads blockIdx.x, so that blocks may take different
 * paths: decided here, from what predicate_resolve() found it reads (a
 * built-in: block parity only; an expression: whether it names
 * blockIdx.x), and asked by every reader that needs it (the analysis, the
 * planner's cost, the request's cost rules, the testimony's grids, the
 * CPU reference), none of which works it out again.
 * predicate_text_reads_block(): of `text` as predicate_resolve() reads it:
 * 1 or 0, -1 when it does not resolve. predicate_mode_reads_block(): of
 * built-in `mode`, -1 for a mode that is not one. */
bool predicate_reads_block(const struct predicate *p);
int predicate_text_reads_block(const char *text);
int predicate_mode_reads_block(enum dv_mode mode);

/* Evaluates `p` for one thread at `phase`: 1 for path A, 0 for path B, -1 on
 * an evaluation error (division by zero for this thread...) with `err`
 * ("column N: why") and `fault` (may be NULL) at the operator that failed,
 * in p->name. A built-in never fails. */
int predicate_eval(const struct predicate *p, const struct predicate_thread *t,
                   unsigned phase, struct predicate_fault *fault, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_PREDICATE_H */

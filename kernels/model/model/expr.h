/* expr.h -- the predicate expression language: parsed and evaluated on the
 * host, never compiled or executed as code.
 *
 * C-like integer expressions over threadIdx.x, threadIdx.y, blockIdx.x,
 * blockDim.x, blockDim.y, warpSize (32), lane (linear thread id % 32) and warp
 * (linear thread id / 32), where the linear thread id is
 * threadIdx.x + threadIdx.y * blockDim.x. Integer literals, parentheses,
 * unary - ! ~, binary * / % + - << >> < <= > >= == != & ^ | && || and ?:, with
 * C's precedence and associativity; && || ?: short-circuit. Arithmetic is
 * 64-bit signed and wraps on overflow; division and modulo truncate as in C.
 * A nonzero value means path A.
 *
 * Errors carry a 1-based column: syntax errors, unknown names, an expression
 * over EXPR_MAX_LEN characters, nesting deeper than EXPR_MAX_DEPTH at parse
 * time; division or modulo by zero, a shift count outside 0..63, and
 * LLONG_MIN / -1 at evaluation time (for the thread that hits it).
 */
#ifndef DV_EXPR_H
#define DV_EXPR_H

#include <stddef.h>
#include "kernels/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXPR_MAX_LEN 256
#define EXPR_MAX_DEPTH 32

/* Variables an expression may read; expr_uses() reports them as bits. */
enum expr_var {
    EXPR_THREAD_X = 0,
    EXPR_THREAD_Y,
    EXPR_BLOCK_X,
    EXPR_BLOCKDIM_X,
    EXPR_BLOCKDIM_Y,
    EXPR_WARPSIZE,
    EXPR_LANE,
    EXPR_WARP,
    EXPR_NUM_VARS
};

struct expr; /* opaque, compiled form */

/* One thread's inputs. */
struct expr_env {
    long long thread_x, thread_y, block_x, blockdim_x, blockdim_y;
};

/* Parses `src` (NUL-terminated). Returns a new expression, or NULL with
 * `*col` set to the 1-based column of the fault and `err` (ERR_LEN) set to
 * "column N: why". Free with expr_free(). */
struct expr *expr_parse(const char *src, int *col, char *err);

/* Evaluates `e` for one thread. Returns 0 with `*out` set, or -1 with `*col`
 * and `err` ("column N: division by zero ..."). Thread-safe: `e` is only read. */
int expr_eval(const struct expr *e, const struct expr_env *env, long long *out, int *col, char *err);

/* Bit (1u << EXPR_*) for each variable the expression reads. */
unsigned expr_uses(const struct expr *e);

/* The source text the expression was parsed from. */
const char *expr_source(const struct expr *e);

/* Writes the two-line caret diagnostic for `src` and 1-based `col` into
 * `buf`: the source, a newline, spaces and a '^' under column `col`.
 * Returns the length written (truncated to len - 1). */
size_t expr_caret(const char *src, int col, char *buf, size_t len);

void expr_free(struct expr *e);

#ifdef __cplusplus
}
#endif

#endif /* DV_EXPR_H */

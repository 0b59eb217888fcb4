/* test_expr.c -- the predicate expression language (kernels/expr.c).
 *
 * Values are checked against what C computes for the same expression, and
 * every error against its exact column and message, so that a change in
 * precedence, short-circuiting or diagnostics fails here first.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <string.h>

#include "kernels/model/model/expr.h"

/* 16x16 block, thread (5, 3) of block 7: linear id 5 + 3 * 16 = 53,
 * lane 53 % 32 = 21, warp 53 / 32 = 1. */
static const struct expr_env env2d = {
    .thread_x = 5, .thread_y = 3, .block_x = 7, .blockdim_x = 16, .blockdim_y = 16};

/* Parses and evaluates `src`, failing the test on any error. */
static long long eval_env(const char *src, const struct expr_env *env) {
    char err[ERR_LEN] = "";
    int col = -1;
    struct expr *e = expr_parse(src, &col, err);
    cr_assert_not_null(e, "parse '%s': %s", src, err);
    long long v = 0;
    int rc = expr_eval(e, env, &v, &col, err);
    expr_free(e);
    cr_assert_eq(rc, 0, "eval '%s': %s", src, err);
    return v;
}

static long long eval(const char *src) { return eval_env(src, &env2d); }

/* Asserts that parsing `src` fails at `col` with exactly `msg`. */
static void parse_fails(const char *src, int want_col, const char *want_msg) {
    char err[ERR_LEN] = "";
    int col = -1;
    struct expr *e = expr_parse(src, &col, err);
    if (e) expr_free(e);
    cr_assert_null(e, "'%s' parsed but should not", src);
    cr_assert_eq(col, want_col, "'%s': column %d, want %d (%s)", src, col, want_col, err);
    cr_assert_str_eq(err, want_msg, "'%s'", src);
}

/* Asserts that `src` parses but evaluating it fails at `col` with `msg`. */
static void eval_fails(const char *src, int want_col, const char *want_msg) {
    char err[ERR_LEN] = "";
    int col = -1;
    struct expr *e = expr_parse(src, &col, err);
    cr_assert_not_null(e, "parse '%s': %s", src, err);
    long long v = 12345;
    int rc = expr_eval(e, &env2d, &v, &col, err);
    expr_free(e);
    cr_assert_eq(rc, -1, "'%s' evaluated to %lld but should fail", src, v);
    cr_assert_eq(col, want_col, "'%s': column %d, want %d (%s)", src, col, want_col, err);
    cr_assert_str_eq(err, want_msg, "'%s'", src);
}

#define KNOWN "(known: threadIdx.x, threadIdx.y, blockIdx.x, blockDim.x, blockDim.y, warpSize, lane, warp)"

/* ---- precedence and associativity ------------------------------------- */

Test(expr, multiplication_binds_tighter_than_addition) {
    cr_assert_eq(eval("1 + 2 * 3"), 7);
    cr_assert_eq(eval("(1 + 2) * 3"), 9);
    cr_assert_eq(eval("7 - 2 * 3 + 1"), 7 - 2 * 3 + 1);
}

Test(expr, shift_binds_looser_than_addition) {
    cr_assert_eq(eval("1 << 2 + 1"), 8);
    cr_assert_eq(eval("64 >> 1 + 1"), 16);
}

Test(expr, bitwise_and_xor_or_follow_c) {
    cr_assert_eq(eval("1 | 2 ^ 3 & 4"), 1 | (2 ^ (3 & 4)));
    cr_assert_eq(eval("1 | 2 ^ 3 & 4"), 3);
    cr_assert_eq(eval("6 & 3 ^ 1"), (6 & 3) ^ 1);
    cr_assert_eq(eval("12 ^ 10 | 1"), (12 ^ 10) | 1);
}

Test(expr, relational_binds_tighter_than_equality) {
    /* a < b == c parses as (a < b) == c */
    cr_assert_eq(eval("1 < 2 == 1"), 1);
    cr_assert_eq(eval("2 < 1 == 0"), 1);
    cr_assert_eq(eval("3 > 2 > 1"), 0); /* (3 > 2) > 1 is 1 > 1 */
    cr_assert_eq(eval("1 == 2 < 3"), 1); /* 1 == (2 < 3) */
}

Test(expr, equality_binds_tighter_than_bitwise_and) {
    cr_assert_eq(eval("3 & 1 == 1"), 3 & (1 == 1));
    cr_assert_eq(eval("2 & 2 == 2"), 0);
}

Test(expr, comparisons_yield_zero_or_one) {
    cr_assert_eq(eval("5 < 7"), 1);
    cr_assert_eq(eval("5 <= 5"), 1);
    cr_assert_eq(eval("5 > 7"), 0);
    cr_assert_eq(eval("7 >= 8"), 0);
    cr_assert_eq(eval("4 != 4"), 0);
    cr_assert_eq(eval("4 == 4"), 1);
}

Test(expr, unary_operators) {
    cr_assert_eq(eval("!0 + 1"), 2);
    cr_assert_eq(eval("!5"), 0);
    cr_assert_eq(eval("-2 * -3"), 6);
    cr_assert_eq(eval("~0"), -1);
    cr_assert_eq(eval("- - 4"), 4);
    cr_assert_eq(eval("!!7"), 1);
    cr_assert_eq(eval("-~0"), 1);
    cr_assert_eq(eval("+3"), 3);
}

Test(expr, binary_operators_are_left_associative) {
    cr_assert_eq(eval("10 - 3 - 2"), 5);
    cr_assert_eq(eval("100 / 10 / 5"), 2);
    cr_assert_eq(eval("2 * 3 % 4"), 2);
    cr_assert_eq(eval("1 << 2 << 3"), 32);
}

Test(expr, ternary_is_right_associative) {
    cr_assert_eq(eval("1 ? 2 : 0 ? 3 : 4"), 2);
    cr_assert_eq(eval("0 ? 2 : 0 ? 3 : 4"), 4);
    cr_assert_eq(eval("0 ? 2 : 1 ? 3 : 4"), 3);
}

Test(expr, ternary_middle_is_a_full_expression) {
    cr_assert_eq(eval("1 ? 0 ? 5 : 6 : 7"), 6);
    cr_assert_eq(eval("0 ? 0 ? 5 : 6 : 7"), 7);
    cr_assert_eq(eval("1 ? 2 + 3 : 4"), 5);
}

Test(expr, ternary_condition_takes_the_whole_logical_or) {
    cr_assert_eq(eval("0 || 1 ? 10 : 20"), 10);
    cr_assert_eq(eval("1 + 1 == 3 ? 10 : 20"), 20);
    cr_assert_eq(eval("0 ? 1 : 2 + 3"), 5);
}

Test(expr, logical_and_binds_tighter_than_or) {
    cr_assert_eq(eval("1 || 0 && 0"), 1);  /* 1 || (0 && 0) */
    cr_assert_eq(eval("0 && 0 || 1"), 1);
    cr_assert_eq(eval("0 || 0 && 1"), 0);
    cr_assert_eq(eval("1 | 0 && 2"), 1);   /* (1 | 0) && 2 */
}

Test(expr, logical_operators_yield_zero_or_one) {
    cr_assert_eq(eval("5 && 7"), 1);
    cr_assert_eq(eval("0 || 9"), 1);
    cr_assert_eq(eval("-3 || 0"), 1);
    cr_assert_eq(eval("0 && 9"), 0);
    cr_assert_eq(eval("0 || 0"), 0);
}

Test(expr, short_circuit_skips_division_by_zero) {
    struct expr_env env = env2d;
    env.thread_x = 0;
    cr_assert_eq(eval_env("threadIdx.x != 0 && 10 / threadIdx.x", &env), 0);
    cr_assert_eq(eval_env("threadIdx.x == 0 || 10 / threadIdx.x", &env), 1);
    cr_assert_eq(eval_env("threadIdx.x ? 10 / threadIdx.x : 99", &env), 99);
    cr_assert_eq(eval_env("!threadIdx.x ? 99 : 10 / threadIdx.x", &env), 99);
    env.thread_x = 5;
    cr_assert_eq(eval_env("threadIdx.x != 0 && 10 / threadIdx.x", &env), 1);
    cr_assert_eq(eval_env("threadIdx.x ? 10 / threadIdx.x : 99", &env), 2);
}

Test(expr, short_circuit_result_feeds_later_operators) {
    cr_assert_eq(eval("(0 && 1) + 5"), 5);
    cr_assert_eq(eval("(3 || 0) + 5"), 6);
    cr_assert_eq(eval("(1 ? 2 : 3) * 10"), 20);
    cr_assert_eq(eval("1 + (0 ? 2 : 3)"), 4);
}

/* ---- literals and arithmetic ------------------------------------------ */

Test(expr, literals_decimal_hex_and_u_suffix) {
    cr_assert_eq(eval("0"), 0);
    cr_assert_eq(eval("0x1F"), 31);
    cr_assert_eq(eval("0XfF"), 255);
    cr_assert_eq(eval("1u << 4"), 16);
    cr_assert_eq(eval("0x10U"), 16);
    cr_assert_eq(eval("9223372036854775807"), LLONG_MAX);
    cr_assert_eq(eval("0x7fffffffffffffff"), LLONG_MAX);
    cr_assert_eq(eval("-9223372036854775807 - 1"), LLONG_MIN);
}

Test(expr, whitespace_is_ignored) {
    cr_assert_eq(eval("  \t( threadIdx.x\n+1 )*2  "), 12);
    cr_assert_eq(eval("1+2*3"), 7);
}

Test(expr, arithmetic_wraps_at_64_bits) {
    cr_assert_eq(eval("9223372036854775807 + 1"), LLONG_MIN);
    cr_assert_eq(eval("-9223372036854775807 - 1 - 1"), LLONG_MAX);
    cr_assert_eq(eval("0x4000000000000000 * 4"), 0);
    cr_assert_eq(eval("-(-9223372036854775807 - 1)"), LLONG_MIN);
}

Test(expr, division_and_modulo_truncate_toward_zero) {
    cr_assert_eq(eval("-7 / 2"), -3);
    cr_assert_eq(eval("7 / -2"), -3);
    cr_assert_eq(eval("-7 % 2"), -1);
    cr_assert_eq(eval("7 % -2"), 1);
}

Test(expr, shifts) {
    cr_assert_eq(eval("1 << 63"), LLONG_MIN);
    cr_assert_eq(eval("-1 << 1"), -2);    /* negative left shift wraps */
    cr_assert_eq(eval("-8 >> 1"), -4);    /* right shift is arithmetic */
    cr_assert_eq(eval("-1 >> 63"), -1);
    cr_assert_eq(eval("5 << 0"), 5);
    cr_assert_eq(eval("0x100 >> 8"), 1);
}

/* ---- variables -------------------------------------------------------- */

Test(expr, every_variable_in_a_2d_block) {
    cr_assert_eq(eval("threadIdx.x"), 5);
    cr_assert_eq(eval("threadIdx.y"), 3);
    cr_assert_eq(eval("blockIdx.x"), 7);
    cr_assert_eq(eval("blockDim.x"), 16);
    cr_assert_eq(eval("blockDim.y"), 16);
    cr_assert_eq(eval("warpSize"), 32);
    cr_assert_eq(eval("lane"), 21);
    cr_assert_eq(eval("warp"), 1);
    cr_assert_eq(eval("threadIdx.x + threadIdx.y * blockDim.x"), 53);
}

Test(expr, lane_and_warp_follow_the_linear_id) {
    struct expr_env env = {.thread_x = 0, .thread_y = 0, .block_x = 0,
                           .blockdim_x = 256, .blockdim_y = 1};
    for (long long t = 0; t < 256; t++) {
        env.thread_x = t;
        cr_assert_eq(eval_env("lane", &env), t % 32);
        cr_assert_eq(eval_env("warp", &env), t / 32);
        cr_assert_eq(eval_env("warp * warpSize + lane", &env), t);
    }
}

Test(expr, lesson_predicates) {
    struct expr_env env = {.thread_x = 0, .thread_y = 0, .block_x = 0,
                           .blockdim_x = 128, .blockdim_y = 1};
    for (long long b = 0; b < 3; b++) {
        for (long long t = 0; t < 128; t++) {
            env.thread_x = t;
            env.block_x = b;
            cr_assert_eq(eval_env("(threadIdx.x & 1) == 0", &env), (t & 1) == 0);
            cr_assert_eq(eval_env("(threadIdx.x & 31) < 16", &env), (t & 31) < 16);
            cr_assert_eq(eval_env("(threadIdx.x / 32 & 1) == 0", &env), (t / 32 & 1) == 0);
            cr_assert_eq(eval_env("(blockIdx.x & 1) == 0", &env), (b & 1) == 0);
            cr_assert_eq(eval_env("threadIdx.x < 16", &env), t < 16);
            cr_assert_eq(eval_env("(threadIdx.x & 1u) == 0u", &env), (t & 1) == 0);
        }
    }
}

Test(expr, uses_reports_each_variable) {
    static const struct {
        const char *src;
        unsigned bits;
    } cases[] = {
        {"1 + 2", 0u},
        {"threadIdx.x", 1u << EXPR_THREAD_X},
        {"threadIdx.y", 1u << EXPR_THREAD_Y},
        {"blockIdx.x & 1", 1u << EXPR_BLOCK_X},
        {"blockDim.x", 1u << EXPR_BLOCKDIM_X},
        {"blockDim.y", 1u << EXPR_BLOCKDIM_Y},
        {"warpSize", 1u << EXPR_WARPSIZE},
        {"threadIdx.x < blockDim.y", (1u << EXPR_THREAD_X) | (1u << EXPR_BLOCKDIM_Y)},
        /* a name in an untaken branch still counts: uses is syntactic */
        {"0 && blockIdx.x", 1u << EXPR_BLOCK_X},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[ERR_LEN];
        int col;
        struct expr *e = expr_parse(cases[i].src, &col, err);
        cr_assert_not_null(e, "%s", err);
        cr_assert_eq(expr_uses(e), cases[i].bits, "'%s': %#x", cases[i].src, expr_uses(e));
        expr_free(e);
    }
}

Test(expr, uses_lane_and_warp_imply_their_inputs) {
    const unsigned linear =
        (1u << EXPR_THREAD_X) | (1u << EXPR_THREAD_Y) | (1u << EXPR_BLOCKDIM_X);
    char err[ERR_LEN];
    int col;
    struct expr *e = expr_parse("lane < 16", &col, err);
    cr_assert_not_null(e);
    cr_assert_eq(expr_uses(e), (1u << EXPR_LANE) | linear);
    expr_free(e);
    e = expr_parse("warp & 1", &col, err);
    cr_assert_not_null(e);
    cr_assert_eq(expr_uses(e), (1u << EXPR_WARP) | linear);
    expr_free(e);
    cr_assert_eq(expr_uses(NULL), 0u);
}

Test(expr, source_is_kept) {
    char err[ERR_LEN];
    int col;
    char text[] = "threadIdx.x < 16";
    struct expr *e = expr_parse(text, &col, err);
    cr_assert_not_null(e);
    text[0] = 'X'; /* the expression keeps its own copy */
    cr_assert_str_eq(expr_source(e), "threadIdx.x < 16");
    expr_free(e);
}

Test(expr, free_accepts_null) { expr_free(NULL); }

/* ---- parse errors ----------------------------------------------------- */

Test(expr, error_unknown_name) {
    parse_fails("foo", 1, "column 1: unknown name 'foo' " KNOWN);
    parse_fails("threadIdx.x + blockIdx.y", 15, "column 15: unknown name 'blockIdx.y' " KNOWN);
    parse_fails("threadIdx.z", 1, "column 1: unknown name 'threadIdx.z' " KNOWN);
    /* the dot belongs to the name: spaced out, the first part is unknown */
    parse_fails("threadIdx . x", 1, "column 1: unknown name 'threadIdx' " KNOWN);
}

Test(expr, error_unexpected_character) {
    parse_fails("1 @ 2", 3, "column 3: unexpected character '@'");
    parse_fails("threadIdx.x $", 13, "column 13: unexpected character '$'");
    parse_fails("1 = 2", 3, "column 3: unexpected character '=' (did you mean '=='?)");
    parse_fails("1 +\x01", 4, "column 4: unexpected character '\\x01'");
}

Test(expr, error_unexpected_end) {
    parse_fails("1 +", 4, "column 4: unexpected end of input, expected an operand");
    parse_fails("-", 2, "column 2: unexpected end of input, expected an operand");
    parse_fails("(", 2, "column 2: unexpected end of input, expected an operand");
}

Test(expr, error_expected_operand) {
    parse_fails("* 2", 1, "column 1: expected an operand, found '*'");
    parse_fails("1 + )", 5, "column 5: expected an operand, found ')'");
    parse_fails("()", 2, "column 2: expected an operand, found ')'");
    parse_fails("1 ? : 2", 5, "column 5: expected an operand, found ':'");
}

Test(expr, error_missing_close_paren) {
    parse_fails("(1 + 2", 7, "column 7: missing ')' to match '(' at column 1, found end of input");
    parse_fails("((1) 2", 6, "column 6: missing ')' to match '(' at column 1, found '2'");
}

Test(expr, error_missing_colon) {
    parse_fails("1 ? 2", 6, "column 6: missing ':' after '?' at column 3, found end of input");
    parse_fails("1 ? 2 ) 3", 7, "column 7: missing ':' after '?' at column 3, found ')'");
}

Test(expr, error_trailing_token) {
    parse_fails("1 2", 3, "column 3: unexpected '2' after a complete expression");
    parse_fails("(1) )", 5, "column 5: unexpected ')' after a complete expression");
    parse_fails("lane warp", 6, "column 6: unexpected 'warp' after a complete expression");
    parse_fails("1 : 2", 3, "column 3: unexpected ':' after a complete expression");
}

Test(expr, error_empty) {
    parse_fails("", 1, "column 1: empty expression");
    parse_fails("   ", 1, "column 1: empty expression");
    parse_fails(NULL, 1, "column 1: no expression given");
}

Test(expr, error_too_long) {
    char src[EXPR_MAX_LEN + 2];
    memset(src, ' ', sizeof src);
    src[0] = '1';
    src[EXPR_MAX_LEN] = '\0'; /* 256 characters: accepted */
    cr_assert_eq(eval(src), 1);
    src[EXPR_MAX_LEN] = ' ';
    src[EXPR_MAX_LEN + 1] = '\0'; /* 257 characters */
    parse_fails(src, 257, "column 257: expression is 257 characters, the limit is 256");
}

Test(expr, error_nesting_deeper_than_32) {
    char src[128];
    int n = 0;
    for (int i = 0; i < EXPR_MAX_DEPTH; i++) src[n++] = '(';
    src[n++] = '1';
    for (int i = 0; i < EXPR_MAX_DEPTH; i++) src[n++] = ')';
    src[n] = '\0';
    cr_assert_eq(eval(src), 1); /* 32 deep: accepted */

    n = 0;
    for (int i = 0; i < EXPR_MAX_DEPTH + 1; i++) src[n++] = '(';
    src[n++] = '1';
    for (int i = 0; i < EXPR_MAX_DEPTH + 1; i++) src[n++] = ')';
    src[n] = '\0';
    parse_fails(src, 33, "column 33: nesting deeper than 32 levels");
}

Test(expr, error_nesting_counts_unary_and_ternary) {
    char src[256];
    int n = 0;
    for (int i = 0; i < EXPR_MAX_DEPTH; i++) src[n++] = '-';
    src[n++] = '1';
    src[n] = '\0';
    cr_assert_eq(eval(src), 1); /* 32 minus signs */
    memmove(src + 1, src, (size_t)n + 1);
    src[0] = '!';
    parse_fails(src, 33, "column 33: nesting deeper than 32 levels");

    /* 32 chained ?: in the else position, then one more */
    n = 0;
    for (int i = 0; i < EXPR_MAX_DEPTH; i++) n += sprintf(src + n, "0?1:");
    sprintf(src + n, "7");
    cr_assert_eq(eval(src), 7);
    n = 0;
    for (int i = 0; i < EXPR_MAX_DEPTH + 1; i++) n += sprintf(src + n, "0?1:");
    sprintf(src + n, "7");
    parse_fails(src, 4 * EXPR_MAX_DEPTH + 2, "column 130: nesting deeper than 32 levels");

    /* parentheses and unary operators add up */
    n = 0;
    for (int i = 0; i < 16; i++) n += sprintf(src + n, "(-");
    n += sprintf(src + n, "(1");
    parse_fails(src, 33, "column 33: nesting deeper than 32 levels");
}

Test(expr, error_literal_out_of_range) {
    parse_fails("9223372036854775808", 1,
                "column 1: integer literal out of range (the largest is 9223372036854775807)");
    parse_fails("1 + 0x8000000000000000", 5,
                "column 5: integer literal out of range (the largest is 9223372036854775807)");
    parse_fails("99999999999999999999999", 1,
                "column 1: integer literal out of range (the largest is 9223372036854775807)");
}

Test(expr, error_malformed_literal) {
    parse_fails("0x", 1, "column 1: hexadecimal literal has no digits");
    parse_fails("12abc", 3, "column 3: invalid character 'a' in integer literal");
    parse_fails("1uu", 3, "column 3: invalid character 'u' in integer literal");
    parse_fails("010", 1, "column 1: leading zero: octal literals are not supported");
}

/* ---- evaluation errors ------------------------------------------------ */

Test(expr, error_division_by_zero_at_operator) {
    eval_fails("1 / 0", 3, "column 3: division by zero");
    eval_fails("threadIdx.x / (threadIdx.y - 3)", 13, "column 13: division by zero");
    /* a thread for which the divisor is nonzero evaluates fine */
    cr_assert_eq(eval("threadIdx.x / (threadIdx.y - 2)"), 5);
}

Test(expr, error_modulo_by_zero_at_operator) {
    eval_fails("7 %0", 3, "column 3: modulo by zero");
    eval_fails("lane % (warp - 1)", 6, "column 6: modulo by zero");
}

Test(expr, error_shift_count_out_of_range) {
    eval_fails("1 << 64", 3, "column 3: shift count 64 out of range 0..63");
    eval_fails("1 << -1", 3, "column 3: shift count -1 out of range 0..63");
    eval_fails("8 >> 64", 3, "column 3: shift count 64 out of range 0..63");
    eval_fails("8 >> threadIdx.x - 6", 3, "column 3: shift count -1 out of range 0..63");
}

Test(expr, error_llong_min_divided_by_minus_one) {
    eval_fails("(-9223372036854775807 - 1) / -1", 28,
               "column 28: division overflow: LLONG_MIN / -1");
    eval_fails("(-9223372036854775807 - 1) % -1", 28,
               "column 28: modulo overflow: LLONG_MIN % -1");
    cr_assert_eq(eval("(-9223372036854775807 - 1) / 1"), LLONG_MIN);
}

/* ---- caret ------------------------------------------------------------ */

Test(expr, caret_points_at_column) {
    char buf[64];
    size_t n = expr_caret("1 @ 2", 3, buf, sizeof buf);
    cr_assert_str_eq(buf, "1 @ 2\n  ^");
    cr_assert_eq(n, strlen("1 @ 2\n  ^"));
    expr_caret("1 +", 4, buf, sizeof buf); /* one past the end */
    cr_assert_str_eq(buf, "1 +\n   ^");
    expr_caret("x", 1, buf, sizeof buf);
    cr_assert_str_eq(buf, "x\n^");
}

Test(expr, caret_matches_parse_error) {
    char err[ERR_LEN], buf[128];
    int col = 0;
    const char *src = "threadIdx.x & foo";
    cr_assert_null(expr_parse(src, &col, err));
    expr_caret(src, col, buf, sizeof buf);
    cr_assert_str_eq(buf, "threadIdx.x & foo\n              ^");
}

Test(expr, caret_keeps_tabs_aligned) {
    char buf[64];
    expr_caret("\t1 @", 4, buf, sizeof buf);
    cr_assert_str_eq(buf, "\t1 @\n\t  ^");
    expr_caret("1\n@", 3, buf, sizeof buf);
    cr_assert_str_eq(buf, "1 @\n  ^");
}

Test(expr, caret_truncates_to_buffer) {
    char buf[6];
    size_t n = expr_caret("1 @ 2", 3, buf, sizeof buf);
    cr_assert_eq(n, 5);
    cr_assert_str_eq(buf, "1 @ 2");
    cr_assert_eq(expr_caret("1", 1, buf, 0), 0);
}

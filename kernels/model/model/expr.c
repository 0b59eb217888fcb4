/* expr.c -- the predicate expression language: a precedence-climbing parser
 * that emits stack bytecode, and a loop that runs it.
 *
 * Design. expr_parse() lexes on demand (one token of lookahead) and parses by
 * precedence climbing: parse_unary() reads an operand with its prefix
 * operators, parse_binary() folds in binary operators whose precedence is at
 * least the caller's minimum, recursing one level higher for the right
 * operand so that every binary operator is left-associative, and then handles
 * ?: (right-associative, its middle operand a full expression). Code is
 * emitted while parsing, so the output is already postfix: operands push,
 * operators pop their inputs and push their result. && || ?: compile to
 * forward jumps patched once the right operand is known, which is what makes
 * them short-circuit: `x != 0 && 10 / x` never reaches the division.
 *
 * The compiled form is one allocation: the header, the instructions and a
 * copy of the source. Each instruction carries the 1-based column of the
 * token it came from, so an evaluation error points at the operator that
 * failed. The code is built in a fixed buffer on the parser's stack (an
 * expression is at most EXPR_MAX_LEN characters, so its size is bounded) and
 * copied out at the exact size.
 *
 * expr_eval() only reads the expression and keeps its value stack in a local
 * array, so it allocates nothing and any number of threads may evaluate one
 * expression at once. The parser records the deepest stack the code reaches;
 * the bound EXPR_STACK below is checked at parse time, never at run time.
 *
 * Arithmetic is 64-bit two's complement with wrap-around, done on unsigned
 * long long and converted back by to_signed() so that no signed overflow (UB)
 * ever happens. The operations whose C result is undefined are errors
 * instead: division or modulo by zero, LLONG_MIN / -1 and LLONG_MIN % -1, and
 * shift counts outside 0..63. A left shift of a negative value wraps; a right
 * shift of a negative value is arithmetic (sign-filling) on every compiler.
 *
 * Lexical choices. Names are matched whole, dot included (`threadIdx.x` is
 * one token; `threadIdx . x` reads `threadIdx`, an unknown name). Integer
 * literals are decimal or 0x hexadecimal with an optional u/U suffix, which
 * is ignored, so the lesson's `1u` spelling parses; a leading zero is
 * rejected rather than read as octal, because `010` meaning 8 surprises more
 * people than it helps. A literal above LLONG_MAX is out of range: write
 * LLONG_MIN as `-9223372036854775807 - 1`, as in C. Columns count bytes.
 */
#include "kernels/model/model/expr.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Deepest value stack any accepted expression may need. Every push comes
 * from an operand token, and an operand is at least one character, so
 * EXPR_MAX_LEN bounds it; the parser still checks. */
#define EXPR_STACK (EXPR_MAX_LEN + 1)
/* Instructions an accepted expression may need: every token emits at most
 * two (an operand or operator one, && || ? : a jump and one more), plus the
 * final END. */
#define EXPR_CODE_CAP (2 * EXPR_MAX_LEN + 2)

enum expr_op {
    OP_END,
    OP_CONST, /* push k */
    OP_VAR,   /* push vars[k] */
    OP_NEG, OP_NOT, OP_BNOT,
    OP_MUL, OP_DIV, OP_MOD,
    OP_ADD, OP_SUB,
    OP_SHL, OP_SHR,
    OP_LT, OP_LE, OP_GT, OP_GE,
    OP_EQ, OP_NE,
    OP_BAND, OP_BXOR, OP_BOR,
    OP_BOOL,    /* top = top != 0 */
    OP_AND_JMP, /* &&: top == 0 ? keep the 0, jump to k : pop */
    OP_OR_JMP,  /* ||: top != 0 ? make it 1, jump to k : pop */
    OP_JZ,      /* ?: pop; jump to k if it was 0 */
    OP_JMP      /* jump to k */
};

struct expr_insn {
    enum expr_op op;
    int col;       /* 1-based column of the source token */
    long long k;   /* constant, variable index or jump target */
};

struct expr {
    unsigned uses;           /* 1u << EXPR_* */
    int ncode;
    const char *src;         /* points into this allocation, after code[] */
    struct expr_insn code[]; /* ncode instructions, the last OP_END */
};

/* ---- names ---------------------------------------------------------- */

static const struct {
    const char *name;
    enum expr_var var;
} expr_names[] = {
    {"threadIdx.x", EXPR_THREAD_X}, {"threadIdx.y", EXPR_THREAD_Y},
    {"blockIdx.x", EXPR_BLOCK_X},   {"blockDim.x", EXPR_BLOCKDIM_X},
    {"blockDim.y", EXPR_BLOCKDIM_Y}, {"warpSize", EXPR_WARPSIZE},
    {"lane", EXPR_LANE},            {"warp", EXPR_WARP},
};
#define EXPR_KNOWN_NAMES \
    "threadIdx.x, threadIdx.y, blockIdx.x, blockDim.x, blockDim.y, warpSize, lane, warp"

/* lane and warp are functions of the linear thread id, so reading them reads
 * threadIdx.x, threadIdx.y and blockDim.x as well: callers use these bits to
 * decide which inputs can make the value vary. */
#define EXPR_LINEAR_BITS \
    ((1u << EXPR_THREAD_X) | (1u << EXPR_THREAD_Y) | (1u << EXPR_BLOCKDIM_X))

/* ---- lexer ---------------------------------------------------------- */

enum expr_tok {
    TOK_END,
    TOK_NUM,
    TOK_NAME,
    TOK_OP,     /* a unary or binary operator: tok.op says which */
    TOK_LPAREN,
    TOK_RPAREN,
    TOK_QUESTION,
    TOK_COLON
};

struct expr_token {
    enum expr_tok kind;
    enum expr_op op; /* TOK_OP: the binary operator (OP_SUB for '-') */
    int col;       /* 1-based */
    int len;       /* characters in the source */
    long long val; /* TOK_NUM: the value; TOK_NAME: the variable */
};

struct expr_parser {
    const char *src;
    int pos;                /* 0-based offset of the next unread character */
    struct expr_token tok;  /* the current token */
    int depth;              /* parentheses, unary operators and ?: open now */
    int sp, max_sp;         /* value stack height after the code so far */
    int ncode;
    unsigned uses;
    int *col;
    char *err;
    struct expr_insn code[EXPR_CODE_CAP];
};

/* Records a parse error at 1-based column `c`; always returns -1. */
#ifdef __GNUC__
__attribute__((format(printf, 3, 4)))
#endif
static int expr_fail(struct expr_parser *p, int c, const char *fmt, ...) {
    char why[ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (p->col) *p->col = c;
    dv_seterr(p->err, "column %d: %s", c, why);
    return -1;
}

static int expr_is_alpha(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int expr_is_digit(int c) { return c >= '0' && c <= '9'; }

static int expr_hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Describes character `c` for a message: printable ASCII as itself, other
 * bytes as \xNN so the message stays one readable line. */
static const char *expr_char_name(int c, char buf[8]) {
    if (c > 0x20 && c < 0x7f) {
        buf[0] = (char)c;
        buf[1] = '\0';
    } else {
        snprintf(buf, 8, "\\x%02x", (unsigned)(unsigned char)c);
    }
    return buf;
}

/* Reads an integer literal starting at p->pos into p->tok. */
static int expr_lex_number(struct expr_parser *p) {
    const char *s = p->src;
    int start = p->pos, i = p->pos;
    unsigned long long v = 0;
    if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        i += 2;
        if (expr_hex_value((unsigned char)s[i]) < 0)
            return expr_fail(p, start + 1, "hexadecimal literal has no digits");
        for (int d; (d = expr_hex_value((unsigned char)s[i])) >= 0; i++) {
            if (v > ((unsigned long long)LLONG_MAX - (unsigned)d) / 16)
                return expr_fail(p, start + 1,
                                 "integer literal out of range (the largest is 9223372036854775807)");
            v = v * 16 + (unsigned)d;
        }
    } else {
        if (s[i] == '0' && expr_is_digit((unsigned char)s[i + 1]))
            return expr_fail(p, start + 1,
                             "leading zero: octal literals are not supported");
        for (; expr_is_digit((unsigned char)s[i]); i++) {
            unsigned d = (unsigned)(s[i] - '0');
            if (v > ((unsigned long long)LLONG_MAX - d) / 10)
                return expr_fail(p, start + 1,
                                 "integer literal out of range (the largest is 9223372036854775807)");
            v = v * 10 + d;
        }
    }
    if (s[i] == 'u' || s[i] == 'U') i++;
    if (expr_is_alpha((unsigned char)s[i]) || expr_is_digit((unsigned char)s[i])) {
        char cb[8];
        return expr_fail(p, i + 1, "invalid character '%s' in integer literal",
                         expr_char_name((unsigned char)s[i], cb));
    }
    p->tok.kind = TOK_NUM;
    p->tok.val = (long long)v;
    p->tok.len = i - start;
    p->pos = i;
    return 0;
}

/* Reads a name (letters, digits, '_', and one '.' followed by a letter) and
 * resolves it to a variable. */
static int expr_lex_name(struct expr_parser *p) {
    const char *s = p->src;
    int start = p->pos, i = p->pos;
    while (expr_is_alpha((unsigned char)s[i]) || expr_is_digit((unsigned char)s[i])) i++;
    if (s[i] == '.' && expr_is_alpha((unsigned char)s[i + 1])) {
        i++;
        while (expr_is_alpha((unsigned char)s[i]) || expr_is_digit((unsigned char)s[i])) i++;
    }
    int len = i - start;
    for (size_t n = 0; n < sizeof expr_names / sizeof expr_names[0]; n++) {
        if ((int)strlen(expr_names[n].name) == len &&
            memcmp(expr_names[n].name, s + start, (size_t)len) == 0) {
            p->tok.kind = TOK_NAME;
            p->tok.val = expr_names[n].var;
            p->tok.len = len;
            p->pos = i;
            return 0;
        }
    }
    return expr_fail(p, start + 1, "unknown name '%.*s%s' (known: " EXPR_KNOWN_NAMES ")",
                     len > 64 ? 64 : len, s + start, len > 64 ? "..." : "");
}

/* Advances p->tok to the next token. */
static int expr_next(struct expr_parser *p) {
    const char *s = p->src;
    while (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' || s[p->pos] == '\r')
        p->pos++;
    int c = (unsigned char)s[p->pos], c1 = c ? (unsigned char)s[p->pos + 1] : 0;
    p->tok.col = p->pos + 1;
    p->tok.len = 1;
    p->tok.kind = TOK_OP;
    if (c == '\0') {
        p->tok.kind = TOK_END;
        p->tok.len = 0;
        return 0;
    }
    if (expr_is_digit(c)) return expr_lex_number(p);
    if (expr_is_alpha(c)) return expr_lex_name(p);
    switch (c) {
    case '(': p->tok.kind = TOK_LPAREN; break;
    case ')': p->tok.kind = TOK_RPAREN; break;
    case '?': p->tok.kind = TOK_QUESTION; break;
    case ':': p->tok.kind = TOK_COLON; break;
    case '*': p->tok.op = OP_MUL; break;
    case '/': p->tok.op = OP_DIV; break;
    case '%': p->tok.op = OP_MOD; break;
    case '+': p->tok.op = OP_ADD; break;
    case '-': p->tok.op = OP_SUB; break;
    case '~': p->tok.op = OP_BNOT; break;
    case '^': p->tok.op = OP_BXOR; break;
    case '<':
        if (c1 == '<') p->tok.op = OP_SHL, p->tok.len = 2;
        else if (c1 == '=') p->tok.op = OP_LE, p->tok.len = 2;
        else p->tok.op = OP_LT;
        break;
    case '>':
        if (c1 == '>') p->tok.op = OP_SHR, p->tok.len = 2;
        else if (c1 == '=') p->tok.op = OP_GE, p->tok.len = 2;
        else p->tok.op = OP_GT;
        break;
    case '=':
        if (c1 != '=')
            return expr_fail(p, p->pos + 1, "unexpected character '=' (did you mean '=='?)");
        p->tok.op = OP_EQ, p->tok.len = 2;
        break;
    case '!':
        if (c1 == '=') p->tok.op = OP_NE, p->tok.len = 2;
        else p->tok.op = OP_NOT;
        break;
    case '&':
        if (c1 == '&') p->tok.op = OP_AND_JMP, p->tok.len = 2;
        else p->tok.op = OP_BAND;
        break;
    case '|':
        if (c1 == '|') p->tok.op = OP_OR_JMP, p->tok.len = 2;
        else p->tok.op = OP_BOR;
        break;
    default: {
        char cb[8];
        return expr_fail(p, p->pos + 1, "unexpected character '%s'", expr_char_name(c, cb));
    }
    }
    p->pos += p->tok.len;
    return 0;
}

/* ---- code generation ------------------------------------------------ */

/* Appends one instruction; `dsp` is its effect on the stack height. */
static int expr_emit(struct expr_parser *p, enum expr_op op, int col, long long k, int dsp) {
    if (p->ncode >= EXPR_CODE_CAP || p->sp + dsp > EXPR_STACK)
        return expr_fail(p, col, "expression too complex");
    p->code[p->ncode].op = op;
    p->code[p->ncode].col = col;
    p->code[p->ncode].k = k;
    p->ncode++;
    p->sp += dsp;
    if (p->sp > p->max_sp) p->max_sp = p->sp;
    return 0;
}

/* Points the jump at code index `at` to the next instruction to be emitted. */
static void expr_patch(struct expr_parser *p, int at) {
    p->code[at].k = p->ncode;
}

/* ---- parser --------------------------------------------------------- */

/* Binary precedence of a TOK_OP token, 0 if it is not a binary operator.
 * Higher binds tighter; the ladder is C's. */
static int expr_prec(enum expr_op op) {
    switch (op) {
    case OP_MUL: case OP_DIV: case OP_MOD: return 10;
    case OP_ADD: case OP_SUB: return 9;
    case OP_SHL: case OP_SHR: return 8;
    case OP_LT: case OP_LE: case OP_GT: case OP_GE: return 7;
    case OP_EQ: case OP_NE: return 6;
    case OP_BAND: return 5;
    case OP_BXOR: return 4;
    case OP_BOR: return 3;
    case OP_AND_JMP: return 2;
    case OP_OR_JMP: return 1;
    default: return 0;
    }
}
#define PREC_TERNARY 0 /* below every binary operator */

/* Enters one level of nesting at column `col`. */
static int expr_enter(struct expr_parser *p, int col) {
    if (++p->depth > EXPR_MAX_DEPTH)
        return expr_fail(p, col, "nesting deeper than %d levels", EXPR_MAX_DEPTH);
    return 0;
}

/* Describes the current token for "found ..." messages. */
static void expr_tok_text(const struct expr_parser *p, char *buf, size_t len) {
    if (p->tok.kind == TOK_END)
        snprintf(buf, len, "end of input");
    else
        snprintf(buf, len, "'%.*s'", p->tok.len > 32 ? 32 : p->tok.len,
                 p->src + p->tok.col - 1);
}

static int expr_parse_binary(struct expr_parser *p, int min_prec);

/* operand: a literal, a name, ( expression ), or a prefix operator applied
 * to an operand. */
static int expr_parse_unary(struct expr_parser *p) {
    struct expr_token t = p->tok;
    switch (t.kind) {
    case TOK_NUM:
        if (expr_emit(p, OP_CONST, t.col, t.val, 1) < 0) return -1;
        return expr_next(p);
    case TOK_NAME:
        p->uses |= 1u << t.val;
        if (t.val == EXPR_LANE || t.val == EXPR_WARP) p->uses |= EXPR_LINEAR_BITS;
        if (t.val == EXPR_WARPSIZE) {
            if (expr_emit(p, OP_CONST, t.col, 32, 1) < 0) return -1;
        } else if (expr_emit(p, OP_VAR, t.col, t.val, 1) < 0) {
            return -1;
        }
        return expr_next(p);
    case TOK_LPAREN:
        if (expr_enter(p, t.col) < 0 || expr_next(p) < 0) return -1;
        if (expr_parse_binary(p, PREC_TERNARY) < 0) return -1;
        if (p->tok.kind != TOK_RPAREN) {
            char found[48];
            expr_tok_text(p, found, sizeof found);
            return expr_fail(p, p->tok.col, "missing ')' to match '(' at column %d, found %s",
                             t.col, found);
        }
        p->depth--;
        return expr_next(p);
    case TOK_OP:
        if (t.op == OP_SUB || t.op == OP_NOT || t.op == OP_BNOT || t.op == OP_ADD) {
            if (expr_enter(p, t.col) < 0 || expr_next(p) < 0) return -1;
            if (expr_parse_unary(p) < 0) return -1;
            p->depth--;
            if (t.op == OP_ADD) return 0; /* unary plus: the value itself */
            return expr_emit(p, t.op == OP_SUB ? OP_NEG : t.op, t.col, 0, 0);
        }
        break;
    case TOK_END:
        return expr_fail(p, t.col, "unexpected end of input, expected an operand");
    default:
        break;
    }
    char found[48];
    expr_tok_text(p, found, sizeof found);
    return expr_fail(p, t.col, "expected an operand, found %s", found);
}

/* Parses operands joined by binary operators of precedence >= min_prec, then,
 * if min_prec allows it, a trailing ?: whose condition is what was parsed. */
static int expr_parse_binary(struct expr_parser *p, int min_prec) {
    if (expr_parse_unary(p) < 0) return -1;
    for (;;) {
        int prec = p->tok.kind == TOK_OP ? expr_prec(p->tok.op) : 0;
        if (prec == 0 || prec < min_prec) break;
        struct expr_token t = p->tok;
        if (expr_next(p) < 0) return -1;
        if (t.op == OP_AND_JMP || t.op == OP_OR_JMP) {
            int jump = p->ncode;
            /* Taken: the left value (made 0/1) is the result. Not taken: the
             * left value is popped and the right one decides. */
            if (expr_emit(p, t.op, t.col, 0, -1) < 0) return -1;
            if (expr_parse_binary(p, prec + 1) < 0) return -1;
            if (expr_emit(p, OP_BOOL, t.col, 0, 0) < 0) return -1;
            expr_patch(p, jump);
        } else {
            if (expr_parse_binary(p, prec + 1) < 0) return -1;
            if (expr_emit(p, t.op, t.col, 0, -1) < 0) return -1;
        }
    }
    if (p->tok.kind == TOK_QUESTION && min_prec <= PREC_TERNARY) {
        struct expr_token q = p->tok;
        if (expr_enter(p, q.col) < 0 || expr_next(p) < 0) return -1;
        int jz = p->ncode;
        if (expr_emit(p, OP_JZ, q.col, 0, -1) < 0) return -1;
        if (expr_parse_binary(p, PREC_TERNARY) < 0) return -1;
        if (p->tok.kind != TOK_COLON) {
            char found[48];
            expr_tok_text(p, found, sizeof found);
            return expr_fail(p, p->tok.col, "missing ':' after '?' at column %d, found %s",
                             q.col, found);
        }
        int jmp = p->ncode;
        if (expr_emit(p, OP_JMP, q.col, 0, 0) < 0) return -1;
        expr_patch(p, jz);
        p->sp--; /* the else branch starts from the height before the middle */
        if (expr_next(p) < 0) return -1;
        if (expr_parse_binary(p, PREC_TERNARY) < 0) return -1;
        expr_patch(p, jmp);
        p->depth--;
    }
    return 0;
}

struct expr *expr_parse(const char *src, int *col, char *err) {
    if (!src) {
        if (col) *col = 1;
        dv_seterr(err, "column 1: no expression given");
        return NULL;
    }
    size_t n = strlen(src);
    if (n > EXPR_MAX_LEN) {
        if (col) *col = EXPR_MAX_LEN + 1;
        dv_seterr(err, "column %d: expression is %zu characters, the limit is %d",
                  EXPR_MAX_LEN + 1, n, EXPR_MAX_LEN);
        return NULL;
    }
    struct expr_parser *p = calloc(1, sizeof *p);
    if (!p) {
        if (col) *col = 1;
        dv_seterr(err, "column 1: out of memory");
        return NULL;
    }
    p->src = src;
    p->col = col;
    p->err = err;
    struct expr *e = NULL;
    if (expr_next(p) < 0) goto cleanup;
    if (p->tok.kind == TOK_END) {
        expr_fail(p, 1, "empty expression");
        goto cleanup;
    }
    if (expr_parse_binary(p, PREC_TERNARY) < 0) goto cleanup;
    if (p->tok.kind != TOK_END) {
        char found[48];
        expr_tok_text(p, found, sizeof found);
        expr_fail(p, p->tok.col, "unexpected %s after a complete expression", found);
        goto cleanup;
    }
    if (expr_emit(p, OP_END, p->tok.col, 0, 0) < 0) goto cleanup;

    size_t code_bytes = (size_t)p->ncode * sizeof p->code[0];
    e = malloc(sizeof *e + code_bytes + n + 1);
    if (!e) {
        expr_fail(p, 1, "out of memory");
        goto cleanup;
    }
    e->uses = p->uses;
    e->ncode = p->ncode;
    memcpy(e->code, p->code, code_bytes);
    char *copy = (char *)e->code + code_bytes;
    memcpy(copy, src, n + 1);
    e->src = copy;
cleanup:
    free(p);
    return e;
}

/* ---- evaluation ----------------------------------------------------- */

/* Two's complement reinterpretation without implementation-defined
 * conversion; compilers reduce it to nothing. */
static inline long long to_signed(unsigned long long u) {
    if (u <= (unsigned long long)LLONG_MAX) return (long long)u;
    return (long long)(u - (unsigned long long)LLONG_MAX - 1) + LLONG_MIN;
}

/* Arithmetic right shift of a possibly negative value, 0 <= s <= 63. */
static inline long long expr_sar(long long a, long long s) {
    return a < 0 ? ~(~a >> s) : a >> s;
}

/* Records an evaluation error at column `c`; always returns -1. */
static int expr_eval_fail(int *col, char *err, int c, const char *why, long long n) {
    if (col) *col = c;
    if (why)
        dv_seterr(err, "column %d: %s", c, why);
    else
        dv_seterr(err, "column %d: shift count %lld out of range 0..63", c, n);
    return -1;
}

/* a = a op b for the operators that fail for some operands (division and
 * modulo by zero or overflowing, a shift count out of 0..63): 0, or -1 with
 * *why the reason (NULL for a shift count, which expr_eval_fail() words
 * with the count). Inlined into expr_eval()'s loop. */
static inline int checked_binary(enum expr_op op, long long *a, long long b, const char **why) {
    switch (op) {
    case OP_DIV:
        if (b == 0) return *why = "division by zero", -1;
        if (b == -1 && *a == LLONG_MIN) return *why = "division overflow: LLONG_MIN / -1", -1;
        *a /= b;
        return 0;
    case OP_MOD:
        if (b == 0) return *why = "modulo by zero", -1;
        if (b == -1 && *a == LLONG_MIN) return *why = "modulo overflow: LLONG_MIN % -1", -1;
        *a %= b;
        return 0;
    default: /* OP_SHL, OP_SHR */
        if (b < 0 || b > 63) return *why = NULL, -1;
        *a = op == OP_SHL ? to_signed((unsigned long long)*a << b) : expr_sar(*a, b);
        return 0;
    }
}

/* The variables `e` can read for one thread, by enum expr_var; lane and
 * warp only when it reads them (they cost a multiply and two divisions). */
static inline void expr_load_vars(const struct expr *e, const struct expr_env *env, long long vars[EXPR_NUM_VARS]) {
    vars[EXPR_THREAD_X] = env->thread_x;
    vars[EXPR_THREAD_Y] = env->thread_y;
    vars[EXPR_BLOCK_X] = env->block_x;
    vars[EXPR_BLOCKDIM_X] = env->blockdim_x;
    vars[EXPR_BLOCKDIM_Y] = env->blockdim_y;
    vars[EXPR_WARPSIZE] = 32;
    if (e->uses & ((1u << EXPR_LANE) | (1u << EXPR_WARP))) {
        long long linear = to_signed((unsigned long long)env->thread_x +
                                     (unsigned long long)env->thread_y * (unsigned long long)env->blockdim_x);
        vars[EXPR_LANE] = linear % 32;
        vars[EXPR_WARP] = linear / 32;
    }
}

int expr_eval(const struct expr *e, const struct expr_env *env, long long *out, int *col, char *err) {
    if (!e || !env || !out) {
        if (col) *col = 0;
        dv_seterr(err, "expr_eval: missing argument");
        return -1;
    }
    long long vars[EXPR_NUM_VARS];
    expr_load_vars(e, env, vars);

    long long st[EXPR_STACK];
    long long *sp = st; /* next free slot */
    const struct expr_insn *code = e->code, *ip = code;
    for (;;) {
        const struct expr_insn *i = ip++;
        long long b;
        switch (i->op) {
        case OP_END: *out = sp[-1]; return 0;
        case OP_CONST: *sp++ = i->k; break;
        case OP_VAR: *sp++ = vars[i->k]; break;
        case OP_NEG: sp[-1] = to_signed(0ull - (unsigned long long)sp[-1]); break;
        case OP_NOT: sp[-1] = !sp[-1]; break;
        case OP_BNOT: sp[-1] = ~sp[-1]; break;
        case OP_MUL:
            b = *--sp;
            sp[-1] = to_signed((unsigned long long)sp[-1] * (unsigned long long)b);
            break;
        case OP_DIV:
        case OP_MOD:
        case OP_SHL:
        case OP_SHR: {
            const char *why = NULL;
            b = *--sp;
            if (checked_binary(i->op, &sp[-1], b, &why) != 0) return expr_eval_fail(col, err, i->col, why, b);
            break;
        }
        case OP_ADD:
            b = *--sp;
            sp[-1] = to_signed((unsigned long long)sp[-1] + (unsigned long long)b);
            break;
        case OP_SUB:
            b = *--sp;
            sp[-1] = to_signed((unsigned long long)sp[-1] - (unsigned long long)b);
            break;
        case OP_LT: b = *--sp; sp[-1] = sp[-1] < b; break;
        case OP_LE: b = *--sp; sp[-1] = sp[-1] <= b; break;
        case OP_GT: b = *--sp; sp[-1] = sp[-1] > b; break;
        case OP_GE: b = *--sp; sp[-1] = sp[-1] >= b; break;
        case OP_EQ: b = *--sp; sp[-1] = sp[-1] == b; break;
        case OP_NE: b = *--sp; sp[-1] = sp[-1] != b; break;
        case OP_BAND: b = *--sp; sp[-1] &= b; break;
        case OP_BXOR: b = *--sp; sp[-1] ^= b; break;
        case OP_BOR: b = *--sp; sp[-1] |= b; break;
        case OP_BOOL: sp[-1] = sp[-1] != 0; break;
        case OP_AND_JMP:
            if (sp[-1] == 0) ip = code + i->k; /* the 0 stays as the result */
            else sp--;
            break;
        case OP_OR_JMP:
            if (sp[-1] != 0) sp[-1] = 1, ip = code + i->k;
            else sp--;
            break;
        case OP_JZ:
            if (*--sp == 0) ip = code + i->k;
            break;
        case OP_JMP: ip = code + i->k; break;
        default:
            return expr_eval_fail(col, err, i->col, "internal error: bad instruction", 0);
        }
    }
}

unsigned expr_uses(const struct expr *e) { return e ? e->uses : 0u; }

const char *expr_source(const struct expr *e) { return e ? e->src : NULL; }

size_t expr_caret(const char *src, int col, char *buf, size_t len) {
    if (!buf || len == 0) return 0;
    if (!src) src = "";
    size_t n = strlen(src), w = 0;
    if (col < 1) col = 1;
    if ((size_t)col > n + 1) col = (int)(n + 1);
#define EXPR_PUT(ch) do { if (w + 1 < len) buf[w++] = (char)(ch); } while (0)
    /* Control characters would break the two-line layout: a tab is kept (and
     * repeated under it so the caret still lines up), anything else shows as
     * a space. */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];
        EXPR_PUT(c == '\t' || c >= 0x20 ? c : ' ');
    }
    EXPR_PUT('\n');
    for (int i = 0; i < col - 1; i++) EXPR_PUT(src[i] == '\t' ? '\t' : ' ');
    EXPR_PUT('^');
#undef EXPR_PUT
    buf[w] = '\0';
    return w;
}

void expr_free(struct expr *e) { free(e); }

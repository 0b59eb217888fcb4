/* fuzz_expr.c -- libFuzzer harness for the predicate expression language
 * (kernels/model/model/expr.c): any bytes are parsed; what parses is evaluated for
 * a few threads of a few block shapes, and its caret diagnostic is drawn.
 * Nothing may crash, leak or trip ASan/UBSan; a parse error must name a
 * column inside the source (or one past its end). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char src[EXPR_MAX_LEN * 2 + 2];
    if (size > sizeof src - 1) size = sizeof src - 1;
    memcpy(src, data, size);
    src[size] = '\0';
    int col = 0;
    char err[ERR_LEN];
    struct expr *e = expr_parse(src, &col, err);
    if (!e) {
        size_t n = strlen(src);
        if (col < 1 || (size_t)col > n + 1) abort();
        char caret[2 * EXPR_MAX_LEN * 2 + 8];
        expr_caret(src, col, caret, sizeof caret);
        return 0;
    }
    if (strcmp(expr_source(e), src) != 0) abort();
    (void)expr_uses(e);
    static const long long dims[][2] = {{32, 1}, {1024, 1}, {7, 5}, {1, 1}};
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
        for (long long t = 0; t < 3; t++) {
            struct expr_env env = {t * (dims[d][0] / 2 + 1) % dims[d][0], t % dims[d][1], t * 4093, dims[d][0],
                                   dims[d][1]};
            long long out;
            int ecol = 0;
            if (expr_eval(e, &env, &out, &ecol, err) < 0 && ecol < 1) abort();
        }
    expr_free(e);
    return 0;
}

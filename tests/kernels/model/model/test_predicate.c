/* test_predicate.c -- what a predicate reads, decided in one place
 * (predicate_reads_block() and its two forms of the text and the built-in
 * mode), for the built-ins and for expressions.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "kernels/model/model/predicate.h"

Test(predicate, only_block_parity_among_the_builtins_reads_blockidx) {
    size_t n = 0;
    const struct predicate_builtin *b = predicate_builtins(&n);
    for (size_t i = 0; i < n; i++) {
        const int want = b[i].mode == DV_BLOCK_PARITY;
        cr_expect_eq(predicate_mode_reads_block(b[i].mode), want, "%s", b[i].name);
        cr_expect_eq(predicate_text_reads_block(b[i].name), want, "%s by name", b[i].name);
        /* Its label is its definition: the expression reads the same. */
        cr_expect_eq(predicate_text_reads_block(b[i].expr), want, "%s as %s", b[i].name, b[i].expr);
    }
    cr_expect_eq(predicate_mode_reads_block(DV_MODE_NONE), -1);
    cr_expect_eq(predicate_mode_reads_block(DV_NUM_MODES), -1);
}

Test(predicate, an_expression_reads_blockidx_where_it_names_it) {
    static const struct {
        const char *text;
        int reads;
    } cases[] = {
        {"threadIdx.x < 5", 0},
        {"blockIdx.x % 3 == 0", 1},
        {"  (blockIdx.x & 1) == (threadIdx.x & 1)  ", 1},
        {"warp & 1", 0},
        {"blockIdx.x * 0 + lane < 16", 1}, /* named, so blocks may differ: counted so */
        {"no-such(", -1},
        {"", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(predicate_text_reads_block(cases[i].text), cases[i].reads, "'%s'", cases[i].text);
        struct predicate p;
        char err[ERR_LEN];
        if (predicate_resolve(cases[i].text, &p, NULL, err) != 0) continue;
        cr_expect_eq(predicate_reads_block(&p), cases[i].reads == 1, "'%s' resolved", cases[i].text);
        predicate_cleanup(&p);
    }
}

/* test_realfmt.c -- which doubles 15 significant digits give back exactly. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>

#include "kernels/base/realfmt.h"

Test(realfmt, short_decimals_need_15_digits_at_most) {
    cr_expect(realfmt_exact15(0.005));
    cr_expect(realfmt_exact15(2000.0));
    cr_expect(realfmt_exact15(0.0));
    cr_expect(realfmt_exact15(-1e-300));
    cr_expect(realfmt_exact15(123456789012345.0));
}

Test(realfmt, doubles_that_need_17_digits_are_not_exact) {
    cr_expect_not(realfmt_exact15(0.1 + 0.2)); /* 0.30000000000000004 */
    cr_expect_not(realfmt_exact15(1.0 / 3.0));
    cr_expect_not(realfmt_exact15(DBL_MAX));
    cr_expect_not(realfmt_exact15(NAN));
}

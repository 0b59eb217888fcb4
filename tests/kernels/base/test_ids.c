/* test_ids.c -- the one id generator. */
#include <criterion/criterion.h>
#include <string.h>

#include "kernels/base/ids.h"
#include "kernels/base/status.h"

Test(ids, prefix_then_lower_hex_of_the_asked_length) {
    char id[64], err[ERR_LEN];
    cr_assert_eq(ids_random_hex("r", 8, id, sizeof id, err), 0, "%s", err);
    cr_assert_eq(strlen(id), 17);
    cr_assert_eq(id[0], 'r');
    cr_assert_eq(strspn(id + 1, "0123456789abcdef"), 16);
}

Test(ids, two_ids_differ) {
    char a[33], b[33], err[ERR_LEN];
    cr_assert_eq(ids_random_hex(NULL, 16, a, sizeof a, err), 0);
    cr_assert_eq(ids_random_hex(NULL, 16, b, sizeof b, err), 0);
    cr_assert_str_neq(a, b);
}

Test(ids, a_buffer_too_small_is_an_error_not_a_truncated_id) {
    char id[8], err[ERR_LEN] = "";
    cr_assert_eq(ids_random_hex("r", 8, id, sizeof id, err), -1);
    cr_assert(strstr(err, "ids:") != NULL, "%s", err);
}

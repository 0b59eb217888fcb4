/* test_jsonout.c -- numbers leave as short as they can without changing. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/core/jsonout.h"

static char *dump_one(double d) {
    json_t *a = json_pack("[f]", d);
    cr_assert_not_null(a);
    char *s = jsonout_dumps(a, JSON_COMPACT);
    json_decref(a);
    cr_assert_not_null(s);
    return s;
}

Test(jsonout, short_when_fifteen_digits_are_exact) {
    char *s = dump_one(floor(14.9345678 * 1000) / 1000);
    cr_assert_str_eq(s, "[14.934]");
    free(s);
    s = dump_one(0.005);
    cr_assert_str_eq(s, "[0.005]");
    free(s);
    s = dump_one(0.1);
    cr_assert_str_eq(s, "[0.1]");
    free(s);
}

Test(jsonout, exact_when_a_value_needs_seventeen_digits) {
    double d = 0.1 + 0.2; /* 0.30000000000000004 */
    json_t *a = json_pack("{s:f,s:[f]}", "short", 0.5, "long", d);
    char *s = jsonout_dumps(a, JSON_COMPACT);
    json_decref(a);
    cr_assert_not_null(s);
    json_t *back = json_loads(s, 0, NULL);
    cr_assert_not_null(back, "%s", s);
    cr_assert(json_real_value(json_array_get(json_object_get(back, "long"), 0)) == d, "%s", s);
    json_decref(back);
    free(s);
}

Test(jsonout, integers_strings_and_null_pass_through) {
    json_t *a = json_pack("{s:i,s:s,s:n}", "n", 7, "t", "x", "z");
    char *s = jsonout_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
    cr_assert_str_eq(s, "{\"n\":7,\"t\":\"x\",\"z\":null}");
    free(s);
    json_decref(a);
    cr_assert_null(jsonout_dumps(NULL, 0));
}

/* test_jsonout.c -- numbers leave as short as they can without changing;
 * the builder's one flag catches every member that did not go in; strings
 * that are not UTF-8 still go in, and only memory makes them fail. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonout.h"
#include "tests/support/failing_alloc.h"

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

Test(jsonout, put_and_append_flag_every_member_that_did_not_go_in) {
    int bad = 0;
    json_t *o = json_object(), *a = json_array();
    jsonout_put(o, "n", json_integer(1), &bad);
    jsonout_append(a, jsonout_str("x"), &bad);
    cr_assert_eq(bad, 0);
    jsonout_put(o, "lost", NULL, &bad); /* a constructor that had no memory */
    cr_assert_eq(bad, 1);
    cr_assert_null(json_object_get(o, "lost"));
    bad = 0;
    jsonout_append(a, NULL, &bad);
    cr_assert_eq(bad, 1);
    bad = 0;
    jsonout_put(NULL, "k", json_integer(2), &bad); /* the container had none */
    cr_assert_eq(bad, 1);
    bad = 0;
    jsonout_append(NULL, json_integer(3), &bad);
    cr_assert_eq(bad, 1);
    bad = 0;
    jsonout_append(o, json_integer(4), &bad); /* not an array */
    cr_assert_eq(bad, 1);
    jsonout_put(o, "a", a, &bad);
    char *s = jsonout_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    cr_assert_str_eq(s, "{\"a\":[\"x\"],\"n\":1}");
    free(s);
    json_decref(o);
}

Test(jsonout, str_keeps_utf8_and_replaces_only_what_is_not) {
    json_t *v = jsonout_str("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    cr_assert_not_null(v);
    cr_assert_str_eq(json_string_value(v), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    json_decref(v);
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"a\xff" "b", "a?b"},              /* never a UTF-8 byte           */
        {"x\xc3", "x?"},                    /* cut short at the end         */
        {"\xc0\xaf", "??"},                 /* overlong '/'                 */
        {"\xe0\x80\xaf", "???"},            /* overlong, three bytes        */
        {"\xed\xa0\x80", "???"},            /* a surrogate                  */
        {"\xf4\x90\x80\x80", "????"},       /* above U+10FFFF               */
        {"\xe2\x82 ok \xe2\x82\xac", "?? ok \xe2\x82\xac"}, /* a broken one, then a whole one */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        v = jsonout_str(cases[i].in);
        cr_assert_not_null(v, "case %zu", i);
        cr_assert_str_eq(json_string_value(v), cases[i].out, "case %zu", i);
        json_decref(v);
    }
    cr_assert_null(jsonout_str(NULL));
    cr_assert(json_is_null(jsonout_str_or_null(NULL)));
}

Test(jsonout, num_writes_what_json_cannot_as_null) {
    json_t *v = jsonout_num(NAN);
    cr_assert(json_is_null(v));
    cr_assert(json_is_null(jsonout_num(INFINITY)));
    v = jsonout_num(2.5);
    cr_assert_float_eq(json_real_value(v), 2.5, 0);
    json_decref(v);
}

/* jansson's parser drops a byte it has no memory to store and goes on:
 * jsonout_loadb() refuses what such a parse returns, and says out of
 * memory, for every allocation that can fail. */
struct parse {
    const char *text;
    json_error_t je;
};

static char *parsed_text(void *ctx) {
    struct parse *p = ctx;
    json_t *v = jsonout_loads(p->text, 0, &p->je);
    char *s = v ? jsonout_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    return s;
}

static void parse_failed(void *ctx, long k) {
    struct parse *p = ctx;
    /* NULL from the dump says nothing of the parse; from the parse it must
     * say out of memory. */
    if (p->je.text[0]) cr_assert(jsonout_oom(&p->je), "allocation %ld failed and the error says: %s", k, p->je.text);
}

Test(jsonout, a_parse_that_met_an_allocation_failure_is_refused) {
    struct parse p = {.text =
                          "{\"threads_per_block_and_more\": \"a value longer than sixteen bytes\", \"n\": [1, 2.5]}"};
    char *want = parsed_text(&p);
    cr_assert_not_null(want);
    unsigned failed = failing_alloc_each(
        &(struct failing_case){.build = parsed_text, .ctx = &p, .want = want, .failed = parse_failed, .max = 1000});
    cr_assert_geq(failed, 5, "only %u parses met a failure", failed);
    free(want);
}

Test(jsonout, the_count_tells_a_caller_that_a_call_met_a_failure) {
    unsigned long before = jsonout_failures();
    failing_alloc_at(0);
    json_t *o = json_object();
    failing_alloc_stop();
    cr_assert_null(o);
    cr_assert_eq(jsonout_failures(), before + 1);
}

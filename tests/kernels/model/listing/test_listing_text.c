/* test_listing_text.c -- a process's disassembly text, read once per cubin
 * and function (model/listing/listing_text.h): forty rows of one kernel ask
 * the disassembler once and read the function once, and get what a read of
 * their own gives; a tool that fails is asked once for its cubin and its
 * reason reaches every row; a function the text lacks is a reason, not a
 * crash. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/listing/listing_read.h"
#include "kernels/model/listing/listing_text.h"
#include "tests/support/readfile.h"

#define FIXTURE DV_TEST_SOURCE_DIR "/tests/fixtures/instructions/probe-nobranch.cuobjdump.txt"
#define FUNCTION "_Z13probeNoBranchILi4096EEvPKfPfmi"

/* A disassembler that counts its calls and gives the fixture with a label
 * line, or fails when `fail` is set. */
struct tool {
    unsigned calls;
    int fail;
    uint64_t last_crc;
};

static char *tool_text(void *ctx, uint64_t crc, const void *cubin, size_t size, size_t *len, char *why) {
    struct tool *t = ctx;
    (void)cubin;
    (void)size;
    t->calls++;
    t->last_crc = crc;
    if (t->fail) {
        dv_seterr(why, "the disassembler ran out of time");
        return NULL;
    }
    size_t n = 0;
    char *body = readfile(FIXTURE, &n);
    cr_assert_not_null(body);
    const char head[] = "# cuobjdump 13.0 (bin/cuobjdump)\n";
    char *text = malloc(sizeof head + n);
    cr_assert_not_null(text);
    memcpy(text, head, sizeof head - 1);
    memcpy(text + sizeof head - 1, body, n + 1);
    *len = sizeof head - 1 + n;
    free(body);
    return text;
}

Test(listing_text, forty_rows_of_one_kernel_ask_the_tool_once_and_read_once) {
    struct listing_texts m;
    struct tool t = {0};
    char why[ERR_LEN] = "";
    listing_texts_init(&m);
    size_t n = 0;
    char *body = readfile(FIXTURE, &n);
    cr_assert_not_null(body);
    struct listing_insns own;
    cr_assert_eq(listing_read_sass(body, n, FUNCTION, &own, why), 0, "%s", why);
    for (unsigned row = 0; row < 40; row++) {
        const struct listing_text *e = listing_texts_get(&m, tool_text, &t, 0xabcdu, "cubin", 5, FUNCTION, why);
        cr_assert_not_null(e, "%s", why);
        cr_assert(e->ok, "%s", e->why);
        cr_expect_str_eq(e->tool, "cuobjdump 13.0 (bin/cuobjdump)");
        cr_assert_eq(e->insns.n, own.n);
        for (size_t k = 0; k < own.n; k++) {
            cr_assert_eq(e->insns.v[k].pc, own.v[k].pc);
            cr_assert_str_eq(e->insns.v[k].sass, own.v[k].sass);
            cr_assert_eq(e->insns.v[k].has_target, own.v[k].has_target);
        }
    }
    cr_expect_eq(t.calls, 1, "the disassembler was asked %u times for forty rows of one function", t.calls);
    cr_expect_eq(m.reads, 1);
    /* Another cubin is another text. */
    const struct listing_text *e = listing_texts_get(&m, tool_text, &t, 0xbeefu, "cubin", 5, FUNCTION, why);
    cr_assert(e && e->ok);
    cr_expect_eq(t.calls, 2);
    cr_expect_eq(t.last_crc, 0xbeefu);
    listing_insns_cleanup(&own);
    free(body);
    listing_texts_cleanup(&m);
}

Test(listing_text, a_tool_that_fails_is_asked_once_and_every_row_gets_its_reason) {
    struct listing_texts m;
    struct tool t = {.fail = 1};
    char why[ERR_LEN] = "";
    listing_texts_init(&m);
    for (unsigned row = 0; row < 40; row++) {
        /* Rows of two kernels in the one cubin: the tool is not asked again. */
        const struct listing_text *e =
            listing_texts_get(&m, tool_text, &t, 7, "cubin", 5, row % 2 ? FUNCTION : "_Z5otherv", why);
        cr_assert_not_null(e, "%s", why);
        cr_expect_not(e->ok);
        cr_expect_str_eq(e->why, "the disassembler ran out of time");
    }
    cr_expect_eq(t.calls, 1, "a failing disassembler was run %u times", t.calls);
    listing_texts_cleanup(&m);
}

Test(listing_text, a_function_the_text_lacks_is_a_reason_and_no_disassembler_is_one_too) {
    struct listing_texts m;
    struct tool t = {0};
    char why[ERR_LEN] = "";
    listing_texts_init(&m);
    const struct listing_text *e = listing_texts_get(&m, tool_text, &t, 9, "cubin", 5, "_Z7missingv", why);
    cr_assert_not_null(e);
    cr_expect_not(e->ok);
    cr_expect(strstr(e->why, "no instructions of _Z7missingv") != NULL, "%s", e->why);
    /* The same cubin's other function is still read. */
    e = listing_texts_get(&m, tool_text, &t, 9, "cubin", 5, FUNCTION, why);
    cr_assert(e && e->ok, "%s", e ? e->why : why);
    e = listing_texts_get(&m, NULL, NULL, 10, "cubin", 5, FUNCTION, why);
    cr_assert_not_null(e);
    cr_expect_not(e->ok);
    cr_expect_str_eq(e->why, "instructions: no disassembler was given");
    listing_texts_cleanup(&m);
}

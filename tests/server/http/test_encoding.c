/* test_encoding.c -- Accept-Encoding negotiation, what is worth
 * compressing, and each coding's entity-tag (encoding.h). */
#include <criterion/criterion.h>

#include "server/http/encoding.h"

Test(encoding, accept_encoding_negotiation_table) {
    static const struct {
        const char *accept;
        enum encoding want;
    } cases[] = {
        {NULL, ENCODING_IDENTITY},   /* absent: what every client reads */
        {"", ENCODING_IDENTITY},     /* empty: no coding wanted (12.5.3) */
        {"gzip", ENCODING_GZIP},
        {"GZIP", ENCODING_GZIP},     /* codings are case-insensitive */
        {"x-gzip", ENCODING_GZIP},   /* the alias (RFC 9110 8.4.1.3) */
        {"gzip;q=0", ENCODING_IDENTITY},
        {"gzip; q=0.000", ENCODING_IDENTITY},
        {"identity;q=0", ENCODING_IDENTITY}, /* nothing acceptable: identity, not 406 */
        {"gzip, identity;q=0", ENCODING_GZIP},
        {"*", ENCODING_GZIP},
        {"*;q=0", ENCODING_IDENTITY},
        {"*, gzip;q=0", ENCODING_IDENTITY}, /* the named coding wins over * */
        {"gzip;q=0.5, identity", ENCODING_IDENTITY},
        {"gzip;q=1.0, identity;q=0.5", ENCODING_GZIP},
        {"gzip;q=0.5, identity;q=0.5", ENCODING_GZIP}, /* a tie: the smaller */
        {"deflate, br", ENCODING_IDENTITY},
        {"gzip, deflate, br, zstd", ENCODING_GZIP}, /* a browser's */
        {" gzip ; q=0.8 ,deflate", ENCODING_GZIP},
        {"gzip;q=2", ENCODING_IDENTITY},    /* no q-value: not listed */
        {"gzip;q=0.1234", ENCODING_IDENTITY},
        {"gzip;q=abc", ENCODING_IDENTITY},
        {"gzipx", ENCODING_IDENTITY},
        {"x-gzip;q=0, gzip", ENCODING_GZIP}, /* the better of the two names */
        {",,gzip,,", ENCODING_GZIP},
        {"gzip;level=9", ENCODING_GZIP}, /* another parameter: ignored */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(encoding_choose(cases[i].accept), cases[i].want, "Accept-Encoding: %s",
                     cases[i].accept ? cases[i].accept : "(absent)");
}

Test(encoding, compressible_types_of_a_kilobyte_and_more) {
    cr_expect(encoding_compressible("application/json", 4096));
    cr_expect(encoding_compressible("text/javascript; charset=utf-8", 4096));
    cr_expect(encoding_compressible("text/css; charset=utf-8", 4096));
    cr_expect(encoding_compressible("image/svg+xml", 4096));
    cr_expect(encoding_compressible("text/csv; charset=utf-8; header=present", ENCODING_MIN_BYTES));
    cr_expect_not(encoding_compressible("application/json", ENCODING_MIN_BYTES - 1), "small: as it is");
    cr_expect_not(encoding_compressible("image/png", 1 << 20), "compressed already");
    cr_expect_not(encoding_compressible("font/woff2", 1 << 20));
    cr_expect_not(encoding_compressible("application/octet-stream", 1 << 20));
    cr_expect_not(encoding_compressible(NULL, 1 << 20));
}

Test(encoding, each_coding_has_its_own_etag) {
    char out[ENCODING_ETAG_LEN];
    cr_assert_eq(encoding_etag("\"abc-12\"", ENCODING_IDENTITY, out), 0);
    cr_expect_str_eq(out, "\"abc-12\"");
    cr_assert_eq(encoding_etag("\"abc-12\"", ENCODING_GZIP, out), 0);
    cr_expect_str_eq(out, "\"abc-12-gz\"");
    cr_assert_eq(encoding_etag("W/\"x\"", ENCODING_GZIP, out), 0);
    cr_expect_str_eq(out, "W/\"x-gz\"");
    cr_expect_eq(encoding_etag("abc", ENCODING_GZIP, out), -1, "not an entity-tag");
    cr_expect_str_eq(out, "");
    cr_expect_eq(encoding_etag("\"", ENCODING_GZIP, out), -1);
    cr_expect_eq(encoding_etag(NULL, ENCODING_GZIP, out), -1);
}

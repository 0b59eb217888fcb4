/* encoding.h -- content codings (RFC 9110 12.5.3): which one a request's
 * Accept-Encoding asks for, whether a body is worth compressing, and the
 * entity-tag each coding's representation carries.
 *
 * The service offers one coding beside identity, gzip. A request takes
 * gzip when its Accept-Encoding gives gzip (or "x-gzip", or "*" when
 * neither is listed) a q-value above 0 and at least identity's (identity's
 * is its own where listed, else "*"'s, else none: always acceptable, it is
 * preferred to nothing the client lists). No header,
 * an empty one, or one that refuses gzip: identity; a list that refuses
 * both is answered with identity too, as 12.5.3 advises (no 406). A member
 * that cannot be read (a q-value that is not one) counts as not listed.
 *
 * Each coding is its own representation with its own ETag: the identity
 * ETag with "-gz" before its closing quote. Pure functions: no HTTP here.
 */
#ifndef DV_ENCODING_H
#define DV_ENCODING_H

#include <stddef.h>

/* Bodies smaller than this are sent as they are: gzip's header and the
 * round trip of another representation cost more than they save. */
#define ENCODING_MIN_BYTES 1024
/* The room an entity-tag and its coding's suffix need. */
#define ENCODING_ETAG_LEN 96

enum encoding { ENCODING_IDENTITY = 0, ENCODING_GZIP = 1 };

/* The coding to answer with for Accept-Encoding value `accept` (NULL when
 * the request has none). */
enum encoding encoding_choose(const char *accept);

/* Whether a body of `len` bytes of `content_type` is worth compressing:
 * text, JSON, YAML, JavaScript and SVG of at least ENCODING_MIN_BYTES;
 * never what is compressed already (images but SVG, fonts, archives). */
int encoding_compressible(const char *content_type, size_t len);

/* `etag` (with its quotes, W/ allowed) as coding `enc`'s representation's
 * into `out` (ENCODING_ETAG_LEN): itself for identity, "-gz" inserted
 * before the closing quote for gzip. Returns 0, or -1 when `etag` is not
 * an entity-tag or does not fit (then `out` is ""). */
int encoding_etag(const char *etag, enum encoding enc, char *out);

#endif /* DV_ENCODING_H */

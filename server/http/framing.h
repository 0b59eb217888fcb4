/* framing.h -- the rules of message framing (RFC 9112) the HTTP front
 * applies before any handler runs, as functions of the request's own text:
 * no libmicrohttpd, no server state, so each rule can be tested alone.
 *
 * The raw request target is checked as it arrives (framing_target: no
 * encoded NUL in the path, a bounded number of query arguments); the header
 * lines are fed one by one as the library hands them over (framing_header);
 * once all are in, framing_verdict() gives the answer: one Content-Length,
 * of digits only; no Content-Length beside a Transfer-Encoding; no transfer
 * coding but "chunked" (501 Not Implemented), and none in HTTP/1.0; exactly
 * one Host in HTTP/1.1. A request that fails any of them is answered and its
 * connection closed: after bytes whose framing cannot be trusted, nothing on
 * the connection may be read as another request.
 */
#ifndef DV_FRAMING_H
#define DV_FRAMING_H

#include <stddef.h>

/* What the header lines said about the framing (framing_init first). */
struct framing {
    unsigned content_length;    /* Content-Length lines                   */
    unsigned transfer_encoding; /* Transfer-Encoding lines                */
    unsigned host;              /* Host lines                             */
    int cl_bad;                 /* a Content-Length that is not digits    */
    char te[128];               /* the first Transfer-Encoding's value    */
};

enum framing_target_fault {
    FRAMING_TARGET_OK = 0,
    FRAMING_TARGET_NUL, /* an encoded NUL (%00) in the path              */
    FRAMING_TARGET_ARGS /* more than the allowed number of query arguments */
};

/* Checks the raw request target `uri` (as sent, before unescaping): no %00
 * in the path, at most `max_args` query arguments (each '&' starts one).
 * Returns the fault, with the reason in `why` (`len` bytes) when there is
 * one. */
enum framing_target_fault framing_target(const char *uri, unsigned max_args, char *why, size_t len);

void framing_init(struct framing *f);

/* One header line: `name` (any case) and `value` (NULL: empty). */
void framing_header(struct framing *f, const char *name, const char *value);

/* The verdict on the header lines fed so far, for an HTTP/1.1 request when
 * `http11` is 1 (else 1.0). Returns 0 when the framing is sound, or the
 * status to answer (400, or 501 for a transfer coding not implemented) with
 * the reason in `why` (`len` bytes). */
int framing_verdict(const struct framing *f, int http11, char *why, size_t len);

#endif /* DV_FRAMING_H */

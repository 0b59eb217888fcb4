/* conditional.h -- conditional GETs (RFC 9110 section 13): is the client's
 * copy still good, so that the answer is 304 Not Modified?
 *
 * One rule for every route that sends validators (the evidence, the static
 * files). If-None-Match decides when the request carries it: "*", or a list
 * of entity-tags of which one equals the current ETag by the weak comparison
 * (W/ ignored on both sides, the opaque-tags compared byte for byte). The
 * list is parsed as the grammar says, `#entity-tag` with optional white
 * space around the commas: a member that is not an entity-tag (`"a"x`,
 * `abc`, an unclosed quote) makes the whole field invalid, and an invalid
 * field matches nothing. Without If-None-Match, If-Modified-Since means not
 * modified when the resource's last modification is at or before the date
 * it gives; a value that is not an HTTP-date (IMF-fixdate, or one of the two
 * obsolete forms a recipient must accept: RFC 850 and asctime), a date that
 * does not exist (30 February, 25:00, a weekday that is not that date's) or
 * a date later than the server's clock is ignored, as 13.1.3 says.
 *
 * Pure functions: no HTTP here, the routes pass the header values.
 */
#ifndef DV_CONDITIONAL_H
#define DV_CONDITIONAL_H

#include <time.h>

/* An HTTP-date (RFC 9110 5.6.7: "Sun, 06 Nov 1994 08:49:37 GMT",
 * "Sunday, 06-Nov-94 08:49:37 GMT" or "Sun Nov  6 08:49:37 1994") as Unix
 * time, or (time_t)-1 when `s` is none of them or names a date or time that
 * does not exist. A two-digit year is the one within 50 years of `now`'s
 * (RFC 9110: a year more than 50 years in the future is in the past). */
time_t conditional_parse_date(const char *s, time_t now);

/* Does If-None-Match value `list` match `etag` (an entity-tag with its
 * quotes, as sent in ETag)? 1 for "*" or a listed tag equal to it by the
 * weak comparison; 0 when none is, or when `list` is not a valid field
 * value. */
int conditional_etag_matches(const char *list, const char *etag);

/* The decision (RFC 9110 13.2.2) for a resource whose validators are `etag`
 * (NULL or "": none) and `last_modified` ((time_t)-1: unknown), given the
 * request's If-None-Match and If-Modified-Since values (NULL when absent)
 * and the server's clock `now`. 1: answer 304. */
int conditional_not_modified(const char *etag, time_t last_modified, const char *if_none_match,
                             const char *if_modified_since, time_t now);

/* As conditional_not_modified() for a resource sent in two content codings
 * (encoding.h), each with its own ETag: a copy the client holds of either
 * (`etag` or `other`; NULL or "": none) is still good. The 304 then carries
 * the ETag of the coding this request selects. */
int conditional_not_modified_either(const char *etag, const char *other, time_t last_modified,
                                    const char *if_none_match, const char *if_modified_since, time_t now);

#endif /* DV_CONDITIONAL_H */

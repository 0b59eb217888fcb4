/* strbuf.h -- a growing string for the writers of api/ (the text, Markdown,
 * CSV and SVG forms of a report).
 *
 * An allocation failure sticks: every later append does nothing and
 * strbuf_take() returns NULL, so a writer appends without checking each call
 * and never hands out half a document.
 */
#ifndef DV_STRBUF_H
#define DV_STRBUF_H

#include <stddef.h>

struct strbuf {
    char *s;
    size_t len, cap;
    int oom;
};

#define STRBUF_INIT                                                                                                    \
    { NULL, 0, 0, 0 }

/* Appends printf-formatted text. */
void strbuf_printf(struct strbuf *b, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Appends `n` bytes of `s`. */
void strbuf_append(struct strbuf *b, const char *s, size_t n);

/* The text (malloc()ed, NUL-terminated; "" when nothing was appended), or
 * NULL when an allocation failed; either way `b` is empty afterwards and
 * owns nothing. */
char *strbuf_take(struct strbuf *b);

#endif /* DV_STRBUF_H */

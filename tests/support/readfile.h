/* readfile.h -- a whole file into memory, for the tests that read what a
 * server or the build wrote (a log, compile_commands.json). */
#ifndef DV_TEST_READFILE_H
#define DV_TEST_READFILE_H

#include <stdio.h>
#include <stdlib.h>

/* The contents of `path`, NUL-terminated and malloc()ed, with their length
 * in `*len` (may be NULL). NULL when the file cannot be opened or memory
 * runs out. */
static inline char *readfile(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, r;
    char *buf = malloc(cap);
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

#endif /* DV_TEST_READFILE_H */

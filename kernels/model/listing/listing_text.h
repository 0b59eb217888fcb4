/* listing_text.h -- the disassembly's text of the functions one process
 * profiles, each read once.
 *
 * A process that profiles a class's rows profiles dozens of rows of one or
 * two kernels. Each row's instructions get their text from the cubin's
 * disassembly (listing_read_sass()), and reading a function out of a
 * cubin's text costs time that grows with the whole cubin's, not the
 * function's: done per row, it was most of a class's instruction profile.
 * A struct listing_texts keeps, per cubin and function, what one read gave
 * (the instructions' text, or why there is none), so the disassembler's
 * caller is asked once per cubin and function, and a cubin it failed on
 * once: a tool that fails, or runs into its deadline, costs the process one
 * run, not one per row.
 *
 * Host-only C11.
 */
#ifndef DV_LISTING_TEXT_H
#define DV_LISTING_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/base/status.h"
#include "kernels/model/listing/listing.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The disassembly of a cubin (`size` bytes, 64-bit CRC `crc`): its text,
 * malloc()ed, *len bytes, whose first line is "# <the tool's label>", or
 * NULL with `why` (ERR_LEN). */
typedef char *(*listing_text_fn)(void *ctx, uint64_t crc, const void *cubin, size_t size, size_t *len, char *why);

/* What one function of one cubin read as. */
struct listing_text {
    uint64_t crc;
    char function[LISTING_FUNCTION_LEN];
    int ok;                           /* insns and tool hold the text       */
    int tool_failed;                  /* the disassembler gave no text      */
    struct listing_insns insns;       /* pc, text and branch targets        */
    char tool[LISTING_TOOL_LEN];      /* the tool's label, the text's first line */
    char why[ERR_LEN];                /* why there is no text (!ok)         */
};

struct listing_texts {
    struct listing_text *v;
    size_t n, cap;
    unsigned tool_calls, reads; /* calls of the disassembler, functions read */
};

void listing_texts_init(struct listing_texts *m);
void listing_texts_cleanup(struct listing_texts *m);

/* The text of `function` in the cubin `crc`: from `m` when it was read
 * before (a cubin the tool failed on is not given to it again), else from
 * `fn` (NULL: "no disassembler was given") and listing_read_sass(), then
 * kept. Returns the entry, owned by `m` and valid until the next call or
 * the cleanup; its `ok` says whether there is text, `why` why not. NULL
 * only when `m` cannot grow (out of memory), with `why`. */
const struct listing_text *listing_texts_get(struct listing_texts *m, listing_text_fn fn, void *ctx, uint64_t crc,
                                             const void *cubin, size_t size, const char *function, char *why);

#ifdef __cplusplus
}
#endif

#endif /* DV_LISTING_TEXT_H */

/* blob.h -- what an evidence read answers: bytes that never change while a
 * reference is held (a record, a transcript, a drawing, an index, a history
 * page), with the validator inputs of its HTTP answer; or, when there are
 * none, why (blob_error()).
 *
 * A blob is immutable once made and shared by reference count: the views in
 * memory hold one reference, each reader that got it from them another,
 * and the last blob_release() frees it, on whichever thread that is. So a
 * view can be replaced while its old blobs are still being sent.
 */
#ifndef DV_BLOB_H
#define DV_BLOB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "server/evidence/types.h"

struct blob {
    const char *data; /* `len` bytes, NUL-terminated */
    size_t len;
    /* When the newest night in it was measured (its document's
     * finished_utc; the file's mtime where a record says none), -1 unknown:
     * the Last-Modified, not when the store was copied. */
    time_t mtime;
    uint64_t digest; /* FNV-1a 64 of the bytes (an ETag's input) */
    enum evidence_kind kind;
    enum evidence_fresh fresh;
    atomic_int refs; /* private: blob_ref(), blob_release() */
};

/* A blob of `data` (malloc()ed, NUL-terminated; taken over even on failure,
 * then freed), one reference held. NULL `data` or no memory: NULL. */
struct blob *blob_new(char *data, size_t len, time_t mtime, enum evidence_kind kind, enum evidence_fresh fresh);

/* As blob_new() with the digest given: one that identifies the bytes as
 * their FNV-1a would (a history page's, made of its nights' digests). */
struct blob *blob_new_digest(char *data, size_t len, uint64_t digest, time_t mtime, enum evidence_kind kind,
                             enum evidence_fresh fresh);

/* Adds a reference to `b` (NULL ok) and returns it. */
struct blob *blob_ref(struct blob *b);

/* Drops a reference to `b` (NULL ok); the last frees it. */
void blob_release(struct blob *b);

/* Fills `e` (NULL ok) with `code` and the reason. */
void blob_error(struct evidence_error *e, enum evidence_code code, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif /* DV_BLOB_H */

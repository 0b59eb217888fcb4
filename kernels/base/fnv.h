/* fnv.h -- 64-bit FNV-1a: a digest for names, keys and file bytes (not a
 * checksum against tampering). Start from FNV1A_64_OFFSET and feed bytes;
 * feeding in pieces gives the digest of the pieces one after the other. */
#ifndef DV_FNV_H
#define DV_FNV_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_64_OFFSET 0xcbf29ce484222325ull

static inline uint64_t fnv1a_64(uint64_t h, const void *data, size_t len) {
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

#endif /* DV_FNV_H */

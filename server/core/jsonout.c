/* jsonout.c -- see jsonout.h. One walk over the tree decides the precision
 * for the whole text: mixing precisions inside one dump is not something
 * jansson offers, and 15 digits everywhere is only safe when it is exact. */
#include "server/core/jsonout.h"

#include <stdio.h>
#include <stdlib.h>

#include "kernels/base/realfmt.h"

static int all_exact15(const json_t *v) {
    const char *key;
    json_t *x;
    size_t i;
    switch (json_typeof(v)) {
    case JSON_REAL:
        return realfmt_exact15(json_real_value(v));
    case JSON_OBJECT:
        json_object_foreach((json_t *)v, key, x)
            if (!all_exact15(x)) return 0;
        return 1;
    case JSON_ARRAY:
        json_array_foreach(v, i, x)
            if (!all_exact15(x)) return 0;
        return 1;
    default:
        return 1;
    }
}

char *jsonout_dumps(const json_t *v, size_t flags) {
    if (!v) return NULL;
    flags |= JSON_REAL_PRECISION(all_exact15(v) ? 15 : 17);
    /* Not json_dumps(): it grows its buffer as it writes, and jansson 2.14
     * ignores a failed append of an object's key (dump.c drops
     * dump_string()'s result), so under memory pressure it can return a
     * document with a key missing. json_dumpb() into a buffer sized by a
     * first pass appends nothing that can fail. */
    size_t n = json_dumpb(v, NULL, 0, flags);
    if (n == 0) return NULL;
    char *s = malloc(n + 1);
    if (!s) return NULL;
    if (json_dumpb(v, s, n, flags) != n) {
        free(s);
        return NULL;
    }
    s[n] = '\0';
    return s;
}

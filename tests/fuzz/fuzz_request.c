/* fuzz_request.c -- libFuzzer harness for the request parser (api/request.c):
 * any bytes as a POST /measure or /analyze body. A body that is accepted is
 * dumped back and must parse again to the same canonical request; a body that
 * is rejected must carry a 4xx status and a reason. Nothing may crash, leak or
 * trip ASan/UBSan. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/options.h"
#include "api/request.h"

#define KEY_LEN 12288

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dv_options o, o2;
    struct request_error e;
    memset(&e, 0, sizeof e);
    if (request_parse((const char *)data, size, &o, &e) < 0) {
        if (e.status < 400 || e.status > 599 || !e.reason[0]) abort();
        return 0;
    }
    char *dump = request_dump(&o);
    if (!dump) return 0; /* out of memory is not a finding */
    memset(&e, 0, sizeof e);
    if (request_parse(dump, strlen(dump), &o2, &e) < 0) abort(); /* our own output must parse */
    static char k1[KEY_LEN], k2[KEY_LEN];
    if (options_canonical(&o, k1, sizeof k1) == 0 && options_canonical(&o2, k2, sizeof k2) == 0 && strcmp(k1, k2) != 0)
        abort();
    (void)options_cost(&o);
    free(dump);
    return 0;
}

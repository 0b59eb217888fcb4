/* cupti_lib.h -- finding and loading libcupti at run time, for the counter
 * pass (counters.c) and the instruction profile (instr.c), so that a binary
 * built with CUPTI's headers still starts where the library is absent.
 *
 * Looked for, in order: $DV_CUPTI_LIBRARY (an exact path: one that does not
 * exist measures without CUPTI), lib/ and ../lib beside the binary (the
 * bundle keeps the worker in libexec/ and CUPTI in lib/), the toolkit's
 * folder recorded at build time, then the loader's search; in a folder,
 * libcupti.so.13 before libcupti.so, with libnvperf_host / libnvperf_target
 * from the same folder loaded first (CUPTI opens them by name).
 *
 * Each caller keeps the handle for its process's life (dlclose would leave
 * CUPTI's callbacks pointing at unmapped code).
 */
#ifndef DV_CUPTI_LIB_H
#define DV_CUPTI_LIB_H

#include <stddef.h>

/* The dlopen handle of libcupti, its path in `library` (`len` bytes); NULL
 * with `reason` ("CUPTI: ...: why", with what to do) when it is not found. */
void *cupti_lib_open(char *library, size_t len, char *reason);

#endif /* DV_CUPTI_LIB_H */

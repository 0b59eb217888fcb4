/* cupti_lib.h -- libcupti for the process: found and loaded at run time,
 * its entry points resolved, and every CUPTI call checked, for the counter
 * pass (counters.c) and the instruction profile (instr.c) alike, so that a
 * binary built with CUPTI's headers still starts where the library is
 * absent, and a failed call reads the same whichever unit made it.
 *
 * Looked for, in order: $DV_CUPTI_LIBRARY (an exact path: one that does not
 * exist measures without CUPTI), lib/ and ../lib beside the binary (the
 * bundle keeps the worker in libexec/ and CUPTI in lib/), the toolkit's
 * folder recorded at build time, then the loader's search; in a folder,
 * libcupti.so.13 before libcupti.so, with libnvperf_host / libnvperf_target
 * from the same folder loaded first (CUPTI opens them by name). The first
 * library found is the process's for its life (dlclose would leave CUPTI's
 * callbacks pointing at unmapped code): later calls hand out the same one.
 * A search that found nothing is made again by the next call. Thread-safe.
 */
#ifndef DV_CUPTI_LIB_H
#define DV_CUPTI_LIB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The process's libcupti (loaded by the first call that finds it), its path
 * in `library` (`len` bytes); NULL with `reason` ("CUPTI: ...: why", with
 * what to do) when it is not found. */
void *cupti_lib_open(char *library, size_t len, char *reason);

/* Entry point `name` of the process's libcupti (cupti_lib_open() succeeded
 * first), or NULL with `reason`: "CUPTI: <library> has no <name> (<needs>)",
 * `needs` saying which CUPTI has it ("CUDA 12.6 or newer"). */
void *cupti_lib_sym(const char *name, const char *needs, char *reason);

/* The check of one CUPTI call: 0 when `result` is CUPTI_SUCCESS, else -1
 * with `reason` (may be NULL) "<call> at <file>:<line>: <CUPTI's text>
 * (<result>)" and the advice of cupti_lib_explain(). Use CUPTI_LIB_CALL(),
 * which names the call from the call itself, and where it is. */
int cupti_lib_check(int result, const char *call, const char *file, int line, char *reason);
#define CUPTI_LIB_CALL(call, reason) cupti_lib_check((int)(call), #call, __FILE__, __LINE__, (reason))

/* The CUPTI results cupti_lib_explain() advises on (cupti_result.h values,
 * checked there with static asserts; kept here so the advice exists in a
 * build without CUPTI's headers). */
enum cupti_lib_error {
    CUPTI_LIB_ERR_NOT_COMPATIBLE = 14,
    CUPTI_LIB_ERR_NOT_SUPPORTED = 27,
    CUPTI_LIB_ERR_INSUFFICIENT_PRIVILEGES = 35,
    CUPTI_LIB_ERR_OLD_PROFILER = 36,
    CUPTI_LIB_ERR_LEGACY_PROFILER = 38,
    CUPTI_LIB_ERR_MULTIPLE_SUBSCRIBERS = 39,
    CUPTI_LIB_ERR_VIRTUALIZED_PRIVILEGES = 40,
};

/* The reason for a failed CUPTI call `what` that returned `result` (CUPTI's
 * text for it in `text`, NULL when unknown) into `reason` (may be NULL):
 * "what: text (n)" and, for the results that have one, what to do
 * (insufficient privileges: the driver's admin-only profiling setting and
 * how to lift it; another profiler holding the counters; a GPU or driver
 * without the range profiler). */
void cupti_lib_explain(int result, const char *text, const char *what, char *reason);

#ifdef __cplusplus
}
#endif

#endif /* DV_CUPTI_LIB_H */

/* cupti_standin.c -- a stand-in for libcupti in the counter pass's fault
 * tests: a shared library exporting every CUPTI entry point
 * kernels/gpu/counters.c resolves, loaded through DV_CUPTI_LIBRARY.
 *
 * It stands in for CUPTI's error paths only. Every call succeeds and fills
 * what its caller reads next (sizes, objects, "all passes submitted" after
 * the second Stop, as many ranges as the session was configured for),
 * except the one chosen by the environment:
 *   CUPTI_STANDIN_FAIL=<entry point>   the call that fails, e.g.
 *                                      cuptiRangeProfilerPushRange
 *   CUPTI_STANDIN_AFTER=N              let N calls of it succeed first (0)
 *   CUPTI_STANDIN_RESULT=N             the CUptiResult it returns (999,
 *                                      CUPTI_ERROR_UNKNOWN)
 *   CUPTI_STANDIN_RANGES=N             the ranges DecodeData says it recorded
 *   CUPTI_STANDIN_PASSES=N             the passes before "all submitted" (2)
 *   CUPTI_STANDIN_VALUE=X              the value every metric evaluates to
 *                                      (NaN when unset)
 *   CUPTI_STANDIN_METRICS=name=X;...   per metric (its full name) the value
 *                                      it evaluates to, before VALUE
 *   CUPTI_STANDIN_START_MS=N           how long each Start takes
 * Unless told otherwise the metric values it evaluates are NaN: a pass
 * through the stand-in yields no counters, and one told a value yields that
 * number for every metric, which no GPU would: no test can mistake it for a
 * GPU's testimony (a value is for a fault that must follow a good table).
 * cupti_standin_calls(name) tells a test how often `name` was called
 * (cuptiProfilerInitialize twice: the profiler was rebuilt),
 * cupti_standin_config() the range and replay modes last configured,
 * cupti_standin_metrics() the metric names last added to a config,
 * cupti_standin_metric_sets() every host object's names ("a,b;c"), in the
 * order the objects were made.
 *
 * Each host object is its own (up to STANDIN_MAX_HOSTS), and it keeps the
 * metric names added to it: evaluating a name its object was not
 * configured with is CUPTI_ERROR_INVALID_PARAMETER, as CUPTI refuses it,
 * so a profiler that evaluates one set's counters against another set's
 * object fails here too (the arithmetic-intensity DRAM set is a host
 * object of its own beside the main set's).
 *
 * The range profiler object lays out every counter data image it
 * initialises by the metric names of its first GetCounterDataSize after
 * Enable (CounterDataImageInitialize takes no names), as CUPTI did on the
 * H200 (CUDA 13.0): a metric the image's layout lacks evaluates to NaN (a
 * range with no value), as CUPTI's -nan, whatever its configured value.
 * cupti_standin_layout() gives that layout's names.
 *
 * It includes CUPTI's own headers, so its signatures and parameter structs
 * are the ones counters.c is compiled against.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#define STANDIN_MAX_NAMES 32

static struct {
    const char *name;
    unsigned long calls;
} counts[STANDIN_MAX_NAMES];

static unsigned long env_number(const char *name, unsigned long fallback) {
    const char *v = getenv(name);
    return v && v[0] ? strtoul(v, NULL, 10) : fallback;
}

/* Counts a call of `name`; its result: the chosen failure or success. */
static CUptiResult standin_call(const char *name) {
    unsigned long n = 0;
    for (unsigned i = 0; i < STANDIN_MAX_NAMES; i++) {
        if (!counts[i].name) counts[i].name = name;
        if (strcmp(counts[i].name, name) == 0) {
            n = ++counts[i].calls;
            break;
        }
    }
    const char *fail = getenv("CUPTI_STANDIN_FAIL");
    if (fail && strcmp(fail, name) == 0 && n > env_number("CUPTI_STANDIN_AFTER", 0))
        return (CUptiResult)env_number("CUPTI_STANDIN_RESULT", CUPTI_ERROR_UNKNOWN);
    return CUPTI_SUCCESS;
}

/* How often `name` was called in this process. */
__attribute__((visibility("default"))) unsigned long cupti_standin_calls(const char *name) {
    for (unsigned i = 0; i < STANDIN_MAX_NAMES && counts[i].name; i++)
        if (strcmp(counts[i].name, name) == 0) return counts[i].calls;
    return 0;
}

#define STANDIN_MAX_HOSTS 4
static char host_objects[STANDIN_MAX_HOSTS], range_object;
static char host_metrics[STANDIN_MAX_HOSTS][1024]; /* each host object's names, comma-separated */
static unsigned hosts_made;
static char added_metrics[1024]; /* the names of the last ConfigAddMetrics, comma-separated */
static size_t configured_ranges, stops;
static int configured_range_mode = -1, configured_replay = -1;

/* The range and replay modes of the latest SetConfig (-1 before any). */
__attribute__((visibility("default"))) void cupti_standin_config(int *range, int *replay) {
    *range = configured_range_mode;
    *replay = configured_replay;
}

/* The metric names the last cuptiProfilerHostConfigAddMetrics added. */
__attribute__((visibility("default"))) const char *cupti_standin_metrics(void) { return added_metrics; }

/* Every host object's metric names, ';' between objects, in the order made. */
__attribute__((visibility("default"))) const char *cupti_standin_metric_sets(void) {
    static char all[STANDIN_MAX_HOSTS * 1024 + STANDIN_MAX_HOSTS];
    size_t used = 0;
    all[0] = '\0';
    for (unsigned h = 0; h < hosts_made && h < STANDIN_MAX_HOSTS && used < sizeof all; h++) {
        int n = snprintf(all + used, sizeof all - used, "%s%s", h ? ";" : "", host_metrics[h]);
        if (n > 0) used += (size_t)n;
    }
    return all;
}

/* The index of host object `p`, or -1. */
static int host_index(const void *p) {
    for (unsigned h = 0; h < STANDIN_MAX_HOSTS; h++)
        if (p == &host_objects[h]) return (int)h;
    return -1;
}

/* Whether `name` is one of host object `h`'s metrics. */
static int host_has(int h, const char *name) {
    const size_t n = strlen(name);
    for (const char *p = h >= 0 ? host_metrics[h] : ""; p && *p;) {
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0')) return 1;
        p = strchr(p, ',');
        if (p) p++;
    }
    return 0;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str) {
    switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
    default: *str = "CUPTI_ERROR_UNKNOWN"; break;
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p) {
    (void)p;
    return standin_call(__func__);
}

CUptiResult cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params *p) {
    (void)p;
    return standin_call(__func__);
}

CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p) {
    p->pChipName = "GH100";
    return standin_call(__func__);
}

CUptiResult cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params *p) {
    if (!p->pCounterAvailabilityImage) p->counterAvailabilityImageSize = 64;
    else memset(p->pCounterAvailabilityImage, 0, p->counterAvailabilityImageSize);
    return standin_call(__func__);
}

CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p) {
    const unsigned h = hosts_made++ % STANDIN_MAX_HOSTS;
    host_metrics[h][0] = '\0';
    p->pHostObject = (CUpti_Profiler_Host_Object *)&host_objects[h];
    return standin_call(__func__);
}

CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p) {
    (void)p;
    return standin_call(__func__);
}

CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p) {
    size_t used = 0;
    added_metrics[0] = '\0';
    for (size_t i = 0; i < p->numMetrics && used < sizeof added_metrics; i++) {
        int n = snprintf(added_metrics + used, sizeof added_metrics - used, "%s%s", i ? "," : "", p->ppMetricNames[i]);
        if (n > 0) used += (size_t)n;
    }
    const int h = host_index(p->pHostObject);
    if (h >= 0) snprintf(host_metrics[h], sizeof host_metrics[h], "%s", added_metrics);
    return standin_call(__func__);
}

CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p) {
    p->configImageSize = 128;
    return standin_call(__func__);
}

CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p) {
    memset(p->pConfigImage, 0, p->configImageSize);
    return standin_call(__func__);
}

/* The value CUPTI_STANDIN_METRICS gives metric `name` ("a=1;b=2"), into *out;
 * 0 when it names none. */
static int metric_value(const char *name, double *out) {
    const char *list = getenv("CUPTI_STANDIN_METRICS");
    const size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        if (strncmp(p, name, n) == 0 && p[n] == '=') {
            *out = strtod(p + n + 1, NULL);
            return 1;
        }
        p = strchr(p, ';');
        if (p) p++;
    }
    return 0;
}

/* The range object's counter data layout: the names of its first
 * GetCounterDataSize since Enable (laid_out), and each image initialised
 * since, with a copy of the layout it was given. */
#define STANDIN_MAX_IMAGES 8
static char layout[1024];
static int laid_out;
static struct {
    const void *image;
    char names[1024];
} images[STANDIN_MAX_IMAGES];
static unsigned images_made;

/* The names the range object lays its counter data images out by ("" before
 * any GetCounterDataSize since Enable). */
__attribute__((visibility("default"))) const char *cupti_standin_layout(void) { return layout; }

/* Whether the comma-separated `list` holds `name`. */
static int list_has(const char *list, const char *name) {
    const size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0')) return 1;
        p = strchr(p, ',');
        if (p) p++;
    }
    return 0;
}

/* The layout image `image` was initialised with, or "" (never initialised). */
static const char *image_layout(const void *image) {
    for (unsigned i = 0; i < STANDIN_MAX_IMAGES; i++)
        if (images[i].image && images[i].image == image) return images[i].names;
    return "";
}

CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p) {
    const char *v = getenv("CUPTI_STANDIN_VALUE");
    const int h = host_index(p->pHostObject);
    for (size_t i = 0; i < p->numMetrics; i++)
        if (!host_has(h, p->ppMetricNames[i])) {
            (void)standin_call(__func__);
            return CUPTI_ERROR_INVALID_PARAMETER;
        }
    const char *names = image_layout(p->pCounterDataImage);
    for (size_t i = 0; i < p->numMetrics; i++)
        if (!list_has(names, p->ppMetricNames[i])) p->pMetricValues[i] = NAN;
        else if (!metric_value(p->ppMetricNames[i], &p->pMetricValues[i]))
            p->pMetricValues[i] = v && v[0] ? strtod(v, NULL) : NAN;
    return standin_call(__func__);
}

CUptiResult cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *p) {
    p->pRangeProfilerObject = (CUpti_RangeProfiler_Object *)&range_object;
    layout[0] = '\0';
    laid_out = 0;
    return standin_call(__func__);
}

CUptiResult cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params *p) {
    (void)p;
    return standin_call(__func__);
}

CUptiResult cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params *p) {
    p->counterDataSize = 256;
    size_t used = 0;
    for (size_t i = 0; !laid_out && i < p->numMetrics && used < sizeof layout; i++) {
        int n = snprintf(layout + used, sizeof layout - used, "%s%s", i ? "," : "", p->pMetricNames[i]);
        if (n > 0) used += (size_t)n;
    }
    laid_out = 1;
    return standin_call(__func__);
}

CUptiResult cuptiRangeProfilerCounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params *p) {
    memset(p->pCounterData, 0, p->counterDataSize);
    unsigned i = 0;
    while (i < STANDIN_MAX_IMAGES && images[i].image && images[i].image != p->pCounterData) i++;
    if (i == STANDIN_MAX_IMAGES) i = images_made++ % STANDIN_MAX_IMAGES;
    images[i].image = p->pCounterData;
    snprintf(images[i].names, sizeof images[i].names, "%s", layout);
    return standin_call(__func__);
}

CUptiResult cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params *p) {
    configured_ranges = p->maxRangesPerPass;
    configured_range_mode = (int)p->range;
    configured_replay = (int)p->replayMode;
    stops = 0;
    return standin_call(__func__);
}

CUptiResult cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params *p) {
    (void)p;
    const unsigned long ms = env_number("CUPTI_STANDIN_START_MS", 0);
    const struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    if (ms) nanosleep(&ts, NULL);
    return standin_call(__func__);
}

CUptiResult cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params *p) {
    p->isAllPassSubmitted = ++stops >= env_number("CUPTI_STANDIN_PASSES", 2);
    p->passIndex = p->isAllPassSubmitted ? 0 : stops;
    return standin_call(__func__);
}

CUptiResult cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params *p) {
    (void)p;
    return standin_call(__func__);
}

CUptiResult cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params *p) {
    (void)p;
    return standin_call(__func__);
}

CUptiResult cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params *p) {
    p->numOfRangeDropped = 0;
    return standin_call(__func__);
}

CUptiResult cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params *p) {
    p->numTotalRanges = env_number("CUPTI_STANDIN_RANGES", configured_ranges);
    return standin_call(__func__);
}

/* counters.c -- CUPTI's range profiler, dlopen()ed, one per process
 * (counters.h).
 *
 * Built once (counters_prepare): cuptiProfilerInitialize; the chip name and
 * the counter availability image; a host object with the metrics and its
 * config image; cuptiRangeProfilerEnable on the context, left enabled
 * between tables and jobs (its first Start costs a few hundred milliseconds,
 * the later ones about one and a half); the counter data image for the most
 * ranges a table can have, laid out for every metric of both sets (the
 * object lays out each image by its first sizing: size_data()). Per table (counters_profile): the counter data
 * image re-initialised, SetConfig (user ranges, user replay), then each pass
 * (Start, per launch PushRange / launch / PopRange, the wait, Stop) until
 * CUPTI says every pass is submitted, DecodeData, and
 * cuptiProfilerHostEvaluateToGpuValues per range.
 *
 * Every metric is a sum over the blocks launched (so a part's value scales
 * by its weight); the two ratios the document reports are made of them
 * here, for every row alike.
 *
 * Every entry point is resolved from the process's libcupti (cupti_lib.h,
 * which also checks every call), so the binary has no link-time dependency
 * on CUPTI; a build without the headers
 * (DV_HAVE_CUPTI undefined) compiles the stubs at the bottom.
 */
#define _GNU_SOURCE
#include "kernels/gpu/counters.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/cupti_lib.h"
#include "kernels/model/model/testimony.h"

#ifdef DV_HAVE_CUPTI

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <unistd.h>

/* The sums the pass reads, by slot. */
enum { M_DIVERGENT, M_TARGETS, M_UNIFORM, M_FFMA, M_INST, M_THREAD_INST, COUNTERS_NMETRICS };

/* The two sets (counters.h): the branch and FFMA counts are software-patched
 * in both; the instruction counts are patched in one (one pass in all) and
 * the hardware's in the other (a pass of their own). */
static const char *const metric_names[2][COUNTERS_NMETRICS] = {
    [COUNTERS_SET_PATCHED] =
        {
            [M_DIVERGENT] = "smsp__sass_branch_targets_threads_divergent.sum",
            [M_TARGETS] = "smsp__sass_branch_targets.sum",
            [M_UNIFORM] = "smsp__sass_branch_targets_threads_uniform.sum",
            [M_FFMA] = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
            [M_INST] = "smsp__sass_inst_executed.sum",
            [M_THREAD_INST] = "smsp__sass_thread_inst_executed.sum",
        },
    [COUNTERS_SET_HARDWARE] =
        {
            [M_DIVERGENT] = "smsp__sass_branch_targets_threads_divergent.sum",
            [M_TARGETS] = "smsp__sass_branch_targets.sum",
            [M_UNIFORM] = "smsp__sass_branch_targets_threads_uniform.sum",
            [M_FFMA] = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
            [M_INST] = "smsp__inst_executed.sum",
            [M_THREAD_INST] = "smsp__thread_inst_executed.sum",
        },
};

/* The DRAM set (counters_dram()): a hardware counter only, in a session of
 * its own, so the kernels it counts run unpatched, as Nsight Compute runs
 * them. */
static const char *const dram_names[] = {"dram__bytes_read.sum"};
#define DRAM_NMETRICS 1

/* Every metric either set collects on the profiler object, for its one
 * counter data layout (size_data()). */
#define LAYOUT_NMETRICS (COUNTERS_NMETRICS + DRAM_NMETRICS)

#define COUNTERS_MAX_RANGES (TESTIMONY_GRID_PARTS * DV_MAX_ROWS)
#define COUNTERS_SESSION_RANGES 4 /* ranges per profiling session (counters_profile) */
#define COUNTERS_MAX_PASSES 8 /* the sets take one and two; more says CUPTI misbehaves */

#define CUPTI_FNS(X)                                                                                                   \
    X(cuptiGetResultString)                                                                                            \
    X(cuptiProfilerInitialize)                                                                                         \
    X(cuptiProfilerDeInitialize)                                                                                       \
    X(cuptiDeviceGetChipName)                                                                                          \
    X(cuptiProfilerGetCounterAvailability)                                                                             \
    X(cuptiProfilerHostInitialize)                                                                                     \
    X(cuptiProfilerHostDeinitialize)                                                                                   \
    X(cuptiProfilerHostConfigAddMetrics)                                                                               \
    X(cuptiProfilerHostGetConfigImageSize)                                                                             \
    X(cuptiProfilerHostGetConfigImage)                                                                                 \
    X(cuptiProfilerHostEvaluateToGpuValues)                                                                            \
    X(cuptiRangeProfilerEnable)                                                                                        \
    X(cuptiRangeProfilerDisable)                                                                                       \
    X(cuptiRangeProfilerGetCounterDataSize)                                                                            \
    X(cuptiRangeProfilerCounterDataImageInitialize)                                                                    \
    X(cuptiRangeProfilerSetConfig)                                                                                     \
    X(cuptiRangeProfilerStart)                                                                                         \
    X(cuptiRangeProfilerStop)                                                                                          \
    X(cuptiRangeProfilerPushRange)                                                                                     \
    X(cuptiRangeProfilerPopRange)                                                                                      \
    X(cuptiRangeProfilerDecodeData)                                                                                    \
    X(cuptiRangeProfilerGetCounterDataInfo)

/* The library's path (the process's, cupti_lib.h) and its entry points. */
static struct {
    char library[256];
#define DECLARE(fn) __typeof__(&fn) fn;
    CUPTI_FNS(DECLARE)
#undef DECLARE
} api;

/* A metric set's host object, config image and counter data image. */
struct mset {
    const char *const *names;
    unsigned n;
    CUpti_Profiler_Host_Object *host;
    uint8_t *config, *data;
    size_t config_size, data_size;
};

struct counters {
    enum counters_set set;
    int full_grid;
    const char *const *names; /* metric_names[set] */
    struct mset dram;         /* built at the first counters_dram()        */
    const char *chip;         /* CUPTI's chip name, for the DRAM set       */
    unsigned passes;          /* the last session's */
    unsigned launches;        /* and its launches and blocks, every pass */
    unsigned long long blocks;
    int initialized; /* cuptiProfilerInitialize succeeded, not yet undone */
    int ready;       /* everything below is built for (device, ctx)       */
    int broken;      /* a pass failed: rebuild before the next use        */
    int lost;        /* a sticky CUDA error: no CUPTI call again          */
    int cold;        /* enabled, not started since: the next Start is slow */
    double start_ms; /* that Start's host time, until taken               */
    int device;
    void *ctx;
    uint8_t *avail, *config, *data;
    size_t config_size, data_size;
    CUpti_Profiler_Host_Object *host;
    CUpti_RangeProfiler_Object *obj;
};

/* One launch of the pass: part `part` of row `row`. */
struct range {
    unsigned row, part;
    struct counters_span span;
    double weight;
};

/* A CUPTI call's check (cupti_lib.h) as the pass's result: 0, or
 * COUNTERS_REFUSED with `reason` naming the call as written and where. */
#define CUPTI_CALL(call, reason) (CUPTI_LIB_CALL(call, reason) != 0 ? COUNTERS_REFUSED : 0)

/* ---- the library ------------------------------------------------------- */

static int load_api(char *reason) {
    if (api.cuptiRangeProfilerGetCounterDataInfo) return 0;
    if (!cupti_lib_open(api.library, sizeof api.library, reason)) return -1;
#define RESOLVE(fn)                                                                                                    \
    if (!(api.fn = (__typeof__(&fn))cupti_lib_sym(#fn, "CUDA 12.6 or newer is needed", reason))) return -1;
    CUPTI_FNS(RESOLVE)
#undef RESOLVE
    return 0;
}

/* ---- build and tear down ---------------------------------------------- */

/* The pass the environment asks for (counters.h). */
static int read_env(struct counters *c, char *reason) {
    const char *m = getenv("DV_COUNTERS_SET"), *g = getenv("DV_COUNTERS_GRID");
    if (!m || !m[0] || strcmp(m, "patched") == 0) c->set = COUNTERS_SET_PATCHED;
    else if (strcmp(m, "hardware") == 0) c->set = COUNTERS_SET_HARDWARE;
    else {
        dv_seterr(reason, "counters: DV_COUNTERS_SET=%.64s is not patched or hardware", m);
        return -1;
    }
    if (!g || !g[0] || strcmp(g, "reduced") == 0) c->full_grid = 0;
    else if (strcmp(g, "full") == 0) c->full_grid = 1;
    else {
        dv_seterr(reason, "counters: DV_COUNTERS_GRID=%.64s is not reduced or full", g);
        return -1;
    }
    c->names = metric_names[c->set];
    return 0;
}

/* A zeroed buffer of `n` bytes (at least one), or NULL with `reason`. */
static uint8_t *buffer(size_t n, const char *what, char *reason) {
    uint8_t *p = calloc(1, n ? n : 1);
    if (!p) dv_seterr(reason, "counters: out of memory for the %s (%zu bytes)", what, n);
    return p;
}

/* The availability image of `ctx`, the host object with the metric set and
 * its config image. */
static int build_images(struct counters *c, int device, char *reason) {
    CUpti_Device_GetChipName_Params cn = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    cn.deviceIndex = (size_t)device;
    if (CUPTI_CALL(api.cuptiDeviceGetChipName(&cn), reason)) return -1;
    c->chip = cn.pChipName;
    CUpti_Profiler_GetCounterAvailability_Params ca = {.structSize =
                                                           CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    ca.ctx = (CUcontext)c->ctx;
    if (CUPTI_CALL(api.cuptiProfilerGetCounterAvailability(&ca), reason)) return -1;
    if (!(c->avail = buffer(ca.counterAvailabilityImageSize, "counter availability image", reason))) return -1;
    ca.pCounterAvailabilityImage = c->avail;
    if (CUPTI_CALL(api.cuptiProfilerGetCounterAvailability(&ca), reason)) return -1;

    CUpti_Profiler_Host_Initialize_Params hi = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = cn.pChipName;
    hi.pCounterAvailabilityImage = c->avail;
    if (CUPTI_CALL(api.cuptiProfilerHostInitialize(&hi), reason)) return -1;
    c->host = hi.pHostObject;
    CUpti_Profiler_Host_ConfigAddMetrics_Params am = {.structSize =
                                                          CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    am.pHostObject = c->host;
    am.ppMetricNames = (const char **)c->names;
    am.numMetrics = COUNTERS_NMETRICS;
    if (CUPTI_CALL(api.cuptiProfilerHostConfigAddMetrics(&am), reason)) return -1;
    CUpti_Profiler_Host_GetConfigImageSize_Params cs = {.structSize =
                                                            CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    cs.pHostObject = c->host;
    if (CUPTI_CALL(api.cuptiProfilerHostGetConfigImageSize(&cs), reason)) return -1;
    c->config_size = cs.configImageSize;
    if (!(c->config = buffer(c->config_size, "config image", reason))) return -1;
    CUpti_Profiler_Host_GetConfigImage_Params ci = {.structSize =
                                                        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    ci.pHostObject = c->host;
    ci.configImageSize = c->config_size;
    ci.pConfigImage = c->config;
    return CUPTI_CALL(api.cuptiProfilerHostGetConfigImage(&ci), reason) ? -1 : 0;
}

/* Enables the range profiler on the context. */
static int enable(struct counters *c, char *reason) {
    CUpti_RangeProfiler_Enable_Params en = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    en.ctx = (CUcontext)c->ctx;
    if (CUPTI_CALL(api.cuptiRangeProfilerEnable(&en), reason)) return -1;
    c->obj = en.pRangeProfilerObject;
    return 0;
}

/* The counter data image for `ranges` ranges of the enabled profiler, one
 * for both sets. The object lays out every image it initialises by the
 * metrics of its first GetCounterDataSize (CounterDataImageInitialize takes
 * no names): on the H200 (CUDA 13.0) an image sized for the DRAM set after
 * the main set's decoded its ranges with no dram__bytes_read.sum in them
 * (-nan). So the one sizing names every metric of both sets, and the DRAM
 * set's sessions use this image too. */
static int size_data(struct counters *c, size_t ranges, char *reason) {
    const char *names[LAYOUT_NMETRICS];
    for (unsigned i = 0; i < COUNTERS_NMETRICS; i++) names[i] = c->names[i];
    for (unsigned i = 0; i < DRAM_NMETRICS; i++) names[COUNTERS_NMETRICS + i] = dram_names[i];
    CUpti_RangeProfiler_GetCounterDataSize_Params ds = {.structSize =
                                                            CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    ds.pRangeProfilerObject = c->obj;
    ds.pMetricNames = names;
    ds.numMetrics = LAYOUT_NMETRICS;
    ds.maxNumOfRanges = ranges;
    ds.maxNumRangeTreeNodes = (uint32_t)ranges;
    if (CUPTI_CALL(api.cuptiRangeProfilerGetCounterDataSize(&ds), reason)) return -1;
    free(c->data);
    c->data_size = ds.counterDataSize;
    return (c->data = buffer(c->data_size, "counter data image", reason)) ? 0 : -1;
}

/* The range profiler enabled on the context, and a counter data image for
 * COUNTERS_MAX_RANGES ranges. */
static int build_target(struct counters *c, char *reason) {
    if (enable(c, reason) != 0) return -1;
    c->cold = 1;
    return size_data(c, COUNTERS_MAX_RANGES, reason);
}

/* The range profiler disabled and enabled again, its image made anew: the
 * state a fresh profiler has. On the H200 (CUDA 13.0) a session of the DRAM
 * set on an object whose earlier sessions ran the main set decoded no
 * value (-nan) for dram__bytes_read.sum in any range, while the same set on
 * a freshly enabled object read Nsight Compute's bytes (within 0.1%); so the
 * DRAM pass runs between two of these. */
static int retarget(struct counters *c, char *reason) {
    CUpti_RangeProfiler_Disable_Params d = {.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    d.pRangeProfilerObject = c->obj;
    c->obj = NULL;
    if (CUPTI_CALL(api.cuptiRangeProfilerDisable(&d), reason)) return -1;
    return build_target(c, reason);
}

/* Undoes whatever build() did, in reverse; after a sticky error only the
 * host memory (CUPTI would touch the poisoned context). */
static void teardown(struct counters *c) {
    if (!c->lost && c->obj) {
        CUpti_RangeProfiler_Disable_Params d = {.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
        d.pRangeProfilerObject = c->obj;
        api.cuptiRangeProfilerDisable(&d);
    }
    if (!c->lost && c->host) {
        CUpti_Profiler_Host_Deinitialize_Params d = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        d.pHostObject = c->host;
        api.cuptiProfilerHostDeinitialize(&d);
    }
    if (!c->lost && c->dram.host) {
        CUpti_Profiler_Host_Deinitialize_Params d = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        d.pHostObject = c->dram.host;
        api.cuptiProfilerHostDeinitialize(&d);
    }
    free(c->dram.config);
    free(c->dram.data);
    memset(&c->dram, 0, sizeof c->dram);
    if (!c->lost && c->initialized) {
        CUpti_Profiler_DeInitialize_Params d = {.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
        api.cuptiProfilerDeInitialize(&d);
    }
    free(c->avail);
    free(c->config);
    free(c->data);
    c->avail = c->config = c->data = NULL;
    c->host = NULL;
    c->obj = NULL;
    c->initialized = c->ready = c->broken = 0;
}

struct counters *counters_create(void) {
    return calloc(1, sizeof(struct counters));
}

void counters_free(struct counters *c) {
    if (!c) return;
    teardown(c);
    free(c);
}

void counters_invalidate(struct counters *c) {
    if (c) c->broken = 1;
}

void counters_release(struct counters *c) {
    if (c && !c->lost) teardown(c);
}

int counters_lost(const struct counters *c) { return c && c->lost; }

enum counters_set counters_set_of(const struct counters *c) { return c->set; }

int counters_alongside(const struct counters *c) { return c && c->set == COUNTERS_SET_PATCHED; }

unsigned counters_passes(const struct counters *c) { return c ? c->passes : 0; }

void counters_launched(const struct counters *c, unsigned *launches, unsigned long long *blocks) {
    *launches = c ? c->launches : 0;
    *blocks = c ? c->blocks : 0;
}

double counters_take_start_ms(struct counters *c) {
    if (!c) return 0;
    const double ms = c->start_ms;
    c->start_ms = 0;
    return ms;
}

int counters_prepare(struct counters *c, int device, int cc_major, void *cu_ctx, char *library, char *reason) {
    library[0] = '\0';
    if (c->lost) {
        dv_seterr(reason, "CUPTI: a sticky CUDA error ended an earlier counter pass; the process must restart");
        return -1;
    }
    if (c->ready && !c->broken && c->device == device && c->ctx == cu_ctx) {
        snprintf(library, 256, "%s", api.library);
        return 0;
    }
    teardown(c);
    if (read_env(c, reason) != 0) return -1;
    if (cc_major < 7) {
        dv_seterr(reason, "CUPTI: compute capability %d.x is too old for the range profiler (Volta, 7.0, or newer)",
                  cc_major);
        return -1;
    }
    if (!cu_ctx) {
        dv_seterr(reason, "CUPTI: no current CUDA context");
        return -1;
    }
    if (load_api(reason) != 0) return -1;
    CUpti_Profiler_Initialize_Params ip = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    if (CUPTI_CALL(api.cuptiProfilerInitialize(&ip), reason)) return -1;
    c->initialized = 1;
    c->device = device;
    c->ctx = cu_ctx;
    if (build_images(c, device, reason) != 0 || build_target(c, reason) != 0) {
        teardown(c);
        return -1;
    }
    c->ready = 1;
    snprintf(library, 256, "%s", api.library);
    return 0;
}

/* ---- one session ------------------------------------------------------ */

/* The launches of rows 0..nrows-1: every part of each row's grid, or each
 * whole grid once when DV_COUNTERS_GRID=full. */
static int plan_ranges(const struct counters *c, unsigned nrows, const struct testimony_grid *grids,
                       struct range *ranges, unsigned *nranges, char *reason) {
    unsigned n = 0;
    if (nrows > DV_MAX_ROWS) {
        dv_seterr(reason, "counters: %u rows, at most %d", nrows, DV_MAX_ROWS);
        return COUNTERS_REFUSED;
    }
    for (unsigned r = 0; r < nrows; r++) {
        const struct testimony_grid *g = &grids[r];
        const unsigned parts = c->full_grid ? 1u : g->nparts;
        for (unsigned k = 0; k < parts && k < TESTIMONY_GRID_PARTS; k++) {
            const struct counters_span whole = {0, g->blocks, 0}, part = {g->first[k], g->part_blocks[k], g->standin};
            ranges[n++] = (struct range){r, k, c->full_grid ? whole : part, c->full_grid ? 1.0 : g->weight[k]};
        }
    }
    *nranges = n;
    return 0;
}

/* The main set as a struct mset (its images live in struct counters). */
static struct mset main_set(const struct counters *c) {
    return (struct mset){c->names, COUNTERS_NMETRICS, c->host, c->config, c->data, c->config_size, c->data_size};
}

/* Counter data image of set `m` initialised for a new session, and SetConfig. */
static int session_begin(struct counters *c, const struct mset *m, unsigned nranges, char *reason) {
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = {
        .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    di.pRangeProfilerObject = c->obj;
    di.counterDataSize = m->data_size;
    di.pCounterData = m->data;
    if (CUPTI_CALL(api.cuptiRangeProfilerCounterDataImageInitialize(&di), reason)) return COUNTERS_REFUSED;
    CUpti_RangeProfiler_SetConfig_Params sc = {.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    sc.pRangeProfilerObject = c->obj;
    sc.configSize = m->config_size;
    sc.pConfig = m->config;
    sc.counterDataImageSize = m->data_size;
    sc.pCounterDataImage = m->data;
    sc.range = CUPTI_UserRange;
    sc.replayMode = CUPTI_UserReplay;
    sc.maxRangesPerPass = nranges;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    return CUPTI_CALL(api.cuptiRangeProfilerSetConfig(&sc), reason);
}

/* The launches of one pass, each in its own range (after l->before, outside
 * it, where there is one). */
static int pass_launches(struct counters *c, const struct range *rg, unsigned n, const struct counters_launch *l,
                         char *reason) {
    for (unsigned i = 0; i < n; i++) {
        char name[32];
        if (l->before) {
            const int rc = l->before(l->ctx, rg[i].row, reason);
            if (rc != 0) return rc;
        }
        snprintf(name, sizeof name, "row %u part %u", rg[i].row, rg[i].part);
        CUpti_RangeProfiler_PushRange_Params pr = {.structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
        pr.pRangeProfilerObject = c->obj;
        pr.pRangeName = name;
        if (CUPTI_CALL(api.cuptiRangeProfilerPushRange(&pr), reason)) return COUNTERS_REFUSED;
        int rc = l->launch(l->ctx, rg[i].row, &rg[i].span, reason);
        if (rc != 0) return rc;
        CUpti_RangeProfiler_PopRange_Params pp = {.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
        pp.pRangeProfilerObject = c->obj;
        if (CUPTI_CALL(api.cuptiRangeProfilerPopRange(&pp), reason)) return COUNTERS_REFUSED;
    }
    return l->wait ? l->wait(l->ctx, reason) : DV_CUDA_CALL(cudaDeviceSynchronize(), reason);
}

/* One pass: Start, the launches, Stop; *all when CUPTI has every pass. A
 * pass that fails after Start still stops (its result unread: the first
 * failure is the one to report), except after a sticky CUDA error. */
static int pass_run(struct counters *c, const struct range *rg, unsigned n, const struct counters_launch *l, int *all,
                    char *reason) {
    CUpti_RangeProfiler_Start_Params st = {.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    st.pRangeProfilerObject = c->obj;
    const double t0 = timeutil_now_ms();
    if (CUPTI_CALL(api.cuptiRangeProfilerStart(&st), reason)) return COUNTERS_REFUSED;
    if (c->cold) c->start_ms += timeutil_now_ms() - t0;
    c->cold = 0;
    int rc = pass_launches(c, rg, n, l, reason);
    CUpti_RangeProfiler_Stop_Params sp = {.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    sp.pRangeProfilerObject = c->obj;
    if (rc == DV_ESTICKY) return rc;
    if (rc != 0) {
        char ignored[ERR_LEN];
        if ((l->wait ? l->wait(l->ctx, ignored) : DV_CUDA_CALL(cudaDeviceSynchronize(), ignored)) == DV_ESTICKY)
            return DV_ESTICKY;
        api.cuptiRangeProfilerStop(&sp);
        return rc;
    }
    if (CUPTI_CALL(api.cuptiRangeProfilerStop(&sp), reason)) return COUNTERS_REFUSED;
    *all = sp.isAllPassSubmitted != 0;
    return 0;
}

/* Decodes the session and evaluates every range of set `m` into
 * values[range * m->n + metric]; a sum CUPTI has no value for is a failure
 * (a pass it did not collect). */
static int collect_set(struct counters *c, const struct mset *m, unsigned n, double *values, char *reason) {
    CUpti_RangeProfiler_DecodeData_Params dd = {.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    dd.pRangeProfilerObject = c->obj;
    if (CUPTI_CALL(api.cuptiRangeProfilerDecodeData(&dd), reason)) return COUNTERS_REFUSED;
    CUpti_RangeProfiler_GetCounterDataInfo_Params gi = {.structSize =
                                                            CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    gi.pCounterDataImage = m->data;
    gi.counterDataImageSize = m->data_size;
    if (CUPTI_CALL(api.cuptiRangeProfilerGetCounterDataInfo(&gi), reason)) return COUNTERS_REFUSED;
    if (gi.numTotalRanges != n) {
        dv_seterr(reason, "CUPTI: %zu ranges recorded for %u launches (%zu dropped)", gi.numTotalRanges, n,
                  dd.numOfRangeDropped);
        return COUNTERS_REFUSED;
    }
    for (unsigned i = 0; i < n; i++) {
        CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
            .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
        ev.pHostObject = m->host;
        ev.pCounterDataImage = m->data;
        ev.counterDataImageSize = m->data_size;
        ev.rangeIndex = i;
        ev.ppMetricNames = (const char **)m->names;
        ev.numMetrics = m->n;
        ev.pMetricValues = values + (size_t)i * m->n;
        if (CUPTI_CALL(api.cuptiProfilerHostEvaluateToGpuValues(&ev), reason)) return COUNTERS_REFUSED;
        for (unsigned k = 0; k < m->n; k++) {
            const double v = values[(size_t)i * m->n + k];
            if (!(isfinite(v) && v >= 0)) {
                dv_seterr(reason, "CUPTI: no value for %s in range %u of %u (got %g)", m->names[k], i, n, v);
                return COUNTERS_REFUSED;
            }
        }
    }
    return 0;
}

static int collect(struct counters *c, unsigned n, double values[][COUNTERS_NMETRICS], char *reason) {
    const struct mset m = main_set(c);
    return collect_set(c, &m, n, &values[0][0], reason);
}

/* Each row's counters from its ranges: sums scaled by the parts' weights,
 * the ratios made of the scaled sums. */
static void combine(const struct range *rg, unsigned n, double values[][COUNTERS_NMETRICS], unsigned nrows,
                    struct dv_counters *out) {
    for (unsigned r = 0; r < nrows; r++) {
        double sum[COUNTERS_NMETRICS] = {0};
        for (unsigned i = 0; i < n; i++)
            if (rg[i].row == r)
                for (unsigned m = 0; m < COUNTERS_NMETRICS; m++) sum[m] += rg[i].weight * values[i][m];
        struct dv_counters *o = &out[r];
        memset(o, 0, sizeof *o);
        o->present = 1;
        o->branch_targets_divergent = sum[M_DIVERGENT];
        o->branch_targets = sum[M_TARGETS];
        o->ffma_threads = sum[M_FFMA];
        o->inst_executed = sum[M_INST];
        o->branch_uniform_pct = sum[M_TARGETS] > 0 ? 100.0 * sum[M_UNIFORM] / sum[M_TARGETS] : NAN;
        o->threads_per_inst = sum[M_INST] > 0 ? sum[M_THREAD_INST] / sum[M_INST] : NAN;
    }
}

int counters_profile(struct counters *c, unsigned nrows, const struct testimony_grid *grids,
                     const struct counters_launch *l, struct dv_counters *out, char *reason) {
    struct range ranges[COUNTERS_MAX_RANGES];
    double values[COUNTERS_MAX_RANGES][COUNTERS_NMETRICS];
    unsigned nranges = 0;
    int all = 0, rc;
    for (unsigned r = 0; r < nrows && r < DV_MAX_ROWS; r++) out[r].present = 0;
    if (!c || !c->ready || c->broken || c->lost) {
        dv_seterr(reason, "counters: the profiler is not prepared");
        return COUNTERS_REFUSED;
    }
    if ((rc = plan_ranges(c, nrows, grids, ranges, &nranges, reason)) != 0) return rc;
    c->passes = c->launches = 0;
    c->blocks = 0;
    /* A session of at most COUNTERS_SESSION_RANGES ranges at a time: on the
     * H200 (CUDA 13.0) a session of 11 user ranges decoded 4 of them and one
     * of 15 decoded 8, while the lesson's tables (2 to 4 rows) decode every
     * range; the batch and the experiments' tables pass in sessions of 4. */
    for (unsigned at = 0; rc == 0 && at < nranges; at += COUNTERS_SESSION_RANGES) {
        const unsigned n = nranges - at < COUNTERS_SESSION_RANGES ? nranges - at : COUNTERS_SESSION_RANGES;
        unsigned pass = 0;
        all = 0;
        const struct mset m = main_set(c);
        rc = session_begin(c, &m, n, reason);
        for (; rc == 0 && !all && pass < COUNTERS_MAX_PASSES; pass++) {
            rc = pass_run(c, ranges + at, n, l, &all, reason);
            c->launches += n;
            for (unsigned i = 0; i < n; i++) c->blocks += ranges[at + i].span.blocks;
        }
        if (pass > c->passes) c->passes = pass; /* the metric set's passes, the same in every session */
        if (rc == 0 && !all) {
            dv_seterr(reason, "CUPTI: %d passes did not collect the metric set", COUNTERS_MAX_PASSES);
            rc = COUNTERS_REFUSED;
        }
        if (rc == 0) rc = collect(c, n, values + at, reason);
    }
    if (rc == 0) combine(ranges, nranges, values, nrows, out);
    if (rc == DV_ESTICKY) c->lost = 1;
    if (rc != 0) c->broken = 1;
    return rc;
}

/* ---- the DRAM set ------------------------------------------------------ */

/* Set `m` of `names` built: a host object of its own and its config image
 * (its counter data image is the main set's, laid out for both: size_data()). */
static int build_set(struct counters *c, struct mset *m, const char *const *names, unsigned n, char *reason) {
    m->names = names;
    m->n = n;
    CUpti_Profiler_Host_Initialize_Params hi = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = c->chip;
    hi.pCounterAvailabilityImage = c->avail;
    if (CUPTI_CALL(api.cuptiProfilerHostInitialize(&hi), reason)) return -1;
    m->host = hi.pHostObject;
    CUpti_Profiler_Host_ConfigAddMetrics_Params am = {.structSize =
                                                          CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    am.pHostObject = m->host;
    am.ppMetricNames = (const char **)names;
    am.numMetrics = n;
    if (CUPTI_CALL(api.cuptiProfilerHostConfigAddMetrics(&am), reason)) return -1;
    CUpti_Profiler_Host_GetConfigImageSize_Params cs = {.structSize =
                                                            CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    cs.pHostObject = m->host;
    if (CUPTI_CALL(api.cuptiProfilerHostGetConfigImageSize(&cs), reason)) return -1;
    m->config_size = cs.configImageSize;
    if (!(m->config = buffer(m->config_size, "DRAM config image", reason))) return -1;
    CUpti_Profiler_Host_GetConfigImage_Params ci = {.structSize =
                                                        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    ci.pHostObject = m->host;
    ci.configImageSize = m->config_size;
    ci.pConfigImage = m->config;
    return CUPTI_CALL(api.cuptiProfilerHostGetConfigImage(&ci), reason) ? -1 : 0;
}

int counters_dram(struct counters *c, unsigned nrows, const unsigned *blocks, const struct counters_launch *l,
                  double *bytes, char *reason) {
    struct range ranges[DV_MAX_ROWS];
    double values[COUNTERS_SESSION_RANGES];
    int rc = 0;
    for (unsigned r = 0; r < nrows && r < DV_MAX_ROWS; r++) bytes[r] = NAN;
    if (!c || !c->ready || c->broken || c->lost) {
        dv_seterr(reason, "counters: the profiler is not prepared");
        return COUNTERS_REFUSED;
    }
    if (nrows > DV_MAX_ROWS) {
        dv_seterr(reason, "counters: %u rows, at most %d", nrows, DV_MAX_ROWS);
        return COUNTERS_REFUSED;
    }
    if (!c->dram.host && build_set(c, &c->dram, dram_names, DRAM_NMETRICS, reason) != 0) {
        c->broken = 1; /* a half-built set: rebuilt with the rest at the next prepare */
        return COUNTERS_REFUSED;
    }
    if (retarget(c, reason) != 0) {
        c->broken = 1;
        return COUNTERS_REFUSED;
    }
    struct mset m = c->dram;
    m.data = c->data;
    m.data_size = c->data_size;
    for (unsigned r = 0; r < nrows; r++) ranges[r] = (struct range){r, 0, {0, blocks[r], 0}, 1.0};
    for (unsigned at = 0; rc == 0 && at < nrows; at += COUNTERS_SESSION_RANGES) {
        const unsigned n = nrows - at < COUNTERS_SESSION_RANGES ? nrows - at : COUNTERS_SESSION_RANGES;
        int all = 0;
        unsigned pass = 0;
        rc = session_begin(c, &m, n, reason);
        for (; rc == 0 && !all && pass < COUNTERS_MAX_PASSES; pass++) rc = pass_run(c, ranges + at, n, l, &all, reason);
        if (rc == 0 && !all) {
            dv_seterr(reason, "CUPTI: %d passes did not collect %s", COUNTERS_MAX_PASSES, dram_names[0]);
            rc = COUNTERS_REFUSED;
        }
        if (rc == 0) rc = collect_set(c, &m, n, values, reason);
        for (unsigned i = 0; rc == 0 && i < n; i++) bytes[at + i] = values[i];
    }
    /* The main set's next session on a fresh object too; where that fails,
     * the bytes stand and the profiler is rebuilt at its next prepare. */
    char ignored[ERR_LEN];
    if (rc == 0 && retarget(c, ignored) != 0) c->broken = 1;
    if (rc == DV_ESTICKY) c->lost = 1;
    if (rc != 0) {
        c->broken = 1;
        for (unsigned r = 0; r < nrows; r++) bytes[r] = NAN;
    }
    return rc;
}

#else /* !DV_HAVE_CUPTI */

struct counters {
    int unused;
};

struct counters *counters_create(void) {
    return calloc(1, sizeof(struct counters));
}

void counters_free(struct counters *c) { free(c); }

void counters_invalidate(struct counters *c) { (void)c; }

void counters_release(struct counters *c) { (void)c; }

int counters_lost(const struct counters *c) {
    (void)c;
    return 0;
}

enum counters_set counters_set_of(const struct counters *c) {
    (void)c;
    return COUNTERS_SET_PATCHED;
}

int counters_alongside(const struct counters *c) {
    (void)c;
    return 0;
}

unsigned counters_passes(const struct counters *c) {
    (void)c;
    return 0;
}

void counters_launched(const struct counters *c, unsigned *launches, unsigned long long *blocks) {
    (void)c;
    *launches = 0;
    *blocks = 0;
}

double counters_take_start_ms(struct counters *c) {
    (void)c;
    return 0;
}

int counters_prepare(struct counters *c, int device, int cc_major, void *cu_ctx, char *library, char *reason) {
    (void)c, (void)device, (void)cc_major, (void)cu_ctx;
    library[0] = '\0';
    dv_seterr(reason,
              "CUPTI: this build has no CUPTI headers (configure with the CUDA toolkit's CUPTI to read "
              "hardware counters)");
    return -1;
}

int counters_profile(struct counters *c, unsigned nrows, const struct testimony_grid *grids,
                     const struct counters_launch *l, struct dv_counters *out, char *reason) {
    (void)c, (void)grids, (void)l;
    for (unsigned r = 0; r < nrows && r < DV_MAX_ROWS; r++) out[r].present = 0;
    dv_seterr(reason, "CUPTI: this build has no CUPTI headers");
    return COUNTERS_REFUSED;
}


int counters_dram(struct counters *c, unsigned nrows, const unsigned *blocks, const struct counters_launch *l,
                  double *bytes, char *reason) {
    (void)c, (void)blocks, (void)l;
    for (unsigned r = 0; r < nrows && r < DV_MAX_ROWS; r++) bytes[r] = NAN;
    dv_seterr(reason, "CUPTI: this build has no CUPTI headers");
    return COUNTERS_REFUSED;
}

#endif

int counters_table(struct counters **c, struct dv_table *t, const struct testimony_grid *grids,
                   const struct counters_launch *l, const unsigned *evaluations, struct dv_testimony *tm) {
    struct dv_counters out[DV_MAX_ROWS];
    char why[ERR_LEN] = "";
    memset(out, 0, sizeof(out));
    const double t0 = timeutil_now_ms();
    int rc = counters_profile(*c, t->nrows, grids, l, out, why);
    const double start = counters_take_start_ms(*c);
    counters_launched(*c, &t->counters_launches, &t->counters_blocks);
    tm->counters_ms += timeutil_now_ms() - t0 - start;
    tm->counters_setup_ms += start;
    if (rc != 0) {
        /* A launch's own error is CUDA's; say it was the counter pass's. */
        if (rc == COUNTERS_REFUSED) snprintf(tm->counters_reason, sizeof tm->counters_reason, "%s", why);
        else dv_seterr(tm->counters_reason, "counter pass of %s: %s", t->id, why);
        counters_invalidate(*c);
        *c = NULL;
        for (unsigned i = 0; i < t->nrows; i++) t->rows[i].counters.present = 0;
        return rc;
    }
    for (unsigned i = 0; i < t->nrows; i++) {
        t->rows[i].counters = out[i];
        const struct dv_row *w = &t->rows[i];
        testimony_counters_derive(&t->rows[i].counters, grids[i].blocks, w->warps_split.per_block, evaluations[i],
                                  w->warps_per_block ? (double)w->threads_per_block / w->warps_per_block : 32.0);
    }
    testimony_counters_compare(t);
    return 0;
}

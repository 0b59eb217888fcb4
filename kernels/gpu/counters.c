/* counters.c -- CUPTI range profiler, dlopen()ed (counters.h).
 *
 * The sequence follows cupti_range_profiler.h: cuptiProfilerInitialize; the
 * chip name and the counter availability image; a host object with the
 * metrics and its config image; per table, cuptiRangeProfilerEnable on the
 * current context, a counter data image for one range per row, SetConfig
 * (auto range, kernel replay), Start, the launches, Stop, DecodeData, then
 * cuptiProfilerHostEvaluateToGpuValues per range, and Disable.
 *
 * Every entry point is resolved with dlsym from the loaded library, so the
 * binary has no link-time dependency on CUPTI; a build without the headers
 * (DV_HAVE_CUPTI undefined) compiles the stubs at the bottom.
 */
#define _GNU_SOURCE
#include "kernels/gpu/counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/model/testimony.h"

#define COUNTERS_NMETRICS 6

void counters_explain(int result, const char *text, const char *what, char *reason) {
    const char *hint = "";
    switch (result) {
    case COUNTERS_ERR_INSUFFICIENT_PRIVILEGES:
    case COUNTERS_ERR_VIRTUALIZED_PRIVILEGES:
        hint =
            "; the driver restricts GPU performance counters to administrators (RmProfilingAdminOnly: 1 in "
            "/proc/driver/nvidia/params): load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0 "
            "(a line 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/, then reload "
            "the module or reboot), or run the worker with CAP_SYS_ADMIN";
        break;
    case COUNTERS_ERR_MULTIPLE_SUBSCRIBERS:
    case COUNTERS_ERR_OLD_PROFILER:
        hint = "; another profiler (ncu, nsys, DCGM profiling) holds the GPU's counters: stop it and retry";
        break;
    case COUNTERS_ERR_NOT_SUPPORTED:
    case COUNTERS_ERR_LEGACY_PROFILER:
    case COUNTERS_ERR_NOT_COMPATIBLE:
        hint = "; this GPU or driver does not support the range profiler (Volta or newer, CUDA 12.6 or newer)";
        break;
    default: break;
    }
    dv_seterr(reason, "%s: %s (%d)%s", what, text && text[0] ? text : "CUPTI error", result, hint);
}

#ifdef DV_HAVE_CUPTI

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <unistd.h>

static const char *const metric_names[COUNTERS_NMETRICS] = {
    "smsp__sass_branch_targets_threads_divergent.sum",
    "smsp__sass_branch_targets.sum",
    "smsp__sass_average_branch_targets_threads_uniform.pct",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "smsp__inst_executed.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
};

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
    X(cuptiRangeProfilerDecodeData)                                                                                    \
    X(cuptiRangeProfilerGetCounterDataInfo)

struct counters {
    void *lib, *host_lib, *target_lib;
#define DECLARE(fn) __typeof__(&fn) p_##fn;
    CUPTI_FNS(DECLARE)
#undef DECLARE
    CUresult (*p_cuCtxGetCurrent)(CUcontext *);
    int initialized;
    CUpti_Profiler_Host_Object *host;
    uint8_t *config;
    size_t config_size;
    uint8_t *avail;
};

/* The CUPTI result codes counters_explain() has advice for, checked against
 * cupti_result.h. */
_Static_assert((int)CUPTI_ERROR_INSUFFICIENT_PRIVILEGES == (int)COUNTERS_ERR_INSUFFICIENT_PRIVILEGES, "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES == (int)COUNTERS_ERR_VIRTUALIZED_PRIVILEGES,
               "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED == (int)COUNTERS_ERR_MULTIPLE_SUBSCRIBERS,
               "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED == (int)COUNTERS_ERR_OLD_PROFILER, "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_NOT_SUPPORTED == (int)COUNTERS_ERR_NOT_SUPPORTED, "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED == (int)COUNTERS_ERR_LEGACY_PROFILER, "cupti_result.h");
_Static_assert((int)CUPTI_ERROR_NOT_COMPATIBLE == (int)COUNTERS_ERR_NOT_COMPATIBLE, "cupti_result.h");

/* The reason for CUPTI call `call` (its text, as written at file:line)
 * that returned `r`. */
static void cupti_reason(const struct counters *c, CUptiResult r, const char *call, const char *file, int line,
                         char *reason) {
    const char *s = NULL;
    char what[ERR_LEN];
    if (c->p_cuptiGetResultString) c->p_cuptiGetResultString(r, &s);
    snprintf(what, sizeof what, "%s at %s:%d", call, cuda_source_path(file), line);
    counters_explain((int)r, s, what, reason);
}

/* Checks a CUPTI call; the reason names the call as written and where. */
#define CK(call)                                                                                                       \
    do {                                                                                                               \
        CUptiResult r_ = (call);                                                                                       \
        if (r_ != CUPTI_SUCCESS) {                                                                                     \
            cupti_reason(c, r_, #call, __FILE__, __LINE__, reason);                                                    \
            goto fail;                                                                                                 \
        }                                                                                                              \
    } while (0)

static int load_search(struct counters *c, char *library, char *reason);

static int load_from(struct counters *c, const char *dir, const char *cupti, char *library) {
    char path[1024];
    if (dir) {
        snprintf(path, sizeof path, "%s/libnvperf_host.so", dir);
        c->host_lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        snprintf(path, sizeof path, "%s/libnvperf_target.so", dir);
        c->target_lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        snprintf(path, sizeof path, "%s/%s", dir, cupti);
    } else {
        snprintf(path, sizeof path, "%s", cupti);
    }
    c->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (c->lib) snprintf(library, 256, "%.255s", path);
    return c->lib != NULL;
}

/* The library stays loaded for the life of the process (CUPTI keeps
 * callbacks registered with the driver), so a worker that measures many jobs
 * loads it once: the first success is remembered with the path it came from. */
static struct {
    void *lib;
    char library[256];
} loaded;

static int load_library(struct counters *c, char *library, char *reason) {
    if (loaded.lib) {
        c->lib = loaded.lib;
        snprintf(library, 256, "%s", loaded.library);
        return 0;
    }
    if (load_search(c, library, reason) != 0) return -1;
    loaded.lib = c->lib;
    snprintf(loaded.library, sizeof loaded.library, "%s", library);
    return 0;
}

static int load_search(struct counters *c, char *library, char *reason) {
    const char *exact = getenv("DV_CUPTI_LIBRARY");
    if (exact && exact[0]) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", exact);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = '\0';
            if (load_from(c, dir, slash + 1, library)) return 0;
        } else if (load_from(c, NULL, exact, library)) {
            return 0;
        }
        const char *e = dlerror();
        dv_seterr(reason, "CUPTI: DV_CUPTI_LIBRARY=%s cannot be loaded: %s", exact, e ? e : "not found");
        return -1;
    }
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 8);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        /* lib/ beside the binary, then ../lib (the bundle keeps the worker
         * in libexec/ and its libraries in lib/). */
        static const char *const rel[] = {"/lib", "/../lib"};
        for (size_t i = 0; slash && i < sizeof rel / sizeof rel[0]; i++) {
            snprintf(slash, sizeof self - (size_t)(slash - self), "%s", rel[i]);
            if (load_from(c, self, "libcupti.so.13", library) || load_from(c, self, "libcupti.so", library)) return 0;
        }
    }
#ifdef DV_CUPTI_BUILD_DIR
    if (load_from(c, DV_CUPTI_BUILD_DIR, "libcupti.so.13", library) ||
        load_from(c, DV_CUPTI_BUILD_DIR, "libcupti.so", library))
        return 0;
#endif
    if (load_from(c, NULL, "libcupti.so.13", library) || load_from(c, NULL, "libcupti.so", library)) return 0;
    const char *e = dlerror();
    dv_seterr(reason,
              "CUPTI: libcupti.so not found (beside the binary in lib/, in the toolkit, or on the "
              "loader path; set DV_CUPTI_LIBRARY to its path): %s",
              e ? e : "not found");
    return -1;
}

struct counters *counters_create(int device, int cc_major, char *library, char *reason) {
    struct counters *c = calloc(1, sizeof *c);
    library[0] = '\0';
    if (!c) {
        dv_seterr(reason, "counters: out of memory");
        return NULL;
    }
    if (cc_major < 7) {
        dv_seterr(reason, "CUPTI: compute capability %d.x is too old for the range profiler (Volta, 7.0, or newer)",
                  cc_major);
        goto fail;
    }
    if (load_library(c, library, reason) != 0) goto fail;
#define RESOLVE(fn)                                                                                                    \
    if (!(c->p_##fn = (__typeof__(&fn))dlsym(c->lib, #fn))) {                                                          \
        dv_seterr(reason, "CUPTI: %s has no %s (CUDA 12.6 or newer is needed)", library, #fn);                         \
        goto fail;                                                                                                     \
    }
    CUPTI_FNS(RESOLVE)
#undef RESOLVE
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!cuda || !(c->p_cuCtxGetCurrent = (CUresult(*)(CUcontext *))dlsym(cuda, "cuCtxGetCurrent"))) {
        dv_seterr(reason, "CUPTI: the CUDA driver library is not loaded");
        goto fail;
    }

    CUpti_Profiler_Initialize_Params ip = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    CK(c->p_cuptiProfilerInitialize(&ip));
    c->initialized = 1;

    CUpti_Device_GetChipName_Params cn = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    cn.deviceIndex = (size_t)device;
    CK(c->p_cuptiDeviceGetChipName(&cn));

    CUcontext ctx = NULL;
    if (c->p_cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) {
        dv_seterr(reason, "CUPTI: no current CUDA context");
        goto fail;
    }
    CUpti_Profiler_GetCounterAvailability_Params ca = {.structSize =
                                                           CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    ca.ctx = ctx;
    CK(c->p_cuptiProfilerGetCounterAvailability(&ca));
    if (!(c->avail = malloc(ca.counterAvailabilityImageSize ? ca.counterAvailabilityImageSize : 1))) {
        dv_seterr(reason, "counters: out of memory");
        goto fail;
    }
    ca.pCounterAvailabilityImage = c->avail;
    CK(c->p_cuptiProfilerGetCounterAvailability(&ca));

    CUpti_Profiler_Host_Initialize_Params hi = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = cn.pChipName;
    hi.pCounterAvailabilityImage = c->avail;
    CK(c->p_cuptiProfilerHostInitialize(&hi));
    c->host = hi.pHostObject;

    CUpti_Profiler_Host_ConfigAddMetrics_Params am = {.structSize =
                                                          CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    am.pHostObject = c->host;
    am.ppMetricNames = (const char **)metric_names;
    am.numMetrics = COUNTERS_NMETRICS;
    CK(c->p_cuptiProfilerHostConfigAddMetrics(&am));

    CUpti_Profiler_Host_GetConfigImageSize_Params cs = {.structSize =
                                                            CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    cs.pHostObject = c->host;
    CK(c->p_cuptiProfilerHostGetConfigImageSize(&cs));
    c->config_size = cs.configImageSize;
    if (!(c->config = malloc(c->config_size ? c->config_size : 1))) {
        dv_seterr(reason, "counters: out of memory");
        goto fail;
    }
    CUpti_Profiler_Host_GetConfigImage_Params ci = {.structSize =
                                                        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    ci.pHostObject = c->host;
    ci.configImageSize = c->config_size;
    ci.pConfigImage = c->config;
    CK(c->p_cuptiProfilerHostGetConfigImage(&ci));
    return c;
fail:
    counters_free(c);
    return NULL;
}

void counters_free(struct counters *c) {
    if (!c) return;
    if (c->host) {
        CUpti_Profiler_Host_Deinitialize_Params d = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        d.pHostObject = c->host;
        c->p_cuptiProfilerHostDeinitialize(&d);
    }
    if (c->initialized) {
        CUpti_Profiler_DeInitialize_Params d = {.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
        c->p_cuptiProfilerDeInitialize(&d);
    }
    free(c->config);
    free(c->avail);
    /* The library stays loaded (see `loaded`). */
    free(c);
}

int counters_profile(struct counters *c, unsigned nrows, timing_launch_fn launch, void *ctx, struct dv_counters *out,
                     char *reason) {
    int rc = 1, launch_rc = 0;
    uint8_t *data = NULL;
    double *values = NULL;
    CUpti_RangeProfiler_Object *obj = NULL;
    CUcontext cu = NULL;
    if (c->p_cuCtxGetCurrent(&cu) != CUDA_SUCCESS || !cu) {
        dv_seterr(reason, "CUPTI: no current CUDA context");
        return 1;
    }
    CUpti_RangeProfiler_Enable_Params en = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    en.ctx = cu;
    CK(c->p_cuptiRangeProfilerEnable(&en));
    obj = en.pRangeProfilerObject;

    CUpti_RangeProfiler_GetCounterDataSize_Params ds = {.structSize =
                                                            CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    ds.pRangeProfilerObject = obj;
    ds.pMetricNames = (const char **)metric_names;
    ds.numMetrics = COUNTERS_NMETRICS;
    ds.maxNumOfRanges = nrows;
    ds.maxNumRangeTreeNodes = nrows;
    CK(c->p_cuptiRangeProfilerGetCounterDataSize(&ds));
    if (!(data = calloc(1, ds.counterDataSize ? ds.counterDataSize : 1)) ||
        !(values = malloc(sizeof(double) * COUNTERS_NMETRICS))) {
        dv_seterr(reason, "counters: out of memory");
        goto fail;
    }
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = {
        .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    di.pRangeProfilerObject = obj;
    di.counterDataSize = ds.counterDataSize;
    di.pCounterData = data;
    CK(c->p_cuptiRangeProfilerCounterDataImageInitialize(&di));

    CUpti_RangeProfiler_SetConfig_Params sc = {.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    sc.pRangeProfilerObject = obj;
    sc.configSize = c->config_size;
    sc.pConfig = c->config;
    sc.counterDataImageSize = ds.counterDataSize;
    sc.pCounterDataImage = data;
    sc.range = CUPTI_AutoRange;
    sc.replayMode = CUPTI_KernelReplay;
    sc.maxRangesPerPass = nrows;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    CK(c->p_cuptiRangeProfilerSetConfig(&sc));

    /* Kernel replay submits every pass of a launch by itself; the loop is
     * the API's contract for the other replay modes, bounded. */
    for (int pass = 0; pass < 16; pass++) {
        CUpti_RangeProfiler_Start_Params st = {.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
        st.pRangeProfilerObject = obj;
        CK(c->p_cuptiRangeProfilerStart(&st));
        for (unsigned r = 0; r < nrows && launch_rc == 0; r++) launch_rc = launch(ctx, r, reason);
        if (launch_rc == 0) launch_rc = DV_CUDA_CALL(cudaDeviceSynchronize(), reason);
        CUpti_RangeProfiler_Stop_Params sp = {.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
        sp.pRangeProfilerObject = obj;
        if (launch_rc != 0) {
            c->p_cuptiRangeProfilerStop(&sp); /* ends the range; the launch's error is the one to report */
            rc = launch_rc;
            goto done;
        }
        CK(c->p_cuptiRangeProfilerStop(&sp));
        if (sp.isAllPassSubmitted) break;
    }
    CUpti_RangeProfiler_DecodeData_Params dd = {.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    dd.pRangeProfilerObject = obj;
    CK(c->p_cuptiRangeProfilerDecodeData(&dd));
    CUpti_RangeProfiler_GetCounterDataInfo_Params gi = {.structSize =
                                                            CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    gi.pCounterDataImage = data;
    gi.counterDataImageSize = ds.counterDataSize;
    CK(c->p_cuptiRangeProfilerGetCounterDataInfo(&gi));
    if (gi.numTotalRanges != nrows) {
        dv_seterr(reason, "CUPTI: %zu ranges recorded for %u launches (%zu dropped)", gi.numTotalRanges, nrows,
                  dd.numOfRangeDropped);
        goto fail;
    }
    for (unsigned r = 0; r < nrows; r++) {
        CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
            .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
        ev.pHostObject = c->host;
        ev.pCounterDataImage = data;
        ev.counterDataImageSize = ds.counterDataSize;
        ev.rangeIndex = r;
        ev.ppMetricNames = (const char **)metric_names;
        ev.numMetrics = COUNTERS_NMETRICS;
        ev.pMetricValues = values;
        CK(c->p_cuptiProfilerHostEvaluateToGpuValues(&ev));
        struct dv_counters *o = &out[r];
        memset(o, 0, sizeof *o);
        o->present = 1;
        o->branch_targets_divergent = values[0];
        o->branch_targets = values[1];
        o->branch_uniform_pct = values[2];
        o->threads_per_inst = values[3];
        o->inst_executed = values[4];
        o->ffma_threads = values[5];
    }
    rc = 0;
    goto done;
fail:
    rc = 1;
done:
    if (obj) {
        CUpti_RangeProfiler_Disable_Params dis = {.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
        dis.pRangeProfilerObject = obj;
        c->p_cuptiRangeProfilerDisable(&dis);
    }
    if (rc == 1)
        for (unsigned r = 0; r < nrows; r++) out[r].present = 0;
    free(data);
    free(values);
    return rc;
}

#else /* !DV_HAVE_CUPTI */

struct counters {
    int unused;
};

struct counters *counters_create(int device, int cc_major, char *library, char *reason) {
    library[0] = '\0';
    dv_seterr(reason,
              "CUPTI: this build has no CUPTI headers (configure with the CUDA toolkit's CUPTI to read "
              "hardware counters)");
    return NULL;
}

void counters_free(struct counters *c) { free(c); }

int counters_profile(struct counters *c, unsigned nrows, timing_launch_fn launch, void *ctx, struct dv_counters *out,
                     char *reason) {
    dv_seterr(reason, "CUPTI: this build has no CUPTI headers");
    return 1;
}

#endif

int counters_table(struct counters **c, struct dv_table *t, timing_launch_fn launch, void *ctx, unsigned blocks,
                   const unsigned *evaluations, struct dv_testimony *tm, char *err) {
    struct dv_counters out[DV_MAX_ROWS];
    memset(out, 0, sizeof(out));
    const double t0 = timeutil_now_ms();
    int rc = counters_profile(*c, t->nrows, launch, ctx, out, tm->counters_reason);
    tm->counters_ms += timeutil_now_ms() - t0;
    if (rc < 0) {
        dv_seterr(err, "%s", tm->counters_reason);
        return rc;
    }
    if (rc == 1) {
        counters_free(*c);
        *c = NULL;
        return 0;
    }
    for (unsigned i = 0; i < t->nrows; i++) {
        t->rows[i].counters = out[i];
        testimony_counters_derive(&t->rows[i].counters, blocks, t->rows[i].warps_split.per_block, evaluations[i]);
    }
    testimony_counters_compare(t);
    return 0;
}

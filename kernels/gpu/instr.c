/* instr.c -- CUPTI's SASS metrics and PC sampling for one function
 * (instr.h), dlopen()ed.
 *
 * The call sequence is the one that worked on an H200 (instr.h says why
 * each step is where it is): cuptiSubscribe + the resource domain (module
 * loads hand over their cubins) before CUDA starts; after the context,
 * cuptiProfilerInitialize, cuptiProfilerDeviceSupported for the SASS
 * metrics, the metric ids (cuptiSassMetricsGetProperties), PC sampling
 * enabled and configured (serialized collection, start/stop control, parsed
 * records); per row one sampled launch between Start and Stop, GetData until
 * no PC remains; PC sampling disabled; SetConfig with the four metrics,
 * Enable with lazy patching, per launch GetDataProperties + FlushData (the
 * launches of every row of the process), Disable; then cuptiGetCubinCrc on
 * the captured cubins and cuptiGetSassToSourceCorrelation per pc, each pc
 * once per process.
 *
 * The library is the process's libcupti (cupti_lib.h), the one counters.c
 * uses: found where DV_CUPTI_LIBRARY and the bundle's lib/ say, loaded once,
 * and every call checked by the same CUPTI_LIB_CALL(). Every entry point is
 * resolved from it; a build without CUPTI's headers compiles the stubs at
 * the bottom, which say so.
 *
 * The function names CUPTI hands out in records are shared between records
 * (its documentation: free them once, after every record is read); this
 * process reads them once and ends, so they are copied and left to it.
 */
#define _GNU_SOURCE
#include "kernels/gpu/instr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/status.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/cupti_lib.h"

#ifdef DV_HAVE_CUPTI

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_callbacks.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_result.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <unistd.h>

#define INSTR_FNS(X)                                                                                                   \
    X(cuptiGetResultString)                                                                                            \
    X(cuptiSubscribe)                                                                                                  \
    X(cuptiUnsubscribe)                                                                                                \
    X(cuptiEnableDomain)                                                                                               \
    X(cuptiProfilerInitialize)                                                                                         \
    X(cuptiProfilerDeInitialize)                                                                                       \
    X(cuptiProfilerDeviceSupported)                                                                                    \
    X(cuptiDeviceGetChipName)                                                                                          \
    X(cuptiSassMetricsGetProperties)                                                                                   \
    X(cuptiSassMetricsSetConfig)                                                                                       \
    X(cuptiSassMetricsUnsetConfig)                                                                                     \
    X(cuptiSassMetricsEnable)                                                                                          \
    X(cuptiSassMetricsDisable)                                                                                         \
    X(cuptiSassMetricsGetDataProperties)                                                                               \
    X(cuptiSassMetricsFlushData)                                                                                       \
    X(cuptiPCSamplingEnable)                                                                                           \
    X(cuptiPCSamplingDisable)                                                                                          \
    X(cuptiPCSamplingGetNumStallReasons)                                                                               \
    X(cuptiPCSamplingGetStallReasons)                                                                                  \
    X(cuptiPCSamplingSetConfigurationAttribute)                                                                        \
    X(cuptiPCSamplingStart)                                                                                            \
    X(cuptiPCSamplingStop)                                                                                             \
    X(cuptiPCSamplingGetData)                                                                                          \
    X(cuptiGetCubinCrc)                                                                                                \
    X(cuptiGetSassToSourceCorrelation)

static struct {
    char library[256];
#define DECLARE(fn) __typeof__(&fn) fn;
    INSTR_FNS(DECLARE)
#undef DECLARE
} api;

/* The four metrics, in the order the counts are kept. */
enum { M_WARP, M_THREAD, M_PRED_ON, M_DIVERGENT, INSTR_NMETRICS };
static const char *const metric_names[INSTR_NMETRICS] = {
    [M_WARP] = "smsp__sass_inst_executed",
    [M_THREAD] = "smsp__sass_thread_inst_executed",
    [M_PRED_ON] = "smsp__sass_thread_inst_executed_pred_on",
    [M_DIVERGENT] = "smsp__sass_branch_targets_threads_divergent",
};

#define INSTR_MAX_CUBINS 32
#define INSTR_SAMPLE_PCS 8192 /* PCs one GetData returns; the kernels have ~600 */

struct cubin {
    unsigned char *data;
    size_t size;
    uint64_t crc;
    int crc_ok;
};

/* A pc's source line, looked up once per process. */
struct pc_line {
    const struct cubin *cubin;
    char function[LISTING_FUNCTION_LEN];
    uint32_t pc;
    unsigned line;
    char file[LISTING_FILE_LEN];
};

struct instr {
    CUpti_SubscriberHandle sub;
    int subscribed, initialized, sampling, configured;
    int ready; /* the process's part of instr_prepare() done */
    int device;
    CUcontext ctx;
    uint64_t metric_id[INSTR_NMETRICS];
    struct cubin cubins[INSTR_MAX_CUBINS];
    unsigned ncubins, lost_cubins; /* more modules than room (not expected) */
    int capture_failed;            /* a cubin could not be copied          */
    uint32_t record_crc;           /* low 32 bits, from the SASS records   */
    int have_record_crc;
    size_t nreasons;
    uint32_t *reason_index;
    char **reason_name;
    CUpti_PCSamplingData config_buffer, user_buffer;
    struct pc_line *lines; /* the memo of pc_line()       */
    size_t nlines, cap_lines;
};

/* ---- the library ------------------------------------------------------- */

static int load_api(char *reason) {
    if (api.cuptiGetSassToSourceCorrelation) return 0;
    if (!cupti_lib_open(api.library, sizeof api.library, reason)) return -1;
#define RESOLVE(fn)                                                                                                    \
    if (!(api.fn = (__typeof__(&fn))cupti_lib_sym(#fn, "SASS metrics need CUDA 12.4 or newer", reason))) return -1;
    INSTR_FNS(RESOLVE)
#undef RESOLVE
    return 0;
}

/* ---- cubins ------------------------------------------------------------ */

static void CUPTIAPI on_resource(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data) {
    struct instr *p = userdata;
    if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbid != CUPTI_CBID_RESOURCE_MODULE_LOADED || !data) return;
    const CUpti_ResourceData *rd = data;
    const CUpti_ModuleResourceData *md = rd->resourceDescriptor;
    if (!md || !md->pCubin || !md->cubinSize) return;
    /* A context made again loads the same cubins again (a served process,
     * instr_run.h): one copy each, so a pc's line, memoised by cubin, stays. */
    for (unsigned i = 0; i < p->ncubins; i++)
        if (p->cubins[i].size == md->cubinSize && memcmp(p->cubins[i].data, md->pCubin, md->cubinSize) == 0) return;
    if (p->ncubins == INSTR_MAX_CUBINS) {
        p->lost_cubins++;
        return;
    }
    struct cubin *c = &p->cubins[p->ncubins];
    if (!(c->data = malloc(md->cubinSize))) {
        p->capture_failed = 1;
        return;
    }
    memcpy(c->data, md->pCubin, md->cubinSize);
    c->size = md->cubinSize;
    c->crc_ok = 0;
    p->ncubins++;
}

struct instr *instr_create(char *reason) {
    if (load_api(reason) != 0) return NULL;
    struct instr *p = calloc(1, sizeof *p);
    if (!p) {
        dv_seterr(reason, "instructions: out of memory");
        return NULL;
    }
    if (CUPTI_LIB_CALL(api.cuptiSubscribe(&p->sub, (CUpti_CallbackFunc)on_resource, p), reason)) {
        free(p);
        return NULL;
    }
    p->subscribed = 1;
    if (CUPTI_LIB_CALL(api.cuptiEnableDomain(1, p->sub, CUPTI_CB_DOMAIN_RESOURCE), reason)) {
        instr_free(p);
        return NULL;
    }
    return p;
}

const char *instr_library(const struct instr *p) {
    (void)p;
    return api.library;
}

static void free_sampling_buffer(CUpti_PCSamplingData *d) {
    for (size_t i = 0; d->pPcData && i < d->collectNumPcs; i++) free(d->pPcData[i].stallReason);
    free(d->pPcData);
    memset(d, 0, sizeof *d);
}

static void sampling_off(struct instr *p) {
    if (!p->sampling) return;
    CUpti_PCSamplingDisableParams dp = {.size = CUpti_PCSamplingDisableParamsSize};
    dp.ctx = p->ctx;
    api.cuptiPCSamplingDisable(&dp);
    p->sampling = 0;
}

void instr_free(struct instr *p) {
    if (!p) return;
    sampling_off(p);
    if (p->configured) {
        CUpti_SassMetricsUnsetConfig_Params u = {.structSize = CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE};
        u.deviceIndex = (uint32_t)p->device;
        api.cuptiSassMetricsUnsetConfig(&u);
    }
    if (p->initialized) {
        CUpti_Profiler_DeInitialize_Params d = {.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
        api.cuptiProfilerDeInitialize(&d);
    }
    if (p->subscribed) api.cuptiUnsubscribe(p->sub);
    for (unsigned i = 0; i < p->ncubins; i++) free(p->cubins[i].data);
    for (size_t i = 0; p->reason_name && i < p->nreasons; i++) free(p->reason_name[i]);
    free(p->reason_name);
    free(p->reason_index);
    free_sampling_buffer(&p->config_buffer);
    free_sampling_buffer(&p->user_buffer);
    free(p->lines);
    free(p);
}

/* ---- preparation --------------------------------------------------------- */

/* The current CUcontext, from the driver's cuCtxGetCurrent. */
static int current_context(CUcontext *ctx, char *reason) {
    CUresult (*get)(CUcontext *) = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (DV_CUDA_CALL(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", (void **)&get, 12000, cudaEnableDefault, &q),
                     reason) != 0)
        return -1;
    if (DV_CUDA_CALL(cudaFree(0), reason) != 0) return -1;
    *ctx = NULL;
    if (q != cudaDriverEntryPointSuccess || !get || get(ctx) != CUDA_SUCCESS || !*ctx) {
        dv_seterr(reason, "CUPTI: no current CUDA context (cuCtxGetCurrent: entry point %d)", (int)q);
        return -1;
    }
    return 0;
}

static const char *support_word(CUpti_Profiler_Support_Level s) {
    switch (s) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED: return "supported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED: return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED: return "unsupported";
    default: return "unknown";
    }
}

/* Whether `api_kind` works on the device; else the reason names what does not. */
static int device_supports(struct instr *p, CUpti_Profiler_API api_kind, const char *what, char *reason) {
    CUpti_Profiler_DeviceSupported_Params ds = {.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
    ds.cuDevice = (CUdevice)p->device;
    ds.api = api_kind;
    if (CUPTI_LIB_CALL(api.cuptiProfilerDeviceSupported(&ds), reason)) return -1;
    if (ds.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return 0;
    dv_seterr(reason,
              "CUPTI: this GPU or driver does not support %s (architecture %s, vGPU %s, confidential compute %s, "
              "SLI %s, CMP %s, WSL %s)",
              what, support_word(ds.architecture), support_word(ds.vGpu), support_word(ds.confidentialCompute),
              support_word(ds.sli), support_word(ds.cmp), support_word(ds.wsl));
    return -1;
}

static int sampling_buffer(CUpti_PCSamplingData *d, size_t reasons) {
    memset(d, 0, sizeof *d);
    d->size = sizeof *d;
    d->collectNumPcs = INSTR_SAMPLE_PCS;
    if (!(d->pPcData = calloc(INSTR_SAMPLE_PCS, sizeof *d->pPcData))) return -1;
    for (size_t i = 0; i < INSTR_SAMPLE_PCS; i++) {
        d->pPcData[i].size = sizeof(CUpti_PCSamplingPCData);
        if (!(d->pPcData[i].stallReason = calloc(reasons ? reasons : 1, sizeof(CUpti_PCSamplingStallReason)))) return -1;
    }
    return 0;
}

/* PC sampling enabled on the context with its reasons' names and the
 * configuration; 0, or -1 with `reason` (sampling stays off). */
static int sampling_on(struct instr *p, char *reason) {
    /* What an earlier context's sampling set up goes first: a served
     * process enables it once per context (instr_prepare()). */
    for (size_t i = 0; p->reason_name && i < p->nreasons; i++) free(p->reason_name[i]);
    free(p->reason_name);
    free(p->reason_index);
    p->reason_name = NULL;
    p->reason_index = NULL;
    p->nreasons = 0;
    free_sampling_buffer(&p->config_buffer);
    free_sampling_buffer(&p->user_buffer);
    if (device_supports(p, CUPTI_PROFILER_PC_SAMPLING, "PC sampling", reason) != 0) return -1;
    CUpti_PCSamplingEnableParams ep = {.size = CUpti_PCSamplingEnableParamsSize};
    ep.ctx = p->ctx;
    if (CUPTI_LIB_CALL(api.cuptiPCSamplingEnable(&ep), reason)) return -1;
    p->sampling = 1;
    CUpti_PCSamplingGetNumStallReasonsParams np = {.size = CUpti_PCSamplingGetNumStallReasonsParamsSize};
    np.ctx = p->ctx;
    np.numStallReasons = &p->nreasons;
    if (CUPTI_LIB_CALL(api.cuptiPCSamplingGetNumStallReasons(&np), reason)) goto off;
    if (p->nreasons > LISTING_MAX_REASONS) p->nreasons = LISTING_MAX_REASONS;
    if (!(p->reason_index = calloc(p->nreasons ? p->nreasons : 1, sizeof *p->reason_index)) ||
        !(p->reason_name = calloc(p->nreasons ? p->nreasons : 1, sizeof *p->reason_name)))
        goto oom;
    for (size_t i = 0; i < p->nreasons; i++)
        if (!(p->reason_name[i] = calloc(CUPTI_STALL_REASON_STRING_SIZE, 1))) goto oom;
    CUpti_PCSamplingGetStallReasonsParams sp = {.size = CUpti_PCSamplingGetStallReasonsParamsSize};
    sp.ctx = p->ctx;
    sp.numStallReasons = p->nreasons;
    sp.stallReasonIndex = p->reason_index;
    sp.stallReasons = p->reason_name;
    if (p->nreasons && CUPTI_LIB_CALL(api.cuptiPCSamplingGetStallReasons(&sp), reason)) goto off;
    if (sampling_buffer(&p->config_buffer, p->nreasons) != 0 || sampling_buffer(&p->user_buffer, p->nreasons) != 0)
        goto oom;
    CUpti_PCSamplingConfigurationInfo cfg[4];
    memset(cfg, 0, sizeof cfg);
    cfg[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    cfg[0].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
    cfg[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    cfg[1].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    cfg[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    cfg[2].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    cfg[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    cfg[3].attributeData.samplingDataBufferData.samplingDataBuffer = &p->config_buffer;
    CUpti_PCSamplingConfigurationInfoParams cp = {.size = CUpti_PCSamplingConfigurationInfoParamsSize};
    cp.ctx = p->ctx;
    cp.numAttributes = sizeof cfg / sizeof cfg[0];
    cp.pPCSamplingConfigurationInfo = cfg;
    if (CUPTI_LIB_CALL(api.cuptiPCSamplingSetConfigurationAttribute(&cp), reason)) goto off;
    return 0;
oom:
    dv_seterr(reason, "PC sampling: out of memory for %zu stall reasons", p->nreasons);
off:
    sampling_off(p);
    return -1;
}

/* The profiler's set-up of the process: CUPTI's profiler, the SASS
 * metrics' support on `device` and their ids. */
static int prepare_process(struct instr *p, int device, char *reason) {
    CUpti_Profiler_Initialize_Params ip = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    if (CUPTI_LIB_CALL(api.cuptiProfilerInitialize(&ip), reason)) return -1;
    p->initialized = 1;
    if (device_supports(p, CUPTI_PROFILER_SASS_METRICS, "SASS metrics", reason) != 0) return -1;
    CUpti_Device_GetChipName_Params cn = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    cn.deviceIndex = (size_t)device;
    if (CUPTI_LIB_CALL(api.cuptiDeviceGetChipName(&cn), reason)) return -1;
    for (int m = 0; m < INSTR_NMETRICS; m++) {
        CUpti_SassMetrics_GetProperties_Params gp = {.structSize = CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE};
        gp.pChipName = cn.pChipName;
        gp.pMetricName = metric_names[m];
        if (CUPTI_LIB_CALL(api.cuptiSassMetricsGetProperties(&gp), reason)) return -1;
        p->metric_id[m] = gp.metric.metricId;
    }
    return 0;
}

int instr_prepare(struct instr *p, int device, int cc_major, int stalls, char *stall_reason, char *reason) {
    stall_reason[0] = '\0';
    if (cc_major < 7) {
        dv_seterr(reason, "CUPTI: compute capability %d.x has no SASS metrics (Volta, 7.0, or newer)", cc_major);
        return -1;
    }
    if (p->ready && p->device != device) {
        dv_seterr(reason, "CUPTI: this profiler readied device %d, not %d", p->device, device);
        return -1;
    }
    p->device = device;
    sampling_off(p);
    if (current_context(&p->ctx, reason) != 0) return -1;
    /* The process's part once (a served process readies a context per
     * request), the context's each time. */
    if (!p->ready && prepare_process(p, device, reason) != 0) return -1;
    p->ready = 1;
    if (!stalls) {
        snprintf(stall_reason, ERR_LEN, "not asked for");
        return 0;
    }
    if (sampling_on(p, stall_reason) != 0) return 0; /* stalls stay off, the counts go on */
    return 0;
}

/* ---- PC sampling ------------------------------------------------------- */

static void reset_buffer(CUpti_PCSamplingData *d) {
    d->totalSamples = d->droppedSamples = d->nonUsrKernelsTotalSamples = 0;
    d->totalNumPcs = d->remainingNumPcs = 0;
    d->hardwareBufferFull = 0;
}

/* The samples of one GetData into f, keeping the first function seen. */
static int add_samples(struct instr *p, const CUpti_PCSamplingData *d, struct listing_insns *f, int *slot) {
    for (size_t i = 0; i < d->totalNumPcs && i < d->collectNumPcs; i++) {
        const CUpti_PCSamplingPCData *pc = &d->pPcData[i];
        if (!pc->functionName) continue;
        if (!f->function[0]) snprintf(f->function, sizeof f->function, "%s", pc->functionName);
        if (strcmp(f->function, pc->functionName) != 0 || pc->pcOffset > 0xffffffffull) continue;
        struct listing_insn *in = listing_insns_at(f, (uint32_t)pc->pcOffset);
        if (!in) return -1;
        for (size_t r = 0; r < pc->stallReasonCount; r++)
            for (size_t k = 0; k < p->nreasons; k++)
                if (p->reason_index[k] == pc->stallReason[r].pcSamplingStallReasonIndex && slot[k] >= 0)
                    in->stalls[slot[k]] += pc->stallReason[r].samples;
    }
    return 0;
}

int instr_sample(struct instr *p, instr_launch_fn launch, void *ctx, unsigned part, struct listing_insns *f,
                 char *reason) {
    int rc = -1;
    listing_insns_init(f);
    if (!p->sampling) return 0;
    int slot[LISTING_MAX_REASONS];
    for (size_t k = 0; k < p->nreasons; k++) slot[k] = listing_insns_reason(f, p->reason_name[k]);
    CUpti_PCSamplingStartParams st = {.size = CUpti_PCSamplingStartParamsSize};
    st.ctx = p->ctx;
    if (CUPTI_LIB_CALL(api.cuptiPCSamplingStart(&st), reason)) goto fail;
    rc = launch(ctx, part, reason);
    if (rc == 0) rc = DV_CUDA_CALL(cudaDeviceSynchronize(), reason);
    CUpti_PCSamplingStopParams sp = {.size = CUpti_PCSamplingStopParamsSize};
    sp.ctx = p->ctx;
    if (rc == DV_ESTICKY) return rc;
    if (CUPTI_LIB_CALL(api.cuptiPCSamplingStop(&sp), rc ? NULL : reason) && rc == 0) rc = -1;
    /* GetData until no PC remains; the serialized mode has the samples at
     * Stop, so a first empty answer is only waited on briefly. */
    for (int it = 0; rc == 0 && it < 64; it++) {
        reset_buffer(&p->user_buffer);
        CUpti_PCSamplingGetDataParams gd = {.size = CUpti_PCSamplingGetDataParamsSize};
        gd.ctx = p->ctx;
        gd.pcSamplingData = &p->user_buffer;
        if (CUPTI_LIB_CALL(api.cuptiPCSamplingGetData(&gd), reason)) rc = -1;
        else if (add_samples(p, &p->user_buffer, f, slot) != 0) {
            dv_seterr(reason, "PC sampling: out of memory");
            rc = -1;
        } else if (p->user_buffer.remainingNumPcs == 0 && (p->user_buffer.totalNumPcs > 0 || it >= 3))
            break;
        else if (p->user_buffer.totalNumPcs == 0)
            usleep(20 * 1000);
    }
    /* What the configuration's own buffer kept of this launch, emptied for
     * the next one. */
    if (rc == 0 && add_samples(p, &p->config_buffer, f, slot) != 0) rc = -1;
    reset_buffer(&p->config_buffer);
    if (rc != 0) goto fail;
    f->sampled = 1;
    return 0;
fail:
    sampling_off(p);
    listing_insns_cleanup(f);
    return rc ? rc : -1;
}

void instr_sampling_end(struct instr *p) {
    if (p) sampling_off(p);
}

/* ---- SASS metrics ------------------------------------------------------ */

static int sass_configure(struct instr *p, char *reason) {
    if (p->configured) return 0;
    CUpti_SassMetrics_Config cfg[INSTR_NMETRICS];
    for (int m = 0; m < INSTR_NMETRICS; m++) {
        cfg[m].metricId = p->metric_id[m];
        cfg[m].outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
    }
    CUpti_SassMetricsSetConfig_Params sc = {.structSize = CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
    sc.numOfMetricConfig = INSTR_NMETRICS;
    sc.pConfigs = cfg;
    sc.deviceIndex = (uint32_t)p->device;
    if (CUPTI_LIB_CALL(api.cuptiSassMetricsSetConfig(&sc), reason)) return -1;
    p->configured = 1;
    return 0;
}

/* The function the launch just flushed ran: of the functions the records
 * name, the one they count the most executions for (a flush may also name
 * functions patched for an earlier launch, with nothing counted since).
 * NULL when they count nothing. */
static const char *launched_function(const CUpti_SassMetrics_Data *data, size_t nrec, size_t ninst) {
    enum { MAX_FUNCTIONS = 16 };
    const char *name[MAX_FUNCTIONS];
    unsigned long long sum[MAX_FUNCTIONS];
    unsigned n = 0;
    for (size_t i = 0; i < nrec; i++) {
        const CUpti_SassMetrics_Data *d = &data[i];
        if (!d->functionName) continue;
        unsigned k = 0;
        while (k < n && strcmp(name[k], d->functionName) != 0) k++;
        if (k == n) {
            if (n == MAX_FUNCTIONS) continue;
            name[n] = d->functionName;
            sum[n++] = 0;
        }
        for (size_t v = 0; v < ninst; v++) sum[k] += d->pInstanceValues[v].value;
    }
    const char *best = NULL;
    unsigned long long most = 0;
    for (unsigned k = 0; k < n; k++)
        if (sum[k] > most) {
            most = sum[k];
            best = name[k];
        }
    return best;
}

/* The records of the launch just made, into `f`. Returns 0, -1 with
 * `reason` when the launch gave no record, -2 with `reason` when CUPTI
 * failed or memory ran out. */
static int sass_flush(struct instr *p, unsigned part, struct listing_insns *f, char *reason) {
    CUpti_SassMetricsGetDataProperties_Params gp = {.structSize =
                                                        CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
    gp.ctx = p->ctx;
    if (CUPTI_LIB_CALL(api.cuptiSassMetricsGetDataProperties(&gp), reason)) return -2;
    const size_t nrec = gp.numOfPatchedInstructionRecords, ninst = gp.numOfInstances;
    if (nrec == 0 || ninst == 0) {
        dv_seterr(reason, "CUPTI: the SASS metrics gave no record for launch %u (%zu records, %zu instances)", part,
                  nrec, ninst);
        return -1;
    }
    CUpti_SassMetrics_Data *data = calloc(nrec, sizeof *data);
    CUpti_SassMetrics_InstanceValue *values = calloc(nrec * ninst, sizeof *values);
    int rc = -2;
    if (!data || !values) {
        dv_seterr(reason, "CUPTI: out of memory for %zu SASS records", nrec);
        goto cleanup;
    }
    for (size_t i = 0; i < nrec; i++) {
        data[i].structSize = sizeof data[i];
        data[i].pInstanceValues = &values[i * ninst];
    }
    CUpti_SassMetricsFlushData_Params fp = {.structSize = CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
    fp.ctx = p->ctx;
    fp.numOfPatchedInstructionRecords = nrec;
    fp.numOfInstances = ninst;
    fp.pMetricsData = data;
    if (CUPTI_LIB_CALL(api.cuptiSassMetricsFlushData(&fp), reason)) goto cleanup;
    const char *ran = launched_function(data, nrec, ninst);
    if (!ran) {
        dv_seterr(reason, "CUPTI: the SASS metrics counted nothing for launch %u (%zu records)", part, nrec);
        rc = -1;
        goto cleanup;
    }
    snprintf(f->function, sizeof f->function, "%s", ran);
    for (size_t i = 0; i < nrec; i++) {
        const CUpti_SassMetrics_Data *d = &data[i];
        if (!d->functionName || strcmp(f->function, d->functionName) != 0) continue; /* another function's */
        if (!p->have_record_crc) {
            p->record_crc = d->cubinCrc;
            p->have_record_crc = 1;
        }
        if (!f->have_record_crc) {
            f->record_crc = d->cubinCrc;
            f->have_record_crc = 1;
        }
        struct listing_insn *in = listing_insns_at(f, d->pcOffset);
        if (!in) {
            dv_seterr(reason, "CUPTI: out of memory for the instructions of %s", f->function);
            goto cleanup;
        }
        for (size_t k = 0; k < ninst; k++) {
            const CUpti_SassMetrics_InstanceValue *v = &d->pInstanceValues[k];
            if (v->metricId == p->metric_id[M_WARP]) in->warp += v->value;
            else if (v->metricId == p->metric_id[M_THREAD]) in->thread += v->value;
            else if (v->metricId == p->metric_id[M_PRED_ON]) in->pred_on += v->value;
            else if (v->metricId == p->metric_id[M_DIVERGENT]) in->divergent += v->value;
        }
    }
    rc = 0;
cleanup:
    free(data);
    free(values);
    return rc;
}

int instr_count(struct instr *p, unsigned nparts, instr_launch_fn launch, void *ctx, struct listing_insns *parts,
                int *ok, char *reason) {
    for (unsigned k = 0; k < nparts; k++) {
        listing_insns_init(&parts[k]);
        if (ok) ok[k] = 0;
    }
    if (sass_configure(p, reason) != 0) return -1;
    CUpti_SassMetricsEnable_Params en = {.structSize = CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
    en.ctx = p->ctx;
    en.enableLazyPatching = 1;
    if (CUPTI_LIB_CALL(api.cuptiSassMetricsEnable(&en), reason)) return -1;
    int rc = 0;
    for (unsigned k = 0; rc == 0 && k < nparts; k++) {
        if ((rc = launch(ctx, k, reason)) != 0 || (rc = DV_CUDA_CALL(cudaDeviceSynchronize(), reason)) != 0) break;
        char why[ERR_LEN];
        const int flushed = sass_flush(p, k, &parts[k], ok ? why : reason);
        if (flushed == 0 && ok) ok[k] = 1;
        else if (flushed != 0 && !ok) rc = -1;
        else if (flushed == -2) { /* not a launch's own trouble: CUPTI's */
            dv_seterr(reason, "%s", why);
            rc = -1;
        }
    }
    if (rc == DV_ESTICKY) return rc;
    CUpti_SassMetricsDisable_Params dis = {.structSize = CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
    dis.ctx = p->ctx;
    if (CUPTI_LIB_CALL(api.cuptiSassMetricsDisable(&dis), rc ? NULL : reason) && rc == 0) rc = -1;
    return rc;
}

/* ---- the cubin --------------------------------------------------------- */

/* The line of `pc` in `function` from the memo of the lines looked up
 * before (rows of one process share their kernels), or from CUPTI; 0 when
 * the pc has none. */
static int pc_line(struct instr *p, const struct cubin *c, const char *function, uint32_t pc, struct listing_insn *in) {
    struct pc_line *m = NULL;
    for (size_t i = 0; i < p->nlines; i++)
        if (p->lines[i].cubin == c && p->lines[i].pc == pc && strcmp(p->lines[i].function, function) == 0) {
            m = &p->lines[i];
            break;
        }
    if (!m) {
        if (p->nlines == p->cap_lines) {
            size_t cap = p->cap_lines ? 2 * p->cap_lines : 1024;
            struct pc_line *v = realloc(p->lines, cap * sizeof *v);
            if (!v) return -1;
            p->lines = v;
            p->cap_lines = cap;
        }
        m = &p->lines[p->nlines];
        memset(m, 0, sizeof *m);
        m->cubin = c;
        m->pc = pc;
        snprintf(m->function, sizeof m->function, "%s", function);
        CUpti_GetSassToSourceCorrelationParams sc = {.size = CUpti_GetSassToSourceCorrelationParamsSize};
        sc.cubin = c->data;
        sc.cubinSize = c->size;
        sc.functionName = function;
        sc.pcOffset = pc;
        if (api.cuptiGetSassToSourceCorrelation(&sc) == CUPTI_SUCCESS) {
            if (sc.fileName && sc.lineNumber) {
                snprintf(m->file, sizeof m->file, "%s%s%s", sc.dirName && sc.dirName[0] ? sc.dirName : "",
                         sc.dirName && sc.dirName[0] ? "/" : "", sc.fileName);
                m->line = sc.lineNumber;
            }
            free(sc.fileName);
            free(sc.dirName);
        }
        p->nlines++;
    }
    if (m->line) {
        snprintf(in->file, sizeof in->file, "%s", m->file);
        in->line = m->line;
    }
    return 0;
}

/* The cubin's 64-bit CRC into c->crc, asked of CUPTI once per cubin.
 * Returns 0, or -1 with `reason`. */
static int cubin_crc(struct cubin *c, char *reason) {
    if (c->crc_ok) return 0;
    CUpti_GetCubinCrcParams cp = {.size = CUpti_GetCubinCrcParamsSize};
    cp.cubin = c->data;
    cp.cubinSize = c->size;
    if (CUPTI_LIB_CALL(api.cuptiGetCubinCrc(&cp), reason)) return -1;
    c->crc = cp.cubinCrc;
    c->crc_ok = 1;
    return 0;
}

unsigned instr_cubin_count(const struct instr *p) { return p ? p->ncubins : 0; }

int instr_cubin(struct instr *p, unsigned k, uint64_t *crc, const void **cubin, size_t *size, char *reason) {
    *cubin = NULL;
    *size = 0;
    if (!p || k >= p->ncubins) {
        dv_seterr(reason, "instructions: no captured cubin %u (%u captured)", k, p ? p->ncubins : 0);
        return -1;
    }
    struct cubin *c = &p->cubins[k];
    if (cubin_crc(c, reason) != 0) return -1;
    *crc = c->crc;
    *cubin = c->data;
    *size = c->size;
    return 0;
}

int instr_correlate(struct instr *p, struct listing_insns *f, uint64_t *crc, const void **cubin, size_t *size,
                    char *reason) {
    *cubin = NULL;
    *size = 0;
    const int have = f->have_record_crc || p->have_record_crc;
    const uint32_t want = f->have_record_crc ? f->record_crc : p->record_crc;
    if (!have) {
        dv_seterr(reason, "instructions: no SASS record named a cubin");
        return -1;
    }
    struct cubin *match = NULL;
    for (unsigned i = 0; i < p->ncubins; i++) {
        struct cubin *c = &p->cubins[i];
        if (cubin_crc(c, reason) != 0) return -1;
        if ((uint32_t)c->crc == want && !match) match = c;
    }
    if (!match) {
        dv_seterr(reason,
                  "instructions: none of the %u cubins loaded has the records' CRC %08x%s%s", p->ncubins,
                  (unsigned)want, p->lost_cubins ? " (some modules were not kept)" : "",
                  p->capture_failed ? " (a cubin could not be copied: out of memory)" : "");
        return -1;
    }
    *crc = match->crc;
    *cubin = match->data;
    *size = match->size;
    for (size_t k = 0; k < f->n; k++)
        if (pc_line(p, match, f->function, f->v[k].pc, &f->v[k]) != 0) {
            dv_seterr(reason, "instructions: out of memory for the source lines of %s", f->function);
            return -1;
        }
    return 0;
}

#else /* !DV_HAVE_CUPTI */

struct instr {
    int unused;
};

struct instr *instr_create(char *reason) {
    dv_seterr(reason, "CUPTI: this build has no CUPTI headers (configure with the CUDA toolkit's CUPTI to profile "
                      "instructions)");
    return NULL;
}

void instr_free(struct instr *p) { free(p); }

const char *instr_library(const struct instr *p) {
    (void)p;
    return "";
}

int instr_prepare(struct instr *p, int device, int cc_major, int stalls, char *stall_reason, char *reason) {
    (void)p, (void)device, (void)cc_major, (void)stalls;
    stall_reason[0] = '\0';
    dv_seterr(reason, "CUPTI: this build has no CUPTI headers");
    return -1;
}

int instr_sample(struct instr *p, instr_launch_fn launch, void *ctx, unsigned part, struct listing_insns *f,
                 char *reason) {
    (void)p, (void)launch, (void)ctx, (void)part;
    listing_insns_init(f);
    dv_seterr(reason, "CUPTI: this build has no CUPTI headers");
    return -1;
}

void instr_sampling_end(struct instr *p) { (void)p; }

int instr_count(struct instr *p, unsigned nparts, instr_launch_fn launch, void *ctx, struct listing_insns *parts,
                int *ok, char *reason) {
    (void)p, (void)launch, (void)ctx;
    for (unsigned k = 0; k < nparts; k++) {
        listing_insns_init(&parts[k]);
        if (ok) ok[k] = 0;
    }
    dv_seterr(reason, "CUPTI: this build has no CUPTI headers");
    return -1;
}

unsigned instr_cubin_count(const struct instr *p) {
    (void)p;
    return 0;
}

int instr_cubin(struct instr *p, unsigned k, uint64_t *crc, const void **cubin, size_t *size, char *reason) {
    (void)p, (void)k, (void)crc;
    *cubin = NULL;
    *size = 0;
    dv_seterr(reason, "CUPTI: this build has no CUPTI headers");
    return -1;
}

int instr_correlate(struct instr *p, struct listing_insns *f, uint64_t *crc, const void **cubin, size_t *size,
                    char *reason) {
    (void)p, (void)f, (void)crc;
    *cubin = NULL;
    *size = 0;
    dv_seterr(reason, "CUPTI: this build has no CUPTI headers");
    return -1;
}

#endif

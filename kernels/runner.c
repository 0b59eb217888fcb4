/* runner.c -- the only code that calls cudart: device identity, the clock
 * check, the timing engine and the Part 1 / Part 2 measurement.
 *
 * A measurement plans the tables (experiment_plan), picks the grid when
 * `blocks` is auto, then per table: allocates once (input, one output per
 * row so each row's last timed launch can be checked, one device mask per
 * mask-kernel row), fills the input, poisons the outputs with NaN, and hands
 * the rows to runner_time_rows(): one warm-up launch per row, then samples
 * round-robin (row 0, 1, ..., n-1, 0, 1, ...), several rounds queued back to
 * back per synchronisation, so drift in clocks or
 * temperature hits every row alike, each launch between two CUDA events,
 * until every row has its minimum samples and a relative standard deviation
 * at or under the target (nvbench's stdrel criterion), or the table's GPU
 * time budget is spent. The SM clock is measured with a clock64() spin
 * before the first table and after each one; the FMA floor uses the mean.
 *
 * Errors that poison a CUDA context (illegal address, launch failure...) are
 * returned as DV_ESTICKY: the caller must not touch CUDA again in this
 * process, which is why the server runs this code in a worker it can restart.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "scenario.h"
#include "chain.h"
#include "launch.h"
#include "reference.h"
#include "runner.h"


#define CLOCK_SPIN_CYCLES 20000000LL /* ~10 ms at 2 GHz */
#define TIMING_BATCH 8              /* rounds queued per synchronisation */

int runner_cuda_fail(int cuda_error, const char *what, char *err) {
    cudaError_t e = (cudaError_t)cuda_error;
    dv_seterr(err, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorNoKernelImageForDevice:
        return DV_ENOGPU;
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorUnknown:
        return DV_ESTICKY;
    default:
        return DV_ERR;
    }
}

#define CUDA_TRY(call, what)                                                                                 \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) {                                                                             \
            rc = runner_cuda_fail((int)e_, (what), err);                                                     \
            goto cleanup;                                                                                    \
        }                                                                                                    \
    } while (0)

int runner_fp32_lanes(int major, int minor) {
    switch (major) {
    case 3: return 192;
    case 5: return 128;
    case 6: return minor == 0 ? 64 : 128;
    case 7: return 64;                    /* Volta, Turing */
    case 8: return minor == 0 ? 64 : 128; /* A100 64; GA10x, Ada 128 */
    case 9: return 128;                   /* Hopper */
    case 10:
    case 11:
    case 12: return 128;                  /* Blackwell */
    default: return 0;
    }
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void utc_now(char *buf, size_t len) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The NVIDIA kernel module's release ("580.159.04"), which cudart does not
 * report: cudaDriverGetVersion gives the CUDA API level only. The first line
 * of /proc/driver/nvidia/version reads "NVRM version: NVIDIA UNIX [Open]
 * Kernel Module [for x86_64]  580.159.04  Release Build ..."; the release is
 * the first token after "Module" made of digits and dots only. */
int runner_driver_release(const char *version_line, char *out, size_t len) {
    char line[512];
    out[0] = '\0';
    snprintf(line, sizeof(line), "%s", version_line);
    char *k = strstr(line, "Module");
    char *save = NULL;
    for (char *tok = k ? strtok_r(k, " \t\n", &save) : NULL; tok; tok = strtok_r(NULL, " \t\n", &save)) {
        size_t n = strlen(tok);
        if (n > 0 && n < len && strspn(tok, "0123456789.") == n && strchr(tok, '.')) {
            memcpy(out, tok, n + 1);
            return 0;
        }
    }
    return -1;
}

static void driver_release(char *out, size_t len) {
    char line[512];
    out[0] = '\0';
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return;
    if (fgets(line, sizeof(line), f)) runner_driver_release(line, out, len);
    fclose(f);
}

int runner_device_query(int ordinal, struct dv_device *d, char *err) {
    memset(d, 0, sizeof(*d));
    d->ordinal = ordinal;
    int rc = 0, count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        rc = runner_cuda_fail((int)e, "cudaGetDeviceCount", err);
        if (rc != DV_ESTICKY) rc = DV_ENOGPU;
        snprintf(d->reason, sizeof(d->reason), "%s", err);
        return rc;
    }
    if (count == 0) {
        dv_seterr(err, "cudaGetDeviceCount: no CUDA device found");
        snprintf(d->reason, sizeof(d->reason), "%s", err);
        return DV_ENOGPU;
    }
    if (ordinal < 0 || ordinal >= count) {
        dv_seterr(err, "device: ordinal %d out of range, this machine has %d device(s) (0..%d)", ordinal, count,
                  count - 1);
        snprintf(d->reason, sizeof(d->reason), "%s", err);
        return DV_ERR;
    }
    struct cudaDeviceProp p;
    CUDA_TRY(cudaSetDevice(ordinal), "cudaSetDevice");
    CUDA_TRY(cudaGetDeviceProperties(&p, ordinal), "cudaGetDeviceProperties");
    int clock_khz = 0;
    CUDA_TRY(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal), "cudaDeviceGetAttribute(ClockRate)");
    CUDA_TRY(cudaDriverGetVersion(&d->driver_version), "cudaDriverGetVersion");
    CUDA_TRY(cudaRuntimeGetVersion(&d->runtime_version), "cudaRuntimeGetVersion");
    d->present = 1;
    driver_release(d->nvidia_driver_version, sizeof(d->nvidia_driver_version));
    snprintf(d->name, sizeof(d->name), "%s", p.name);
    d->cc_major = p.major;
    d->cc_minor = p.minor;
    d->sm_count = p.multiProcessorCount;
    d->warp_size = p.warpSize;
    d->rated_sm_clock_mhz = clock_khz / 1000.0;
    d->fp32_lanes_per_sm = runner_fp32_lanes(p.major, p.minor);
    d->total_mem_bytes = p.totalGlobalMem;
    d->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
cleanup:
    if (rc != 0) snprintf(d->reason, sizeof(d->reason), "%s", err);
    return rc;
}

int runner_measure_clock(double *mhz, char *err) {
    int rc = 0, dev = 0, sms = 0;
    long long *d_out = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    float ms = 0;
    CUDA_TRY(cudaGetDevice(&dev), "cudaGetDevice");
    CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
    CUDA_TRY(cudaMalloc((void **)&d_out, sizeof(long long) * (size_t)sms), "cudaMalloc(clock)");
    CUDA_TRY(cudaEventCreate(&start), "cudaEventCreate");
    CUDA_TRY(cudaEventCreate(&stop), "cudaEventCreate");
    /* One short spin first: the clock ramps up from idle. */
    if ((rc = dv_run_clock_spin(CLOCK_SPIN_CYCLES / 4, (unsigned)sms, d_out, err)) != 0) goto cleanup;
    CUDA_TRY(cudaEventRecord(start, 0), "cudaEventRecord");
    if ((rc = dv_run_clock_spin(CLOCK_SPIN_CYCLES, (unsigned)sms, d_out, err)) != 0) goto cleanup;
    CUDA_TRY(cudaEventRecord(stop, 0), "cudaEventRecord");
    CUDA_TRY(cudaEventSynchronize(stop), "clock spin");
    CUDA_TRY(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (ms <= 0) {
        dv_seterr(err, "clock: spin kernel timed at %.6f ms", ms);
        rc = DV_ERR;
        goto cleanup;
    }
    *mhz = (double)CLOCK_SPIN_CYCLES / (ms * 1e3);
cleanup:
    if (d_out) cudaFree(d_out);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    return rc;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void stats_compute(const double *s, unsigned n, double *scratch, struct dv_stats *out) {
    memset(out, 0, sizeof(*out));
    out->samples = n;
    if (n == 0) return;
    double sum = 0;
    for (unsigned i = 0; i < n; i++) sum += s[i];
    out->mean = sum / n;
    double var = 0;
    for (unsigned i = 0; i < n; i++) var += (s[i] - out->mean) * (s[i] - out->mean);
    out->stdev = n > 1 ? sqrt(var / (n - 1)) : 0.0;
    memcpy(scratch, s, n * sizeof(double));
    qsort(scratch, n, sizeof(double), cmp_double);
    out->min = scratch[0];
    out->max = scratch[n - 1];
    out->median = (n & 1) ? scratch[n / 2] : 0.5 * (scratch[n / 2 - 1] + scratch[n / 2]);
    out->noise = out->mean > 0 ? out->stdev / out->mean : 0.0;
}

int runner_time_rows(unsigned nrows, runner_launch_fn launch, void *ctx, const struct dv_options *o,
                     struct dv_stats *stats, double *gpu_ms, char *err) {
    int rc = 0;
    const unsigned min_s = o->min_samples ? o->min_samples : DV_DEFAULT_MIN_SAMPLES;
    const unsigned max_s = o->max_samples >= min_s ? o->max_samples : (min_s > DV_DEFAULT_MAX_SAMPLES ? min_s : DV_DEFAULT_MAX_SAMPLES);
    const size_t nev = (size_t)nrows * TIMING_BATCH;
    cudaEvent_t *start = calloc(nev, sizeof(*start));
    cudaEvent_t *stop = calloc(nev, sizeof(*stop));
    double *samples = malloc(sizeof(double) * (size_t)nrows * max_s);
    double *scratch = malloc(sizeof(double) * max_s);
    *gpu_ms = 0;
    if (nrows == 0 || !start || !stop || !samples || !scratch) {
        dv_seterr(err, "timing: out of memory for %u rows x %u samples", nrows, max_s);
        rc = DV_ERR;
        goto cleanup;
    }
    for (size_t e = 0; e < nev; e++) {
        CUDA_TRY(cudaEventCreate(&start[e]), "cudaEventCreate");
        CUDA_TRY(cudaEventCreate(&stop[e]), "cudaEventCreate");
    }
    /* Warm-up: one launch per row configuration (module load, first touch). */
    for (unsigned r = 0; r < nrows; r++)
        if ((rc = launch(ctx, r, err)) != 0) goto cleanup;
    CUDA_TRY(cudaDeviceSynchronize(), "warm-up");

    unsigned taken = 0;
    for (;;) {
        /* A batch of rounds is queued back to back, so the GPU never idles
         * between samples; an untimed lead-in launch absorbs the restart
         * after the host's synchronisation, which would otherwise land on
         * row 0 of every batch. */
        unsigned rounds = max_s - taken < TIMING_BATCH ? max_s - taken : TIMING_BATCH;
        if ((rc = launch(ctx, nrows - 1, err)) != 0) goto cleanup;
        for (unsigned b = 0; b < rounds; b++) {
            for (unsigned r = 0; r < nrows; r++) {
                const size_t e = (size_t)b * nrows + r;
                CUDA_TRY(cudaEventRecord(start[e], 0), "cudaEventRecord");
                if ((rc = launch(ctx, r, err)) != 0) goto cleanup;
                CUDA_TRY(cudaEventRecord(stop[e], 0), "cudaEventRecord");
            }
        }
        CUDA_TRY(cudaEventSynchronize(stop[(size_t)rounds * nrows - 1]), "timed launches");
        for (unsigned b = 0; b < rounds; b++) {
            for (unsigned r = 0; r < nrows; r++) {
                const size_t e = (size_t)b * nrows + r;
                float ms = 0;
                CUDA_TRY(cudaEventElapsedTime(&ms, start[e], stop[e]), "cudaEventElapsedTime");
                samples[(size_t)r * max_s + taken + b] = ms;
                *gpu_ms += ms;
            }
        }
        taken += rounds;
        for (unsigned r = 0; r < nrows; r++) stats_compute(samples + (size_t)r * max_s, taken, scratch, &stats[r]);
        if (taken < min_s) continue;
        int quiet = 1;
        for (unsigned r = 0; r < nrows; r++)
            if (stats[r].noise > o->max_noise) quiet = 0;
        if (quiet || *gpu_ms >= o->budget_ms || taken >= max_s) break;
    }
cleanup:
    for (size_t e = 0; start && stop && e < nev; e++) {
        if (start[e]) cudaEventDestroy(start[e]);
        if (stop[e]) cudaEventDestroy(stop[e]);
    }
    free(start);
    free(stop);
    free(samples);
    free(scratch);
    return rc;
}

/* Part 1 / Part 2 table state for the launch callback. */
struct table_ctx {
    const struct dv_table *t;
    struct dv_launch base;
    float *out[DV_MAX_ROWS];
    uint32_t *d_mask[DV_MAX_ROWS];
};

static int launch_row(void *vctx, unsigned row, char *err) {
    struct table_ctx *c = vctx;
    struct dv_launch l = c->base;
    l.out = c->out[row];
    l.mode = c->t->rows[row].mode;
    l.mask = c->d_mask[row];
    return dv_run_kernel(c->t->rows[row].kernel, &l, err);
}

/* Builds the host mask of row `i` of table `t` (phase 0). */
static uint32_t *row_mask(const struct dv_row *row, const struct dv_geometry *g, char *err) {
    struct predicate p;
    char why[ERR_LEN];
    if (row->kernel == DV_KERNEL_NOBRANCH) {
        memset(&p, 0, sizeof(p));
        p.mode = DV_ALWAYS_A;
    } else if (row->kernel == DV_KERNEL_PERITER) {
        memset(&p, 0, sizeof(p));
        p.mode = row->mode;
        p.uses = PREDICATE_USES_BLOCK;
    } else if (predicate_resolve(row->name, &p, why) != 0) {
        dv_seterr(err, "row '%s': %s", row->name, why);
        return NULL;
    }
    uint32_t *m = analysis_mask_build(&p, g, 0, err);
    predicate_cleanup(&p);
    return m;
}

static int measure_table(const struct dv_options *o, struct dv_report *r, struct dv_table *t, const float *d_in,
                         const float *ref_a, const float *ref_b, char *err) {
    int rc = 0;
    const struct dv_geometry g = {r->config.blocks, r->config.block_x, r->config.block_y};
    const unsigned long long n = analysis_threads(&g);
    const size_t words = analysis_mask_words(&g);
    struct table_ctx c;
    uint32_t *masks[DV_MAX_ROWS] = {0};
    struct dv_stats stats[DV_MAX_ROWS];
    float *h_out = malloc(sizeof(float) * n);
    memset(&c, 0, sizeof(c));
    c.t = t;
    c.base = (struct dv_launch){d_in, NULL, n, g.blocks, g.block_x, g.block_y, r->config.iterations, 0, NULL};
    if (!h_out) {
        dv_seterr(err, "out of memory for %llu outputs", n);
        rc = DV_ERR;
        goto cleanup;
    }
    for (unsigned i = 0; i < t->nrows; i++) {
        if (!(masks[i] = row_mask(&t->rows[i], &g, err))) {
            rc = DV_ERR;
            goto cleanup;
        }
        CUDA_TRY(cudaMalloc((void **)&c.out[i], sizeof(float) * n), "cudaMalloc(out)");
        CUDA_TRY(cudaMemset(c.out[i], 0xff, sizeof(float) * n), "cudaMemset(poison)");
        if (t->rows[i].kernel == DV_KERNEL_MASK) {
            CUDA_TRY(cudaMalloc((void **)&c.d_mask[i], sizeof(uint32_t) * words), "cudaMalloc(mask)");
            CUDA_TRY(cudaMemcpy(c.d_mask[i], masks[i], sizeof(uint32_t) * words, cudaMemcpyHostToDevice),
                     "cudaMemcpy(mask)");
        }
    }
    if ((rc = runner_time_rows(t->nrows, launch_row, &c, o, stats, &t->gpu_time_ms, err)) != 0) goto cleanup;

    t->noise_limit = o->max_noise;
    t->noise_ok = 1;
    for (unsigned i = 0; i < t->nrows; i++) {
        struct dv_row *row = &t->rows[i];
        row->time_ms = stats[i];
        row->measured = 1;
        if (row->time_ms.noise > o->max_noise) t->noise_ok = 0;
        CUDA_TRY(cudaMemcpy(h_out, c.out[i], sizeof(float) * n, cudaMemcpyDeviceToHost), "cudaMemcpy(out)");
        if (reference_check(row, &g, masks[i], ref_a, ref_b, r->config.iterations, h_out, &row->check, err) != 0) {
            rc = DV_ERR;
            goto cleanup;
        }
    }
    const double base = t->rows[t->baseline_row].time_ms.median;
    for (unsigned i = 0; i < t->nrows; i++) {
        struct dv_row *row = &t->rows[i];
        row->ratio = base > 0 ? row->time_ms.median / base : NAN;
    }
cleanup:
    for (unsigned i = 0; i < t->nrows; i++) {
        if (c.out[i]) cudaFree(c.out[i]);
        if (c.d_mask[i]) cudaFree(c.d_mask[i]);
        free(masks[i]);
    }
    free(h_out);
    return rc;
}

/* Picks whole waves of the Part 1 kernel long enough that the uniform row
 * runs at least 1 ms at the FMA floor. */
static int choose_blocks(const struct dv_options *o, struct dv_report *r, double clock_mhz, unsigned *blocks,
                         char *err) {
    const unsigned tpb = o->block_x * (o->block_y ? o->block_y : 1);
    int per_sm = 0, rc;
    if ((rc = dv_occupancy(DV_KERNEL_BRANCH, tpb, &per_sm, err)) != 0) return rc;
    if (per_sm <= 0) {
        dv_seterr(err, "blocks: auto found no resident block of %u threads per SM", tpb);
        return DV_ERR;
    }
    const struct dv_device *d = &r->device;
    const double wave_blocks = (double)d->sm_count * per_sm;
    const double rate = (double)d->sm_count * d->fp32_lanes_per_sm * clock_mhz * 1e3; /* FMAs per ms */
    const double wave_ms = rate > 0 ? wave_blocks * tpb * (double)o->iterations / rate : 1.0;
    unsigned waves = (unsigned)ceil(1.0 / (wave_ms > 0 ? wave_ms : 1.0));
    if (waves < 1) waves = 1;
    unsigned long long b = (unsigned long long)wave_blocks * waves;
    while (b * tpb > DV_MAX_GRID_THREADS && waves > 1) b = (unsigned long long)wave_blocks * --waves;
    *blocks = (unsigned)b;
    snprintf(r->config.blocks_reason, sizeof(r->config.blocks_reason),
             "auto: %d SMs x %d resident blocks of %u threads x %u waves = %llu blocks (one wave %.3f ms at the FMA floor)",
             d->sm_count, per_sm, tpb, waves, b, wave_ms);
    return 0;
}

int runner_measure(const struct dv_options *o_in, struct dv_report *r, char *err) {
    int rc = 0;
    struct dv_options o = *o_in;
    float *d_in = NULL, *h_in = NULL;
    float *ref_a = NULL, *ref_b = NULL;
    double t0 = now_ms(), clocks_sum = 0, clock_min = 0;
    unsigned nclocks = 0;

    utc_now(r->started_utc, sizeof(r->started_utc));
    if ((rc = runner_device_query(o.device, &r->device, err)) != 0) return rc;
    if (o.scenario[0]) {
        rc = scenario_measure(&o, r, err);
        r->wall_time_ms = now_ms() - t0;
        utc_now(r->finished_utc, sizeof(r->finished_utc));
        return rc;
    }

    double mhz = 0;
    if ((rc = runner_measure_clock(&mhz, err)) != 0) return rc;
    clocks_sum += mhz;
    clock_min = mhz;
    nclocks++;

    unsigned auto_blocks = 0;
    if (o.blocks == 0) {
        if ((rc = choose_blocks(&o, r, mhz, &auto_blocks, err)) != 0) return rc;
        o.blocks = auto_blocks;
    }
    char reason[sizeof(r->config.blocks_reason)];
    memcpy(reason, r->config.blocks_reason, sizeof(reason));
    if (experiment_plan(&o, r, err) != 0) return DV_ERR;
    if (auto_blocks) {
        r->config.blocks_auto = 1;
        memcpy(r->config.blocks_reason, reason, sizeof(reason));
    }

    const unsigned long long n = r->config.threads;
    h_in = malloc(sizeof(float) * n);
    ref_a = malloc(sizeof(float) * DV_INPUT_DISTINCT);
    ref_b = malloc(sizeof(float) * DV_INPUT_DISTINCT);
    if (!h_in || !ref_a || !ref_b) {
        dv_seterr(err, "out of memory for %llu inputs", n);
        rc = DV_ERR;
        goto cleanup;
    }
    if (reference_chains(r->config.iterations, ref_a, ref_b, err) != 0) {
        rc = DV_ERR;
        goto cleanup;
    }
    reference_input(h_in, n);
    CUDA_TRY(cudaMalloc((void **)&d_in, sizeof(float) * n), "cudaMalloc(in)");
    CUDA_TRY(cudaMemcpy(d_in, h_in, sizeof(float) * n, cudaMemcpyHostToDevice), "cudaMemcpy(in)");

    for (unsigned i = 0; i < r->ntables; i++) {
        if ((rc = measure_table(&o, r, &r->tables[i], d_in, ref_a, ref_b, err)) != 0) goto cleanup;
        r->gpu_time_ms += r->tables[i].gpu_time_ms;
        if ((rc = runner_measure_clock(&mhz, err)) != 0) goto cleanup;
        clocks_sum += mhz;
        if (mhz < clock_min) clock_min = mhz;
        nclocks++;
    }

    struct dv_device *d = &r->device;
    d->measured_sm_clock_mhz = clocks_sum / nclocks;
    d->measured_sm_clock_min_mhz = clock_min;
    if (d->rated_sm_clock_mhz > 0 && clock_min < 0.75 * d->rated_sm_clock_mhz)
        experiment_warn(r, "SM clock measured at %.0f MHz, below 75%% of the rated %.0f MHz: the GPU may be throttling",
                        clock_min, d->rated_sm_clock_mhz);
    const double rate = (double)d->sm_count * d->fp32_lanes_per_sm * d->measured_sm_clock_mhz * 1e3;
    r->config.fma_floor_ms = rate > 0 ? (double)r->config.fmas_per_launch / rate : 0.0;
    for (unsigned i = 0; i < r->ntables; i++) {
        struct dv_table *t = &r->tables[i];
        for (unsigned j = 0; j < t->nrows; j++) {
            struct dv_row *row = &t->rows[j];
            row->floor_fraction = row->time_ms.median > 0 ? r->config.fma_floor_ms / row->time_ms.median : NAN;
            if (!row->check.ok)
                experiment_warn(r, "%s: %s: %llu of %llu outputs wrong, first at thread %lld", t->id, row->name,
                                row->check.mismatches, row->check.checked, row->check.first_mismatch);
        }
        if (!t->noise_ok)
            experiment_warn(r, "%s: some row's noise is over %.2f%% after %.0f ms of GPU time", t->id,
                            t->noise_limit * 100, t->gpu_time_ms);
    }
    r->measured = 1;
cleanup:
    if (d_in) cudaFree(d_in);
    free(h_in);
    free(ref_a);
    free(ref_b);
    r->wall_time_ms = now_ms() - t0;
    utc_now(r->finished_utc, sizeof(r->finished_utc));
    return rc;
}

/* measure.c -- the one measurement entry point (measure.h). */
#include "gpu/measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/timeutil.h"
#include "gpu/counters.h"
#include "gpu/cuda_call.h"
#include "gpu/device.h"
#include "gpu/lesson_measure.h"
#include "gpu/scenario_measure.h"
#include "gpu/smclock.h"
#include "model/chain.h"
#include "model/reference.h"

static unsigned long long input_threads(const struct dv_options *o, const struct dv_report *r) {
    unsigned long long n = r->config.threads;
    for (unsigned i = 0; i < r->ntables; i++) {
        if (!experiment_table_is_scenario(&r->tables[i])) continue;
        unsigned blocks = o->blocks ? o->blocks : DV_DEFAULT_BLOCKS;
        unsigned tpb = (o->block_x ? o->block_x : DV_DEFAULT_BLOCK_X) * (o->block_y ? o->block_y : 1u);
        unsigned long long s = (unsigned long long)blocks * tpb;
        if (s > n) n = s;
    }
    return n;
}

static int measure_tables(const struct dv_options *o, struct dv_report *r, double *clocks_sum, double *clock_min,
                          unsigned *nclocks, struct counters **cnt, char *err) {
    int rc = 0;
    float *h_in = NULL, *d_in = NULL, *ref_a = NULL, *ref_b = NULL;
    const unsigned long long n = input_threads(o, r);
    int lesson = 0;
    for (unsigned i = 0; i < r->ntables; i++) lesson |= !experiment_table_is_scenario(&r->tables[i]);

    h_in = malloc(sizeof(float) * n);
    ref_a = malloc(sizeof(float) * DV_INPUT_DISTINCT);
    ref_b = malloc(sizeof(float) * DV_INPUT_DISTINCT);
    if (!h_in || !ref_a || !ref_b) {
        dv_seterr(err, "out of memory for %llu inputs", n);
        rc = DV_ERR;
        goto cleanup;
    }
    if (lesson && reference_chains(r->config.iterations, ref_a, ref_b, err) != 0) {
        rc = DV_ERR;
        goto cleanup;
    }
    reference_input(h_in, n);
    if ((rc = cuda_call(cudaMalloc((void **)&d_in, sizeof(float) * n), "cudaMalloc(in)", err)) != 0 ||
        (rc = cuda_call(cudaMemcpy(d_in, h_in, sizeof(float) * n, cudaMemcpyHostToDevice), "cudaMemcpy(in)", err)) != 0)
        goto cleanup;

    for (unsigned i = 0; i < r->ntables; i++) {
        struct dv_table *t = &r->tables[i];
        double mhz = *clocks_sum / *nclocks;
        rc = experiment_table_is_scenario(t)
                 ? scenario_measure_table(o, &r->device, mhz, t, d_in, &r->testimony, cnt, err)
                 : lesson_measure_table(o, r, t, d_in, ref_a, ref_b, &r->testimony, cnt, err);
        if (rc != 0) goto cleanup;
        r->gpu_time_ms += t->gpu_time_ms;
        if ((rc = smclock_measure(&mhz, err)) != 0) goto cleanup;
        *clocks_sum += mhz;
        if (mhz < *clock_min) *clock_min = mhz;
        (*nclocks)++;
    }
cleanup:
    if (d_in) cudaFree(d_in);
    free(h_in);
    free(ref_a);
    free(ref_b);
    return rc;
}

int measure_run(const struct dv_options *o_in, struct dv_report *r, char *err) {
    int rc = 0;
    struct dv_options o = *o_in;
    double t0 = timeutil_now_ms(), mhz = 0;
    unsigned nclocks = 1;
    struct counters *cnt = NULL;

    timeutil_utc(time(NULL), r->started_utc, sizeof(r->started_utc));
    if ((rc = device_query(o.device, &r->device, err)) != 0) goto done;
    if ((rc = smclock_measure(&mhz, err)) != 0) goto done;
    double clocks_sum = mhz, clock_min = mhz;

    unsigned auto_blocks = 0;
    if (o.blocks == 0 && !o.scenario[0]) {
        if ((rc = lesson_choose_blocks(&o, r, mhz, &auto_blocks, err)) != 0) goto done;
        o.blocks = auto_blocks;
    }
    char reason[sizeof(r->config.blocks_reason)];
    memcpy(reason, r->config.blocks_reason, sizeof(reason));
    if (experiment_plan(&o, r, err) != 0) {
        rc = DV_ERR;
        goto done;
    }
    if (auto_blocks) {
        r->config.blocks_auto = 1;
        memcpy(r->config.blocks_reason, reason, sizeof(reason));
    }
    struct dv_testimony *tm = &r->testimony;
    tm->witness_requested = !o.no_witness;
    tm->counters_requested = !o.no_counters;
    if (o.no_witness) snprintf(tm->witness_reason, sizeof(tm->witness_reason), "not requested (witness: false)");
    if (o.no_counters)
        snprintf(tm->counters_reason, sizeof(tm->counters_reason), "not requested (counters: false)");
    else
        cnt = counters_create(o.device, r->device.cc_major, tm->counters_library, tm->counters_reason);
    rc = measure_tables(&o, r, &clocks_sum, &clock_min, &nclocks, &cnt, err);
    tm->witness_taken = !o.no_witness && rc == 0;
    tm->counters_taken = cnt != NULL && rc == 0;
    counters_free(cnt);
    cnt = NULL;
    if (tm->counters_requested && !tm->counters_taken && tm->counters_reason[0])
        experiment_warn(r, "hardware counters: %s", tm->counters_reason);
    if (rc != 0) goto done;

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
        if (experiment_table_is_scenario(t)) continue; /* scenario rows carry their own FMA counts */
        for (unsigned j = 0; j < t->nrows; j++) {
            struct dv_row *row = &t->rows[j];
            row->floor_fraction = row->time_ms.median > 0 ? r->config.fma_floor_ms / row->time_ms.median : NAN;
        }
    }
    r->measured = 1;
    rc = experiment_gate(r, o.max_noise, err);
done:
    r->wall_time_ms = timeutil_now_ms() - t0;
    timeutil_utc(time(NULL), r->finished_utc, sizeof(r->finished_utc));
    return rc;
}

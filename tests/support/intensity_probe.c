/* intensity_probe.c -- one arithmetic-intensity table's rows on the GPU,
 * for the comparison with Nsight Compute (tests/kernels/gpu/
 * test_gpu_intensity.c, tests/bench/intensity_gpu.sh):
 *
 *   intensity_probe launch TABLE ROW [BLOCKS]
 *       sets the table's rows up as a measurement does and launches row
 *       ROW's timed kernel on its whole grid twice (ncu --launch-skip 1
 *       profiles the second, after the buffers' first touch);
 *   intensity_probe count TABLE [BLOCKS]
 *       the table measured as the suite measures it (scenario_measure_table:
 *       timing, checks, the witness and the counter pass, then the DRAM pass,
 *       gpu/intensity_measure.h: each row's whole grid after an L2 flush,
 *       dram__bytes_read.sum through CUPTI, on the profiler the counter pass
 *       used); one line a row: "row NAME dram_bytes_read X", then one line
 *       "counters taken|not taken: REASON".
 * BLOCKS: the grid's blocks (4096, the suite's, by default). Exit 0, 2 for
 * bad arguments, 3 without counters (the reason printed), 1 otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gpu/counters.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/intensity_measure.h"
#include "kernels/gpu/scenario_measure.h"
#include "kernels/gpu/scenario_rows.h"
#include "kernels/gpu/session.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"

static int usage(void) {
    fprintf(stderr, "usage: intensity_probe launch TABLE ROW [BLOCKS] | count TABLE [BLOCKS]\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 3) return usage();
    const int launch = strcmp(argv[1], "launch") == 0;
    if (!launch && strcmp(argv[1], "count") != 0) return usage();
    if (launch && argc < 4) return usage();
    const struct scenario *s = scenario_find(argv[2]);
    if (!s || s->kind != SCENARIO_MEM) {
        fprintf(stderr, "intensity_probe: %s is no arithmetic-intensity table\n", argv[2]);
        return 2;
    }
    const unsigned row = launch ? (unsigned)strtoul(argv[3], NULL, 10) : 0;
    const char *b = argc > (launch ? 4 : 3) ? argv[launch ? 4 : 3] : "4096";
    struct dv_options o;
    experiment_defaults(&o);
    o.blocks = (unsigned)strtoul(b, NULL, 10);
    snprintf(o.scenario, sizeof o.scenario, "%s", s->name);
    if (row >= s->nrows || o.blocks == 0) return usage();
    char err[ERR_LEN] = "", library[256] = "", reason[ERR_LEN] = "";
    int rc = 1;
    struct session *ss = session_create();
    struct scenario_rows *c = calloc(1, sizeof *c);
    struct dv_report *r = experiment_report_create();
    struct dv_device dev;
    if (!ss || !c || !r) goto cleanup;
    if (session_device(ss, 0, &dev, err) != 0) goto cleanup;
    const struct dv_geometry g = scenario_grid(&o);
    const unsigned long long n = (unsigned long long)g.blocks * g.block_x * g.block_y;
    int irc = 0;
    const float *in = session_input(ss, n, &irc, err);
    if (!in) goto cleanup;
    if (launch) {
        if (scenario_rows_setup(c, s, &o, in, 1u << row, err) != 0) goto cleanup;
        for (int k = 0; k < 2; k++)
            if (scenario_rows_launch(c, row, 0, 0, c->blocks, NULL, NULL, err) != 0) goto cleanup;
        if (DV_CUDA_CALL(cudaDeviceSynchronize(), err) != 0) goto cleanup;
        printf("launched %s row %u (%s) on %u blocks, twice\n", s->name, row, s->rows[row].name, c->blocks);
        rc = 0;
        goto cleanup;
    }
    struct counters *cnt = session_counters(ss, &dev, library, reason);
    if (!cnt) {
        fprintf(stderr, "intensity_probe: no counters: %s\n", reason);
        rc = 3;
        goto cleanup;
    }
    struct dv_table *t = &r->tables[0];
    const char *field = NULL;
    if (scenario_build_table(s, &o, t, NULL, &field, err) != 0) goto cleanup;
    if (scenario_measure_table(ss, &o, &dev, dev.rated_sm_clock_mhz, NULL, t, in, &r->testimony, &cnt, err) != 0)
        goto cleanup;
    if (t->dram_reason[0]) {
        fprintf(stderr, "intensity_probe: %s\n", t->dram_reason);
        rc = 3;
        goto cleanup;
    }
    for (unsigned k = 0; k < t->nrows; k++)
        printf("row %s dram_bytes_read %.0f\n", t->rows[k].name, t->rows[k].counters.dram_bytes_read);
    unsigned with_counters = 0;
    for (unsigned k = 0; k < t->nrows; k++) with_counters += t->rows[k].counters.present;
    printf("counters %s: %u of %u rows%s%s\n", cnt && with_counters == t->nrows ? "taken" : "not taken", with_counters,
           t->nrows, r->testimony.counters_reason[0] ? ": " : "", r->testimony.counters_reason);
    rc = 0;
cleanup:
    if (rc == 1) fprintf(stderr, "intensity_probe: %s\n", err[0] ? err : "out of memory");
    if (c) scenario_rows_cleanup(c);
    free(c);
    experiment_report_free(r);
    session_free(ss);
    return rc;
}

/* gpu_main.c -- the `divergence-gpu` binary: the commands that touch the GPU.
 *
 *   measure   measure the tables on the GPU (`divergence measure` execs this)
 *   worker    the GPU worker the server starts (jobs/workerproc.h)
 *
 * It is the only binary that links the CUDA runtime (kernels/gpu).
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "gpu/measure.h"
#include "jobs/workerproc.h"

static int measure_main(int argc, char **argv) {
    struct dv_options o;
    int json, rc;
    char err[ERR_LEN] = "";
    if ((rc = cli_parse(argc, argv, &o, &json)) != 0) return rc == CLI_HELP_SHOWN ? CLI_EXIT_OK : rc;
    struct dv_report *r = experiment_report_create();
    if (!r) {
        fprintf(stderr, "divergence measure: out of memory\n");
        return CLI_EXIT_FAILED;
    }
    rc = cli_finish_measure(measure_run(&o, r, err), err, r, json);
    experiment_report_free(r);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs("usage: divergence-gpu measure [options] | worker\n", stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "measure") == 0) return measure_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "worker") == 0) return workerproc_main(argc - 1, argv + 1);
    fprintf(stderr, "divergence-gpu: unknown command '%s' (measure, worker)\n", argv[1]);
    return CLI_EXIT_USAGE;
}

/* gpu_main.c -- the `divergence-gpu` binary: the commands that touch the GPU.
 *
 *   measure       measure the tables on the GPU (`divergence measure` execs this)
 *   worker        the GPU worker the server starts (jobs/workerproc.h)
 *   instructions  one row's instruction profile, in a process of its own
 *                 (the worker starts it per row: cmd/instr_cmd.h)
 *
 * It is the only binary that links the CUDA runtime (kernels/gpu).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/jsonout.h"
#include "server/cmd/cli.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/session.h"
#include "server/cmd/instr_cmd.h"
#include "server/jobs/instrproc.h"
#include "server/jobs/workerproc.h"

/* Progress on a terminal: one line per table as it starts and ends, with
 * the samples taken and the GPU time spent (gpu/session.h's hook). */
static void progress(void *ctx, unsigned table, unsigned ntables, const struct dv_table *t, int done) {
    (void)ctx;
    if (!done) {
        fprintf(stderr, "measuring table %u of %u: %s (%u rows)...\n", table + 1, ntables, t->title, t->nrows);
        return;
    }
    unsigned long long samples = 0;
    for (unsigned i = 0; i < t->nrows; i++) samples += t->rows[i].time_ms.samples;
    fprintf(stderr, "  table %u of %u done: %llu samples over %u rows, %.1f ms of GPU time%s\n", table + 1, ntables,
            samples, t->nrows, t->gpu_time_ms, t->noise_ok ? "" : " (a row stayed over the noise target)");
}

static int measure_main(int argc, char **argv) {
    struct dv_options o;
    signal(SIGPIPE, SIG_IGN); /* a profiling process that ends early must not end this one */
    int json, rc;
    char err[ERR_LEN] = "";
    if ((rc = cli_parse(argc, argv, &o, &json)) != 0) return rc == CLI_HELP_SHOWN ? CLI_EXIT_OK : rc;
    struct dv_report *r = experiment_report_create();
    struct session *s = session_create();
    if (!r || !s) {
        fprintf(stderr, "divergence measure: out of memory\n");
        experiment_report_free(r);
        session_free(s);
        return CLI_EXIT_FAILED;
    }
    if (!json && isatty(STDERR_FILENO)) session_set_progress(s, progress, NULL);
    int mrc = measure_run_session(s, &o, r, err);
    /* The instruction profiles, as the worker takes them (jobs/instrproc.h). */
    if ((mrc == 0 || mrc == DV_EGATE) && o.instructions && !session_lost(s)) {
        struct instrproc_config ic = {.device = o.device, .disassembler = getenv("DV_DISASSEMBLER")};
        char ierr[ERR_LEN] = "";
        struct instrproc *ip = instrproc_create(&ic, ierr);
        instrproc_report(ip, &o, r);
        if (!ip) snprintf(r->testimony.instructions_reason, sizeof r->testimony.instructions_reason, "%s", ierr);
        instrproc_free(ip);
    }
    rc = cli_finish_measure(mrc, err, r, json);
    session_free(s);
    experiment_report_free(r);
    return rc;
}

int main(int argc, char **argv) {
    jsonout_use_malloc(NULL); /* before any thread: see jsonout.h */
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs("usage: divergence-gpu measure [options] [--json]   (what `divergence measure` runs)\n"
              "       divergence-gpu worker                      (started by `divergence serve`)\n"
              "       divergence-gpu instructions --table T --row R  (started by the worker)\n"
              "see divergence measure --help\n",
              argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "measure") == 0) return measure_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "worker") == 0) return workerproc_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "instructions") == 0) return instr_cmd_main(argc - 1, argv + 1);
    fprintf(stderr, "divergence-gpu: unknown command '%s' (measure, worker, instructions)\n", argv[1]);
    return CLI_EXIT_USAGE;
}

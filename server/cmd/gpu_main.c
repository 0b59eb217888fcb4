/* gpu_main.c -- the `divergence-gpu` binary: the commands that touch the GPU.
 *
 *   measure   measure the tables on the GPU (`divergence measure` execs this);
 *             with --suite NAME|all --evidence-dir DIR it files each suite's
 *             result in an evidence store as the nightly refresh would
 *             (tests/fixtures/capture.sh makes the demo capture this way)
 *   worker    the GPU worker the server starts (jobs/workerproc.h)
 *   instructions  one row's instruction profile, in a process of its own
 *             (the worker starts it per row: cmd/instr_cmd.h)
 *
 * It is the only binary that links the CUDA runtime (kernels/gpu).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "api/jsonout.h"
#include "api/report.h"
#include "kernels/base/timeutil.h"
#include "server/cmd/cli.h"
#include "server/cmd/instr_cmd.h"
#include "server/evidence/refresh.h"
#include "server/evidence/suites.h"
#include "server/jobs/instrproc.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/session.h"
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
    fprintf(stderr, "  table %u of %u done: %llu samples over %u rows, %.1f ms of GPU time, stopped on %s%s\n",
            table + 1, ntables, samples, t->nrows, t->gpu_time_ms, t->stop_reason[0] ? t->stop_reason : "?",
            t->intervals_ok ? "" : " (an interval stayed over its target)");
}

/* Files the measurement of suite `name` in the evidence store `dir` as the
 * nightly refresh does (refresh_file_measurement) and says what it filed,
 * or why not, on stderr. Returns 0 when it was filed and passed the gates. */
static int file_evidence(const char *dir, const char *name, const struct dv_options *o, const struct dv_report *r,
                         const char *doc, const char *started, const char *night, const struct cli_args *a) {
    char err[ERR_LEN] = "", why[ERR_LEN] = "";
    int ok = 0;
    if (refresh_file_measurement(dir, name, o, r, doc, started, night, a->file_as != NULL, a->replace_night, &ok, why,
                                 err) != 0) {
        fprintf(stderr, "divergence measure: %s: not filed in %s: %s\n", name, dir, err);
        return -1;
    }
    fprintf(stderr, "divergence measure: %s: filed in %s (%s%s%s)\n", name, dir, ok ? "ok" : "failed", ok ? "" : ": ",
            ok ? "" : why);
    return ok ? 0 : -1;
}

/* One measurement of `o` printed in `a->format`, filed as suite `suite` in
 * a->evidence_dir under `night` when both are given. Returns the exit status. */
static int measure_one(struct session *s, const struct dv_options *o, const struct cli_args *a, const char *suite,
                       const char *night) {
    char err[ERR_LEN] = "", started[32];
    struct dv_report *r = experiment_report_create();
    if (!r) {
        fprintf(stderr, "divergence measure: out of memory\n");
        return CLI_EXIT_FAILED;
    }
    timeutil_utc(time(NULL), started, sizeof started);
    int mrc = measure_run_session(s, o, r, err);
    /* The instruction profiles, as the worker takes them (jobs/instrproc.h). */
    if ((mrc == 0 || mrc == DV_EGATE) && o->instructions && !session_lost(s)) {
        /* DV_INSTRUCTIONS_BUDGET_MS: the run's time for new profiles (a
         * table of many rows, such as the predication map's, asked for cold
         * in one run; the worker's is INSTRPROC_BUDGET_MS). */
        const char *budget = getenv("DV_INSTRUCTIONS_BUDGET_MS");
        struct instrproc_config ic = {.device = o->device,
                                      .disassembler = getenv("DV_DISASSEMBLER"),
                                      .before_child = session_release_profiler,
                                      .before_child_ctx = s,
                                      .budget_ms = budget ? strtod(budget, NULL) : 0,
                                      /* one report: a server would be started for one request */
                                      .one_shot = 1};
        char ierr[ERR_LEN] = "";
        struct instrproc *ip = instrproc_create(&ic, ierr);
        instrproc_report(ip, o, r);
        if (!ip) snprintf(r->testimony.instructions_reason, sizeof r->testimony.instructions_reason, "%s", ierr);
        instrproc_free(ip);
    }
    int rc = cli_finish_measure(mrc, err, r, a->format);
    if (a->evidence_dir && suite && (mrc == 0 || mrc == DV_EGATE)) {
        /* Filed, the suite's own gates decide (its noise limit is the
         * night's, not --max-noise's target), as they do for a refresh. */
        char *doc = report_json(r, 0);
        rc = doc && file_evidence(a->evidence_dir, suite, o, r, doc, started, night, a) == 0 ? CLI_EXIT_OK
                                                                                             : CLI_EXIT_FAILED;
        free(doc);
    }
    experiment_report_free(r);
    return rc;
}

static int measure_main(int argc, char **argv) {
    struct dv_options o;
    signal(SIGPIPE, SIG_IGN); /* a profiling process that ends early must not end this one */
    struct cli_args a;
    int rc;
    if ((rc = cli_parse(argc, argv, &o, &a)) != 0) return rc == CLI_HELP_SHOWN ? CLI_EXIT_OK : rc;
    struct session *s = session_create();
    if (!s) {
        fprintf(stderr, "divergence measure: out of memory\n");
        return CLI_EXIT_FAILED;
    }
    if (a.format == CLI_FORMAT_TEXT && isatty(STDERR_FILENO)) session_set_progress(s, progress, NULL);
    /* Every suite of one run is filed under the night it started (UTC). */
    char night[16];
    timeutil_date(time(NULL), night, sizeof night);
    /* The capture's --file-as (validated by cli_parse): the record says it. */
    if (a.file_as) snprintf(night, sizeof night, "%s", a.file_as);
    if (a.suite && strcmp(a.suite, "all") == 0) {
        /* Every suite in turn, on one session: the worst status wins. */
        rc = CLI_EXIT_OK;
        for (size_t i = 0; i < suites_count(); i++) {
            struct dv_options so;
            char err[ERR_LEN];
            const char *name = suites_get(i)->name;
            if (cli_suite_options(name, &o, &so, err) != 0) {
                fprintf(stderr, "divergence measure: %s\n", err);
                rc = CLI_EXIT_USAGE;
                break;
            }
            fprintf(stderr, "divergence measure: suite %s (%zu of %zu)\n", name, i + 1, suites_count());
            int one = measure_one(s, &so, &a, name, night);
            if (one > rc) rc = one;
            if (one == CLI_EXIT_NOGPU || one == CLI_EXIT_CUDA) break;
        }
    } else {
        rc = measure_one(s, &o, &a, a.suite, night);
    }
    session_free(s);
    return rc;
}

int main(int argc, char **argv) {
    jsonout_use_malloc(NULL); /* before any thread: see jsonout.h */
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(
            "usage: divergence-gpu measure [options] [--json]   (what `divergence measure` runs)\n"
            "       divergence-gpu worker                      (started by `divergence serve`)\n"
            "       divergence-gpu instructions --table T --row R  (started by the worker)\n"
            "       divergence-gpu analyze [options] | suites    (as divergence's: no server linked)\n"
            "see divergence measure --help\n",
            argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "measure") == 0) return measure_main(argc - 1, argv + 1);
    /* The capture's own check (tests/fixtures/capture_check.py) plans each
     * suite with this binary where `divergence` cannot run (a GPU host
     * without libmicrohttpd): the same code, no server linked. */
    if (strcmp(argv[1], "analyze") == 0) return cli_analyze(argc - 1, argv + 1);
    if (strcmp(argv[1], "suites") == 0) return cli_suites();
    if (strcmp(argv[1], "worker") == 0) return workerproc_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "instructions") == 0) return instr_cmd_main(argc - 1, argv + 1);
    fprintf(stderr, "divergence-gpu: unknown command '%s' (measure, worker, instructions, analyze, suites)\n", argv[1]);
    return CLI_EXIT_USAGE;
}

/* cli.c -- `divergence analyze` and `divergence measure`: options, output
 * and exit statuses. The measurement itself runs in `divergence-gpu`
 * (gpu_main.c), which this binary execs, so `divergence` links no CUDA.
 *
 * Both take the same options as POST /measure (api/options.c validates them
 * with the same rules, naming the --option in errors) and print the lesson's
 * text layout, or with --json the divergence.v1 document the server returns.
 * `measure` exits with a distinct status when there is no GPU (3) or CUDA
 * failed (4), saying what CUDA reported, and with 1 when it measured but a
 * correctness check failed or a table stayed noisier than --max-noise.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cmd/cli.h"
#include "api/options.h"
#include "api/report.h"
#include "server/cmd/sibling.h"

void cli_usage_options(void) {
    fputs("options (analyze, measure):\n"
          "  --part 1|2|all              which of the lesson's tables (default all)\n"
          "  --predicates a,b,...        Part 1 rows: built-in names or expressions\n"
          "                              (default lane-parity,lane-half,warp-parity,block-parity)\n"
          "  --baseline NAME             the row ratios are against (default warp-parity)\n"
          "  --blocks N|auto             grid size (default 4096; auto: whole waves, >= 1 ms)\n"
          "  --threads-per-block N|XxY   block size, 1D or 2D, up to 1024 threads (default 256)\n"
          "  --iterations N              multiply-adds per thread (default 4096)\n"
          "  --max-noise F               target relative stdev per row (default 0.005)\n"
          "  --budget-ms MS              GPU time per table (default 2000)\n"
          "  --min-samples N, --max-samples N\n"
          "  --scenario NAME|all         the scenario suite instead of Part 1/2\n"
          "  --device N                  CUDA device ordinal (default 0)\n"
          "  --witness on|off            the active-lane witness launch per row (default on)\n"
          "  --counters on|off           CUPTI hardware counters per row (default on)\n"
          "  --instructions on|off       each row's instruction profile: SASS counts per instruction, regions,\n"
          "                              stall reasons (default off; a process per row, cached)\n"
          "  --json                      print the divergence.v1 document\n",
          stdout);
}

void cli_usage(const char *cmd) {
    if (strcmp(cmd, "measure") == 0)
        fputs("usage: divergence measure [options] [--json]\n"
              "Measures the lesson's tables on the GPU and prints them in the lesson's layout\n"
              "(or, with --json, the divergence.v1 document POST /measure returns). On a terminal,\n"
              "progress goes to stderr; with --json or when stderr is not a terminal, only errors do.\n\n",
              stdout);
    else
        fputs("usage: divergence analyze [options] [--json]\n"
              "Prints what the model predicts for each row (warps split, threads on path A,\n"
              "path-runs, predicted ratio) without a GPU, in the lesson's layout or, with --json,\n"
              "as a divergence.v1 document (what POST /analyze returns).\n\n",
              stdout);
    cli_usage_options();
    if (strcmp(cmd, "measure") == 0)
        fputs("\nexit status:\n"
              "  0  measured, every check passed and every table met its noise target\n"
              "  1  measured, but a correctness check failed or a table stayed over --max-noise\n"
              "  2  bad option or value (the message names it)\n"
              "  3  no usable GPU (CUDA's reason on stderr)\n"
              "  4  a CUDA error while measuring\n",
              stdout);
    else
        fputs("\nexit status:\n"
              "  0  printed the analysis\n"
              "  1  out of memory\n"
              "  2  bad option, value or predicate (the message names it, with the column)\n",
              stdout);
}

int cli_parse(int argc, char **argv, struct dv_options *o, int *json) {
    char err[ERR_LEN];
    experiment_defaults(o);
    *json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            *json = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            cli_usage(argv[0]);
            return CLI_HELP_SHOWN;
        }
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "divergence %s: unexpected argument '%s' (see divergence %s --help)\n", argv[0], a, argv[0]);
            return CLI_EXIT_USAGE;
        }
        /* --opt=value or --opt value */
        char name[64];
        const char *value;
        const char *eq = strchr(a, '=');
        if (eq) {
            snprintf(name, sizeof(name), "%.*s", (int)(eq - a), a);
            value = eq + 1;
        } else {
            snprintf(name, sizeof(name), "%s", a);
            if (i + 1 >= argc) {
                fprintf(stderr, "divergence %s: %s needs a value\n", argv[0], name);
                return CLI_EXIT_USAGE;
            }
            value = argv[++i];
        }
        if (options_set_cli(o, name, value, err) != 0) {
            fprintf(stderr, "divergence %s: %s\n", argv[0], err);
            return CLI_EXIT_USAGE;
        }
    }
    if (options_validate(o, OPTIONS_CLI, NULL, err) != 0) {
        fprintf(stderr, "divergence %s: %s\n", argv[0], err);
        return CLI_EXIT_USAGE;
    }
    return 0;
}

static int emit(const struct dv_report *r, int json) {
    char *s = json ? report_json(r, 1) : report_text(r);
    if (!s) {
        fprintf(stderr, "divergence: out of memory formatting the report\n");
        return -1;
    }
    fputs(s, stdout);
    if (json) fputc('\n', stdout);
    free(s);
    return 0;
}

int cli_analyze(int argc, char **argv) {
    struct dv_options o;
    int json, rc;
    char err[ERR_LEN];
    if ((rc = cli_parse(argc, argv, &o, &json)) != 0) return rc == CLI_HELP_SHOWN ? CLI_EXIT_OK : rc;
    struct dv_report *r = experiment_report_create();
    if (!r) {
        fprintf(stderr, "divergence analyze: out of memory\n");
        return CLI_EXIT_FAILED;
    }
    rc = CLI_EXIT_OK;
    if (experiment_plan(&o, r, NULL, err) != 0) {
        fprintf(stderr, "divergence analyze: %s\n", err);
        rc = CLI_EXIT_USAGE;
    } else if (emit(r, json) != 0) {
        rc = CLI_EXIT_FAILED;
    }
    experiment_report_free(r);
    return rc;
}

int cli_exit_status(int measure_rc, const struct dv_report *r) {
    switch (measure_rc) {
    case 0:
    case DV_EGATE: break;
    case DV_ENOGPU: return CLI_EXIT_NOGPU;
    default: return CLI_EXIT_CUDA;
    }
    int rc = measure_rc == DV_EGATE ? CLI_EXIT_FAILED : CLI_EXIT_OK;
    for (unsigned i = 0; i < r->ntables; i++) {
        const struct dv_table *t = &r->tables[i];
        if (!t->noise_ok) rc = CLI_EXIT_FAILED;
        for (unsigned j = 0; j < t->nrows; j++)
            if (!t->rows[j].check.ok) rc = CLI_EXIT_FAILED;
    }
    return rc;
}

int cli_finish_measure(int measure_rc, const char *err, const struct dv_report *r, int json) {
    int rc = cli_exit_status(measure_rc, r);
    switch (measure_rc) {
    case 0: break;
    case DV_EGATE: fprintf(stderr, "divergence measure: correctness gate failed: %s\n", err); break;
    case DV_ENOGPU: fprintf(stderr, "divergence measure: no usable GPU: %s\n", err); return rc;
    case DV_ESTICKY: fprintf(stderr, "divergence measure: CUDA error (context lost): %s\n", err); return rc;
    default: fprintf(stderr, "divergence measure: %s\n", err); return rc;
    }
    if (emit(r, json) != 0) return CLI_EXIT_FAILED;
    return rc;
}

int cli_measure(int argc, char **argv) {
    char err[ERR_LEN] = "";
    sibling_exec(SIBLING_GPU, argv, err);
    fprintf(stderr, "divergence measure: %s\n", err);
    return CLI_EXIT_CUDA;
}

/* cli.c -- `divergence analyze` and `divergence measure`: options, output
 * and exit statuses. The measurement itself runs in `divergence-gpu`
 * (gpu_main.c), which this binary execs, so `divergence` links no CUDA.
 *
 * Both take the same options as POST /measure (api/options.c validates them
 * with the same rules, naming the --option in errors) and print the lesson's
 * text layout, or with --json the divergence.v1 document the server returns.
 * `measure` exits with a distinct status when there is no GPU (3) or CUDA
 * failed (4), saying what CUDA reported, and with 1 when it measured but a
 * correctness check failed or an interval was still wider than
 * --max-halfwidth when sampling stopped.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/cmd/cli.h"
#include "api/options.h"
#include "api/report.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/plan.h"
#include "server/cmd/sibling.h"
#include "server/evidence/names.h"
#include "server/evidence/suites.h"
#include "server/evidence/types.h"

void cli_usage_options(void) {
    fputs(
        "options (analyze, measure):\n"
        "  --part 1|2|all              which of the lesson's tables (default all)\n"
        "  --predicates a,b,...        Part 1 rows: built-in names or expressions\n"
        "                              (default lane-parity,lane-half,warp-parity,block-parity)\n"
        "  --baseline NAME             the row ratios are against (default warp-parity)\n"
        "  --blocks N|auto             grid size (default 4096; auto: whole waves, >= 1 ms)\n"
        "  --threads-per-block N|XxY   block size, 1D or 2D, up to 1024 threads (default 256)\n"
        "  --iterations N              multiply-adds per thread (default 4096)\n"
        "  --scenario NAME|CELL|all    the scenario suite's tables instead of Part 1 and 2\n"
        "                              (--part, --predicates and --baseline do not apply)\n",
        stdout);
    /* The names, wrapped under the option's text. */
    const char *indent = "                              ";
    int col = printf("%snames:", indent);
    for (size_t i = 0; scenario_get(i); i++) {
        char item[96];
        int n = snprintf(item, sizeof item, " %s (%s)%s", scenario_get(i)->name, scenario_get(i)->cell,
                         scenario_get(i + 1) ? "," : ";");
        if (col + n > 100) {
            col = printf("\n%s", indent) - 1;
            col += printf("%s", item + 1); /* no blank after the indent */
        } else {
            col += printf("%s", item);
        }
    }
    printf("\n%sa worked-case id (C1, ... C10) names its scenarios\n", indent);
    printf("%sdata-sort: data-dependent divergence and the sort (12 cells); data-sort-uniform,\n"
           "%s-zipf, -tiles, -presorted: one distribution's full grid (16 cells)\n",
           indent, indent);
    fputs("  --suite NAME                an evidence suite's whole request:\n                              ", stdout);
    for (size_t i = 0; i < suites_count(); i++) printf("%s%s", i ? ", " : "", suites_get(i)->name);
    fputs(
        " (measure: or all)\n"
        "  --predicates or --baseline with --part 2 (its rows are fixed), or --part, --predicates or\n"
        "  --baseline with --scenario, do not apply: each is warned of on stderr and not used, and the\n"
        "  run goes on (POST /analyze and POST /measure answer them with the same warning)\n"
        "options (measure only; analyze refuses them):\n"
        "  --max-halfwidth F           stop when every ratio's 95% interval is within\n"
        "                              +-F of it (default 0.005: 0.5%)\n"
        "  --max-noise F               the old name of --max-halfwidth (the same)\n"
        "  --budget-ms MS              GPU time per table (default 2000)\n"
        "  --min-samples N, --max-samples N\n"
        "  --device N                  CUDA device ordinal (default 0)\n"
        "  --witness on|off            the active-lane witness launch per row (default on)\n"
        "  --counters on|off           CUPTI hardware counters per row (default on)\n"
        "  --instructions on|off       each row's instruction profile: SASS counts per instruction, regions,\n"
        "                              stall reasons (default off; a process per row, cached)\n"
        "  --evidence-dir DIR          with --suite: file each suite's result in the evidence store DIR,\n"
        "                              as the nightly refresh does (schema divergence.evidence.v1); the\n"
        "                              exit status is then the suite's gates' (0: filed as good evidence)\n"
        "  --file-as YYYY-MM-DD        with --evidence-dir: file the night under this date (not after today,\n"
        "                              UTC) instead of today's; the record says filed_as and keeps when it\n"
        "                              was measured. Refused where the date holds a night of the suite or a\n"
        "                              later night exists (the demo capture: deploy/capture-demo.sh --nights)\n"
        "  --replace-night             with --file-as: file it all the same\n"
        "output:\n"
        "  --format text|json|md|csv|svg  the lesson's layout (default), the divergence.v1 document,\n"
        "                              Markdown tables, CSV records or the SVG chart\n"
        "  --json                      the same as --format json\n"
        "predicates: " PREDICATE_RULE
        ";\n"
        "  built-in names and the expression each is:",
        stdout);
    size_t nb = 0;
    const struct predicate_builtin *b = predicate_builtins(&nb);
    for (size_t i = 0; i < nb; i++) printf("%s%s = %s", i % 2 ? ", " : (i ? ",\n  " : "\n  "), b[i].name, b[i].expr);
    fputs("\n", stdout);
}

void cli_usage(const char *cmd) {
    if (strcmp(cmd, "measure") == 0)
        fputs(
            "usage: divergence measure [options] [--format F]\n"
            "Measures the lesson's tables on the GPU and prints them in the lesson's layout\n"
            "(or, with --json, the divergence.v1 document POST /measure returns). On a terminal,\n"
            "progress goes to stderr; with --json or when stderr is not a terminal, only errors do.\n\n",
            stdout);
    else
        fputs(
            "usage: divergence analyze [options] [--format F]\n"
            "Prints what the model predicts for each row (warps split, threads on path A,\n"
            "path-runs, predicted ratio) without a GPU, in the lesson's layout or, with --json,\n"
            "as a divergence.v1 document (what POST /analyze returns).\n\n",
            stdout);
    cli_usage_options();
    if (strcmp(cmd, "measure") == 0)
        fputs(
            "\nexit status:\n"
            "  0  measured, every check passed and every interval met its target\n"
            "  1  measured, but a correctness check failed or an interval was over\n"
            "     --max-halfwidth when sampling stopped (the output names it and why)\n"
            "  2  bad option, value or predicate (the message names it, with the column)\n"
            "  3  no usable GPU (CUDA's reason on stderr), or a build without the CUDA toolkit\n"
            "  4  a CUDA error while measuring\n",
            stdout);
    else
        fputs("\nexit status:\n"
              "  0  printed the analysis\n"
              "  1  out of memory\n"
              "  2  bad option, value or predicate (the message names it, with the column)\n",
              stdout);
}

static const struct {
    const char *name;
    enum cli_format format;
} formats[] = {
    {"text", CLI_FORMAT_TEXT}, {"json", CLI_FORMAT_JSON}, {"md", CLI_FORMAT_MD},
    {"csv", CLI_FORMAT_CSV},   {"svg", CLI_FORMAT_SVG},
};

/* The options of this file, not of api/options.c: how to print, which suite,
 * where to file it. Returns 1 when `name` is one (its value consumed into
 * `a`), 0 when it is not, -1 after printing an error. */
static int cli_own_option(const char *cmd, const char *name, const char *value, struct cli_args *a) {
    if (strcmp(name, "--format") == 0) {
        for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
            if (strcmp(value, formats[i].name) == 0) {
                a->format = formats[i].format;
                return 1;
            }
        fprintf(stderr, "divergence %s: --format: '%.40s' is not a format; allowed: text, json, md, csv, svg\n", cmd,
                value);
        return -1;
    }
    if (strcmp(name, "--suite") == 0) {
        if (strcmp(value, "all") != 0 && !suites_find(value)) {
            fprintf(stderr, "divergence %s: --suite: unknown suite '%.60s'; known:", cmd, value);
            for (size_t i = 0; i < suites_count(); i++) fprintf(stderr, "%s %s", i ? "," : "", suites_get(i)->name);
            fprintf(stderr, "%s\n", strcmp(cmd, "measure") == 0 ? ", or all" : "");
            return -1;
        }
        a->suite = value;
        return 1;
    }
    if (strcmp(name, "--evidence-dir") == 0) {
        a->evidence_dir = value;
        return 1;
    }
    if (strcmp(name, "--file-as") == 0) {
        char today[EVIDENCE_DATE_LEN];
        names_date_of(time(NULL), today);
        if (!names_valid_date(value)) {
            fprintf(stderr, "divergence %s: --file-as: expected a calendar date YYYY-MM-DD, got '%.40s'\n", cmd, value);
            return -1;
        }
        if (strcmp(value, today) > 0) {
            fprintf(
                stderr,
                "divergence %s: --file-as: %s is after today (%s, UTC): a night is filed on or after it is measured\n",
                cmd, value, today);
            return -1;
        }
        a->file_as = value;
        return 1;
    }
    return 0;
}

static int is_own_option(const char *name) {
    return strcmp(name, "--format") == 0 || strcmp(name, "--suite") == 0 || strcmp(name, "--evidence-dir") == 0 ||
           strcmp(name, "--file-as") == 0;
}

/* --suite NAME: the suite's request (suites.c) in `o`, keeping what the
 * command line may still say with it (the device, the testimony passes). */
int cli_suite_options(const char *name, const struct dv_options *given, struct dv_options *o, char *err) {
    const struct suite *s = suites_find(name);
    if (!s) {
        dv_seterr(err, "--suite: unknown suite '%.60s'", name);
        return -1;
    }
    if (suites_options(s, o, err) != 0) return -1;
    o->device = given->device;
    o->no_witness = given->no_witness;
    o->no_counters = given->no_counters;
    return 0;
}

/* "divergence CMD: MSG" on stderr, and under it the caret the error carries
 * when it is about a column of an expression (fault may be NULL). */
static void say_refused(const char *cmd, const char *msg, const struct dv_fault *fault) {
    fprintf(stderr, "divergence %s: %s\n", cmd, msg);
    if (fault && fault->expr.column > 0) fprintf(stderr, "%s\n", fault->expr.caret);
}

/* A measurement's request that its plan refuses (a predicate that fails for
 * some thread) is a bad predicate, said with its caret before any GPU is
 * asked, as POST /measure says it: not a failure of the measurement. */
static int plan_check(const char *cmd, const struct dv_options *o) {
    struct dv_report *r = experiment_report_create();
    struct dv_fault fault;
    char err[ERR_LEN];
    if (!r) {
        fprintf(stderr, "divergence %s: out of memory\n", cmd);
        return CLI_EXIT_FAILED;
    }
    int rc = 0;
    if (plan_report(o, r, &fault, err) != 0) {
        say_refused(cmd, err, &fault);
        rc = CLI_EXIT_USAGE;
    }
    experiment_report_free(r);
    return rc;
}

/* The options of argv (argv[0] the command) one by one into `o` and `a`:
 * --opt=value or --opt value, an unknown option said as such whatever
 * follows it. Returns 0, CLI_EXIT_USAGE (said on stderr) or CLI_HELP_SHOWN. */
static int read_options(int argc, char **argv, struct dv_options *o, struct cli_args *a) {
    char err[ERR_LEN];
    const char *cmd = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--json") == 0) {
            a->format = CLI_FORMAT_JSON;
            continue;
        }
        if (strcmp(arg, "--replace-night") == 0) {
            a->replace_night = 1;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_usage(cmd);
            return CLI_HELP_SHOWN;
        }
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(stderr, "divergence %s: unexpected argument '%s' (see divergence %s --help)\n", cmd, arg, cmd);
            return CLI_EXIT_USAGE;
        }
        char name[64];
        const char *value;
        const char *eq = strchr(arg, '=');
        snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
        if (!options_cli_known(name) && !is_own_option(name)) {
            fprintf(stderr, "divergence %s: %s: unknown option (see divergence %s --help)\n", cmd, name, cmd);
            return CLI_EXIT_USAGE;
        }
        if (eq) {
            value = eq + 1;
        } else {
            if (i + 1 >= argc) {
                fprintf(stderr, "divergence %s: %s needs a value\n", cmd, name);
                return CLI_EXIT_USAGE;
            }
            value = argv[++i];
        }
        int own = cli_own_option(cmd, name, value, a);
        if (own < 0) return CLI_EXIT_USAGE;
        if (own) continue;
        if (options_set_cli(o, name, value, err) != 0) {
            fprintf(stderr, "divergence %s: %s\n", cmd, err);
            return CLI_EXIT_USAGE;
        }
    }
    return 0;
}

/* The first option of `given` (DV_GIVEN_* bits) said as not applying
 * (`why`), or 0 when there is none. */
static int refuse_given(const char *cmd, unsigned given, const char *why) {
    for (unsigned bit = 1; given && bit < (1u << DV_GIVEN_NUM); bit <<= 1)
        if (given & bit) {
            fprintf(stderr, "divergence %s: %s: %s\n", cmd, options_cli_name(bit), why);
            return CLI_EXIT_USAGE;
        }
    return 0;
}

/* Each option of `o` that its tables do not read (experiment_unused()),
 * said on stderr as the document's warning says it (plan_report()), the
 * option in its CLI spelling; the run goes on, as POST /analyze and
 * POST /measure answer the same request with the warning in the document. */
static void warn_unused(const char *cmd, const struct dv_options *o) {
    const unsigned unused = experiment_unused(o);
    for (unsigned bit = 1; unused && bit < (1u << DV_GIVEN_NUM); bit <<= 1)
        if (unused & bit)
            fprintf(stderr, "divergence %s: warning: %s: not used: %s\n", cmd, options_cli_name(bit),
                    experiment_unused_reason(o, bit));
}

/* --suite NAME|all (a->suite): a whole request, so nothing else may shape
 * the tables; `o` becomes the suite's request (all: left as the caller's
 * defaults). Returns 0 or CLI_EXIT_USAGE. */
static int suite_options(const char *cmd, int analyze, struct dv_options *o, const struct cli_args *a) {
    char err[ERR_LEN];
    /* Anything else that shapes the tables would make it another request
     * filed under the suite's name. */
    unsigned shaping = o->given & ~(unsigned)(DV_GIVEN_DEVICE | DV_GIVEN_WITNESS | DV_GIVEN_COUNTERS);
    if (refuse_given(cmd, shaping, "does not apply with --suite, which is the suite's whole request"))
        return CLI_EXIT_USAGE;
    if (strcmp(a->suite, "all") == 0) {
        if (analyze) {
            fprintf(stderr, "divergence analyze: --suite: name one suite (all is for measure)\n");
            return CLI_EXIT_USAGE;
        }
        return 0; /* the caller builds each suite's options */
    }
    struct dv_options given = *o;
    if (cli_suite_options(a->suite, &given, o, err) != 0) {
        fprintf(stderr, "divergence %s: %s\n", cmd, err);
        return CLI_EXIT_USAGE;
    }
    return 0;
}

int cli_parse(int argc, char **argv, struct dv_options *o, struct cli_args *a) {
    char err[ERR_LEN];
    const char *cmd = argv[0];
    const int analyze = strcmp(cmd, "analyze") == 0;
    experiment_defaults(o);
    memset(a, 0, sizeof *a);
    a->format = CLI_FORMAT_TEXT;
    int rc = read_options(argc, argv, o, a);
    if (rc != 0) return rc;
    /* An analysis measures nothing: what only a measurement reads is a
     * mistake to say, not an option to drop in silence. */
    if (refuse_given(cmd, analyze ? o->given & DV_GIVEN_MEASURE_ONLY : 0,
                     "does not apply to analyze, which measures nothing (measure takes it)"))
        return CLI_EXIT_USAGE;
    if (a->evidence_dir && (analyze || !a->suite)) {
        fprintf(stderr, "divergence %s: --evidence-dir: %s\n", cmd,
                analyze ? "does not apply to analyze (it files measurements)" : "needs --suite NAME|all");
        return CLI_EXIT_USAGE;
    }
    if ((a->file_as && !a->evidence_dir) || (a->replace_night && !a->file_as)) {
        fprintf(stderr, "divergence %s: %s: needs %s\n", cmd,
                a->replace_night && !a->file_as ? "--replace-night" : "--file-as",
                a->replace_night && !a->file_as ? "--file-as DATE" : "--evidence-dir DIR (it files a night)");
        return CLI_EXIT_USAGE;
    }
    if (a->suite) return suite_options(cmd, analyze, o, a);
    struct dv_fault fault;
    if (options_validate(o, OPTIONS_CLI, &fault, err) != 0) {
        say_refused(cmd, err, &fault);
        return CLI_EXIT_USAGE;
    }
    warn_unused(cmd, o);
    /* analyze plans next anyway, and says a refusal the same way. */
    return analyze ? 0 : plan_check(cmd, o);
}

char *cli_render(const struct dv_report *r, enum cli_format format) {
    switch (format) {
    case CLI_FORMAT_JSON: return report_json(r, 1);
    case CLI_FORMAT_MD: return report_markdown(r);
    case CLI_FORMAT_CSV: return report_csv(r);
    case CLI_FORMAT_SVG: return report_svg(r, NULL);
    default: return report_text(r);
    }
}

static int emit(const struct dv_report *r, enum cli_format format) {
    char *s = cli_render(r, format);
    if (!s) {
        fprintf(stderr, "divergence: out of memory formatting the report\n");
        return -1;
    }
    fputs(s, stdout);
    if (format == CLI_FORMAT_JSON) fputc('\n', stdout);
    free(s);
    return 0;
}

int cli_analyze(int argc, char **argv) {
    struct dv_options o;
    struct cli_args a;
    int rc;
    char err[ERR_LEN];
    if ((rc = cli_parse(argc, argv, &o, &a)) != 0) return rc == CLI_HELP_SHOWN ? CLI_EXIT_OK : rc;
    struct dv_report *r = experiment_report_create();
    if (!r) {
        fprintf(stderr, "divergence analyze: out of memory\n");
        return CLI_EXIT_FAILED;
    }
    rc = CLI_EXIT_OK;
    struct dv_fault fault;
    if (plan_report(&o, r, &fault, err) != 0) {
        say_refused("analyze", err, &fault);
        rc = CLI_EXIT_USAGE;
    } else if (emit(r, a.format) != 0) {
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
        if (!t->intervals_ok) rc = CLI_EXIT_FAILED;
        for (unsigned j = 0; j < t->nrows; j++)
            if (!t->rows[j].check.ok) rc = CLI_EXIT_FAILED;
    }
    return rc;
}

int cli_finish_measure(int measure_rc, const char *err, const struct dv_report *r, enum cli_format format) {
    int rc = cli_exit_status(measure_rc, r);
    switch (measure_rc) {
    case 0: break;
    case DV_EGATE: fprintf(stderr, "divergence measure: correctness gate failed: %s\n", err); break;
    case DV_ENOGPU: fprintf(stderr, "divergence measure: no usable GPU: %s\n", err); return rc;
    case DV_ESTICKY: fprintf(stderr, "divergence measure: CUDA error (context lost): %s\n", err); return rc;
    default: fprintf(stderr, "divergence measure: %s\n", err); return rc;
    }
    if (emit(r, format) != 0) return CLI_EXIT_FAILED;
    return rc;
}

int cli_measure(int argc, char **argv) {
    char err[ERR_LEN] = "";
#if !DV_BUILT_WITH_CUDA
    /* Bad options are still bad options: said before the missing toolkit. */
    struct dv_options o;
    struct cli_args a;
    int rc;
    if ((rc = cli_parse(argc, argv, &o, &a)) != 0) return rc == CLI_HELP_SHOWN ? CLI_EXIT_OK : rc;
    fprintf(stderr,
            "divergence measure: measuring needs the CUDA toolkit: this build has no divergence-gpu "
            "(it was configured without nvcc); `divergence analyze` takes the same options\n");
    return CLI_EXIT_NOGPU;
#endif
    sibling_exec(SIBLING_GPU, argv, err);
    fprintf(stderr, "divergence measure: %s\n", err);
    return CLI_EXIT_CUDA;
}

int cli_suites(void) {
    char err[ERR_LEN];
    char *s = suites_json(err);
    if (!s) {
        fprintf(stderr, "divergence suites: %s\n", err);
        return CLI_EXIT_FAILED;
    }
    puts(s);
    free(s);
    return CLI_EXIT_OK;
}

/* cli.h -- the `analyze` and `measure` subcommands: options, output and
 * exit statuses, shared by `divergence` and `divergence-gpu`. */
#ifndef DV_CLI_H
#define DV_CLI_H

#include "kernels/model/model/experiment.h"

/* Exit statuses, distinct so scripts and the scheduler can tell them apart. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1   /* measured, but a check failed or noise over limit */
#define CLI_EXIT_USAGE 2    /* bad option or value                               */
#define CLI_EXIT_NOGPU 3    /* no usable CUDA device                             */
#define CLI_EXIT_CUDA 4     /* a CUDA error while measuring                      */

/* `divergence suites`: what GET /suites serves, on stdout. */
int cli_suites(void);

/* `divergence analyze [options]`: the analysis, no GPU. */
int cli_analyze(int argc, char **argv);

/* `divergence measure [options]`: execs `divergence-gpu measure`, which
 * measures on the GPU. Returns only when that binary cannot be run. */
int cli_measure(int argc, char **argv);

/* What cli_parse() returns after printing --help: the command exits 0. */
#define CLI_HELP_SHOWN (-1)

/* How a report is printed (--format; --json is json). */
enum cli_format { CLI_FORMAT_TEXT = 0, CLI_FORMAT_JSON = 1, CLI_FORMAT_MD, CLI_FORMAT_CSV, CLI_FORMAT_SVG };

/* What the command line says beyond the request. The strings point into argv. */
struct cli_args {
    enum cli_format format;
    const char *suite;        /* --suite NAME ("all": measure each), or NULL    */
    const char *evidence_dir; /* --evidence-dir DIR (measure with --suite), NULL */
    /* --file-as YYYY-MM-DD (measure with --evidence-dir): file the night
     * under this date, a real calendar date not after today (UTC); the record
     * says "filed_as" and keeps when it was measured. For the demo capture
     * (deploy/capture-demo.sh --nights N); no route offers it. NULL: today. */
    const char *file_as;
    int replace_night; /* --replace-night: --file-as may replace a night     */
};

/* Parses argv (argv[0] the command name) into `o` and `a`. An unknown option
 * is said as such (before whether it has a value); an option that does not
 * apply is an error naming it: --part / --predicates / --baseline where they
 * are not used (options_validate), the measurement's options for analyze,
 * anything but --device / --witness / --counters beside --suite. With
 * --suite NAME `o` is that suite's request; with --suite all, the defaults
 * (the caller builds each suite's with cli_suite_options()). Returns 0,
 * CLI_EXIT_USAGE, or CLI_HELP_SHOWN after printing the options. */
int cli_parse(int argc, char **argv, struct dv_options *o, struct cli_args *a);

/* Suite `name`'s request into `o`, with the device and testimony switches of
 * `given` (what the command line said). Returns 0, or -1 with `err`. */
int cli_suite_options(const char *name, const struct dv_options *given, struct dv_options *o, char *err);

/* `r` in `format` (malloc()ed), NULL on OOM. */
char *cli_render(const struct dv_report *r, enum cli_format format);

/* The exit status of a measurement that returned `measure_rc`
 * (gpu/measure.h) with report `r`: 0 ok; 1 measured but the correctness
 * gate failed (DV_EGATE) or a table stayed noisier than its limit, whatever
 * the table kind; 3 no GPU; 4 any other failure. */
int cli_exit_status(int measure_rc, const struct dv_report *r);

/* Says what went wrong on stderr, prints the report when there is one
 * (measure_rc 0 or DV_EGATE) in `format`, and returns cli_exit_status(). */
int cli_finish_measure(int measure_rc, const char *err, const struct dv_report *r, enum cli_format format);

/* `cmd --help` ("analyze" or "measure"): usage line, what it does, the
 * options and the exit statuses, on stdout. */
void cli_usage(const char *cmd);

/* The shared option list, for `divergence help`. */
void cli_usage_options(void);

#endif /* DV_CLI_H */

/* cli.h -- the `analyze` and `measure` subcommands. */
#ifndef DV_CLI_H
#define DV_CLI_H

/* Exit statuses, distinct so scripts and the scheduler can tell them apart. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1   /* measured, but a check failed or noise over limit */
#define CLI_EXIT_USAGE 2    /* bad option or value                               */
#define CLI_EXIT_NOGPU 3    /* no usable CUDA device                             */
#define CLI_EXIT_CUDA 4     /* a CUDA error while measuring                      */

/* `divergence analyze [options]`: the analysis, no GPU. */
int cli_analyze(int argc, char **argv);

/* `divergence measure [options]`: measure on the GPU. */
int cli_measure(int argc, char **argv);

/* The shared option list, for `divergence help`. */
void cli_usage_options(void);

#endif /* DV_CLI_H */

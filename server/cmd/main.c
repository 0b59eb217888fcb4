/* main.c -- the `divergence` binary: one entry point, several subcommands.
 *
 *   analyze   the warp analysis of the lesson's tables, no GPU
 *   measure   measure them on the GPU (execs divergence-gpu, cmd/gpu_main.c)
 *   serve     the HTTP service (cmd/serve.c)
 *   refresh   trigger the nightly evidence refresh and wait (cmd/refresh_cmd.c)
 *   suites    print the evidence suites and the scenario names (GET /suites)
 *
 * This binary links no CUDA; `divergence-gpu`, installed beside it, is the
 * one that does (the GPU worker and `measure`). A build without nvcc has no
 * `divergence-gpu`: there `worker` runs the stand-in that answers every job
 * "measuring needs the CUDA toolkit" (jobs/nogpu.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonout.h"
#include "server/cmd/cli.h"
#include "server/cmd/refresh_cmd.h"
#include "server/cmd/serve.h"
#include "server/cmd/sibling.h"
#include "server/jobs/nogpu.h"
#include "kernels/base/buildinfo.h"

static void usage(FILE *f) {
    fputs(
        "usage: divergence <command> [options]\n"
        "commands:\n"
        "  analyze   print the warp analysis of the tables (no GPU needed)\n"
        "  measure   measure the tables on the GPU\n"
        "  serve     run the HTTP service (divergence serve --help)\n"
        "  refresh   trigger an evidence refresh on a server and wait for it\n"
        "  suites    print the evidence suites, their requests and the scenario names (as GET /suites)\n"
        "  version   print the version\n"
        "Each command has its own --help (usage, options, exit statuses).\n",
        f);
}

int main(int argc, char **argv) {
    jsonout_use_malloc(NULL); /* before any thread: see jsonout.h */
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    argc--;
    argv++;
    if (strcmp(cmd, "analyze") == 0) return cli_analyze(argc, argv);
    if (strcmp(cmd, "measure") == 0) return cli_measure(argc, argv);
    if (strcmp(cmd, "serve") == 0) return serve_main(argc, argv);
    if (strcmp(cmd, "worker") == 0) {
        char err[ERR_LEN];
#if !DV_BUILT_WITH_CUDA
        return nogpu_worker_main();
#endif
        sibling_exec(SIBLING_GPU, argv, err);
        fprintf(stderr, "divergence worker: %s\n", err);
        return CLI_EXIT_CUDA;
    }
    if (strcmp(cmd, "refresh") == 0) return refresh_cmd_main(argc, argv);
    if (strcmp(cmd, "suites") == 0) return cli_suites();
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("divergence %s (%s)\n", buildinfo_version(), buildinfo_git_revision());
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(
        stderr,
        "divergence: unknown command '%s' (analyze, measure, serve, refresh, suites, version; see divergence --help)\n",
        cmd);
    return CLI_EXIT_USAGE;
}

/* serve.h -- `divergence serve`: the HTTP service.
 *
 * Embedded defaults need no configuration file: 127.0.0.1:8080, a queue of
 * 16, 10 POSTs a minute per address, 30 s per job, 10 minutes of result
 * cache, 256 finished jobs kept, 64 KiB bodies. `divergence serve --help`
 * lists every flag. The token comes from --token, --token-file or the
 * DIVERGENCE_TOKEN environment variable.
 */
#ifndef DV_SERVE_H
#define DV_SERVE_H

/* Entry point: argv[0] is "serve". Returns the exit status: 0 after a clean
 * shutdown (SIGTERM / SIGINT), 2 on a usage error, 1 when it cannot start. */
int serve_main(int argc, char **argv);

#endif /* DV_SERVE_H */

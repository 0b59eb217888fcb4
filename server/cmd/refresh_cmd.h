/* refresh_cmd.h -- `divergence refresh`: the client of the nightly evidence
 * refresh. It asks a server to measure every evidence suite
 * (POST /evidence/refresh), follows the refresh until every suite has ended
 * (GET /evidence/refresh/{id}) and prints a summary: each suite's evidence
 * or why it failed, and what changed since the previous good night (the
 * record's comparison). The server's side of the refresh is
 * evidence/refresh.h. */
#ifndef DV_REFRESH_CMD_H
#define DV_REFRESH_CMD_H

/* Exit statuses. */
#define REFRESH_CMD_OK 0     /* every suite good                                 */
#define REFRESH_CMD_FAILED 1 /* a suite failed, or the wait timed out            */
#define REFRESH_CMD_ERROR 2  /* usage, connection, TLS or HTTP errors            */

/* `divergence refresh --server URL [--token T] [--timeout S] [--interval S]`:
 * argv[0] is "refresh". URL is http:// or https://, with an optional path
 * prefix; proxies come from the environment (https_proxy, no_proxy...), and
 * redirects are followed. Progress and the summary go to stdout, errors to
 * stderr. Returns one of the exit statuses above. */
int refresh_cmd_main(int argc, char **argv);

#endif /* DV_REFRESH_CMD_H */

/* log.h -- one-line diagnostics to stderr with syslog levels.
 *
 * LOG(LOG_WARNING, "worker: exited with status %d", st) prints
 * "<4>divergence[pid]: worker: exited with status 3" when the verbosity
 * admits the level. The "<N>" prefix is the sd-daemon convention journald
 * uses to keep the level; the arguments are not even evaluated for a level
 * above the verbosity, so debug lines cost a comparison.
 */
#ifndef DV_LOG_H
#define DV_LOG_H

#include <syslog.h>

/* Highest level printed (LOG_ERR .. LOG_DEBUG); LOG_INFO by default. */
extern int log_verbosity;

#define LOG(level, ...)                                  \
    do {                                                 \
        if ((level) <= log_verbosity) log_write((level), __VA_ARGS__); \
    } while (0)

/* Formats and writes one line (a trailing newline is added). Thread-safe:
 * the line goes out in a single write(2). */
void log_write(int level, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Parses a level name ("err", "warning", "info", "debug") or digit into
 * log_verbosity. Returns 0, or -1 when unknown. */
int log_set_verbosity(const char *name);

#endif /* DV_LOG_H */

/* log.h -- one-line diagnostics to stderr with syslog levels.
 *
 * LOG(LOG_WARNING, "worker: exited with status %d", st) prints, under
 * journald (stderr is the stream $JOURNAL_STREAM names),
 *   "<4>divergence[pid]: worker: exited with status 3"
 * -- the "<N>" prefix is the sd-daemon convention journald uses to keep the
 * level, and journald adds its own timestamp -- and anywhere else
 *   "2026-11-29T03:00:00.123Z warning divergence[pid]: worker: exited ..."
 * The arguments are not even evaluated for a level above the verbosity, so
 * debug lines cost a comparison.
 */
#ifndef DV_LOG_H
#define DV_LOG_H

#include <pthread.h>
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

/* Chooses the line format: `journald` 1 gives "<N>" prefixes without a
 * timestamp, 0 timestamps and level names; -1 (the default) decides from
 * $JOURNAL_STREAM on the first line. For tests and for callers that know. */
void log_set_journald(int journald);

/* A state that is logged when it changes, not each time it is seen (a
 * readiness probe every few seconds must not write a line each time).
 * Initialise with LOG_LATCH_INIT. */
struct log_latch {
    pthread_mutex_t lock;
    char last[256];
    int seen;
};
#define LOG_LATCH_INIT {PTHREAD_MUTEX_INITIALIZER, "", 0}

/* Logs `text` at `level` with `what` before it ("readiness: ...") when it
 * differs from the text last given to `l`. Returns 1 when it logged. */
int log_latch_update(struct log_latch *l, int level, const char *what, const char *text);

#endif /* DV_LOG_H */

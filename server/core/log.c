/* log.c -- see log.h. Each line is formatted into a stack buffer and written
 * with one write(2) so lines from the HTTP threads and the worker supervisor
 * never interleave mid-line. Whether stderr is journald's stream is decided
 * once, as systemd documents it: $JOURNAL_STREAM holds "device:inode" of the
 * stream, and it counts only when stderr is that very file (a child whose
 * stderr was redirected inherits the variable but not the stream). */
#define _POSIX_C_SOURCE 200809L
#include "server/core/log.h"
#include "kernels/base/timeutil.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int log_verbosity = LOG_INFO;
static atomic_int journald = -1;

static int stderr_is_journal(void) {
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat sb;
    if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &sb) < 0) return 0;
    return (unsigned long long)sb.st_dev == dev && (unsigned long long)sb.st_ino == ino;
}

void log_set_journald(int j) { atomic_store(&journald, j < 0 ? -1 : !!j); }

static const char *level_name(int level) {
    static const char *names[] = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};
    return level >= 0 && level <= 7 ? names[level] : "log";
}

void log_write(int level, const char *fmt, ...) {
    char line[2048];
    int j = atomic_load(&journald);
    if (j < 0) {
        j = stderr_is_journal();
        atomic_store(&journald, j);
    }
    int n;
    if (j) {
        n = snprintf(line, sizeof line, "<%d>divergence[%ld]: ", level, (long)getpid());
    } else {
        char utc[TIMEUTIL_UTC_LEN];
        double now = timeutil_wall_s();
        time_t secs = (time_t)now;
        int ms = (int)((now - (double)secs) * 1000);
        timeutil_utc(secs, utc, sizeof utc);
        /* "2026-11-29T03:00:00Z" -> "2026-11-29T03:00:00.123Z" */
        n = snprintf(line, sizeof line, "%.19s.%03dZ %s divergence[%ld]: ", utc, ms < 0 ? 0 : ms > 999 ? 999 : ms,
                     level_name(level), (long)getpid());
    }
    if (n < 0) return;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0) return;
    size_t len = strlen(line);
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

int log_set_verbosity(const char *name) {
    static const struct { const char *name; int level; } names[] = {
        {"emerg", LOG_EMERG}, {"alert", LOG_ALERT}, {"crit", LOG_CRIT}, {"err", LOG_ERR},
        {"error", LOG_ERR}, {"warning", LOG_WARNING}, {"warn", LOG_WARNING},
        {"notice", LOG_NOTICE}, {"info", LOG_INFO}, {"debug", LOG_DEBUG},
    };
    if (name[0] >= '0' && name[0] <= '7' && name[1] == '\0') {
        log_verbosity = name[0] - '0';
        return 0;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i].name) == 0) {
            log_verbosity = names[i].level;
            return 0;
        }
    return -1;
}

int log_latch_update(struct log_latch *l, int level, const char *what, const char *text) {
    int changed;
    pthread_mutex_lock(&l->lock);
    changed = !l->seen || strncmp(l->last, text, sizeof l->last - 1) != 0;
    if (changed) {
        snprintf(l->last, sizeof l->last, "%s", text);
        l->seen = 1;
    }
    pthread_mutex_unlock(&l->lock);
    if (changed) LOG(level, "%s: %s", what, text);
    return changed;
}

/* log.c -- see log.h. Each line is formatted into a stack buffer and written
 * with one write(2) so lines from the HTTP threads and the worker supervisor
 * never interleave mid-line. */
#define _POSIX_C_SOURCE 200809L
#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int log_verbosity = LOG_INFO;

void log_write(int level, const char *fmt, ...) {
    char line[2048];
    int n = snprintf(line, sizeof line, "<%d>divergence[%ld]: ", level, (long)getpid());
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

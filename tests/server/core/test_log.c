/* test_log.c -- the line format outside and under journald, and states
 * logged once per change. Each test sends stderr to a temp file. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/core/log.h"

static char path[64];

static void capture(void) {
    snprintf(path, sizeof path, "/tmp/dv-test-log-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert(dup2(fd, STDERR_FILENO) >= 0);
    close(fd);
}

static char *captured(void) {
    static char buf[8192];
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    return buf;
}

Test(log, timestamps_and_level_names_outside_journald) {
    unsetenv("JOURNAL_STREAM");
    log_set_journald(-1);
    capture();
    LOG(LOG_WARNING, "worker: exited with status %d", 3);
    char *s = captured();
    /* 2026-11-29T03:00:00.123Z warning divergence[123]: worker: ... */
    int y, mo, d, h, mi, sec, ms;
    long pid;
    char tail[128];
    cr_assert_eq(sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ warning divergence[%ld]: %127[^\n]", &y, &mo, &d, &h,
                        &mi, &sec, &ms, &pid, tail), 9, "line: %s", s);
    cr_assert(y >= 2024);
    cr_assert_eq(pid, (long)getpid());
    cr_assert_str_eq(tail, "worker: exited with status 3");
}

Test(log, level_prefix_without_timestamp_under_journald) {
    capture();
    struct stat sb;
    cr_assert(fstat(STDERR_FILENO, &sb) == 0);
    char js[64];
    snprintf(js, sizeof js, "%llu:%llu", (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino);
    setenv("JOURNAL_STREAM", js, 1);
    log_set_journald(-1);
    LOG(LOG_NOTICE, "listening");
    char expect[64];
    snprintf(expect, sizeof expect, "<5>divergence[%ld]: listening\n", (long)getpid());
    cr_assert_str_eq(captured(), expect);
}

Test(log, journal_stream_of_another_file_is_not_journald) {
    setenv("JOURNAL_STREAM", "1:1", 1);
    log_set_journald(-1);
    capture();
    LOG(LOG_NOTICE, "x");
    cr_assert(strncmp(captured(), "<5>", 3) != 0);
}

Test(log, debug_lines_are_skipped_at_info) {
    log_set_journald(0);
    cr_assert_eq(log_set_verbosity("info"), 0);
    capture();
    LOG(LOG_DEBUG, "not shown");
    LOG(LOG_INFO, "shown");
    char *s = captured();
    cr_assert_null(strstr(s, "not shown"));
    cr_assert_not_null(strstr(s, "shown"));
}

Test(log, latch_logs_once_per_change) {
    struct log_latch l = LOG_LATCH_INIT;
    log_set_journald(1);
    capture();
    cr_assert_eq(log_latch_update(&l, LOG_WARNING, "readiness", "no GPU"), 1);
    cr_assert_eq(log_latch_update(&l, LOG_WARNING, "readiness", "no GPU"), 0);
    cr_assert_eq(log_latch_update(&l, LOG_WARNING, "readiness", "no GPU"), 0);
    cr_assert_eq(log_latch_update(&l, LOG_NOTICE, "readiness", "ready"), 1);
    cr_assert_eq(log_latch_update(&l, LOG_WARNING, "readiness", "no GPU"), 1);
    char *s = captured();
    int lines = 0;
    for (char *p = s; *p; p++) lines += *p == '\n';
    cr_assert_eq(lines, 3, "%s", s);
    cr_assert_not_null(strstr(s, "<4>divergence"));
    cr_assert_not_null(strstr(s, "readiness: ready"));
}

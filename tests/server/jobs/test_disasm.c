/* test_disasm.c -- a cubin's SASS text (server/jobs/disasm.h) and where its
 * programs are found (server/jobs/toolkit.h), with
 * tests/support/fake_disassembler.sh standing in for nvdisasm: the text's
 * label line, the tool run once per cubin in a process and once per cache
 * folder, the cubin handed to it whole and removed after, and every way
 * there is none said as the reason. Subprocesses: run 20 times in a row
 * after a change. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/base/status.h"
#include "server/jobs/disasm.h"
#include "server/jobs/toolkit.h"
#include "tests/support/readfile.h"

#define FAKE DV_TEST_SOURCE_DIR "/tests/support/fake_disassembler.sh"

static char dir[64], log_path[128];

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/dv-disasm-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(log_path, sizeof log_path, "%s.log", dir);
    setenv("FAKE_DISASSEMBLER_LOG", log_path, 1);
    unsetenv("FAKE_DISASSEMBLER");
    unsetenv("DV_DISASSEMBLER");
}

static void teardown(void) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/bin/rm -rf '%s' '%s'", dir, log_path); /* PATH may be a test's */
    cr_expect_eq(system(cmd), 0);
}

TestSuite(disasm, .init = setup, .fini = teardown);

/* Runs of the tool so far, from its log. */
static unsigned runs(void) {
    char *s = readfile(log_path, NULL);
    unsigned n = 0;
    for (const char *p = s; p && *p; p++) n += *p == '\n';
    free(s);
    return n;
}

/* Files in the folder whose name holds `part`. */
static unsigned files_with(const char *part) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c -- '%s'", dir, part);
    FILE *p = popen(cmd, "r");
    unsigned n = 0;
    cr_assert_not_null(p);
    cr_expect_eq(fscanf(p, "%u", &n), 1);
    pclose(p);
    return n;
}

static const char cubin[] = "CUBIN-0123456789";

Test(disasm, the_text_has_the_label_line_and_the_tool_runs_once_per_cubin) {
    const struct disasm_config c = {.tool = FAKE, .cache_dir = dir};
    char why[ERR_LEN] = "";
    size_t len = 0;
    char *text = disasm_cubin(&c, 0xabcULL, cubin, sizeof cubin - 1, &len, why);
    cr_assert_not_null(text, "%s", why);
    cr_expect_eq(len, strlen(text));
    char want[512];
    snprintf(want, sizeof want, "# fake_disassembler.sh V1.2.3 (%.64s)\n\t.text._Z3fakev:\n", FAKE);
    cr_expect(strncmp(text, want, strlen(want)) == 0, "the label line, then the tool's output:\n%s", text);
    cr_expect(strstr(text, "/* 16 bytes, starting CUBI */"), "the cubin went to the tool whole: %s", text);
    cr_expect_eq(runs(), 1);
    cr_expect_eq(files_with(".cubin"), 0, "the cubin's file is removed after the run");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/0000000000000abc.sass", dir);
    char *kept = readfile(path, NULL);
    cr_assert_not_null(kept, "kept in the folder by the cubin's CRC");
    cr_expect_str_eq(kept, text);
    free(kept);
    cr_expect_eq(files_with(".sass."), 0, "no file left half written under another name");

    /* The same cubin: from memory. Another: the tool again. The first
     * again (memory holds the second): from the folder. */
    char *again = disasm_cubin(&c, 0xabcULL, cubin, sizeof cubin - 1, &len, why);
    cr_assert_not_null(again, "%s", why);
    cr_expect_str_eq(again, text);
    cr_expect_eq(runs(), 1, "the same cubin again: no run");
    char *other = disasm_cubin(&c, 0xdefULL, cubin, 4, &len, why);
    cr_assert_not_null(other, "%s", why);
    cr_expect(strstr(other, "/* 4 bytes, starting CUBI */"), "%s", other);
    cr_expect_eq(runs(), 2);
    char *first = disasm_cubin(&c, 0xabcULL, cubin, sizeof cubin - 1, &len, why);
    cr_assert_not_null(first, "%s", why);
    cr_expect_str_eq(first, text);
    cr_expect_eq(runs(), 2, "from the cache folder: no run");
    free(text);
    free(again);
    free(other);
    free(first);
}

/* The answers' counts by where each came from, as a served profiler's
 * "done" says them (cmd/instr_cmd.h): its warm-up's text makes the first
 * request's a memory hit. */
static void expect_counts(const struct disasm_counts *base, unsigned memory, unsigned folder, unsigned tool,
                          const char *when) {
    struct disasm_counts n;
    disasm_counts(&n);
    cr_expect_eq(n.memory - base->memory, memory, "%s: memory %u", when, n.memory - base->memory);
    cr_expect_eq(n.folder - base->folder, folder, "%s: folder %u", when, n.folder - base->folder);
    cr_expect_eq(n.tool - base->tool, tool, "%s: tool %u", when, n.tool - base->tool);
}

Test(disasm, each_answer_is_counted_by_where_it_came_from) {
    const struct disasm_config c = {.tool = FAKE, .cache_dir = dir};
    char why[ERR_LEN] = "";
    size_t len = 0;
    struct disasm_counts base;
    disasm_counts(&base);
    const uint64_t crcs[] = {0x11, 0x11, 0x22, 0x11, 0x11};
    const unsigned want[][3] = {{0, 0, 1}, {1, 0, 1}, {1, 0, 2}, {1, 1, 2}, {2, 1, 2}};
    const char *when[] = {"a first cubin: the tool", "the same again: memory", "another: the tool",
                          "the first again: its folder file", "once more: memory"};
    for (unsigned k = 0; k < 5; k++) {
        char *text = disasm_cubin(&c, crcs[k], cubin, sizeof cubin - 1, &len, why);
        cr_assert_not_null(text, "%s: %s", when[k], why);
        free(text);
        expect_counts(&base, want[k][0], want[k][1], want[k][2], when[k]);
    }
    setenv("FAKE_DISASSEMBLER", "fail", 1);
    cr_expect_null(disasm_cubin(&c, 0x33, cubin, 4, &len, why), "a tool that fails gives no text");
    expect_counts(&base, 2, 1, 3, "a run of the tool that failed is a run");
    cr_expect_eq(runs(), 3, "the tool's own log: three runs");
}

Test(disasm, without_a_cache_folder_the_tool_runs_in_tmpdir_and_nothing_is_kept) {
    setenv("TMPDIR", dir, 1);
    const struct disasm_config c = {.tool = FAKE};
    char why[ERR_LEN] = "";
    size_t len = 0;
    char *text = disasm_cubin(&c, 0x1ULL, cubin, 8, &len, why);
    cr_assert_not_null(text, "%s", why);
    free(text);
    cr_expect_eq(runs(), 1);
    cr_expect_eq(files_with("."), 0, "nothing left in TMPDIR: %s", dir);
}

/* Every way there is no text, each its reason. */
Test(disasm, no_text_says_why) {
    char why[ERR_LEN] = "";
    size_t len = 0;
    const struct disasm_config off = {.tool = "none", .cache_dir = dir};
    cr_expect_null(disasm_cubin(&off, 1, cubin, 8, &len, why));
    cr_expect_str_eq(why, "the disassembler was turned off (--disassembler none)");
    setenv("DV_DISASSEMBLER", "none", 1);
    const struct disasm_config env = {.cache_dir = dir};
    cr_expect_null(disasm_cubin(&env, 1, cubin, 8, &len, why));
    cr_expect(strstr(why, "turned off"), "$DV_DISASSEMBLER when no tool is named: %s", why);
    unsetenv("DV_DISASSEMBLER");
    const struct disasm_config notexe = {.tool = DV_TEST_SOURCE_DIR "/tests/support/readfile.h", .cache_dir = dir};
    cr_expect_null(disasm_cubin(&notexe, 1, cubin, 8, &len, why));
    cr_expect(strstr(why, "readfile.h named is not an executable file"), "%s", why);
    setenv("FAKE_DISASSEMBLER", "fail", 1);
    const struct disasm_config failing = {.tool = FAKE, .cache_dir = dir};
    cr_expect_null(disasm_cubin(&failing, 2, cubin, 8, &len, why));
    char want[512];
    snprintf(want, sizeof want, "the disassembler %s on the cubin: exit status 3", FAKE);
    cr_expect(strstr(why, want), "%s", why);
    cr_expect_eq(runs(), 1);
    cr_expect_eq(files_with("."), 0, "no cubin left and nothing kept of a failed run");
    const struct disasm_config nowhere = {.tool = FAKE, .cache_dir = "/nonexistent/folder"};
    unsetenv("FAKE_DISASSEMBLER");
    cr_expect_null(disasm_cubin(&nowhere, 3, cubin, 8, &len, why));
    cr_expect(strstr(why, "instructions: /nonexistent/folder/cubin-"), "the cubin could not be written: %s", why);
}

/* toolkit.h: a program by its name on PATH, one named exactly, ncu from $DV_NCU. */
Test(disasm, the_toolkit_finds_a_program_on_path_or_named) {
    char bin[128], tool[256], out[PATH_MAX], why[ERR_LEN] = "";
    snprintf(bin, sizeof bin, "%s/bin", dir);
    cr_assert_eq(mkdir(bin, 0755), 0);
    snprintf(tool, sizeof tool, "%s/dv-fake-tool", bin);
    FILE *f = fopen(tool, "w");
    cr_assert_not_null(f);
    fputs("#!/bin/sh\n", f);
    fclose(f);
    char path[512];
    snprintf(path, sizeof path, "/nonexistent:%s", bin);
    setenv("PATH", path, 1);
    cr_expect_eq(toolkit_find("dv-fake-tool", out), -1, "not executable: not found");
    cr_expect_str_eq(out, "");
    cr_assert_eq(chmod(tool, 0755), 0);
    cr_expect_eq(toolkit_find("dv-fake-tool", out), 0);
    cr_expect_str_eq(out, tool);
    cr_expect_eq(toolkit_disassembler(tool, out, why), 0, "%s", why);
    cr_expect_str_eq(out, tool);
    setenv("DV_NCU", tool, 1);
    cr_expect_eq(toolkit_ncu(NULL, out), 0);
    cr_expect_str_eq(out, tool);
    cr_expect_eq(toolkit_ncu("/nonexistent/ncu", out), -1, "one named that is not there");
}

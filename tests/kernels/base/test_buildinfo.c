/* test_buildinfo.c -- the build provenance is the build's: the nvcc flags
 * recorded are every flag the kernels were compiled with (read back from
 * the compile commands CMake exported), the architectures every one they
 * were generated for, and the git revision the tree's when it was built
 * (not when CMake configured). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels/base/buildinfo.h"
#include "tests/support/readfile.h"

#ifndef DV_TEST_BUILD_DIR
#define DV_TEST_BUILD_DIR "."
#endif
#ifndef DV_TEST_SOURCE_DIR
#define DV_TEST_SOURCE_DIR "."
#endif

/* The nvcc command that compiled `source` (a .cu file name), copied into
 * `cmd`, from compile_commands.json. Returns 0, or -1 when there is none. */
static int nvcc_command(const char *json, const char *source, char *cmd, size_t len) {
    for (const char *p = strstr(json, "\"command\": \""); p; p = strstr(p + 1, "\"command\": \"")) {
        const char *s = p + 12, *e = s;
        while (*e && !(*e == '"' && e[-1] != '\\')) e++;
        size_t n = (size_t)(e - s);
        if (n >= len) continue;
        memcpy(cmd, s, n);
        cmd[n] = '\0';
        char want[256];
        snprintf(want, sizeof want, "/%s -o ", source);
        if (strstr(cmd, "nvcc") && strstr(cmd, want)) return 0;
    }
    return -1;
}

/* Whether `flag` is one of the space-separated words of `list`. */
static int has_word(const char *list, const char *flag) {
    size_t n = strlen(flag);
    for (const char *p = strstr(list, flag); p; p = strstr(p + 1, flag))
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    return 0;
}

/* Checks one kernel file's command against the recorded flags. Words that
 * say where things are (include files, the input, the output, dependency
 * files) and CMake's own driver option are not build flags; the
 * architectures are recorded apart and checked against their own record. */
static void check_command(const char *source) {
    if (!buildinfo_nvcc_version()[0]) {
        /* A build without nvcc compiled no kernels, and records no flags and
         * no architectures rather than ones nothing was built with. */
        cr_expect_str_empty(buildinfo_cuda_flags());
        cr_expect_str_empty(buildinfo_cuda_architectures());
        return;
    }
    char *json = readfile(DV_TEST_BUILD_DIR "/compile_commands.json", NULL);
    if (!json) cr_skip_test("no %s/compile_commands.json (a generator without exported commands)", DV_TEST_BUILD_DIR);
    static char cmd[16384];
    int found = nvcc_command(json, source, cmd, sizeof cmd);
    free(json);
    cr_assert_eq(found, 0, "no nvcc command for %s in compile_commands.json", source);
    const char *flags = buildinfo_cuda_flags(), *archs = buildinfo_cuda_architectures();
    unsigned checked = 0;
    char *save = NULL;
    int skip_next = 0;
    for (char *w = strtok_r(cmd, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (skip_next) {
            skip_next = 0;
            continue;
        }
        if (strstr(w, "nvcc") == w + strlen(w) - 4 || strcmp(w, "-forward-unknown-to-host-compiler") == 0) continue;
        if (strcmp(w, "--options-file") == 0 || strcmp(w, "-o") == 0 || strcmp(w, "-x") == 0 ||
            strcmp(w, "-MF") == 0 || strcmp(w, "-MT") == 0 || strcmp(w, "-isystem") == 0) {
            skip_next = 1;
            continue;
        }
        if (w[0] != '-' || strcmp(w, "-c") == 0 || strcmp(w, "-MD") == 0 || strncmp(w, "-I", 2) == 0) continue;
        if (strncmp(w, "--generate-code=arch=compute_", 29) == 0) {
            /* --generate-code=arch=compute_90,code=[compute_90,sm_90] is "90";
             * code=[sm_80] alone is "80-real". */
            char arch[16], rec[24];
            snprintf(arch, sizeof arch, "%.*s", (int)strcspn(w + 29, ","), w + 29);
            snprintf(rec, sizeof rec, "%s%s", arch, strstr(w, "code=[compute_") ? "" : "-real");
            char list[256];
            snprintf(list, sizeof list, ",%s,", archs);
            char item[32];
            snprintf(item, sizeof item, ",%s,", rec);
            cr_expect(strstr(list, item), "%s: nvcc got %s, the recorded architectures are \"%s\"", source, w, archs);
            checked++;
            continue;
        }
        cr_expect(has_word(flags, w), "%s: nvcc got %s, the recorded flags are \"%s\"", source, w, flags);
        checked++;
    }
    cr_expect_gt(checked, 3, "%s: only %u flags found in the command", source, checked);
}

Test(buildinfo, recorded_flags_are_every_flag_of_the_lesson_kernels) { check_command("lesson_kernels.cu"); }

Test(buildinfo, recorded_flags_are_every_flag_of_the_scenario_kernels) { check_command("scenario_kernels.cu"); }

Test(buildinfo, the_flag_the_constexpr_checks_need_is_recorded) {
    if (!buildinfo_nvcc_version()[0]) return; /* no kernels compiled: checked above */
    cr_expect(has_word(buildinfo_cuda_flags(), "--expt-relaxed-constexpr"), "%s", buildinfo_cuda_flags());
}

/* The output of `cmd` (first line), or NULL when it failed. */
static char *run(const char *cmd, char *out, size_t len) {
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    char *got = fgets(out, (int)len, p);
    int rc = pclose(p);
    if (!got || rc != 0) return NULL;
    out[strcspn(out, "\r\n")] = '\0';
    return out;
}

Test(buildinfo, git_revision_is_the_trees_at_build_time) {
    char head[128], cmd[1024];
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse --short=12 HEAD 2>/dev/null", DV_TEST_SOURCE_DIR);
    if (!run(cmd, head, sizeof head))
        cr_skip_test("no git, or %s is not a git checkout: nothing to compare the revision with",
                     DV_TEST_SOURCE_DIR);
    /* A binary built before the last commit rightly names the revision it
     * was built from: compare only a build at least as new as HEAD. */
    char when[64];
    snprintf(cmd, sizeof cmd, "git -C '%s' log -1 --format=%%ct HEAD 2>/dev/null", DV_TEST_SOURCE_DIR);
    struct stat self;
    if (run(cmd, when, sizeof when) && stat("/proc/self/exe", &self) == 0 && self.st_mtime < atoll(when))
        cr_skip_test("this binary was built before %s was committed: rebuild to compare the revision", head);
    const char *rev = buildinfo_git_revision();
    size_t n = strlen(head);
    cr_assert(strncmp(rev, head, n) == 0 && (rev[n] == '\0' || strcmp(rev + n, "-dirty") == 0),
              "built as \"%s\", the tree is at %s (rebuild after a commit: the revision is stamped at build time)",
              rev, head);
}

/* The kernels' digest is the one of the sources in the tree that was built:
 * SHA-256 over "<path> <sha256>" lines of the .cu / .cuh files (sorted) and
 * the model headers they compile (the three of the lesson, then the
 * data-sort's), the first 16 hex digits. Computed
 * here again with sha256sum, from the same list. */
Test(buildinfo, kernel_digest_is_the_kernel_sources) {
    char want[128], cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' 2>/dev/null && { for f in $(ls kernels/gpu/*.cu kernels/gpu/*.cuh | LC_ALL=C sort) "
             "kernels/model/model/predicate.h kernels/model/model/chain.h kernels/model/model/witness_record.h "
             "kernels/model/model/sortexp.h; do "
             "printf '%%s %%s\\n' \"$f\" \"$(sha256sum \"$f\" | cut -c1-64)\"; done; } | sha256sum | cut -c1-16",
             DV_TEST_SOURCE_DIR);
    if (!run(cmd, want, sizeof want)) cr_skip_test("no sha256sum to recompute the digest with");
    cr_expect_eq(strlen(buildinfo_kernel_digest()), 16, "%s", buildinfo_kernel_digest());
    cr_expect_str_eq(buildinfo_kernel_digest(), want,
                     "built with kernels %s, the tree's are %s (rebuild: it is stamped at build time)",
                     buildinfo_kernel_digest(), want);
}

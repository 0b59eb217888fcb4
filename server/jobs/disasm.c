/* disasm.c -- a cubin's SASS text from the disassembler, kept in memory
 * and on disk (disasm.h).
 *
 * The memory holds the last cubin's text (the rows of one process are of
 * one or two kernels, in order); every caller gets a copy. Each answer is
 * counted by where it came from (disasm_counts()). A file in the
 * cache folder that cannot be read is a miss; one that cannot be written
 * costs the next process a run of the tool, nothing else.
 */
#define _GNU_SOURCE
#include "server/jobs/disasm.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/status.h"
#include "kernels/model/listing/listing.h"
#include "server/core/subproc.h"
#include "server/jobs/fileio.h"
#include "server/jobs/toolkit.h"

static int is_cuobjdump(const char *tool) {
    const char *base = strrchr(tool, '/');
    return strstr(base ? base + 1 : tool, "cuobjdump") != NULL;
}

/* "nvdisasm V13.0.88 (path)" from the tool's --version. */
static void tool_label(const char *tool, char *label, size_t size) {
    const char *argv[] = {tool, "--version", NULL};
    struct subproc_result res;
    char err[ERR_LEN], version[64] = "";
    if (subproc_run(argv, NULL, 0, 10000, &res, err) == 0) {
        const char *v = NULL;
        for (const char *p = strstr(res.out, " V"); p; p = strstr(p + 1, " V")) v = p + 1;
        if (v) snprintf(version, sizeof version, "%.*s ", (int)strcspn(v, " \r\n,"), v);
        subproc_result_cleanup(&res);
    }
    const char *base = strrchr(tool, '/');
    /* A long install path is cut: the label says which tool, the path is a hint. */
    snprintf(label, size, "%.32s %.24s(%.64s)", base ? base + 1 : tool, version, tool);
}

/* `tool` run on the cubin, written to a file in `dir` for it: the label
 * line and the tool's output, malloc()ed. NULL with `why`. */
static char *run_disassembler(const char *tool, const char *dir, uint64_t crc, const void *cubin, size_t size,
                              size_t *len, char *why) {
    char cubin_path[PATH_MAX], err[ERR_LEN];
    snprintf(cubin_path, sizeof cubin_path, "%s/cubin-%ld-%016llx.cubin", dir, (long)getpid(), (unsigned long long)crc);
    if (fileio_write(cubin_path, cubin, size, err) != 0) {
        dv_seterr(why, "instructions: %s", err);
        return NULL;
    }
    const char *argv[4] = {tool, is_cuobjdump(tool) ? "-sass" : "-c", cubin_path, NULL};
    struct subproc_result res;
    int rc = subproc_run(argv, NULL, 0, DISASM_DEADLINE_MS, &res, err);
    unlink(cubin_path);
    if (rc != 0) {
        dv_seterr(why, "%s", err);
        return NULL;
    }
    if (res.how != SUBPROC_EXITED || res.status != 0 || res.len == 0) {
        char what[128];
        subproc_describe(&res, DISASM_DEADLINE_MS, what, sizeof what);
        dv_seterr(why, "the disassembler %s on the cubin: %s", tool, what);
        subproc_result_cleanup(&res);
        return NULL;
    }
    char label[LISTING_TOOL_LEN];
    tool_label(tool, label, sizeof label);
    size_t head = strlen(label) + 3;
    char *text = malloc(head + res.len + 1);
    if (!text) {
        dv_seterr(why, "instructions: out of memory for the disassembly");
        subproc_result_cleanup(&res);
        return NULL;
    }
    snprintf(text, head + 1, "# %s\n", label);
    memcpy(text + head, res.out, res.len + 1);
    *len = head + res.len;
    subproc_result_cleanup(&res);
    return text;
}

static struct disasm_counts counts;

void disasm_counts(struct disasm_counts *out) { *out = counts; }

/* The text from the cache folder `cache` (NULL: none), else from the tool
 * (then kept there). NULL with `why`. */
static char *disassemble(const char *tool, const char *cache, uint64_t crc, const void *cubin, size_t size, size_t *len,
                         char *why) {
    char cached[PATH_MAX] = "";
    if (cache) {
        snprintf(cached, sizeof cached, "%s/%016llx.sass", cache, (unsigned long long)crc);
        FILE *f = fopen(cached, "rb");
        if (f) {
            char *text = fileio_read(f, len);
            fclose(f);
            counts.folder += text != NULL;
            if (text) return text;
        }
    }
    const char *tmp = cache ? cache : getenv("TMPDIR");
    char *text = run_disassembler(tool, tmp && tmp[0] ? tmp : "/tmp", crc, cubin, size, len, why);
    counts.tool++;
    if (text && cache) {
        /* Written whole under another name, then renamed: a reader sees all of it or none. */
        char part[PATH_MAX + 16], ignored[ERR_LEN];
        snprintf(part, sizeof part, "%s.%ld", cached, (long)getpid());
        if (fileio_write(part, text, *len, ignored) == 0 && rename(part, cached) != 0) unlink(part);
    }
    return text;
}

char *disasm_cubin(const struct disasm_config *c, uint64_t crc, const void *cubin, size_t size, size_t *len,
                   char *why) {
    static struct {
        uint64_t crc;
        char *text;
        size_t len;
    } memo;
    char tool[PATH_MAX];
    if (toolkit_disassembler(c->tool, tool, why) != 0) return NULL;
    if (!memo.text || memo.crc != crc) {
        size_t n = 0;
        char *text = disassemble(tool, c->cache_dir, crc, cubin, size, &n, why);
        if (!text) return NULL;
        free(memo.text);
        memo.text = text;
        memo.len = n;
        memo.crc = crc;
    } else {
        counts.memory++;
    }
    char *copy = malloc(memo.len + 1);
    if (!copy) {
        dv_seterr(why, "instructions: out of memory for the disassembly");
        return NULL;
    }
    memcpy(copy, memo.text, memo.len + 1);
    *len = memo.len;
    return copy;
}

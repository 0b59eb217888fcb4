/* ncu.c -- a row's Source page from Nsight Compute (ncu.h). */
#define _GNU_SOURCE
#include "server/jobs/ncu.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/status.h"
#include "kernels/model/listing/listing_read.h"
#include "kernels/model/model/testimony.h"
#include "server/core/subproc.h"
#include "server/jobs/fileio.h"
#include "server/jobs/toolkit.h"

/* Runs `argv` under the deadline; its stdout on success, NULL with `err`. */
static char *run_tool(const char *const *argv, struct subproc_result *res, char *err) {
    if (subproc_run(argv, NULL, 0, NCU_DEADLINE_MS, res, err) != 0) return NULL;
    if (res->how != SUBPROC_EXITED || res->status != 0) {
        char what[128];
        subproc_describe(res, NCU_DEADLINE_MS, what, sizeof what);
        dv_seterr(err, "%s: %s", argv[0], what);
        subproc_result_cleanup(res);
        return NULL;
    }
    return res->out;
}

/* Part `k` of the row profiled by `ncu` running `self` on the request in
 * `req`, its report under `rep`, into `out`. Returns 0, or -1 with `err`. */
static int ncu_part(const char *ncu, const char *self, const struct ncu_row *r, const char *req, const char *rep,
                    unsigned k, struct listing_insns *out, char *err) {
    char tb[16], rw[16], dv[16], pt[16];
    snprintf(tb, sizeof tb, "%d", r->table);
    snprintf(rw, sizeof rw, "%d", r->row);
    snprintf(dv, sizeof dv, "%d", r->device);
    snprintf(pt, sizeof pt, "%u", k);
    /* -k: the lesson kernels alone (the session's memsets are no kernel of
     * ours). */
    const char *profile[] = {ncu,
                             "--section",
                             "SourceCounters",
                             "--clock-control",
                             "none",
                             "-k",
                             "regex:^(mix|scenario_)",
                             "--launch-count",
                             "1",
                             "-f",
                             "-o",
                             rep,
                             self,
                             "instructions",
                             "--launch-only",
                             "--part",
                             pt,
                             "--table",
                             tb,
                             "--row",
                             rw,
                             "--device",
                             dv,
                             "--request",
                             req,
                             "--grid",
                             r->whole_grid ? "whole" : "reduced",
                             NULL};
    struct subproc_result res;
    if (!run_tool(profile, &res, err)) return -1;
    subproc_result_cleanup(&res);
    char file[PATH_MAX + 32];
    snprintf(file, sizeof file, "%s.ncu-rep", rep);
    const char *print[] = {ncu, "-i", file, "--page", "source", "--print-source", "sass", "--csv", NULL};
    const char *csv = run_tool(print, &res, err);
    unlink(file);
    if (!csv) return -1;
    const char *start = strstr(csv, "\"Kernel Name\"");
    int rc = 0;
    if (!start || listing_read_ncu(start, strlen(start), 0, out, err) != 0) {
        if (!start) dv_seterr(err, "compare: ncu printed no Source page for part %u", k);
        rc = -1;
    }
    subproc_result_cleanup(&res);
    return rc;
}

int ncu_collect(const char *ncu_exact, const struct ncu_row *row, const char *request, struct listing_insns *out,
                char *err) {
    char ncu[PATH_MAX], self[PATH_MAX], tdir[PATH_MAX];
    const char *tmp = getenv("TMPDIR");
    snprintf(tdir, sizeof tdir, "%s/dv-ncu-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (toolkit_ncu(ncu_exact, ncu) != 0) {
        dv_seterr(err, "compare: no ncu (the toolkit's bin folder, /usr/local/cuda/bin, /opt/nvidia/nsight-compute, "
                       "PATH; --ncu PATH names one)");
        return -1;
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || !mkdtemp(tdir)) {
        dv_seterr(err, "compare: %s", n <= 0 ? "cannot name this binary" : strerror(errno));
        return -1;
    }
    self[n] = '\0';
    char req[PATH_MAX + 16], rep[PATH_MAX + 16], werr[ERR_LEN];
    snprintf(req, sizeof req, "%s/request.json", tdir);
    struct listing_insns parts[TESTIMONY_GRID_PARTS];
    unsigned got = 0;
    int rc = fileio_write(req, request, strlen(request), werr);
    if (rc != 0) dv_seterr(err, "instructions: %s", werr);
    for (unsigned k = 0; rc == 0 && k < row->nparts; k++) {
        snprintf(rep, sizeof rep, "%s/part%u", tdir, k);
        if ((rc = ncu_part(ncu, self, row, req, rep, k, &parts[got], err)) == 0) got++;
    }
    unlink(req);
    rmdir(tdir);
    if (rc == 0) rc = listing_combine(parts, row->weight, got, out, err);
    for (unsigned k = 0; k < got; k++) listing_insns_cleanup(&parts[k]);
    return rc;
}

/* nights_aa.c -- the comparison half of the night comparison's A/A run (a
 * benchmark, not a test): pairs of divergence.v1 documents filed as two
 * consecutive nights of suite day22-part1 in a scratch evidence store, the
 * second night's record read back and its comparison tallied.
 *
 * Each pair goes through the real path (evidence_write files the first
 * night, then the second, which is compared with it at NIGHTS_TOLERANCE), and
 * the two records read back are compared again at every tolerance of
 * --tolerance (nights_compare), so the tolerance can be chosen from the
 * data: per tolerance and row, how many pairs read same / higher / lower /
 * ambiguous; per row the largest |change| and the widest change interval.
 * Usage: nights_aa [--tolerance T,T,...] [--row TABLE/ROW] BEFORE AFTER
 * [BEFORE AFTER ...]; --row prints that row's label per pair and tolerance
 * (the planted row). Exit 1 on a document that cannot be filed.
 */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server/evidence/evidence.h"
#include "server/evidence/nights.h"

#define MAX_TOL 8
#define MAX_ROWS 64

struct row_tally {
    char key[160];
    unsigned n[MAX_TOL][4];
    double max_change, max_halfwidth, sum_change;
    unsigned pairs;
};

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (s && fread(s, 1, (size_t)len, f) != (size_t)len) {
        free(s);
        s = NULL;
    }
    if (s) s[len] = '\0';
    fclose(f);
    return s;
}

static int label_index(const char *l) {
    static const char *names[] = {"same", "higher", "lower", "ambiguous"};
    for (int i = 0; i < 4; i++)
        if (l && strcmp(l, names[i]) == 0) return i;
    return -1;
}

static int file_night(struct evidence *ev, const char *date, const char *doc_path, char *err) {
    char *doc = slurp(doc_path);
    if (!doc) {
        snprintf(err, ERR_LEN, "%s: cannot read", doc_path);
        return -1;
    }
    char finished[32];
    snprintf(finished, sizeof finished, "%sT03:00:00Z", date);
    struct evidence_record rec = {.suite = "day22-part1",
                                  .gpu = "aa-gpu",
                                  .gpu_name = "A/A",
                                  .date = date,
                                  .ok = 1,
                                  .finished_utc = finished,
                                  .document_json = doc};
    int rc = evidence_write(ev, &rec, NULL, err);
    free(doc);
    return rc;
}

static json_t *night(struct evidence *ev, const char *date) {
    struct blob *b = NULL;
    struct evidence_error e;
    if (evidence_get_night(ev, "aa-gpu", NULL, date, "day22-part1", EVIDENCE_JSON, &b, &e) != 0) return NULL;
    json_t *j = json_loadb(b->data, b->len, 0, NULL);
    blob_release(b);
    return j;
}

int main(int argc, char **argv) {
    double tol[MAX_TOL] = {NIGHTS_TOLERANCE};
    int ntol = 1, a = 1;
    const char *watch = NULL;
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a += 2) {
        if (a + 1 >= argc) return 2;
        if (strcmp(argv[a], "--tolerance") == 0) {
            ntol = 0;
            for (char *p = argv[a + 1]; *p && ntol < MAX_TOL;) {
                tol[ntol++] = strtod(p, &p);
                if (*p == ',') p++;
            }
        } else if (strcmp(argv[a], "--row") == 0) {
            watch = argv[a + 1];
        } else {
            return 2;
        }
    }
    if ((argc - a) < 2 || (argc - a) % 2) {
        fprintf(stderr, "usage: nights_aa [--tolerance T,T,...] [--row TABLE/ROW] BEFORE AFTER [...]\n");
        return 2;
    }
    static struct row_tally rows[MAX_ROWS];
    int nrows = 0, pair = 0;
    unsigned filed_labels[4] = {0};
    for (; a + 1 < argc; a += 2, pair++) {
        char tmpl[] = "/tmp/nights-aa-XXXXXX", err[ERR_LEN];
        if (!mkdtemp(tmpl)) return 1;
        struct evidence *ev = evidence_open(tmpl, err);
        if (!ev || file_night(ev, "2026-01-01", argv[a], err) != 0 ||
            file_night(ev, "2026-01-02", argv[a + 1], err) != 0) {
            fprintf(stderr, "nights_aa: pair %d: %s\n", pair, err);
            return 1;
        }
        json_t *before = night(ev, "2026-01-01"), *after = night(ev, "2026-01-02");
        json_t *filed = json_object_get(after, "comparison");
        printf("pair %2d: %s\n", pair, json_string_value(json_object_get(filed, "summary")));
        size_t i;
        json_t *r;
        json_array_foreach(json_object_get(filed, "rows"), i, r) {
            int l = label_index(json_string_value(json_object_get(json_object_get(r, "previous"), "label")));
            if (l >= 0) filed_labels[l]++;
        }
        for (int t = 0; t < ntol; t++) {
            int bad = 0;
            json_t *c = nights_compare(after, &before, 1, tol[t], &bad);
            json_array_foreach(json_object_get(c, "rows"), i, r) {
                char key[160];
                snprintf(key, sizeof key, "%s/%s", json_string_value(json_object_get(r, "table")),
                         json_string_value(json_object_get(r, "name")));
                json_t *p = json_object_get(r, "previous");
                int l = label_index(json_string_value(json_object_get(p, "label")));
                if (l < 0) continue;
                int k = 0;
                while (k < nrows && strcmp(rows[k].key, key) != 0) k++;
                if (k == nrows && nrows < MAX_ROWS) snprintf(rows[nrows++].key, sizeof rows[0].key, "%s", key);
                if (k >= MAX_ROWS) continue;
                rows[k].n[t][l]++;
                if (t == 0) {
                    const double d = json_real_value(json_object_get(p, "change"));
                    json_t *ci = json_object_get(p, "change_ci");
                    const double hw =
                        0.5 * (json_real_value(json_object_get(ci, "hi")) - json_real_value(json_object_get(ci, "lo")));
                    rows[k].pairs++;
                    rows[k].sum_change += d;
                    if (fabs(d) > rows[k].max_change) rows[k].max_change = fabs(d);
                    if (hw > rows[k].max_halfwidth) rows[k].max_halfwidth = hw;
                }
                if (watch && strcmp(watch, key) == 0)
                    printf("  %s at %.2f%%: %s %+.2f%% [%+.2f, %+.2f]\n", key, 100 * tol[t],
                           json_string_value(json_object_get(p, "label")),
                           100 * json_real_value(json_object_get(p, "change")),
                           100 * json_real_value(json_object_get(json_object_get(p, "change_ci"), "lo")),
                           100 * json_real_value(json_object_get(json_object_get(p, "change_ci"), "hi")));
            }
            json_decref(c);
        }
        json_decref(before);
        json_decref(after);
        evidence_close(ev);
        char cmd[64];
        snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
        if (system(cmd) != 0) fprintf(stderr, "nights_aa: could not remove %s\n", tmpl);
    }
    printf("\nfiled at the store's tolerance (%.2f%%): same %u, higher %u, lower %u, ambiguous %u\n",
           100 * NIGHTS_TOLERANCE, filed_labels[0], filed_labels[1], filed_labels[2], filed_labels[3]);
    printf("\n%-36s %5s %10s %10s %10s", "row", "pairs", "mean chg", "max |chg|", "max ci hw");
    for (int t = 0; t < ntol; t++) printf("   same/hi/lo/amb @%.2f%%", 100 * tol[t]);
    printf("\n");
    unsigned tot[MAX_TOL][4] = {{0}};
    for (int k = 0; k < nrows; k++) {
        printf("%-36s %5u %+9.3f%% %9.3f%% %9.3f%%", rows[k].key, rows[k].pairs,
               rows[k].pairs ? 100 * rows[k].sum_change / rows[k].pairs : 0, 100 * rows[k].max_change,
               100 * rows[k].max_halfwidth);
        for (int t = 0; t < ntol; t++) {
            printf("   %4u/%2u/%2u/%3u         ", rows[k].n[t][0], rows[k].n[t][1], rows[k].n[t][2], rows[k].n[t][3]);
            for (int l = 0; l < 4; l++) tot[t][l] += rows[k].n[t][l];
        }
        printf("\n");
    }
    printf("%-36s %5s %10s %10s %10s", "all rows", "", "", "", "");
    for (int t = 0; t < ntol; t++) {
        const unsigned all = tot[t][0] + tot[t][1] + tot[t][2] + tot[t][3];
        printf("   %4u/%2u/%2u/%3u %5.1f%%   ", tot[t][0], tot[t][1], tot[t][2], tot[t][3],
               all ? 100.0 * tot[t][0] / all : 0);
    }
    printf("\n");
    return 0;
}

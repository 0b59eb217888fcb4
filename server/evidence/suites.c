/* suites.c -- the table of evidence suites and its JSON form.
 *
 * Every suite starts from the lesson's defaults (experiment_defaults) and
 * changes only what makes it that suite, so a change of defaults reaches every
 * suite at once; the version says when a suite's request changed on purpose.
 * The request is validated the same way POST /measure validates a body, so a
 * suite can never ask the GPU worker for something /measure would refuse.
 *
 * To add a suite, add one entry to `table` below.
 */
#include <string.h>
#include <jansson.h>

#include "api/jsonout.h"
#include "server/evidence/suites.h"
#include "api/options.h"
#include "api/request.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"

/* A row whose ratio's 95% interval is wider than this on either side is too
 * uncertain to publish: the runner aims for max_halfwidth (0.5%) and stops
 * at its budget, so a night that ends far above the target says the GPU was
 * not quiet. */
#define SUITES_NOISE_LIMIT 0.02

/* Every suite keeps every row's instruction profile (the lesson's at
 * version 2, the scenario suite's at version 2, arithmetic-intensity's at
 * version 2, data-sort's at version 2: each request gained
 * `instructions: true` when its kernels came to be profiled; data-sort's
 * sort+shade and sort rows, CUB's kernels, have none by design).
 * compiler-and-warp is the experiments' nightly set (k paths at seven k,
 * the predication diagonal, branchless against branch, reconvergence); its
 * full predication map is asked for on demand (scenario predication-map),
 * not nightly: a small budget per table keeps the night within 10 s. */
static const struct suite table[] = {
    {"day22-part1",
     2,
     "Day 22, Part 1: one branch, 4096 multiply-adds on each side; the lesson's four predicates",
     DV_PART_1,
     {NULL},
     NULL,
     SUITES_NOISE_LIMIT,
     0,
     1,
     0},
    {"day22-part2",
     2,
     "Day 22, Part 2: the same branch inside the loop, one multiply-add on each side",
     DV_PART_2,
     {NULL},
     NULL,
     SUITES_NOISE_LIMIT,
     0,
     1,
     0},
    {"day22-exercise",
     2,
     "Day 22 exercise: Part 1 plus threadIdx.x < 16",
     DV_PART_1,
     {"first-16", NULL},
     NULL,
     SUITES_NOISE_LIMIT,
     0,
     1,
     0},
    /* Eleven tables: a smaller budget each keeps the job inside its deadline. */
    {"scenarios",
     2,
     "The worked cases of \"Worked examples — Warp divergence penalties\": model against measurement",
     DV_PART_ALL,
     {NULL},
     "all",
     SUITES_NOISE_LIMIT,
     1000.0,
     1,
     0},
    /* Four tables of 4 to 16 rows each: a quarter second of GPU time each at
     * most; 2048 blocks keep the analysis of its 40 rows (each assigned and
     * modelled thread by thread) under the server's per-request limit. */
    {"compiler-and-warp",
     1,
     "The compiler and the warp: k paths, predicated or branched, branchless against branch, reconvergence",
     DV_PART_ALL,
     {NULL},
     "compiler-and-warp",
     SUITES_NOISE_LIMIT,
     250.0,
     1,
     2048},
    /* Data-dependent divergence and the sort: twelve cells (uniform and
     * tiles, M 4 and 32, C 16, 128 and 512) of five rows, a quarter second
     * of GPU time each at most; the full grid of a distribution is asked
     * for on demand (scenario data-sort-<distribution>). The instruction
     * profile of each cell's naive, index and shade-sorted rows, each on
     * the whole grid (4096 x 256 items x C 512 at most: 5.4e8
     * thread-iterations, under the per-request cap); sort+shade and sort
     * run CUB's kernels and have none. */
    {"data-sort",
     2,
     "Data-dependent divergence and the sort: naive against CUB radix sort then shade, over materials and cost",
     DV_PART_ALL,
     {NULL},
     "data-sort",
     SUITES_NOISE_LIMIT,
     250.0,
     1,
     0},
    /* ---- arithmetic intensity: two tables of 14 rows (the stream and the
     * chase, six points each from 1/32 to 128 FLOP/byte, and the two ridge
     * rows), a quarter second of GPU time each, the lesson's 4096 blocks
     * (28 rows x 1 Mi threads stay under the per-request analysis limit).
     * Each row's instruction profile, its paths named by the region lines
     * of intensity_kernels.cu; each row's lanes repeat every block, so one
     * block stands for the grid, far under the per-request cost cap. The
     * points between ("arithmetic-intensity-full") on demand. */
    {"arithmetic-intensity",
     2,
     "Arithmetic intensity: the lesson's branch with paths of F FMAs per L loads, streaming and pointer-chasing, "
     "on the roofline measured in the same run",
     DV_PART_ALL,
     {NULL},
     "arithmetic-intensity",
     SUITES_NOISE_LIMIT,
     250.0,
     1,
     0},
    /* ---- end arithmetic intensity ---- */
};

size_t suites_count(void) {
    return sizeof table / sizeof table[0];
}

const struct suite *suites_get(size_t i) {
    return i < suites_count() ? &table[i] : NULL;
}

int suites_index(const char *name) {
    if (!name) return -1;
    for (size_t i = 0; i < suites_count(); i++)
        if (strcmp(table[i].name, name) == 0) return (int)i;
    return -1;
}

const struct suite *suites_find(const char *name) {
    int i = suites_index(name);
    return i < 0 ? NULL : &table[i];
}

int suites_options(const struct suite *s, struct dv_options *o, char *err) {
    memset(o, 0, sizeof *o);
    experiment_defaults(o);
    o->part = s->part;
    for (size_t k = 0; k < SUITES_MAX_EXTRA && s->extra_predicates[k]; k++) {
        if (o->npredicates >= DV_MAX_ROWS) {
            dv_seterr(err, "suite %s: more than %u predicates", s->name, DV_MAX_ROWS);
            return -1;
        }
        size_t n = strlen(s->extra_predicates[k]);
        if (n >= PREDICATE_TEXT_LEN) {
            dv_seterr(err, "suite %s: predicate too long", s->name);
            return -1;
        }
        memcpy(o->predicates[o->npredicates++], s->extra_predicates[k], n + 1);
    }
    if (s->scenario) {
        size_t n = strlen(s->scenario);
        if (n >= DV_SCENARIO_LEN) {
            dv_seterr(err, "suite %s: scenario name too long", s->name);
            return -1;
        }
        memcpy(o->scenario, s->scenario, n + 1);
    }
    if (s->budget_ms > 0) o->budget_ms = s->budget_ms;
    if (s->blocks) {
        o->blocks = s->blocks;
        o->given |= DV_GIVEN_BLOCKS;
    }
    o->instructions = s->instructions;
    char why[ERR_LEN];
    if (options_validate(o, OPTIONS_JSON, NULL, why) != 0) {
        dv_seterr(err, "suite %s: %s", s->name, why);
        return -1;
    }
    return 0;
}

char *suites_json(char *err) {
    char *out = NULL;
    int bad = 0;
    json_t *root = json_object(), *list = json_array();
    /* Filled below while `root` holds it; once `bad` is set it may be gone,
     * and the loop adds nothing more. */
    jsonout_put(root, "suites", list, &bad);
    for (size_t i = 0; i < suites_count() && !bad; i++) {
        const struct suite *s = &table[i];
        struct dv_options o;
        if (suites_options(s, &o, err) != 0) goto cleanup;
        unsigned long failures = jsonout_failures();
        char *body = request_dump(&o);
        if (body && jsonout_failures() != failures) { /* its text may be cut short */
            free(body);
            body = NULL;
        }
        if (!body) goto oom;
        json_error_t je;
        json_t *req = jsonout_loadb(body, strlen(body), JSON_REJECT_DUPLICATES, &je);
        free(body);
        if (!req && jsonout_oom(&je)) goto oom;
        if (!req) {
            dv_seterr(err, "suite %s: request_dump wrote invalid JSON: %s", s->name, je.text);
            goto cleanup;
        }
        json_t *e = json_object(), *reqs = json_array();
        jsonout_put(e, "name", jsonout_str(s->name), &bad);
        jsonout_put(e, "version", json_integer(s->version), &bad);
        jsonout_put(e, "description", jsonout_str(s->description), &bad);
        jsonout_put(e, "noise_limit", json_real(s->noise_limit), &bad);
        jsonout_append(reqs, req, &bad);
        jsonout_put(e, "requests", reqs, &bad);
        jsonout_append(list, e, &bad);
    }
    /* The names a request's "scenario" takes (a worked-case id takes every
     * scenario of its case), so a client need not guess them. */
    json_t *names = json_array();
    for (size_t i = 0; !bad && scenario_get(i); i++) {
        const struct scenario *sc = scenario_get(i);
        json_t *e = json_object();
        jsonout_put(e, "name", jsonout_str(sc->name), &bad);
        jsonout_put(e, "cell", jsonout_str(sc->cell), &bad);
        jsonout_put(e, "title", jsonout_str(sc->title), &bad);
        jsonout_append(names, e, &bad);
    }
    jsonout_put(root, "scenarios", names, &bad);
    if (bad || !(out = jsonout_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER))) goto oom;
    goto cleanup;
oom:
    dv_seterr(err, "suites: out of memory");
cleanup:
    json_decref(root);
    return out;
}

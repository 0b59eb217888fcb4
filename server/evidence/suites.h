/* suites.h -- named, versioned sets of measurement requests.
 *
 * A suite is what the nightly evidence refresh measures and files under its
 * name: `day22-part1` is the lesson's Part 1 table, and so on. Suites live in
 * one static table in suites.c; adding one is adding one entry there. A
 * suite's version is bumped whenever its request changes, so evidence files
 * made by different requests are never compared as if they were the same.
 */
#ifndef DV_SUITES_H
#define DV_SUITES_H

#include <stddef.h>
#include "kernels/model/model/experiment.h"

#define SUITES_NAME_LEN 64
#define SUITES_MAX_EXTRA 4

/* One entry of the table. The request is the lesson's defaults
 * (experiment_defaults) changed by the fields below: `part`, the Part 1
 * predicates appended to the default four, a scenario name, and whether
 * each row's instruction profile is taken. */
struct suite {
    const char *name;        /* stable id, [a-z0-9-], used in file names and URLs */
    unsigned version;        /* bump when the request changes                      */
    const char *description;
    enum dv_part part;
    const char *extra_predicates[SUITES_MAX_EXTRA]; /* appended to the default rows */
    const char *scenario;    /* NULL or a scenario name / "all"                    */
    double noise_limit;      /* a ratio known to worse than +-this fails the suite */
    double budget_ms;        /* GPU time per table; 0 keeps the default            */
    int instructions;        /* 1: each row's instruction profile too              */
    unsigned blocks;         /* the grid's blocks; 0 keeps the default             */
};

/* Number of suites in the table. */
size_t suites_count(void);

/* Suite `i` (0 <= i < suites_count()), or NULL when out of range. */
const struct suite *suites_get(size_t i);

/* Suite by exact name, or NULL. Only names in the table match, so a name that
 * came from a URL is safe to use in a path once this returns non-NULL. */
const struct suite *suites_find(const char *name);

/* Index of suite `name` in the table, or -1. */
int suites_index(const char *name);

/* Builds and validates the request of `s` into `o`. Returns 0, or -1 with
 * `err` (a suite whose request does not validate is a defect in the table). */
int suites_options(const struct suite *s, struct dv_options *o, char *err);

/* The GET /suites body: {"suites": [{"name", "version", "description",
 * "noise_limit", "requests": [{...}]}], "scenarios": [{"name", "cell",
 * "title"}]} as a malloc()ed string, or NULL with `err`. Each request is what request_dump() writes, so it can be POSTed to
 * /measure unchanged (a suite has one today; the list leaves room). */
char *suites_json(char *err);

#endif /* DV_SUITES_H */

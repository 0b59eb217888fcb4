/* options.c -- the one place where a request's values are checked.
 *
 * The CLI and the JSON API both end in options_validate(), so a value gets the
 * same rule and the same reason whichever way it came in. Each field has one
 * entry in `fields` below (its JSON name and its CLI name) and its allowed
 * range in words in range_text(), written from the constants the checks use;
 * messages are "<name>: <why>; <range>" with the name spelled per style.
 * options_set_cli() only turns text into numbers (strictly: digits
 * only, no sign, no overflow), one setter per option in `cli_setters`, and
 * leaves the ranges to options_validate().
 *
 * Predicates are checked by resolving them (predicate_resolve), which is the
 * same code the planner uses, so anything that validates also plans. The
 * baseline must name a Part 1 row; when it does not, it is appended as one,
 * because a ratio needs its baseline measured in the same table.
 */
#include "api/options.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/sortexp.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/status.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/predicate.h"

/* An upper bound of threads x iterations for blocks "auto": gpu/measure.c grows
 * the grid until the uniform row takes about 1 ms, i.e. at most a couple of ms
 * of FMA throughput on any current GPU (64 TFMA/s x 2 ms). */
#define OPTIONS_AUTO_FMA_BOUND 1.28e11

enum field_id {
    F_PART, F_PREDICATES, F_BASELINE, F_BLOCKS, F_TPB, F_ITERATIONS, F_MAX_HALFWIDTH,
    F_BUDGET_MS, F_MIN_SAMPLES, F_MAX_SAMPLES, F_DEVICE, F_SCENARIO, F_INSTRUCTIONS, F_COUNT
};

static const struct field {
    const char *json, *cli;
} fields[F_COUNT] = {
    [F_PART] = {"part", "--part"},
    [F_PREDICATES] = {"predicates", "--predicates"},
    [F_BASELINE] = {"baseline", "--baseline"},
    [F_BLOCKS] = {"blocks", "--blocks"},
    [F_TPB] = {"threads_per_block", "--threads-per-block"},
    [F_ITERATIONS] = {"iterations", "--iterations"},
    [F_MAX_HALFWIDTH] = {"max_halfwidth", "--max-halfwidth"},
    [F_BUDGET_MS] = {"budget_ms", "--budget-ms"},
    [F_MIN_SAMPLES] = {"min_samples", "--min-samples"},
    [F_MAX_SAMPLES] = {"max_samples", "--max-samples"},
    [F_DEVICE] = {"device", "--device"},
    [F_SCENARIO] = {"scenario", "--scenario"},
    [F_INSTRUCTIONS] = {"instructions", "--instructions"},
};

/* The CLI spelling of each DV_GIVEN_* bit (model/model/experiment.h), in bit order. */
static const char *const given_cli[DV_GIVEN_NUM] = {
    "--part",      "--predicates",  "--baseline",    "--blocks", "--threads-per-block", "--iterations", "--max-noise",
    "--budget-ms", "--min-samples", "--max-samples", "--device", "--scenario",          "--witness",    "--counters",
    "--instructions",
};

const char *options_cli_name(unsigned bit) {
    for (unsigned i = 0; i < DV_GIVEN_NUM; i++)
        if (bit == 1u << i) return given_cli[i];
    return "";
}

/* The allowed values of field `id` in words, as the caller's style spells
 * them, written from the same constants options_validate() compares with, so
 * the text cannot drift from the rule (tests/api/test_options.c reads the
 * numbers back out of the messages and tries them). */
static const char *range_text(enum field_id id, enum options_style style, char *buf, size_t len) {
    int cli = style == OPTIONS_CLI;
    switch (id) {
    case F_PART: snprintf(buf, len, "allowed: 1, 2 or %s", cli ? "all" : "\"all\""); break;
    case F_PREDICATES: snprintf(buf, len, "allowed: 1 to %u built-in names or expressions", DV_MAX_ROWS); break;
    case F_BASELINE: snprintf(buf, len, "allowed: a built-in name or an expression"); break;
    case F_BLOCKS: snprintf(buf, len, "allowed: 1..%u or %s", DV_MAX_BLOCKS, cli ? "auto" : "\"auto\""); break;
    case F_TPB:
        if (cli) snprintf(buf, len, "allowed: N or XxY (32x8) with X*Y in 1..%u", DV_MAX_THREADS_PER_BLOCK);
        else snprintf(buf, len, "allowed: x or [x, y] with x*y in 1..%u", DV_MAX_THREADS_PER_BLOCK);
        break;
    case F_ITERATIONS: snprintf(buf, len, "allowed: 1..%u", DV_MAX_ITERATIONS); break;
    case F_MAX_HALFWIDTH:
        snprintf(buf, len, "allowed: above 0 and at most %g (%g%%)%s", OPTIONS_MAX_NOISE, OPTIONS_MAX_NOISE * 100,
                 cli ? "; --max-noise is its old name" : "; max_noise is its old name");
        break;
    case F_BUDGET_MS: snprintf(buf, len, "allowed: %g..%g", OPTIONS_MIN_BUDGET_MS, DV_MAX_BUDGET_MS); break;
    case F_MIN_SAMPLES: snprintf(buf, len, "allowed: 1..max_samples"); break;
    case F_MAX_SAMPLES: snprintf(buf, len, "allowed: min_samples..%u", OPTIONS_MAX_SAMPLES); break;
    case F_DEVICE: snprintf(buf, len, "allowed: 0..%d", OPTIONS_MAX_DEVICE); break;
    case F_SCENARIO:
        snprintf(buf, len, "allowed: a scenario name of at most %d characters, or all", DV_SCENARIO_LEN - 1);
        break;
    case F_INSTRUCTIONS:
        snprintf(buf, len, "allowed: %s, each row's profile at most %.3g thread-iterations", cli ? "on or off" : "true or false",
                 OPTIONS_MAX_INSTRUCTIONS_COST);
        break;
    default: snprintf(buf, len, "allowed: see the documentation"); break;
    }
    return buf;
}

/* Fills err with "<name>: <why>; <range>" and *field with the JSON name. */
static int fail(enum field_id id, enum options_style style, const char **field, char *err,
                const char *why) {
    const struct field *f = &fields[id];
    char range[160];
    if (field) *field = f->json;
    dv_seterr(err, "%s: %s; %s", style == OPTIONS_CLI ? f->cli : f->json, why,
              range_text(id, style, range, sizeof range));
    return -1;
}

/* Predicate entry `i` failed: the name carries the index (JSON) or the text (CLI). */
static int fail_predicate(unsigned i, enum options_style style, const char **field, char *err,
                          const char *text, const char *why) {
    if (field) *field = experiment_predicate_field(i);
    if (style == OPTIONS_CLI)
        dv_seterr(err, "--predicates: \"%.300s\": %s", text, why);
    else
        dv_seterr(err, "predicates[%u]: %s", i, why);
    return -1;
}

static int check_predicates(struct dv_options *o, enum options_style style, struct dv_fault *fault,
                            char *err) {
    const char **field = fault ? &fault->field : NULL;
    struct predicate_fault *at = fault ? &fault->expr : NULL;
    struct predicate p[DV_MAX_ROWS], base;
    char why[ERR_LEN];
    unsigned resolved = 0;
    int rc = -1, base_ok = 0;

    if (o->npredicates < 1 || o->npredicates > DV_MAX_ROWS)
        return fail(F_PREDICATES, style, field, err,
                    o->npredicates < 1 ? "no predicates" : "too many predicates");
    for (unsigned i = 0; i < o->npredicates; i++) {
        why[0] = '\0';
        if (memchr(o->predicates[i], '\0', PREDICATE_TEXT_LEN) == NULL) {
            char why_len[64];
            snprintf(why_len, sizeof why_len, "longer than %d characters", PREDICATE_TEXT_LEN - 1);
            fail_predicate(i, style, field, err, "", why_len);
            goto cleanup;
        }
        if (predicate_resolve(o->predicates[i], &p[i], at, why) != 0) {
            fail_predicate(i, style, field, err, o->predicates[i], why);
            goto cleanup;
        }
        resolved++;
        for (unsigned j = 0; j < i; j++) {
            if (strcmp(p[j].name, p[i].name) == 0) {
                char dup[ERR_LEN];
                if (style == OPTIONS_CLI)
                    snprintf(dup, sizeof dup, "listed twice");
                else
                    snprintf(dup, sizeof dup, "duplicate of predicates[%u] (\"%.300s\")", j,
                             o->predicates[j]);
                fail_predicate(i, style, field, err, o->predicates[i], dup);
                goto cleanup;
            }
        }
    }

    why[0] = '\0';
    if (memchr(o->baseline, '\0', PREDICATE_TEXT_LEN) == NULL) {
        snprintf(why, sizeof why, "longer than %d characters", PREDICATE_TEXT_LEN - 1);
        fail(F_BASELINE, style, field, err, why);
        goto cleanup;
    }
    if (predicate_resolve(o->baseline, &base, at, why) != 0) {
        /* No range suffix: the message ends with what the expression got wrong. */
        if (field) *field = fields[F_BASELINE].json;
        dv_seterr(err, "%s: %s", style == OPTIONS_CLI ? fields[F_BASELINE].cli : "baseline", why);
        goto cleanup;
    }
    base_ok = 1;
    for (unsigned i = 0; i < o->npredicates; i++) {
        if (strcmp(p[i].name, base.name) == 0) {
            /* Spell the baseline as its row is spelled, so the planner can find it by text. */
            memcpy(o->baseline, o->predicates[i], PREDICATE_TEXT_LEN);
            rc = 0;
            goto cleanup;
        }
    }
    if (o->npredicates >= DV_MAX_ROWS) {
        snprintf(why, sizeof why,
                 "not one of the predicates, and there is no room to add it as a row (at most %u rows)", DV_MAX_ROWS);
        fail(F_BASELINE, style, field, err, why);
        goto cleanup;
    }
    memcpy(o->predicates[o->npredicates++], o->baseline, PREDICATE_TEXT_LEN);
    rc = 0;

cleanup:
    for (unsigned i = 0; i < resolved; i++) predicate_cleanup(&p[i]);
    if (base_ok) predicate_cleanup(&base);
    return rc;
}

/* A data-sort request's dearest row profile (0 for another request): its
 * shading rows are each profiled on the whole grid (the materials decide
 * every warp's divergence: no block stands for another), each thread
 * running C FMAs, so the grid's threads x its cells' largest C (into *c). */
static double sort_instructions_cost(const struct dv_options *o, unsigned *c) {
    struct sortexp_grid sg;
    *c = 0;
    if (!sortexp_grid_named(o->scenario, &sg)) return 0;
    for (unsigned i = 0; i < sg.nc; i++)
        if (sg.c[i] > *c) *c = sg.c[i];
    const struct dv_geometry g = scenario_grid(o);
    return (double)dv_grid_threads(&g) * *c;
}

/* A request for instructions whose dearest row's profile is over the cap. */
static int check_instructions(const struct dv_options *o, enum options_style style, const char **field, char *err) {
    if (!o->instructions) return 0;
    int row = -1;
    const double cost = options_instructions_cost(o, &row);
    if (cost <= OPTIONS_MAX_INSTRUCTIONS_COST) return 0;
    char why[ERR_LEN], grid[64];
    unsigned c = 0;
    if (sort_instructions_cost(o, &c) > 0) {
        const struct dv_geometry g = scenario_grid(o);
        snprintf(why, sizeof why,
                 "the profile of a data-sort cell's shading row (C = %u, the largest of %.40s) would run %.3g "
                 "thread-iterations under patching: the materials decide each warp's divergence, so its whole grid "
                 "(%u blocks of %u threads) is profiled; lower blocks or threads_per_block, or leave instructions off",
                 c, o->scenario, cost, g.blocks, g.block_x * g.block_y);
        return fail(F_INSTRUCTIONS, style, field, err, why);
    }
    if (o->blocks) snprintf(grid, sizeof grid, "its whole grid (%u blocks)", o->blocks);
    else snprintf(grid, sizeof grid, "its whole grid (auto is costed at its upper bound)");
    snprintf(why, sizeof why,
             "the profile of predicates[%d] (\"%.200s\") would run %.3g thread-iterations under patching: its "
             "predicate reads blockIdx.x, so %s is profiled; lower blocks, threads_per_block or iterations, or leave "
             "instructions off",
             row, row >= 0 ? o->predicates[row] : "", cost, grid);
    return fail(F_INSTRUCTIONS, style, field, err, why);
}

int options_validate(struct dv_options *o, enum options_style style, struct dv_fault *fault, char *err) {
    dv_fault_clear(fault);
    const char **field = fault ? &fault->field : NULL;
    if (o->part != DV_PART_ALL && o->part != DV_PART_1 && o->part != DV_PART_2)
        return fail(F_PART, style, field, err, "unknown part");
    if (o->blocks > DV_MAX_BLOCKS)
        return fail(F_BLOCKS, style, field, err, "out of range");
    if (o->block_x < 1 || o->block_y < 1 || o->block_x > DV_MAX_THREADS_PER_BLOCK ||
        o->block_y > DV_MAX_THREADS_PER_BLOCK ||
        o->block_x * o->block_y > DV_MAX_THREADS_PER_BLOCK) {
        char why[64];
        snprintf(why, sizeof why, "more than %u threads in a block", DV_MAX_THREADS_PER_BLOCK);
        return fail(F_TPB, style, field, err,
                    o->block_x < 1 || o->block_y < 1 ? "a block needs at least one thread"
                    : o->block_x > DV_MAX_THREADS_PER_BLOCK || o->block_y > DV_MAX_THREADS_PER_BLOCK
                        ? "out of range"
                        : why);
    }
    if (o->iterations < 1 || o->iterations > DV_MAX_ITERATIONS)
        return fail(F_ITERATIONS, style, field, err, "out of range");
    if (!(o->max_noise > 0.0 && o->max_noise <= OPTIONS_MAX_NOISE))
        return fail(F_MAX_HALFWIDTH, style, field, err, "out of range");
    if (!(o->budget_ms >= OPTIONS_MIN_BUDGET_MS && o->budget_ms <= DV_MAX_BUDGET_MS))
        return fail(F_BUDGET_MS, style, field, err, "out of range");
    if (o->max_samples < 1 || o->max_samples > OPTIONS_MAX_SAMPLES)
        return fail(F_MAX_SAMPLES, style, field, err, "out of range");
    if (o->min_samples < 1 || o->min_samples > o->max_samples)
        return fail(F_MIN_SAMPLES, style, field, err,
                    o->min_samples < 1 ? "out of range" : "above max_samples");
    if (o->device < 0 || o->device > OPTIONS_MAX_DEVICE)
        return fail(F_DEVICE, style, field, err, "out of range");
    const char *nul = memchr(o->scenario, '\0', DV_SCENARIO_LEN);
    if (!nul)
        return fail(F_SCENARIO, style, field, err, "too long");
    size_t n = (size_t)(nul - o->scenario);
    for (size_t i = 0; i < n; i++)
        if (!isgraph((unsigned char)o->scenario[i]))
            return fail(F_SCENARIO, style, field, err, "contains spaces or control characters");
    if (n) {
        /* The names and what they select: scenario_select() alone decides. */
        const struct scenario *list[SCENARIO_MAX_SELECTED];
        size_t count;
        char why[ERR_LEN];
        if (!sortexp_grid_named(o->scenario, NULL) && scenario_select(o->scenario, list, &count, why) != 0) {
            if (field) *field = fields[F_SCENARIO].json;
            dv_seterr(err, "%s: %s", style == OPTIONS_CLI ? fields[F_SCENARIO].cli : fields[F_SCENARIO].json, why);
            return -1;
        }
    }
    /* A field the request's tables do not read (experiment_unused()) is no
     * error in either style: plan_report() warns of it in the document, and
     * the CLI says the same warning on stderr, as api/openapi.yaml documents
     * for /analyze and /measure. */
    if (check_predicates(o, style, fault, err) != 0) return -1;
    return check_instructions(o, style, field, err);
}

/* Strict unsigned decimal: digits only, no sign, no blanks, fits in unsigned. */
static int parse_unsigned(const char *s, unsigned *out) {
    if (!s || !isdigit((unsigned char)s[0])) return -1;
    errno = 0;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > UINT_MAX) return -1;
    *out = (unsigned)v;
    return 0;
}

/* Strict finite decimal number, optionally with a trailing '%' (divides by 100). */
static int parse_double(const char *s, double *out) {
    if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.')) return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s) return -1;
    if (*end == '%' && end[1] == '\0') v /= 100.0;
    else if (*end) return -1;
    if (!isfinite(v)) return -1;
    *out = v;
    return 0;
}

static int cli_fail(enum field_id id, const char *value, char *err, const char *what) {
    char range[160];
    dv_seterr(err, "%s: \"%.200s\" is not %s; %s", fields[id].cli, value, what,
              range_text(id, OPTIONS_CLI, range, sizeof range));
    return -1;
}

static int set_predicates(struct dv_options *o, const char *value, char *err) {
    char list[DV_MAX_ROWS][PREDICATE_TEXT_LEN], range[160];
    unsigned n = 0;
    const char *p = value;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && isspace((unsigned char)*p)) p++, len--;
        while (len && isspace((unsigned char)p[len - 1])) len--;
        if (len == 0) {
            dv_seterr(err, "--predicates: empty entry %u in \"%.200s\"; %s", n + 1, value,
                      range_text(F_PREDICATES, OPTIONS_CLI, range, sizeof range));
            return -1;
        }
        if (n == DV_MAX_ROWS) {
            dv_seterr(err, "--predicates: more than %u entries; %s", DV_MAX_ROWS,
                      range_text(F_PREDICATES, OPTIONS_CLI, range, sizeof range));
            return -1;
        }
        if (len >= PREDICATE_TEXT_LEN) {
            dv_seterr(err, "--predicates: entry %u is longer than %d characters", n + 1,
                      PREDICATE_TEXT_LEN - 1);
            return -1;
        }
        memcpy(list[n], p, len);
        list[n++][len] = '\0';
        if (!comma) break;
        p = comma + 1;
    }
    memcpy(o->predicates, list, sizeof list[0] * n);
    o->npredicates = n;
    return 0;
}

/* One setter per CLI option: the text of `value` into its field of `o`, or
 * -1 with `err` naming the option and what it accepts. */
static int cli_part(struct dv_options *o, const char *value, char *err) {
    if (strcmp(value, "all") == 0) o->part = DV_PART_ALL;
    else if (strcmp(value, "1") == 0) o->part = DV_PART_1;
    else if (strcmp(value, "2") == 0) o->part = DV_PART_2;
    else return cli_fail(F_PART, value, err, "a part");
    return 0;
}

static int cli_predicates(struct dv_options *o, const char *value, char *err) { return set_predicates(o, value, err); }

static int cli_baseline(struct dv_options *o, const char *value, char *err) {
    size_t len = strlen(value);
    if (len == 0 || len >= PREDICATE_TEXT_LEN) {
        dv_seterr(err, "--baseline: must be 1..%d characters", PREDICATE_TEXT_LEN - 1);
        return -1;
    }
    memcpy(o->baseline, value, len + 1);
    return 0;
}

static int cli_blocks(struct dv_options *o, const char *value, char *err) {
    unsigned u;
    if (strcmp(value, "auto") == 0) o->blocks = 0;
    else if (parse_unsigned(value, &u) == 0 && u > 0) o->blocks = u;
    else return cli_fail(F_BLOCKS, value, err, "a block count");
    return 0;
}

int options_parse_block(const char *value, unsigned *x, unsigned *y) {
    const char *sep = strchr(value, 'x');
    *y = 1;
    if (!sep) return parse_unsigned(value, x);
    char left[24];
    size_t len = (size_t)(sep - value);
    if (len == 0 || len >= sizeof left) return -1;
    memcpy(left, value, len);
    left[len] = '\0';
    return parse_unsigned(left, x) == 0 && parse_unsigned(sep + 1, y) == 0 ? 0 : -1;
}

/* N, or XxY (32x8). */
static int cli_threads_per_block(struct dv_options *o, const char *value, char *err) {
    unsigned x, y;
    if (options_parse_block(value, &x, &y) != 0) return cli_fail(F_TPB, value, err, "a block size");
    o->block_x = x;
    o->block_y = y;
    return 0;
}

static int cli_whole(unsigned *dst, enum field_id id, const char *value, char *err) {
    unsigned u;
    if (parse_unsigned(value, &u) != 0) return cli_fail(id, value, err, "a whole number");
    *dst = u;
    return 0;
}
static int cli_iterations(struct dv_options *o, const char *value, char *err) {
    return cli_whole(&o->iterations, F_ITERATIONS, value, err);
}
static int cli_min_samples(struct dv_options *o, const char *value, char *err) {
    return cli_whole(&o->min_samples, F_MIN_SAMPLES, value, err);
}
static int cli_max_samples(struct dv_options *o, const char *value, char *err) {
    return cli_whole(&o->max_samples, F_MAX_SAMPLES, value, err);
}

static int cli_device(struct dv_options *o, const char *value, char *err) {
    unsigned u;
    if (parse_unsigned(value, &u) != 0 || u > INT_MAX) return cli_fail(F_DEVICE, value, err, "a device ordinal");
    o->device = (int)u;
    return 0;
}

static int cli_number(double *dst, enum field_id id, const char *value, char *err) {
    double d;
    if (parse_double(value, &d) != 0) return cli_fail(id, value, err, "a number");
    *dst = d;
    return 0;
}
static int cli_max_halfwidth(struct dv_options *o, const char *value, char *err) {
    return cli_number(&o->max_noise, F_MAX_HALFWIDTH, value, err);
}
/* --max-noise is the old name of --max-halfwidth: the same target. A value
 * that is no number is named as typed; the range is the new name's. */
static int cli_max_noise(struct dv_options *o, const char *value, char *err) {
    double d;
    char range[160];
    if (parse_double(value, &d) != 0) {
        dv_seterr(err, "--max-noise: \"%.200s\" is not a number; %s", value,
                  range_text(F_MAX_HALFWIDTH, OPTIONS_CLI, range, sizeof range));
        return -1;
    }
    o->max_noise = d;
    return 0;
}
static int cli_budget_ms(struct dv_options *o, const char *value, char *err) {
    return cli_number(&o->budget_ms, F_BUDGET_MS, value, err);
}

/* on / off into a "skip this pass" flag. */
static int cli_switch(int *off, const char *option, const char *value, char *err) {
    if (strcmp(value, "on") == 0) *off = 0;
    else if (strcmp(value, "off") == 0) *off = 1;
    else {
        dv_seterr(err, "%s: '%s' is not on or off", option, value);
        return -1;
    }
    return 0;
}
static int cli_witness(struct dv_options *o, const char *value, char *err) {
    return cli_switch(&o->no_witness, "--witness", value, err);
}
static int cli_counters(struct dv_options *o, const char *value, char *err) {
    return cli_switch(&o->no_counters, "--counters", value, err);
}

static int cli_instructions(struct dv_options *o, const char *value, char *err) {
    int off = 1;
    if (cli_switch(&off, "--instructions", value, err) != 0) return -1;
    o->instructions = !off;
    return 0;
}

static int cli_scenario(struct dv_options *o, const char *value, char *err) {
    if (strlen(value) >= DV_SCENARIO_LEN) return cli_fail(F_SCENARIO, value, err, "a scenario name");
    snprintf(o->scenario, sizeof o->scenario, "%s", value);
    return 0;
}

static const struct {
    const char *option;
    int (*set)(struct dv_options *o, const char *value, char *err);
} cli_setters[] = {
    {"--part", cli_part},
    {"--predicates", cli_predicates},
    {"--baseline", cli_baseline},
    {"--blocks", cli_blocks},
    {"--threads-per-block", cli_threads_per_block},
    {"--iterations", cli_iterations},
    {"--min-samples", cli_min_samples},
    {"--max-samples", cli_max_samples},
    {"--device", cli_device},
    {"--max-halfwidth", cli_max_halfwidth},
    {"--max-noise", cli_max_noise},
    {"--budget-ms", cli_budget_ms},
    {"--witness", cli_witness},
    {"--counters", cli_counters},
    {"--instructions", cli_instructions},
    {"--scenario", cli_scenario},
};

int options_cli_known(const char *option) {
    for (size_t i = 0; option && i < sizeof cli_setters / sizeof cli_setters[0]; i++)
        if (strcmp(option, cli_setters[i].option) == 0) return 1;
    return 0;
}

int options_set_cli(struct dv_options *o, const char *option, const char *value, char *err) {
    if (!option) {
        dv_seterr(err, "option: missing");
        return -1;
    }
    if (!options_cli_known(option)) {
        dv_seterr(err, "%s: unknown option", option);
        return -1;
    }
    if (!value) {
        dv_seterr(err, "%s: missing value", option);
        return -1;
    }
    for (size_t i = 0; i < sizeof cli_setters / sizeof cli_setters[0]; i++) {
        if (strcmp(option, cli_setters[i].option) != 0) continue;
        if (cli_setters[i].set(o, value, err) != 0) return -1;
        for (unsigned b = 0; b < DV_GIVEN_NUM; b++)
            if (strcmp(given_cli[b], option) == 0) o->given |= 1u << b;
        return 0;
    }
    return -1;
}

/* The rows the tables of `o` time (a scenario's tables run instead of the Part tables). */
static unsigned timed_rows(const struct dv_options *o) {
    struct sortexp_grid sg; /* data-sort */
    if (o->scenario[0] && sortexp_grid_named(o->scenario, &sg)) return sortexp_grid_cells(&sg) * SORTEXP_NROWS;
    if (o->scenario[0]) return (unsigned)scenario_rows(o->scenario);
    unsigned rows = 0;
    if (o->part == DV_PART_ALL || o->part == DV_PART_1) rows += o->npredicates;
    if (o->part == DV_PART_ALL || o->part == DV_PART_2) {
        unsigned n = 0;
        plan_part2_rows(&n);
        rows += n;
    }
    return rows;
}

double options_cost(const struct dv_options *o) {
    double tpb = (double)o->block_x * (double)(o->block_y ? o->block_y : 1);
    double work;
    if (o->blocks == 0 && !o->scenario[0]) {
        work = (double)DV_DEFAULT_BLOCKS * tpb * o->iterations;
        if (work < OPTIONS_AUTO_FMA_BOUND) work = OPTIONS_AUTO_FMA_BOUND;
    } else {
        /* Scenario tables run the lesson's blocks for "auto" (scenario_grid). */
        work = (double)(o->blocks ? o->blocks : DV_DEFAULT_BLOCKS) * tpb * o->iterations;
    }
    return work * timed_rows(o) * (double)o->max_samples;
}

int options_job_kind(const struct dv_options *o, char *buf, size_t len) {
    const char *what = o->scenario[0]         ? "scenario"
                       : o->part == DV_PART_1 ? "part1"
                       : o->part == DV_PART_2 ? "part2"
                                              : "all";
    int n = snprintf(buf, len, "%s/%urows%s%s%s", what, timed_rows(o), o->no_witness ? "" : "+witness",
                     o->no_counters ? "" : "+counters", o->instructions ? "+instructions" : "");
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int options_batch_key(const struct dv_options *o, char *buf, size_t len) {
    if (len) buf[0] = '\0';
    if (o->scenario[0] || o->part != DV_PART_1 || o->npredicates == 0) return 0;
    for (unsigned i = 0; i < o->npredicates && i < DV_MAX_ROWS; i++)
        for (const char *c = o->predicates[i]; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) return 0;
    char blocks[16];
    if (o->blocks) snprintf(blocks, sizeof blocks, "%u", o->blocks);
    else snprintf(blocks, sizeof blocks, "auto");
    size_t at = 0;
    int n = snprintf(buf, len,
                     "part1 kernel=%s blocks=%s block=%ux%u iterations=%u witness=%d counters=%d instructions=%d "
                     "baseline=%s",
                     experiment_kernel_name(plan_part1_kernel(o)), blocks, o->block_x, o->block_y ? o->block_y : 1,
                     o->iterations, !o->no_witness, !o->no_counters, o->instructions ? 1 : 0, o->baseline);
    for (unsigned i = 0; n >= 0 && (size_t)n < len - at && i < o->npredicates && i < DV_MAX_ROWS; i++) {
        at += (size_t)n;
        n = snprintf(buf + at, len - at, "\n%s", o->predicates[i]);
    }
    if (n < 0 || (size_t)n >= len - at) {
        if (len) buf[0] = '\0';
        return -1;
    }
    return 0;
}

unsigned options_tables(const struct dv_options *o) {
    if (o->scenario[0]) {
        const struct scenario *list[SCENARIO_MAX_SELECTED];
        size_t n = 0;
        char why[ERR_LEN];
        struct sortexp_grid sg; /* data-sort */
        if (sortexp_grid_named(o->scenario, &sg)) return sortexp_grid_cells(&sg);
        return scenario_select(o->scenario, list, &n, why) == 0 ? (unsigned)n : 0;
    }
    return o->part == DV_PART_ALL ? 2 : 1;
}

double options_instructions_cost(const struct dv_options *o, int *row) {
    if (row) *row = -1;
    /* A scenario's tables run instead of the Part rows: their profiles are
     * costed row by row when they are planned (a period or a stand-in grid
     * of their assignment: a few blocks), against the same cap; a
     * data-sort cell's on its whole grid, known from the request. */
    if (o->scenario[0]) {
        unsigned c;
        return sort_instructions_cost(o, &c);
    }
    const double per_block = (double)o->block_x * (o->block_y ? o->block_y : 1) * o->iterations;
    /* The whole grid: blocks x a block, or for auto its FMA bound. */
    double grid = o->blocks ? (double)o->blocks * per_block : OPTIONS_AUTO_FMA_BOUND;
    if (grid < per_block) grid = per_block;
    double worst = 0;
    int worst_row = -1;
    if (o->part == DV_PART_ALL || o->part == DV_PART_2) {
        unsigned n = 0;
        const struct plan_fixed_row *rows = plan_part2_rows(&n);
        for (unsigned i = 0; i < n; i++) {
            const double c = predicate_mode_reads_block(rows[i].mode) == 1 ? grid : per_block;
            if (c > worst) worst = c;
        }
    }
    for (unsigned i = 0; (o->part == DV_PART_ALL || o->part == DV_PART_1) && i < o->npredicates && i < DV_MAX_ROWS;
         i++) {
        const int reads = predicate_text_reads_block(o->predicates[i]);
        if (reads < 0) continue;
        const double c = reads ? grid : per_block;
        if (c > worst) {
            worst = c;
            worst_row = (int)i;
        }
    }
    if (row) *row = worst_row;
    return worst;
}

/* Appends `s` quoted, with '"' and '\\' escaped, so no two option sets share a form. */
static void put_quoted(char *buf, size_t len, size_t *at, const char *s) {
    char tmp[2 * PREDICATE_TEXT_LEN + 3];
    size_t n = 0;
    tmp[n++] = '"';
    for (; *s && n < sizeof tmp - 3; s++) {
        if (*s == '"' || *s == '\\') tmp[n++] = '\\';
        tmp[n++] = *s;
    }
    tmp[n++] = '"';
    tmp[n] = '\0';
    if (*at < len) {
        int w = snprintf(buf + *at, len - *at, "%s", tmp);
        *at += (size_t)(w > 0 ? w : 0);
    } else {
        *at += n;
    }
}

int options_canonical(const struct dv_options *o, char *buf, size_t len) {
    size_t at = 0;
    int w;
#define PUT(...)                                                                   \
    do {                                                                           \
        w = snprintf(at < len ? buf + at : NULL, at < len ? len - at : 0, __VA_ARGS__); \
        if (w < 0) return -1;                                                      \
        at += (size_t)w;                                                           \
    } while (0)
    if (!buf || len == 0) return -1;
    PUT("part=%s predicates=[", o->part == DV_PART_1 ? "1" : o->part == DV_PART_2 ? "2" : "all");
    for (unsigned i = 0; i < o->npredicates && i < DV_MAX_ROWS; i++) {
        if (i) PUT(",");
        put_quoted(buf, len, &at, o->predicates[i]);
    }
    PUT("] baseline=");
    put_quoted(buf, len, &at, o->baseline);
    if (o->blocks) PUT(" blocks=%u", o->blocks);
    else PUT(" blocks=auto");
    PUT(" block=%ux%u iterations=%u max_noise=%.17g budget_ms=%.17g min_samples=%u"
        " max_samples=%u device=%d scenario=",
        o->block_x, o->block_y, o->iterations, o->max_noise, o->budget_ms, o->min_samples,
        o->max_samples, o->device);
    put_quoted(buf, len, &at, o->scenario);
    /* The testimony passes change the document, not the timings: named only
     * when turned off, so the keys of documents with them stay as they were;
     * the instruction profile, off by default, is named when asked for. */
    if (o->no_witness) PUT(" witness=off");
    if (o->no_counters) PUT(" counters=off");
    if (o->instructions) PUT(" instructions=on");
    /* A field that does not apply changes the document (its warning), not
     * the timings: named only when there is one. */
    if (experiment_unused(o)) PUT(" unused=%x", experiment_unused(o));
#undef PUT
    return at < len ? 0 : -1;
}

/* request.c -- the JSON body of POST /measure and POST /analyze.
 *
 * The body is parsed once with json_loadb(JSON_REJECT_DUPLICATES)
 * (request_parse()) and the object walked (request_parse_json(), which a
 * caller that already holds the parsed object calls alone) key by key
 * against a table of known fields: an unknown key is an error
 * naming it, and each known key has a setter that checks the JSON type and
 * stores the value in struct dv_options. Ranges are not checked here but in
 * options_validate(OPTIONS_JSON), the same rules the CLI gets; an integer
 * too large or negative for the C field is stored as UINT_MAX, which every
 * range rejects, so it fails there with the field's allowed range.
 *
 * Errors land in struct request_error: the field ("" for the body as a whole),
 * the reason, the body's line and column for a syntax error, and for an
 * expression the column inside it and the two-line caret diagnostic, copied
 * from the values the model returned beside its message (struct dv_fault),
 * never read back out of the message.
 */
#include "api/request.h"
#include "api/jsonout.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api/options.h"

static int set_error(struct request_error *e, const char *field, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int set_error(struct request_error *e, const char *field, const char *fmt, ...) {
    va_list ap;
    e->status = 400;
    snprintf(e->field, sizeof e->field, "%s", field);
    va_start(ap, fmt);
    vsnprintf(e->reason, sizeof e->reason, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number with a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "something else";
}

/* A JSON integer into an unsigned field; out of range becomes UINT_MAX, which
 * options_validate() rejects with the field's range. */
static unsigned to_unsigned(const json_t *v) {
    json_int_t i = json_integer_value(v);
    return i < 0 || (unsigned long long)i >= UINT_MAX ? UINT_MAX : (unsigned)i;
}

static int want_type(const json_t *v, json_type t, const char *field, const char *what,
                     struct request_error *e) {
    if (json_typeof(v) == t) return 0;
    return set_error(e, field, "expected %s, got %s", what, type_name(v));
}

static int set_part(struct dv_options *o, const json_t *v, struct request_error *e) {
    if (json_is_string(v) && strcmp(json_string_value(v), "all") == 0) {
        o->part = DV_PART_ALL;
        return 0;
    }
    if (json_is_integer(v) && (json_integer_value(v) == 1 || json_integer_value(v) == 2)) {
        o->part = json_integer_value(v) == 1 ? DV_PART_1 : DV_PART_2;
        return 0;
    }
    if (json_is_integer(v) || json_is_string(v))
        return set_error(e, "part", "unknown part; allowed: 1, 2 or \"all\"");
    return set_error(e, "part", "expected 1, 2 or \"all\", got %s", type_name(v));
}

static int copy_text(char *dst, size_t size, const json_t *v, const char *field,
                     struct request_error *e) {
    if (want_type(v, JSON_STRING, field, "a string", e) != 0) return -1;
    size_t len = json_string_length(v);
    if (len >= size)
        return set_error(e, field, "longer than %zu characters", size - 1);
    memcpy(dst, json_string_value(v), len + 1);
    return 0;
}

static int set_predicates(struct dv_options *o, const json_t *v, struct request_error *e) {
    char name[32];
    if (want_type(v, JSON_ARRAY, "predicates", "an array of names or expressions", e) != 0)
        return -1;
    size_t n = json_array_size(v);
    if (n < 1 || n > DV_MAX_ROWS)
        return set_error(e, "predicates", "%zu entries; allowed: 1 to %u names or expressions", n,
                         DV_MAX_ROWS);
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "predicates[%zu]", i);
        if (copy_text(o->predicates[i], PREDICATE_TEXT_LEN, json_array_get(v, i), name, e) != 0)
            return -1;
    }
    o->npredicates = (unsigned)n;
    return 0;
}

static int set_baseline(struct dv_options *o, const json_t *v, struct request_error *e) {
    return copy_text(o->baseline, sizeof o->baseline, v, "baseline", e);
}

static int set_scenario(struct dv_options *o, const json_t *v, struct request_error *e) {
    return copy_text(o->scenario, sizeof o->scenario, v, "scenario", e);
}

static int set_blocks(struct dv_options *o, const json_t *v, struct request_error *e) {
    if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
        o->blocks = 0;
        return 0;
    }
    if (!json_is_integer(v))
        return set_error(e, "blocks", "expected an integer or \"auto\", got %s", type_name(v));
    /* 0 means auto inside; in JSON only "auto" does. */
    if (json_integer_value(v) == 0)
        return set_error(e, "blocks", "0 blocks; allowed: 1..%u or \"auto\"", DV_MAX_BLOCKS);
    o->blocks = to_unsigned(v);
    return 0;
}

static int set_threads_per_block(struct dv_options *o, const json_t *v, struct request_error *e) {
    if (json_is_integer(v)) {
        o->block_x = to_unsigned(v);
        o->block_y = 1;
        return 0;
    }
    if (json_is_array(v) && json_array_size(v) == 2 && json_is_integer(json_array_get(v, 0)) &&
        json_is_integer(json_array_get(v, 1))) {
        o->block_x = to_unsigned(json_array_get(v, 0));
        o->block_y = to_unsigned(json_array_get(v, 1));
        return 0;
    }
    /* "32x8" (or "256"): the CLI's spelling, and the widget's permalinks'. */
    if (json_is_string(v) && options_parse_block(json_string_value(v), &o->block_x, &o->block_y) == 0) return 0;
    if (json_is_string(v))
        return set_error(e, "threads_per_block", "expected N or XxY such as \"32x8\", got \"%.32s\"",
                         json_string_value(v));
    return set_error(e, "threads_per_block", "expected an integer, [x, y] or \"XxY\", got %s%s",
                     type_name(v), json_is_array(v) ? " that is not two integers" : "");
}

static int set_uint(unsigned *dst, const json_t *v, const char *field, struct request_error *e) {
    if (want_type(v, JSON_INTEGER, field, "an integer", e) != 0) return -1;
    *dst = to_unsigned(v);
    return 0;
}

static int set_iterations(struct dv_options *o, const json_t *v, struct request_error *e) {
    return set_uint(&o->iterations, v, "iterations", e);
}
static int set_min_samples(struct dv_options *o, const json_t *v, struct request_error *e) {
    return set_uint(&o->min_samples, v, "min_samples", e);
}
static int set_max_samples(struct dv_options *o, const json_t *v, struct request_error *e) {
    return set_uint(&o->max_samples, v, "max_samples", e);
}

static int set_number(double *dst, const json_t *v, const char *field, struct request_error *e) {
    if (!json_is_number(v)) return set_error(e, field, "expected a number, got %s", type_name(v));
    *dst = json_number_value(v);
    return 0;
}

/* max_noise is the old name of max_halfwidth: the same target, in the same
 * field (request_parse() refuses a body that gives both). */
static int set_max_halfwidth(struct dv_options *o, const json_t *v, struct request_error *e) {
    return set_number(&o->max_noise, v, "max_halfwidth", e);
}
static int set_max_noise(struct dv_options *o, const json_t *v, struct request_error *e) {
    return set_number(&o->max_noise, v, "max_noise", e);
}
static int set_budget_ms(struct dv_options *o, const json_t *v, struct request_error *e) {
    return set_number(&o->budget_ms, v, "budget_ms", e);
}

static int set_switch(int *off, const json_t *v, const char *field, struct request_error *e) {
    if (!json_is_boolean(v)) return set_error(e, field, "expected true or false, got %s", type_name(v));
    *off = json_is_false(v);
    return 0;
}
static int set_witness(struct dv_options *o, const json_t *v, struct request_error *e) {
    return set_switch(&o->no_witness, v, "witness", e);
}
static int set_counters(struct dv_options *o, const json_t *v, struct request_error *e) {
    return set_switch(&o->no_counters, v, "counters", e);
}

static int set_instructions(struct dv_options *o, const json_t *v, struct request_error *e) {
    if (!json_is_boolean(v)) return set_error(e, "instructions", "expected true or false, got %s", type_name(v));
    o->instructions = json_is_true(v);
    return 0;
}

static const struct {
    const char *name;
    int (*set)(struct dv_options *, const json_t *, struct request_error *);
} setters[] = {
    {"part", set_part},
    {"predicates", set_predicates},
    {"baseline", set_baseline},
    {"blocks", set_blocks},
    {"threads_per_block", set_threads_per_block},
    {"iterations", set_iterations},
    {"max_halfwidth", set_max_halfwidth},
    {"max_noise", set_max_noise},
    {"budget_ms", set_budget_ms},
    {"min_samples", set_min_samples},
    {"max_samples", set_max_samples},
    {"scenario", set_scenario},
    {"witness", set_witness},
    {"counters", set_counters},
    {"instructions", set_instructions},
};

void request_error_from(const struct dv_fault *fault, const char *msg, struct request_error *e) {
    const char *field = fault && fault->field ? fault->field : "";
    size_t flen = strlen(field);
    const char *why = msg;
    /* The message names the field for a reader of the text alone; the
     * error has it as its own member. */
    if (flen && strncmp(msg, field, flen) == 0 && strncmp(msg + flen, ": ", 2) == 0)
        why = msg + flen + 2;
    set_error(e, field, "%s", why);
    e->expr_column = 0;
    e->caret[0] = '\0';
    if (fault && fault->expr.column > 0) {
        e->expr_column = fault->expr.column;
        snprintf(e->caret, sizeof e->caret, "%s", fault->expr.caret);
    }
}

int request_parse_json(const json_t *root, struct dv_options *o, struct request_error *e) {
    const char *key;
    json_t *value;
    memset(e, 0, sizeof *e);
    e->status = 400;
    experiment_defaults(o);
    if (!json_is_object(root)) return set_error(e, "", "expected a JSON object, got %s", type_name(root));
    json_object_foreach((json_t *)root, key, value) {
        size_t k = 0, n = sizeof setters / sizeof setters[0];
        while (k < n && strcmp(setters[k].name, key) != 0) k++;
        if (k == n)
            return set_error(e, key, "unknown field; known: part, predicates, baseline, blocks, "
                                     "threads_per_block, iterations, max_halfwidth (or its old name "
                                     "max_noise), budget_ms, min_samples, max_samples, scenario, witness, "
                                     "counters, instructions");
        if (setters[k].set(o, value, e) != 0) return -1;
        /* Named, so a field that does not apply can be told from a default
         * (max_noise is max_halfwidth's old name: the same field). */
        const char *named = strcmp(key, "max_noise") == 0 ? "max_halfwidth" : key;
        for (unsigned b = 0; b < DV_GIVEN_NUM; b++)
            if (strcmp(experiment_given_name(1u << b), named) == 0) o->given |= 1u << b;
    }

    const int old_name = json_object_get(root, "max_noise") != NULL;
    if (old_name && json_object_get(root, "max_halfwidth"))
        return set_error(e, "max_noise", "the old name of max_halfwidth: give one of the two");
    struct dv_fault fault;
    char err[ERR_LEN];
    if (options_validate(o, OPTIONS_JSON, &fault, err) != 0) {
        /* The error names the field as the body spelled it. */
        if (old_name && strcmp(fault.field, "max_halfwidth") == 0) {
            const char *why = strchr(err, ':');
            set_error(e, "max_noise", "%s", why ? why + 2 : err);
        } else {
            request_error_from(&fault, err, e);
        }
        return -1;
    }
    return 0;
}

int request_parse(const char *body, size_t len, struct dv_options *o, struct request_error *e) {
    json_error_t jerr;
    memset(e, 0, sizeof *e);
    e->status = 400;
    experiment_defaults(o);

    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n')) i++;
    if (i == len) return set_error(e, "", "empty body: expected a JSON object ({} for the defaults)");

    json_t *root = jsonout_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        e->line = jerr.line > 0 ? jerr.line : 0;
        e->column = jerr.column > 0 ? jerr.column : 0;
        if (json_error_code(&jerr) == json_error_duplicate_key) {
            /* jansson: "duplicate object key near '"name"'": name the field. */
            const char *q = strstr(jerr.text, "'\"");
            char name[64] = "";
            if (q) sscanf(q + 2, "%63[^\"]", name);
            return set_error(e, name, "duplicate key at line %d, column %d", e->line, e->column);
        }
        return set_error(e, "", "malformed JSON at line %d, column %d: %s", e->line, e->column,
                         jerr.text);
    }
    const int rc = request_parse_json(root, o, e);
    json_decref(root);
    return rc;
}

/* Whether request_dump() writes field `bit`: every field the tables read,
 * and any the request named (so the worker's document carries the same
 * warning the request earned); a default that does not apply is left out,
 * so a suite's scenario request reads as one. */
static int dumped(const struct dv_options *o, unsigned bit) {
    unsigned skip = DV_GIVEN_PART | DV_GIVEN_PREDICATES | DV_GIVEN_BASELINE;
    if (!o->scenario[0]) skip = o->part == DV_PART_2 ? DV_GIVEN_PREDICATES | DV_GIVEN_BASELINE : 0;
    return !(skip & bit) || (o->given & bit);
}

/* `device` is not part of the body: the server, not the client, picks the GPU,
 * and its worker is started for that device. */
char *request_dump(const struct dv_options *o) {
    json_t *root = json_object(), *preds = json_array(), *tpb;
    char *out = NULL;
    int bad = !root || !preds;

    if (bad) {
        json_decref(preds);
        goto cleanup;
    }
    if (dumped(o, DV_GIVEN_PART))
        jsonout_put(root, "part", o->part == DV_PART_ALL ? jsonout_str("all") : json_integer(o->part), &bad);
    for (unsigned i = 0; i < o->npredicates && i < DV_MAX_ROWS; i++)
        jsonout_append(preds, jsonout_str(o->predicates[i]), &bad);
    if (dumped(o, DV_GIVEN_PREDICATES)) jsonout_put(root, "predicates", preds, &bad);
    else json_decref(preds);
    if (dumped(o, DV_GIVEN_BASELINE)) jsonout_put(root, "baseline", jsonout_str(o->baseline), &bad);
    jsonout_put(root, "blocks", o->blocks ? json_integer(o->blocks) : jsonout_str("auto"), &bad);
    if (o->block_y == 1) tpb = json_integer(o->block_x);
    else if ((tpb = json_array())) {
        jsonout_append(tpb, json_integer(o->block_x), &bad);
        jsonout_append(tpb, json_integer(o->block_y), &bad);
    }
    jsonout_put(root, "threads_per_block", tpb, &bad);
    jsonout_put(root, "iterations", json_integer(o->iterations), &bad);
    jsonout_put(root, "max_halfwidth", json_real(o->max_noise), &bad);
    jsonout_put(root, "budget_ms", json_real(o->budget_ms), &bad);
    jsonout_put(root, "min_samples", json_integer(o->min_samples), &bad);
    jsonout_put(root, "max_samples", json_integer(o->max_samples), &bad);
    if (o->scenario[0] || (o->given & DV_GIVEN_SCENARIO)) jsonout_put(root, "scenario", jsonout_str(o->scenario), &bad);
    if (o->no_witness) jsonout_put(root, "witness", json_false(), &bad);
    if (o->no_counters) jsonout_put(root, "counters", json_false(), &bad);
    if (o->instructions) jsonout_put(root, "instructions", json_true(), &bad);
    if (!bad) out = jsonout_dumps(root, JSON_COMPACT);

cleanup:
    json_decref(root);
    return out;
}

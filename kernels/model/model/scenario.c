/* scenario.c -- the scenario definitions, their arrangements over a grid, the
 * path-run model and the CPU reference (no GPU; see scenario.h for the model).
 *
 * Each scenario is a 32-lane pattern taken from a worked case of "Worked examples — Warp divergence penalties". The
 * divergent row replicates it in every warp; the baseline row holds the very
 * same multiset of per-thread work, grouped so each warp holds one value
 * (sorted over the grid, or (idx / 32) % 2 for the re-alignment case); the
 * ideal row puts every lane on its warp's longest path, which is what the
 * worked examples' efficiency max/sum is measured against. scenario_plan()
 * turns each scenario into a dv_table whose rows carry the model;
 * gpu/scenario_measure.c adds the timings.
 */
#include "kernels/model/model/scenario.h"
#include "kernels/base/hostfma.h"


#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- definitions ------------------------------------------------------- */

/* The table is laid out by hand (clang-format off): each lane pattern as
 * two rows of 16 lanes, the fields that belong together on one line. */
/* clang-format off */

/* A row: its stable name, how it assigns work in the lesson's words, its layout. */
#define ROW(id, text, how) {.name = (id), .label = (text), .layout = (how)}
#define ROW_LANES(text) ROW("lanes", text, SCENARIO_LAYOUT_LANES)
#define ROW_SORTED ROW("sorted", "same work sorted by path over the grid: one path per warp", SCENARIO_LAYOUT_SORTED)
#define ROW_IDEAL \
    ROW("ideal", "every lane on its warp's longest path (the worked examples' ideal time)", SCENARIO_LAYOUT_IDEAL)

static const struct scenario scenarios[] = {
    {
        .name = "even-2way", .cell = "C1", .kind = SCENARIO_KWAY,
        .title = "Even 2-way split, unequal paths (12 vs 9 units)",
        .npaths = 2, .lengths = {12, 9},
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                      0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
        .nrows = 3,
        .rows = {ROW_LANES("path = lane & 1: 16 lanes on A (12 units), 16 on B (9)"), ROW_SORTED, ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "a split warp issues 12 + 9 = 21 units; max/sum = 12/21 = 57.1%, not 50%",
    },
    {
        .name = "uneven-1v31", .cell = "C2", .kind = SCENARIO_KWAY,
        .title = "Uneven split: 1 lane on 100 units, 31 on 50",
        .npaths = 2, .lengths = {100, 50},
        .lane_work = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        .nrows = 3,
        .rows = {ROW_LANES("lane 0 on A (100 units), lanes 1-31 on B (50)"), ROW_SORTED, ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "one lane still costs its whole path: 100 + 50 = 150 units, 66.7%",
    },
    {
        .name = "zero-divergence", .cell = "C3", .kind = SCENARIO_KWAY,
        .title = "Zero divergence: every lane on B (9 units), A (12) untaken",
        .npaths = 2, .lengths = {12, 9},
        .lane_work = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        .nrows = 2,
        .rows = {ROW_LANES("every lane on B (9 units); path A is in the code, never taken"), ROW_SORTED},
        .baseline = 1, .predicated = 0,
        .note = "an untaken path is free: 9/9 = 100%; both rows are the same arrangement",
    },
    {
        .name = "full-divergence", .cell = "C4", .kind = SCENARIO_KWAY,
        .title = "Full divergence: 32 distinct paths of 7 units",
        .npaths = 32, .lengths = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
                                  7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},
        .lane_work = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                      16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31},
        .nrows = 3,
        .rows = {ROW_LANES("path = lane: every lane its own 7-unit path"), ROW_SORTED, ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "32 serial paths: 7/224 = 1/32 = 3.125%, the floor for a warp",
    },
    {
        .name = "elseif-4way", .cell = "C5", .kind = SCENARIO_KWAY,
        .title = "4-way else-if chain: 20, 30, 25, 5 units over 8, 10, 8, 6 lanes",
        .npaths = 4, .lengths = {20, 30, 25, 5},
        .lane_work = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                      1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3},
        .nrows = 3,
        .rows = {ROW_LANES("lanes 0-7 on 20 units, 8-17 on 30, 18-25 on 25, 26-31 on 5"), ROW_SORTED, ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "four live paths: 30/80 = 37.5%",
    },
    {
        .name = "loop-divergence", .cell = "C6", .kind = SCENARIO_LOOP,
        .title = "Loop divergence: trip counts summing to 240, max 20 per warp",
        .npaths = 0, .lengths = {0},
        .lane_work = {20, 7, 6, 8, 3, 7, 10, 6, 7, 9, 6, 7, 12, 7, 8, 6,
                      7, 3, 7, 10, 6, 8, 7, 6, 9, 7, 8, 7, 6, 7, 6, 7},
        .nrows = 2,
        .rows = {ROW_LANES("per-lane trip counts (sum 240, max 20, two lanes at 3)"),
                 ROW("sorted", "same trip counts sorted over the grid: one count per warp", SCENARIO_LAYOUT_SORTED)},
        .baseline = 1, .predicated = 0,
        .note = "the warp loops max = 20 times: 240 / (32 * 20) = 37.5% lane utilization",
    },
    {
        .name = "nested-ifs", .cell = "C8", .kind = SCENARIO_KWAY,
        .title = "Nested ifs: 4 orthogonal paths of 6, 8, 5, 7 units",
        .npaths = 4, .lengths = {6, 8, 5, 7},
        /* path = 2 * (lane & 1) + ((lane >> 1) & 1): outer test on bit 0, inner on bit 1 */
        .lane_work = {0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3,
                      0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3},
        .nrows = 3,
        .rows = {ROW_LANES("outer if on lane & 1, inner if on lane & 2: 8 lanes per path"), ROW_SORTED, ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "nesting multiplies paths: 8/26 = 30.8%",
    },
    {
        .name = "ray-materials", .cell = "C9", .kind = SCENARIO_KWAY,
        .title = "Ray-tracing materials: diffuse 12, metal 40, glass 60, emissive 4",
        .npaths = 4, .lengths = {12, 40, 60, 4},
        .lane_work = {0, 1, 3, 0, 2, 1, 0, 3, 1, 0, 2, 3, 0, 1, 0, 3,
                      2, 0, 1, 3, 0, 2, 1, 3, 0, 1, 2, 3, 0, 1, 2, 3},
        .nrows = 3,
        .rows = {ROW_LANES("unsorted hits: 10 diffuse, 8 metal, 6 glass, 8 emissive per warp"),
                 ROW("sorted", "hits sorted by material: one material per warp", SCENARIO_LAYOUT_SORTED),
                 ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "unsorted 60/116 = 51.7%; sorted by material every warp is 100%",
    },
    {
        .name = "warp-realign", .cell = "C10", .kind = SCENARIO_KWAY,
        .title = "Warp-boundary re-alignment: idx % 2 against (idx / 32) % 2",
        .npaths = 2, .lengths = {10, 14},
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                      0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
        .nrows = 3,
        .rows = {ROW_LANES("idx % 2: X (10 units) on even lanes, Y (14) on odd"),
                 ROW("warps", "(idx / 32) % 2: whole warps on X or on Y", SCENARIO_LAYOUT_WARPS),
                 ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "idx % 2 gives 14/24 = 58.3%; (idx / 32) % 2 gives 100%",
    },
    {
        .name = "short-predicated", .cell = "C7", .kind = SCENARIO_SHORT,
        .title = "Short if/else (2 vs 1 FMAs) that the compiler predicates",
        .npaths = 2, .lengths = {1, 2},
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                      0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
        .nrows = 2,
        .rows = {ROW("lanes", "side = (idx + j) % 2 on iteration j: both sides in every warp", SCENARIO_LAYOUT_LANES),
                 ROW("warps", "side = (idx / 32 + j) % 2: whole warps on one side", SCENARIO_LAYOUT_WARPS)},
        .baseline = 1, .predicated = 1,
        .note = "SASS: @P/@!P FFMA, no BSSY/BSYNC: predicated, every warp issues both sides (ratio 1.0; "
                "as a branch it would be 2.0)",
    },
    {
        .name = "short-branch", .cell = "C7", .kind = SCENARIO_SHORT,
        .title = "Short if/else (4 vs 3 FMAs) that stays a branch",
        .npaths = 2, .lengths = {3, 4},
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                      0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
        .nrows = 2,
        .rows = {ROW("lanes", "side = (idx + j) % 2 on iteration j: both sides in every warp", SCENARIO_LAYOUT_LANES),
                 ROW("warps", "side = (idx / 32 + j) % 2: whole warps on one side", SCENARIO_LAYOUT_WARPS)},
        .baseline = 1, .predicated = 0,
        .note = "SASS: BSSY / @P BRA / BSYNC per if/else: a real branch, a split warp issues 4 + 3, a "
                "uniform one 4 or 3 (ratio 2.0)",
    },
};

/* clang-format on */
#undef ROW_IDEAL
#undef ROW_SORTED
#undef ROW_LANES
#undef ROW

#define NSCENARIOS (sizeof scenarios / sizeof scenarios[0])

static const char *const names[NSCENARIOS] = {
    "even-2way", "uneven-1v31", "zero-divergence", "full-divergence", "elseif-4way",
    "loop-divergence", "nested-ifs", "ray-materials", "warp-realign", "short-predicated",
    "short-branch",
};

const char *const *scenario_names(size_t *n) {
    if (n) *n = NSCENARIOS;
    return names;
}

const struct scenario *scenario_find(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < NSCENARIOS; i++)
        if (strcmp(scenarios[i].name, name) == 0) return &scenarios[i];
    return NULL;
}

const struct scenario *scenario_get(size_t i) { return i < NSCENARIOS ? &scenarios[i] : NULL; }

/* A worked-case id ("C7", "c7") names every scenario of that cell. */
static int is_cell(const struct scenario *s, const char *want) {
    return (want[0] == 'C' || want[0] == 'c') && strcmp(s->cell + 1, want + 1) == 0 && want[1] != '\0';
}

size_t scenario_names_text(char *buf, size_t len) {
    size_t at = 0;
    if (len) buf[0] = '\0';
    for (size_t i = 0; i < NSCENARIOS; i++) {
        int n = snprintf(at < len ? buf + at : NULL, at < len ? len - at : 0, "%s%s (%s)", i ? ", " : "",
                         scenarios[i].name, scenarios[i].cell);
        if (n > 0) at += (size_t)n;
    }
    return at;
}

int scenario_select(const char *want, const struct scenario **out, size_t *n, char *err) {
    *n = 0;
    if (!want || !want[0]) want = "all";
    const int all = strcmp(want, "all") == 0;
    for (size_t i = 0; i < NSCENARIOS; i++)
        if (all || strcmp(scenarios[i].name, want) == 0 || is_cell(&scenarios[i], want)) out[(*n)++] = &scenarios[i];
    if (*n) return 0;
    char names_text[400];
    scenario_names_text(names_text, sizeof names_text);
    dv_seterr(err, "unknown name '%.60s'; known: all, %s; or a worked case C1..C10", want, names_text);
    return -1;
}

unsigned scenario_rows(const char *want) {
    const struct scenario *list[SCENARIO_MAX_SELECTED];
    size_t n = 0;
    char err[ERR_LEN];
    unsigned rows = 0;
    if (scenario_select(want, list, &n, err) != 0) return 0;
    for (size_t i = 0; i < n; i++) rows += list[i]->nrows;
    return rows;
}

struct dv_geometry scenario_grid(const struct dv_options *o) {
    const struct dv_geometry g = {o->blocks ? o->blocks : DV_DEFAULT_BLOCKS,
                                  o->block_x ? o->block_x : DV_DEFAULT_BLOCK_X, o->block_y ? o->block_y : 1u};
    return g;
}

unsigned scenario_unit_fmas(const struct dv_options *o) {
    unsigned it = o && o->iterations ? o->iterations : DV_DEFAULT_ITERATIONS;
    unsigned u = it / SCENARIO_UNIT_DIVISOR / SCENARIO_CHUNK * SCENARIO_CHUNK;
    return u < SCENARIO_CHUNK ? SCENARIO_CHUNK : u;
}

unsigned scenario_short_iterations(const struct dv_options *o) {
    unsigned it = o && o->iterations ? o->iterations : DV_DEFAULT_ITERATIONS;
    return (it + 31u) / 32u * 32u;
}

unsigned scenario_evaluations(const struct scenario *s, const struct dv_options *o) {
    return s->kind == SCENARIO_SHORT ? scenario_short_iterations(o) : 1u;
}

/* ---- arrangements ------------------------------------------------------ */

/* The longest path (k-way) present in a warp's lanes, lowest id on a tie. */
static unsigned longest_path(const struct scenario *s, const uint8_t *lanes, unsigned n) {
    unsigned best = lanes[0];
    for (unsigned i = 1; i < n; i++)
        if (s->lengths[lanes[i]] > s->lengths[best] ||
            (s->lengths[lanes[i]] == s->lengths[best] && lanes[i] < best))
            best = lanes[i];
    return best;
}

int scenario_assign(const struct scenario *s, enum scenario_layout layout, unsigned blocks,
                    unsigned threads_per_block, uint8_t *work, char *err) {
    unsigned long long n = (unsigned long long)blocks * threads_per_block;
    unsigned wpb = (threads_per_block + 31u) / 32u;
    switch (layout) {
    case SCENARIO_LAYOUT_LANES:
    case SCENARIO_LAYOUT_IDEAL:
        for (unsigned long long i = 0; i < n; i++)
            work[i] = s->lane_work[(i % threads_per_block) % 32u];
        if (layout == SCENARIO_LAYOUT_LANES) return 0;
        for (unsigned long long b = 0; b < blocks; b++)
            for (unsigned w = 0; w < wpb; w++) {
                unsigned long long first = b * threads_per_block + w * 32ull;
                const unsigned lanes = dv_warp_lanes(threads_per_block, w);
                uint8_t *p = work + first;
                unsigned v;
                int split = 0;
                for (unsigned l = 1; l < lanes; l++) split |= p[l] != p[0];
                if (!split) continue;
                if (s->kind != SCENARIO_KWAY) {
                    dv_seterr(err, "scenario %s: ideal rows are for k-way scenarios", s->name);
                    return -1;
                }
                v = longest_path(s, p, lanes);
                memset(p, (int)v, lanes);
            }
        return 0;
    case SCENARIO_LAYOUT_SORTED: {
        unsigned long long hist[256] = {0};
        for (unsigned long long i = 0; i < n; i++) hist[s->lane_work[(i % threads_per_block) % 32u]]++;
        unsigned long long i = 0;
        for (unsigned v = 0; v < 256; v++)
            for (unsigned long long k = 0; k < hist[v]; k++) work[i++] = (uint8_t)v;
        return 0;
    }
    case SCENARIO_LAYOUT_WARPS:
        for (unsigned long long i = 0; i < n; i++) {
            unsigned long long warp = (i / threads_per_block) * wpb + (i % threads_per_block) / 32u;
            work[i] = s->lane_work[warp % 32u];
        }
        return 0;
    default:
        dv_seterr(err, "scenario %s: unknown layout %d", s->name, (int)layout);
        return -1;
    }
}

/* ---- model ------------------------------------------------------------- */

/* One warp of `lanes` lanes: issued work, ideal (longest present), useful
 * lane-work (each lane's own), lane FMAs, whether it is split. */
struct warp_cost {
    unsigned long long issued, ideal, useful, fmas;
    int split;
};

static void warp_cost(const struct scenario *s, const uint8_t *p, unsigned lanes, unsigned unit_fmas,
                      unsigned short_iters, struct warp_cost *c) {
    memset(c, 0, sizeof *c);
    for (unsigned l = 1; l < lanes; l++) c->split |= p[l] != p[0];
    switch (s->kind) {
    case SCENARIO_KWAY: {
        uint32_t present = 0;
        for (unsigned l = 0; l < lanes; l++) {
            present |= 1u << p[l];
            c->useful += s->lengths[p[l]];
        }
        for (unsigned q = 0; q < SCENARIO_MAX_PATHS; q++)
            if (present & (1u << q)) {
                c->issued += s->lengths[q];
                if (s->lengths[q] > c->ideal) c->ideal = s->lengths[q];
            }
        c->fmas = c->useful * unit_fmas;
        break;
    }
    case SCENARIO_LOOP:
        for (unsigned l = 0; l < lanes; l++) {
            c->useful += p[l];
            if (p[l] > c->issued) c->issued = p[l];
        }
        c->ideal = c->issued;
        c->fmas = c->useful * unit_fmas;
        break;
    case SCENARIO_SHORT: {
        unsigned long long per32 = 0, ideal32 = 0, useful32 = 0;
        for (unsigned j = 0; j < 32u; j++) {
            int has[2] = {s->predicated, s->predicated};
            for (unsigned l = 0; l < lanes; l++) {
                unsigned side = (scenario_short_pattern(p[l]) >> j) & 1u;
                has[side] = 1;
                useful32 += s->lengths[side];
            }
            unsigned long long sum = 0, mx = 0;
            for (unsigned side = 0; side < 2; side++)
                if (has[side]) {
                    sum += s->lengths[side];
                    if (s->lengths[side] > mx) mx = s->lengths[side];
                }
            per32 += sum;
            ideal32 += mx;
        }
        unsigned long long rounds = short_iters / 32u;
        c->issued = per32 * rounds;
        c->ideal = ideal32 * rounds;
        c->useful = useful32 * rounds;
        c->fmas = c->useful;
        for (unsigned l = 1; l < lanes && !c->split; l++)
            c->split = scenario_short_pattern(p[l]) != scenario_short_pattern(p[0]);
        break;
    }
    }
}

static unsigned heaviest_value(const struct scenario *s) {
    unsigned best = s->lane_work[0];
    for (unsigned l = 1; l < 32; l++) {
        unsigned v = s->lane_work[l];
        unsigned lv = s->kind == SCENARIO_KWAY ? s->lengths[v] : v;
        unsigned lb = s->kind == SCENARIO_KWAY ? s->lengths[best] : best;
        if (lv > lb) best = v;
    }
    return best;
}

void scenario_model(const struct scenario *s, const uint8_t *work, unsigned blocks,
                    unsigned threads_per_block, unsigned unit_fmas, unsigned short_iters,
                    struct scenario_model *m, struct dv_row *row) {
    unsigned wpb = (threads_per_block + 31u) / 32u;
    unsigned heavy = heaviest_value(s);
    memset(m, 0, sizeof *m);
    row->warps_per_block = wpb;
    row->threads_per_block = threads_per_block;
    memset(&row->warps_split, 0, sizeof row->warps_split);
    memset(&row->threads_on_a, 0, sizeof row->threads_on_a);
    memset(&row->path_runs, 0, sizeof row->path_runs);
    for (unsigned b = 0; b < blocks; b++) {
        unsigned long long issued_b = 0;
        unsigned split_b = 0, on_a = 0;
        for (unsigned w = 0; w < wpb; w++) {
            unsigned long long first = (unsigned long long)b * threads_per_block + w * 32ull;
            const unsigned lanes = dv_warp_lanes(threads_per_block, w);
            const uint8_t *p = work + first;
            struct warp_cost c;
            warp_cost(s, p, lanes, unit_fmas, short_iters, &c);
            m->issued += c.issued;
            m->ideal += c.ideal;
            m->useful_lanes += c.useful;
            m->issued_lanes += (unsigned long long)lanes * c.issued;
            m->thread_fmas += c.fmas;
            issued_b += c.issued;
            split_b += c.split ? 1u : 0u;
            for (unsigned l = 0; l < lanes; l++) {
                m->hist[p[l]]++;
                on_a += p[l] == heavy;
            }
        }
        dv_count_add(&row->warps_split, split_b, b == 0);
        dv_count_add(&row->threads_on_a, on_a, b == 0);
        dv_count_add(&row->path_runs, issued_b, b == 0);
    }
    dv_count_finish(&row->warps_split, blocks);
    dv_count_finish(&row->threads_on_a, blocks);
    dv_count_finish(&row->path_runs, blocks);
    if (s->kind == SCENARIO_LOOP)
        m->efficiency = m->issued_lanes ? (double)m->useful_lanes / (double)m->issued_lanes : NAN;
    else
        m->efficiency = m->issued ? (double)m->ideal / (double)m->issued : NAN;
}

double scenario_warp_efficiency(const struct scenario *s, const uint8_t lanes[32]) {
    struct warp_cost c;
    warp_cost(s, lanes, 32u, SCENARIO_DEFAULT_UNIT, 32u, &c);
    if (s->kind == SCENARIO_LOOP) return c.issued ? (double)c.useful / (32.0 * (double)c.issued) : NAN;
    return c.issued ? (double)c.ideal / (double)c.issued : NAN;
}

/* ---- CPU reference ----------------------------------------------------- */

DV_FMA_CLONES
float scenario_reference(const struct scenario *s, float x, unsigned w, unsigned unit_fmas,
                         unsigned short_iters) {
    switch (s->kind) {
    case SCENARIO_KWAY: {
        const float a = scenario_kway_a(w), b = scenario_kway_b(w);
        unsigned long long n = (unsigned long long)s->lengths[w] * unit_fmas;
        for (unsigned long long i = 0; i < n; i++) x = fmaf(x, a, b);
        return x;
    }
    case SCENARIO_LOOP: {
        unsigned long long n = (unsigned long long)w * unit_fmas;
        for (unsigned long long i = 0; i < n; i++) x = fmaf(x, SCENARIO_LOOP_A, SCENARIO_LOOP_B);
        return x;
    }
    default: {
        uint32_t pat = scenario_short_pattern(w);
        for (unsigned r = 0; r < short_iters / 32u; r++)
            for (unsigned k = 0; k < 32u; k++) {
                unsigned side = (pat >> k) & 1u;
                x = scenario_short_side(x, side, s->lengths[side]);
            }
        return x;
    }
    }
}

/* Work values of one fill: those of `work` not yet computed, ascending. */
static unsigned refs_wanted(const struct scenario_refs *r, const uint8_t *work, unsigned long long threads,
                            unsigned char *list) {
    unsigned char seen[256] = {0};
    for (unsigned long long i = 0; i < threads; i++) seen[work[i]] = 1;
    unsigned n = 0;
    for (unsigned w = 0; w < 256; w++)
        if (seen[w] && !r->have[w]) list[n++] = (unsigned char)w;
    return n;
}

/* One thread's share of a fill: input values [x0, x1) for the `n` work
 * values `list` (ascending). Each value is scenario_reference()'s chain for
 * its input, step for step; the inputs' chains run side by side (one step
 * of every input, then the next), so the host's multiply-add units have
 * independent work instead of waiting for one chain's last result. A loop's
 * trip counts share one chain per input: w trips are the first w x unit
 * multiply-adds of every longer count, so the chain is carried from one
 * count to the next. */
struct refs_part {
    struct scenario_refs *r;
    const unsigned char *list;
    unsigned n, x0, x1;
};

DV_FMA_CLONES static void *refs_part_main(void *p) {
    const struct refs_part *t = p;
    const struct scenario_refs *r = t->r;
    const struct scenario *s = r->s;
    const unsigned nv = t->x1 - t->x0;
    float y[DV_INPUT_DISTINCT];
    for (unsigned v = 0; v < nv; v++) y[v] = dv_input_value(t->x0 + v);
    unsigned long long done = 0; /* a loop's trips run so far */
    for (unsigned k = 0; k < t->n; k++) {
        const unsigned w = t->list[k];
        if (s->kind == SCENARIO_LOOP) {
            for (const unsigned long long upto = (unsigned long long)w * r->unit_fmas; done < upto; done++)
                for (unsigned v = 0; v < nv; v++) y[v] = fmaf(y[v], SCENARIO_LOOP_A, SCENARIO_LOOP_B);
        } else {
            for (unsigned v = 0; v < nv; v++) y[v] = dv_input_value(t->x0 + v);
            if (s->kind == SCENARIO_KWAY) {
                const float a = scenario_kway_a(w), b = scenario_kway_b(w);
                const unsigned long long steps = (unsigned long long)s->lengths[w] * r->unit_fmas;
                for (unsigned long long i = 0; i < steps; i++)
                    for (unsigned v = 0; v < nv; v++) y[v] = fmaf(y[v], a, b);
            } else {
                const uint32_t pat = scenario_short_pattern(w);
                for (unsigned it = 0; it < r->short_iters / 32u; it++)
                    for (unsigned b = 0; b < 32u; b++) {
                        const unsigned side = (pat >> b) & 1u, len = s->lengths[side];
                        for (unsigned v = 0; v < nv; v++) y[v] = scenario_short_side(y[v], side, len);
                    }
            }
        }
        for (unsigned v = 0; v < nv; v++) r->values[(size_t)(t->x0 + v) * 256u + w] = y[v];
    }
    return NULL;
}

int scenario_refs_init(struct scenario_refs *r, const struct scenario *s, unsigned unit_fmas, unsigned short_iters,
                       char *err) {
    memset(r, 0, sizeof *r);
    if (!(r->values = malloc(sizeof(float) * DV_INPUT_DISTINCT * 256u))) {
        dv_seterr(err, "scenario check: out of memory");
        return -1;
    }
    r->s = s;
    r->unit_fmas = unit_fmas;
    r->short_iters = short_iters;
    return 0;
}

void scenario_refs_free(struct scenario_refs *r) {
    free(r->values);
    r->values = NULL;
}

void scenario_refs_fill(struct scenario_refs *r, const uint8_t *work, unsigned long long threads, unsigned nthreads) {
    unsigned char list[256];
    const unsigned n = refs_wanted(r, work, threads, list);
    if (n == 0) return;
    if (nthreads < 1) nthreads = 1;
    if (nthreads > SCENARIO_REFS_MAX_THREADS) nthreads = SCENARIO_REFS_MAX_THREADS;
    struct refs_part parts[SCENARIO_REFS_MAX_THREADS];
    pthread_t tid[SCENARIO_REFS_MAX_THREADS];
    int started[SCENARIO_REFS_MAX_THREADS] = {0};
    for (unsigned k = 0; k < nthreads; k++) {
        parts[k] = (struct refs_part){r, list, n, (unsigned)((unsigned long long)DV_INPUT_DISTINCT * k / nthreads),
                                      (unsigned)((unsigned long long)DV_INPUT_DISTINCT * (k + 1) / nthreads)};
        /* The first share runs here; a thread that does not start runs here too. */
        started[k] = k > 0 && pthread_create(&tid[k], NULL, refs_part_main, &parts[k]) == 0;
    }
    for (unsigned k = 0; k < nthreads; k++)
        if (!started[k]) refs_part_main(&parts[k]);
    for (unsigned k = 0; k < nthreads; k++)
        if (started[k]) pthread_join(tid[k], NULL);
    for (unsigned k = 0; k < n; k++) r->have[list[k]] = 1;
}

void scenario_refs_check(const struct scenario_refs *r, const uint8_t *work, unsigned long long threads,
                         const float *got, struct dv_check *c) {
    dv_check_init(c);
    unsigned v = 0; /* i % DV_INPUT_DISTINCT */
    for (unsigned long long i = 0; i < threads; i++) {
        dv_check_add(c, i, r->values[(size_t)v * 256u + work[i]], got[i]);
        if (++v == DV_INPUT_DISTINCT) v = 0;
    }
    c->ok = c->mismatches == 0 && c->checked == threads;
}

int scenario_check(const struct scenario *s, const uint8_t *work, unsigned long long threads,
                   unsigned unit_fmas, unsigned short_iters, const float *got,
                   struct dv_check *c, char *err) {
    struct scenario_refs r;
    if (scenario_refs_init(&r, s, unit_fmas, short_iters, err) != 0) return -1;
    scenario_refs_fill(&r, work, threads, 1);
    scenario_refs_check(&r, work, threads, got, c);
    scenario_refs_free(&r);
    return 0;
}

/* ---- planning ---------------------------------------------------------- */

static const char *kind_name(enum scenario_kind kind) {
    switch (kind) {
    case SCENARIO_KWAY: return "kway";
    case SCENARIO_LOOP: return "loop";
    default: return "short-ifelse";
    }
}

const char *scenario_kernel_name(const struct scenario *s) {
    return kind_name(s->kind);
}

/* Each row of `t` against the baseline row's model (`m`, one per row):
 * the predicted ratio, whether it does the same work and why, and its note. */
static void compare_rows(const struct scenario *s, const struct scenario_model *m, unsigned blocks, unsigned unit,
                         struct dv_table *t) {
    for (unsigned r = 0; r < s->nrows; r++) {
        struct dv_row *row = &t->rows[r];
        const struct scenario_model *b = &m[s->baseline];
        row->predicted_ratio = b->issued ? (double)m[r].issued / (double)b->issued : NAN;
        row->comparable = memcmp(m[r].hist, b->hist, sizeof b->hist) == 0;
        if (s->kind == SCENARIO_SHORT)
            row->predicted_efficiency = m[r].issued ? (double)b->issued / (double)m[r].issued : NAN;
        if (r == s->baseline)
            snprintf(row->comparable_reason, sizeof row->comparable_reason, "the baseline");
        else if (row->comparable)
            snprintf(row->comparable_reason, sizeof row->comparable_reason,
                     "same multiset of per-thread work as %s", s->rows[s->baseline].name);
        else if (s->rows[r].layout == SCENARIO_LAYOUT_IDEAL)
            snprintf(row->comparable_reason, sizeof row->comparable_reason,
                     "more work: every lane runs its warp's longest path");
        else
            snprintf(row->comparable_reason, sizeof row->comparable_reason,
                     "different work: this grid does not split into whole warps the same way");
        if (r == 0)
            snprintf(row->note, sizeof row->note,
                     "%s; issued %.4g vs %.4g per block (%s): model ratio %.3f, lane use %.1f%%",
                     s->note, (double)m[r].issued / blocks, (double)b->issued / blocks,
                     s->kind == SCENARIO_KWAY ? "units"
                     : s->kind == SCENARIO_LOOP ? "warp-iterations" : "side FMAs",
                     row->predicted_ratio,
                     m[r].issued_lanes ? 100.0 * m[r].useful_lanes / m[r].issued_lanes : 0.0);
        else if (r == s->baseline)
            snprintf(row->note, sizeof row->note,
                     "the warp-uniform version of the same work (unit = %u FMAs)", unit);
        else
            snprintf(row->note, sizeof row->note, "model ratio %.3f against %s",
                     row->predicted_ratio, s->rows[s->baseline].name);
    }
}

int scenario_build_table(const struct scenario *s, const struct dv_options *o, struct dv_table *t,
                         uint8_t **works, const char **field, char *err) {
    const struct dv_geometry g = scenario_grid(o);
    const unsigned blocks = g.blocks, bx = g.block_x, by = g.block_y;
    unsigned tpb = bx * by;
    unsigned unit = scenario_unit_fmas(o), iters = scenario_short_iterations(o);
    unsigned long long n = (unsigned long long)blocks * tpb;
    struct scenario_model *m = NULL;
    uint8_t *work = NULL;
    int rc = -1;

    if (field) *field = "";
    if (tpb == 0 || tpb > DV_MAX_THREADS_PER_BLOCK || blocks > DV_MAX_BLOCKS) {
        dv_seterr(err, "scenario %s: bad geometry %u blocks of %u x %u", s->name, blocks, bx, by);
        if (field) *field = blocks > DV_MAX_BLOCKS ? "blocks" : "threads_per_block";
        return -1;
    }
    m = calloc(s->nrows, sizeof *m);
    if (!m) {
        dv_seterr(err, "scenario %s: out of memory", s->name);
        goto cleanup;
    }
    memset(t, 0, sizeof *t);
    snprintf(t->id, sizeof t->id, "scenario:%s", s->name);
    snprintf(t->title, sizeof t->title, "%s (worked case %s)", s->title, s->cell);
    snprintf(t->kernel, sizeof t->kernel, "%s", kind_name(s->kind));
    snprintf(t->baseline, sizeof t->baseline, "%s", s->rows[s->baseline].name);
    t->baseline_row = (int)s->baseline;
    t->nrows = s->nrows;
    t->noise_limit = t->halfwidth_target = o->max_noise;
    t->worst_row = -1;
    t->cost_witness_ms = t->cost_counters_ms = NAN;

    for (unsigned r = 0; r < s->nrows; r++) {
        struct dv_row *row = &t->rows[r];
        work = malloc(n ? n : 1);
        if (!work) {
            dv_seterr(err, "scenario %s: out of memory for %llu threads", s->name, n);
            goto cleanup;
        }
        if (scenario_assign(s, s->rows[r].layout, blocks, tpb, work, err) != 0) goto cleanup;
        snprintf(row->name, sizeof row->name, "%s", s->rows[r].name);
        snprintf(row->label, sizeof row->label, "%s", s->rows[r].label);
        row->kernel = DV_KERNEL_SCENARIO;
        row->mode = DV_MODE_NONE;
        scenario_model(s, work, blocks, tpb, unit, iters, &m[r], row);
        row->thread_fmas = m[r].thread_fmas;
        row->predicted_efficiency = m[r].efficiency;
        row->measured_efficiency = NAN;
        row->agreement = NAN;
        row->ratio = NAN;
        row->floor_fraction = NAN;
        if (works) works[r] = work;
        else free(work);
        work = NULL;
    }
    compare_rows(s, m, blocks, unit, t);
    rc = 0;
cleanup:
    free(work);
    free(m);
    if (rc != 0 && works)
        for (unsigned r = 0; r < s->nrows; r++) {
            free(works[r]);
            works[r] = NULL;
        }
    return rc;
}

int scenario_plan(const struct dv_options *o, struct dv_report *r, const char **field, char *err) {
    const struct scenario *list[SCENARIO_MAX_SELECTED];
    size_t count = 0;
    const struct dv_geometry g = scenario_grid(o);
    const unsigned blocks = g.blocks, bx = g.block_x, by = g.block_y;
    char why[ERR_LEN];

    if (field) *field = "";
    if (scenario_select(o->scenario, list, &count, why) != 0) {
        dv_seterr(err, "scenario: %s", why);
        if (field) *field = "scenario";
        return -1;
    }
    if (r->ntables + count > DV_MAX_TABLES) {
        dv_seterr(err, "scenario: %zu tables do not fit (%u of %d used)", count, r->ntables,
                  DV_MAX_TABLES);
        if (field) *field = "scenario";
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        if (scenario_build_table(list[i], o, &r->tables[r->ntables], NULL, field, err) != 0) return -1;
        r->ntables++;
    }
    if (!r->config.experiment[0]) {
        struct dv_config *c = &r->config;
        snprintf(c->experiment, sizeof c->experiment, "scenario");
        c->blocks = blocks;
        c->blocks_auto = o->blocks == 0;
        if (c->blocks_auto)
            snprintf(c->blocks_reason, sizeof c->blocks_reason,
                     "scenarios run the lesson's %u blocks", DV_DEFAULT_BLOCKS);
        c->block_x = bx;
        c->block_y = by;
        c->threads_per_block = bx * by;
        c->threads = (unsigned long long)blocks * bx * by;
        c->iterations = o->iterations;
        c->fmas_per_launch = 0; /* differs per row: see each row's floor_fraction */
        c->bytes_per_launch = c->threads * (2u * sizeof(float) + 1u);
        c->max_noise = o->max_noise;
        c->budget_ms = o->budget_ms;
        c->min_samples = o->min_samples;
        c->max_samples = o->max_samples;
    }
    return 0;
}

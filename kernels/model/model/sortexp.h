/* sortexp.h -- the data-dependent divergence experiment: items that each
 * carry a material id, shaded by a switch over the materials, and whether
 * sorting the items by material first pays (the predication lesson's
 * "grouping like work might require sorting or compaction ... The grouping
 * pays off only when its saved path work exceeds those costs").
 *
 * A cell is (distribution, M materials, C FMAs a material): n items, item i
 * with material mat[i] in 0..M-1 and payload dv_input_value(i). Shading item
 * i runs material mat[i]'s path: C FMAs x = fma(x, a_m, b_m) with the k-way
 * paths' constants (scenario_kway_a/b: distinct per material, so the
 * compiler cannot merge two paths, and a wrong path cannot pass the check).
 * A warp that meets k distinct materials runs k paths one after the other.
 *
 * The materials come from one seeded generator (sortexp_hash(), a
 * counter-based splitmix64, the same function on the host and the device):
 *   uniform    each item's material uniform over M;
 *   zipf       material r with weight 1/(r+1) (Zipf, s = 1);
 *   tiles      an image of SORTEXP_IMAGE_W items a row cut into 8 x 8 tiles,
 *              one uniform material a tile (spatially coherent: a warp of a
 *              row's 32 items meets at most 4 tiles);
 *   presorted  the uniform draw, sorted by material (the same multiset).
 *
 * The rows of a cell's table (enum sortexp_row), each timed by the shared
 * engine in paired rounds:
 *   sort+shade    CUB's radix sort of (material, item<<32 | payload bits)
 *                 pairs, then the shade of the sorted pairs (reads in sorted
 *                 order, contiguous; writes out[item]): the baseline;
 *   naive         shade the items as given;
 *   index         shade through the sorted item index, the data left in
 *                 place (reads mat[idx], in[idx]: divergence removed,
 *                 locality not);
 *   shade-sorted  the shade of sort+shade alone, on pairs sorted before the
 *                 rounds (so sort+shade - shade-sorted, paired by round,
 *                 is the sort inside the sort+shade row);
 *   sort          the sort alone.
 * Every shading row does the same work (n items, C FMAs each, the same
 * multiset); the sort is extra work, and the document says so.
 *
 * The result: naive / (sort+shade) with its interval per cell, the cell's
 * verdict (sorting pays: the interval above 1; costs: below; ambiguous: it
 * straddles 1), and per (distribution, M) the crossover: the smallest C of
 * the grid from which sorting pays at that C and every larger one.
 */
#ifndef DV_SORTEXP_H
#define DV_SORTEXP_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/model/model/scenario.h" /* scenario_kway_a/b: the paths' constants */
#include "kernels/model/model/types.h"

#define SORTEXP_MAX_M 32u
#define SORTEXP_CHUNK 8u /* FMAs a chunk: C is a multiple of it */
#define SORTEXP_MIN_C 8u
#define SORTEXP_MAX_C 512u
#define SORTEXP_IMAGE_W 1024u /* items a row of the tiles' image */
#define SORTEXP_TILE 8u       /* tile side, items */
#define SORTEXP_SEED 0x9e3779b97f4a7c15ull

/* splitmix64 of (seed + i): one counter-based draw, the same on host and device. */
DV_HD uint64_t sortexp_hash(uint64_t seed, uint64_t i) {
    uint64_t z = seed + (i + 1u) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A uniform material of M from draw `h`: the high 32 bits scaled (no modulo bias). */
DV_HD unsigned sortexp_uniform(uint64_t h, unsigned m) { return (unsigned)(((h >> 32) * (uint64_t)m) >> 32); }

/* Material `m`'s shade of payload x: C FMAs with the k-way path's constants. */
DV_HD float sortexp_shade(float x, unsigned m, unsigned c) {
    const float a = scenario_kway_a(m), b = scenario_kway_b(m);
    for (unsigned j = 0; j < c; j++) x = fmaf(x, a, b);
    return x;
}

#ifdef __cplusplus
extern "C" {
#endif

enum sortexp_dist { SORTEXP_UNIFORM = 0, SORTEXP_ZIPF, SORTEXP_TILES, SORTEXP_PRESORTED, SORTEXP_NDIST };

enum sortexp_row {
    SORTEXP_ROW_SORT_SHADE = 0,
    SORTEXP_ROW_NAIVE,
    SORTEXP_ROW_INDEX,
    SORTEXP_ROW_SHADE_SORTED,
    SORTEXP_ROW_SORT,
    SORTEXP_NROWS
};

/* Stable names: "uniform", "zipf", "tiles", "presorted"; NULL past the end. */
const char *sortexp_dist_name(enum sortexp_dist d);
/* The row names: "sort+shade", "naive", "index", "shade-sorted", "sort". */
const char *sortexp_row_name(enum sortexp_row r);

/* Fills mat[0..n) with distribution `d` over `m` materials (1..32).
 * Returns 0, or -1 with `err` for an unknown distribution or m out of range. */
int sortexp_materials(enum sortexp_dist d, unsigned m, unsigned long long n, uint8_t *mat, char *err);

/* The stable sort by material of items 0..n-1 (what CUB's radix sort of
 * the pairs gives): order[j] = the item at sorted place j. `m` bounds the
 * materials. */
void sortexp_order(const uint8_t *mat, unsigned long long n, unsigned m, uint32_t *order);

/* One warp's witness record: the distinct materials it met (its k) and its
 * runs by active lanes (hist[l]: runs of a material with l lanes). */
struct sortexp_warp {
    unsigned k;
    unsigned hist[33];
};

/* The CPU count of warp `w`: the items at places [w*32, w*32+32) of the
 * shading order (`order` NULL: the items' own order; else order[place]),
 * clipped to n, warps cut per block of `tpb` threads (so place = block *
 * tpb + 32 * warp-in-block + lane). */
void sortexp_warp_count(const uint8_t *mat, const uint32_t *order, unsigned long long n, unsigned tpb,
                        unsigned long long w, struct sortexp_warp *out);

/* Warps of n items in blocks of tpb threads. */
unsigned long long sortexp_warps(unsigned long long n, unsigned tpb);

/* Adds warp record `w` into the grid summary `s` (zeroed first). */
void sortexp_witness_add(struct dv_sort_witness *s, const struct sortexp_warp *w);

/* The cell verdict of an interval of naive / (sort+shade): 1 sorting pays
 * (lo > 1), -1 it costs (hi < 1), 0 ambiguous (the interval straddles or
 * touches 1, or is missing). */
int sortexp_verdict(double lo, double hi);

/* The crossover of one (distribution, M): `c` ascending with `verdict`
 * per C (n of them); the smallest c[i] such that verdict[j] == 1 for every
 * j >= i, or 0 when sorting does not pay at the largest C. */
unsigned sortexp_crossover(const unsigned *c, const int *verdict, unsigned n);

/* A named grid: "data-sort" (the nightly set) or "data-sort-<distribution>"
 * (the full grid of one distribution). */
struct sortexp_grid {
    unsigned ndist, nm, nc;
    enum sortexp_dist dist[SORTEXP_NDIST];
    unsigned m[8], c[8];
};
/* Whether `name` is one of the experiment's names (filling *g when g is not NULL). */
int sortexp_grid_named(const char *name, struct sortexp_grid *g);
/* Cells of grid `g`. */
unsigned sortexp_grid_cells(const struct sortexp_grid *g);

/* Plans the tables of grid `o->scenario` into `r` (as scenario_plan()):
 * one table a cell, id "sort:<dist>:m<M>:c<C>", its rows' analysis and
 * model, and r->sort's cells (unmeasured). Returns 0, or -1 with `err` and
 * *field ("scenario" for an unknown name or a grid that does not fit). */
int sortexp_plan(const struct dv_options *o, struct dv_report *r, const char **field, char *err);

/* Whether table `t` is one of this experiment's. */
int sortexp_table_is(const struct dv_table *t);

/* Parses a table id back into its cell; 0, or -1 when it is none. */
int sortexp_table_cell(const char *id, enum sortexp_dist *d, unsigned *m, unsigned *c);

/* Fills cell `cell` from its measured table `t`: the ratio, its interval
 * and verdict, the sort alone (the sort row's median and interval); the
 * sort inside sort+shade is left unmeasured (NaN) for sortexp_cell_inside(). */
void sortexp_cell_from_table(const struct dv_table *t, struct dv_sort_cell *cell);

/* The derived counters of row `row` of a cell counted on `blocks` shading
 * blocks (testimony_counters_derive() against the model's split warps per
 * block), the verdict saying where CUB's sort kernels are in the count
 * (sort+shade's and the sort's) and what the shading's warps show. */
void sortexp_counters_derive(unsigned row, unsigned blocks, double split_per_block, struct dv_counters *c);

/* The sort inside sort+shade, timed on its own between two events within
 * sort+shade's launches, each round beside the sort alone between two
 * events (gpu/sort_measure.c): its median and interval, and inside / alone
 * paired by round (`ratio` in [`rlo`, `rhi`]) into `cell`; the two agree
 * when that interval meets 1 +- `target` (the tables' half-width target:
 * the sort inside costs what it costs alone, as far as the tables can
 * tell). */
void sortexp_cell_inside(struct dv_sort_cell *cell, double median, double lo, double hi, double ratio, double rlo,
                         double rhi, double target);

/* The crossovers of r->sort's measured cells and the sentence that reads them. */
void sortexp_summarise(struct dv_sort *s);

#ifdef __cplusplus
}
#endif

#endif /* DV_SORTEXP_H */

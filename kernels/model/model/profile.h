/* profile.h -- what a row's instruction profile is collected on, decided
 * once for the two processes that need it: the worker, which looks the
 * profile up in its cache before it starts a collector, and the collector
 * (`divergence-gpu instructions`), which launches what this says.
 *
 * A profile's counts are sums over blocks of what each block's warps
 * executed, so the row is launched on the blocks that stand for its grid,
 * the counter pass's rule (model/model/testimony.h, testimony_lesson_grid()):
 * one block for a predicate that does not read blockIdx.x, one period of
 * blocks for one that does (plus the first blocks % period once), the
 * whole grid for a block-dependent branch inside the loop. The parts'
 * weights are whole numbers (blocks / period and 1), and the full grid's
 * count of every instruction is the weighted sum, exactly.
 *
 * The mask hash covers the path bits of the blocks launched (the second
 * part is a prefix of the first): with the kernel's function, its mode, the
 * geometry, the cubin and the driver it is the cache key (model/listing/listing.h's
 * struct listing_key).
 */
#ifndef DV_PROFILE_H
#define DV_PROFILE_H

#include <stdint.h>

#include "kernels/model/model/testimony.h"
#include "kernels/model/model/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct profile_plan {
    struct testimony_grid grid;                       /* the parts launched */
    unsigned long long weight[TESTIMONY_GRID_PARTS];  /* grid.weight[] as integers */
    uint64_t mask_hash;
    double cost; /* thread-iterations run patched: sum of part blocks x threads x iterations */
};

/* 1 when `row`'s kernel can be profiled (every kernel of the service: the
 * Part 1 / Part 2 kernels and the scenario kernels); else 0 with `reason`
 * (ERR_LEN). */
int profile_row_supported(const struct dv_row *row, char *reason);

/* The plan of Part 1 / Part 2 row `row` over grid `g` with `iterations`:
 * the counter pass's parts, or with `whole_grid` the whole grid as one
 * part. Builds the row's phase-0 path mask. Returns 0, or -1 with `err` (a
 * scenario row: profile_plan_table_row() plans those; a predicate that does
 * not evaluate, out of memory). */
int profile_plan_row(const struct dv_row *row, const struct dv_geometry *g, unsigned iterations, int whole_grid,
                     struct profile_plan *out, char *err);

/* The stand-in grids of scenario rows' profiles are chosen for the fewest
 * blocks (a wave of one), since a profile's cost is its patched blocks';
 * the counter pass chooses its own for the fewest launch waves. */
#define PROFILE_STANDIN_WAVE 1u

/* The plan of row `r` of table `t` of the report planned from request `o`
 * (its grid `g`, `iterations`): a Part 1 / Part 2 row's as
 * profile_plan_row(); a scenario row's from its assignment
 * (testimony_scenario_grid() at PROFILE_STANDIN_WAVE: one period of it or a
 * stand-in grid of its distinct blocks), its mask hash over the bytes of
 * the blocks launched and their weights, its cost the blocks launched times
 * their threads times the row's longest thread's FMAs; a data-sort row's
 * (naive, index, shade-sorted) the whole grid as one part, whatever
 * `whole_grid` says (the materials decide each warp's divergence, so no
 * block stands for another), its hash over the cell's materials (its
 * distribution, M and grid), the row and C, its cost the grid's threads
 * times C. Returns 0, or -1 with `err`
 * (for a row profile_row_unprofiled() names, its reason). */
int profile_plan_table_row(const struct dv_options *o, const struct dv_table *t, unsigned r,
                           const struct dv_geometry *g, unsigned iterations, int whole_grid, struct profile_plan *out,
                           char *err);

/* 1 when row `r` of table `t` has no instruction profile by design, with
 * why in `reason` (ERR_LEN); else 0. A data-sort cell's sort+shade and sort
 * rows are such rows: their launches are CUB's radix-sort kernels (and in
 * sort+shade, after them, the shade of the sorted pairs: the shade-sorted
 * row's kernel on the same pairs, whose profile is that row's). */
int profile_row_unprofiled(const struct dv_table *t, unsigned r, char *reason);

/* The kernel instantiation row `r` of table `t` (planned from `o`) runs,
 * as a name stable across processes into buf[len]: "branch/1" (a lesson
 * kernel and whether it is the compile-time 4096 instantiation),
 * "scenario/short/4x3/r0" (a scenario kernel, its sides or variant and its
 * rounds), "sort/naive" (a data-sort row: its shading order, the shade
 * kernel's instantiation; its cell is in the plan's hash). Profiles of the same name share the function and cubin the first
 * one found. Returns 0, or -1 when it does not fit. */
int profile_kernel_identity(const struct dv_options *o, const struct dv_table *t, unsigned r, unsigned iterations,
                            char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* DV_PROFILE_H */

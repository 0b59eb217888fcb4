/* witness_record.h -- what the active-lane witness records, shared by the
 * witness kernels (kernels/gpu) and the host derivation (model/model/testimony.h).
 *
 * The witness instantiation of a kernel records, at the top of each path,
 * the run its warp is in (the warp's __activemask()), each run once, into its
 * block's record (gpu/witness_device.cuh says how it defers the adding):
 *   runs[p]   warp-level executions of path p (a "path-run"),
 *   split[p]  of those, the runs with fewer active lanes than the warp has
 *             threads (a partial last warp counts its own threads, not 32),
 *   lanes[p]  active lanes summed over the runs,
 *   hist[p][k] the runs with exactly k active lanes (k = 1..32; 0 unused).
 * Path 0 is path A (the `if` side, or every path-top of a scenario k-way /
 * loop kernel), path 1 path B (the `else` side). A kernel whose branch the
 * compiler predicated shows every warp on both paths with all of its lanes.
 */
#ifndef DV_WITNESS_RECORD_H
#define DV_WITNESS_RECORD_H

#define DV_WITNESS_PATHS 2
#define DV_WITNESS_BINS 33 /* active lanes 0..32 */

struct dv_witness_block {
    unsigned long long runs[DV_WITNESS_PATHS];
    unsigned long long split[DV_WITNESS_PATHS];
    unsigned long long lanes[DV_WITNESS_PATHS];
    unsigned hist[DV_WITNESS_PATHS][DV_WITNESS_BINS];
};

#endif /* DV_WITNESS_RECORD_H */

/* witness_device.cuh -- the active-lane witness on the device, shared by
 * lesson_kernels.cu and scenario_kernels.cu (model/model/witness_record.h).
 *
 * A witness kernel declares one struct dv_witness_block per block in shared
 * memory and one witness_recorder per thread: construction zeroes the
 * block's record, hit(p) at the top of path p records the run the warp is
 * in, end() adds what is left and copies the record to the block's slot in
 * global memory. The record is the same as if the warp's lowest active lane
 * added every run to the block's record the moment it ran (runs, partial
 * runs, active lanes, the run in the histogram by active lanes), but the
 * adding is deferred:
 *
 *   every lane keeps, per path, the active mask of the latest run it took
 *   part in and how many runs in a row had that mask (a streak: two
 *   registers per path). A hit compares the warp's __activemask() with the
 *   lane's kept mask: equal, one more run; different, the streak is flushed
 *   and the new mask kept. A streak counts once: only the lowest lane of its
 *   mask flushes it, every other lane of that mask drops its copy. That lane
 *   was active in every run with that mask, so it counted each of them: so
 *   every run is added exactly once. The flushing lane adds the streak to
 *   the histogram bin of its active lanes (one shared-memory atomic) and to
 *   its own sums of runs, partial runs and lanes (registers), which end()
 *   adds to the block's record.
 *
 * A loop whose warps keep their mask (a per-iteration branch, a loop trip)
 * thus costs a compare and an add per hit, and one whose masks change every
 * iteration one atomic per hit, where adding each run at once cost four
 * shared-memory atomics that every warp of the block contended for. Runs
 * are still recorded from inside the path, so the witness still has to
 * branch to record.
 *
 * witness_recorder<false> is empty and its members compile to nothing, so
 * the timed instantiations carry no witness code (and no shared memory).
 * Construction and end() synchronise the block: make them where every
 * thread passes.
 */
#ifndef DV_WITNESS_DEVICE_CUH
#define DV_WITNESS_DEVICE_CUH

#include "kernels/model/model/witness_record.h"

#define DV_WITNESS_U32 (sizeof(struct dv_witness_block) / sizeof(unsigned))
static_assert(sizeof(struct dv_witness_block) % sizeof(unsigned) == 0, "the record is copied in 32-bit words");

/* The timed kernels' recorder: nothing. */
template <bool WITNESS> struct witness_recorder {
    __device__ __forceinline__ witness_recorder(struct dv_witness_block *, unsigned, unsigned) {}
    __device__ __forceinline__ void hit(unsigned) {}
    __device__ __forceinline__ void end(struct dv_witness_block *) {}
};

template <> struct witness_recorder<true> {
    struct dv_witness_block *s; /* the block's record, shared              */
    unsigned tid, tpb;
    unsigned below; /* the lanes below this one                */
    unsigned width; /* threads of this lane's warp             */
    /* Per path: the streak (its mask, its runs), and the sums of the
     * streaks this lane flushed (it led them), added to the block at end().
     * 32 bits hold them: a lane leads at most iterations x 2 runs, of at
     * most 32 lanes each. */
    unsigned mask[DV_WITNESS_PATHS], runs[DV_WITNESS_PATHS];
    unsigned led_runs[DV_WITNESS_PATHS], led_split[DV_WITNESS_PATHS], led_lanes[DV_WITNESS_PATHS];

    __device__ __forceinline__ witness_recorder(struct dv_witness_block *shared, unsigned t, unsigned threads)
        : s(shared), tid(t), tpb(threads) {
        unsigned *w = reinterpret_cast<unsigned *>(s);
        for (unsigned i = tid; i < DV_WITNESS_U32; i += tpb) w[i] = 0u;
        const unsigned first = tid & ~31u;
        width = tpb - first < 32u ? tpb - first : 32u;
        below = (1u << (tid & 31u)) - 1u;
        for (unsigned p = 0; p < DV_WITNESS_PATHS; p++)
            mask[p] = runs[p] = led_runs[p] = led_split[p] = led_lanes[p] = 0u;
        __syncthreads();
    }

    /* Ends path `p`'s streak: when this lane is the lowest of its mask (it
     * is in the mask: it took those runs), its runs are this lane's to add:
     * the histogram's bin now (its index varies), the sums at end(). */
    __device__ __forceinline__ void flush(unsigned p) {
        if (runs[p] == 0u || (mask[p] & below) != 0u) return;
        const unsigned k = __popc(mask[p]);
        led_runs[p] += runs[p];
        if (k < width) led_split[p] += runs[p];
        led_lanes[p] += runs[p] * k;
        atomicAdd(&s->hist[p][k], runs[p]);
    }

    /* The run this lane's warp is in at the top of path `p` (a constant at
     * every call, so the kept masks and counts stay in registers). Lanes of
     * one run may have kept different masks and part ways here; they leave
     * together, as they came, so that the kernel goes on as the timed one
     * does. */
    __device__ __forceinline__ void hit(unsigned p) {
        const unsigned m = __activemask();
        if (m == mask[p]) {
            runs[p]++;
        } else {
            flush(p);
            mask[p] = m;
            runs[p] = 1u;
        }
        __syncwarp(m);
    }

    __device__ __forceinline__ void end(struct dv_witness_block *out) {
        for (unsigned p = 0; p < DV_WITNESS_PATHS; p++) {
            flush(p);
            if (led_runs[p] == 0u) continue;
            atomicAdd(&s->runs[p], (unsigned long long)led_runs[p]);
            if (led_split[p]) atomicAdd(&s->split[p], (unsigned long long)led_split[p]);
            atomicAdd(&s->lanes[p], (unsigned long long)led_lanes[p]);
        }
        __syncthreads();
        const unsigned *w = reinterpret_cast<const unsigned *>(s);
        unsigned *o = reinterpret_cast<unsigned *>(&out[blockIdx.x]);
        for (unsigned i = tid; i < DV_WITNESS_U32; i += tpb) o[i] = w[i];
    }
};

#endif /* DV_WITNESS_DEVICE_CUH */

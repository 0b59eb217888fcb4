/* witness_device.cuh -- the active-lane witness on the device, shared by
 * lesson_kernels.cu and scenario_kernels.cu (model/witness_record.h).
 *
 * A witness kernel keeps one struct dv_witness_block per block in shared
 * memory: witness_begin() zeroes it, witness_hit() at the top of a path has
 * the warp's lowest active lane record the run (partial when fewer lanes
 * are active than the warp has threads, the active lanes, and the run in
 * the histogram by active lanes), witness_end() copies it to the block's
 * slot in global memory. With WITNESS false every helper compiles to nothing,
 * so the timed instantiations carry no witness code (and no shared memory).
 * begin and end synchronise the block: call them where every thread passes.
 */
#ifndef DV_WITNESS_DEVICE_CUH
#define DV_WITNESS_DEVICE_CUH

#include "kernels/model/witness_record.h"

#define DV_WITNESS_U32 (sizeof(struct dv_witness_block) / sizeof(unsigned))
static_assert(sizeof(struct dv_witness_block) % sizeof(unsigned) == 0, "the record is copied in 32-bit words");

template <bool WITNESS>
__device__ __forceinline__ void witness_begin(struct dv_witness_block *s, unsigned tid, unsigned tpb) {
    if (!WITNESS) return;
    unsigned *w = reinterpret_cast<unsigned *>(s);
    for (unsigned i = tid; i < DV_WITNESS_U32; i += tpb) w[i] = 0u;
    __syncthreads();
}

template <bool WITNESS>
__device__ __forceinline__ void witness_hit(struct dv_witness_block *s, unsigned path, unsigned tid, unsigned tpb) {
    if (!WITNESS) return;
    const unsigned m = __activemask();
    if ((tid & 31u) != (unsigned)(__ffs(m) - 1)) return;
    const unsigned first = tid & ~31u;
    const unsigned width = tpb - first < 32u ? tpb - first : 32u;
    const unsigned k = __popc(m);
    atomicAdd(&s->runs[path], 1ull);
    if (k < width) atomicAdd(&s->split[path], 1ull);
    atomicAdd(&s->lanes[path], (unsigned long long)k);
    atomicAdd(&s->hist[path][k], 1u);
}

template <bool WITNESS>
__device__ __forceinline__ void witness_end(const struct dv_witness_block *s, struct dv_witness_block *out,
                                            unsigned tid, unsigned tpb) {
    if (!WITNESS) return;
    __syncthreads();
    const unsigned *w = reinterpret_cast<const unsigned *>(s);
    unsigned *o = reinterpret_cast<unsigned *>(&out[blockIdx.x]);
    for (unsigned i = tid; i < DV_WITNESS_U32; i += tpb) o[i] = w[i];
}

#endif /* DV_WITNESS_DEVICE_CUH */

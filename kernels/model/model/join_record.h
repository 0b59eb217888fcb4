/* join_record.h -- what the reconvergence experiment's join record holds,
 * shared by its kernel (gpu/scenario_kernels.cu) and the host summary
 * (model/model/testimony.h, testimony_join()).
 *
 * The join instantiation of a pair kernel (scenario.h, the reconvergence
 * variants) writes, for every lane that reaches the join, right after it
 * (after the __syncwarp() of a _SYNC variant) and before the tail, one
 * record: the warp's __activemask() as the lane saw it and the lane's
 * clock64(). A warp that reconverged at the join reads both in one
 * instruction, with one mask (every lane that reaches the join) and one
 * clock; a warp that did not reads them once per group of lanes, each group
 * with its own mask and a later clock. A lane that never reaches the join
 * (an early return) leaves its record as the host zeroed it: `reached` 0.
 */
#ifndef DV_JOIN_RECORD_H
#define DV_JOIN_RECORD_H

#include <stdint.h>

struct dv_join_lane {
    uint32_t mask;            /* __activemask() right after the join */
    uint32_t reached;         /* 1: the lane reached the join        */
    unsigned long long clock; /* clock64() right after the join */
};

#endif /* DV_JOIN_RECORD_H */

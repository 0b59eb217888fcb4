/* chain.h -- the arithmetic every kernel runs, shared with the CPU reference.
 *
 * Path A and path B are equal-length chains of fused multiply-adds with
 * different constants: A contracts towards 1.0, B towards 1.5, so from any
 * input in [0.5, 1.0) the two paths end in disjoint ranges and a thread sent
 * down the wrong path can never produce the right value by accident
 * (reference.c checks this for every distinct input at start-up).
 *
 * The input is never zero and never constant: dv_input_value() cycles through
 * DV_INPUT_DISTINCT values, a prime so that the pattern does not line up with
 * warps or blocks. The CPU reference is therefore computed once per distinct
 * value and path, not once per thread.
 */
#ifndef DV_CHAIN_H
#define DV_CHAIN_H

#include "kernels/model/model/predicate.h" /* DV_HD, DV_CONSTEXPR */

#define DV_MUL_A 0.9999f
#define DV_ADD_A 0.0001f
#define DV_MUL_B 0.9998f
#define DV_ADD_B 0.0003f
#define DV_INPUT_DISTINCT 1021u

DV_HD float dv_input_value(unsigned long long i) {
    return 0.5f + (float)(unsigned)(i % DV_INPUT_DISTINCT) / 2048.0f;
}

#endif /* DV_CHAIN_H */

/* intensity.h -- the arithmetic-intensity experiment's paths: the lesson's
 * branch (lane-split against warp-aligned, the same work values the other
 * experiments use) with each path doing F FMAs per L 4-byte loads, and the
 * roofline each point is read against (scenario kind SCENARIO_MEM,
 * scenario.h; the kernels are gpu/intensity_kernels.cu).
 *
 * A thread loads INTENSITY_WORDS words in S = INTENSITY_WORDS / L steps.
 * Each step adds its L words (integer adds: no floating-point operation
 * besides the FMAs) into u and runs F FMAs on x: the first
 * x = fma(x, a_p, inject(u)) takes the loaded data in, the F - 1 others
 * x = fma(x, a_p, b_p); path p (0: A, the `if`; 1: B) has constants of its
 * own, so the compiler can merge no two paths. Both paths do the same F
 * and L: the rows compared do equal work.
 *   stream  step s loads words s*L .. s*L+L-1 of the thread's slice of the
 *           data buffer (block-major: word k of thread t of block b at
 *           (b * tpb * WORDS) + k * tpb + t', so a warp's lanes read one
 *           contiguous 128-byte line per word: coalesced; t' is t with its
 *           lane replaced by intensity_lane_word(), so each path's lanes
 *           read whole sectors of that line);
 *   chase   each load is the next link of a pointer chase through a buffer
 *           of 2^INTENSITY_CHASE_LOG2 words (256 MiB, four times the H200's
 *           L2): word i holds (next(i) << 6) | INTENSITY_CHASE_PAYLOAD, next
 *           a full-period congruential step, so every load depends on the
 *           one before and lands far from it.
 * Two rows stand apart, for the ridge measured on the same GPU in the same
 * run: "ridge-bandwidth" streams every word of the data buffer and adds
 * their sum with one FMA a thread (bytes over time: the bandwidth), "ridge-fma" runs
 * INTENSITY_RIDGE_FMAS FMAs a thread and loads nothing (the FMA rate).
 *
 * The data's values are known to the CPU reference (a stream word depends
 * only on its place k in the thread's slice, a chase word's payload is one
 * constant), so a thread's output depends only on its input and path and
 * the reference is one value per (input, work value) as for every other
 * scenario. The helpers compile as C11 and as CUDA (DV_HD): the kernels,
 * the fills and the reference use the very same constants.
 */
#ifndef DV_INTENSITY_H
#define DV_INTENSITY_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/model/model/predicate.h" /* DV_HD */
#include "kernels/model/model/types.h"

#define INTENSITY_WORDS 64u         /* words (4 bytes) a thread loads            */
#define INTENSITY_RIDGE_FMAS 16384u /* the FMA ridge row's FMAs a thread         */
#define INTENSITY_CHASE_LOG2 26u    /* chase buffer: 2^26 words = 256 MiB        */
#define INTENSITY_CHASE_WORDS (1u << INTENSITY_CHASE_LOG2)
#define INTENSITY_CHASE_PAYLOAD 0x2Au
#define INTENSITY_MAX_F 256u
#define INTENSITY_MAX_L 16u

/* The variants of a SCENARIO_MEM row (struct scenario.variant). */
enum intensity_variant {
    INTENSITY_STREAM = 0,
    INTENSITY_CHASE,
    INTENSITY_RIDGE_BANDWIDTH,
    INTENSITY_RIDGE_FMA,
    INTENSITY_VARIANTS
};

/* Path p's constants (p 0, 1; 2 for the FMA ridge, 3 the bandwidth
 * ridge's one FMA): fixed point
 * b / (1 - a) = (p + 1) / 64 as the k-way paths', exact in binary32. */
DV_HD float intensity_a(unsigned p) { return 1.0f - (float)(80u + p) / 65536.0f; }
DV_HD float intensity_b(unsigned p) { return (float)((p + 1u) * (80u + p)) / 4194304.0f; }

/* The word of a 32-word line (a warp's 128 bytes for one k) that lane
 * `lane` of a warp reads, `on_b` the warp's lanes on path B (bit i: lane
 * i), `live` the warp's lanes (all 32 but in a short last warp). Each path's lanes read contiguous words in lane order, path A's from
 * the line's start, path B's after them: a lane's place among its own
 * path's lanes. With the lesson's lane-parity split, lane t reading word t
 * would make each path's 16 lanes touch all four 32-byte sectors of the
 * line and use half of each, twice the sector traffic of a warp-aligned
 * warp: a memory cost, not divergence. Read this way each half-warp reads
 * two whole sectors, and a warp on one path (on_b 0 or all ones) reads
 * word t in lane t as before: the compared rows move the same bytes with
 * the same sector efficiency. The words of a line are all equal
 * (intensity_stream_word), so the values and the reference do not change. */
DV_HD unsigned intensity_popc(uint32_t x) {
#ifdef __CUDA_ARCH__
    return (unsigned)__popc(x);
#else
    return (unsigned)__builtin_popcount(x);
#endif
}
DV_HD unsigned intensity_lane_word(unsigned lane, uint32_t on_b, uint32_t live) {
    const uint32_t below = lane ? (0xFFFFFFFFu >> (32u - lane)) : 0u; /* lanes under `lane` */
    on_b &= live;
    const unsigned below_b = intensity_popc(on_b & below);
    if ((on_b >> lane) & 1u) return intensity_popc(live & ~on_b) + below_b;
    return lane - below_b;
}

/* Word k (0..INTENSITY_WORDS-1) of every thread's slice of the stream buffer. */
DV_HD uint32_t intensity_stream_word(unsigned k) { return (k + 1u) * 0x9E3779B1u; }

/* The chase: the link after word i, word i's value, thread g's first word. */
DV_HD uint32_t intensity_chase_next(uint32_t i) {
    return (i * 0x9E3779B5u + 0x7F4A7C15u) & (INTENSITY_CHASE_WORDS - 1u);
}
DV_HD uint32_t intensity_chase_word(uint32_t i) { return (intensity_chase_next(i) << 6) | INTENSITY_CHASE_PAYLOAD; }
DV_HD uint32_t intensity_chase_start(unsigned long long g) {
    return (uint32_t)(g * 0x85EBCA6Bull) & (INTENSITY_CHASE_WORDS - 1u);
}

/* The loaded data as an FMA's addend: a float in [2^-23, 2^-22) made of
 * u's low bits by integer operations only. */
DV_HD float intensity_inject(uint32_t u) {
    const uint32_t bits = 0x34000000u | (u & 0x7FFFFu);
#ifdef __CUDA_ARCH__
    return __uint_as_float(bits);
#else
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
#endif
}

/* What step s of a thread with L loads a step adds into u: the sum of its
 * words (stream) or of their payloads (chase). */
DV_HD uint32_t intensity_step_sum(unsigned variant, unsigned s, unsigned L) {
    uint32_t u = 0;
    for (unsigned j = 0; j < L; j++)
        u += variant == INTENSITY_CHASE ? INTENSITY_CHASE_PAYLOAD : intensity_stream_word(s * L + j);
    return u;
}

#ifdef __cplusplus
extern "C" {
#endif

/* Whether F FMAs per L loads is a point the kernels have: F in 1..256, L
 * in 1..16, both powers of two. */
int intensity_point_ok(unsigned F, unsigned L);

/* The FMAs and the bytes a thread of variant `variant` with F FMAs per L
 * loads runs and loads (the ridge rows ignore F and L). */
unsigned long long intensity_thread_fmas(unsigned variant, unsigned F, unsigned L);
unsigned intensity_thread_bytes(unsigned variant);

/* The point's intensity as written: 2F FLOP per 4L bytes loaded. */
double intensity_nominal(unsigned F, unsigned L);

/* CPU reference: the output of a thread with input x on path w (0: A,
 * 1: B; the ridge rows' one path whatever w is). */
float intensity_reference(unsigned variant, unsigned F, unsigned L, float x, unsigned w);

/* The stable name of a variant: "stream", "chase", "ridge-bandwidth",
 * "ridge-fma" ("" past them). */
const char *intensity_variant_name(unsigned variant);

/* The roofline figures of measured table `t` (a SCENARIO_MEM table, rows
 * planned with their `intensity` point): the ridge from its two ridge rows
 * (bandwidth: DRAM bytes read over the median time where the counters
 * gave them, else the bytes the threads load; FMA rate: 2 x FMAs over the
 * median), then per row its FLOP rate, its achieved bandwidth (loaded and,
 * with counters, DRAM), its intensity per DRAM byte, where it lies against
 * the ridge and what share of its roofline bound it reached. Rows without
 * a median keep NaN. */
void intensity_derive(struct dv_table *t);

#ifdef __cplusplus
}
#endif

#endif /* DV_INTENSITY_H */

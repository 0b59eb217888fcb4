/* intensity_kernels.h -- C-ABI launchers of the arithmetic-intensity
 * kernels (intensity_kernels.cu; the paths are model/model/intensity.h's).
 */
#ifndef DV_INTENSITY_KERNELS_H
#define DV_INTENSITY_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/model/model/witness_record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The branch kernel of `variant` (enum intensity_variant) with F FMAs per L
 * loads on `blocks` blocks of block_x x block_y: thread i takes path
 * work[i] (0: A, 1: B; a ridge row's one path whatever it holds), reads
 * in[i], writes out[i]. `data` is the stream buffer from the first block
 * launched on (INTENSITY_WORDS words a thread, block-major), `chase` the
 * chase buffer (INTENSITY_CHASE_WORDS words). With `witness` (one record
 * per block) the untimed witness instantiation runs instead. A point with
 * no compile-time instantiation runs the runtime one. Returns 0 or a DV_*
 * code with `err`. */
int intensity_launch(const float *in, float *out, const uint8_t *work, const uint32_t *data, const uint32_t *chase,
                     unsigned blocks, unsigned block_x, unsigned block_y, unsigned variant, unsigned F, unsigned L,
                     struct dv_witness_block *witness, char *err);

/* 1 when F per L has a compile-time instantiation (the tables' points). */
int intensity_compiled(unsigned F, unsigned L);

/* Fills `data` (`words` words, `threads_per_block` threads a block: word k
 * of a thread is intensity_stream_word(k)) and, where not NULL, `chase`
 * (INTENSITY_CHASE_WORDS words of intensity_chase_word()) on the device. */
int intensity_fill(uint32_t *data, unsigned long long words, unsigned threads_per_block, uint32_t *chase, char *err);

/* Writes `bytes` of `scratch` (at least the L2's size): what the L2 held
 * is evicted, and nothing is read from DRAM for it. Queued on the default
 * stream. */
int intensity_flush(void *scratch, size_t bytes, char *err);

/* Resident blocks of `threads_per_block` per SM of the timed kernel of
 * (variant, F, L) into *per_sm. */
int intensity_occupancy(unsigned variant, unsigned F, unsigned L, unsigned threads_per_block, int *per_sm, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_INTENSITY_KERNELS_H */

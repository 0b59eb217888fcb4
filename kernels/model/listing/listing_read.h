/* listing_read.h -- the tools' outputs an instruction profile is read from.
 *
 * Two formats, both as the CUDA 13 toolkit writes them on an H200 (the
 * tests read real captures):
 *
 *   listing_read_sass()   a disassembly: `nvdisasm -c` (sections
 *                         ".text.<function>:", labels ".L_x_N:", and per
 *                         instruction a line that starts with its pc in a
 *                         hex comment, then the text up to ';', such as
 *                         "@P0 BRA `(.L_x_52) ;"), or `cuobjdump -sass`
 *                         ("Function : <function>", the same lines with the
 *                         target as an offset, "@P0 BRA 0x1380 ;", and the
 *                         encoding in comments, its second half on a line
 *                         of its own). Gives each instruction's text and,
 *                         for a BRA, the pc it jumps to.
 *   listing_read_ncu()    Nsight Compute's Source page as CSV, as `ncu
 *                         --section SourceCounters --page source
 *                         --print-source sass --csv` prints it: per profiled
 *                         launch a "Kernel Name" row, a header row
 *                         ("Address","Source",...) and a row per
 *                         instruction. Addresses are absolute: pc offsets
 *                         are taken from the function's first, and branch
 *                         targets likewise. Counts come from "Instructions
 *                         Executed", "Thread Instructions Executed",
 *                         "Predicated-On Thread Instructions Executed" and
 *                         "Divergent Branches", stall samples from the
 *                         "stall_<reason>" columns. This layout has no
 *                         source lines: a collector that reads it maps pcs
 *                         to lines itself.
 *
 * listing_join_text() puts a disassembly's text and branch targets on the
 * instructions a collector counted, by pc.
 */
#ifndef DV_LISTING_READ_H
#define DV_LISTING_READ_H

#include <stddef.h>

#include "kernels/model/listing/listing.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The instructions of `function` (its mangled name) in the disassembly
 * `text` (`len` bytes) into `out` (initialised here: pc, sass, target).
 * Returns 0, or -1 with `err` (the function is not in the text, out of
 * memory). */
int listing_read_sass(const char *text, size_t len, const char *function, struct listing_insns *out, char *err);

/* Profiled launch `index` (0-based, in the CSV's order) of an ncu Source
 * page CSV into `out` (initialised here: pc, sass, target, counts, stall
 * samples; function the kernel's name as ncu prints it). Returns 0, or -1 with `err` (no such launch, a
 * header without the count columns, a malformed row, out of memory). */
int listing_read_ncu(const char *csv, size_t len, unsigned index, struct listing_insns *out, char *err);

/* Number of profiled launches in an ncu Source page CSV. */
unsigned listing_ncu_launches(const char *csv, size_t len);

/* Copies the text and branch target of every instruction of `text` onto the
 * instruction of `f` at the same pc. Returns how many of f's instructions
 * got a text. */
size_t listing_join_text(struct listing_insns *f, const struct listing_insns *text);

#ifdef __cplusplus
}
#endif

#endif /* DV_LISTING_READ_H */

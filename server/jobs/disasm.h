/* disasm.h -- a cubin's SASS text, for the instruction profile's listing
 * (gpu/instr_run.h puts it on the counted instructions).
 *
 * The disassembler (jobs/toolkit.h: --disassembler, $DV_DISASSEMBLER, else
 * nvdisasm, else cuobjdump) runs on the cubin written to a file of its own
 * (`nvdisasm -c`, `cuobjdump -sass`), under a deadline. The text is kept
 * for the life of the process (its rows share their kernels' cubins), and
 * with a cache folder also on disk as <folder>/<CRC in hex>.sass, written
 * whole under another name and renamed, so a reader sees all of it or none:
 * a worker disassembles each cubin once, and the next worker of the same
 * binary (the folder is its profile cache's, jobs/profilecache.h) none.
 *
 * The text's first line is "# <the tool's label>" (its name, its version
 * from --version, its path), the rest the tool's output.
 */
#ifndef DV_DISASM_H
#define DV_DISASM_H

#include <stddef.h>
#include <stdint.h>

#define DISASM_DEADLINE_MS 60000.0

struct disasm_config {
    const char *tool;      /* --disassembler: a path, "none", or NULL to look */
    const char *cache_dir; /* --sass-cache: the folder, or NULL for memory    */
};

/* The disassembly of `cubin` (`size` bytes, 64-bit CRC `crc`) as text,
 * malloc()ed, *len bytes, the first line the label; from this process's
 * memory, the cache folder, or the tool. NULL with `why` (ERR_LEN: no
 * disassembler, it failed on the cubin, out of memory). One thread. */
char *disasm_cubin(const struct disasm_config *c, uint64_t crc, const void *cubin, size_t size, size_t *len, char *why);

/* Where disasm_cubin()'s answers came from, since the process began: its
 * memory (the cubin it was last asked for), the cache folder, or a run of
 * the tool (a served profiler's answer says which its request's texts
 * came from, cmd/instr_cmd.h). */
struct disasm_counts {
    unsigned memory, folder, tool;
};

void disasm_counts(struct disasm_counts *out);

#endif /* DV_DISASM_H */

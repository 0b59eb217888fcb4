/* toolkit.h -- the CUDA toolkit's programs on this host that the
 * instruction profile runs: a disassembler (nvdisasm, else cuobjdump) and
 * Nsight Compute's ncu.
 *
 * A program is looked for in the toolkit found at build time
 * (DV_CUDA_BIN_DIR), then /usr/local/cuda/bin, then PATH; one named
 * exactly (an option, else an environment variable) is taken as it is.
 * Finding one runs nothing.
 */
#ifndef DV_TOOLKIT_H
#define DV_TOOLKIT_H

#include <limits.h>

/* `name` where the toolkit's programs are looked for, into out[PATH_MAX].
 * Returns 0, or -1 (out "") when no executable file has that name. */
int toolkit_find(const char *name, char out[PATH_MAX]);

/* The disassembler into out[PATH_MAX]: `exact` (NULL: $DV_DISASSEMBLER)
 * when it names one ("none" turns it off), else nvdisasm, else cuobjdump.
 * Returns 0, or -1 with `why` (ERR_LEN: turned off, not an executable
 * file, none found and where it was looked for). */
int toolkit_disassembler(const char *exact, char out[PATH_MAX], char *why);

/* Nsight Compute's ncu into out[PATH_MAX]: `exact` (NULL: $DV_NCU) when
 * it names one, else ncu where the toolkit's programs are, else the newest
 * /opt/nvidia/nsight-compute/<version>/ncu. Returns 0, or -1. */
int toolkit_ncu(const char *exact, char out[PATH_MAX]);

#endif /* DV_TOOLKIT_H */

/* instr_cmd.h -- `divergence-gpu instructions`: one row's instruction
 * profile, collected in a process of its own.
 *
 *   divergence-gpu instructions --table T --row R [--device N]
 *       [--request FILE] [--disassembler PATH|none] [--sass-cache DIR]
 *       [--stalls on|off] [--grid reduced|whole] [--compare ncu] [--ncu PATH]
 *   divergence-gpu instructions --launch-only --part K --table T --row R ...
 *
 * The request (request.h's JSON, as the job ran it: blocks a number, not
 * auto) comes on stdin or from --request FILE; row R of table T of its plan
 * is profiled. The worker starts one such process per row whose profile it
 * has not cached (jobs/instrproc.h), so CUPTI's SASS patching and PC
 * sampling never run in the process that times kernels, and a crash or a
 * hang costs one row. The process:
 *   1. loads CUPTI and subscribes to module loads (gpu/instr.h), then opens
 *      the device;
 *   2. builds the row's input, output and mask as the measurement does, and
 *      launches the row's timed kernel: once on one wave of its grid under
 *      PC sampling, then on each part of the blocks that stand for its grid
 *      (model/profile.h) under the SASS metrics;
 *   3. combines the parts, maps each pc to its source line, disassembles
 *      the cubin (nvdisasm -c, else cuobjdump -sass: --disassembler, then
 *      $DV_DISASSEMBLER, the toolkit found at build time, /usr/local/cuda/bin
 *      and PATH; the text is kept in --sass-cache DIR by the cubin's CRC, so
 *      a worker disassembles each cubin once), and groups the instructions
 *      into regions and runs (model/listing.h);
 *   4. prints one line: {"ok": true, "instructions": <the row's
 *      instructions object>, "stalls_reason": null | "..."} or {"ok":
 *      false, "reason": "..."}, and exits 0 or 1 (2 for bad arguments).
 * --compare ncu first runs Nsight Compute's Source page (`ncu --section
 * SourceCounters --clock-control none`, then its `--page source
 * --print-source sass --csv`) on this binary's --launch-only for each part
 * of the same grid, then collects as above and adds "compare": {cells,
 * mismatches, instructions, first} (every count of every instruction, the
 * parts weighted alike). --launch-only launches part K's kernel once with
 * no CUPTI at all and prints nothing: what ncu profiles.
 */
#ifndef DV_INSTR_CMD_H
#define DV_INSTR_CMD_H

/* Entry point; returns the exit status. */
int instr_cmd_main(int argc, char **argv);

#endif /* DV_INSTR_CMD_H */

/* instr_cmd.h -- `divergence-gpu instructions`: the instruction profiles
 * of rows of a request, collected in a process of their own.
 *
 *   divergence-gpu instructions (--table T --row R | --rows T:R,...) [--device N]
 *       [--request FILE] [--disassembler PATH|none] [--sass-cache DIR]
 *       [--stalls on|off] [--grid reduced|whole] [--compare ncu] [--ncu PATH]
 *   divergence-gpu instructions --launch-only --part K --table T --row R ...
 *
 * The request (request.h's JSON, as the job ran it: blocks a number, not
 * auto) comes on stdin or from --request FILE; row R of table T of its plan
 * is profiled, or each row of --rows. The worker starts one such process
 * for a job's rows whose profiles it has not cached (jobs/instrproc.h), so
 * CUPTI's SASS patching and PC sampling never run in the process that times
 * kernels, and a crash or a hang costs profiles, not the job. The process
 * plans the rows (gpu/instr_plan.h), runs the passes on the device
 * (gpu/instr_run.h: the buffers, PC sampling on one wave of each row, the
 * SASS metrics on the blocks that stand for each row's grid, each row's
 * listing), with the disassembly's text from jobs/disasm.h (nvdisasm -c,
 * else cuobjdump -sass: --disassembler, then $DV_DISASSEMBLER, the toolkit
 * found at build time, /usr/local/cuda/bin and PATH; the text is kept in
 * --sass-cache DIR by the cubin's CRC, so a worker disassembles each cubin
 * once), and prints one line per row (jobs/instrline.h):
 *      {"table": T, "row": R, "ok": true, "instructions": <the row's
 *      instructions object>, "stalls_reason": null | "..."} or {"table",
 *      "row", "ok": false, "reason": "..."}; for --table/--row the line
 *      also has "phases_ms", and --rows ends with {"done": true, "rows",
 *      "profiled", "phases_ms"} (the host time of plan, cuda, cupti,
 *      sampling, patched, lines, text, and the total).
 * It exits 0 when a row was profiled, else 1 (2 for bad arguments).
 *
 *   divergence-gpu instructions --serve [--device N] [--disassembler PATH|none]
 *       [--sass-cache DIR] [--stalls on|off] [--grid reduced|whole]
 *
 * The worker's long-lived profiler (jobs/instrserve.h): CUPTI's set-up once
 * (gpu/instr_run.h's runner, warmed before the first frame: a context,
 * CUPTI readied, and the lesson kernels' module loaded so the cubin CUPTI
 * captures is disassembled into jobs/disasm.h's memory and folder before
 * any request, no profiling session; a failure of that text part is
 * logged and costs nothing else; DV_INSTR_SERVE_WARM_TEXT=off skips it),
 * then one request after another. The wire is jobs/wire.h's framing: on
 * stdout first {"ready": true|false, "pid", "warm_ms", "text_warm":
 * {"cubins", "texts", "ms", "reason"} | null}; then for each request
 * frame {"rows": "T:R,...", "request": {...}} on stdin, one frame per row
 * and the "done" frame, the lines --rows prints; or a frame of parts
 * {"parts": [{"rows", "request"}, ...]} (at most INSTR_CMD_MAX_PARTS; a
 * batch's groups, jobs/instrproc.h): every part's rows run together in one
 * CUDA context, one CUPTI set-up and one sampling pass (gpu/instr_run.h's
 * instr_runner_run_jobs()), each row's frame with its "part" (the index in
 * "parts") before "table", and one "done" at the end. A served request's
 * "done" comes after the device's reset and also says where its texts
 * came from ("disassembly": {"memory", "folder", "tool"}) and whether the
 * process ends after it ("ending"). A part whose buffers cannot be made
 * fails its own rows. Anything else the process
 * prints goes to stderr: its stdout carries only frames. It ends at the end
 * of its stdin (status 0), when its worker dies (PR_SET_PDEATHSIG), after a
 * request whose passes failed as a whole or whose device could not be
 * reset (a sticky error: status 1, the reason on stderr, "ending": true in
 * its "done", the worker starts another), and when a
 * frame cannot be read.
 * --compare ncu first runs Nsight Compute's Source page (jobs/ncu.h: `ncu
 * --section SourceCounters --clock-control none`, then its `--page source
 * --print-source sass --csv`) on this binary's --launch-only for each part
 * of the same grid, then collects as above and adds "compare": {cells,
 * mismatches, instructions, first} (every count of every instruction, the
 * parts weighted alike). --launch-only launches part K's kernel once with
 * no CUPTI at all and prints nothing: what ncu profiles.
 */
#ifndef DV_INSTR_CMD_H
#define DV_INSTR_CMD_H

#define INSTR_CMD_MAX_PARTS 8

/* Entry point; returns the exit status. */
int instr_cmd_main(int argc, char **argv);

#endif /* DV_INSTR_CMD_H */

/* instrline.h -- the lines `divergence-gpu instructions` answers with
 * (cmd/instr_cmd.h), one JSON object each, which the worker's profiler
 * reads (jobs/instrproc.h):
 *   a row's:   {"table", "row", "ok": true, "instructions": <the row's
 *              instructions object, api/report.h>, "stalls_reason": null |
 *              "..."} or {"table", "row", "ok": false, "reason"}, with
 *              "phases_ms" for a process of one row (and "compare" beside
 *              Nsight Compute's Source page);
 *   the last:  {"done": true, "rows", "profiled", "phases_ms"} for a
 *              process of several rows; a served request's (--serve) also
 *              has "disassembly": {"memory", "folder", "tool"} (how many
 *              of its texts came from the disassembler's memory, its
 *              cache folder, a run of the tool: jobs/disasm.h) and
 *              "ending" (true: the process ends after this answer).
 * "phases_ms" is the host time of each phase of the process by name, and
 * the total.
 */
#ifndef DV_INSTRLINE_H
#define DV_INSTRLINE_H

#include "kernels/model/listing/listing.h"

/* Where the process's time went: `n` phases, their names and times. */
struct instrline_phases {
    const char *const *names;
    const double *ms;
    unsigned n;
    double total_ms;
};

/* Row `row` of table `table`'s line: its profile `l` with `stall_reason`
 * (NULL or "": it has its stall samples), or, with `l` NULL, `reason`
 * ("instructions: failed" when NULL or ""); `ph` and `cmp` when not NULL.
 * The text without a newline, malloc()ed, or NULL when out of memory. */
char *instrline_row(int table, int row, const struct listing *l, const char *reason, const char *stall_reason,
                    const struct instrline_phases *ph, const struct listing_diff *cmp);

/* What a served request's last line adds. */
struct instrline_served {
    unsigned text_memory, text_folder, text_tool; /* its texts, by where they came from */
    int ending;                                   /* the process ends after it          */
};

/* The last line of a process of `rows` rows, `profiled` of them with a
 * profile; `sv` a served request's (NULL: a process's). malloc()ed, or
 * NULL when out of memory. */
char *instrline_done(unsigned rows, unsigned profiled, const struct instrline_phases *ph,
                     const struct instrline_served *sv);

/* {"ok": false, "reason"}: what a process says when it cannot write a row's
 * line. malloc()ed, or NULL when out of memory. */
char *instrline_failure(const char *reason);

#endif /* DV_INSTRLINE_H */

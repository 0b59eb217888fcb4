/* listing.h -- the instruction profile of a row's timed kernel: per SASS
 * instruction what the GPU executed, grouped into the regions a reader of the
 * lesson understands (before the branch, path A, path B, reconvergence,
 * after) and into runs of identical instructions.
 *
 * A collector (gpu/instr.h through CUPTI's SASS metrics, or Nsight Compute's
 * Source page read by listing_read.h) gives one struct listing_insn per
 * instruction of one function: its pc offset, its text when a disassembler
 * was found, its source file and line, and four counts over the launch it
 * profiled (warp executions, thread executions, predicated-on thread
 * executions, divergent branch targets), plus PC-sampling stall samples per
 * reason when sampling ran. Every count is a sum over blocks of what each
 * block's warps executed, so a launch on the blocks that stand for a grid
 * (model/model/testimony.h's struct testimony_grid) gives the whole grid's counts
 * exactly once each part is weighted: listing_combine().
 *
 * The regions, decided once here (listing_classify()):
 *   1. An instruction whose source line is one of path A's chain statements
 *      (a `fmaf(x, DV_MUL_A, DV_ADD_A)` line of the kernel's file) is path A,
 *      one of path B's is path B. The lines come from the source itself
 *      (struct listing_paths), so the rule reads what the kernel says.
 *   2. The line table alone misnames the instructions where the compiler
 *      merged the two loops' set-up (on an H200 the counter reset at the top
 *      of path A carries path B's loop line), so where the disassembly shows
 *      the branch, control flow decides instead: the divergent branch is the
 *      last predicated BRA before the first path instruction whose target
 *      falls among the path instructions; the code from the first path
 *      instruction to that target is one side (fall-through), the code from
 *      the target to the reconvergence point the other, and each side takes
 *      the path that at least nine in ten of its chain-line instructions are
 *      on (the few the line table misplaces are what this rule corrects) --
 *      only when both sides have one and they differ. A predicated branch
 *      (Part 2's per-iteration kernel, where both chains' FFMAs are
 *      interleaved and guarded by @P / @!P) has no such sides, and rule 1
 *      stands: each guarded FFMA is on its own chain's line.
 *   3. Reconvergence: the BSYNC / WARPSYNC instructions right after the last
 *      path instruction (each half of a split warp waits there on its own, so
 *      a BSYNC shows twice the warp executions of the code after it). The
 *      BSSY that announces the meeting point is executed once by the whole
 *      warp before the split, and stays in "before" with the rest of the
 *      branch's evaluation.
 *   4. Before: everything ahead of the first path instruction, and anything
 *      between path instructions that is on neither chain's lines and not
 *      inside a side of rule 2 (the per-iteration kernel's predicate, which
 *      every thread evaluates before each branch). After: everything past
 *      the paths and the reconvergence.
 * Without a disassembly rules 2 and 3 have nothing to read: the regions are
 * rule 1's and 4's, there is no reconvergence region, and the document says
 * why there is no SASS text.
 *
 * listing_build() turns classified instructions into a struct listing: one
 * region summary per kind present that the launch executed (a kind no warp
 * ran, such as the cases of the k-way switch a row's k leaves untaken, is
 * no region of the row: its runs stay, with their zero counts), in program
 * order of its first instruction, with its top stall reasons as shares of
 * its samples; and the
 * runs: consecutive instructions with the same opcode, guard, region, source
 * line and counts, as one entry. Its counts are for the row's full grid.
 *
 * Host-only C11; nothing here touches a GPU, so every rule is tested on the
 * listings an H200 gave (tests/kernels/model/listing/test_listing.c).
 */
#ifndef DV_LISTING_H
#define DV_LISTING_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LISTING_SASS_LEN 128
#define LISTING_OPCODE_LEN 32
#define LISTING_FILE_LEN 160
#define LISTING_FUNCTION_LEN 256
#define LISTING_REASON_LEN 96 /* CUPTI's reason names run to 62 characters */
#define LISTING_MAX_REASONS 64  /* stall reasons a GPU names (40 on GH100)   */
#define LISTING_TOP_STALLS 4    /* reasons kept per region                   */
#define LISTING_MAX_PATH_LINES 16 /* of path A and of path B each */
#define LISTING_SOURCE_LEN 16
#define LISTING_TOOL_LEN 128

/* The regions. The first five are the lesson's; a kernel with more than
 * two paths names each (path_0 .. path_31: the k-way switch's cases), a
 * loop's body is `loop` (its lanes per execution are the lanes per trip),
 * and the code a reconvergence experiment runs after its join is `tail`
 * (its lanes say whether the warp met there again). */
enum listing_kind {
    LISTING_BEFORE,
    LISTING_PATH_A,
    LISTING_PATH_B,
    LISTING_RECONVERGE,
    LISTING_AFTER,
    LISTING_LOOP,
    LISTING_TAIL,
    LISTING_PATH_0,
    LISTING_PATH_LAST = LISTING_PATH_0 + 31,
    LISTING_KINDS
};

/* "before", "path_a", "path_b", "reconverge", "after", "loop", "tail",
 * "path_0" .. "path_31" (the document's names), and back: -1 for a name
 * that is none of them. */
const char *listing_kind_name(enum listing_kind k);
int listing_kind_parse(const char *name);

/* 1 for the kinds that are a path's own code (path_a, path_b, loop,
 * path_0 .. path_31), 0 otherwise. */
int listing_kind_is_path(enum listing_kind k);

/* One SASS instruction of a collected function. */
struct listing_insn {
    uint32_t pc;                   /* offset in the function                   */
    char sass[LISTING_SASS_LEN];   /* "" without a disassembly                 */
    char file[LISTING_FILE_LEN];   /* "" when no source line maps              */
    unsigned line;                 /* 0 when not mapped                        */
    unsigned long long warp, thread, pred_on, divergent;
    uint32_t stalls[LISTING_MAX_REASONS]; /* samples per reason (listing_insns.reasons) */
    /* From the text (listing_decode()) and the disassembly's labels: */
    char opcode[LISTING_OPCODE_LEN]; /* "FFMA", "ISETP.NE.AND", ""           */
    int guarded;                   /* @P / @!P                                 */
    int has_target;                /* a branch whose target is known           */
    uint32_t target;
    enum listing_kind kind;        /* listing_classify()                       */
};

/* The instructions of one function, in pc order, and what they were
 * collected with. Owned by the caller: listing_insns_cleanup(). */
struct listing_insns {
    char function[LISTING_FUNCTION_LEN];
    size_t n, cap;
    struct listing_insn *v;
    unsigned nreasons;             /* 0: no PC sampling                       */
    char reasons[LISTING_MAX_REASONS][LISTING_REASON_LEN];
    int sampled;                   /* PC sampling ran (its samples may be 0)  */
    uint32_t record_crc;           /* the low 32 bits of the cubin CRC its    */
    int have_record_crc;           /* SASS records named, when they named one */
};

void listing_insns_init(struct listing_insns *f);
void listing_insns_cleanup(struct listing_insns *f);

/* The instruction at `pc`, added (zeroed, pc set) when there is none, the
 * array kept in pc order. NULL when out of memory. */
struct listing_insn *listing_insns_at(struct listing_insns *f, uint32_t pc);

/* The instruction at `pc`, or NULL. */
const struct listing_insn *listing_insns_find(const struct listing_insns *f, uint32_t pc);

/* Index of stall reason `name` in f->reasons, added when new; -1 when the
 * table is full. Names are kept as CUPTI gives them. */
int listing_insns_reason(struct listing_insns *f, const char *name);

/* Sets i->opcode and i->guarded from i->sass ("@!P0 BRA `(.L_x_3)" gives
 * "BRA", guarded). An empty text leaves both empty. */
void listing_decode(struct listing_insn *i);

/* The whole grid's counts from launches on the parts that stand for it:
 * out = sum over parts k of weight[k] x parts[k] (warp, thread, pred_on and
 * divergent per pc; stall samples and the text, line and target of the
 * first part that has the instruction). `out` is initialised here. Returns
 * 0, or -1 with `err` (no parts, a weight of 0, out of memory). */
int listing_combine(const struct listing_insns *parts, const unsigned long long *weight, unsigned nparts,
                    struct listing_insns *out, char *err);

/* The source lines of a kernel's paths: an instruction is on path A when
 * its file ends with `file` and its line is one of a[], on path B when one
 * of b[], and of region other_kind[k] when it is other_line[k] (the paths
 * of a kernel with more than two, a loop's body, a tail). */
#define LISTING_MAX_OTHER_LINES 64
struct listing_paths {
    char file[LISTING_FILE_LEN];
    unsigned a[LISTING_MAX_PATH_LINES], na;
    unsigned b[LISTING_MAX_PATH_LINES], nb;
    unsigned other_line[LISTING_MAX_OTHER_LINES], nother;
    unsigned char other_kind[LISTING_MAX_OTHER_LINES];
};

/* Adds line `line` of region `kind` to `p`; -1 when the table for it is
 * full or `kind` is not a region a line can name (before, reconverge,
 * after). */
int listing_paths_add(struct listing_paths *p, unsigned line, enum listing_kind kind);

/* 1 when `file` (as the line table names it, maybe absolute) is `suffix`
 * or ends with "/" + `suffix`. */
int listing_file_is(const char *file, const char *suffix);

/* Decodes every instruction (listing_decode()) and sets each one's kind by
 * the rules of the header. Returns 1 when control flow decided the sides
 * (rule 2), 0 when the lines did. */
int listing_classify(struct listing_insns *f, const struct listing_paths *p);

/* One region of the document: the kind's instructions and their counts. */
struct listing_stall {
    char reason[LISTING_REASON_LEN]; /* CUPTI's name without its prefix: "wait" */
    double share;                    /* of the region's samples                 */
};
struct listing_region {
    enum listing_kind kind;
    unsigned instructions;
    unsigned long long warp, thread, pred_on;
    double lanes;                    /* thread / warp executions (a region    */
                                     /* built here ran; NaN only as read)     */
    int has_stalls;                  /* PC sampling ran                         */
    unsigned nstalls;
    struct listing_stall stalls[LISTING_TOP_STALLS];
};

/* Consecutive instructions with the same opcode, guard, region, line and
 * counts; the counts are per instruction. */
struct listing_run {
    uint32_t pc;
    unsigned count;
    char opcode[LISTING_OPCODE_LEN];   /* "" without a disassembly           */
    char sass[LISTING_SASS_LEN];       /* the first instruction's text, or "" */
    char last_sass[LISTING_SASS_LEN];  /* the last one's                      */
    char file[LISTING_FILE_LEN];       /* "" when not mapped                  */
    unsigned line;
    enum listing_kind region;
    int guarded;
    unsigned long long warp, thread, pred_on, divergent;
    double lanes;                      /* thread / warp, NaN when never run   */
    int has_target;                    /* a branch whose target is known      */
    uint32_t target;                   /* its pc                              */
};

/* The profile of one row, as the document writes it. */
struct listing {
    char source[LISTING_SOURCE_LEN];   /* "cupti-sass" or "ncu"               */
    char kernel[LISTING_FUNCTION_LEN]; /* the SASS function name              */
    uint64_t cubin_crc, mask_hash;
    unsigned grid_blocks, block_x, block_y; /* the grid it was collected on   */
    double scale;                      /* row's blocks / grid_blocks           */
    int cached;                        /* served from the cache               */
    char collected_utc[32];
    double collect_ms;                 /* host time of the collection: the    */
                                       /* process's, shared by its rows       */
    unsigned process_rows;             /* rows profiled in that process (the  */
                                       /* worker's record; not in documents)  */
    char disassembler[LISTING_TOOL_LEN];       /* "" when none                */
    char disassembly_reason[ERR_LEN];          /* "" when there is SASS text  */
    double mapped;                     /* instructions with a source line     */
    unsigned nregions;
    struct listing_region regions[LISTING_KINDS];
    unsigned nruns, runs_cap;
    struct listing_run *runs;          /* owned                                */
};

/* An empty listing on the heap, NULL when out of memory; listing_free(NULL) ok. */
struct listing *listing_create(void);
void listing_free(struct listing *l);

/* A deep copy, NULL when out of memory. */
struct listing *listing_copy(const struct listing *l);

/* Appends a run (the array grows); -1 when out of memory. */
int listing_add_run(struct listing *l, const struct listing_run *run);

/* The regions, the runs and the mapped fraction of classified `f` into `l`
 * (its other fields are the caller's). Returns 0, or -1 with `err`. */
int listing_build(const struct listing_insns *f, struct listing *l, char *err);

/* Whether `l` has the shape listing_build() gives it, so that a profile
 * read from elsewhere (a child's answer, a file, a document) can be trusted
 * like one built here: at least one region and one run; each region kind
 * listed once, and every executed run's region listed (a run no warp
 * executed may name a kind that is no region); runs in pc order, each of at
 * least one instruction, no more than 32 thread executions per warp
 * execution, no more predicated-on executions than thread executions; each
 * region's instructions and executions the sums of its runs'; lanes within
 * 0 to 32 (or NaN), stall shares within 0 to 1, mapped within 0 to 1, the
 * scale above 0 and collect_ms not negative (or NaN). Returns 0, or -1 with
 * the field at fault in `field` (`fsize` bytes: the document's name below
 * the profile, "regions[1].warp_executions") and why in `why` (ERR_LEN). */
int listing_check(const struct listing *l, char *field, size_t fsize, char *why);

/* Sums over the runs of region `kind` whose opcode is `opcode` (all runs
 * when NULL): thread and predicated-on thread executions, each run's
 * per-instruction counts times its length, and the instructions counted. */
void listing_sum(const struct listing *l, enum listing_kind kind, const char *opcode, unsigned long long *thread,
                 unsigned long long *pred_on, unsigned long long *instructions);

/* The cells two collections disagree on: per pc present in either, the four
 * counts (warp, thread, pred_on, divergent); an instruction only one side
 * has counts as four cells equal when its counts are all zero (padding one
 * tool lists and the other does not), else as mismatches. The first
 * mismatch is described in `first`. */
struct listing_diff {
    unsigned long long cells, mismatches;
    unsigned instructions;
    char first[256];
};
void listing_compare(const struct listing_insns *a, const struct listing_insns *b, struct listing_diff *d);

/* FNV-1a over `nbits` bits of `mask` (one byte of eight bits at a time,
 * the last byte's spare bits cleared), so two masks of the same bits hash
 * alike whatever lies past them. */
uint64_t listing_mask_hash(const uint32_t *mask, unsigned long long nbits);

/* What a profile depends on, and so what the cache keys it by: the cubin
 * (its CRC), the driver, the device, the function and its mode argument
 * (which case of the predicate's switch runs), the path mask of the blocks
 * collected and the geometry (grid, block, iterations). */
struct listing_key {
    uint64_t cubin_crc;
    int driver_version;
    char nvidia_driver[32];
    char device[160];           /* name and PCI bus id */
    char kernel[LISTING_FUNCTION_LEN];
    int mode;
    uint64_t mask_hash;
    unsigned blocks, block_x, block_y, iterations;
};

/* The key as one line, every field in a fixed order; -1 when `len` is too
 * short. */
int listing_key_format(const struct listing_key *k, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* DV_LISTING_H */

#!/usr/bin/env python3
"""counters_compare.py -- two builds' counter passes on the same requests.

A benchmark, not a test: it runs `divergence-gpu measure ... --json` of two
builds (--before, say the service as it was; --after, as it is) on the same
cases, each in a process of its own, and sets the hardware counters of every
row side by side: the raw counts must be identical and the derived figures
(lanes per instruction, uniform branch share, warp efficiency, divergent
branches per block, warp instructions per FMA, instructions against the
baseline, `predicated`, the verdict) equal to the last digit the service
prints (lanes per instruction to two decimals, where the transcript and the
widget print one; the largest relative difference of each figure is printed
beside the table). The
cases are the built-ins (Part 1 and Part 2), the scenario suite and custom
predicates on 2D blocks, partial warps and blockIdx.x-dependent ones.

It prints one markdown table (a row per table row), the count of rows and
figures compared, and each build's counter-pass and witness host time per
case; exit status 0 when every row is the same, 1 when one differs or a
build gave no counters, 2 when a build could not be run.

Usage:
  counters_compare.py --before OLD/divergence-gpu --after NEW/divergence-gpu
                      [--env-after K=V ...] [--out compare.md]
"""
import argparse
import json
import os
import subprocess
import sys

# Small budgets: the counts do not depend on the timed samples.
COMMON = ["--budget-ms", "30", "--min-samples", "3", "--max-samples", "10", "--max-noise", "0.5", "--json"]

CASES = [
    ("built-ins, Part 1 and Part 2",
     ["--part", "all", "--predicates", "lane-parity,lane-half,warp-parity,block-parity,first-16"]),
    ("scenario suite", ["--scenario", "all"]),
    ("custom 32x8", ["--part", "1", "--blocks", "1000", "--threads-per-block", "32x8", "--baseline", "threadIdx.y & 1",
                     "--predicates", "threadIdx.y & 1,threadIdx.x < 16,(threadIdx.x + threadIdx.y) & 1,lane < 1,"
                     "blockIdx.x & 2,(blockIdx.x * 7 + warp) % 3 == 0"]),
    ("custom 48x1", ["--part", "1", "--blocks", "1000", "--threads-per-block", "48", "--baseline", "threadIdx.x < 40",
                     "--predicates", "threadIdx.x < 40,warp == 1,lane < 16,threadIdx.x < blockIdx.x % 64"]),
    ("custom 24x3", ["--part", "1", "--blocks", "1000", "--threads-per-block", "24x3", "--baseline", "threadIdx.y == 2",
                     "--predicates", "threadIdx.y == 2,threadIdx.x & 1,blockIdx.x % 5 == 0 && lane < 7,"
                     "blockIdx.x == 999"]),
]

COUNTS = [("divergent branch targets", "smsp__sass_branch_targets_threads_divergent.sum"),
          ("branch targets", "smsp__sass_branch_targets.sum"),
          ("warp instructions", "smsp__inst_executed.sum"),
          ("FFMA threads", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")]
FIGURES = [("uniform %", "smsp__sass_average_branch_targets_threads_uniform.pct", "%.6g"),
           ("lanes/instr", "smsp__thread_inst_executed_per_inst_executed.ratio", "%.2f"),
           ("warp efficiency", "warp_execution_efficiency", "%.4f"),
           ("divergent/block", "divergent_branches_per_block", "%.2f"),
           ("model split", "model_split_warps_per_block", "%.4g"),
           ("instr/FMA", "warp_instructions_per_fma", "%.3f"),
           ("vs baseline", "instructions_vs_baseline", "%.3f")]


def measure(binary, args, env):
    e = dict(os.environ, **env)
    p = subprocess.run([binary, "measure"] + args + COMMON, capture_output=True, text=True, env=e, timeout=600)
    if p.returncode not in (0, 1):
        raise SystemExit(f"{binary} measure {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[-600:]}")
    try:
        return json.loads(p.stdout)
    except ValueError:
        raise SystemExit(f"{binary}: no JSON document: {p.stderr.strip()[-600:]}")


def text(fmt, v):
    return "null" if v is None else fmt % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--env-before", action="append", default=[], metavar="K=V")
    ap.add_argument("--env-after", action="append", default=[], metavar="K=V")
    ap.add_argument("--out")
    a = ap.parse_args()
    envs = [dict(kv.split("=", 1) for kv in a.env_before), dict(kv.split("=", 1) for kv in a.env_after)]
    lines = ["| case | table | row | divergent branch targets before / after | warp instructions before / after | "
             "FFMA threads before / after | lanes/instr | instr/FMA | vs baseline | same? |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    times = ["| case | counter pass host ms before | after | witness host ms before | after |", "|---|---|---|---|---|"]
    rows = counts = figures = differ = 0
    missing = []
    worst = {}  # figure: (largest relative difference, where)
    for name, args in CASES:
        before, after = (measure(b, args, e) for b, e in zip((a.before, a.after), envs))
        for label, d in (("before", before), ("after", after)):
            c = (d.get("testimony") or {}).get("counters") or {}
            if not c.get("taken"):
                missing.append(f"{name} {label}: {c.get('reason')}")
        tb, ta = before.get("testimony") or {}, after.get("testimony") or {}
        times.append(f"| {name} | {(tb.get('counters') or {}).get('host_ms', 0):.1f} | "
                     f"{(ta.get('counters') or {}).get('host_ms', 0):.1f} | "
                     f"{(tb.get('witness') or {}).get('host_ms', 0):.1f} | {(ta.get('witness') or {}).get('host_ms', 0):.1f} |")
        for t_b, t_a in zip(before["tables"], after["tables"]):
            for r_b, r_a in zip(t_b["rows"], t_a["rows"]):
                cb, ca = r_b.get("counters"), r_a.get("counters")
                same = cb is not None and ca is not None
                if same:
                    for _, key in COUNTS:
                        counts += 1
                        same &= cb.get(key) == ca.get(key)
                    for label, key, fmt in FIGURES:
                        figures += 1
                        same &= text(fmt, cb.get(key)) == text(fmt, ca.get(key))
                        vb, va = cb.get(key), ca.get(key)
                        if isinstance(vb, (int, float)) and isinstance(va, (int, float)) and vb:
                            rel = abs(va / vb - 1)
                            if rel > worst.get(label, (0, ""))[0]:
                                worst[label] = (rel, f"{name} {t_a['id']}/{r_a['name']}: {vb!r} / {va!r}")
                    figures += 2
                    same &= cb.get("predicated") == ca.get("predicated") and cb.get("verdict") == ca.get("verdict")
                rows += 1
                differ += not same
                g = lambda c, k, f="%.0f": text(f, (c or {}).get(k))
                lines.append(
                    f"| {name} | {t_a['id']} | {r_a['name']} | "
                    f"{g(cb, COUNTS[0][1])} / {g(ca, COUNTS[0][1])} | {g(cb, COUNTS[2][1])} / {g(ca, COUNTS[2][1])} | "
                    f"{g(cb, COUNTS[3][1])} / {g(ca, COUNTS[3][1])} | {g(cb, FIGURES[1][1], '%.2f')} / "
                    f"{g(ca, FIGURES[1][1], '%.2f')} | {g(cb, FIGURES[5][1], '%.3f')} / {g(ca, FIGURES[5][1], '%.3f')} | "
                    f"{g(cb, FIGURES[6][1], '%.3f')} / {g(ca, FIGURES[6][1], '%.3f')} | "
                    f"{'identical' if same else 'DIFFERENT'} |")
                if not same and cb and ca:
                    for label, key in COUNTS:
                        if cb.get(key) != ca.get(key):
                            lines.append(f"|  |  |  | {label}: {cb.get(key)!r} / {ca.get(key)!r} |  |  |  |  |  |  |")
                    for label, key, fmt in FIGURES:
                        if text(fmt, cb.get(key)) != text(fmt, ca.get(key)):
                            lines.append(f"|  |  |  | {label}: {cb.get(key)!r} / {ca.get(key)!r} |  |  |  |  |  |  |")
    out = "\n".join(lines) + "\n\n" + (
        f"{rows} rows: {counts} counts and {figures} derived figures and verdicts compared; {differ} rows differ\n"
        + "".join(f"largest relative difference of {label}: {100 * r:.4f}% ({where})\n"
                  for label, (r, where) in sorted(worst.items()))
        + "\n" + "\n".join(times) + "\n")
    if missing:
        out += "\nno counters: " + "; ".join(missing) + "\n"
    print(out)
    if a.out:
        with open(a.out, "w") as f:
            f.write(out)
    sys.exit(0 if differ == 0 and not missing and rows > 0 else 1)


if __name__ == "__main__":
    main()

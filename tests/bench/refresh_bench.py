#!/usr/bin/env python3
"""refresh_bench.py -- the nightly refresh with the GPU's testimony against
the same refresh without it, side by side in one run.

A benchmark, not a test. It starts two servers on the same GPU, each with
its own worker and evidence folder: one whose worker takes the testimony
(the default: witness, counters, instruction profiles) and one whose worker
runs with --testimony off. Each server's worker is warmed with one Part 1
job first, as a long-running server's is. Then, night after night, it runs
`divergence refresh` against one server and then the other (the order
swapped every night, so a drift of the GPU's clock or the host's load
falls on both), and times each refresh from the client's start to its
summary, as the nightly timer sees it. Only one refresh runs at a time: the
idle server's worker holds its CUDA context and nothing else.

Per night and server it prints the refresh's wall time, the timed GPU work
its suites' documents report (gpu_time_ms, of each suite's newest record of
the night, failed or good; the scenario suite samples until its intervals
are narrow enough, so this varies from night to night) and the wall time
less that work, then each night's ratio, testimony on over off, and which
suite failed its gates where one did.
Night 1 of a server is its build's first: the worker collects the lesson
rows' instruction profiles (cached for every later night of the build), so
the summary is over nights 2..N: the medians of each column and the median
of the nights' ratios. --history K (default 7) files K earlier good nights
for each server after its first night (copies of that night's records under
the K dates before it), so the later nights are compared with a week of
history as a production night is; 0 files none.

Usage:
  refresh_bench.py --binary build/divergence [--worker build/divergence-gpu]
                   [--nights 5] [--history 7] [--port 18800] [--json out.json]
                   [--keep DIR]
  --worker-on CMD / --worker-off CMD replace the two workers' commands (the
  defaults: "WORKER worker" and "WORKER worker --testimony off").
  --keep DIR keeps each server's log and evidence folder there.

Needs python3 and a GPU for the real worker. Exit status 0 when every
refresh of every night ended with every suite good, 1 otherwise.
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from service_bench import request  # noqa: E402  (the same HTTP helper as the service's benchmark)


class Server:
    def __init__(self, name, args, port, worker_cmd, root):
        self.name, self.args, self.port, self.worker_cmd = name, args, port, worker_cmd
        self.dir = os.path.join(root, name)
        self.evidence = os.path.join(self.dir, "evidence")
        os.makedirs(self.evidence)
        self.base = f"http://127.0.0.1:{port}"
        self.log_path = os.path.join(self.dir, "serve.log")
        cmd = [args.binary, "serve", "--port", str(port), "--rate-limit", "0", "--analyze-rate-limit", "0",
               "--evidence-dir", self.evidence, "--queue", "64", "--worker-cmd", worker_cmd]
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def ready(self):
        for _ in range(1200):
            try:
                if request("GET", self.base + "/readyz", timeout=2)[0] == 200:
                    return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name}: server exited with {self.proc.returncode}; see {self.log_path}")
            time.sleep(0.05)
        raise SystemExit(f"{self.name}: server not ready after 60 s (no GPU?)")

    def warm(self):
        """One Part 1 job, as a long-running server's worker has run."""
        code, j = request("POST", self.base + "/measure", {"part": 1, "budget_ms": 1234})
        if code not in (200, 202):
            raise SystemExit(f"{self.name}: POST /measure answered {code}")
        while j.get("state") not in ("done", "failed"):
            _, j = request("GET", f"{self.base}/jobs/{j['id']}?wait=30", timeout=40)
        if j.get("state") != "done":
            raise SystemExit(f"{self.name}: the warm-up job failed: {j.get('error')}")

    def refresh(self):
        """One `divergence refresh`, timed; the night's documents read back."""
        t0 = time.monotonic()
        p = subprocess.run([self.args.binary, "refresh", "--server", self.base, "--interval", "0.05",
                            "--timeout", "600"], capture_output=True, text=True)
        wall = time.monotonic() - t0
        docs = self.documents()
        gpu = sum(d.get("gpu_time_ms") or 0 for d in docs.values()) / 1e3
        failed = sorted(k for k, d in docs.items() if d.get("_status") != "ok")
        return {"rc": p.returncode, "wall_s": wall, "gpu_s": gpu, "wall_less_gpu_s": wall - gpu, "failed": failed,
                "suites": {k: suite_figures(d) for k, d in docs.items()},
                "output": p.stdout[-2000:] + p.stderr[-2000:]}

    def night_dirs(self):
        return sorted(glob.glob(os.path.join(self.evidence, "*", "????-??-??")))

    def documents(self):
        """The last night's documents, by suite: each suite's newest record
        of the night, good (<suite>.json) or failed (<suite>.failed.json,
        filed beside a good record of the same date), so a night whose
        suite failed its gates counts the GPU work it did."""
        dirs = self.night_dirs()
        out = {}
        if not dirs:
            return out
        newest = {}
        for path in glob.glob(os.path.join(dirs[-1], "*.json")):
            name = os.path.basename(path)
            suite = name[:-len(".failed.json")] if name.endswith(".failed.json") else name[:-5]
            t = os.stat(path).st_mtime_ns
            if suite not in newest or t > newest[suite][0]:
                newest[suite] = (t, path)
        for suite, (_, path) in sorted(newest.items()):
            try:
                with open(path) as f:
                    rec = json.load(f)
            except (OSError, ValueError):
                continue
            out[suite] = dict(rec.get("document") or {}, _status=rec.get("status"))
        return out

    def file_history(self, k):
        """K earlier good nights: today's records copied under the K dates
        before it (what older nights a production night is compared with)."""
        dirs = self.night_dirs()
        if not dirs or k <= 0:
            return 0
        today = dirs[-1]
        day = datetime.date.fromisoformat(os.path.basename(today))
        made = 0
        for i in range(1, k + 1):
            d = os.path.join(os.path.dirname(today), (day - datetime.timedelta(days=i)).isoformat())
            if os.path.exists(d):
                continue
            os.makedirs(d)
            for f in glob.glob(os.path.join(today, "*.json")) + glob.glob(os.path.join(today, "*.txt")):
                if not f.endswith(".failed.json"):
                    shutil.copy2(f, d)
            made += 1
        return made

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def suite_figures(doc):
    """What one suite's document says its night cost: wall, timed GPU work,
    and the testimony's host time, whole and per table."""
    tm = doc.get("testimony") or {}
    w, c, ins = tm.get("witness") or {}, tm.get("counters") or {}, tm.get("instructions") or {}
    tables = []
    for t in doc.get("tables") or []:
        cost = t.get("testimony_cost") or {}
        tables.append({"id": t.get("id"), "gpu_ms": t.get("gpu_time_ms"),
                       "witness_ms": cost.get("witness_host_ms"), "counters_ms": cost.get("counters_host_ms"),
                       "counters_launches": cost.get("counters_launches"),
                       "counters_blocks": cost.get("counters_blocks")})
    return {"wall_ms": doc.get("wall_time_ms"), "gpu_ms": doc.get("gpu_time_ms"),
            "witness_ms": w.get("host_ms"), "counters_ms": c.get("host_ms"), "counters_setup_ms": c.get("setup_ms"),
            "instructions_ms": ins.get("host_ms"), "tables": tables}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True, help="the divergence binary")
    ap.add_argument("--worker", help="the divergence-gpu binary (default: beside --binary)")
    ap.add_argument("--worker-on", help="the testimony-on worker's command")
    ap.add_argument("--worker-off", help="the testimony-off worker's command")
    ap.add_argument("--nights", type=int, default=5)
    ap.add_argument("--history", type=int, default=7)
    ap.add_argument("--port", type=int, default=18800)
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--keep", help="keep the servers' logs and evidence in this folder")
    args = ap.parse_args()
    if args.nights < 2:
        ap.error("--nights must be at least 2 (night 1 is the build's first)")
    worker = args.worker or os.path.join(os.path.dirname(os.path.abspath(args.binary)), "divergence-gpu")
    on_cmd = args.worker_on or f"{worker} worker"
    off_cmd = args.worker_off or f"{worker} worker --testimony off"
    root = args.keep or tempfile.mkdtemp(prefix="refresh_bench.")
    os.makedirs(root, exist_ok=True)
    servers = {"on": Server("on", args, args.port, on_cmd, root),
               "off": Server("off", args, args.port + 1, off_cmd, root)}
    nights, ok = [], True
    try:
        for s in servers.values():
            s.ready()
        for s in servers.values():
            s.warm()
        for n in range(1, args.nights + 1):
            order = ("on", "off") if n % 2 else ("off", "on")
            night = {"night": n, "order": list(order)}
            for name in order:
                r = servers[name].refresh()
                night[name] = r
                if r["rc"] != 0:
                    ok = False
                    print(f"night {n} {name}: refresh exited {r['rc']}:\n{r['output']}", file=sys.stderr)
            if n == 1:
                for s in servers.values():
                    night.setdefault("history_filed", {})[s.name] = s.file_history(args.history)
            nights.append(night)
            on, off = night["on"], night["off"]
            gates = "; ".join(f"{k} failed {', '.join(night[k]['failed'])}" for k in ("on", "off") if night[k]["failed"])
            print(f"night {n} ({order[0]} first): on {on['wall_s']:.2f} s (GPU {on['gpu_s']:.2f}, "
                  f"less GPU {on['wall_less_gpu_s']:.2f}), off {off['wall_s']:.2f} s (GPU {off['gpu_s']:.2f}, "
                  f"less GPU {off['wall_less_gpu_s']:.2f}): on/off {on['wall_s'] / off['wall_s']:.2f}x"
                  + (f" ({gates})" if gates else ""), flush=True)
    finally:
        for s in servers.values():
            s.stop()
    later = nights[1:]
    summary = {
        "nights": len(nights), "history": args.history,
        "first_night": {"on_s": nights[0]["on"]["wall_s"], "off_s": nights[0]["off"]["wall_s"]},
        "on_s": med(x["on"]["wall_s"] for x in later), "off_s": med(x["off"]["wall_s"] for x in later),
        "on_less_gpu_s": med(x["on"]["wall_less_gpu_s"] for x in later),
        "off_less_gpu_s": med(x["off"]["wall_less_gpu_s"] for x in later),
        "ratio_median_of_nights": med(x["on"]["wall_s"] / x["off"]["wall_s"] for x in later),
        "ratios": [x["on"]["wall_s"] / x["off"]["wall_s"] for x in later],
    }
    summary["ratio_of_medians"] = summary["on_s"] / summary["off_s"]
    good = [x for x in later if not x["on"]["failed"] and not x["off"]["failed"]]
    summary["nights_all_good"] = len(good)
    summary["ratio_median_of_good_nights"] = med(x["on"]["wall_s"] / x["off"]["wall_s"] for x in good)
    print()
    print(f"nights 2-{len(nights)}, medians    testimony on    off      on/off")
    print(f"  refresh wall             {summary['on_s']:8.2f} s  {summary['off_s']:6.2f} s  "
          f"{summary['ratio_of_medians']:.2f}x (median of the nights' ratios {summary['ratio_median_of_nights']:.2f}x)")
    print(f"  wall less timed GPU work {summary['on_less_gpu_s']:8.2f} s  {summary['off_less_gpu_s']:6.2f} s")
    print(f"  each night's on/off      " + ", ".join(f"{r:.2f}x" for r in summary["ratios"]))
    if summary["nights_all_good"] < len(later):
        print(f"  nights with every suite good on both servers: {summary['nights_all_good']} of {len(later)}, "
              f"median of their ratios {summary['ratio_median_of_good_nights']:.2f}x (a suite that fails its "
              "gates has sampled to its cap: more GPU work)")
    print(f"  night 1 (the build's first): on {summary['first_night']['on_s']:.2f} s, "
          f"off {summary['first_night']['off_s']:.2f} s")
    last = later[-1]["on"]["suites"]
    print("testimony host time on the last night, per suite (witness / counters / instructions, ms):")
    for k, v in sorted(last.items()):
        print(f"  {k:16s} {v['witness_ms'] or 0:8.2f} {v['counters_ms'] or 0:8.2f} {v['instructions_ms'] or 0:8.2f}")
        for t in v["tables"]:
            if t["counters_ms"] is not None:
                print(f"    {t['id']:28s} witness {t['witness_ms'] or 0:7.2f}  counters {t['counters_ms']:7.2f} ms, "
                      f"{t['counters_launches']} launches of {t['counters_blocks']} blocks")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "nights": nights}, f, indent=1)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

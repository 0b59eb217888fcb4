#!/usr/bin/env python3
"""service_bench.py -- the service's speed, as ratios measured side by side.

A benchmark, not a test: it starts `divergence serve` (or uses --server),
then measures, in one run:

  job      one Part 1 job at the lesson's defaults: the timed GPU work the
           document reports (gpu_time_ms), the worker's wall time for the
           measurement (wall_time_ms) and the time from POST /measure to the
           job being done (through GET /jobs/{id}?wait= when the server holds
           the request, else by polling every 5 ms), each against the GPU time;
  burst    N distinct Part 1 jobs posted at once: jobs per second and the
           share of the drain time the GPU spent in timed work;
  front    wrk loads on GET /healthz (the reference: the cheapest route),
           GET /predicates, GET /evidence/latest/day22-part1 at 64 and 512
           connections, and POST /analyze with a predicate that does not read
           blockIdx.x: requests per second and p99 latency, each against
           /healthz in the same run.

Distinct jobs differ only in budget_ms (the cap on GPU time per table, far
above what a table needs), so no job is answered from the result cache or
joined to another, and every job measures the same thing.

Usage:
  service_bench.py --binary build/divergence [--port 18090] [--jobs 14]
                   [--wrk wrk] [--duration 10] [--threads 8] [--json out.json]
  service_bench.py --server http://127.0.0.1:8080 ...

Needs python3 and, for the front loads, wrk. Prints one table; --json writes
every figure.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request


def request(method, url, body=None, timeout=60):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, {"raw": raw.decode(errors="replace")}


def wait_job(base, job_id, use_wait):
    """Waits until the job is done or failed; returns its document."""
    while True:
        if use_wait:
            _, j = request("GET", f"{base}/jobs/{job_id}?wait=30", timeout=40)
        else:
            _, j = request("GET", f"{base}/jobs/{job_id}")
        if j.get("state") in ("done", "failed"):
            return j
        if not use_wait:
            time.sleep(0.005)


EXTRA = {}  # request fields every job carries (--testimony off: no witness, no counters)


def post_job(base, budget_ms):
    code, j = request("POST", f"{base}/measure", dict({"part": 1, "budget_ms": budget_ms}, **EXTRA))
    if code not in (200, 202):
        raise SystemExit(f"POST /measure answered {code}: {j}")
    return j


def server_holds_wait(base, job_id):
    """True when GET /jobs/{id}?wait= holds the request until the job ends."""
    t0 = time.monotonic()
    _, j = request("GET", f"{base}/jobs/{job_id}?wait=30", timeout=40)
    return j.get("state") in ("done", "failed") and time.monotonic() - t0 > 0.001


def one_job(base, use_wait, budget_ms):
    t0 = time.monotonic()
    j = post_job(base, budget_ms)
    if j.get("state") not in ("done", "failed"):
        j = wait_job(base, j["id"], use_wait)
    t1 = time.monotonic()
    if j.get("state") != "done":
        raise SystemExit(f"job failed: {j.get('error')}")
    doc = j.get("document") or {}
    return {"post_to_done_ms": (t1 - t0) * 1e3, "gpu_time_ms": doc.get("gpu_time_ms"),
            "wall_time_ms": doc.get("wall_time_ms"), "job": {k: v for k, v in j.items() if k != "document"},
            "ratios": [r.get("ratio") for t in doc.get("tables", []) for r in t.get("rows", [])]}


def burst(base, n, use_wait, first_budget):
    t0 = time.monotonic()
    ids = [post_job(base, first_budget + i)["id"] for i in range(n)]
    docs = [wait_job(base, i, use_wait) for i in ids]
    t1 = time.monotonic()
    failed = [d for d in docs if d.get("state") != "done"]
    gpu = sum((d.get("document") or {}).get("gpu_time_ms") or 0 for d in docs)
    drain = t1 - t0
    return {"jobs": n, "failed": len(failed), "drain_s": drain, "jobs_per_s": n / drain,
            "gpu_busy_fraction": gpu / 1e3 / drain}


WRK_LAT = re.compile(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", re.M)
WRK_RPS = re.compile(r"^Requests/sec:\s+([\d.]+)", re.M)
WRK_NON2XX = re.compile(r"Non-2xx or 3xx responses:\s+(\d+)")


def run_wrk(wrk, url, conns, threads, duration, script=None):
    cmd = [wrk, f"-t{min(threads, conns)}", f"-c{conns}", f"-d{duration}s", "--latency", url]
    if script:
        cmd[1:1] = ["-s", script]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rps = float(WRK_RPS.search(out).group(1))
    m = WRK_LAT.search(out)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
    bad = WRK_NON2XX.search(out)
    return {"url": url, "connections": conns, "rps": rps, "p99_ms": float(m.group(1)) * scale,
            "non_2xx": int(bad.group(1)) if bad else 0}


def start_server(args, evidence_dir):
    cmd = [args.binary, "serve", "--port", str(args.port), "--threads", str(args.threads),
           "--rate-limit", "0", "--analyze-rate-limit", "0", "--evidence-dir", evidence_dir, "--queue", "64"]
    if args.worker_cmd:
        cmd += ["--worker-cmd", args.worker_cmd]
    log = open(os.path.join(evidence_dir, "..", "serve.log"), "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{args.port}"
    for _ in range(600):
        try:
            code, _ = request("GET", f"{base}/readyz", timeout=2)
            if code == 200:
                return p, base
        except (urllib.error.URLError, ConnectionError):
            pass
        if p.poll() is not None:
            raise SystemExit(f"server exited with {p.returncode}; see serve.log")
        time.sleep(0.1)
    raise SystemExit("server not ready after 60 s (no GPU?)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary")
    ap.add_argument("--server")
    ap.add_argument("--port", type=int, default=18090)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=14)
    ap.add_argument("--wrk", default=shutil.which("wrk") or "wrk")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--worker-cmd", help="the server's GPU worker command (a stand-in, to try the script)")
    ap.add_argument("--evidence", help="evidence directory to serve (copied); default: the committed capture")
    ap.add_argument("--testimony", choices=("on", "off"), default="on",
                    help="off: jobs ask for no witness and no counter pass (timed work only)")
    ap.add_argument("--no-front", action="store_true", help="skip the wrk loads")
    ap.add_argument("--no-jobs", action="store_true", help="only the wrk loads")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.testimony == "off":
        EXTRA.update({"witness": False, "counters": False})
    if not args.binary and not args.server:
        ap.error("--binary or --server")

    tmp = tempfile.mkdtemp(prefix="dvbench.")
    proc = None
    try:
        if args.server:
            base = args.server.rstrip("/")
        else:
            src = args.evidence or os.path.join(os.path.dirname(__file__), "..", "fixtures", "evidence")
            ev = os.path.join(tmp, "evidence")
            shutil.copytree(src, ev)
            proc, base = start_server(args, ev)

        job, b, use_wait = None, None, False
        if not args.no_jobs:
            first = post_job(base, 2000)  # warms the worker (context, module load)
            use_wait = server_holds_wait(base, first["id"]) if first.get("state") not in ("done", "failed") else False
            job = one_job(base, use_wait, 2001)
            b = burst(base, args.jobs, use_wait, 3000)

        front = {}
        if not args.no_front and (shutil.which(args.wrk) or os.path.exists(args.wrk)):
            lua = os.path.join(tmp, "analyze.lua")
            with open(lua, "w") as f:
                f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                        'wrk.body = \'{"part":1,"predicates":["threadIdx.x % 48 < 24","lane-parity"]}\'\n')
            d = args.duration
            front["healthz"] = run_wrk(args.wrk, f"{base}/healthz", 64, args.threads, d)
            front["predicates"] = run_wrk(args.wrk, f"{base}/predicates", 64, args.threads, d)
            front["evidence_64"] = run_wrk(args.wrk, f"{base}/evidence/latest/day22-part1", 64, args.threads, d)
            front["evidence_512"] = run_wrk(args.wrk, f"{base}/evidence/latest/day22-part1", 512, args.threads, d)
            front["analyze"] = run_wrk(args.wrk, f"{base}/analyze", 64, args.threads, d, lua)

        res = {"long_poll": use_wait, "job": job, "burst": b, "front": front}
        print(f"{'figure':44} {'value':>12} {'ratio':>10}  against")
        if job:
            gpu = job["gpu_time_ms"] or float("nan")
            print(f"testimony {args.testimony}, long-poll {'yes' if use_wait else 'no'}")
            print(f"{'Part 1 job: timed GPU work (ms)':44} {gpu:12.2f} {1.0:10.2f}  GPU time")
            print(f"{'Part 1 job: worker wall time (ms)':44} {job['wall_time_ms']:12.2f} "
                  f"{job['wall_time_ms'] / gpu:10.2f}  GPU time")
            how = "?wait=" if use_wait else "polling 5 ms"
            print(f"{'Part 1 job: POST to done, ' + how + ' (ms)':44} {job['post_to_done_ms']:12.2f} "
                  f"{job['post_to_done_ms'] / gpu:10.2f}  GPU time")
            for k, v in sorted((job["job"].get("timing") or {}).items()):
                label = "Part 1 job: timing." + k
                print(f"{label:44} {v:12.2f} {v / gpu:10.2f}  GPU time")
            label = "burst of %d jobs: jobs/s" % b["jobs"]
            print(f"{label:44} {b['jobs_per_s']:12.2f} {'':>10}  ({b['failed']} failed)")
            print(f"{'burst: GPU busy with timed work':44} {b['gpu_busy_fraction'] * 100:11.1f}% {'':>10}")
        if front:
            h = front["healthz"]["rps"]
            for k, v in front.items():
                label = "%s %s c%d req/s" % ("POST" if k == "analyze" else "GET", k, v["connections"])
                print(f"{label:44} "
                      f"{v['rps']:12.0f} {v['rps'] / h:10.3f}  /healthz   p99 {v['p99_ms']:.2f} ms"
                      + (f"  non-2xx {v['non_2xx']}" if v["non_2xx"] else ""))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=2)
    finally:
        if proc:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

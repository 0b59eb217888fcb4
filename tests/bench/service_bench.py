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
  front    HTTP loads on GET /healthz (the reference: the cheapest route),
           GET /predicates, GET /evidence/latest/day22-part1 at 64 and 512
           connections, and POST /analyze with a predicate that does not read
           blockIdx.x: requests per second and p99 latency, each against
           /healthz in the same run.

The loads come from many client addresses, as a site's readers do: the
server limits open connections per address (--per-ip-limit, 32 by default)
and in total (--conn-limit, 256), so 512 connections from one address
measure the limiter (most of them are refused and reconnect), not the
server. The generator is bench_loadgen (tests/bench/loadgen.c, built beside
the tests), which binds each connection to one of --addresses loopback
addresses (127.0.100.1 on); the script starts the server with --conn-limit
above the widest load and --per-ip-limit at least what each address opens,
and prints both with the number of addresses. --wrk PATH uses wrk instead,
which has one source address: the script then raises --per-ip-limit to the
widest load, and says so.

Distinct jobs differ only in budget_ms (the cap on GPU time per table, far
above what a table needs), so no job is answered from the result cache or
joined to another, and every job measures the same thing.

--medians N first measures, on the fresh worker, N Part 1 jobs that take no
testimony (CUPTI not loaded), then one that takes it (the worker's profiler
is built and stays enabled), then N more without it, and prints each row's
timed median before and after with the spread of the N jobs: the timed
samples with the profiler enabled against those with no profiler at all.
After the jobs the script prints what /metrics says of the testimony (its
time per job, dv_testimony_seconds) and of the worker's resident memory;
--worker-memory FILE also writes where that memory is (the worker's
/proc/PID/smaps_rollup and its largest mappings). --serve-log FILE keeps
the server's log, where the worker writes per job where its wall time went
(plan, inputs, set-up, timed rounds, outputs, testimony, checks, verdicts,
the rest).

Usage:
  service_bench.py --binary build/divergence [--port 18090] [--jobs 14]
                   [--addresses 32] [--loadgen build/tests/bench_loadgen]
                   [--wrk wrk] [--duration 10] [--threads 8] [--json out.json]
                   [--serve-log serve.log]
  service_bench.py --server http://127.0.0.1:8080 ...

Needs python3 and, for the front loads, bench_loadgen (or wrk). Prints one
table; --json writes every figure. With --server the server's own limits
apply (the script cannot set them) and are not printed.
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


def post_job(base, budget_ms, extra=None):
    body = dict({"part": 1, "budget_ms": budget_ms}, **(EXTRA if extra is None else extra))
    code, j = request("POST", f"{base}/measure", body)
    if code not in (200, 202):
        raise SystemExit(f"POST /measure answered {code}: {j}")
    return j


def done_doc(base, budget_ms, extra, use_wait):
    j = post_job(base, budget_ms, extra)
    if j.get("state") not in ("done", "failed"):
        j = wait_job(base, j["id"], use_wait)
    if j.get("state") != "done":
        raise SystemExit(f"job failed: {j.get('error')}")
    return j.get("document") or {}


def medians(base, n, use_wait, first_budget):
    """Each Part 1 row's timed medians over n jobs with no profiler loaded,
    then (after one job that takes the testimony) over n with it enabled."""
    off = {"witness": False, "counters": False}
    sets = {"before": [], "after": []}
    budget = first_budget
    for phase in ("before", "after"):
        if phase == "after":
            doc = done_doc(base, budget, {}, use_wait)
            budget += 1
            taken = ((doc.get("testimony") or {}).get("counters") or {}).get("taken")
            if not taken:
                print("medians: the testimony job took no counters:",
                      ((doc.get("testimony") or {}).get("counters") or {}).get("reason"), file=sys.stderr)
        for _ in range(n):
            doc = done_doc(base, budget, off, use_wait)
            budget += 1
            sets[phase].append({r["name"]: r["time_ms"]["median"] for r in doc["tables"][0]["rows"]})
    rows = []
    for name in sets["before"][0]:
        b = [x[name] for x in sets["before"]]
        a = [x[name] for x in sets["after"]]
        mb, ma = sum(b) / len(b), sum(a) / len(a)
        spread = max((max(b) - min(b)) / mb, (max(a) - min(a)) / ma)
        rows.append({"row": name, "before_ms": mb, "after_ms": ma, "diff": ma / mb - 1, "spread": spread,
                     "within_noise": abs(ma / mb - 1) <= spread})
    return rows


def metrics_lines(base):
    """The /metrics samples of the testimony histogram and the worker's memory."""
    req = urllib.request.Request(f"{base}/metrics")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            text = r.read().decode()
    except (urllib.error.URLError, ConnectionError):
        return []
    keep = ("dv_testimony_seconds_sum", "dv_testimony_seconds_count", "dv_worker_resident_memory_bytes",
            "dv_testimony_seconds_bucket")
    return [ln for ln in text.splitlines() if ln.startswith(keep)]


def worker_memory(server_pid, path):
    """The server's GPU worker (its child): smaps_rollup and the 25 largest
    mappings by resident size, into `path`."""
    kids = []
    for tid in os.listdir(f"/proc/{server_pid}/task"):
        try:
            with open(f"/proc/{server_pid}/task/{tid}/children") as f:
                kids += f.read().split()
        except OSError:
            pass
    with open(path, "w") as out:
        for pid in kids:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
                with open(f"/proc/{pid}/smaps_rollup") as f:
                    rollup = f.read()
                maps, cur = [], None
                with open(f"/proc/{pid}/smaps") as f:
                    for ln in f:
                        parts = ln.split()
                        if parts and "-" in parts[0] and len(parts) >= 5 and not parts[0].endswith(":"):
                            cur = [0, " ".join(parts[5:]) or "[anonymous]", parts[0]]
                            maps.append(cur)
                        elif parts and parts[0] == "Rss:" and cur is not None:
                            cur[0] = int(parts[1])
            except OSError as e:
                out.write(f"pid {pid}: {e}\n")
                continue
            by_name = {}
            for kb, name, _ in maps:
                by_name[name] = by_name.get(name, 0) + kb
            out.write(f"pid {pid}: {cmd}\n{rollup}\nresident kB by mapping name:\n")
            for name, kb in sorted(by_name.items(), key=lambda x: -x[1])[:25]:
                out.write(f"{kb:10d}  {name}\n")
            out.write("\n")


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
            "testimony": doc.get("testimony"),
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
WRK_ERRORS = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")

WIDEST = 512  # connections of the widest load
FIRST_SOURCE = "127.0.100.1"


def run_wrk(wrk, url, conns, threads, duration, body=None):
    cmd = [wrk, f"-t{min(threads, conns)}", f"-c{conns}", f"-d{duration}s", "--latency", url]
    script = None
    if body is not None:
        fd, script = tempfile.mkstemp(suffix=".lua")
        with os.fdopen(fd, "w") as f:
            f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                    f"wrk.body = {json.dumps(body)}\n")
        cmd[1:1] = ["-s", script]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    finally:
        if script:
            os.unlink(script)
    rps = float(WRK_RPS.search(out).group(1))
    m = WRK_LAT.search(out)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
    bad = WRK_NON2XX.search(out)
    err = WRK_ERRORS.search(out)
    return {"url": url, "connections": conns, "addresses": 1, "rps": rps, "p99_ms": float(m.group(1)) * scale,
            "non_2xx": int(bad.group(1)) if bad else 0,
            "errors": sum(int(x) for x in err.groups()) if err else 0}


def run_loadgen(loadgen, url, conns, threads, duration, addresses, body=None):
    cmd = [loadgen, "-c", str(conns), "-t", str(min(threads, conns)), "-d", str(duration)]
    if addresses:
        cmd += ["-a", str(addresses), "-s", FIRST_SOURCE]
    if body is not None:
        cmd += ["-m", "POST", "-H", "Content-Type: application/json", "-b", body]
    out = json.loads(subprocess.run(cmd + [url], capture_output=True, text=True, check=True).stdout)
    return {"url": url, "connections": conns, "addresses": out["addresses"] or 1, "rps": out["rps"],
            "p99_ms": out["p99_ms"], "non_2xx": out["non_2xx"], "errors": sum(out["errors"].values()),
            "detail": out}


def load_plan(args, local):
    """The generator, its addresses, and the server limits the loads need."""
    if args.wrk:
        gen, addresses = "wrk", 1
    else:
        gen = args.loadgen or (os.path.join(os.path.dirname(os.path.abspath(args.binary)), "tests", "bench_loadgen")
                               if args.binary else shutil.which("bench_loadgen"))
        addresses = args.addresses if local else 0
    per_address = -(-WIDEST // max(addresses, 1))
    # Above the widest load, with room for the job polls and probes (127.0.0.1).
    limits = {"conn_limit": WIDEST + 64, "per_ip_limit": max(32, per_address)}
    return {"generator": gen, "addresses": max(addresses, 1), "per_address_at_widest": per_address,
            "limits": limits if args.binary and not args.server else None}


def describe_plan(plan):
    n = plan["addresses"]
    if n > 1:
        last = FIRST_SOURCE.rsplit(".", 1)[0] + "." + str(int(FIRST_SOURCE.rsplit(".", 1)[1]) + n - 1)
        src = f"{n} addresses ({FIRST_SOURCE}-{last}), {plan['per_address_at_widest']} connections each at c{WIDEST}"
    else:
        src = f"1 address, {WIDEST} connections from it at c{WIDEST}"
    lim = plan["limits"]
    server = (f"server --conn-limit {lim['conn_limit']} --per-ip-limit {lim['per_ip_limit']}" if lim
              else "the server's own limits (--server)")
    return f"load: {os.path.basename(plan['generator'])}, {src}; {server}"


def start_server(args, evidence_dir):
    lim = load_plan(args, True)["limits"]
    cmd = [args.binary, "serve", "--port", str(args.port), "--threads", str(args.threads),
           "--rate-limit", "0", "--analyze-rate-limit", "0", "--evidence-dir", evidence_dir, "--queue", "64",
           "--conn-limit", str(lim["conn_limit"]), "--per-ip-limit", str(lim["per_ip_limit"])]
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
    ap.add_argument("--wrk", help="use wrk (one source address) for the loads instead of bench_loadgen")
    ap.add_argument("--loadgen", help="bench_loadgen (default: tests/bench_loadgen beside --binary, else PATH)")
    ap.add_argument("--addresses", type=int, default=32,
                    help="loopback source addresses the loads come from (bench_loadgen; default 32)")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--worker-cmd", help="the server's GPU worker command (a stand-in, to try the script)")
    ap.add_argument("--evidence", help="evidence directory to serve (copied); default: the committed capture")
    ap.add_argument("--testimony", choices=("on", "off"), default="on",
                    help="off: jobs ask for no witness and no counter pass (timed work only)")
    ap.add_argument("--no-front", action="store_true", help="skip the wrk loads")
    ap.add_argument("--no-jobs", action="store_true", help="only the wrk loads")
    ap.add_argument("--medians", type=int, default=0, metavar="N",
                    help="first compare each row's timed median over N jobs with no profiler loaded and over N "
                         "with it enabled (one testimony job between)")
    ap.add_argument("--worker-memory", metavar="FILE", help="write where the worker's resident memory is")
    ap.add_argument("--json")
    ap.add_argument("--serve-log", metavar="FILE",
                    help="keep the server's log (the worker's line per job says where its wall time went)")
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

        job, b, use_wait, med = None, None, False, None
        if not args.no_jobs:
            # warms the worker (context, module load); without testimony when
            # the medians compare a worker that never loaded CUPTI
            first = post_job(base, 2000, {"witness": False, "counters": False} if args.medians else None)
            use_wait = server_holds_wait(base, first["id"]) if first.get("state") not in ("done", "failed") else False
            if args.medians:
                med = medians(base, args.medians, use_wait, 5000)
                done_doc(base, 1999, None, use_wait)  # the run's own warm-up, as the job requests it
            job = one_job(base, use_wait, 2001)
            b = burst(base, args.jobs, use_wait, 3000)

        front = {}
        local = re.match(r"^http://127\.", base) is not None
        plan = load_plan(args, local)
        if not args.no_front and plan["generator"] and (shutil.which(plan["generator"]) or os.path.exists(plan["generator"])):
            analyze = '{"part":1,"predicates":["threadIdx.x % 48 < 24","lane-parity"]}'
            if args.wrk:
                run = lambda url, c, body=None: run_wrk(args.wrk, url, c, args.threads, args.duration, body)
            else:
                run = lambda url, c, body=None: run_loadgen(plan["generator"], url, c, args.threads, args.duration,
                                                            plan["addresses"] if local else 0, body)
            front["healthz"] = run(f"{base}/healthz", 64)
            front["predicates"] = run(f"{base}/predicates", 64)
            front["evidence_64"] = run(f"{base}/evidence/latest/day22-part1", 64)
            front["evidence_512"] = run(f"{base}/evidence/latest/day22-part1", WIDEST)
            front["analyze"] = run(f"{base}/analyze", 64, analyze)
        elif not args.no_front:
            print(f"no load generator ({plan['generator'] or 'bench_loadgen'} not found): front loads skipped",
                  file=sys.stderr)

        mlines = metrics_lines(base) if not args.no_jobs else []
        if args.worker_memory and proc:
            worker_memory(proc.pid, args.worker_memory)
        res = {"long_poll": use_wait, "job": job, "burst": b, "front": front, "load": plan if front else None,
               "medians": med, "metrics": mlines}
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
            tm = job.get("testimony") or {}
            for part, key in (("witness", "host_ms"), ("counters", "host_ms"), ("counters", "setup_ms")):
                v = (tm.get(part) or {}).get(key)
                if isinstance(v, (int, float)):
                    label = f"Part 1 job: testimony.{part}.{key}"
                    print(f"{label:44} {v:12.2f} {v / gpu:10.2f}  GPU time")
            for k, v in sorted((job["job"].get("timing") or {}).items()):
                label = "Part 1 job: timing." + k
                print(f"{label:44} {v:12.2f} {v / gpu:10.2f}  GPU time")
            label = "burst of %d jobs: jobs/s" % b["jobs"]
            print(f"{label:44} {b['jobs_per_s']:12.2f} {'':>10}  ({b['failed']} failed)")
            print(f"{'burst: GPU busy with timed work':44} {b['gpu_busy_fraction'] * 100:11.1f}% {'':>10}")
        if med:
            print(f"timed medians over {args.medians} jobs each: no profiler loaded / profiler enabled")
            print(f"{'row':24} {'before ms':>12} {'after ms':>12} {'after/before':>13} {'spread':>8}  verdict")
            for m in med:
                print(f"{m['row']:24} {m['before_ms']:12.5f} {m['after_ms']:12.5f} {m['diff'] * 100:+12.2f}% "
                      f"{m['spread'] * 100:7.2f}%  {'within the jobs spread' if m['within_noise'] else 'OUTSIDE'}")
        for ln in mlines:
            if not ln.startswith("dv_testimony_seconds_bucket"):
                print(ln)
        if front:
            print(describe_plan(plan))
            h = front["healthz"]["rps"]
            for k, v in front.items():
                label = "%s %s c%d req/s" % ("POST" if k == "analyze" else "GET", k, v["connections"])
                print(f"{label:44} "
                      f"{v['rps']:12.0f} {v['rps'] / h:10.3f}  /healthz   p99 {v['p99_ms']:.2f} ms"
                      + (f"  non-2xx {v['non_2xx']}" if v["non_2xx"] else "")
                      + (f"  socket errors {v['errors']}" if v["errors"] else ""))
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
        if args.serve_log and os.path.exists(os.path.join(tmp, "serve.log")):
            shutil.copyfile(os.path.join(tmp, "serve.log"), args.serve_log)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

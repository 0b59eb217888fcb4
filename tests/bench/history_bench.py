#!/usr/bin/env python3
"""history_bench.py -- the evidence history under load, on a year of nights.

A benchmark, not a test. It builds an evidence store of --nights nights (366)
from the committed capture (tests/fixtures/evidence: one night of every
suite, copied under each date with its "date" rewritten), starts
`divergence serve` on it with the stand-in GPU worker, and measures:

  startup   seconds from exec to the server listening (the store is loaded
            before it listens); where the binary keeps history sidecars, a
            second start on the same store (the sidecars written by the
            first) is timed too
  load      --clients (6) processes, each from its own loopback address
            (127.0.0.2..), asking the full history of each suite in turn in
            a loop for --seconds (30), walking next_cursor when a page does
            not hold every night; meanwhile 127.0.0.101 asks GET /healthz
            every --probe-ms (100) with a 2 s timeout: probes failed, their
            p50, p99 and max latency; history requests answered (by status)
            and their p50/p99 latency
  memory    the server's resident memory idle (after start-up) and its
            peak during the load (VmRSS every 50 ms), and the peak over
            idle
  one       after the load, one history request of every night (limit=366)
            per suite, alone: the time to its whole body, the first and the
            median of --one (10) more, and its size

The history rate limit (--history-rate-limit, where the binary has it) is
turned off so that every request is served, which is the load to measure;
--rate-limited keeps the server's default instead.

--baseline BINARY runs the same bench against another build (the code
before a change) and prints the two side by side; each run gets a fresh
copy of the store.

Usage:
  history_bench.py --binary build/divergence --worker build/tests/fake_worker
                   [--baseline OTHER/divergence [--baseline-worker W]]
                   [--nights 366] [--clients 6] [--seconds 30] [--port 18960]
                   [--json out.json]
Linux only (binds 127.0.0.x source addresses, reads /proc).
"""
import argparse
import datetime
import json
import multiprocessing
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
GPU = "nvidia-h200"


def build_store(capture, root, nights):
    """<root>/<gpu>/<date>/<suite>.{json,txt} for `nights` dates ending on
    the capture's date; returns the suite names."""
    dates = sorted(d for d in os.listdir(capture) if re.match(r"^\d{4}-\d\d-\d\d$", d))
    if not dates:
        sys.exit("history_bench: no night in %s" % capture)
    src = os.path.join(capture, dates[-1])
    names = sorted(f for f in os.listdir(src) if f.endswith((".json", ".txt")) and not f.startswith("."))
    blobs = {f: open(os.path.join(src, f), "rb").read() for f in names}
    was = ('"date": "%s"' % dates[-1]).encode()
    end = datetime.date.fromisoformat(dates[-1])
    for i in range(nights):
        day = (end - datetime.timedelta(days=nights - 1 - i)).isoformat()
        d = os.path.join(root, GPU, day)
        os.makedirs(d)
        for f, b in blobs.items():
            if f.endswith(".json"):
                b = b.replace(was, ('"date": "%s"' % day).encode(), 1)
            with open(os.path.join(d, f), "wb") as out:
                out.write(b)
    return sorted(f[:-5] for f in names if f.endswith(".json"))


def rss_kb(pid, key="VmRSS"):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def get(port, path, src="127.0.0.1", timeout=10.0):
    """GET `path` on its own connection from `src`: (status, body, seconds);
    status -1 when no whole answer came in `timeout`."""
    t0 = time.monotonic()
    s = socket.socket()
    try:
        s.bind((src, 0))
        s.settimeout(timeout)
        s.connect(("127.0.0.1", port))
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode())
        chunks = []
        while True:
            d = s.recv(1 << 20)
            if not d:
                break
            chunks.append(d)
    except OSError:
        return -1, b"", time.monotonic() - t0
    finally:
        s.close()
    raw = b"".join(chunks)
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head[9:12]) if head.startswith(b"HTTP/1.") and len(head) >= 12 else -1
    return status, body, time.monotonic() - t0


def next_cursor(body):
    """The page's next_cursor from its tail (no parse of a page of megabytes)."""
    m = re.search(rb'"next_cursor"\s*:\s*(null|"(\d{4}-\d\d-\d\d)")\s*}\s*$', body[-200:])
    return m.group(2).decode() if m and m.group(2) else None


def full_history(port, suite, src, limit=366):
    """Every night of `suite`, page by page: (status of the last page, seconds, bytes)."""
    t0, size, cursor = time.monotonic(), 0, None
    while True:
        path = "/evidence/%s/history/%s?limit=%d%s" % (GPU, suite, limit, "&cursor=" + cursor if cursor else "")
        status, body, _ = get(port, path, src, timeout=30.0)
        size += len(body)
        if status != 200:
            return status, time.monotonic() - t0, size
        cursor = next_cursor(body)
        if not cursor:
            return status, time.monotonic() - t0, size


def client(port, src, suites, until, q):
    out, i = [], 0
    while time.monotonic() < until:
        status, dt, _ = full_history(port, suites[i % len(suites)], src)
        out.append((status, dt))
        i += 1
    q.put(("client", out))


def prober(port, src, until, every, q):
    out = []
    while time.monotonic() < until:
        t0 = time.monotonic()
        status, _, dt = get(port, "/healthz", src, timeout=2.0)
        out.append((status, dt))
        time.sleep(max(0.0, every - (time.monotonic() - t0)))
    q.put(("probe", out))


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def start(binary, worker, store, port, rate_limited):
    args = [binary, "serve", "--port", str(port), "--worker-cmd", worker, "--evidence-dir", store,
            "--rate-limit", "0", "--log-level", "warning"]
    help_text = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True).stdout
    has_limit = "--history-rate-limit" in help_text
    if has_limit and not rate_limited:
        args += ["--history-rate-limit", "0"]
    log = tempfile.NamedTemporaryFile(prefix="history-bench-", suffix=".log", delete=False)
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log)
    p.log = log.name
    while time.monotonic() - t0 < 600:
        if p.poll() is not None:
            sys.exit("history_bench: the server exited (log: %s)" % log.name)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return p, time.monotonic() - t0, has_limit
        except OSError:
            time.sleep(0.02)
    p.kill()
    sys.exit("history_bench: the server did not start (log: %s)" % log.name)


def stop(p):
    """SIGTERM (SIGKILL past 30 s); the server's log is removed when it
    stopped cleanly and named when it did not."""
    p.terminate()
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    if rc == 0:
        os.unlink(p.log)
    else:
        print("history_bench: the server exited %d (log: %s)" % (rc, p.log), file=sys.stderr)


def bench(a, binary, worker, template, suites):
    store = tempfile.mkdtemp(prefix="history-bench-store-")
    shutil.rmtree(store)
    shutil.copytree(template, store)
    res = {"binary": binary, "nights": a.nights}
    try:
        p, res["startup_s"], res["has_rate_limit"] = start(binary, worker, store, a.port, a.rated)
        if any(f.startswith(".") and f.endswith(".night.json")
               for f in os.listdir(os.path.join(store, GPU, sorted(os.listdir(os.path.join(store, GPU)))[-1]))):
            stop(p)  # a second start reads the sidecars the first wrote
            p, res["startup_sidecars_s"], _ = start(binary, worker, store, a.port, a.rated)
        time.sleep(2)
        res["rss_idle_kb"] = rss_kb(p.pid)
        q = multiprocessing.Queue()
        until = time.monotonic() + a.seconds
        procs = [multiprocessing.Process(target=client, args=(a.port, "127.0.0.%d" % (2 + i), suites, until, q))
                 for i in range(a.clients)]
        procs.append(multiprocessing.Process(target=prober, args=(a.port, "127.0.0.101", until, a.probe_ms / 1000.0, q)))
        for pr in procs:
            pr.start()
        peak = 0
        while time.monotonic() < until + 1:
            peak = max(peak, rss_kb(p.pid))
            time.sleep(0.05)
        got = [q.get(timeout=120) for _ in procs]
        for pr in procs:
            pr.join(timeout=60)
        res["rss_peak_kb"] = max(peak, rss_kb(p.pid))
        res["rss_hwm_kb"] = rss_kb(p.pid, "VmHWM")
        probes = [x for kind, xs in got if kind == "probe" for x in xs]
        hist = [x for kind, xs in got if kind == "client" for x in xs]
        ok = [dt for st, dt in probes if st == 200]
        res["healthz"] = {"probes": len(probes), "failed": len(probes) - len(ok),
                          "p50_ms": 1000 * (pct(ok, 50) or 0), "p99_ms": 1000 * (pct(ok, 99) or 0),
                          "max_ms": 1000 * (max(ok) if ok else 0)}
        by = {}
        for st, _ in hist:
            by[str(st)] = by.get(str(st), 0) + 1
        served = [dt for st, dt in hist if st == 200]
        res["history"] = {"requests": len(hist), "by_status": by, "p50_ms": 1000 * (pct(served, 50) or 0),
                          "p99_ms": 1000 * (pct(served, 99) or 0)}
        one = {}
        for s in suites:
            runs = [full_history(a.port, s, "127.0.0.1") for _ in range(a.one + 1)]
            one[s] = {"status": runs[0][0], "first_ms": 1000 * runs[0][1],
                      "median_ms": 1000 * pct([r[1] for r in runs[1:]], 50), "bytes": runs[0][2]}
        res["one"] = one
        res["rss_after_one_kb"] = rss_kb(p.pid)
        stop(p)
    finally:
        shutil.rmtree(store, ignore_errors=True)
    return res


def show(results):
    def row(name, f):
        return "| %s | %s |" % (name, " | ".join(f(r) for r in results))
    mb = lambda kb: "%.1f MB" % (kb / 1024.0)
    names = ["baseline", "this build"] if len(results) == 2 else ["this build"]
    lines = ["| | %s |" % " | ".join(names), "|---|" + "---|" * len(results)]
    lines.append(row("binary", lambda r: "`%s`" % os.path.relpath(r["binary"])))
    lines.append(row("start-up (exec to listening)", lambda r: "%.2f s" % r["startup_s"] +
                     (", %.2f s with sidecars" % r["startup_sidecars_s"] if "startup_sidecars_s" in r else "")))
    suites = sorted(results[0]["one"])
    for s in suites:
        lines.append(row("one request, %s (%d nights)" % (s, results[0]["nights"]), lambda r, s=s: "%.1f ms first, %.1f ms median, %.0f kB" % (
            r["one"][s]["first_ms"], r["one"][s]["median_ms"], r["one"][s]["bytes"] / 1000.0)))
    lines.append(row("/healthz failed", lambda r: "%d of %d" % (r["healthz"]["failed"], r["healthz"]["probes"])))
    lines.append(row("/healthz p50 / p99 / max", lambda r: "%.1f / %.1f / %.1f ms" % (
        r["healthz"]["p50_ms"], r["healthz"]["p99_ms"], r["healthz"]["max_ms"])))
    lines.append(row("history requests (status: count)", lambda r: "%d (%s)" % (
        r["history"]["requests"], ", ".join("%s: %d" % kv for kv in sorted(r["history"]["by_status"].items())))))
    lines.append(row("history p50 / p99", lambda r: "%.1f / %.1f ms" % (r["history"]["p50_ms"], r["history"]["p99_ms"])))
    lines.append(row("RSS idle / peak (peak - idle)", lambda r: "%s / %s (+%s)" % (
        mb(r["rss_idle_kb"]), mb(r["rss_peak_kb"]), mb(r["rss_peak_kb"] - r["rss_idle_kb"]))))
    lines.append(row("VmHWM (start-up included)", lambda r: mb(r["rss_hwm_kb"])))
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--worker", required=True)
    ap.add_argument("--baseline")
    ap.add_argument("--baseline-worker")
    ap.add_argument("--capture", default=os.path.join(SOURCE, "tests", "fixtures", "evidence"))
    ap.add_argument("--nights", type=int, default=366)
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--probe-ms", type=float, default=100)
    ap.add_argument("--one", type=int, default=10)
    ap.add_argument("--port", type=int, default=18960)
    ap.add_argument("--rate-limited", dest="rated", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    template = tempfile.mkdtemp(prefix="history-bench-template-")
    try:
        suites = build_store(a.capture, template, a.nights)
        print("store: %d nights x %d suites from %s" % (a.nights, len(suites), os.path.relpath(a.capture)),
              file=sys.stderr)
        results = []
        if a.baseline:
            results.append(bench(a, a.baseline, a.baseline_worker or a.worker, template, suites))
        results.append(bench(a, a.binary, a.worker, template, suites))
    finally:
        shutil.rmtree(template, ignore_errors=True)
    show(results)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()

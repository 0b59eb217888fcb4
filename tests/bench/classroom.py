#!/usr/bin/env python3
"""classroom.py -- a class presses Measure at once.

A teacher says "try your own predicate, press Measure", and N readers do it
within a second. Each reader here has a predicate of its own,
`(threadIdx.x % K) < J`, sends what the lesson widget's "Measure this" sends
({part: 1, predicates: [it, warp-parity], baseline: warp-parity,
threads_per_block: 256}, with instructions: true under --instructions), all
at one moment, each from its own loopback address (127.0.200.1 on) when the
server is on this machine, as a class's browsers come from their own
machines. Each reader then does what the widget does:

  - 202: follows GET /jobs/{id}?wait=25 until the job is done or failed (a
    held request answered early, the job still waiting, is asked again);
  - 200 with a document: the cached answer;
  - 429 or 503 with Retry-After: waits exactly that many seconds, then
    presses Measure again (the widget says "Try again in N s");
  - anything else: an error.

It reports when the readers were answered, counted from the moment they
pressed (first, median, p95, last), the 429s and every Retry-After value
seen, the errors, and how busy the GPU was meanwhile: the worker's busy time
and its timed GPU work (/metrics: dv_gpu_busy_seconds_total and
dv_gpu_kernel_seconds_total) over the wall time from the press to the last
answer.

And how honest the 202 was: each reader admitted is told `expected_start_s`
(the queue's drain estimate) and then sees its job start after its
`timing.queue_wait_ms`; the summary gives the largest |told - seen| over
the readers (told_vs_started_max_s, with the reader, what it was told and
when it started) and the largest told. On a fresh server the estimate of a
widget job is the worker's warm-up's run of one (its hello's "warm"), not
the --job-estimate-ms default: 40 readers are told about 40 such runs.

It also says how the GPU worker served them: how many readers were measured
in a batch (several readers' requests for one kernel and grid measured in one
session on the GPU, each reader's table from its own rows: the document's
table `batch`) and the batch sizes seen.

--check makes it a correctness test (a ctest on the stand-in worker): exit 1
unless every reader was answered with a done job, with no error, and each
reader's document holds a row of its own predicate and none of another
reader's; with --told-within S, also unless every reader admitted started
within S seconds of what its 202 told it (told_vs_started_max_s <= S; the
ctest runs the stand-in with a warm-up's run in its hello,
FAKE_WORKER_WARM_MS, and S = 1).

--alone-vs-batch: ten readers' predicates (lane < 16 && warp < J and the
like, whose ratios 1 + split warps / 8 mostly differ) are each measured alone,
one at a time, then the ten press Measure again among thirty other readers,
forty at once (the ten 50 ms after the others, so that none of them is the
first job, which starts alone before the rest arrive), so the GPU worker
measures them in batches. For each it prints
the ratio and interval alone and batched, whether the batched ratio lies
inside the interval alone, and the half-widths side by side. (The class's
requests ask for a budget of 2001 ms, not 2000, so the result cache, which
would answer them with the runs alone, does not; the budget is the GPU time a
table may take before sampling stops unfinished, and the lesson's tables stop
on their target long before it.) With --check: exit 1 unless each batched
ratio lies within its interval alone widened by its own (the two intervals
meet) and each batched half-width is at most its half-width alone or its
target.

--first-vs-tenth: a fresh server's first ten readers one after another (each
its own predicate), each answered before the next presses: the first's wall
time (press to answer) against the tenth's, and the worker's own wall time of
each (the document's wall_time_ms).

Usage:
  classroom.py --binary build/divergence --worker build/tests/fake_worker
               [--readers 40] [--instructions] [--check] [--json out.json]
               [--serve-arg=--queue --serve-arg=16 ...]
  classroom.py --server http://127.0.0.1:8080 [--readers 40] [--addresses 0]
  classroom.py --binary ... --alone-vs-batch [--check] [--json out.json]
  classroom.py --binary ... --first-vs-tenth [--json out.json]

With --binary it starts `divergence serve` on a free port with no rate limit
(--rate-limit 0, as the measurements in issue 31 were made) and the server's
other defaults, plus any --serve-arg; with --server the server's own
configuration applies. --addresses 0 sends every reader from one address
(the default when the server is not on a loopback address), as a class
behind one NAT address: the server's per-address bounds then apply to the
class as a whole (--per-ip-limit 32 connections, --queue-per-address 16).
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

WAIT_S = 25          # the widget's ?wait=
BASELINE = "warp-parity"
FIRST_SOURCE = (127, 0, 200, 1)
# --alone-vs-batch's ten: a block of 256 threads is eight warps; each
# predicate splits some of them (lanes 0-15 on one path), so its ratio over
# the warp-uniform baseline is about 1 + (split warps) / 8.
TEN = ["lane < 16 && warp < 1", "lane < 16 && warp < 2", "lane < 16 && warp < 3", "lane < 16 && warp < 4",
       "lane < 16 && warp < 5", "lane < 16 && warp < 6", "lane < 16 && warp < 7", "lane < 16 && warp < 8",
       "lane < 16 && warp >= 5", "(lane & 3) == 0 && warp < 2"]


def predicates(n):
    """n distinct predicates (threadIdx.x % K) < J, 1 <= J < K."""
    out, k = [], 2
    while len(out) < n:
        for j in range(1, k):
            if len(out) < n:
                out.append(f"(threadIdx.x % {k}) < {j}")
        k += 1
    return out


def source_address(i):
    a, b, c, d = FIRST_SOURCE
    n = (c - 200) * 254 + (d - 1) + i
    return f"{a}.{b}.{200 + n // 254}.{1 + n % 254}"


class Client:
    """One reader's keep-alive connection, from its own address."""

    def __init__(self, url, source):
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port or 80
        self.prefix = u.path.rstrip("/")
        self.source = source
        self.conn = None

    def request(self, method, path, body=None, timeout=WAIT_S + 15):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        for attempt in range(2):  # a kept-alive connection the server closed: once more on a new one
            if self.conn is None:
                src = (self.source, 0) if self.source else None
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout, source_address=src)
            try:
                self.conn.request(method, self.prefix + path, body=data, headers=headers)
                r = self.conn.getresponse()
                raw = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.close()
                try:
                    j = json.loads(raw) if raw else None
                except ValueError:
                    j = {"raw": raw.decode(errors="replace")}
                return r.status, r.getheader("Retry-After"), j
            except (ConnectionError, http.client.HTTPException, OSError):
                self.close()
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def reader(url, i, expr, source, instructions, start, out, extra=None, delay=0.0):
    """One reader: press (`delay` s after the class), honour Retry-After,
    follow the job; into out[i]."""
    res = {"reader": i, "predicate": expr, "source": source, "retry_after": [], "posts": 0, "error": None}
    out[i] = res
    body = {"part": 1, "predicates": [expr, BASELINE], "baseline": BASELINE, "threads_per_block": 256}
    if instructions:
        body["instructions"] = True
    body.update(extra or {})
    c = Client(url, source)
    try:
        start.wait()
        time.sleep(delay)
        t0 = time.monotonic()
        res["t0"] = t0
        job = None
        while job is None:
            st, ra, j = c.request("POST", "/measure", body)
            res["posts"] += 1
            if st == 200 and j and j.get("document"):
                job = dict(j, state="done")
            elif st == 202 and j and j.get("id"):
                res["expected_start_s"] = j.get("expected_start_s")
                job = follow(c, j)
            elif st in (429, 503) and ra is not None and ra.isdigit():
                res["retry_after"].append((st, int(ra)))
                time.sleep(int(ra))
            else:
                raise RuntimeError(f"POST /measure answered {st}: {json.dumps(j)[:300]}")
        res["answered_s"] = time.monotonic() - t0
        res["state"] = job.get("state")
        res["queue_wait_ms"] = (job.get("timing") or {}).get("queue_wait_ms")
        if res.get("expected_start_s") is not None and res["queue_wait_ms"] is not None:
            res["told_minus_started_s"] = res["expected_start_s"] - res["queue_wait_ms"] / 1e3
        res["rows"] = row_names(job.get("document") or {})
        res["table"] = own_table(job.get("document") or {}, expr)
        res["wall_time_ms"] = (job.get("document") or {}).get("wall_time_ms")
        if job.get("state") != "done":
            res["error"] = f"job {job.get('state')}: {(job.get('error') or {}).get('reason')}"
    except Exception as e:  # noqa: BLE001 -- every failure is the reader's error, reported
        res["error"] = f"{type(e).__name__}: {e}"
    finally:
        c.close()


def follow(c, j):
    """GET /jobs/{id}?wait= until the job is done or failed."""
    path = f"/jobs/{j['id']}?wait={WAIT_S}"
    deadline = time.monotonic() + 600
    while j.get("state") not in ("done", "failed"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"job {j.get('id')} not done after 600 s")
        st, _, j2 = c.request("GET", path)
        if st != 200 or not j2:
            raise RuntimeError(f"GET {path} answered {st}: {json.dumps(j2)[:300]}")
        j = dict(j2, id=j.get("id"))
    return j


def row_names(doc):
    """Every row's name and expression in the document's tables."""
    names = set()
    for t in doc.get("tables") or []:
        for r in t.get("rows") or []:
            for k in ("name", "label", "expr"):
                if isinstance(r.get(k), str):
                    names.add(r[k])
    return names


def own_table(doc, expr):
    """What --alone-vs-batch reads of the reader's table: its predicate's
    row (ratio, interval, half-width), the table's stop and its batch."""
    for t in doc.get("tables") or []:
        for r in t.get("rows") or []:
            if r.get("name") == expr:
                ci = r.get("ratio_ci") or {}
                return {"ratio": r.get("ratio"), "lo": ci.get("lo"), "hi": ci.get("hi"),
                        "halfwidth": r.get("ratio_halfwidth"), "target": t.get("halfwidth_target"),
                        "stop_reason": t.get("stop_reason"), "batch": t.get("batch"),
                        "samples": r.get("samples")}
    return None


def metrics(url):
    """dv_gpu_busy_seconds_total and dv_gpu_kernel_seconds_total, or None."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=10)
    try:
        conn.request("GET", u.path.rstrip("/") + "/metrics")
        r = conn.getresponse()
        text = r.read().decode(errors="replace")
        if r.status != 200:
            return None
    except OSError:
        return None
    finally:
        conn.close()
    got = {}
    for name in ("dv_gpu_busy_seconds_total", "dv_gpu_kernel_seconds_total"):
        m = re.search(r"^" + name + r" ([0-9.eE+-]+)$", text, re.M)
        got[name] = float(m.group(1)) if m else None
    return got


def start_server(args, tmp):
    ev = os.path.join(tmp, "evidence")
    os.makedirs(ev)
    cmd = [args.binary, "serve", "--port", "0", "--rate-limit", "0", "--evidence-dir", ev]
    if args.worker:
        cmd += ["--worker-cmd", args.worker]
    cmd += args.serve_arg
    log = open(os.path.join(tmp, "serve.log"), "w+")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 30
    url = None
    while time.monotonic() < deadline and url is None:
        if p.poll() is not None:
            log.seek(0)
            raise SystemExit(f"the server exited with {p.returncode}:\n{log.read()[-2000:]}")
        log.seek(0)
        m = re.search(r"^listening on (http://\S+)$", log.read(), re.M)
        url = m.group(1) if m else None
        time.sleep(0.05)
    if not url:
        raise SystemExit("the server did not say where it listens within 30 s")
    c = Client(url, None)
    while time.monotonic() < deadline:  # ready: the worker said hello with a GPU
        try:
            st, _, _ = c.request("GET", "/readyz", timeout=5)
            if st == 200:
                return p, url
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit("the server was not ready within 30 s")


def stop_server(p):
    if p and p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def pct(xs, q):
    """The q-quantile of xs (nearest rank)."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(-(-q * len(s) // 1)) - 1))]


def summarise(res, wall, m0, m1):
    answered = [r["answered_s"] for r in res if r.get("answered_s") is not None and not r.get("error")]
    ras = [ra for r in res for (_, ra) in r["retry_after"]]
    s = {"readers": len(res), "answered": len(answered), "errors": sum(1 for r in res if r.get("error")),
         "first_s": min(answered) if answered else None, "median_s": statistics.median(answered) if answered else None,
         "p95_s": pct(answered, 0.95) if answered else None, "last_s": max(answered) if answered else None,
         "status_429": sum(1 for r in res for (st, _) in r["retry_after"] if st == 429),
         "status_503": sum(1 for r in res for (st, _) in r["retry_after"] if st == 503),
         "retry_after_values": sorted(set(ras)), "retry_after_max": max(ras) if ras else None,
         "posts": sum(r["posts"] for r in res), "wall_s": wall}
    s.update(told_vs_started(res))
    if m0 and m1 and None not in m0.values() and None not in m1.values() and wall > 0:
        s["gpu_busy_share"] = (m1["dv_gpu_busy_seconds_total"] - m0["dv_gpu_busy_seconds_total"]) / wall
        s["gpu_timed_share"] = (m1["dv_gpu_kernel_seconds_total"] - m0["dv_gpu_kernel_seconds_total"]) / wall
    return s


def told_vs_started(res):
    """How honest the 202s were: the largest |expected_start_s told - the
    start seen (queue_wait_ms)| over the readers that have both, which
    reader, what it was told and when it started; and the largest told.
    A reader answered from the cache, or whose last POST joined a running
    job, has no start to compare."""
    both = [r for r in res if r.get("told_minus_started_s") is not None]
    told = [r["expected_start_s"] for r in res if r.get("expected_start_s") is not None]
    out = {"told_compared": len(both), "told_max_s": max(told) if told else None, "told_vs_started_max_s": None}
    if both:
        w = max(both, key=lambda r: abs(r["told_minus_started_s"]))
        out.update(told_vs_started_max_s=abs(w["told_minus_started_s"]), told_vs_started_reader=w["reader"],
                   told_vs_started_told_s=w["expected_start_s"], told_vs_started_seen_s=w["queue_wait_ms"] / 1e3)
    return out


def check(res, preds, told_within=None):
    """The correctness rules of --check: a list of what broke."""
    bad = []
    for r in res:
        d = r.get("told_minus_started_s")
        if told_within is not None and d is not None and abs(d) > told_within:
            bad.append(f"reader {r['reader']} ({r['predicate']}): told it would start in {r['expected_start_s']:.3f} s, "
                       f"started after {r['queue_wait_ms'] / 1e3:.3f} s (more than {told_within:g} s apart)")
    mine = set(preds)
    for r in res:
        if r.get("error"):
            bad.append(f"reader {r['reader']} ({r['predicate']}): {r['error']}")
            continue
        rows = r.get("rows") or set()
        if r["predicate"] not in rows:
            bad.append(f"reader {r['reader']}: its document has no row of {r['predicate']} (rows: {sorted(rows)})")
        others = (rows & mine) - {r["predicate"]}
        if others:
            bad.append(f"reader {r['reader']} ({r['predicate']}): its document holds others' rows {sorted(others)}")
    return bad


def self_test():
    """check() against planted results: each kind of wrong answer refused."""
    preds = predicates(3)
    ok = [{"reader": i, "predicate": p, "rows": {p, BASELINE}} for i, p in enumerate(preds)]
    assert check(ok, preds) == [], check(ok, preds)
    for i, x in enumerate(ok):  # told 0.1, 0.2, 0.3 s; started after 0.15, 0.1, 0.35 s
        x.update(expected_start_s=0.1 * (i + 1), queue_wait_ms=(150, 100, 350)[i])
        x["told_minus_started_s"] = x["expected_start_s"] - x["queue_wait_ms"] / 1e3
    assert check(ok, preds, 1.0) == [], check(ok, preds, 1.0)
    tv = told_vs_started(ok)
    assert tv["told_vs_started_reader"] == 1 and abs(tv["told_vs_started_max_s"] - 0.1) < 1e-9, tv
    assert abs(tv["told_max_s"] - 0.3) < 1e-9 and tv["told_compared"] == 3, tv
    cases = {
        "another reader's row": lambda r: r[1]["rows"].add(preds[2]),
        "its own row missing": lambda r: r[0]["rows"].discard(preds[0]),
        "an error": lambda r: r[2].update(error="POST /measure answered 500"),
        "a reader told 78 s who started after 0.4 s": lambda r: r[2].update(expected_start_s=78.0,
                                                                              told_minus_started_s=77.6),
    }
    for what, plant in cases.items():
        res = [dict(x, rows=set(x["rows"])) for x in ok]
        plant(res)
        if not check(res, preds, 1.0):
            print(f"self-test: {what} passed the check", file=sys.stderr)
            return 1
    print(f"self-test: {len(cases)} planted faults refused")
    return 0


def run_class(url, preds, own, instructions, extra=None, delays=None):
    """N readers (one per predicate) press at one moment (or delays[i] s
    after it); (results, summary)."""
    out = [None] * len(preds)
    go = threading.Barrier(len(preds) + 1)
    threads = [threading.Thread(target=reader, args=(url, i, preds[i], source_address(i) if own else None,
                                                     instructions, go, out, extra, (delays or {}).get(i, 0.0)),
                                daemon=True)
               for i in range(len(preds))]
    for t in threads:
        t.start()
    m0 = metrics(url)
    go.wait()
    t0 = time.monotonic()
    for t in threads:
        t.join(timeout=900)
    last = max((r["t0"] + r["answered_s"] for r in out if r and r.get("answered_s") is not None), default=t0)
    m1 = metrics(url)
    res = [r for r in out if r]
    s = summarise(res, last - t0, m0, m1)
    batches = [r["table"]["batch"] for r in res if r.get("table") and r["table"].get("batch")]
    s["batched"] = len(batches)
    s["batch_readers_seen"] = sorted({b.get("readers") for b in batches})
    return out, s


def print_class(s, readers, instructions, own):
    fmt = lambda v: "-" if v is None else f"{v:.3f} s"  # noqa: E731
    print(f"{readers} readers, distinct predicates, {'instructions, ' if instructions else ''}"
          f"{'one address each' if own else 'one address'}; {s['answered']} answered, {s['errors']} errors")
    print(f"answered: first {fmt(s['first_s'])}, median {fmt(s['median_s'])}, p95 {fmt(s['p95_s'])}, "
          f"last {fmt(s['last_s'])}")
    print(f"429s: {s['status_429']} (503s: {s['status_503']}); Retry-After seen: "
          f"{s['retry_after_values'] or 'none'}; POSTs {s['posts']}")
    print(f"measured in a batch: {s['batched']} of {readers} readers (batches of {s['batch_readers_seen'] or '-'})")
    if s.get("told_vs_started_max_s") is not None:
        print(f"told vs started: largest |expected_start_s - queue wait| {s['told_vs_started_max_s']:.3f} s "
              f"(reader {s['told_vs_started_reader']}: told {s['told_vs_started_told_s']:.3f} s, started after "
              f"{s['told_vs_started_seen_s']:.3f} s); largest told {s['told_max_s']:.3f} s, "
              f"{s['told_compared']} readers compared")
    if "gpu_busy_share" in s:
        print(f"GPU worker busy {s['gpu_busy_share'] * 100:.1f}% of the {s['wall_s']:.3f} s, timed GPU work "
              f"{s['gpu_timed_share'] * 100:.1f}%")


def sequential(url, preds, own, extra=None):
    """Each predicate's reader presses once the one before was answered."""
    out = [None] * len(preds)
    for i, p in enumerate(preds):
        reader(url, i, p, source_address(i) if own else None, False, threading.Barrier(1), out, extra)
    return out


def fmt_row(t):
    if not t or t.get("ratio") is None:
        return "-"
    hw = t.get("halfwidth")
    return (f"{t['ratio']:.4f} [{t['lo']:.4f}, {t['hi']:.4f}] +-{100 * hw:.3f}%" if hw is not None
            else f"{t['ratio']:.4f}")


def alone_vs_batch(url, own, check):
    """--alone-vs-batch: the ten alone, then among forty; (report, problems)."""
    alone = sequential(url, TEN, own)
    others = [p for p in predicates(40) if p not in TEN][:30]
    # The ten press 50 ms after the thirty: the class's first job starts
    # alone, before the others have arrived, and none of the ten is it.
    out, summary = run_class(url, TEN + others, own, False, {"budget_ms": 2001},
                             {i: 0.05 for i in range(len(TEN))})
    rows, bad = [], []
    print(f"{'row':<30} {'alone: ratio [interval] +-half-width':<40} {'batched (readers/rows)':<48} inside  no wider")
    for i, p in enumerate(TEN):
        a, b = alone[i].get("table"), (out[i] or {}).get("table")
        err = alone[i].get("error") or (out[i] or {}).get("error")
        row = {"predicate": p, "alone": a, "batched": b, "error": err}
        if a and b and None not in (a["ratio"], a["lo"], a["hi"], b["ratio"], b["lo"], b["hi"]):
            row["inside"] = a["lo"] <= b["ratio"] <= a["hi"]
            row["no_wider"] = (b["halfwidth"] or 0) <= (a["halfwidth"] or 0)
            meet = abs(b["ratio"] - a["ratio"]) <= (a["hi"] - a["lo"]) / 2 + (b["hi"] - b["lo"]) / 2
            within = (b["halfwidth"] or 0) <= max(a["halfwidth"] or 0, b.get("target") or 0)
            if check and not meet:
                bad.append(f"{p}: batched {fmt_row(b)} does not meet alone {fmt_row(a)}")
            if check and not within:
                bad.append(f"{p}: batched half-width over both its half-width alone and its target")
        elif check:
            bad.append(f"{p}: {err or 'no row of its own in a document'}")
        batch = (b or {}).get("batch") or {}
        where = f"{fmt_row(b)} ({batch.get('readers', 1)}/{batch.get('rows', 2)})"
        print(f"{p:<30} {fmt_row(a):<40} {where:<48} {'yes' if row.get('inside') else 'no':<7} "
              f"{'yes' if row.get('no_wider') else 'no'}")
        rows.append(row)
    n_in = sum(1 for r in rows if r.get("inside"))
    n_nw = sum(1 for r in rows if r.get("no_wider"))
    print(f"batched ratio inside its interval alone: {n_in} of {len(TEN)}; half-width no wider than alone: "
          f"{n_nw} of {len(TEN)}")
    print_class(summary, len(TEN) + len(others), False, own)
    return {"rows": rows, "class": summary}, bad


def first_vs_tenth(url, own):
    """--first-vs-tenth: ten readers one after another on a fresh server."""
    res = sequential(url, predicates(10), own)
    for r in res:
        print(f"reader {r['reader'] + 1:>2}: answered in {r.get('answered_s') or 0:.3f} s, the worker's wall time "
              f"{(r.get('wall_time_ms') or 0):.1f} ms{'  ' + r['error'] if r.get('error') else ''}")
    first, tenth = res[0].get("answered_s"), res[-1].get("answered_s")
    ratio = first / tenth if first and tenth else None
    print(f"first / tenth: {ratio:.2f}x (press to answer)" if ratio else "first / tenth: -")
    return {"readers": res, "first_s": first, "tenth_s": tenth, "first_over_tenth": ratio}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", help="a running server's URL")
    ap.add_argument("--binary", help="start this `divergence` (serve) instead")
    ap.add_argument("--worker", help="the GPU worker command for --binary (e.g. build/tests/fake_worker)")
    ap.add_argument("--serve-arg", action="append", default=[], help="one more argument for `divergence serve`")
    ap.add_argument("--readers", type=int, default=40)
    ap.add_argument("--addresses", type=int, default=None,
                    help="0: every reader from one address; default: each its own when the server is on loopback")
    ap.add_argument("--instructions", action="store_true", help="every reader asks for the instruction profiles")
    ap.add_argument("--alone-vs-batch", action="store_true", help="ten predicates alone, then among forty readers")
    ap.add_argument("--first-vs-tenth", action="store_true", help="a fresh server's first ten readers in turn")
    ap.add_argument("--check", action="store_true", help="exit 1 unless every reader got its own document")
    ap.add_argument("--told-within", type=float, default=None, metavar="S",
                    help="with --check: exit 1 unless every reader started within S s of its 202's expected_start_s")
    ap.add_argument("--json", help="write every figure and reader here")
    ap.add_argument("--keep-log", help="copy the started server's log here")
    ap.add_argument("--self-test", action="store_true", help="plant wrong answers and see --check refuse each")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if bool(a.server) == bool(a.binary):
        ap.error("one of --server and --binary")
    if not 1 <= a.readers <= 20000:
        ap.error("--readers: 1 to 20000")
    if a.alone_vs_batch and a.first_vs_tenth:
        ap.error("one of --alone-vs-batch and --first-vs-tenth")
    tmp = tempfile.mkdtemp(prefix="dvclass.")
    proc = None
    try:
        if a.binary:
            proc, url = start_server(a, tmp)
        else:
            url = a.server.rstrip("/")
            if a.first_vs_tenth:
                print("first-vs-tenth: a running server's worker may not be fresh", file=sys.stderr)
        local = re.match(r"^http://(127\.|localhost[:/])", url + "/") is not None
        own = a.addresses if a.addresses is not None else (1 if local else 0)
        if a.alone_vs_batch or a.first_vs_tenth:
            report, bad = alone_vs_batch(url, own, a.check) if a.alone_vs_batch else (first_vs_tenth(url, own), [])
            if a.json:
                with open(a.json, "w") as f:
                    json.dump(dict(report, check=bad), f, indent=1, default=sorted)
            for b in bad:
                print("check: " + b, file=sys.stderr)
            if a.check and bad:
                print(f"check: FAILED ({len(bad)} problems)", file=sys.stderr)
                return 1
            if a.check:
                print("check: every batched row agrees with its row alone")
            return 0
        preds = predicates(a.readers)
        out, s = run_class(url, preds, own, a.instructions)
        bad = check(out, preds, a.told_within) if a.check else []
        print_class(s, a.readers, a.instructions, own)
        errs = [r for r in out if r and r.get("error")]
        for r in errs[:10]:
            print(f"  reader {r['reader']} ({r['predicate']}): {r['error']}", file=sys.stderr)
        for b in bad[:20]:
            print("check: " + b, file=sys.stderr)
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"summary": s, "readers": [dict(r, rows=sorted(r.get("rows") or [])) for r in out if r],
                           "check": bad}, f, indent=1)
        if a.check and (bad or s["answered"] != a.readers):
            print(f"check: FAILED ({len(bad)} problems, {s['answered']} of {a.readers} answered)", file=sys.stderr)
            return 1
        if a.check:
            print("check: every reader answered with its own rows and no other reader's" +
                  (f", each started within {a.told_within:g} s of what it was told" if a.told_within is not None else ""))
        return 0
    finally:
        stop_server(proc)
        if a.keep_log and os.path.exists(os.path.join(tmp, "serve.log")):
            shutil.copyfile(os.path.join(tmp, "serve.log"), a.keep_log)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

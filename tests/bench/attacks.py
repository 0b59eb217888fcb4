#!/usr/bin/env python3
"""attacks.py -- re-runs the hostile-client attacks against a real server and
prints one table of what they achieved.

A benchmark, not a test: it starts `divergence serve` with the embedded
defaults (rate limits on, no token unless an attack sets one) and the fake
GPU worker, and measures:

  slowloris   300 connections from 10 loopback addresses (127.0.0.2..11),
              one header line every 5 s, while 127.0.0.1 probes /healthz
              every 0.25 s: probe failures and latency percentiles
  heavy       8 concurrent analyses at the cost cap (and 1 over it), with
              /healthz probes meanwhile: how many got no answer
  cpu         the 16-predicate blockIdx.x analysis over 32768 x 1024
              threads: its status and the server's CPU time for it
  framing     every case of tests/server/http/framing: answered as expected,
              smuggled requests run
  token       10 bad-token POSTs, then the owner's: the owner's status
  forwarded   30 POSTs varying X-Forwarded-For from a non-proxy address
              (rate limit 10): how many got through
  measure     /measure with bodies /analyze rejects: how many got 202
  cross-site  a text/plain POST /measure: its status

Usage: attacks.py --binary build/divergence --worker build/tests/fake_worker
                  [--source .] [--slowloris-s 60] [--json out.json]
Linux only (binds 127.0.0.x source addresses; reads /proc for CPU time).
"""
import argparse
import json
import multiprocessing
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

PORT = int(os.environ.get("ATTACKS_PORT", "18190"))


def start(binary, worker, extra):
    log = tempfile.NamedTemporaryFile(prefix="attacks-", suffix=".log", delete=False)
    args = [binary, "serve", "--port", str(PORT), "--worker-cmd", worker] + extra
    p = subprocess.Popen(args, stderr=log, stdout=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=0.2).close()
            return p
        except OSError:
            time.sleep(0.1)
    p.kill()
    sys.exit("attacks: the server did not start (log: %s)" % log.name)


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def raw(data, src="127.0.0.1", timeout=10.0):
    """Sends `data` from `src`; returns (bytes until close, seconds)."""
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(timeout)
    t0 = time.monotonic()
    out = b""
    try:
        s.connect(("127.0.0.1", PORT))
        s.sendall(data)
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except OSError:
        pass
    finally:
        s.close()
    return out, time.monotonic() - t0


def status(out):
    return int(out[9:12]) if out.startswith(b"HTTP/1.") and len(out) >= 12 else -1


def post(path, body, src="127.0.0.1", headers=b"", ctype=b"application/json", timeout=60.0):
    b = body.encode() if isinstance(body, str) else body
    req = (b"POST " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
           (b"Content-Type: " + ctype + b"\r\n" if ctype else b"") + headers +
           b"Content-Length: %d\r\n\r\n" % len(b) + b)
    out, dt = raw(req, src, timeout)
    return status(out), out, dt


def healthz(src="127.0.0.1", timeout=3.0):
    out, dt = raw(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", src, timeout)
    return status(out), dt


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def slow_open(addr):
    s = socket.socket()
    s.bind((addr, 0))
    s.settimeout(1.0)
    try:
        s.connect(("127.0.0.1", PORT))
        s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    except OSError:
        pass
    s.setblocking(False)
    return s


def slowloris_attack(seconds):
    """The attacker keeps 30 connections per address and reopens any the
    server closes, at its next 5 s tick. Returns how many it had to reopen."""
    conns = [(slow_open("127.0.0.%d" % (2 + a)), "127.0.0.%d" % (2 + a)) for a in range(10) for _ in range(30)]
    opened = len(conns)
    closed_by_server = 0
    stop_flag = threading.Event()

    stop_at = time.monotonic() + seconds

    def drip():
        nonlocal closed_by_server, conns
        while not stop_flag.wait(min(5.0, max(0.0, stop_at - time.monotonic()))) and time.monotonic() < stop_at:
            live = []
            for s, addr in conns:
                try:
                    r, _, _ = select.select([s], [], [], 0)
                    if r and not s.recv(1):
                        raise OSError("closed")
                    s.send(b"X-a: b\r\n")
                    live.append((s, addr))
                except OSError:
                    closed_by_server += 1
                    s.close()
                    live.append((slow_open(addr), addr))
            conns = live

    drip()
    for s, _ in conns:
        s.close()
    return closed_by_server


def slowloris(seconds):
    """The attack in its own process (so that its socket loop never delays
    the probes of this one), the probes here."""
    q = multiprocessing.Queue()
    child = multiprocessing.Process(target=lambda: q.put(slowloris_attack(seconds + 1)))
    child.start()
    time.sleep(1.0)  # every slow connection open
    results = []
    stop_at = time.monotonic() + seconds
    while time.monotonic() < stop_at:
        results.append(healthz())
        time.sleep(0.25)
    closed_by_server = q.get()
    child.join()
    opened = 300
    lat = [dt * 1000 for st, dt in results if st == 200]
    return {"connections": opened, "addresses": 10, "probes": len(results),
            "failures": sum(1 for st, _ in results if st != 200),
            "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "max_ms": max(lat) if lat else float("nan"),
            "closed_by_server": closed_by_server}


HEAVY = json.dumps({"part": 1, "blocks": 8192, "threads_per_block": 1024, "baseline": "blockIdx.x % 2 == 0",
                    "predicates": ["blockIdx.x % 2 == 0", "(blockIdx.x ^ threadIdx.x) % 3 == 0",
                                   "blockIdx.x * threadIdx.x % 7 < 3", "(blockIdx.x + lane) % 5 == 1"]})


def heavy(n):
    res = [None] * n

    def one(i):
        st, _, dt = post("/analyze", HEAVY, timeout=120)
        res[i] = (st, dt)

    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    probes = []
    while any(t.is_alive() for t in ts):
        probes.append(healthz())
        time.sleep(0.1)
    for t in ts:
        t.join()
    wall = time.monotonic() - t0
    lat = [dt * 1000 for st, dt in probes if st == 200]
    return {"requests": n, "statuses": sorted(st for st, _ in res),
            "unanswered": sum(1 for st, _ in res if st < 0), "wall_s": wall,
            "healthz_probes": len(probes), "healthz_failures": sum(1 for st, _ in probes if st != 200),
            "healthz_p99_ms": pct(lat, 99)}


def cpu_attack(pid):
    preds = ["blockIdx.x %% %d == threadIdx.x %% 2" % (i + 2) for i in range(16)]
    body = json.dumps({"part": 1, "blocks": 32768, "threads_per_block": 1024, "predicates": preds,
                       "baseline": preds[0]}, separators=(",", ":"))
    c0 = cpu_s(pid)
    st, out, dt = post("/analyze", body)
    return {"body_bytes": len(body), "status": st, "answer_ms": dt * 1000, "server_cpu_s": cpu_s(pid) - c0}


def framing(source):
    d = os.path.join(source, "tests", "server", "http", "framing")
    cases, ok, smuggled, slow = 0, 0, 0, 0
    for name in sorted(os.listdir(d)):
        if name == "README" or name.startswith("."):
            continue
        with open(os.path.join(d, name, "request"), "rb") as f:
            req = f.read()
        with open(os.path.join(d, name, "status")) as f:
            want = int(f.read())
        out, dt = raw(req, timeout=10)
        cases += 1
        ok += status(out) == want
        smuggled += b"smuggled" in out
        slow += dt > 2
    return {"cases": cases, "as_expected": ok, "smuggled_run": smuggled, "held_over_2s": slow}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--worker", required=True)
    ap.add_argument("--source", default=".")
    ap.add_argument("--slowloris-s", type=float, default=60)
    ap.add_argument("--json")
    a = ap.parse_args()
    res = {}

    p = start(a.binary, a.worker, [])
    try:
        res["slowloris"] = slowloris(a.slowloris_s)
    finally:
        stop(p)

    p = start(a.binary, a.worker, ["--analyze-rate-limit", "0", "--max-analysis-cost", "33554432"])
    try:
        res["heavy8"] = heavy(8)
        res["cpu"] = cpu_attack(p.pid)
        res["framing"] = framing(a.source)
        res["measure"] = {"bodies": 3, "accepted_202": sum(
            1 for b in ['{"scenario": "no-such-scenario"}',
                        '{"part": 1, "blocks": 65537, "threads_per_block": 1024, "predicates": ["lane-parity"],'
                        ' "baseline": "lane-parity"}',
                        '{"part": 1, "predicates": ["lane-parity", "1 << 64"], "baseline": "lane-parity"}']
            if post("/measure", b)[0] == 202)}
        st, _, _ = post("/measure", "{}", ctype=b"text/plain", headers=b"Origin: http://evil.example\r\n")
        res["cross_site"] = {"status": st}
    finally:
        stop(p)

    p = start(a.binary, a.worker, ["--token", "s3cret"])
    try:
        bad = [post("/measure", '{"part": 1}', headers=b"Authorization: Bearer wrong\r\n")[0] for _ in range(10)]
        own = post("/measure", '{"part": 1}', headers=b"Authorization: Bearer s3cret\r\n")[0]
        res["token"] = {"bad_statuses": sorted(set(bad)), "owner_status": own}
    finally:
        stop(p)

    p = start(a.binary, a.worker, ["--trust-forwarded"])
    try:
        through = 0
        for i in range(30):
            st = post("/measure", '{"part": 1, "budget_ms": %d}' % (100 + i), src="127.0.0.2",
                      headers=b"X-Forwarded-For: 10.0.%d.%d\r\n" % (i // 250, i % 250 + 1))[0]
            through += st in (200, 202)
        res["forwarded"] = {"requests": 30, "rate_limit": 10, "got_through": through}
    finally:
        stop(p)

    s, h, c, f = res["slowloris"], res["heavy8"], res["cpu"], res["framing"]
    rows = [
        ("slowloris 300 conns / 10 addrs, /healthz from another",
         "%d of %d probes failed, p99 %.1f ms (max %.1f)" % (s["failures"], s["probes"], s["p99_ms"], s["max_ms"])),
        ("8 concurrent maximal analyses", "%d unanswered; statuses %s in %.1f s; /healthz p99 %.1f ms (%d failed)" % (
            h["unanswered"], h["statuses"], h["wall_s"], h["healthz_p99_ms"], h["healthz_failures"])),
        ("16 x blockIdx.x analysis, 32768 x 1024 threads", "%d in %.1f ms, %.3f s server CPU (body %d bytes)" % (
            c["status"], c["answer_ms"], c["server_cpu_s"], c["body_bytes"])),
        ("framing / smuggling cases", "%d of %d as expected, %d smuggled requests run, %d held > 2 s" % (
            f["as_expected"], f["cases"], f["smuggled_run"], f["held_over_2s"])),
        ("10 bad tokens, then the owner", "bad: %s, owner: %d" % (res["token"]["bad_statuses"],
                                                                  res["token"]["owner_status"])),
        ("30 POSTs varying X-Forwarded-For (limit 10)", "%d got through" % res["forwarded"]["got_through"]),
        ("/measure with what /analyze rejects", "%d of 3 accepted (202)" % res["measure"]["accepted_202"]),
        ("text/plain cross-site POST /measure", "%d" % res["cross_site"]["status"]),
    ]
    w = max(len(r[0]) for r in rows)
    for k, v in rows:
        print("%-*s  %s" % (w, k, v))
    if a.json:
        with open(a.json, "w") as fp:
            json.dump(res, fp, indent=2)


if __name__ == "__main__":
    main()

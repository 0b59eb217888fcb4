#!/usr/bin/env python3
"""soak.py -- a mixed hostile and ordinary load for a while; the server's
resident memory at the start (after a warm-up) and at the end.

A benchmark, not a test: it starts `divergence serve` with the fake GPU
worker and, from several client threads, loops over: /healthz, /predicates,
valid and invalid POST /analyze, POST /measure (distinct jobs, so some run
and some are answered from the cache), GET /jobs/{id}?wait=, event streams,
badly framed and smuggled requests, bodies over the limit, wrong tokens for
nothing, slow connections that the header deadline closes, and connections
dropped mid-request. RSS (VmRSS of the server process) is sampled every
second; growth is end minus the sample at the end of the warm-up.

Usage: soak.py --binary build/divergence --worker build/tests/fake_worker
               [--minutes 10] [--warmup-s 60] [--clients 6] [--keep-jobs 32] [--json out.json]
"""
import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

PORT = int(os.environ.get("SOAK_PORT", "18290"))


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


SRC = threading.local()  # each client connects from its own 127.0.0.x


def sock():
    s = socket.socket()
    s.bind((getattr(SRC, "addr", "127.0.0.1"), 0))
    return s


def raw(data, timeout=10.0, close_early=False):
    s = sock()
    s.settimeout(timeout)
    out = b""
    try:
        s.connect(("127.0.0.1", PORT))
        s.sendall(data)
        if close_early:
            return b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except OSError:
        pass
    finally:
        s.close()
    return out


def req(method, path, body=None, headers=b"", timeout=40.0):
    b = body.encode() if isinstance(body, str) else (body or b"")
    h = b"Content-Type: application/json\r\n" if method == "POST" else b""
    r = (method.encode() + b" " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + h + headers +
         (b"Content-Length: %d\r\n" % len(b) if method == "POST" else b"") + b"\r\n" + b)
    out = raw(r, timeout)
    return int(out[9:12]) if out[:7] == b"HTTP/1." else -1, out


def job_id(out):
    i = out.find(b'"id":"')
    return out[i + 6:i + 38].decode() if i >= 0 else None


def client(stop, counts, seed, framing):
    rnd = random.Random(seed)
    SRC.addr = "127.0.0.%d" % (20 + seed)
    slow = []  # (socket, when opened): at most 2 per client at a time
    while not stop.is_set():
        now = time.monotonic()
        for s, t in [x for x in slow if now - x[1] > 12.0]:
            s.close()
        slow = [x for x in slow if now - x[1] <= 12.0]
        k = rnd.randrange(12)
        if k == 0:
            st, _ = req("GET", "/healthz")
        elif k == 1:
            st, _ = req("GET", "/predicates")
        elif k == 2:
            st, _ = req("POST", "/analyze", '{"part": 1, "predicates": ["threadIdx.x %% %d < 7", "lane-parity"]}'
                        % rnd.randrange(2, 64))
        elif k == 3:
            st, _ = req("POST", "/analyze", '{"part": 1, "predicates": ["(threadIdx.x"]}')
        elif k == 4:
            st, out = req("POST", "/measure", '{"part": 1, "budget_ms": %d}' % rnd.randrange(100, 5000))
            jid = job_id(out)
            if jid:
                st, _ = req("GET", "/jobs/%s?wait=5" % jid)
        elif k == 5:
            st, out = req("POST", "/measure", '{"part": 1, "iterations": 3333, "budget_ms": %d}'
                          % rnd.randrange(100, 400))
            jid = job_id(out)
            if jid:
                st, _ = req("GET", "/jobs/%s" % jid, headers=b"Accept: text/event-stream\r\n")
        elif k == 6:
            st = -2
            raw(rnd.choice(framing), timeout=5)
        elif k == 7:
            out = raw(b"POST /measure HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 70000\r\n\r\n")  # refused from the header, before any body
            st = int(out[9:12]) if out[:7] == b"HTTP/1." else -1
        elif k == 8:
            st, _ = req("POST", "/measure", "{}", headers=b"Authorization: Bearer wrong\r\n")
        elif k == 9:
            if len(slow) >= 2:
                continue
            st = -3  # a slow connection the header deadline must close
            s = sock()
            try:
                s.connect(("127.0.0.1", PORT))
                s.send(b"GET /healthz HTTP/1.1\r\n")
            except OSError:
                pass
            slow.append((s, now))
        elif k == 10:
            st = -4  # dropped mid-body
            raw(b"POST /analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
                close_early=True)
        else:
            st, _ = req("GET", "/jobs/%032x" % rnd.getrandbits(128))
        counts[st] = counts.get(st, 0) + 1
        time.sleep(0.005)  # a few hundred connections a second: no ephemeral-port exhaustion
    for s, _ in slow:
        s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--worker", required=True)
    ap.add_argument("--source", default=".")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--warmup-s", type=float, default=60)
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--keep-jobs", type=int, default=32,
                    help="finished jobs and cache entries kept: small, so the tables are full after the warm-up")
    ap.add_argument("--json")
    a = ap.parse_args()
    fdir = os.path.join(a.source, "tests", "server", "http", "framing")
    framing = []
    for name in sorted(os.listdir(fdir)):
        p = os.path.join(fdir, name, "request")
        if os.path.exists(p):
            with open(p, "rb") as f:
                framing.append(f.read())
    log = tempfile.NamedTemporaryFile(prefix="soak-", suffix=".log", delete=False)
    p = subprocess.Popen([a.binary, "serve", "--port", str(PORT), "--worker-cmd", a.worker, "--rate-limit", "0",
                          "--analyze-rate-limit", "0", "--log-level", "warning", "--keep-jobs", str(a.keep_jobs)],
                         stderr=log,
                         stdout=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    rss0 = rss_kb(p.pid)
    stop = threading.Event()
    counts = [dict() for _ in range(a.clients)]
    ts = [threading.Thread(target=client, args=(stop, counts[i], i, framing)) for i in range(a.clients)]
    for t in ts:
        t.start()
    t0 = time.monotonic()
    samples = []
    warm = None
    while time.monotonic() - t0 < a.minutes * 60:
        time.sleep(1)
        samples.append((time.monotonic() - t0, rss_kb(p.pid)))
        if warm is None and samples[-1][0] >= a.warmup_s:
            warm = samples[-1][1]
    stop.set()
    for t in ts:
        t.join()
    end = rss_kb(p.pid)
    alive = p.poll() is None
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "killed"
    total = {}
    for c in counts:
        for k, v in c.items():
            total[k] = total.get(k, 0) + v
    n = sum(total.values())
    print("soak: %.1f min, %d clients, %d operations (statuses: %s)" % (
        a.minutes, a.clients, n, ", ".join("%s: %d" % (k if k >= 0 else {-1: "no answer", -2: "framing",
                                                                           -3: "slow", -4: "dropped"}[k], v)
                                          for k, v in sorted(total.items()))))
    print("rss: %d kB at start, %d kB after the %g s warm-up, %d kB at the end: %+d kB since the warm-up" % (
        rss0, warm if warm is not None else -1, a.warmup_s, end, end - (warm if warm is not None else rss0)))
    print("server %s during the soak, exit status %s" % ("alive" if alive else "DIED", rc))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"minutes": a.minutes, "operations": n, "statuses": {str(k): v for k, v in total.items()},
                       "rss_start_kb": rss0, "rss_warm_kb": warm, "rss_end_kb": end, "samples": samples,
                       "exit": rc}, f)
    sys.exit(0 if alive and rc == 0 else 1)


if __name__ == "__main__":
    main()

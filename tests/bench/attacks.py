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
and the held requests (long-polls GET /jobs/{id}?wait=30 and event
streams) on one running job (the fake worker's hanging job):

  held        9 addresses (127.0.0.2..10) x 36 long-polls, then x 36
              streams, each asked again when answered (a client's loop),
              while 127.0.0.11 probes /healthz every 0.25 s: failed probes
  hangups     40 long-polls (then 40 streams) from 127.0.0.2 dropped after
              0.2 s: seconds until that address is answered again
  nginx       the nginx site of --source (deploy/nginx/divergence.conf, real
              nginx, TLS) in front: one client (127.0.0.2) with 40
              long-polls, then 151 other clients' /healthz: how many failed
  shutdowns   30 SIGTERMs with 3 long-polls, a stream and an analysis
              held: requests left with no answer (or a stream with no
              terminal event)
  keepjobs    --keep-jobs 1 with 6 rounds of 16 streams on jobs evicted
              under them, 20 runs (and 20 of --asan-binary): server crashes
  retry       a full queue (--queue 1) behind a hanging job with 20 s
              left to its deadline, after a quick one of its kind: the
              Retry-After answered (the queue's estimate: its kind runs in
              milliseconds, so 1; never the deadline)
  cached      a cached answer whose job was pushed out of --keep-jobs 2:
              the status its location answers

Usage: attacks.py --binary build/divergence --worker build/tests/fake_worker
                  [--source .] [--slowloris-s 60] [--held-s 30]
                  [--asan-binary build-debug/divergence] [--only held,nginx,...]
                  [--json out.json]
Linux only (binds 127.0.0.x source addresses; reads /proc for CPU time).
"""
import argparse
import json
import multiprocessing
import os
import re
import select
import shutil
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
    p.log = log.name
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=0.2).close()
            return p
        except OSError:
            time.sleep(0.1)
    p.kill()
    sys.exit("attacks: the server did not start (log: %s)" % log.name)


def children(pid):
    """The server's child processes (its GPU worker), from /proc."""
    kids = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                kids += [int(k) for k in f.read().split()]
    except OSError:
        pass
    return kids


def stop(p, timeout=15):
    """SIGTERM and the exit status; past `timeout` SIGKILL, the worker too
    (a hanging fake job would outlive its server)."""
    kids = children(p.pid)
    p.send_signal(signal.SIGTERM)
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass
        return -9


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


# ---- held requests ----------------------------------------------------------

HANG = '{"part": 1, "iterations": 1111, "budget_ms": 100}'


def job_id(out):
    m = re.search(rb'"id":"([0-9a-f]{32})"', out)
    return m.group(1).decode() if m else None


def hanging_job():
    st, out, _ = post("/measure", HANG)
    jid = job_id(out)
    if st != 202 or not jid:
        sys.exit("attacks: the hanging job was not queued: %d %r" % (st, out[:200]))
    return jid


def hold_request(jid, stream, extra=b""):
    return (b"GET /jobs/%s%s HTTP/1.1\r\nHost: x\r\n%s%s\r\n" %
            (jid.encode(), b"" if stream else b"?wait=30", b"Accept: text/event-stream\r\n" if stream else b"", extra))


def holders(jid, addrs, per_addr, stream, seconds, first=2):
    """`per_addr` held requests from each of `addrs` addresses, each asked
    again 100 ms after it is answered (a long-poll's answer, a stream's end)
    or closed. Returns (answered early, dials)."""
    n = addrs * per_addr
    socks = [None] * n
    pending = [b""] * n  # request bytes not sent yet
    again = [0.0] * n
    answered = dials = 0
    stop_at = time.monotonic() + seconds
    while time.monotonic() < stop_at:
        now = time.monotonic()
        for i in range(n):
            if socks[i] is None and now >= again[i]:
                s = socket.socket()
                s.setblocking(False)
                try:
                    s.bind(("127.0.0.%d" % (first + i // per_addr), 0))
                    s.connect_ex(("127.0.0.1", PORT))
                except OSError:
                    s.close()
                    again[i] = now + 0.1
                    continue
                socks[i] = s
                dials += 1
                pending[i] = hold_request(jid, stream)
        index = {s: i for i, s in enumerate(socks) if s is not None}
        live = list(index)
        wr = [s for s in live if pending[index[s]]]
        if not live:
            time.sleep(0.05)
            continue
        r, w, _ = select.select(live, wr, [], 0.05)
        for s in w:
            i = index[s]
            try:
                k = s.send(pending[i])
                pending[i] = pending[i][k:]
            except OSError:
                pass
        for s in r:
            i = index[s]
            try:
                d = s.recv(65536)
            except OSError:
                d = b""
            done = not d or not stream or b"\r\n0\r\n\r\n" in d
            if d and done:
                answered += 1
            if done:
                s.close()
                socks[i] = None
                again[i] = time.monotonic() + 0.1
    for s in socks:
        if s is not None:
            s.close()
    return answered, dials


def held_attack(binary, worker, stream, seconds):
    p = start(binary, worker, ["--rate-limit", "0", "--job-deadline-ms", str(int((seconds + 8) * 1000))])
    try:
        jid = hanging_job()
        q = multiprocessing.Queue()
        child = multiprocessing.Process(target=lambda: q.put(holders(jid, 9, 36, stream, seconds + 1.5)))
        child.start()
        time.sleep(1.5)
        results = []
        stop_at = time.monotonic() + seconds
        while time.monotonic() < stop_at:
            results.append(healthz("127.0.0.11"))
            time.sleep(0.25)
        answered, dials = q.get(timeout=seconds + 60)
        child.join()
    finally:
        stop(p, timeout=seconds + 20)
    lat = [dt * 1000 for st, dt in results if st == 200]
    return {"probes": len(results), "failures": sum(1 for st, _ in results if st != 200),
            "p99_ms": pct(lat, 99), "answered_early": answered, "dials": dials}


def hangup_attack(binary, worker, stream):
    p = start(binary, worker, ["--rate-limit", "0", "--job-deadline-ms", "60000"])
    try:
        jid = hanging_job()
        socks = []
        for _ in range(40):
            s = socket.socket()
            s.bind(("127.0.0.2", 0))
            s.settimeout(1)
            try:
                s.connect(("127.0.0.1", PORT))
                s.sendall(hold_request(jid, stream))
            except OSError:
                pass
            socks.append(s)
        time.sleep(0.2)
        for s in socks:
            s.close()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 40:
            if healthz("127.0.0.2", timeout=1)[0] == 200:
                break
            time.sleep(0.05)
        took = time.monotonic() - t0
    finally:
        stop(p, timeout=70)
    return {"requests": 40, "answered_again_s": took}


def nginx_attack(binary, worker, source):
    """The site of `source` under real nginx (TLS, throwaway certificate),
    the server behind it with --trust-forwarded as the site says."""
    if not shutil.which("nginx") or not shutil.which("openssl") or not shutil.which("curl"):
        return {"skipped": "nginx, openssl or curl missing"}
    d = tempfile.mkdtemp(prefix="attacks-nginx-")
    os.chmod(d, 0o755)
    for sub in ("logs", "cache", "static"):
        os.makedirs(os.path.join(d, sub))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    "/CN=divergence.example.org", "-keyout", d + "/key.pem", "-out", d + "/cert.pem"],
                   check=True, capture_output=True)
    with open(os.path.join(source, "deploy", "nginx", "divergence.conf")) as f:
        site = f.read()
    nport = PORT + 1
    site = (site.replace("/etc/ssl/certs/divergence.crt", d + "/cert.pem")
            .replace("/etc/ssl/private/divergence.key", d + "/key.pem")
            .replace("/var/cache/nginx/divergence", d + "/cache").replace("/var/www/html", d)
            .replace("/opt/divergence/share/divergence/static", d + "/static")
            .replace("server 127.0.0.1:8080;", "server 127.0.0.1:%d;" % PORT)
            .replace("listen 443 ssl http2;", "listen 127.0.0.1:%d ssl;" % nport)
            .replace("listen 80;", "listen 127.0.0.1:%d;" % (nport + 1)))
    site = "\n".join(l for l in site.split("\n") if "listen [::]" not in l)
    with open(d + "/site.conf", "w") as f:
        f.write(site)
    with open(d + "/nginx.conf", "w") as f:
        f.write("pid %s/nginx.pid;\nerror_log %s/logs/error.log;\nevents { worker_connections 1024; }\n"
                "http {\n access_log off;\n client_body_temp_path %s/body;\n proxy_temp_path %s/proxy;\n"
                " fastcgi_temp_path %s/fastcgi;\n uwsgi_temp_path %s/uwsgi;\n scgi_temp_path %s/scgi;\n"
                " include %s/site.conf;\n}\n" % ((d,) * 8))
    p = start(binary, worker, ["--rate-limit", "0", "--trust-forwarded", "--job-deadline-ms", "40000"])
    curls = []
    try:
        subprocess.run(["nginx", "-p", d, "-c", d + "/nginx.conf"], check=True)
        u = "https://127.0.0.1:%d" % nport
        jid = hanging_job()
        for _ in range(40):
            curls.append(subprocess.Popen(["curl", "-ks", "--interface", "127.0.0.2", "-o", "/dev/null",
                                           "-w", "%{http_code}", "--max-time", "40", u + "/jobs/%s?wait=30" % jid],
                                          stdout=subprocess.PIPE))
        time.sleep(2)
        failed = 0
        for i in range(151):
            r = subprocess.run(["curl", "-ks", "--interface", "127.0.0.%d" % (3 + i % 150), "-o", "/dev/null",
                                "-w", "%{http_code}", "--max-time", "5", u + "/healthz"], capture_output=True)
            failed += r.stdout != b"200"
        early = [c for c in curls if c.poll() is not None]
        codes = sorted(c.stdout.read().decode() for c in early)
    finally:
        for c in curls:
            if c.poll() is None:
                c.kill()
            c.wait()
        subprocess.run(["nginx", "-p", d, "-c", d + "/nginx.conf", "-s", "stop"], capture_output=True)
        stop(p, timeout=50)
        shutil.rmtree(d, ignore_errors=True)
    return {"others": 151, "others_failed": failed, "client_answered_early": len(early),
            "client_early_statuses": {c: codes.count(c) for c in set(codes)}}


def shutdown_once(binary, worker):
    """One SIGTERM with 3 long-polls, a stream and an analysis held.
    Returns how many of the five were left with no (terminal) answer."""
    p = start(binary, worker, ["--rate-limit", "0", "--analyze-rate-limit", "0", "--job-deadline-ms", "2000"])
    res = {}
    try:
        jid = hanging_job()

        def one(k, data):
            out, _ = raw(data, timeout=20)
            res[k] = out

        reqs = [("poll%d" % i, hold_request(jid, False)[:-2] + b"Connection: close\r\n\r\n") for i in range(3)]
        reqs.append(("stream", hold_request(jid, True)[:-2] + b"Connection: close\r\n\r\n"))
        body = HEAVY.encode()
        reqs.append(("analysis", b"POST /analyze HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                 b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body))
        ts = [threading.Thread(target=one, args=kv) for kv in reqs]
        for t in ts:
            t.start()
        time.sleep(0.5)
    finally:
        rc = stop(p, timeout=20)
    for t in ts:
        t.join()
    bad = 0
    for k, out in res.items():
        if k == "stream":
            bad += not (b"event: failed" in out or b"event: done" in out)
        else:
            bad += status(out) < 0
    return bad + (5 - len(res)), rc


def keepjobs_once(binary, worker):
    """--keep-jobs 1: 6 rounds of 16 streams on jobs evicted under them.
    Returns the server's exit status (0: it stopped cleanly)."""
    p = start(binary, worker, ["--rate-limit", "0", "--keep-jobs", "1", "--queue", "64", "--per-ip-limit", "64",
                               "--cache-ttl", "0"])
    crashed = False
    try:
        for rnd in range(6):
            ids = []
            for i in range(16):
                st, out, _ = post("/measure", '{"part": 1, "budget_ms": %d}' % (100 + rnd * 16 + i))
                ids.append(job_id(out))
            ts = []
            for i, jid in enumerate(ids):
                if not jid:
                    continue
                t = threading.Thread(target=raw, args=(hold_request(jid, True)[:-2] + b"Connection: close\r\n\r\n",
                                                       "127.0.0.%d" % (1 + i % 4), 10))
                t.start()
                ts.append(t)
            for t in ts:
                t.join()
            if p.poll() is not None:
                crashed = True
                break
    finally:
        rc = p.returncode if crashed else stop(p)
    return rc


def retry_attack(binary, worker):
    p = start(binary, worker, ["--rate-limit", "0", "--queue", "1", "--job-deadline-ms", "20000"])
    try:
        st, out, _ = post("/measure", '{"part": 1, "budget_ms": 101}')
        time.sleep(0.5)  # the quick job is done
        hanging_job()
        time.sleep(0.3)
        post("/measure", '{"part": 1, "budget_ms": 102}')
        st, out, _ = post("/measure", '{"part": 1, "budget_ms": 103}')
        m = re.search(rb"\r\nRetry-After: (\d+)", out)
    finally:
        stop(p, timeout=30)
    return {"status": st, "retry_after_s": int(m.group(1)) if m else None, "deadline_left_s": 19.5}


def cached_attack(binary, worker):
    p = start(binary, worker, ["--rate-limit", "0", "--keep-jobs", "2"])
    try:
        body = '{"part": 1, "budget_ms": 111}'
        post("/measure", body)
        time.sleep(0.5)
        for i in range(2):
            post("/measure", '{"part": 1, "iterations": 5555, "budget_ms": %d}' % (120 + i))
            time.sleep(0.5)
        st, out, _ = post("/measure", body)
        m = re.search(rb'"location":"(/jobs/[0-9a-f]+)"', out)
        loc = m.group(1).decode() if m else None
        got, _ = raw(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % loc.encode()) if loc else (b"", 0)
    finally:
        stop(p)
    return {"cached_status": st, "location": loc, "location_status": status(got)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--worker", required=True)
    ap.add_argument("--source", default=".")
    ap.add_argument("--slowloris-s", type=float, default=60)
    ap.add_argument("--held-s", type=float, default=30)
    ap.add_argument("--asan-binary")
    ap.add_argument("--only", help="comma-separated: slowloris,heavy,token,forwarded,held,hangups,nginx,"
                                   "shutdowns,keepjobs,retry,cached (default: all)")
    ap.add_argument("--json")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    want = lambda k: only is None or k in only
    res = {}
    rows = []

    if want("held"):
        for stream in (False, True):
            k = "held_streams" if stream else "held_polls"
            res[k] = r = held_attack(a.binary, a.worker, stream, a.held_s)
            rows.append(("9 addrs x 36 %s, /healthz from a 10th" % ("streams" if stream else "long-polls"),
                         "%d of %d probes failed, p99 %.1f ms (%d answered early)" % (
                             r["failures"], r["probes"], r["p99_ms"], r["answered_early"])))
    if want("hangups"):
        for stream in (False, True):
            k = "hangup_streams" if stream else "hangup_polls"
            res[k] = r = hangup_attack(a.binary, a.worker, stream)
            rows.append(("40 %s dropped after 0.2 s" % ("streams" if stream else "long-polls"),
                         "address answered again after %.2f s" % r["answered_again_s"]))
    if want("nginx"):
        res["nginx"] = r = nginx_attack(a.binary, a.worker, a.source)
        rows.append(("behind nginx: 1 client x 40 long-polls, 151 others",
                     r.get("skipped") or "%d of 151 others failed; the client's early answers %s" % (
                         r["others_failed"], r["client_early_statuses"])))
    if want("shutdowns"):
        outs = [shutdown_once(a.binary, a.worker) for _ in range(30)]
        res["shutdowns"] = {"runs": 30, "unanswered": sum(b for b, _ in outs),
                            "runs_with_unanswered": sum(1 for b, _ in outs if b),
                            "exit_statuses": sorted(set(rc for _, rc in outs))}
        rows.append(("30 SIGTERMs, 5 requests held each", "%d unanswered (in %d runs); exit %s" % (
            res["shutdowns"]["unanswered"], res["shutdowns"]["runs_with_unanswered"], res["shutdowns"]["exit_statuses"])))
    if want("keepjobs"):
        for label, b in [("release", a.binary)] + ([("asan", a.asan_binary)] if a.asan_binary else []):
            rcs = [keepjobs_once(b, a.worker) for _ in range(20)]
            res["keepjobs_" + label] = {"runs": 20, "crashes": sum(1 for rc in rcs if rc != 0),
                                        "exit_statuses": sorted(set(rcs))}
            rows.append(("--keep-jobs 1 with streams, 20 runs (%s)" % label, "%d crashed (exit %s)" % (
                res["keepjobs_" + label]["crashes"], res["keepjobs_" + label]["exit_statuses"])))
    if want("retry"):
        res["retry"] = r = retry_attack(a.binary, a.worker)
        rows.append(("full queue, running job 20 s from its deadline (estimate, not deadline)", "%d, Retry-After: %s" % (
            r["status"], r["retry_after_s"])))
    if want("cached"):
        res["cached"] = r = cached_attack(a.binary, a.worker)
        rows.append(("cached answer, its job pushed out of --keep-jobs 2", "location answers %d" % r["location_status"]))
    old = []
    if want("slowloris"):
        p = start(a.binary, a.worker, [])
        try:
            res["slowloris"] = s = slowloris(a.slowloris_s)
        finally:
            stop(p)
        old.append(("slowloris 300 conns / 10 addrs, /healthz from another",
                    "%d of %d probes failed, p99 %.1f ms (max %.1f)" % (s["failures"], s["probes"], s["p99_ms"],
                                                                        s["max_ms"])))
    if want("heavy"):
        p = start(a.binary, a.worker, ["--analyze-rate-limit", "0", "--max-analysis-cost", "33554432"])
        try:
            res["heavy8"] = h = heavy(8)
            res["cpu"] = c = cpu_attack(p.pid)
            res["framing"] = f = framing(a.source)
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
        old += [
            ("8 concurrent maximal analyses", "%d unanswered; statuses %s in %.1f s; /healthz p99 %.1f ms (%d failed)" % (
                h["unanswered"], h["statuses"], h["wall_s"], h["healthz_p99_ms"], h["healthz_failures"])),
            ("16 x blockIdx.x analysis, 32768 x 1024 threads", "%d in %.1f ms, %.3f s server CPU (body %d bytes)" % (
                c["status"], c["answer_ms"], c["server_cpu_s"], c["body_bytes"])),
            ("framing / smuggling cases", "%d of %d as expected, %d smuggled requests run, %d held > 2 s" % (
                f["as_expected"], f["cases"], f["smuggled_run"], f["held_over_2s"])),
            ("/measure with what /analyze rejects", "%d of 3 accepted (202)" % res["measure"]["accepted_202"]),
            ("text/plain cross-site POST /measure", "%d" % res["cross_site"]["status"]),
        ]
    if want("token"):
        p = start(a.binary, a.worker, ["--token", "s3cret"])
        try:
            bad = [post("/measure", '{"part": 1}', headers=b"Authorization: Bearer wrong\r\n")[0] for _ in range(10)]
            own = post("/measure", '{"part": 1}', headers=b"Authorization: Bearer s3cret\r\n")[0]
            res["token"] = {"bad_statuses": sorted(set(bad)), "owner_status": own}
        finally:
            stop(p)
        old.append(("10 bad tokens, then the owner", "bad: %s, owner: %d" % (res["token"]["bad_statuses"],
                                                                             res["token"]["owner_status"])))
    if want("forwarded"):
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
        old.append(("30 POSTs varying X-Forwarded-For (limit 10)", "%d got through" % res["forwarded"]["got_through"]))
    print_rows(old + rows, a.json, res)


def print_rows(rows, path, res):
    w = max(len(r[0]) for r in rows) if rows else 0
    for k, v in rows:
        print("%-*s  %s" % (w, k, v))
    if path:
        with open(path, "w") as fp:
            json.dump(res, fp, indent=2)


if __name__ == "__main__":
    main()

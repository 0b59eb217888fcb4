#!/usr/bin/env python3
"""loadgen_check.py BENCH_LOADGEN -- the load generator against a server that
watches it.

A small HTTP/1.1 server on 127.0.0.1 (one thread per connection) records the
source address of every connection and counts the responses it writes; it
answers keep-alive with a Content-Length body, except where a path asks for
"Connection: close" or a chunked body. The checks:
  - 12 connections from 4 addresses arrive from exactly 127.0.100.1-4, three
    each, and stay open (keep-alive: no reconnects);
  - the generator counts no more requests than the server answered, and at
    most one a connection fewer (those in flight at the end);
  - the status classes, latency percentiles and the POST body arrive;
  - "Connection: close" makes it reconnect for every request, and a chunked
    body is counted as a framing error, not as a response.
Exit 0 when all hold, 1 otherwise.
"""
import json
import socket
import subprocess
import sys
import threading


class Server:
    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.peers = {}      # address -> connections
        self.answered = 0
        self.bodies = set()
        self.stop = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.stop:
            try:
                c, (addr, _) = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.peers[addr] = self.peers.get(addr, 0) + 1
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    d = c.recv(65536)
                    if not d:
                        return
                    buf += d
                head, buf = buf.split(b"\r\n\r\n", 1)
                lines = head.decode().split("\r\n")
                path = lines[0].split()[1]
                length = next((int(l.split(":", 1)[1]) for l in lines[1:] if l.lower().startswith("content-length:")), 0)
                while len(buf) < length:
                    buf += c.recv(65536)
                body, buf = buf[:length], buf[length:]
                if body:
                    with self.lock:
                        self.bodies.add(body)
                if path == "/chunked":
                    c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
                    continue
                status = b"404 Not Found" if path == "/missing" else b"200 OK"
                extra = b"Connection: close\r\n" if path == "/close" else b""
                # Counted before it is written: the generator may read it and
                # exit before this thread runs again.
                with self.lock:
                    self.answered += 1
                c.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Length: 5\r\n" + extra + b"\r\nhello")
                if extra:
                    return
        except OSError:
            return
        finally:
            c.close()

    def reset(self):
        with self.lock:
            self.peers, self.answered, self.bodies = {}, 0, set()


def run(loadgen, port, path, *args):
    out = subprocess.run([loadgen, *args, f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True,
                         timeout=30)
    if out.returncode != 0:
        raise SystemExit(f"bench_loadgen exited {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)


def main():
    loadgen = sys.argv[1]
    srv = Server()
    problems = []

    def check(ok, what):
        print(("PASS: " if ok else "FAIL: ") + what)
        if not ok:
            problems.append(what)

    r = run(loadgen, srv.port, "/ok", "-c", "12", "-t", "3", "-d", "1", "-a", "4", "-s", "127.0.100.1",
            "-m", "POST", "-H", "Content-Type: application/json", "-b", '{"x":1}')
    with srv.lock:
        peers, answered, bodies = dict(srv.peers), srv.answered, set(srv.bodies)
    want = {f"127.0.100.{i}": 3 for i in range(1, 5)}
    check(peers == want, f"12 connections from 4 addresses, 3 each: {peers}")
    check(r["addresses"] == 4 and r["first_address"] == "127.0.100.1", "it reports its addresses")
    check(r["requests"] > 100, f"a load, not a trickle: {r['requests']} requests in 1 s")
    check(answered - 12 <= r["requests"] <= answered, f"counted {r['requests']}, the server answered {answered}")
    check(r["status"]["2xx"] == r["requests"] and r["non_2xx"] == 0, "every response 2xx")
    check(sum(r["errors"].values()) == 0, f"no socket errors: {r['errors']}")
    check(0 < r["p50_ms"] <= r["p99_ms"] <= r["max_ms"], f"percentiles in order: {r['p50_ms']} {r['p99_ms']} {r['max_ms']}")
    check(bodies == {b'{"x":1}'}, f"the POST body arrives whole: {bodies}")

    srv.reset()
    r = run(loadgen, srv.port, "/missing", "-c", "4", "-t", "1", "-d", "1")
    check(r["status"]["4xx"] == r["requests"] > 0 and r["non_2xx"] == r["requests"], "404s counted as 4xx and non-2xx")
    check(set(srv.peers) == {"127.0.0.1"} and r["addresses"] == 0, "without -a it connects from the default address")

    srv.reset()
    r = run(loadgen, srv.port, "/close", "-c", "2", "-t", "1", "-d", "1", "-a", "2")
    with srv.lock:
        conns = sum(srv.peers.values())
    check(r["requests"] > 10 and conns >= r["requests"], f"Connection: close reopens: {r['requests']} requests, {conns} connections")

    srv.reset()
    r = run(loadgen, srv.port, "/chunked", "-c", "2", "-t", "1", "-d", "1")
    check(r["requests"] == 0 and r["errors"]["framing"] > 0, f"a chunked body is a framing error: {r['errors']}")

    bad = subprocess.run([loadgen, "-c", "1", "-a", "300", "-s", "127.255.255.1", f"http://127.0.0.1:{srv.port}/"],
                         capture_output=True, text=True)
    check(bad.returncode == 2 and "127.0.0.0/8" in bad.stderr, "source addresses outside loopback are refused")
    srv.stop = True
    srv.sock.close()
    print(f"loadgen_check: {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

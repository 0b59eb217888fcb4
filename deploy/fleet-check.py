#!/usr/bin/env python3
"""fleet-check.py -- one server per GPU behind the nginx front, checked end to end.

For a host with several GPUs (or, as a functional test only, one GPU named
twice: --devices 0 0), in one run:

  1. starts one `divergence serve --device N --job-id-prefix 0I` per entry of
     --devices (ports base, base+1, ...), all sharing one evidence directory;
  2. starts nginx with a front generated from each server's GET /device, laid
     out as deploy/nginx/divergence-fleet.conf: POST /gpus/{slug}/measure to a
     server of that GPU model, GET /jobs/{id} back to the server whose prefix
     the id carries, everything else to any server;
  3. runs `divergence refresh` against every server at once, sampling
     nvidia-smi meanwhile to show which process runs on which GPU;
  4. through the front: a measurement per server (POST /gpus/{slug}/measure,
     round-robin inside a model), each job followed with GET /jobs/{id}?wait=
     through the front, an unknown model (404), and GET /evidence/latest;
  5. both lesson tables measured on every server at the same time (every
     server busy at once), printed side by side with each GPU's clock and
     noise, and whether the ratios agree within their noise.

Writes a transcript (stdout) and, with --out, every document and log.
Usage: fleet-check.py --bin DIR [--devices 0 1] [--nginx nginx] [--out DIR]
                      [--base-port 8080] [--front-port 8090]
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
import threading
import time
import urllib.error
import urllib.request


def http(method, url, body=None, timeout=60):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, {"raw": raw.decode(errors="replace")}


def slug_of(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def wait_done(base, job_id, limit_s=600):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        code, j = http("GET", f"{base}/jobs/{job_id}?wait=30", timeout=40)
        if code != 200:
            return code, j
        if j.get("state") in ("done", "failed"):
            return code, j
    return 0, {"error": "timed out"}


NGINX_CONF = """pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
    access_log {d}/access.log;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    map $gpu_slug $gpu_pool {{
{pools}
        default "";
    }}
    map $uri $job_owner {{
{owners}
        default "";
    }}
{upstreams}
    upstream divergence_any {{
{any}
    }}
    server {{
        listen 127.0.0.1:{front};
        client_max_body_size 64k;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_read_timeout 60s;
        proxy_buffers 16 16k;
        proxy_max_temp_file_size 0;
        default_type application/json;
        location ~ ^/gpus/(?<gpu_slug>[a-z0-9]+(-[a-z0-9]+)*)/measure$ {{
            if ($gpu_pool = "") {{
                return 404 '{{"error":{{"status":404,"field":"gpu","reason":"no server of GPU model $gpu_slug behind this front"}}}}\\n';
            }}
            proxy_pass http://$gpu_pool/measure;
        }}
        location = /measure {{ proxy_pass http://divergence_any; }}
        location /jobs/ {{
            if ($job_owner = "") {{
                return 404 '{{"error":{{"status":404,"field":"id","reason":"no server behind this front owns job ids like this one"}}}}\\n';
            }}
            proxy_pass http://$job_owner;
        }}
        location / {{ proxy_pass http://divergence_any; }}
    }}
}}
"""


def table_rows(doc):
    out = {}
    for t in doc.get("tables", []):
        for r in t.get("rows", []):
            out[(t["id"], r["name"])] = r
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="folder holding divergence and divergence-gpu")
    ap.add_argument("--devices", nargs="+", default=["0", "1"])
    ap.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    ap.add_argument("--base-port", type=int, default=8080)
    ap.add_argument("--front-port", type=int, default=8090)
    ap.add_argument("--worker-cmd", help="a stand-in GPU worker (to try the script without a GPU)")
    ap.add_argument("--static-dir")
    ap.add_argument("--serial", action="store_true",
                    help="refresh and measure one server after the other (one GPU named twice: two "
                         "servers timing on one GPU at once disturb each other)")
    ap.add_argument("--out")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="dvfleet.")
    out = args.out or tmp
    os.makedirs(out, exist_ok=True)
    ev = os.path.join(tmp, "evidence")
    os.makedirs(ev)
    procs, servers = [], []
    ok = True

    def say(*a):
        print(*a, flush=True)

    try:
        for i, dev in enumerate(args.devices):
            port = args.base_port + i
            cmd = [os.path.join(args.bin, "divergence"), "serve", "--port", str(port), "--device", dev,
                   "--job-id-prefix", "%02x" % i, "--evidence-dir", ev, "--rate-limit", "0",
                   "--analyze-rate-limit", "0"]
            if args.worker_cmd:
                cmd += ["--worker-cmd", args.worker_cmd + " --device " + dev]
            if args.static_dir:
                cmd += ["--static-dir", args.static_dir]
            log = open(os.path.join(out, f"server{i}.log"), "w")
            procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
            servers.append({"index": i, "device": dev, "port": port, "base": f"http://127.0.0.1:{port}",
                            "prefix": "%02x" % i})
        for s in servers:
            for _ in range(600):
                try:
                    if http("GET", s["base"] + "/readyz", timeout=2)[0] == 200:
                        break
                except (urllib.error.URLError, ConnectionError):
                    pass
                time.sleep(0.1)
            else:
                raise SystemExit(f"server {s['index']} (--device {s['device']}) not ready; see server{s['index']}.log")
            _, d = http("GET", s["base"] + "/device")
            dv = d.get("device", d)
            s["name"] = dv.get("name") or "unknown"
            s["slug"] = slug_of(s["name"])
            s["worker_pid"] = (d.get("worker") or {}).get("pid")
            s["pci"] = dv.get("pci_bus_id")
            say(f"server {s['index']}: port {s['port']}, --device {s['device']}, {s['name']} ({s['slug']}), "
                f"PCI {s['pci']}, worker pid {s['worker_pid']}, job ids {s['prefix']}...")

        # The front, generated from what the servers say they own.
        nd = os.path.join(tmp, "nginx")
        os.makedirs(nd)
        slugs = sorted({s["slug"] for s in servers})
        pools = "\n".join(f"        {g} fleet_{g.replace('-', '_')};" for g in slugs)
        owners = "\n".join(f"        ~^/jobs/{s['prefix']} 127.0.0.1:{s['port']};" for s in servers)
        ups = "\n".join("    upstream fleet_%s {\n%s\n    }" % (g.replace("-", "_"), "\n".join(
            f"        server 127.0.0.1:{s['port']};" for s in servers if s["slug"] == g)) for g in slugs)
        anyp = "\n".join(f"        server 127.0.0.1:{s['port']};" for s in servers)
        conf = NGINX_CONF.format(d=nd, pools=pools, owners=owners, upstreams=ups, any=anyp, front=args.front_port)
        with open(os.path.join(nd, "nginx.conf"), "w") as f:
            f.write(conf)
        shutil.copy(os.path.join(nd, "nginx.conf"), os.path.join(out, "front.conf"))
        subprocess.run([args.nginx, "-e", os.path.join(nd, "error.log"), "-p", nd, "-c",
                        os.path.join(nd, "nginx.conf")], check=True)
        front = f"http://127.0.0.1:{args.front_port}"
        say(f"front: nginx on {front}, models {', '.join(slugs)}")

        # nvidia-smi sampling while the GPUs work.
        smi = shutil.which("nvidia-smi")
        stop = threading.Event()
        samples = []

        def sample():
            while not stop.is_set():
                if smi:
                    r = subprocess.run([smi, "--query-compute-apps=pid,process_name,gpu_bus_id,used_memory",
                                        "--format=csv,noheader"], capture_output=True, text=True)
                    for line in r.stdout.strip().splitlines():
                        samples.append(line.strip())
                stop.wait(0.5)

        th = threading.Thread(target=sample, daemon=True)
        th.start()

        # 3. A refresh on every server at once.
        say("\nrefresh, " + ("one server after the other:" if args.serial else "every server at once:"))
        refs = []
        for s in servers:
            refs.append(subprocess.Popen([os.path.join(args.bin, "divergence"), "refresh", "--server", s["base"],
                                          "--timeout", "900"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         text=True))
            if args.serial:
                refs[-1].wait()
        for s, p in zip(servers, refs):
            text = p.communicate()[0]
            s["refresh_rc"] = p.returncode
            ok &= p.returncode == 0
            say(f"-- server {s['index']} ({s['slug']}): exit {p.returncode}")
            for line in text.strip().splitlines():
                say("   " + line)

        # 4. Routes through the front.
        say("\nthrough the front:")
        per_model = {}
        for s in servers:
            per_model.setdefault(s["slug"], []).append(s)
        jobs = []
        for g, members in per_model.items():
            for k in range(len(members)):
                code, j = http("POST", f"{front}/gpus/{g}/measure", {"part": 1, "budget_ms": 2100 + k})
                jid = (j or {}).get("id", "?")
                owner = next((s for s in servers if jid.startswith(s["prefix"])), None)
                say(f"POST /gpus/{g}/measure -> {code}, job {jid} (owner: server "
                    f"{owner['index'] if owner else '?'}, port {owner['port'] if owner else '?'})")
                jobs.append((jid, owner))
        code, j = http("POST", f"{front}/measure", {"part": 1, "budget_ms": 2199})
        jobs.append(((j or {}).get("id", "?"), None))
        say(f"POST /measure -> {code}, job {(j or {}).get('id')}")
        for jid, owner in jobs:
            code, j = wait_done(front, jid)
            rows = [r.get("ratio") for t in (j.get("document") or {}).get("tables", []) for r in t.get("rows", [])]
            dv = ((j.get("document") or {}).get("device") or {})
            say(f"GET /jobs/{jid}?wait=30 via front -> {code} {j.get('state')}, GPU {dv.get('name')} "
                f"PCI {dv.get('pci_bus_id')}, ratios {', '.join('%.3f' % r for r in rows if r is not None)}")
            ok &= code == 200 and j.get("state") == "done"
        code, j = http("POST", f"{front}/gpus/no-such-gpu/measure", {"part": 1})
        say(f"POST /gpus/no-such-gpu/measure -> {code} {json.dumps(j)[:120]}")
        ok &= code == 404
        code, j = http("GET", f"{front}/evidence/latest")
        with open(os.path.join(out, "evidence-latest.json"), "w") as f:
            json.dump(j, f, indent=2)
        gpus = [g.get("gpu") or g.get("slug") or g.get("name") for g in (j or {}).get("gpus", [])]
        say(f"GET /evidence/latest via front -> {code}, GPUs: {', '.join(str(g) for g in gpus)}")

        # 5. Both lesson tables on every server at the same time.
        say("\nboth lesson tables, " + ("one server after the other:" if args.serial else "every server at once:"))
        posted = []
        for s in servers:
            code, j = http("POST", s["base"] + "/measure", {"part": "all", "budget_ms": 2300 + s["index"]})
            posted.append((s, j["id"]))
            if args.serial:
                wait_done(s["base"], j["id"])
        docs = []
        for s, jid in posted:
            code, j = wait_done(s["base"], jid)
            doc = j.get("document") or {}
            docs.append((s, doc))
            with open(os.path.join(out, f"tables-server{s['index']}.json"), "w") as f:
                json.dump(j, f, indent=2)
        stop.set()
        th.join()
        for s, doc in docs:
            dv = doc.get("device", {})
            say(f"server {s['index']}: {dv.get('name')} PCI {dv.get('pci_bus_id')}, SM clock measured "
                f"{dv.get('measured_sm_clock_mhz') or 0:.0f} MHz (min {dv.get('measured_sm_clock_min_mhz') or 0:.0f})"
                f", rated {dv.get('rated_sm_clock_mhz') or 0:.0f}; GPU time {doc.get('gpu_time_ms') or 0:.1f} ms")
        head = f"{'table':7} {'row':28}" + "".join(
            f" {'ms s' + str(s['index']):>9} {'ratio':>7} {'noise':>7}" for s, _ in docs) + "   agree"
        say(head)
        base = table_rows(docs[0][1])
        for key in base:
            cells, ratios, noises = "", [], []
            for s, doc in docs:
                r = table_rows(doc).get(key, {})
                med = (r.get("time_ms") or {}).get("median")
                ratios.append(r.get("ratio"))
                noises.append(r.get("noise") or 0.0)
                cells += f" {med or float('nan'):9.3f} {r.get('ratio') or float('nan'):7.3f} " \
                         f"{(r.get('noise') or 0) * 100:6.2f}%"
            agree = ""
            if len(ratios) > 1 and all(x is not None for x in ratios):
                spread = max(ratios) - min(ratios)
                # each ratio carries its row's and its baseline's noise
                tol = 3 * max(ratios) * (2 ** 0.5) * max(noises) + 1e-9
                agree = f"{spread:.3f} {'<=' if spread <= tol else '>'} {tol:.3f}"
                ok &= spread <= max(tol, 0.01)
            say(f"{key[0]:7} {key[1][:28]:28}{cells}   {agree}")

        say("\nnvidia-smi during the run: compute processes (pid, process, GPU bus id, most memory seen):")
        pids = {str(s.get("worker_pid")): s for s in servers}
        seen = {}
        for line in samples:
            f = [x.strip() for x in line.split(",")]
            if len(f) < 4:
                continue
            mib = int(re.sub(r"[^0-9]", "", f[3]) or 0)
            key = (f[0], f[1], f[2])
            seen[key] = max(seen.get(key, 0), mib)
        for (pid, name, bus), mib in sorted(seen.items()):
            who = pids.get(pid)
            tail = f"  <- server {who['index']}'s worker (--device {who['device']})" if who else ""
            say(f"   {pid}, {name}, {bus}, {mib} MiB{tail}")
        say("\nfleet-check: " + ("ok" if ok else "FAILED"))
        return 0 if ok else 1
    finally:
        pidf = os.path.join(tmp, "nginx", "nginx.pid")
        if os.path.exists(pidf):
            try:
                os.kill(int(open(pidf).read().strip()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except OSError:
                pass
        for p in procs:
            try:
                p.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        for name in ("access.log", "error.log"):
            src = os.path.join(tmp, "nginx", name)
            if os.path.exists(src) and out != tmp:
                shutil.copy(src, os.path.join(out, "front-" + name))
        if out != tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

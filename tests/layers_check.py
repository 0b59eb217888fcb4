#!/usr/bin/env python3
"""layers_check.py -- the dependency rules of the tree, checked.

    layers_check.py SOURCE_DIR [--cuda-free BINARY ...] [--cuda-control BINARY]
    layers_check.py SOURCE_DIR --self-test

1. Includes. Every `#include "..."` in kernels/, api/, server/ and tests/
   is written from the one include root, the repository's top, so it names
   the layer it reaches into ("kernels/gpu/timing.h", "api/report.h",
   "server/core/log.h", "tests/support/helper_http.h"); it must resolve to a
   file of the tree from there, and in kernels/, api/ and server/ point down
   or sideways within its layer, never up:

       kernels/base   <- kernels/model <- kernels/gpu
                      <- api (no gpu/, no libmicrohttpd)
                      <- server/core <- server/jobs, server/evidence
                                     <- server/http <- server/cmd

   kernels/ includes nothing of api/ or server/, and no jansson or
   libmicrohttpd; kernels/base and kernels/model include no gpu/ header and
   no CUDA header; api/ no server/, no gpu/, no libmicrohttpd. Only the two
   files that go into the CUDA-linked `divergence-gpu` (GPU_USERS below)
   reach kernels/gpu from server/. No header may include itself through a
   chain of others (a cycle).
2. Links. `nm` of every --cuda-free binary (the `divergence` command, the
   model, base, api and server test binaries) must show no CUDA runtime
   symbol, and `ldd` no CUDA library; --cuda-control (`divergence-gpu`) must
   show them, so the symbol pattern is known to find what it looks for.
3. --self-test: copies the tree to a temporary folder, plants an upward
   include, a CUDA header in the model, a header cycle, an include that
   resolves nowhere and one written from another root, one at a time, and
   fails unless the check rejects each of them.

Exit 0 when every rule holds, 1 otherwise (each violation on its own line).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SCANNED = ("kernels", "api", "server", "tests")
SOURCE_EXT = (".c", ".h", ".cu", ".cuh")

# The one include root (CMake: kernels/base's PUBLIC include directory, the
# repository's top, which every target inherits) and the folders a quoted
# include may start with from there.
ROOT_FOLDERS = ("kernels/", "api/", "server/", "tests/")

# Each layer and the layers it may include (its own is always allowed).
ALLOWED = {
    "kernels/base": set(),
    "kernels/model": {"kernels/base"},
    "kernels/gpu": {"kernels/base", "kernels/model"},
    "api": {"kernels/base", "kernels/model"},
    "server/core": {"kernels/base"},
    "server/jobs": {"kernels/base", "kernels/model", "api", "server/core"},
    "server/evidence": {"kernels/base", "kernels/model", "api", "server/core"},
    "server/http": {"kernels/base", "kernels/model", "api", "server/core", "server/jobs", "server/evidence"},
    "server/cmd": {"kernels/base", "kernels/model", "api", "server/core", "server/jobs", "server/evidence",
                   "server/http"},
}

# The server files that are the GPU side: the worker process and the main of
# `divergence-gpu`. They alone may include kernels/gpu from server/.
GPU_USERS = {
    "server/jobs/workerproc.c": "the GPU worker process (linked into divergence-gpu only)",
    "server/cmd/gpu_main.c": "the main of divergence-gpu",
    "server/cmd/instr_cmd.c": "`divergence-gpu instructions`, a row's profile (linked into divergence-gpu only)",
}

# System headers a layer must not include: (layer prefix, pattern, why).
FORBIDDEN_SYSTEM = [
    ("kernels/", r"^microhttpd\.h$", "kernels/ has no libmicrohttpd"),
    ("kernels/", r"^jansson\.h$", "kernels/ has no jansson"),
    ("kernels/base", r"^(cuda|cuda_runtime|cuda_runtime_api|driver_types|cuda_fp16)\b.*\.h$|^cuda/",
     "kernels/base links no CUDA"),
    ("kernels/model", r"^(cuda|cuda_runtime|cuda_runtime_api|driver_types|cuda_fp16)\b.*\.h$|^cuda/",
     "kernels/model links no CUDA"),
    ("api", r"^microhttpd\.h$", "api/ has no libmicrohttpd"),
    ("api", r"^(cuda|cuda_runtime|cuda_runtime_api|driver_types)\b.*\.h$", "api/ has no CUDA"),
]

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')

# CUDA runtime symbols, as nm prints them (static cudart, registration hooks).
CUDA_SYMBOL_RE = re.compile(r"\b(_*cuda[A-Z][A-Za-z0-9_]*|__cudaRegister[A-Za-z]*|cudart[A-Za-z0-9_:]*)\b")
CUDA_LIBRARY_RE = re.compile(r"\blib(cudart|cuda|nvrtc|cublas)[^ ]*\.so")


def layer_of(rel):
    """The layer of a file: kernels/<x>, api or server/<x>."""
    parts = rel.split("/")
    if parts[0] == "api":
        return "api"
    if parts[0] in ("kernels", "server") and len(parts) > 2:
        return parts[0] + "/" + parts[1]
    return None


def sources(root):
    for top in SCANNED:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [x for x in dirs if x != "node_modules"]
            for f in sorted(files):
                if f.endswith(SOURCE_EXT):
                    full = os.path.join(d, f)
                    yield os.path.relpath(full, root).replace(os.sep, "/")


def strip_comments(text):
    """Removes /* */ and // comments (keeping lines) so commented-out
    includes do not count."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def resolve(root, name):
    """The file `name` names from the include root, or None."""
    cand = os.path.normpath(name).replace(os.sep, "/")
    if cand.startswith("../") or not os.path.isfile(os.path.join(root, cand)):
        return None
    return cand


def check_includes(root):
    errors = []
    graph = {}
    for rel in sources(root):
        layer = layer_of(rel)
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = strip_comments(f.read()).split("\n")
        graph[rel] = []
        for no, line in enumerate(lines, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            where = "%s:%d" % (rel, no)
            if kind == "<":
                for prefix, pat, why in FORBIDDEN_SYSTEM:
                    if rel.startswith(prefix) and re.search(pat, name):
                        errors.append("%s: #include <%s>: %s" % (where, name, why))
                continue
            if not name.startswith(ROOT_FOLDERS):
                errors.append('%s: #include "%s": not written from the include root (the repository\'s top: '
                              'start with one of %s)' % (where, name, ", ".join(ROOT_FOLDERS)))
                continue
            target = resolve(root, name)
            if target is None:
                errors.append('%s: #include "%s": no such file in the tree' % (where, name))
                continue
            graph[rel].append((target, where))
            tlayer = layer_of(target)
            if layer is None or tlayer is None or tlayer == layer:
                continue
            if tlayer == "kernels/gpu" and rel in GPU_USERS:
                continue
            if tlayer not in ALLOWED.get(layer, set()):
                errors.append('%s: #include "%s": %s may not include %s (%s)' %
                              (where, name, layer, tlayer, "upward" if rank(tlayer) >= rank(layer) else
                               "not one of its dependencies"))
    errors += cycles(graph)
    return errors, graph


def rank(layer):
    order = ["kernels/base", "kernels/model", "kernels/gpu", "api", "server/core", "server/jobs",
             "server/evidence", "server/http", "server/cmd"]
    return order.index(layer) if layer in order else -1


def cycles(graph):
    """Every include cycle, each reported once, as a chain of files."""
    found, seen_cycles = [], set()
    state = {}  # 1 on the stack, 2 done

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for target, where in graph.get(node, []):
            if state.get(target) == 1:
                cyc = stack[stack.index(target):] + [target]
                key = frozenset(cyc)
                if key not in seen_cycles:
                    seen_cycles.add(key)
                    found.append("%s: include cycle: %s" % (where, " -> ".join(cyc)))
            elif state.get(target) is None:
                visit(target, stack)
        stack.pop()
        state[node] = 2

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if state.get(node) is None:
            visit(node, [])
    return found


def nm_symbols(binary):
    out = subprocess.run(["nm", "-C", "--defined-only", binary], capture_output=True, text=True)
    undef = subprocess.run(["nm", "-C", "-u", binary], capture_output=True, text=True)
    dyn = subprocess.run(["nm", "-C", "-D", binary], capture_output=True, text=True)
    if out.returncode != 0 and dyn.returncode != 0:
        raise RuntimeError("nm %s: %s" % (binary, (out.stderr or dyn.stderr).strip()))
    return out.stdout + undef.stdout + dyn.stdout


def cuda_in(binary):
    """The CUDA symbols and libraries found in `binary` (a few of each)."""
    syms = sorted({m.group(1) for m in CUDA_SYMBOL_RE.finditer(nm_symbols(binary))})
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    libs = sorted({m.group(0) for m in CUDA_LIBRARY_RE.finditer(ldd)})
    return syms, libs


def check_links(cuda_free, control):
    errors = []
    for b in cuda_free:
        if not os.path.isfile(b):
            errors.append("%s: not built" % b)
            continue
        syms, libs = cuda_in(b)
        if syms or libs:
            errors.append("%s: links CUDA: %s" % (b, ", ".join((libs + syms)[:8])))
        else:
            print("ok: %s: no CUDA symbol (nm), no CUDA library (ldd)" % os.path.basename(b))
    if control:
        syms, libs = cuda_in(control)
        if not syms:
            errors.append("%s: the control shows no CUDA symbol: the pattern finds nothing" % control)
        else:
            print("ok: control %s: %d CUDA symbols, e.g. %s" %
                  (os.path.basename(control), len(syms), ", ".join(syms[:4])))
    return errors


def self_test(root):
    """Plants each kind of violation in a copy of the tree; each must fail."""
    plants = [
        ("an upward include (model -> api)", "kernels/model/model/analysis.h", '#include "api/options.h"\n'),
        ("an upward include (kernels -> server)", "kernels/base/ids.c", '#include "server/core/log.h"\n'),
        ("api reaching the GPU layer", "api/request.c", '#include "kernels/gpu/measure.h"\n'),
        ("a CUDA header in the model", "kernels/model/stats/stats.c", "#include <cuda_runtime.h>\n"),
        ("libmicrohttpd in api", "api/options.c", "#include <microhttpd.h>\n"),
        ("a header cycle", "kernels/base/timeutil.h", '#include "kernels/base/ids.h"\n', "kernels/base/ids.h",
         '#include "kernels/base/timeutil.h"\n'),
        ("an include that resolves nowhere", "server/http/routes.c", '#include "server/http/nothere.h"\n'),
        ("an include written from another root", "server/http/routes.c", '#include "core/log.h"\n'),
        ("a test's include written from another root", "tests/server/http/test_routes.c",
         '#include "support/helper_http.h"\n'),
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for plant in plants:
            what, edits = plant[0], list(zip(plant[1::2], plant[2::2]))
            copy = os.path.join(tmp, "tree")
            shutil.rmtree(copy, ignore_errors=True)
            os.makedirs(copy)
            for top in SCANNED:
                shutil.copytree(os.path.join(root, top), os.path.join(copy, top),
                                ignore=shutil.ignore_patterns("node_modules", "*.png", "*.json"))
            for rel, line in edits:
                p = os.path.join(copy, rel)
                with open(p, encoding="utf-8") as f:
                    text = f.read()
                # After the file's first include, so include guards stay first.
                m = re.compile(INCLUDE_RE.pattern, re.M).search(text)
                at = text.find("\n", m.start()) + 1 if m else 0
                with open(p, "w", encoding="utf-8") as f:
                    f.write(text[:at] + line + text[at:])
            errors, _ = check_includes(copy)
            if errors:
                print("ok: self-test: %s is rejected: %s" % (what, errors[0]))
            else:
                print("FAIL: self-test: %s passed the check" % what)
                failures += 1
    errors, _ = check_includes(root)
    if errors:
        print("FAIL: self-test: the tree itself does not pass")
        failures += 1
    return failures


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    args = argv[2:]
    if args == ["--self-test"]:
        return 1 if self_test(root) else 0
    cuda_free, control, i = [], None, 0
    while i < len(args):
        if args[i] == "--cuda-free":
            i += 1
            while i < len(args) and not args[i].startswith("--"):
                cuda_free.append(args[i])
                i += 1
        elif args[i] == "--cuda-control" and i + 1 < len(args):
            control = args[i + 1]
            i += 2
        else:
            print("layers_check: unknown argument %s" % args[i], file=sys.stderr)
            return 2
    errors, graph = check_includes(root)
    nedges = sum(len(v) for v in graph.values())
    cyc = sum(1 for e in errors if "include cycle" in e)
    up = sum(1 for e in errors if "may not include" in e)
    roots = sum(1 for e in errors if "include root" in e)
    print("includes: %d files, %d quoted includes, %d violations (%d upward or undeclared, %d cycles, "
          "%d written from another root); include root: the repository's top" %
          (len(graph), nedges, len(errors), up, cyc, roots))
    errors += check_links(cuda_free, control)
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

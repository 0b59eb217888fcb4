#!/usr/bin/env python3
"""layers_check.py -- the dependency rules of the tree, checked.

    layers_check.py SOURCE_DIR [--build BUILD_DIR] [--cuda-free BINARY ...] [--cuda-control BINARY]
    layers_check.py SOURCE_DIR --self-test [--build BUILD_DIR]

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
   no CUDA header; api/ no server/, no gpu/, no libmicrohttpd. Only the
   files that go into the CUDA-linked `divergence-gpu` (GPU_USERS below)
   reach kernels/gpu from server/. No header may include itself through a
   chain of others (a cycle).
2. Units. A unit is a source file of kernels/, api/ or server/ with the
   header of the same name beside it (analysis.c and analysis.h; a header
   alone, such as types.h, is a unit too). A unit depends on another when
   one of its files includes the other's header, and when its object file
   calls a function or reads a variable the other's object defines: the
   object files the build made (BUILD_DIR's compile_commands.json names
   them; `nm` reads what each defines and what it uses). No unit may depend
   on itself through others: a circle of calls alone (a call circle), or of
   calls and includes together (a unit circle), each reported with every
   step and why it is there; UNIT_CIRCLES_ALLOWED names the server/ ones
   the server's own step takes apart. Without a build (no BUILD_DIR, and none with a
   compile_commands.json at SOURCE_DIR/build) the calls are not checked and
   the output says so.
3. Links. `nm` of every --cuda-free binary (the `divergence` command, the
   model, base, api and server test binaries) must show no CUDA runtime
   symbol, and `ldd` no CUDA library; --cuda-control (`divergence-gpu`) must
   show them, so the symbol pattern is known to find what it looks for.
4. --self-test: copies the tree to a temporary folder, plants an upward
   include, a CUDA header in the model, a header cycle, an include that
   resolves nowhere and one written from another root, one at a time, and
   fails unless the check rejects each of them; then, with a build, plants
   a call circle (a function in one unit that calls a unit which calls it
   back, declared without an include, compiled with the unit's own compile
   command into a copy of the objects), a unit circle made of an include
   and a call, and the evidence store's circle brought back (its record
   reader including the store's header), and fails unless the unit check
   rejects each and names it.

Exit 0 when every rule holds, 1 otherwise (each violation on its own line).
"""
import json
import os
import re
import shlex
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


# ---- units: includes and calls -------------------------------------------

UNIT_TOPS = ("kernels/", "api/", "server/")

# Circles between units the check lets pass until the server's own step
# takes them apart, each with why: server/ units only, each entry the exact
# set of units of its circle. An entry whose circle is gone fails, so the
# list only shrinks.
UNIT_CIRCLES_ALLOWED = {
}

# nm -P types of a definition another object can link to (weak ones, such as
# a C++ template instance every .cu file holds, are nobody's own).
STRONG_DEFS = set("TDBRGSC")


def unit_of(rel):
    """A file's unit: its path without the extension (x.c and x.h are one)."""
    return os.path.splitext(rel)[0]


def include_edges(graph):
    """unit -> {unit: [why, ...]} for the includes between units."""
    edges = {}
    for rel, targets in graph.items():
        if not rel.startswith(UNIT_TOPS):
            continue
        u = unit_of(rel)
        edges.setdefault(u, {})
        for target, where in targets:
            v = unit_of(target)
            if v != u and target.startswith(UNIT_TOPS):
                edges[u].setdefault(v, []).append("includes %s (%s)" % (target, where))
    return edges


def compile_entries(root, build):
    """(unit, object, entry) for every compile command of BUILD whose source
    is a unit's, or raises RuntimeError saying why there are none."""
    path = os.path.join(build, "compile_commands.json")
    if not os.path.isfile(path):
        raise RuntimeError("%s: no such file (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON)" % path)
    with open(path, encoding="utf-8") as f:
        entries = json.load(f)
    out = []
    for e in entries:
        rel = os.path.relpath(os.path.realpath(e["file"]), os.path.realpath(root)).replace(os.sep, "/")
        if not rel.startswith(UNIT_TOPS):
            continue
        args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
        if "-o" not in args:
            raise RuntimeError("%s: the compile command of %s names no object (-o)" % (path, rel))
        out.append((unit_of(rel), os.path.join(e["directory"], args[args.index("-o") + 1]), e))
    if not out:
        raise RuntimeError("%s: no compile command for a source of kernels/, api/ or server/" % path)
    return out


def object_symbols(obj):
    """(defined, used): the symbols `obj` defines for others and those it needs."""
    r = subprocess.run(["nm", "-P", obj], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("nm %s: %s" % (obj, r.stderr.strip()))
    defined, used = set(), set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        if parts[1] == "U":
            used.add(parts[0])
        elif parts[1] in STRONG_DEFS:
            defined.add(parts[0])
    return defined, used


def call_edges(root, build):
    """unit -> {unit: [symbol, ...]}: what each unit's objects use that
    another unit's objects define. Returns (edges, errors)."""
    try:
        entries = compile_entries(root, build)
    except RuntimeError as e:
        return {}, [str(e)]
    defs, uses, errors = {}, {}, []
    for unit, obj, _ in entries:
        if not os.path.isfile(obj):
            errors.append("%s: not built (the object of %s)" % (obj, unit))
            continue
        try:
            defined, used = object_symbols(obj)
        except RuntimeError as e:
            errors.append(str(e))
            continue
        for sym in defined:
            defs.setdefault(sym, set()).add(unit)
        uses.setdefault(unit, set()).update(used)
    edges = {}
    for unit, used in uses.items():
        edges.setdefault(unit, {})
        for sym in used:
            for other in defs.get(sym, ()):
                if other != unit:
                    edges[unit].setdefault(other, []).append(sym)
    for targets in edges.values():
        for v in targets:
            targets[v].sort()
    return edges, errors


def strong_components(edges):
    """The circles of `edges` (unit -> {unit: why}): every strongly connected
    set of two or more units, each as a sorted list."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def circle_path(edges, comp):
    """One circle through the first unit of `comp`: [u0, u1, ..., u0]."""
    start, members = comp[0], set(comp)
    prev, queue = {}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, {})):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [start] + path[::-1][1:] + [start] if len(path) > 1 else [start, start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp + [start]


def describe(path, steps):
    """"a -> b (why) -> a (why)": each step with what makes it."""
    out = [path[0]]
    for a, b in zip(path, path[1:]):
        why = steps[a][b]
        shown = ", ".join(why[:4]) + (" and %d more" % (len(why) - 4) if len(why) > 4 else "")
        out.append("%s (%s)" % (b, shown))
    return " -> ".join(out)


def check_units(root, build, graph):
    """The circles between units. Returns (errors, summary lines)."""
    inc = include_edges(graph)
    errors, notes = [], []
    if build is None:
        notes.append("calls: not checked: no build (pass --build BUILD_DIR, or build in %s)" %
                     os.path.join(root, "build"))
        calls = {}
    else:
        calls, errs = call_edges(root, build)
        errors += ["calls: " + e for e in errs]
    union = {}
    for src in (inc, calls):
        for u, targets in src.items():
            union.setdefault(u, {})
            for v, why in targets.items():
                label = why if src is inc else ["calls " + ", ".join(why[:6]) + (" and %d more" % (len(why) - 6)
                                                                             if len(why) > 6 else "")]
                union[u].setdefault(v, []).extend(label)
    call_labels = {u: {v: ["calls " + ", ".join(s[:6]) + (" and %d more" % (len(s) - 6) if len(s) > 6 else "")]
                       for v, s in t.items()} for u, t in calls.items()}
    seen = set()
    call_circles = strong_components(calls)
    unit_circles = [c for c in strong_components(union) if c not in call_circles]
    for kind, comps, steps in (("call circle", call_circles, call_labels), ("unit circle", unit_circles, union)):
        for comp in comps:
            text = "%s of %d units (%s), one of its circles: %s" % (kind, len(comp), ", ".join(comp),
                                                                     describe(circle_path(steps, comp), steps))
            why = UNIT_CIRCLES_ALLOWED.get(frozenset(comp))
            if why and all(u.startswith("server/") for u in comp):
                notes.append("allowed %s (%s)" % (text, why))
                seen.add(frozenset(comp))
            else:
                errors.append(text)
    for gone in sorted(set(UNIT_CIRCLES_ALLOWED) - seen, key=sorted):
        text = "allowed circle of %s: no longer a circle" % ", ".join(sorted(gone))
        if build is not None:  # without the calls, a circle of calls cannot be seen
            errors.append(text + ": take it off UNIT_CIRCLES_ALLOWED")
        else:
            notes.append(text + " through includes (its calls not checked)")
    for k in UNIT_CIRCLES_ALLOWED:
        if not all(u.startswith("server/") for u in k):
            errors.append("UNIT_CIRCLES_ALLOWED is for server/ units only: %s" % ", ".join(sorted(k)))
    nunits = len(set(union) | {v for t in union.values() for v in t})
    ncalls = sum(len(t) for t in calls.values())
    ninc = sum(len(t) for t in inc.values())
    notes.insert(0, "units: %d units, %d include and %d call dependencies between them, %d call circles, "
                    "%d unit circles%s" % (nunits, ninc, ncalls, len(call_circles), len(unit_circles),
                                           "" if build else " (includes only)"))
    return errors, notes


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


INCLUDE_PLANTS = [
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

# A call circle: the analysis calls the planner, which calls the analysis.
# Declared in place, without an include, so that only the objects show it.
CALL_PLANT = ("kernels/model/model/analysis.c", """
/* Planted by tests/layers_check.py --self-test. */
struct dv_options;
struct dv_report;
struct dv_fault;
int plan_report(const struct dv_options *o, struct dv_report *r, struct dv_fault *fault, char *err);
int analysis_planted_call(void);
int analysis_planted_call(void) { return plan_report(0, 0, 0, 0); }
""", "call circle", ["kernels/model/model/analysis", "kernels/model/model/plan", "plan_report"])

# A unit circle of an include and a call: the listing includes the report's
# header, and the report's unit calls the listing (listing_free()).
UNIT_PLANT = ("kernels/model/listing/listing.c", '#include "kernels/model/model/experiment.h"\n', "unit circle",
              ["kernels/model/listing/listing", "kernels/model/model/experiment", "listing_free"])

# The evidence store's circle brought back: the record's reader includes the
# store's header again (for what server/evidence/types.h now says), and the
# store calls the reader. No entry of UNIT_CIRCLES_ALLOWED lets it pass.
RETURN_PLANT = ("server/evidence/record.c", '#include "server/evidence/evidence.h"\n', "unit circle",
                ["server/evidence/evidence", "server/evidence/record"])


def copy_tree(root, copy):
    shutil.rmtree(copy, ignore_errors=True)
    os.makedirs(copy)
    for top in SCANNED:
        shutil.copytree(os.path.join(root, top), os.path.join(copy, top),
                        ignore=shutil.ignore_patterns("node_modules", "*.png", "*.json"))


def plant_include(copy, rel, line):
    p = os.path.join(copy, rel)
    with open(p, encoding="utf-8") as f:
        text = f.read()
    # After the file's first include, so include guards stay first.
    m = re.compile(INCLUDE_RE.pattern, re.M).search(text)
    at = text.find("\n", m.start()) + 1 if m else 0
    with open(p, "w", encoding="utf-8") as f:
        f.write(text[:at] + line + text[at:])


def copy_objects(root, build, copy, objs):
    """The build's unit objects copied under `objs`, with a
    compile_commands.json there whose commands compile the sources of `copy`
    into them. Returns that folder."""
    entries = []
    for k, (unit, obj, e) in enumerate(compile_entries(root, build)):
        dst = os.path.join(objs, "%03d_%s.o" % (k, os.path.basename(unit)))
        shutil.copyfile(obj, dst)
        args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
        src = os.path.join(copy, os.path.relpath(os.path.realpath(e["file"]), os.path.realpath(root)))
        out = []
        for i, a in enumerate(args):
            if i > 0 and args[i - 1] == "-o":
                a = dst
            elif a == e["file"]:
                a = src
            elif a == "-I" + root:
                a = "-I" + copy
            out.append(a)
        entries.append({"directory": e["directory"], "file": src, "arguments": out})
    with open(os.path.join(objs, "compile_commands.json"), "w", encoding="utf-8") as f:
        json.dump(entries, f)
    return objs


def recompile(objs, rel_src, copy):
    """Compiles `rel_src` of the copy with its own command into its copied object."""
    with open(os.path.join(objs, "compile_commands.json"), encoding="utf-8") as f:
        for e in json.load(f):
            if e["file"] == os.path.join(copy, rel_src):
                r = subprocess.run(e["arguments"], cwd=e["directory"], capture_output=True, text=True)
                if r.returncode != 0:
                    raise RuntimeError("compiling the planted %s: %s" % (rel_src, r.stderr.strip()))
                return
    raise RuntimeError("no compile command for %s" % rel_src)


def self_test_units(root, build, tmp):
    """The call circle and the unit circle, planted; each must be rejected
    and named. Returns the failures."""
    failures = 0
    for rel, text, kind, names in (CALL_PLANT, UNIT_PLANT, RETURN_PLANT):
        copy, objs = os.path.join(tmp, "tree"), os.path.join(tmp, "objs")
        copy_tree(root, copy)
        shutil.rmtree(objs, ignore_errors=True)
        os.makedirs(objs)
        copy_objects(root, build, copy, objs)
        if kind == "call circle":
            with open(os.path.join(copy, rel), "a", encoding="utf-8") as f:
                f.write(text)
            recompile(objs, rel, copy)
        else:
            plant_include(copy, rel, text)
        _, graph = check_includes(copy)
        errors, _ = check_units(copy, objs, graph)
        hit = [e for e in errors if e.startswith(kind + " ") and all(n in e for n in names)]
        if hit:
            print("ok: self-test: a planted %s is rejected: %s" % (kind, hit[0]))
        else:
            print("FAIL: self-test: a planted %s passed the check (%s)" % (kind, "; ".join(errors) or "no error"))
            failures += 1
    return failures


def self_test(root, build):
    """Plants each kind of violation in a copy of the tree; each must fail."""
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for plant in INCLUDE_PLANTS:
            what, edits = plant[0], list(zip(plant[1::2], plant[2::2]))
            copy = os.path.join(tmp, "tree")
            copy_tree(root, copy)
            for rel, line in edits:
                plant_include(copy, rel, line)
            errors, _ = check_includes(copy)
            if errors:
                print("ok: self-test: %s is rejected: %s" % (what, errors[0]))
            else:
                print("FAIL: self-test: %s passed the check" % what)
                failures += 1
        if build is None:
            print("FAIL: self-test: no build to plant a call circle in (pass --build BUILD_DIR)")
            failures += 1
        else:
            failures += self_test_units(root, build, tmp)
    errors, graph = check_includes(root)
    errors += check_units(root, build, graph)[0]
    if errors:
        print("FAIL: self-test: the tree itself does not pass: %s" % errors[0])
        failures += 1
    return failures


def default_build(root):
    """SOURCE_DIR/build when it holds a configured build, else None."""
    b = os.path.join(root, "build")
    return b if os.path.isfile(os.path.join(b, "compile_commands.json")) else None


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    args = argv[2:]
    cuda_free, control, build, selftest, i = [], None, None, False, 0
    while i < len(args):
        if args[i] == "--cuda-free":
            i += 1
            while i < len(args) and not args[i].startswith("--"):
                cuda_free.append(args[i])
                i += 1
        elif args[i] == "--cuda-control" and i + 1 < len(args):
            control = args[i + 1]
            i += 2
        elif args[i] == "--build" and i + 1 < len(args):
            build = os.path.abspath(args[i + 1])
            i += 2
        elif args[i] == "--self-test":
            selftest = True
            i += 1
        else:
            print("layers_check: unknown argument %s" % args[i], file=sys.stderr)
            return 2
    build = build or default_build(root)
    if selftest:
        return 1 if self_test(root, build) else 0
    errors, graph = check_includes(root)
    nedges = sum(len(v) for v in graph.values())
    cyc = sum(1 for e in errors if "include cycle" in e)
    up = sum(1 for e in errors if "may not include" in e)
    roots = sum(1 for e in errors if "include root" in e)
    print("includes: %d files, %d quoted includes, %d violations (%d upward or undeclared, %d cycles, "
          "%d written from another root); include root: the repository's top" %
          (len(graph), nedges, len(errors), up, cyc, roots))
    unit_errors, notes = check_units(root, build, graph)
    for n in notes:
        print(n)
    errors += unit_errors
    errors += check_links(cuda_free, control)
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

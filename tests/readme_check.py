#!/usr/bin/env python3
"""readme_check.py -- the README's facts against the tree they describe.

    readme_check.py SOURCE_DIR
    readme_check.py SOURCE_DIR --self-test

Widget size. The README's sentence "about N KB unminified in all (M KB
gzipped)" states the sum over every file the lesson page loads for the
widget: static/divergence-widget.js, static/widget/*.js and
static/divergence-widget.css; "first load takes N KB of it (M KB gzipped)"
the part a page loads before any click: the entry module, every module it
imports statically (`import ... from './x.js'`, followed through each
module; `import('./x.js')` is loaded when first used and is not counted)
and the stylesheet. KB is 1,000 bytes; gzipped is each file compressed
alone by Python's gzip at level 6 (zlib's default, the level the service
compresses with), summed. Each stated figure must be within 10% of the
measured one.

Route table. The rows of the README's "## HTTP API" table name routes in
code spans in their first cell: `METHOD /path`, or `/path` alone for the
method of the span before it in the cell. A path is read as a set of
paths: `[x]` is optional, `[a\\|b]` (or `[a|b]`) one of several or none,
`[...]` the previous span's last bracket group again, and a query
(`?limit=&cursor=`) is dropped. Every path of every span must reach a route
that the router registers (every `http_route_add(h, "METHOD", "pattern",
"label", flags, ...)` in a .c file outside tests/), chosen as
server/http/router.c chooses (an exact pattern before the longest prefix;
a route is a prefix when its flags name HTTP_ROUTE_PREFIX), with the span's
method among that pattern's routes; and every registered route must be
reached by at least one path. So a route missing from the table, or a row
that no route serves, fails.

Evidence forms. The forms a suite's record is served in (the extensions of
the `exts[]` table in server/http/evroutes.c: `{".svg", EVIDENCE_SVG}`)
must be exactly the alternatives of the bracket group after `{suite}` in
the table's first evidence path.

--self-test runs the checks on copies of README.md, server/ and static/
with one fact made false in each (a stated size off by more than 10%, a row
taken out, a row that no route serves, a route added to a .c file, a form
left out) and fails unless each copy is rejected and the unchanged copy
passes.

Exit 0 when every fact holds, 1 otherwise (each failure on its own line).
"""
import glob
import gzip
import os
import re
import shutil
import sys
import tempfile

TOLERANCE = 0.10
KB = 1000
GZIP_LEVEL = 6

WIDGET_ENTRY = "static/divergence-widget.js"
WIDGET_MODULES = "static/widget/*.js"
WIDGET_CSS = "static/divergence-widget.css"

TOTAL_RE = re.compile(r"about (\d+(?:\.\d+)?) KB unminified in all \((\d+(?:\.\d+)?) KB gzipped\)")
FIRST_RE = re.compile(r"first load takes (\d+(?:\.\d+)?) KB of it \((\d+(?:\.\d+)?) KB gzipped\)")
STATIC_IMPORT_RE = re.compile(r"^\s*import\s[^;]*?\sfrom\s+'(\./[^']+)'", re.M)
ROUTE_RE = re.compile(
    r'http_route_add\(\s*[\w>.-]+\s*,\s*"([A-Z]+)"\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,\s*([^,]+),')
EXT_RE = re.compile(r'\{\s*"(\.[a-z.]+)"\s*,\s*EVIDENCE_[A-Z]+\s*\}')
METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def sizes(root, rels):
    raw = gz = 0
    for rel in rels:
        with open(os.path.join(root, rel), "rb") as f:
            data = f.read()
        raw += len(data)
        gz += len(gzip.compress(data, compresslevel=GZIP_LEVEL))
    return raw, gz


def first_load(root):
    """The entry module, its static imports followed through, the stylesheet."""
    seen, todo = [], [WIDGET_ENTRY]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.append(rel)
        for spec in STATIC_IMPORT_RE.findall(read(root, rel)):
            todo.append(os.path.normpath(os.path.join(os.path.dirname(rel), spec)).replace(os.sep, "/"))
    return sorted(seen) + [WIDGET_CSS]


def within(stated, measured):
    return abs(stated - measured) <= TOLERANCE * measured


def check_sizes(root, readme):
    text = " ".join(readme.split())  # the sentence may wrap anywhere
    every = [WIDGET_ENTRY] + sorted(
        os.path.relpath(p, root).replace(os.sep, "/") for p in glob.glob(os.path.join(root, WIDGET_MODULES))
    ) + [WIDGET_CSS]
    problems = []
    for label, rx, files in (("the widget in all", TOTAL_RE, every), ("a page's first load", FIRST_RE,
                                                                      first_load(root))):
        m = rx.search(text)
        if not m:
            problems.append(f"README: no sentence stating the size of {label} ({rx.pattern})")
            continue
        raw, gz = sizes(root, files)
        for what, stated, measured in (("unminified", float(m.group(1)), raw / KB),
                                       ("gzipped", float(m.group(2)), gz / KB)):
            if not within(stated, measured):
                problems.append(f"README: {label} is stated as {stated:g} KB {what}, measured {measured:.1f} KB "
                                f"({', '.join(files)}): more than {TOLERANCE:.0%} apart")
    return problems


def registered_routes(root):
    """(method, pattern, prefix, where) of every http_route_add() call."""
    routes = []
    for d, dirs, files in os.walk(root):
        rel_d = os.path.relpath(d, root).replace(os.sep, "/")
        dirs[:] = [x for x in dirs if x not in (".git", "build", "node_modules", "tests")]
        for f in sorted(files):
            if not f.endswith(".c"):
                continue
            rel = f"{rel_d}/{f}" if rel_d != "." else f
            for m in ROUTE_RE.finditer(read(root, rel)):
                method, pattern, _label, flags = m.groups()
                routes.append((method, pattern, "HTTP_ROUTE_PREFIX" in flags, rel))
    return routes


def route_table(readme):
    """The first cells of the table under '## HTTP API', as lists of code spans."""
    sec = re.search(r"^## HTTP API\n(.*?)(?=^## )", readme, re.M | re.S)
    if not sec:
        return None
    cells, in_table = [], False
    for line in sec.group(1).splitlines():
        if line.startswith("| route |"):
            in_table = True
            continue
        if in_table and re.match(r"^\|\s*-", line):
            continue
        if in_table and line.startswith("|"):
            first = re.split(r"(?<!\\)\|", line)[1]
            cells.append(re.findall(r"`([^`]+)`", first))
        elif in_table:
            break
    return cells


def expand(path):
    """Every path an optional/alternative bracket form stands for."""
    m = re.search(r"\[([^\[\]]*)\]", path)  # innermost group first
    if not m:
        return [path]
    alts = [a for a in re.split(r"\\?\|", m.group(1))]
    out = []
    for a in [""] + alts:
        out += expand(path[:m.start()] + a + path[m.end():])
    return sorted(set(out))


def last_group(path):
    """The last top-level bracket group of `path` ('' for none)."""
    depth, start, last = 0, -1, ""
    for i, c in enumerate(path):
        if c == "[":
            if depth == 0:
                start = i
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                last = path[start:i + 1]
    return last


def documented(cells):
    """(method, path as written, expanded paths) of every span, or a problem string."""
    out = []
    for spans in cells:
        method, previous = None, ""
        for span in spans:
            parts = span.split(" ", 1)
            if parts[0] in METHODS and len(parts) == 2:
                method, path = parts[0], parts[1].strip()
            else:
                path = span.strip()
            if not path.startswith("/"):
                continue  # not a route (a status, a field name)
            if method is None:
                out.append(f"README: `{span}` has no method before it in its cell")
                continue
            path = path.split("?", 1)[0]
            if "[...]" in path:
                path = path.replace("[...]", last_group(previous))
            previous = path
            out.append((method, span, expand(path)))
    return out


def pick(routes, path):
    """The pattern and prefix flag router.c would choose for `path`."""
    best = None
    for _m, pattern, prefix, _w in routes:
        if not (path.startswith(pattern) if prefix else path == pattern):
            continue
        key = (not prefix, len(pattern))
        if best is None or key > best[0]:
            best = (key, pattern, prefix)
    return (best[1], best[2]) if best else None


def check_routes(root, readme):
    routes = registered_routes(root)
    if not routes:
        return ["source: no http_route_add() call found"]
    cells = route_table(readme)
    if not cells:
        return ["README: no route table under '## HTTP API' (a '| route | what |' header)"]
    problems, reached = [], set()
    for entry in documented(cells):
        if isinstance(entry, str):
            problems.append(entry)
            continue
        method, span, paths = entry
        for path in paths:
            chosen = pick(routes, path)
            hit = [r for r in routes if chosen and (r[1], r[2]) == chosen and r[0] == method]
            if not hit:
                problems.append(f"README: `{span}`: {method} {path} reaches no route the router registers")
                continue
            reached.update(hit)
    for r in routes:
        if r not in reached:
            kind = "prefix " if r[2] else ""
            problems.append(f"README: the route table does not list {r[0]} {kind}{r[1]} (added in {r[3]})")
    return problems


def check_forms(root, readme):
    exts = set(EXT_RE.findall(read(root, "server/http/evroutes.c")))
    if not exts:
        return ["server/http/evroutes.c: no exts[] table of evidence forms found"]
    for entry in documented(route_table(readme) or []):
        if isinstance(entry, str) or not entry[1].split(" ")[-1].startswith("/evidence/"):
            continue
        m = re.search(r"\{suite\}\[([^\[\]]*)\]", entry[1])
        if not m:
            continue
        listed = set(re.split(r"\\?\|", m.group(1)))
        if listed != exts:
            return [f"README: `{entry[1]}` lists the forms {sorted(listed)}; evroutes.c serves {sorted(exts)}"]
        return []
    return ["README: no evidence path with its forms (`{suite}[.json|...]`) in the route table"]


def check(root):
    readme = read(root, "README.md")
    return check_sizes(root, readme) + check_routes(root, readme) + check_forms(root, readme)


def self_test(root):
    """Each planted falsehood must be caught; the unchanged copy must pass."""

    def plant_readme(old, new):
        def f(tmp):
            p = os.path.join(tmp, "README.md")
            with open(p, encoding="utf-8") as fh:
                s = fh.read()
            if old not in s:
                raise SystemExit(f"self-test: README lacks {old!r}")
            with open(p, "w", encoding="utf-8") as fh:
                fh.write(s.replace(old, new, 1))
        return f

    def stated_total(tmp):
        text = read(tmp, "README.md")
        m = re.search(r"about (\d+) KB unminified", text)
        plant_readme(m.group(0), f"about {int(m.group(1)) * 2} KB unminified")(tmp)

    def stated_first_gzip(tmp):
        text = read(tmp, "README.md")
        m = re.search(r"of it \((\d+) KB gzipped\)", text)
        plant_readme(m.group(0), f"of it ({int(int(m.group(1)) * 1.3)} KB gzipped)")(tmp)

    def drop_row(tmp):
        text = read(tmp, "README.md")
        line = next(ln for ln in text.splitlines() if ln.startswith("| `GET /predicates`"))
        plant_readme(line + "\n", "")(tmp)

    def add_route(tmp):
        p = os.path.join(tmp, "server/http/routes.c")
        with open(p, "a", encoding="utf-8") as fh:
            fh.write('\nstatic void planted(struct http *h) { http_route_add(h, "GET", "/planted", "/planted", 0, '
                     'NULL, NULL, NULL); }\n')

    cases = [
        ("a total size off by 2x", stated_total),
        ("a first-load gzip size off by 30%", stated_first_gzip),
        ("a row taken out", drop_row),
        ("a row no route serves", plant_readme("| `GET /predicates`", "| `GET /nothing-here`, `GET /predicates`")),
        ("a method the route does not take", plant_readme("`POST /analyze`", "`GET /analyze`")),
        ("a route added to a .c file", add_route),
        ("a form left out", plant_readme(".svg\\|.md\\|.csv]]`", ".svg\\|.md]]`")),
    ]
    failed = 0
    for name, plant in [("nothing planted", None)] + cases:
        tmp = tempfile.mkdtemp(prefix="readme_check.")
        try:
            shutil.copy(os.path.join(root, "README.md"), tmp)
            for d in ("server", "static"):
                shutil.copytree(os.path.join(root, d), os.path.join(tmp, d))
            if plant:
                plant(tmp)
            problems = check(tmp)
            ok = not problems if plant is None else bool(problems)
            print(f"self-test: {name}: {'ok' if ok else 'NOT CAUGHT' if plant else 'FAILED'}"
                  + (f" ({problems[0]})" if problems else ""))
            failed += not ok
        finally:
            shutil.rmtree(tmp)
    return 1 if failed else 0


def main():
    if len(sys.argv) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    root = sys.argv[1]
    if "--self-test" in sys.argv[2:]:
        return self_test(root)
    problems = check(root)
    for p in problems:
        print(p)
    if not problems:
        print("readme_check: the widget's sizes, the route table and the evidence forms agree with the tree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

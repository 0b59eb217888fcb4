#!/usr/bin/env python3
"""size_check.py -- no source file over MAX_FILE_LINES lines and no C or
CUDA function over MAX_FUNCTION_LINES lines.

    size_check.py SOURCE_DIR
    size_check.py SOURCE_DIR --self-test

Files: every C, CUDA, JavaScript, Python and shell source of the tree that
git tracks, outside tests/ (the tests, their fixtures and data) and the
widget's assets (static/divergence-widget.js: its own step). Functions:
every function defined in a .c, .h, .cu or .cuh file of kernels/, api/ and
server/, counted from the first line of its declaration to its closing
brace, comments and blank lines included (what a reader scrolls through).

A function is found by its braces: a `{` at the top level (outside any
other brace, with comments, strings and preprocessor lines taken out) whose
text since the previous top-level `;`, `}` or preprocessor line ends in a
parameter list, holds no `=` outside parentheses (an initializer) and does
not start a struct, union or enum.

ALLOWED lists what the server's own step takes apart, each with why; it is
for server/ files only, and an entry that no longer exceeds its limit is
itself a failure, so the list only shrinks.

--self-test plants a file and a function over the limits (and one at the
limit each) in a copy of the tree and fails unless exactly the ones over
are rejected.

Exit 0 when every file and function is within its limit, 1 otherwise.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 80

FILE_EXT = (".c", ".h", ".cu", ".cuh", ".js", ".mjs", ".py", ".sh")
C_EXT = (".c", ".h", ".cu", ".cuh")
C_TOPS = ("kernels/", "api/", "server/")
EXEMPT = ("tests/", "static/divergence-widget.js")

# What the server's own step splits (issue 30: http.c's parts, evidence.c's
# jobs). server/ only; each entry is a file ("path") or a function
# ("path:function").
ALLOWED = {
}


def tracked(root):
    r = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, text=True)
    if r.returncode == 0 and r.stdout:
        return sorted(p for p in r.stdout.split("\0") if p)
    out = []  # not a git checkout (a copy): every file
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in ("node_modules", ".git", "build")]
        out += [os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/") for f in files]
    return sorted(out)


def strip_c(text):
    """Comments, string and character literals and preprocessor lines blanked,
    newlines kept (so line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c if j - i >= 2 else text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    lines = "".join(out).split("\n")
    cont = False
    for k, line in enumerate(lines):  # preprocessor lines, with their continuations
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            lines[k] = ""
    return "\n".join(lines)


HEADER_RE = re.compile(r"[A-Za-z_]\w*\s*\((?:[^()]|\([^()]*\))*\)\s*(?:const\s*)?(?:__attribute__\s*\(\(.*\)\)\s*)?$",
                       re.S)


def is_function_header(head):
    h = head.strip()
    if not h or re.match(r"^(typedef\b|(static\s+|const\s+)*(struct|union|enum)\b[^(]*$)", h):
        return False
    depth = 0
    for ch in h:  # an initializer (`= {`) is not a function
        depth += ch == "("
        depth -= ch == ")"
        if ch == "=" and depth == 0:
            return False
    return bool(HEADER_RE.search(h))


def functions(text):
    """(name, first line, last line) of every function defined in C text."""
    s = strip_c(text)
    found, depth, head_start, start, name = [], 0, 0, None, None
    line_of = [0] * (len(s) + 1)
    ln = 1
    for i, ch in enumerate(s):
        line_of[i] = ln
        ln += ch == "\n"
    for i, ch in enumerate(s):
        if ch == "{":
            if depth == 0:
                head = s[head_start:i]
                if is_function_header(head):
                    first = head_start + len(head) - len(head.lstrip())
                    m = re.findall(r"([A-Za-z_]\w*)\s*\(", head)
                    start, name = line_of[first], (m[0] if m[0] not in ("__attribute__",) else "?") if m else "?"
                    # the name is the identifier right before the parameter list
                    m2 = re.search(r"([A-Za-z_]\w*)\s*\((?:[^()]|\([^()]*\))*\)\s*(?:const\s*)?"
                                   r"(?:__attribute__\s*\(\(.*\)\)\s*)?$", head.strip(), re.S)
                    if m2:
                        name = m2.group(1)
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if start is not None:
                    found.append((name, start, line_of[i]))
                start = None
                head_start = i + 1
        elif ch == ";" and depth == 0:
            head_start = i + 1
        elif ch == "\n" and depth == 0 and s[head_start:i].strip() == "":
            head_start = i + 1
    return found


def check(root):
    errors, notes, used = [], [], set()
    nfiles = nfuncs = 0
    for rel in tracked(root):
        if not rel.endswith(FILE_EXT) or rel.startswith(EXEMPT) or "node_modules/" in rel:
            continue
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        nfiles += 1
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_FILE_LINES:
            if rel in ALLOWED:
                used.add(rel)
                notes.append("allowed: %s: %d lines (%s)" % (rel, lines, ALLOWED[rel]))
            else:
                errors.append("%s: %d lines, over %d" % (rel, lines, MAX_FILE_LINES))
        if not (rel.endswith(C_EXT) and rel.startswith(C_TOPS)):
            continue
        for name, a, b in functions(text):
            nfuncs += 1
            n = b - a + 1
            if n <= MAX_FUNCTION_LINES:
                continue
            key = "%s:%s" % (rel, name)
            if key in ALLOWED or rel in ALLOWED:
                used.add(key if key in ALLOWED else rel)
                notes.append("allowed: %s:%d %s(): %d lines (%s)" % (rel, a, name, n, ALLOWED.get(key, ALLOWED.get(rel))))
            else:
                errors.append("%s:%d: %s(): %d lines, over %d" % (rel, a, name, n, MAX_FUNCTION_LINES))
    for k in sorted(set(ALLOWED) - used):
        errors.append("%s: allowed over its limit but no longer over it: take it off ALLOWED" % k)
    for k in sorted(ALLOWED):
        if not k.startswith("server/"):
            errors.append("%s: ALLOWED is for server/ files only" % k)
    notes.insert(0, "sizes: %d files, %d functions; files over %d lines and functions over %d: %d" %
                 (nfiles, nfuncs, MAX_FILE_LINES, MAX_FUNCTION_LINES, len(errors)))
    return errors, notes


def self_test(root):
    """Plants files and functions over and at the limits in a copy of the
    tree; exactly the ones over must be rejected."""
    body = "    x += 1;\n"
    long_fn = "int planted_long(int x) {\n" + body * (MAX_FUNCTION_LINES - 2) + "    return x;\n}\n"
    edge_fn = "static int planted_edge_fn(int x)\n{\n" + body * (MAX_FUNCTION_LINES - 4) + "    return x;\n}\n"
    not_fns = ('static const char *planted_text = "{ not a function ( ) {";\n'
               "struct planted_s {\n" + "    int a;\n" * (MAX_FUNCTION_LINES + 5) + "};\n"
               "static const int planted_table[] = {\n" + "    1,\n" * (MAX_FUNCTION_LINES + 5) + "};\n")
    plants = {
        "kernels/base/planted.c": not_fns + edge_fn + long_fn,
        "api/planted_big.c": "/* planted */\n" * (MAX_FILE_LINES + 1),
        "api/planted_edge.c": "/* planted */\n" * MAX_FILE_LINES,
    }
    want = ["kernels/base/planted.c:%d: planted_long(): %d lines" % (not_fns.count("\n") + edge_fn.count("\n") + 1,
                                                                       MAX_FUNCTION_LINES + 1),
            "api/planted_big.c: %d lines" % (MAX_FILE_LINES + 1)]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "tree")
        for top in ("kernels", "api", "server"):
            shutil.copytree(os.path.join(root, top), os.path.join(copy, top),
                            ignore=shutil.ignore_patterns("node_modules"))
        for rel, text in plants.items():
            with open(os.path.join(copy, rel), "w", encoding="utf-8") as f:
                f.write(text)
        errors, _ = check(copy)
        planted = [e for e in errors if "planted" in e]
        for w in want:
            hit = [e for e in planted if e.startswith(w)]
            print("%s: self-test: %s%s" % ("ok" if hit else "FAIL", "rejected: " if hit else "not rejected: ",
                                            hit[0] if hit else w))
            failures += not hit
        for e in planted:
            if not any(e.startswith(w) for w in want):
                print("FAIL: self-test: rejected what is within its limit or no function: %s" % e)
                failures += 1
    errors, _ = check(root)
    if errors:
        print("FAIL: self-test: the tree itself does not pass: %s" % errors[0])
        failures += 1
    return failures


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    if argv[2:] == ["--self-test"]:
        return 1 if self_test(root) else 0
    if argv[2:]:
        print("size_check: unknown argument %s" % argv[2], file=sys.stderr)
        return 2
    errors, notes = check(root)
    for n in notes:
        print(n)
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""skip_reasons.py -- after ctest's summary, why each skipped test skipped.

    skip_reasons.py BUILD_DIR
    skip_reasons.py --self-test

ctest marks a test that prints a line matching its SKIP_REGULAR_EXPRESSION
(the `gpu` suites' "SKIPPED: no CUDA device: <what CUDA said>") as
"***Skipped" and keeps the line to itself: it is in the run's log, shown
only with -V. ctest runs this after the tests (CTEST_CUSTOM_POST_TEST in
the build's CTestCustom.cmake, written by tests/CMakeLists.txt), so a plain
`ctest` ends with the reasons: each distinct line that matched, from where
the regular expression matched, with the tests it skipped.

It reads the run's log, BUILD_DIR/Testing/Temporary/LastTest.log.tmp while
ctest runs it (LastTest.log once ctest is done), where ctest records each
test's output and, for one skipped by its regular expression, "Skip regular
expression found in output. Regex=[...]". (A test skipped by
SKIP_RETURN_CODE is logged as passed and is not listed.) Prints nothing
when no test skipped; always exits 0, so it never turns a run into a
failure; --self-test exits 1 when the parsing is wrong.
"""
import os
import re
import sys

BLOCK_RE = re.compile(r"^\d+/\d+ Test: (\S+)\n(.*?)^<end of output>\n(.*?)(?=^\d+/\d+ Testing: |\Z)", re.M | re.S)
SKIP_RE = re.compile(r"^Skip regular expression found in output\. Regex=\[(.*)\]$", re.M)


def reasons(log):
    """[(reason line, [test names])] in the order the reasons first appear."""
    grouped = {}
    for name, output, tail in BLOCK_RE.findall(log):
        m = SKIP_RE.search(tail)
        if not m:
            continue
        rx = re.compile(m.group(1))
        why = next((ln[hit.start():] for ln in output.splitlines() if (hit := rx.search(ln))), m.group(1))
        grouped.setdefault(why.strip(), []).append(name)
    return list(grouped.items())


def render(groups):
    if not groups:
        return ""
    n = sum(len(t) for _, t in groups)
    lines = [f"Why {n} test{'s' if n != 1 else ''} skipped:"]
    for why, tests in groups:
        lines.append(f"  {why}")
        lines.append(f"    {', '.join(tests)}")
    return "\n".join(lines) + "\n"


SAMPLE = """Start testing: Dec 03 13:32 UTC
----------------------------------------------------------
1/3 Testing: test_gpu_a
1/3 Test: test_gpu_a
Output:
----------------------------------------------------------
[RUN ] gpu_a::one
SKIPPED: no CUDA device: cudaGetDeviceCount(&count): no CUDA-capable device is detected
[SKIP] gpu_a::one: SKIPPED: no CUDA device: cudaGetDeviceCount(&count): no CUDA-capable device is detected
<end of output>
Test time =   0.15 sec
----------------------------------------------------------
Test Pass Reason:
Skip regular expression found in output. Regex=[SKIPPED: no CUDA device]
----------------------------------------------------------

2/3 Testing: test_plain
2/3 Test: test_plain
Output:
----------------------------------------------------------
SKIPPED: no CUDA device: printed by a test with no skip expression
<end of output>
Test time =   0.01 sec
----------------------------------------------------------
Test Passed.
----------------------------------------------------------

3/3 Testing: test_gpu_b
3/3 Test: test_gpu_b
Output:
----------------------------------------------------------
[SKIP] gpu_b::two: SKIPPED: no CUDA device: cudaGetDeviceCount(&count): no CUDA-capable device is detected
<end of output>
Test time =   0.10 sec
----------------------------------------------------------
Test Pass Reason:
Skip regular expression found in output. Regex=[SKIPPED: no CUDA device]
----------------------------------------------------------

End testing: Dec 03 13:32 UTC
"""


def self_test():
    want = [("SKIPPED: no CUDA device: cudaGetDeviceCount(&count): no CUDA-capable device is detected",
             ["test_gpu_a", "test_gpu_b"])]
    got = reasons(SAMPLE)
    ok = got == want and render(got).startswith("Why 2 tests skipped:\n") and render([]) == ""
    print("self-test:", "ok" if ok else f"FAILED: {got!r}")
    return 0 if ok else 1


def main():
    if sys.argv[1:2] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 0
    # While the post-test command runs, this run's log is still
    # LastTest.log.tmp (renamed when ctest ends); LastTest.log is then the
    # run before.
    tmp = os.path.join(sys.argv[1], "Testing", "Temporary")
    log = None
    for name in ("LastTest.log.tmp", "LastTest.log"):
        try:
            with open(os.path.join(tmp, name), encoding="utf-8", errors="replace") as f:
                log = f.read()
            break
        except OSError:
            continue
    if log is None:
        return 0  # no run logged: nothing to say
    sys.stdout.write(render(reasons(log)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The report's forms as their readers meet them (api/report_md.c,
report_csv.c, report_svg.c), on the reports tests/api/report_forms.c writes:

  * the same bytes from two separate runs (the chart's ETag is a digest);
  * every SVG valid against the W3C SVG 1.1 DTD (xmllint, Debian's
    libxml2-utils and w3c-sgml-lib), with <title> and <desc> first, no
    script, no external reference, under 20 KiB; the widget's colours
    (static/divergence-widget.css, light scheme); the GPU, driver, CUDA
    runtime and date of the measurement as visible text; a whisker per
    measured row with an interval (not the baseline), its ends where the
    interval's ends fall on the table's scale, the bar's end between them;
  * every CSV read by Python's csv module: the header, one record per row of
    every table and per reading, with the document's names, labels and
    figures, the ratio's and the median's 95% intervals among them;
  * every Markdown file parsed by markdown-it (tests/api/openapi/
    markdown_check.mjs): one table per document table, the document's labels
    and predicted ratios in its cells.

Usage: forms_check.py REPORT_FORMS_BINARY SOURCE_DIR OUT_DIR
"""
import csv
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

DTD = "/usr/share/xml/w3c-sgml-lib/schema/dtd/REC-SVG11-20110816/svg11.dtd"
SVG_NS = "{http://www.w3.org/2000/svg}"
COLUMNS = ["table", "table_title", "kind", "name", "label", "kernel", "baseline", "comparable", "warps_per_block",
           "warps_split_min", "warps_split_max", "threads_per_block", "threads_on_a_min", "threads_on_a_max",
           "path_runs_per_block", "predicted_ratio", "predicted_efficiency", "median_ms", "ratio", "noise",
           "floor_fraction", "measured_efficiency", "check_ok", "gpu_split_warps_per_block",
           "gpu_instructions_vs_baseline", "ratio_ci_lo", "ratio_ci_hi", "median_ci_lo_ms", "median_ci_hi_ms",
           "versus", "thread_fmas", "point_arrangement", "point_k", "point_la", "point_lb", "point_variant",
           "sass_branching", "sass_guarded_lanes", "sass_join_lanes", "join_warps", "join_reconverged_warps",
           "join_clock_spread_median", "intensity_fmas", "intensity_loads", "intensity_flop_per_byte",
           "intensity_dram_bytes", "intensity_flop_rate", "intensity_dram_gbs", "intensity_bound", "roofline_ridge"]
# report_svg.c's geometry: bars start at X0, a table's largest value ends at XMAX.
X0, XMAX = 8, 450

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def same_number(text, value):
    if value is None:
        return text == ""
    if text == "":
        return False
    v = float(text)
    return math.isclose(v, value, rel_tol=1e-5, abs_tol=1e-12)


def widget_palette(src):
    """The light scheme's --dw-m and --dw-p of the widget's stylesheet."""
    css = open(os.path.join(src, "static/divergence-widget.css")).read()
    m = re.search(r":host\{[^}]*--dw-m:(#[0-9a-fA-F]{6});--dw-p:(#[0-9a-fA-F]{6})", css)
    return (m.group(1).lower(), m.group(2).lower()) if m else None


def x_of(v, top):
    x = X0 + math.floor((XMAX - X0) * (v if v and v > 0 else 0) / top + 0.5)
    return max(x, X0 + 1)


def has_whisker(t, i, doc):
    w, ci = t["rows"][i], t["rows"][i].get("ratio_ci")
    return doc.get("measured") and i != t["baseline_row"] and w.get("ratio") is not None and ci is not None \
        and ci.get("lo") is not None and ci.get("hi") is not None


def check_svg_content(path, text, doc, palette):
    """The palette, the provenance line and the whiskers against the document."""
    style = re.search(r"<style[^>]*>(.*?)</style>", text, re.S).group(1)
    m, p = re.search(r"\.m\{fill:(#[0-9a-f]{6})", style), re.search(r"\.p\{[^}]*stroke:(#[0-9a-f]{6})", style)
    if not palette or not m or not p or (m.group(1), p.group(1)) != palette:
        fail("%s: colours %s/%s, the widget's %s" % (path, m and m.group(1), p and p.group(1), palette))
    if palette and 'stroke="%s"' % palette[1] not in text:
        fail("%s: the hatching is not the widget's %s" % (path, palette[1]))
    root = ET.fromstring(text.encode("utf-8"))
    prov = [t.text or "" for t in root.iter(SVG_NS + "text") if t.get("class") == "v"]
    d = doc.get("device") or {}
    if doc.get("measured"):
        want = [d.get("name") or "an unknown GPU", "measured %s %s UTC" % (doc["finished_utc"][:10], doc["finished_utc"][11:16])]
        if d.get("nvidia_driver_version"):
            want.append("driver " + d["nvidia_driver_version"])
        rv = d.get("runtime_version_raw")
        if rv:
            want.append("CUDA runtime %d.%d" % (rv // 1000, rv % 1000 // 10))
        if len(prov) != 1 or not all(w in prov[0] for w in want):
            fail("%s: the provenance line %s lacks %s" % (path, prov, want))
    elif prov != ["The model's predictions (an analysis: nothing measured)"]:
        fail("%s: an analysis's provenance line %s" % (path, prov))
    # The whiskers: the legend's first, then one path per table with each of its rows' that has an interval, in order.
    paths = [e.get("d") for e in root.iter(SVG_NS + "path") if e.get("class") == "w"]
    rects = [e for e in root.iter(SVG_NS + "rect") if e.get("class") == "m"]
    want = []
    for t in doc["tables"]:
        gpu = lambda w: (w.get("counters") or {}).get("instructions_vs_baseline")
        vals = [1.0]
        for i, w in enumerate(t["rows"]):
            vals += [v for v in (w.get("ratio") if doc.get("measured") else None, w.get("predicted_ratio"), gpu(w),
                                 w["ratio_ci"]["hi"] if has_whisker(t, i, doc) else None) if isinstance(v, (int, float))]
        top = max(vals) * 1.05
        want += [(t["id"], w["name"], x_of(w["ratio_ci"]["lo"], top), x_of(w["ratio_ci"]["hi"], top), x_of(w["ratio"], top))
                 for i, w in enumerate(t["rows"]) if has_whisker(t, i, doc)]
    if want and (not paths or not paths[0].startswith("M%d 35H" % (X0 + 3))):
        fail("%s: no whisker in the legend: %s" % (path, paths[:1]))
    got = [(int(a), int(b)) for p in paths[1:] for a, b in re.findall(r"M(\d+) \d+H(\d+)", p)] if want else paths
    if len(got) != len(want):
        fail("%s: %d whiskers for %d rows with an interval" % (path, len(got), len(want)))
        return
    ends = {}
    for r in rects[1:]:  # the legend's swatch first
        ends.setdefault(int(r.get("y")), int(r.get("x")) + int(r.get("width")))
    for (tid, name, lo, hi, end), (glo, ghi) in zip(want, got):
        if abs(glo - lo) > 1 or abs(ghi - hi) > 1:
            fail("%s: %s %s: whisker %d..%d, the interval on the scale %d..%d" % (path, tid, name, glo, ghi, lo, hi))
        if not glo - 1 <= end <= ghi + 1:
            fail("%s: %s %s: the bar ends at %d, outside its whisker %d..%d" % (path, tid, name, end, glo, ghi))


def check_svg(path, data):
    if len(data) >= 20 * 1024:
        fail("%s: %d bytes, not under 20 KiB" % (path, len(data)))
    text = data.decode("utf-8")
    for bad in ("<script", "href=", "onload", "javascript:"):
        if bad in text:
            fail("%s: holds %r" % (path, bad))
    r = subprocess.run(["xmllint", "--noout", "--dtdvalid", DTD, path], capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s: not valid SVG 1.1: %s" % (path, r.stderr.strip()[:2000]))
    root = ET.fromstring(data)
    kids = [c.tag for c in root]
    if kids[:2] != [SVG_NS + "title", SVG_NS + "desc"]:
        fail("%s: the first children are %s, not title and desc" % (path, kids[:2]))
    if not (root.find(SVG_NS + "title").text or "").strip() or not (root.find(SVG_NS + "desc").text or "").strip():
        fail("%s: an empty title or description" % path)
    return text


def check_csv(path, data, doc):
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    if rows[0] != COLUMNS:
        fail("%s: header %s" % (path, rows[0]))
        return
    records = [dict(zip(COLUMNS, r)) for r in rows[1:]]
    if any(len(r) != len(COLUMNS) for r in rows[1:]):
        fail("%s: a record without %d fields" % (path, len(COLUMNS)))
    want = []
    for t in doc["tables"]:
        for w in t["rows"]:
            want.append(("row", t, w))
        for rd in t.get("readings", []):
            want.append(("reading", t, rd))
    if len(records) != len(want):
        fail("%s: %d records for %d rows and readings" % (path, len(records), len(want)))
        return
    for rec, (kind, t, w) in zip(records, want):
        where = "%s: %s %s" % (path, t["id"], w.get("name", w.get("kind")))
        if rec["table"] != t["id"] or rec["kind"] != kind or rec["table_title"] != t["title"]:
            fail("%s: table/kind %s/%s" % (where, rec["table"], rec["kind"]))
        if kind == "row":
            if rec["name"] != w["name"] or rec["label"] != w["label"]:
                fail("%s: name/label %r %r" % (where, rec["name"], rec["label"]))
            if not same_number(rec["predicted_ratio"], w["predicted_ratio"]):
                fail("%s: predicted_ratio %s, the document %s" % (where, rec["predicted_ratio"], w["predicted_ratio"]))
            if rec["warps_split_max"] != str(w["warps_split"]["max"]):
                fail("%s: warps_split_max %s" % (where, rec["warps_split_max"]))
            if rec["comparable"] != ("true" if w["comparable"] else "false"):
                fail("%s: comparable %s" % (where, rec["comparable"]))
            if doc["measured"] and not same_number(rec["ratio"], w.get("ratio")):
                fail("%s: ratio %s, the document %s" % (where, rec["ratio"], w.get("ratio")))
            counters = w.get("counters") or {}
            if not same_number(rec["gpu_instructions_vs_baseline"], counters.get("instructions_vs_baseline")):
                fail("%s: gpu_instructions_vs_baseline %s" % (where, rec["gpu_instructions_vs_baseline"]))
            for col, key, end in (("ratio_ci_lo", "ratio_ci", "lo"), ("ratio_ci_hi", "ratio_ci", "hi"),
                                  ("median_ci_lo_ms", "median_ci_ms", "lo"), ("median_ci_hi_ms", "median_ci_ms", "hi")):
                ci = w.get(key) if doc["measured"] else None
                if not same_number(rec[col], ci.get(end) if ci else None):
                    fail("%s: %s %r, the document's %s.%s %s" % (where, col, rec[col], key, end, ci and ci.get(end)))
        else:
            if any(rec[c] for c in ("ratio_ci_lo", "ratio_ci_hi", "median_ci_lo_ms", "median_ci_hi_ms")):
                fail("%s: a reading with an interval" % where)
            if rec["name"] != w["kind"] or rec["label"] != w["sentence"]:
                fail("%s: reading %r %r" % (where, rec["name"], rec["label"]))
            if not same_number(rec["ratio"], w["ratio"]) or not same_number(rec["predicted_ratio"], w["predicted"]):
                fail("%s: reading figures %s %s" % (where, rec["ratio"], rec["predicted_ratio"]))


def main():
    binary, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
    missing = []
    if not shutil.which("xmllint"):
        missing.append("xmllint (Debian package libxml2-utils)")
    if not os.path.exists(DTD):
        missing.append("%s (Debian package w3c-sgml-lib)" % DTD)
    if not shutil.which("node"):
        missing.append("node (Debian package nodejs)")
    if not os.path.isdir(os.path.join(src, "tests/api/openapi/node_modules/markdown-it")):
        missing.append("tests/api/openapi/node_modules/markdown-it (cd tests/api/openapi && npm ci)")
    if missing:
        print("forms_check: cannot run; missing (make test installs them):\n  - " + "\n  - ".join(missing))
        return 1
    shutil.rmtree(out, ignore_errors=True)
    runs = [os.path.join(out, "a"), os.path.join(out, "b")]
    for d in runs:
        os.makedirs(d)
        subprocess.run([binary, d], check=True)
    names = sorted(os.listdir(runs[0]))
    if names != sorted(os.listdir(runs[1])) or not names:
        fail("the two runs wrote different files: %s / %s" % (names, sorted(os.listdir(runs[1]))))
    checked = {"svg": 0, "csv": 0, "md": 0}
    palette = widget_palette(src)
    if not palette:
        fail("static/divergence-widget.css: no --dw-m / --dw-p in :host")
    for name in names:
        a = open(os.path.join(runs[0], name), "rb").read()
        b = open(os.path.join(runs[1], name), "rb").read()
        if a != b:
            fail("%s: the bytes differ between two runs" % name)
        stem, ext = name.rsplit(".", 1)
        if ext == "json":
            continue
        doc = json.load(open(os.path.join(runs[0], stem + ".json")))
        path = os.path.join(runs[0], name)
        if ext == "svg":
            check_svg_content(path, check_svg(path, a), doc, palette)
        elif ext == "csv":
            check_csv(path, a, doc)
        checked[ext] = checked.get(ext, 0) + 1
    r = subprocess.run(["node", os.path.join(src, "tests/api/openapi/markdown_check.mjs"), runs[0]],
                       capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    if r.returncode != 0:
        fail("markdown_check: %s" % (r.stderr.strip() or r.stdout.strip())[-3000:])
    size = os.path.getsize(os.path.join(runs[0], "measured-scenarios.svg"))
    print("forms_check: %d SVG (largest, every scenario with counters: %d bytes), %d CSV, %d Markdown files; "
          "identical across two runs" % (checked["svg"], size, checked["csv"], checked["md"]))
    print("forms_check: %d passed, %d failed" % (0 if failures else 1, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

/* divergence-widget.js -- <divergence-widget server="" suite="day22-part1">, the lesson widget.
 *
 * A dependency-free custom element (no build step, no CDN) rendering into a
 * shadow root. It reads GET {server}/evidence/latest/{suite} (evidence around a
 * divergence.v1 document) and shows the provenance line with the
 * measurement's real age, its warnings, one <table> and one SVG chart
 * (measured beside predicted ratio, a bar pair per row) per table. Beside it,
 * it asks the server what it can do (GET /healthz: whether a token guards
 * POST /measure; GET /device: whether there is a GPU) and disables "Measure
 * now" / "Measure this" with the reason in plain words when it cannot. With no
 * good evidence it says what is missing, and why the last attempt failed when
 * one did (GET /evidence/latest). "Measure now" posts the suite's request (GET
 * /suites, else rebuilt from the document) to POST /measure and follows GET
 * /jobs/{id} (its event stream, else long polls with ?wait=); errors (401,
 * 429, 503, a failed job) go to an aria-live region and never clear the last
 * good table; a field an error names is said in the reader's words
 * ("predicate 2 (lane-half)", "the block shape"). A server of another origin
 * that does not allow this page (CORS) is told apart from one that is down
 * (a no-cors fetch gets an opaque answer from a server that is up): the
 * widget names the refusal and `divergence serve --cors-origin`, and
 * disables its buttons. Part 2's tables are read both ways (Table
 * `readings`: split against uniform, uniform against no branch, each with
 * its sentence) under their rows and in their charts. "Try your own
 * predicate" (a predicate and a block shape) asks POST /analyze 250 ms after
 * the last keystroke and shows the analysis beside the lane map of block 0
 * (Row `lanes_block0`: drawn from the analysis, so it needs no GPU and no
 * copy of the predicate here), or the error, wrapped, with a caret under the
 * column it names; the page's URL keeps the predicate and the block shape
 * (`?try=...&block=32x8`), so a link reproduces them. "Measure this"
 * measures it below the box.
 * A row with an instruction profile (Row `instructions`) has an
 * "Instructions" button that opens its annotated listing under the table:
 * where the counts come from (collector, grid and scale, cache, disassembler,
 * source-line mapping), each region's counts and top stall reasons, one warp
 * of block 0 lane by lane (the listing's own lane map, from `lanes_block0`)
 * beside the lanes per instruction the GPU counted on each path, and the
 * SASS in program order beside its source lines, one row per run of
 * identical instructions (xN, expandable to its first and last), with a
 * lane bar per run (lanes with the predicate on, lanes active with it off,
 * in words for screen readers), guarded instructions marked, paths A and B in
 * the chart's colours. Before the branch and after it start collapsed and are
 * built only when opened; the branch starts open. Escape or the button
 * closes it. Rows without a profile are named under the table with the
 * reason the document gives once (`testimony.instructions`).
 * Attributes: server ("" = same origin), suite, id (prefixes the URL's keys,
 * `<id>.try`, for a page with two try boxes), gpu (a GPU model's slug,
 * e.g. nvidia-h200: show that GPU's evidence; default the server's own), no-try,
 * no-measure (no measure buttons at all). Where the store holds evidence of
 * the suite from several GPU models (GET /evidence/latest lists them in
 * `gpus`), a selector switches the main view between them and a side-by-side
 * table and chart show each GPU's ratios with each GPU's provenance. The element's `state` attribute says what it shows
 * (loading, empty, shown), so a page can hide text that needs numbers.
 *
 * A measured ratio with its 95% interval (Row `ratio_ci`) reads as the
 * transcript prints it, "1.951" over "[1.950, 1.953]", and the chart draws
 * the interval as a whisker across the bar's end, to scale. A table's note
 * (Table `note`: a baseline that puts every thread of the block on one
 * path) is said under the table, which the baseline row points to, and
 * under the try box's analysis, with the baseline it suggests
 * (`suggested_baseline`). Under the
 * provenance of stored evidence, the night against the previous good night
 * (Evidence `comparison`): "Unchanged since 2026-11-30", or each changed
 * ratio with its change and interval, and what changed around it (driver,
 * CUDA, build, clocks).
 *
 * Numbers: fixed decimals per quantity (ms 3, ratios and noise % 2, clocks
 * 0, a ratio with its interval 3, or 4 where 3 would print the interval as
 * a point, changes between nights in % 1), rounded as C's printf rounds
 * them (the CLI, the .txt transcripts and the README use printf): to the
 * nearest, and a value exactly halfway to the even digit, so the model's
 * 1.125 reads 1.12 everywhere.
 *
 * The contract: the widget reads only the fields api/openapi.yaml names for
 * the answer it holds (an Evidence record's `document`, a Job's `state` and
 * `error.reason`, an Error's `error`, ...), and never guesses between
 * alternative names: a field the server does not send would only hide a
 * renamed one. tests/browser/widget.test.mjs records every property the
 * widget reads on a parsed answer and checks it against the document.
 */
(() => {
  'use strict';
  const SVGNS = 'http://www.w3.org/2000/svg';
  const POLL_MS = 1000, POLL_LIMIT = 600, DEBOUNCE_MS = 250, WAIT_S = 25, PROBE_MS = 1000, PROBE_LIMIT = 60;
  // Table `stop_reason` of a table whose intervals missed their target.
  const STOPPED = { cap: 'sampling kept its most rounds', budget: 'sampling spent its time budget', throttled: 'too many rounds were sampled while the GPU throttled' };
  const SINCE_ROWS = 3; // changed ratios named under the provenance; the rest counted
  const KEEP = ' The table still shows the last good numbers.';
  const HOW = 'a server with a GPU records one with divergence refresh (its nightly timer runs it)';

  const CSS = `
:host{display:block;--dw-m:#1d4ed8;--dw-p:#7e22ce;--dw-line:#8889;--dw-err:#b91c1c;max-width:100%;container-type:inline-size}
*{box-sizing:border-box}
.prov{margin:.2rem 0 .8rem;font-size:.95em}
.scroll{overflow-x:auto;max-width:100%;margin:.4rem 0 1rem;border:1px solid var(--dw-line)}
:focus-visible{outline:3px solid var(--dw-m);outline-offset:2px}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;min-width:38rem;width:100%;font-size:.92em}
caption{text-align:left;font-weight:600;padding:.4rem .5rem}
caption span{display:inline-block;position:sticky;left:.5rem;max-width:calc(100vw - 4rem)}
th,td{padding:.3rem .35rem;border-top:1px solid var(--dw-line);text-align:right;white-space:nowrap;vertical-align:top}
thead th,td[data-k=on-a]{white-space:normal;vertical-align:bottom}
td[data-k=on-a]{vertical-align:top;min-width:6.5rem}
th:first-child{text-align:left;min-width:10rem;white-space:normal}
tbody th{font-weight:normal}
code,input{font-family:ui-monospace,Menlo,Consolas,monospace}
.nc{display:block;font-size:.88em;margin-top:.15rem}
.nc b{white-space:nowrap;border:1px solid;padding:0 .25rem;border-radius:.2rem;margin-right:.3rem}
.ci{display:block;font-size:.78em;font-weight:normal;margin-top:.05rem}
.bn{display:block;font-size:.88em;margin-top:.15rem}
.tnote{font-size:.92em;margin:-.6rem 0 1rem;padding:.2rem .6rem;border-left:4px solid var(--dw-p)}
.out .tnote{margin:.5rem 0}
.tnote code{white-space:nowrap}
.fail{font-weight:bold}
figure{margin:0 0 1rem}
figcaption,.hint{font-size:.9em;margin:.2rem 0}
svg{display:block;width:100%;max-width:380px;height:auto}
svg text{fill:currentColor;font-size:15px;font-family:inherit}
.bm{fill:var(--dw-m)}
.bp{stroke:var(--dw-p);stroke-width:1.5}
.hatch{stroke:var(--dw-p);stroke-width:2}
.bg{fill:none;stroke:currentColor;stroke-width:1.5}
.ref{stroke:currentColor;stroke-dasharray:3 3;opacity:.7}
.wh line{stroke:currentColor;stroke-width:2}
.bar{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.4rem 0}
button{font:inherit;padding:.45rem .9rem;min-height:2.5rem;cursor:pointer}
.msg{margin:.4rem 0;padding:.4rem .6rem;border-left:4px solid var(--dw-m)}
.msg:empty,.out:empty,progress[hidden]{display:none}
.try{border:1px solid var(--dw-line);padding:.6rem .8rem;margin:1rem 0 0;min-width:0}
.try legend{font-weight:600;padding:0 .3rem}
label{display:block;margin-bottom:.2rem}
input{font-size:inherit;width:100%;max-width:28rem;padding:.45rem}
dl{margin:.5rem 0}
dl div{display:flex;flex-wrap:wrap;gap:0 .8rem;margin:.15rem 0}
dt{font-weight:600;min-width:17rem}dd{margin:0;overflow-wrap:anywhere}
pre{overflow-x:auto;padding:.4rem .6rem;border:1px solid var(--dw-line);margin:.3rem 0}
.err{margin:.4rem 0;padding:.3rem .6rem;border-left:4px solid var(--dw-err);overflow-wrap:anywhere;min-width:0}
.err p{margin:.15rem 0}
.expr{font-family:ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-all;line-height:2.3;margin:0}
.at{position:relative;background:#fde68a;color:#111;border-radius:2px}
.cr{position:absolute;left:50%;top:.9em;transform:translateX(-50%);line-height:1;font-size:1.25em;font-weight:700;color:var(--dw-err)}
.shape{display:flex;flex-wrap:wrap;gap:.3rem .6rem;align-items:end;margin:.5rem 0 .2rem}
.shape label{margin:0;font-size:.92em}
.shape input{width:6.5rem;display:block}
.an-wrap{display:flex;flex-wrap:wrap;gap:.2rem 1.5rem;align-items:flex-start}
.an-wrap dl{flex:1 1 20rem;min-width:0}
.an-wrap dt{min-width:15rem}
.lanes{flex:0 1 23rem;min-width:0;margin:.5rem 0}
.lanes svg{max-width:100%}
.lanes svg text{font-size:14px}
.lanes .la{fill:var(--dw-m)}
.lanes .lb{fill:var(--dw-p);fill-opacity:.35}
.lanes .lbh{stroke:var(--dw-p);stroke-width:1.6}
.lanes .ln{fill:none;stroke:var(--dw-line)}
.lanes .sp{fill:var(--dw-err);font-weight:700}
.lanes details{font-size:.9em}
.lanes ul{margin:.2rem 0;padding-left:1.2rem}
.perma{font-size:.9em;overflow-wrap:anywhere}
.perma:empty{display:none}
tbody.readings th[scope=rowgroup]{text-align:left;font-weight:600;padding-top:.7rem}
tbody.readings td[data-k=sentence]{white-space:normal;text-align:left}
.why{font-size:.92em;margin:0}
.picker:empty,.cmp:empty{display:none}
.picker select{font:inherit;padding:.3rem}
.cmp h3{font-size:1.05em;margin:1.2rem 0 .3rem}
.provs{margin:.2rem 0 .6rem;padding-left:1.2rem;font-size:.92em}
.g0{fill:var(--dw-m)}.g1{fill:#b45309}.g2{fill:#047857}.g3{fill:#be123c}
.why:empty,.note:empty,.warn:empty,.since:empty{display:none}
.since{list-style:none;margin:-.5rem 0 .8rem;padding:0;font-size:.95em}
.since li{margin:.1rem 0}
.note,.warn{margin:.2rem 0 .8rem;padding:.3rem .6rem;border-left:4px solid var(--dw-p)}
.warn{list-style:none}
.warn li{margin:.1rem 0}
button[disabled]{cursor:not-allowed}
.dl{display:none}
.ib{font:inherit;font-size:.85em;font-weight:normal;padding:.1rem .55rem;min-height:1.9rem;margin:.3rem 0 0;display:block}
.inote{font-size:.9em;margin:-.6rem 0 1rem}
[hidden]{display:none!important}
.ins{border:1px solid var(--dw-line);border-left:4px solid var(--dw-m);padding:.4rem .7rem .6rem;margin:0 0 1rem;min-width:0}
.ins-head{display:flex;flex-wrap:wrap;gap:.3rem 1rem;align-items:baseline;justify-content:space-between}
.ins-head .ib{margin:0}
.ins h3{font-size:1.05em;margin:.2rem 0}
.ins h3:focus{outline:none}
.ins h3:focus-visible{outline:3px solid var(--dw-m)}
.ins .meta,.ins .legend,.ins .counted,.wsay p{font-size:.88em;margin:.3rem 0;overflow-wrap:anywhere}
.ins .pred{font-size:.92em;margin:.4rem 0;padding:.2rem .6rem;border-left:4px solid var(--dw-p)}
.ins table{min-width:0;font-size:.86em;margin:.4rem 0 .6rem}
.ins caption{padding:.2rem 0;font-weight:600}
.ins th,.ins td{white-space:normal}
.rg th[scope=row]{white-space:nowrap}
.rg tr.stl td{text-align:left;border-top:0;padding-top:0;font-size:.95em}
.rg tr.stl .v{font-style:italic}
.sw{display:inline-block;width:.9em;height:.9em;margin-right:.35rem;vertical-align:-.1em;border:1px solid currentColor;opacity:.5}
tr[data-region=path_a] .sw{background:var(--dw-m);border-color:var(--dw-m);opacity:1}
tr[data-region=path_b] .sw{background:repeating-linear-gradient(45deg,var(--dw-p) 0 2px,transparent 2px 4px);border-color:var(--dw-p);opacity:1}
.warp1{display:flex;flex-wrap:wrap;gap:0 1.2rem;align-items:flex-start}
.warp1 .lanes{flex:0 1 23rem;margin:.2rem 0}
.wsay{flex:1 1 12rem;min-width:0}
.lanes .ticks text{font-size:11px;opacity:.8}
.lst{table-layout:fixed;width:100%}
.lst .fm{font-size:.85em;vertical-align:super;line-height:0}.lst col.c-path{width:2.6rem}.lst col.c-line{width:3rem}.lst col.c-pc{width:4.1rem}.lst col.c-lanes{width:8.6rem}.lst col.c-warp{width:6.6rem}.lst col.c-thread{width:7.6rem}
.lst th,.lst td{padding:.18rem .3rem;vertical-align:middle}
.lst thead th{text-align:left;vertical-align:bottom}
.lst thead th.n{text-align:right}
.lst th.sass{text-align:left;font-weight:normal;overflow-wrap:anywhere}
.lst th.sass code{font-size:.92em}
.lst td[data-k=path],.lst td[data-k=line],.lst td[data-k=pc]{text-align:left;font-variant-numeric:tabular-nums}
.lst td[data-k=pc]{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em}
.lst td[data-k=path]{font-weight:700}
.lst tr.run[data-region=path_a] td[data-k=path]{color:var(--dw-m);box-shadow:inset 4px 0 var(--dw-m)}
.lst tr.run[data-region=path_b] td[data-k=path]{color:var(--dw-p);box-shadow:inset 4px 0 var(--dw-p)}
.lst td[data-k=lanes]{text-align:left}
.lst .ln{font-size:.92em}
.lst .ln2{display:block;font-size:.85em}
.lst tr.sh th{text-align:left;padding:.35rem 0 .2rem;border-top:2px solid var(--dw-line)}
.lst tr.more td{text-align:left;font-size:.95em;padding:.2rem .3rem .4rem 2.2rem}
.lst tr.more p{margin:.1rem 0;overflow-wrap:anywhere}
.sx{font:inherit;font-weight:600;min-height:2.2rem;padding:.2rem .6rem;text-align:left}
.sx::before{content:'\u25b8\u00a0'}
.sx[aria-expanded=true]::before{content:'\u25be\u00a0'}
.xn{font:inherit;font-size:.85em;min-height:1.7rem;padding:0 .4rem;margin-left:.4rem}
.gd{background:none;color:inherit;font-weight:700;border:1.5px solid var(--dw-p);border-radius:.2rem;padding:0 .15rem}
.lbar{position:relative;display:inline-block;width:4.2rem;height:.85rem;border:1px solid currentColor;vertical-align:middle;margin-right:.4rem}
.lbar .act,.lbar .on{position:absolute;left:0;top:0;bottom:0}
.lbar .act{background:var(--dw-line)}
.lbar .on{background:currentColor;opacity:.7}
.lbar::after{content:'';position:absolute;left:50%;top:-3px;bottom:-3px;border-left:1px solid currentColor}
tr[data-region=path_a] .lbar .on,.legend .lbar .on{background:var(--dw-m);opacity:1}
tr[data-region=path_b] .lbar .on{background:repeating-linear-gradient(45deg,var(--dw-p) 0 2px,transparent 2px 4px);box-shadow:inset 0 0 0 1.5px var(--dw-p);opacity:1}
.legend .lbar .act{width:100%}.legend .lbar .on{width:50%}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
@container (max-width:36rem){
.scroll{overflow-x:visible;border:0}
table{min-width:0}
thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}
table,tbody,tr,th,td{display:block}
caption{display:block;padding:.3rem 0}
caption span{position:static;max-width:none}
tr{border:1px solid var(--dw-line);margin:.5rem 0;padding:.35rem .5rem;display:grid;grid-template-columns:1fr 1fr;gap:.1rem .8rem}
tbody th{grid-column:1/-1;border:0;padding:.1rem 0;font-weight:600}
td{border:0;padding:.1rem 0;text-align:left;white-space:normal;min-width:0!important}
td[data-k=ratio],td[data-k=predicted]{font-size:1.15em;font-weight:600}
tbody.readings th[scope=rowgroup]{grid-column:1/-1}
td[data-k=sentence]{grid-column:1/-1}
td[data-k=pad]{display:none}
.dl{display:block;font-size:.8em;font-weight:normal;opacity:.85}
.ins{padding:.3rem .5rem .5rem}
.rg tr.stl{display:block;border-top:0;margin-top:-.55rem}
.lst tr.run td[data-k=warp]{grid-column:1/4}.lst tr.run td[data-k=thread]{grid-column:4/5}
.lst thead{display:none}
.lst tr.run{grid-template-columns:2.5rem 3.7rem 4.3rem 1fr;gap:.1rem .4rem;margin:.3rem 0;padding:.25rem .4rem}
.lst tr.run td,.lst tr.run th{padding:.05rem .1rem}
.lst tr.run td[data-k=line] .v::before{content:'line ';font-size:.85em}
.lst th.sass{order:-1;grid-column:1/-1;width:auto}
.lst tr.run td[data-k=path] .dl,.lst tr.run td[data-k=line] .dl,.lst tr.run td[data-k=pc] .dl,.lst tr.run td[data-k=lanes] .dl{display:none}
.lst tr.sh{border:0;padding:0;margin:.6rem 0 .2rem;display:block}
.lst tr.more{display:block;border-top:0;margin-top:-.35rem}
.lst tr.more td{padding:.2rem .2rem .3rem}
}
@media (prefers-color-scheme:dark){:host{--dw-m:#7aa7ff;--dw-p:#d19bff;--dw-err:#f87171}}`;

  // Number formatting: see the top of the file. toFixed() rounds the exact
  // value of the double; only an exact tie differs from printf, and a double
  // is an exact tie at d decimals when v * 2^(d+1) is an odd integer.
  const D = '\u2014';
  const fin = (v) => typeof v === 'number' && isFinite(v);
  function fixed(v, d) {
    const t = Math.abs(v) * 2 ** (d + 1);
    if (!Number.isInteger(t) || t % 2 === 0 || t > Number.MAX_SAFE_INTEGER) return v.toFixed(d);
    const n = Math.floor(Math.abs(v) * 10 ** d); // the lower neighbour, exact for a tie
    const k = n % 2 === 0 ? n : n + 1;           // to the even one
    const s = String(k).padStart(d + 1, '0');
    return (v < 0 && k ? '-' : '') + (d ? `${s.slice(0, -d)}.${s.slice(-d)}` : s);
  }
  const fx = (v, d) => (fin(v) ? fixed(v, d) : D);
  const num = (v) => (fin(v) ? (Number.isInteger(v) ? String(v) : fixed(v, 1)) : D);
  // A ratio with its 95% interval (Row `ratio_ci`) as the transcript prints
  // it: 3 decimals, or 4 where 3 would print an interval that is not a
  // point as the point itself. The point takes the interval's decimals, so
  // 0.998 [0.996, 0.998] never reads as 1.00 beside an interval without it.
  // Null without an interval (a document from before them).
  function ciOf(v, ci) {
    if (!fin(v) || !ci || !fin(ci.lo) || !fin(ci.hi)) return null;
    const p = fixed(v, 3), d = ci.lo < ci.hi && p === fixed(ci.lo, 3) && p === fixed(ci.hi, 3) ? 4 : 3;
    return { lo: ci.lo, hi: ci.hi, d, point: fixed(v, d), text: `[${fixed(ci.lo, d)}, ${fixed(ci.hi, d)}]`, said: `95% interval ${fixed(ci.lo, d)} to ${fixed(ci.hi, d)}` };
  }
  // A relative change (Comparison `change`, `change_ci`) in percent to 1
  // decimal, as the server's summary line prints it.
  const pct = (v, sign) => (fin(v) ? (sign && v >= 0 ? '+' : '') + fixed(100 * v, 1) : D);
  // "3 min ago" from milliseconds.
  function ago(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 5) return 'just now';
    if (s < 90) return `${s} s ago`;
    if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
    if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
    return `${Math.round(s / 86400)} days ago`;
  }
  const utcMs = (t) => { const ms = Date.parse(t || ''); return isFinite(ms) ? ms : null; };
  // CUDA's words for "no usable GPU" in plain ones, CUDA's own text kept after.
  function plainGpuReason(why) {
    const w = String(why || '');
    let p = 'this server has no usable NVIDIA GPU';
    if (/InsufficientDriver|driver version is insufficient/i.test(w)) p = 'the NVIDIA driver on this server is missing or too old for its CUDA build';
    else if (/NoDevice|no CUDA-capable device|no CUDA device/i.test(w)) p = 'this server has no NVIDIA GPU';
    return w ? `${p} (${w})` : p;
  }
  const cuver = (v) => (fin(v) && v >= 1000 ? `${Math.floor(v / 1000)}.${(v % 1000) / 10}` : v == null ? '?' : String(v));

  function el(tag, attrs, ...kids) {
    const e = tag.startsWith('svg:') ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids.flat()) if (k != null) e.append(k);
    return e;
  }
  const svg = (tag, attrs, ...kids) => el('svg:' + tag, attrs, ...kids);

  // `text` cut at spaces into lines of at most `max` characters (a word
  // longer than that gets a line of its own, cut): SVG text does not wrap.
  // LABEL_CHARS fits a chart's 380-unit width at 15px bold.
  const LABEL_CHARS = 40;
  function wrapText(text, max) {
    const out = [];
    let line = '';
    for (const w of String(text).split(/\s+/).filter(Boolean)) {
      for (let word = w; word;) {
        const room = line ? max - line.length - 1 : max;
        if (word.length <= room) { line = line ? `${line} ${word}` : word; word = ''; }
        else if (line) { out.push(line); line = ''; }
        else { out.push(word.slice(0, max)); word = word.slice(max); }
      }
    }
    if (line || !out.length) out.push(line);
    return out;
  }

  // "8 of 8", or "0-256 (mean 128) of 256" when blocks differ (blockIdx.x
  // predicates): `mean` a row's *_per_block figure, `c` its Count over the
  // blocks ({min, max, total}), `of` what it counts out of.
  function count(mean, c, of) {
    let s = num(mean);
    if (c && fin(c.min) && c.min !== c.max) s = `${c.min}\u2013${c.max} (mean ${s})`;
    return fin(of) ? `${s} of ${of}` : s;
  }
  const checkText = (c) => (!c ? D : c.ok ? 'ok' : `FAIL ${c.mismatches}, first thread ${c.first_mismatch}`);
  // The GPU's testimony of a row (divergence.v1 `observed`, `counters`), one
  // line: what the witness saw and whether it agrees with the model, then the
  // counters' active lanes per instruction, divergent branches per block and
  // warp instructions per FMA. Null when the document has neither.
  function gpuSaw(r) {
    const o = r.observed, c = r.counters, parts = [];
    if (o) parts.push(`split ${fx(o.split_warps_per_block, 2)}`, `${fx(o.path_runs_per_block, 2)} path-runs`,
      o.agrees ? 'agrees with the model' : o.predicated ? 'predicated' : 'differs from the model');
    if (c) {
      parts.push(`${fx(c['smsp__thread_inst_executed_per_inst_executed.ratio'], 1)} lanes/instr`,
        `${fx(c.divergent_branches_per_block, 2)} divergent/block`, `${fx(c.warp_instructions_per_fma, 2)} instr/FMA`);
      if (c.predicated) parts.push('timed kernel predicated');
    }
    return parts.length ? parts.join(' \u00b7 ') : null;
  }
  // The source file most of a listing's runs are on (`main`, named once in
  // its caption) and a mark for each other file ({file: mark}).
  const FILE_MARKS = ['\u2020', '\u2021', '\u00a7', '\u00b6', '#', '*'];
  const fileMarks = (runs) => {
    const n = new Map();
    for (const u of runs) if (typeof u.file === 'string') n.set(u.file, (n.get(u.file) || 0) + 1);
    const order = [...n.keys()].sort((a, b) => n.get(b) - n.get(a));
    const marks = {};
    order.slice(1).forEach((f, k) => { marks[f] = FILE_MARKS[k] || `[${k + 1}]`; });
    return { main: order[0] || null, marks };
  };
  const hasTestimony = (t) => (t.rows || []).some((r) => r.observed != null || r.counters != null);
  const ncReason = (r) => r.comparable_reason || 'does different work from the baseline';
  // The `error` object of an Error answer, or of a failed Job ({} when there is none).
  const errOf = (j) => (j && j.error) || {};
  // Whether a Job (or QueuedJob) has ended.
  const ended = (j) => j.state === 'done' || j.state === 'failed';

  // A request field an Error names (`field`, the JSON name) in a reader's
  // words. `req` is the request the error answers: predicates[i] becomes
  // "predicate i+1 (its text)"; `mine`, in the try box, says which entry is
  // the reader's own predicate ("your predicate") and which the baseline.
  const FIELD_WORDS = {
    part: 'the part', predicates: 'the predicates', baseline: 'the baseline', blocks: 'the number of blocks',
    threads_per_block: 'the block shape (threads per block)', iterations: 'the iterations per thread',
    max_noise: 'the noise limit', budget_ms: 'the time budget', min_samples: 'the fewest samples',
    max_samples: 'the most samples', scenario: 'the scenario', witness: 'the witness switch', counters: 'the counters switch',
  };
  function fieldWords(field, req, mine) {
    if (!field) return '';
    const m = /^predicates\[(\d+)\]$/.exec(field);
    const list = (req && Array.isArray(req.predicates)) ? req.predicates : [];
    if (m) {
      const i = Number(m[1]), text = list[i];
      if (mine && i === 0) return 'your predicate';
      if (mine && i === 1) return `the baseline predicate (${text})`;
      return text != null ? `predicate ${i + 1} (${text})` : `predicate ${i + 1}`;
    }
    return FIELD_WORDS[field] || `the field ${field}`;
  }
  // The text an Error's `field` names, when it is a predicate of `req`.
  function fieldText(field, req) {
    const m = /^predicates\[(\d+)\]$/.exec(field || '');
    if (m && req && Array.isArray(req.predicates)) return req.predicates[Number(m[1])];
    if (field === 'baseline' && req) return req.baseline;
    return undefined;
  }
  const capital = (t) => t.charAt(0).toUpperCase() + t.slice(1);

  // A predicate's text with a caret under the character an Error's
  // `expr_column` names (1-based; one past the end for "unexpected end of
  // input"). The text wraps at any width and the caret stays under its
  // character, being drawn below the marked character rather than on a
  // second line of its own. The column counts bytes, which is the character
  // index here: the parser stops at the first byte that is not ASCII.
  function caretView(text, col) {
    const i = Math.min(Math.max(0, col - 1), text.length);
    const at = text.slice(i, i + 1) || '\u00a0';
    return el('p', { class: 'expr' }, el('code', {}, text.slice(0, i),
      el('mark', { class: 'at' }, at, el('span', { class: 'cr', 'aria-hidden': 'true' }, '^')), text.slice(i + 1)));
  }

  // A warp's string of a lane map (Row `lanes_block0`: A, B or - per lane)
  // in words: "lanes 0-15 on A, 16-31 on B"; "all 32 lanes on B"; a warp
  // that repeats a shorter pattern says the pattern once ("lane 0 on B, 1 on
  // A, repeating every 2 lanes"); one of more than four runs otherwise lists
  // each path's lanes; a partial warp says which lanes it lacks.
  function laneWords(w) {
    const present = w.replace(/-+$/, ''), n = present.length;
    const runsOf = (str) => {
      const out = [];
      for (let i = 0; i < str.length;) {
        let j = i;
        while (j + 1 < str.length && str[j + 1] === str[i]) j++;
        out.push({ p: str[i], a: i, b: j });
        i = j + 1;
      }
      return out;
    };
    const span = (r) => (r.a === r.b ? String(r.a) : `${r.a}-${r.b}`);
    const list = (rs) => (rs[0].a === rs[0].b ? 'lane ' : 'lanes ') + rs.map((r) => `${span(r)} on ${r.p}`).join(', ');
    const runs = runsOf(present);
    let period = 0;
    for (let q = 2; q <= n / 2 && !period; q++) if (n % q === 0 && present === present.slice(0, q).repeat(n / q)) period = q;
    let s;
    if (runs.length === 1) s = `all ${n} lanes on ${runs[0].p}`;
    else if (runs.length <= 4) s = list(runs);
    else if (period && runsOf(present.slice(0, period)).length <= 4) s = `${list(runsOf(present.slice(0, period)))}, repeating every ${period} lanes`;
    else s = ['A', 'B'].map((p) => { const on = runs.filter((r) => r.p === p); return `${on.reduce((k, r) => k + r.b - r.a + 1, 0)} lanes on ${p} (${on.map(span).join(', ')})`; }).join(', ');
    if (n < w.length) s += `; lanes ${n}-${w.length - 1} absent (a partial warp)`;
    return s;
  }
  const isSplit = (w) => w.includes('A') && w.includes('B');

  // The instruction listing (Row `instructions`): its regions in the
  // reader's words, the text tag a run carries beside its colour (so colour
  // is never the only sign of its path), counts grouped in thousands (they
  // are exact: Nsight Compute's Source page shows the same numbers), pcs in
  // hex, and the PC-sampling stall reasons' short names in words.
  const REGION = { before: 'Before the branch', path_a: 'Path A', path_b: 'Path B', reconverge: 'Reconvergence', after: 'After the branch' };
  const regionIn = (k) => (REGION[k] ? REGION[k].replace(/^(Before|After|Reconvergence|Path)/, (w) => w.toLowerCase()) : k);
  const TAG = { path_a: 'A', path_b: 'B', reconverge: 'sync' };
  const CONTROL = /^(BRA|BRX|JMP|JMX|CALL|RET|EXIT|BREAK|BSSY|BSYNC|WARPSYNC|YIELD)\b/;
  const inBranch = (k) => k === 'path_a' || k === 'path_b' || k === 'reconverge';
  const big = (v) => (fin(v) ? Math.round(v).toLocaleString('en-US') : D);
  const hex = (pc) => (Number.isInteger(pc) ? '0x' + pc.toString(16).padStart(4, '0') : D);
  const STALL = {
    wait: 'wait (fixed latency)', selected: 'selected (issuing)', not_selected: 'not selected', long_sb: 'long scoreboard',
    short_sb: 'short scoreboard', no_inst: 'no instruction', imc: 'constant cache miss', branch_resolving: 'branch resolving',
    math: 'math pipe throttle', mio: 'MIO throttle', lg: 'LG throttle', tex: 'texture throttle', drain: 'drain',
    dispatch: 'dispatch stall', membar: 'memory barrier', sleep: 'sleeping', barrier: 'barrier', misc: 'miscellaneous',
    // CUPTI's own names (smsp__pcsamp_warps_issue_stalled_<name>) where the words differ from the name's.
    imc_miss: 'constant cache miss', long_scoreboard: 'long scoreboard', short_scoreboard: 'short scoreboard',
    no_instructions: 'no instruction', math_pipe_throttle: 'math pipe throttle', mio_throttle: 'MIO throttle',
    lg_throttle: 'LG throttle', tex_throttle: 'texture throttle',
  };
  const stallWords = (k) => STALL[k] || String(k).replace(/_/g, ' ');
  const COLLECTOR = { 'cupti-sass': 'CUPTI\u2019s SASS metrics', ncu: 'Nsight Compute\u2019s Source page' };
  // Lanes per execution of a run: active, and with the predicate on.
  const activeLanes = (x) => (x.warp_executions > 0 ? x.lanes : 0);
  const onLanes = (x) => (x.warp_executions > 0 ? x.pred_on_thread_executions / x.warp_executions : 0);
  // A run's lanes in words: the lane bar's text alternative.
  function lanesSaid(x) {
    if (!(x.warp_executions > 0)) return 'never executed';
    const a = activeLanes(x), o = onLanes(x);
    return `${fx(a, 1)} of 32 lanes active per execution` + (Math.abs(a - o) > 0.05 ? `, ${fx(o, 1)} with the predicate on` : '');
  }

  class DivergenceWidget extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: 'open' });
      const uid = 'dw' + Math.random().toString(36).slice(2, 8);
      this.uid = uid;
      this.setAttribute('state', 'loading');
      this.prov = el('p', { class: 'prov' }, 'Loading the latest measurement\u2026');
      this.note = el('p', { class: 'note' });
      this.since = el('ul', { class: 'since', 'aria-label': 'Since the previous night' });
      this.warn = el('ul', { class: 'warn', 'aria-label': 'Warnings about this measurement' });
      this.tables = el('div', { class: 'tables' });
      this.picker = el('p', { class: 'picker' });
      this.cmp = el('section', { class: 'cmp' });
      this.why = el('p', { class: 'why', id: uid + '-why' });
      this.btn = el('button', { type: 'button', onclick: () => this.measureSuite(), 'aria-describedby': uid + '-why' }, 'Measure now');
      this.prog = el('progress', { hidden: true, max: 1, 'aria-label': 'Measurement progress' });
      this.msg = el('p', { class: 'msg', role: 'status', 'aria-live': 'polite' });
      const measure = !this.hasAttribute('no-measure');
      if (!measure) this.btn = null;
      root.append(el('style', { text: CSS }), this.picker, this.prov, this.since, this.note, this.warn, this.tables,
        measure ? el('div', { class: 'bar' }, this.btn, this.prog, this.why) : null, this.msg);
      root.append(this.cmp);
      if (!this.hasAttribute('no-try')) root.append(this.tryBox(uid, measure));
      this.blocked = '';
      this.probe();
      this.load();
    }

    get base() { return (this.getAttribute('server') || '').replace(/\/+$/, ''); }
    get suite() { return this.getAttribute('suite') || 'day22-part1'; }

    // fetch() that never throws: {status, json, headers}; status 0 when no
    // answer could be read, with `refused` true when the server did answer
    // but the browser kept the answer from this page (CORS).
    async call(method, path, body, signal) {
      try {
        const res = await fetch(this.base + path, {
          method, signal, headers: body ? { 'Content-Type': 'application/json' } : {},
          body: body ? JSON.stringify(body) : undefined,
        });
        let json = null;
        try { json = await res.json(); } catch (_) { /* not JSON */ }
        return { status: res.status, json, headers: res.headers };
      } catch (e) {
        if (e.name === 'AbortError') throw e;
        const refused = await this.corsRefused();
        const reason = refused ? this.corsWords() : `the server${this.cross ? ` at ${this.serverOrigin}` : ''} could not be reached`;
        return { status: 0, refused, json: { error: { reason } }, headers: new Headers() };
      }
    }

    // The server's origin, and whether it is not this page's (only then can
    // CORS refuse an answer).
    get serverOrigin() { try { return new URL(this.base || location.href, location.href).origin; } catch (_) { return this.base; } }
    get cross() { return this.serverOrigin !== location.origin; }

    // After a failed fetch: did the server answer? A fetch in no-cors mode
    // needs no permission and resolves (to an opaque answer) whenever the
    // server answers, and fails as the first did when nothing does. A
    // server that answers but whose answers the page may not read has not
    // allowed this page's origin (divergence serve --cors-origin).
    async corsRefused() {
      if (!this.cross) return false;
      try { await fetch(this.base + '/healthz', { mode: 'no-cors', cache: 'no-store' }); return true; } catch (_) { return false; }
    }

    // The refusal in words: in full (the provenance line, the first thing
    // a reader sees), or `short` where the full words are already on show.
    corsWords(short) {
      const fix = `divergence serve --cors-origin ${location.origin}`;
      return short ? `the server does not let this page\u2019s origin read its answers (a CORS refusal; ${fix} allows it)`
        : `the server at ${this.serverOrigin} answers, but does not let pages of this origin (${location.origin}) read its answers ` +
        `(a CORS refusal); its operator can allow this page with ${fix}`;
    }

    say(text) { this.msg.textContent = text; }
    get keep() { return this.doc ? KEEP : ''; }

    // What this server lets a page do: a GPU to measure on, and no token needed.
    async probe() {
      const [h, d] = await Promise.all([this.call('GET', '/healthz'), this.call('GET', '/device')]);
      // Refused by CORS, this page can neither read nor measure: say so, once.
      if (h.refused) { this.block(`Measuring is off: ${this.corsWords(true)}.`); return; }
      const m = h.status === 200 && h.json && h.json.measure;
      let dev = d.status === 200 && d.json ? d.json.device : null;
      // A worker still starting (or restarting) has not said yet whether
      // there is a GPU, so its `present: false` is no verdict: ask again
      // shortly, and until then leave the buttons as a GPU would.
      if (dev && ['starting', 'down'].includes(d.json.worker.state)) {
        dev = null;
        if ((this.probes = (this.probes || 0) + 1) < PROBE_LIMIT) setTimeout(() => this.probe(), PROBE_MS);
      } else if (!dev) {
        // A front may keep /device to operators (deploy/nginx): ask /readyz,
        // whose 503 names a missing GPU (a worker still starting is no reason).
        const r = await this.call('GET', '/readyz');
        const why = r.status === 503 ? errOf(r.json).reason || '' : '';
        if (why && !/worker is (starting|down)|shutting down/.test(why)) dev = { present: false, reason: why };
      }
      this.noGpu = !!(dev && dev.present === false);
      let why = '';
      if (this.noGpu) why = `Measuring is off: ${plainGpuReason(dev.reason)}.`;
      else if (m && m.token_required && !(m.open_max_cost > 0))
        why = 'Measuring is off: this server measures only for callers with an access token, which a page cannot send.';
      this.block(why);
      if (this.doc) this.labelRecorded();
    }

    block(why) {
      this.blocked = why;
      this.why.textContent = why;
      this.setButtons(!why && !this.busy);
    }

    setButtons(on) { [this.btn, this.mbtn].filter(Boolean).forEach((x) => { x.disabled = !on; }); }

    // The suite's latest evidence: this server's GPU, or the `gpu` attribute's
    // (GET /evidence/{gpu}/latest/{suite}); with evidence of several GPU
    // models in the store, a selector and the side-by-side view as well.
    async load() {
      const ix = await this.call('GET', '/evidence/latest');
      const index = ix.status === 200 && ix.json ? ix.json : {};
      const gpus = Array.isArray(index.gpus) ? index.gpus : [];
      const good = (g) => (g.suites || []).some((e) => e && e.suite === this.suite && e.date);
      this.gpus = gpus.filter(good);
      const want = this.getAttribute('gpu') || '';
      if (!this.selected) this.selected = want || index.gpu || '';
      await this.loadGpu(this.selected, index);
      if (this.gpus.length >= 2) this.compare(index);
    }

    async loadGpu(slug, index) {
      const own = !slug || slug === index.gpu;
      const r = await this.call('GET', own ? `/evidence/latest/${encodeURIComponent(this.suite)}`
        : `/evidence/${encodeURIComponent(slug)}/latest/${encodeURIComponent(this.suite)}`);
      const list = own ? index.suites : ((index.gpus || []).find((g) => g.gpu === slug) || {}).suites;
      const entry = Array.isArray(list) ? list.find((e) => e && e.suite === this.suite) : null;
      const doc = r.status === 200 && r.json ? r.json.document : null;
      if (!doc) {
        this.setAttribute('state', 'empty');
        const last = entry && entry.last_attempt;
        const on = slug && !own ? ` on ${slug}` : '';
        if (r.status === 404 && last && last.status && last.status !== 'ok') {
          this.prov.textContent = `No good measurement of ${this.suite}${on} has been recorded yet: the last attempt` +
            ` (${last.date || 'date unknown'}) failed: ${last.reason || 'no reason was recorded'}.`;
        } else if (r.status === 404) {
          this.prov.textContent = `No measurement of ${this.suite}${on} has been recorded on this server yet, so there are no numbers to show: ${HOW}.`;
        } else {
          this.prov.textContent = `The latest measurement could not be loaded: ${errOf(r.json).reason || 'HTTP ' + r.status}.`;
        }
        return;
      }
      this.evidence = r.json;
      this.entry = entry;
      this.show(doc, { ...(r.json.provenance || {}), gpu_name: r.json.gpu_name }, null);
      this.setAttribute('state', 'shown');
      // Shown another GPU's evidence: a measurement here runs on this server's own.
      if (!own && this.btn && !this.blocked) {
        const mine = ((index.gpus || []).find((g) => g.gpu === index.gpu) || {}).name;
        this.why.textContent = mine ? `Measure now runs on this server's GPU (${mine}), not on the one shown.` : '';
      } else if (!this.blocked) {
        this.why.textContent = '';
      }
    }

    // Several GPU models: a selector for the main view, and one table and one
    // chart per table of the suite with each GPU's ratio side by side, under
    // each GPU's provenance.
    async compare(index) {
      const recs = await Promise.all(this.gpus.map((g) => this.call('GET',
        `/evidence/${encodeURIComponent(g.gpu)}/latest/${encodeURIComponent(this.suite)}`)));
      const cols = this.gpus.map((g, i) => ({ g, doc: recs[i].status === 200 && recs[i].json ? recs[i].json.document : null, rec: recs[i].json }))
        .filter((c) => c.doc);
      if (cols.length < 2) return;
      const uid = this.uid + '-gpu';
      const sel = el('select', { id: uid, onchange: async (e) => { this.selected = e.target.value; await this.loadGpu(this.selected, index); } },
        cols.map((c) => el('option', { value: c.g.gpu, selected: c.g.gpu === (this.selected || index.gpu) ? true : null }, c.g.name)));
      this.picker.replaceChildren(el('label', { for: uid }, 'GPU shown above: '), sel);
      const provs = el('ul', { class: 'provs' }, cols.map((c) => el('li', {}, ...this.provenance(c.doc, { ...((c.rec && c.rec.provenance) || {}), gpu_name: c.g.name }, null))));
      const tables = (cols[0].doc.tables || []).flatMap((t, ti) => {
        const rows = t.rows || [];
        const ratio = (c, r) => { const ct = (c.doc.tables || []).find((x) => x.id === t.id); const cr = ct && (ct.rows || []).find((x) => x.name === r.name); return cr ? cr.ratio : null; };
        const head = ['Predicate', 'Predicted ratio', ...cols.map((c) => `Ratio on ${c.g.name}`)];
        const body = rows.map((r) => el('tr', {},
          el('th', { scope: 'row' }, el('code', {}, r.label)),
          [fx(r.predicted_ratio, 2), ...cols.map((c) => fx(ratio(c, r), 2))].map((v, j) =>
            el('td', { 'data-k': j ? `gpu-${cols[j - 1].g.gpu}` : 'predicted' }, el('span', { class: 'dl', 'aria-hidden': 'true' }, head[j + 1]), el('span', { class: 'v' }, v)))));
        const table = el('div', { class: 'scroll', role: 'region', tabindex: 0, 'aria-label': `${t.title} on each GPU` },
          el('table', { class: 'cmp' }, el('caption', {}, el('span', {}, `${t.title} \u2014 the ratio against ${t.baseline || 'the baseline'} on each GPU`)),
            el('thead', {}, el('tr', {}, head.map((h) => el('th', { scope: 'col' }, h)))), el('tbody', {}, body)));
        return [table, this.compareChart(t, rows, cols, ratio, `${uid}-${ti}`)];
      });
      this.cmp.replaceChildren(el('h3', {}, `${this.suite} on each GPU`), provs, ...tables);
    }

    // Per row: one solid bar per GPU (its own colour) and the hatched prediction.
    compareChart(t, rows, cols, ratio, id) {
      // A legend names the GPUs (names are long); the bars carry only their values.
      const W = 380, X0 = 8, XMAX = 300, LH = 20, TOP = 8 + (cols.length + 1) * LH + 6, BH = 14, RH = 26 + (cols.length + 1) * (BH + 4);
      const vals = rows.flatMap((r) => [r.predicted_ratio, ...cols.map((c) => ratio(c, r))]).filter(fin);
      const max = Math.max(1, ...vals) * 1.05;
      const x = (v) => X0 + (XMAX - X0) * (fin(v) ? Math.max(0, v) : 0) / max;
      const H = TOP + rows.length * RH + 20;
      const g = rows.map((r, i) => {
        const y = TOP + i * RH;
        const bars = cols.map((c, k) => {
          const v = ratio(c, r), yy = y + 22 + k * (BH + 4);
          return [svg('rect', { class: `g${k % 4}`, x: X0, y: yy, width: Math.max(1, x(v) - X0), height: BH }),
            svg('text', { x: x(v) + 5, y: yy + 12 }, `${fx(v, 2)}\u00d7`)];
        });
        const yp = y + 22 + cols.length * (BH + 4);
        return svg('g', { class: 'pair', 'data-row': i },
          svg('text', { x: X0, y: y + 14, 'font-weight': 600 }, r.label), bars.flat(),
          svg('rect', { class: 'bp', fill: `url(#${id}-h)`, x: X0, y: yp, width: Math.max(1, x(r.predicted_ratio) - X0), height: BH }),
          svg('text', { x: x(r.predicted_ratio) + 5, y: yp + 12 }, `${fx(r.predicted_ratio, 2)}\u00d7`));
      });
      const desc = rows.map((r) => `${r.label}: ` + cols.map((c) => `${c.g.name} ${fx(ratio(c, r), 2)}x`).join(', ') +
        `, predicted ${fx(r.predicted_ratio, 2)}x`).join('; ');
      const one = x(1);
      return el('figure', {}, el('figcaption', {}, 'Chart: one solid bar per GPU (its measured ratio), the hatched bar the model\u2019s prediction; the dashed line is 1.00.'),
        svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-t ${id}-d` },
          svg('title', { id: `${id}-t` }, `${t.title}: the measured ratio on each GPU beside the prediction`), svg('desc', { id: `${id}-d` }, desc),
          svg('defs', {}, svg('pattern', { id: `${id}-h`, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
            svg('line', { class: 'hatch', x1: 0, y1: 0, x2: 0, y2: 6 }))),
          svg('g', { class: 'legend', 'aria-hidden': 'true' },
            cols.map((c, k) => [svg('rect', { class: `g${k % 4}`, x: X0, y: 8 + k * LH, width: 18, height: 14 }),
              svg('text', { x: X0 + 24, y: 20 + k * LH }, c.g.name)]).flat(),
            svg('rect', { class: 'bp', fill: `url(#${id}-h)`, x: X0, y: 8 + cols.length * LH, width: 18, height: 14 }),
            svg('text', { x: X0 + 24, y: 20 + cols.length * LH }, 'predicted (model)')),
          g, svg('line', { class: 'ref', x1: one, x2: one, y1: TOP, y2: H - 16 }),
          svg('text', { x: one, y: H - 3, 'text-anchor': one < 70 ? 'start' : 'middle' }, '1.00 = baseline')));
    }

    // The note under the provenance for evidence read from the store: what it is
    // (a recorded measurement, with its age), and a failed run since.
    labelRecorded() {
      if (!this.evidence || this.live) return;
      const d = this.doc.device || {}, e = this.entry;
      const parts = [];
      if (this.noGpu) parts.push(`This is a recorded measurement from ${d.name || 'another GPU'}: this server has no GPU and cannot measure again.`);
      if (e && e.status && e.status !== 'ok' && e.last_attempt)
        parts.push(`The latest run (${e.last_attempt.date || 'date unknown'}) failed: ${e.last_attempt.reason || 'no reason recorded'}; these are the last good numbers.`);
      this.note.textContent = parts.join(' ');
    }

    // Renders a document into the main area (the last good numbers from now on).
    // `live`: null for stored evidence, else {age_s} of a measurement made on request.
    show(doc, prov, live) {
      this.doc = doc;
      this.live = live;
      this.prov.replaceChildren(...this.provenance(doc, prov, live));
      this.since.replaceChildren(...(live ? [] : this.sinceLines(this.evidence, doc)));
      this.warn.replaceChildren(...this.warnings(doc).map((w) => el('li', {}, '\u26a0 ', w)));
      this.tables.replaceChildren(...this.renderDoc(doc, 'main'));
      this.note.textContent = '';
      this.labelRecorded();
    }

    // The lines under the provenance of stored evidence (Evidence
    // `comparison`): the night against the previous good night on the same
    // GPU model. "Unchanged since <date>" when every ratio is the same;
    // else each changed ratio (at most SINCE_ROWS, the ambiguous after the
    // higher and lower) with its change and interval, and what changed
    // around the numbers (driver, CUDA, build, clocks). Nothing on a first
    // night or for a record from before comparisons.
    sinceLines(ev, doc) {
      const c = ev && ev.comparison;
      if (!c || !c.previous) return [];
      const prev = c.previous.date || 'the previous night', n = c.counts || {}, tol = `${pct(c.tolerance)}%`;
      const compared = ['same', 'higher', 'lower', 'ambiguous'].reduce((k, w) => k + (fin(n[w]) ? n[w] : 0), 0);
      const env = (Array.isArray(c.environment) ? c.environment : []).flatMap((e, k) => [k ? '; ' : '', `${e.what} ${e.before}`,
        el('span', { 'aria-hidden': 'true' }, ' \u2192 '), el('span', { class: 'sr' }, ' to '), e.after]);
      const tables = doc.tables || [];
      const title = (id) => { const t = tables.find((x) => x.id === id); return tables.length > 1 && t ? `${t.title}: ` : ''; };
      const ratios = (k) => `${k} ratio${k === 1 ? '' : 's'}`;
      const out = [];
      if (!compared) out.push(el('li', {}, `No ratio could be compared with ${prev}: one of the two nights has no intervals.`));
      else if (c.unchanged_since) out.push(el('li', { 'data-label': 'same' }, `Unchanged since ${c.unchanged_since}`, ` (${ratios(compared)} the same within ${tol})`,
        env.length ? ['; since ', prev, ': ', ...env] : null, '.'));
      else {
        const rank = { higher: 0, lower: 0, ambiguous: 1 };
        const rows = (Array.isArray(c.rows) ? c.rows : []).filter((r) => r.previous && r.previous.label in rank)
          .sort((a, b) => rank[a.previous.label] - rank[b.previous.label]);
        for (const r of rows.slice(0, SINCE_ROWS)) {
          const ch = r.previous, ci = ch.change_ci || {};
          const what = ch.label === 'higher' ? [el('b', {}, `higher by ${pct(ch.change)}%`), ` [${pct(ci.lo)}, ${pct(ci.hi)}]`]
            : ch.label === 'lower' ? [el('b', {}, `lower by ${pct(-ch.change)}%`), ` [${pct(-ci.hi)}, ${pct(-ci.lo)}]`]
              : [el('b', {}, 'ambiguous'), `: ${pct(ch.change, true)}% [${pct(ci.lo, true)}, ${pct(ci.hi, true)}]`];
          out.push(el('li', { 'data-label': ch.label, 'data-table': r.table, 'data-row': r.name }, title(r.table), el('code', {}, r.label), ': ', what,
            ` since ${prev}`, ch.label === 'ambiguous' ? ` (neither shown within ${tol} nor beyond it)` : null, '.'));
        }
        const more = rows.length - SINCE_ROWS;
        if (more > 0) out.push(el('li', {}, `${more} more ratio${more === 1 ? ' changed or is' : 's changed or are'} ambiguous.`));
        if (!rows.length) out.push(el('li', {}, `No ratio changed by more than ${tol} since ${prev}.`));
        if (env.length) out.push(el('li', { 'data-k': 'environment' }, `Changed since ${prev}: `, ...env, '.'));
      }
      return out;
    }

    // The document's warnings and the rows' notes, each once.
    warnings(doc) {
      const out = new Set((doc.warnings || []).filter((w) => typeof w === 'string' && w));
      // Table `intervals_ok` (what `noise_ok`, its old name, now means): the interval the stopping rule judges, not the per-sample spread.
      for (const t of doc.tables || []) if (t.intervals_ok === false) out.add(`${t.title}: ${STOPPED[t.stop_reason] || 'sampling stopped'} with an interval` +
        ` wider than \u00b1${fx(100 * t.halfwidth_target, 2)}% of its ratio (the widest \u00b1${fx(100 * t.worst_halfwidth, 2)}%).`);
      return [...out];
    }

    provenance(doc, prov, live) {
      const d = doc.device || {};
      const fin_utc = prov.finished_utc || doc.finished_utc || '';
      const when = String(fin_utc).replace('T', ' ').replace(/(:\d\d)(\.\d+)?Z?$/, '$1');
      const t = utcMs(fin_utc);
      let head;
      if (live) head = fin(live.age_s) && live.age_s >= 5 ? `Measured ${ago(live.age_s * 1000)} (a cached result of the same request) on ` : 'Measured just now on ';
      else head = 'Measured on ';
      const parts = [
        head + (d.name || prov.gpu_name || 'an unknown GPU'),
        d.nvidia_driver_version ? 'driver ' + d.nvidia_driver_version : 'CUDA driver ' + cuver(d.driver_version_raw),
        'CUDA runtime ' + cuver(d.runtime_version_raw),
        when ? `${when} UTC${!live && t != null ? ` (${ago(Date.now() - t)})` : ''}` : 'date unknown',
        `SM clock ${fx(d.measured_sm_clock_mhz, 0)} MHz measured` + (fin(d.rated_sm_clock_mhz) ? ` (rated ${fx(d.rated_sm_clock_mhz, 0)} MHz)` : ''),
      ];
      return [parts.join(' \u00b7 ') + '.'];
    }

    // Per table: the table, a line on the rows without an instruction
    // listing, the panel a row's listing opens in, the chart.
    renderDoc(doc, key) {
      return (doc.tables || []).flatMap((t, i) => {
        const ins = this.listingPanel(`${this.uid}-${key}-${i}-ins`), noteId = `${this.uid}-${key}-${i}-note`;
        return [this.table(t, doc, ins, noteId), t.note ? this.baseNote(t, noteId) : null, this.listingNote(t, doc), ins.panel,
          this.chart(t, `${this.uid}-${key}-${i}`)].filter(Boolean);
      });
    }

    table(t, doc, ins, noteId) {
      const testimony = hasTestimony(t);
      const cols = ['Predicate', 'Warps split (per block)', 'Threads on path A (per block)', 'Time (ms, median)',
        'Ratio vs baseline', 'Predicted ratio', 'Noise (%)', 'Check'].concat(testimony ? ["GPU's testimony"] : []);
      // A ratio with an interval to the interval's decimals; the baseline
      // row's is 1 by definition, so it shows no interval and takes the
      // table's decimals (the most any of its intervals needs).
      const cis = (t.rows || []).map((r, i) => (i === t.baseline_row ? null : ciOf(r.ratio, r.ratio_ci)));
      const ciD = Math.max(0, ...cis.map((c) => (c ? c.d : 0)));
      const body = (t.rows || []).map((r, i) => {
        const isBase = i === t.baseline_row;
        const first = el('th', { scope: 'row' }, el('code', { title: r.name }, r.label), isBase ? ' (baseline)' : null);
        if (r.comparable === false) first.append(el('span', { class: 'nc' }, el('b', {}, 'not comparable'), ncReason(r)));
        // The table's note is about its baseline: the baseline row points to it (and is described by it).
        if (isBase && t.note) { first.append(el('span', { class: 'bn' }, 'See the note under the table.')); first.setAttribute('aria-describedby', noteId); }
        const ci = cis[i];
        if (ins && r.instructions !== null && typeof r.instructions === 'object') first.append(this.listingButton(t, r, i, ins));
        const c = r.check, cells = {
          split: count(r.warps_split_per_block, r.warps_split, r.warps_per_block),
          'on-a': count(r.threads_on_a_per_block, r.threads_on_a, r.threads_per_block),
          time: fx(r.time_ms && r.time_ms.median, 3),
          ratio: ci ? ci.point : isBase && ciD && fin(r.ratio) ? fixed(r.ratio, ciD) : fx(r.ratio, 2), predicted: fx(r.predicted_ratio, 2),
          noise: fin(r.noise) ? fx(r.noise * 100, 2) : D, check: checkText(c) };
        if (testimony) cells.gpu = gpuSaw(r) || D;
        // The interval under the ratio; in words for screen readers.
        const under = { ratio: ci ? [el('span', { class: 'ci', 'aria-hidden': 'true' }, ci.text), el('span', { class: 'sr' }, `, ${ci.said}`)]
          : isBase && ciD ? [el('span', { class: 'ci' }, 'by definition')] : null };
        // Each cell carries its column name (shown only where the table reflows into cards).
        return el('tr', { 'data-row': i }, first, Object.entries(cells).map(([k, v], j) =>
          el('td', { 'data-k': k, class: k === 'check' && c && !c.ok ? 'fail' : null },
            el('span', { class: 'dl', 'aria-hidden': 'true' }, cols[j + 1]), el('span', { class: 'v' }, v), under[k])));
      });
      const cfg = doc.config || {};
      const cap = `${t.title} \u2014 ratios against ${t.baseline || 'the baseline row'}` +
        (fin(cfg.blocks) ? `; ${cfg.blocks} blocks \u00d7 ${cfg.threads_per_block} threads, ${cfg.iterations} multiply-adds per thread` : '') +
        (t.kernel ? `; kernel: ${t.kernel}` : '') + (t.kernel_iterations ? ` (${t.kernel_iterations} iterations)` : '');
      return el('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': t.title + ' (scrolls sideways)' },
        el('table', {}, el('caption', {}, el('span', {}, cap)),
          el('thead', {}, el('tr', {}, cols.map((c) => el('th', { scope: 'col' }, c)))),
          el('tbody', {}, body), this.readingRows(t, cols)));
    }

    // The table's note (Table `note`: a baseline that puts every thread of
    // the block on one path, say) under the table and the try box's
    // analysis, full width (it runs to a few lines: under the baseline
    // row's label it made that row a column of words), with the baseline
    // the table suggests instead (Table `suggested_baseline`).
    baseNote(t, id) {
      const text = capital(t.note) + (/[.!?]$/.test(t.note) ? '' : '.');
      return el('p', { class: 'tnote', id }, text, t.suggested_baseline
        ? [' To compare the rows, measure them against ', el('code', {}, t.suggested_baseline), ' as the baseline.'] : null);
    }

    // The instruction listing of a row (Row `instructions`), opened from the
    // row's "Instructions" button into the table's panel, one row at a time.
    // It is built when opened, and the sections a reader did not open are
    // built when first expanded, so ~600 instructions (~40-200 runs) cost
    // nothing until asked for.
    listingPanel(id) {
      const ins = { id, buttons: [] };
      ins.panel = el('section', { class: 'ins', id, hidden: true, 'aria-label': 'Instruction listing',
        onkeydown: (e) => { if (e.key === 'Escape' && ins.open != null) { e.preventDefault(); this.closeListing(ins, true); } } });
      return ins;
    }

    listingButton(t, r, i, ins) {
      const b = el('button', { type: 'button', class: 'ib', 'aria-expanded': 'false', 'aria-controls': ins.id, 'data-row': i,
        'aria-label': `Instructions of ${r.label}`, onclick: () => this.toggleListing(t, r, i, ins) }, 'Instructions');
      ins.buttons[i] = b;
      return b;
    }

    toggleListing(t, r, i, ins) {
      if (ins.open === i) { this.closeListing(ins, true); return; }
      this.closeListing(ins, false);
      ins.open = i;
      ins.panel.replaceChildren(...this.listing(t, r, () => this.closeListing(ins, true)).filter(Boolean));
      ins.panel.hidden = false;
      ins.panel.setAttribute('aria-label', `Instruction listing of ${r.label}`);
      ins.buttons[i].setAttribute('aria-expanded', 'true');
      ins.panel.querySelector('h3').focus();
    }

    // Closes the panel; `refocus`: back to the button that opened it.
    closeListing(ins, refocus) {
      const was = ins.open;
      ins.open = null;
      ins.panel.hidden = true;
      ins.panel.replaceChildren();
      for (const b of ins.buttons) if (b) b.setAttribute('aria-expanded', 'false');
      if (refocus && was != null && ins.buttons[was]) ins.buttons[was].focus();
    }

    // Under the table: the rows that have no listing, and why (the
    // document's testimony.instructions says it once for all rows).
    listingNote(t, doc) {
      const ti = doc.testimony && doc.testimony.instructions;
      if (!ti) return null;
      const none = (t.rows || []).filter((r) => r.instructions === null);
      if (!none.length) return null;
      const why = typeof ti.reason === 'string' && ti.reason ? ti.reason : '';
      const text = !ti.taken ? `Instruction listings were not collected${why ? `: ${why}` : '.'}`
        : `No instruction listing for ${none.map((r) => r.label).join(', ')}${why ? `: ${why}` : '.'}`;
      return el('p', { class: 'inote' }, /[.!?]$/.test(text) ? text : text + '.');
    }

    // The listing: where it comes from, the regions' counts and stall
    // reasons, one warp's lanes beside the lanes the GPU counted per path,
    // and the runs (before the branch and after it collapsed, the branch
    // open), each with its source line, SASS, lane bar and counts.
    listing(t, r, close) {
      const x = r.instructions;
      const runs = Array.isArray(x.runs) ? x.runs : [], regs = Array.isArray(x.regions) ? x.regions : [];
      const id = `${this.uid}-l${(this.listings = (this.listings || 0) + 1)}`;
      const g = x.grid || {}, blk = Array.isArray(g.block) ? g.block : [];
      const shape = `${big(g.blocks)} block${g.blocks === 1 ? '' : 's'} \u00d7 ${blk[1] > 1 ? `${blk[0]}\u00d7${blk[1]}` : blk[0]} threads`;
      const scaled = fin(x.scale) && Math.abs(x.scale - 1) > 1e-9 ? `, scaled \u00d7${fx(x.scale, 2)} to this row\u2019s grid` : ' (this row\u2019s grid)';
      const when = String(x.collected_utc || '').replace('T', ' ').replace(/(:\d\d)(\.\d+)?Z?$/, '$1');
      const cost = x.cached ? `served from the cache of an identical launch collected ${when} UTC (collecting it took ${fx(x.collect_ms, 1)} ms)`
        : `collected ${when} UTC in ${fx(x.collect_ms, 1)} ms`;
      const sass = x.disassembler ? `SASS text by ${x.disassembler}` : `no SASS text (${x.disassembly_reason || 'no disassembler was found'}), so each instruction shows its opcode`;
      const meta = el('p', { class: 'meta' }, `Counted by ${COLLECTOR[x.source] || x.source} on ${shape}${scaled}; ${cost}; ${sass}; ` +
        `${fx(x.mapped * 100, 1)}% of its instructions mapped to a source line. Kernel: `, el('code', {}, x.kernel), '.');
      // A branch the compiler predicated: guarded work (not a guarded jump,
      // which a loop that branches has too) on both paths, issued with
      // every lane and done by some.
      const predicated = (k) => runs.some((u) => u.region === k && u.guarded && !CONTROL.test(u.opcode) && u.warp_executions > 0 &&
        activeLanes(u) >= 31.95 && onLanes(u) < activeLanes(u) - 0.05);
      const pred = predicated('path_a') && predicated('path_b') ? el('p', { class: 'pred' },
        'The compiler predicated this branch: the guarded instructions of path A and path B (their guard marked) issue with all 32 lanes, ' +
        'and only the lanes whose predicate is on do the work.') : null;
      return [
        el('div', { class: 'ins-head' }, el('h3', { tabindex: -1 }, 'Instructions of ', el('code', {}, r.label)),
          el('button', { type: 'button', class: 'ib', onclick: close }, 'Close')),
        meta, pred, this.regionTable(regs), this.warpBeside(r, regs),
        el('p', { class: 'legend' }, el('span', { class: 'lbar', 'aria-hidden': 'true' }, el('span', { class: 'act' }), el('span', { class: 'on', 'data-w': 'half' })),
          ' Each bar is the 32 lanes of a warp: filled, the lanes that executed the instruction with its predicate on; pale, lanes active with it off; ' +
          'the tick marks 16; a second number is the lanes with the predicate on. Path A solid, path B hatched (the chart\u2019s colours); ', el('mark', { class: 'gd' }, '@P0'), ' marks a guarded (predicated) instruction; ' +
          '\u00d7N is a run of N identical instructions, shown collapsed.'),
        this.runTable(runs, id),
      ];
    }

    // Per region: instructions, executions and lanes per execution, and
    // under each region its top stall reasons (a row of their own: the
    // reasons are words, the other columns numbers).
    regionTable(regs) {
      const cols = ['Region', 'Instructions', 'Warp executions', 'Thread executions', 'With the predicate on', 'Lanes per execution'];
      const body = regs.flatMap((g) => {
        const cells = [String(g.instructions), big(g.warp_executions), big(g.thread_executions), big(g.pred_on_thread_executions), fx(g.lanes_per_execution, 1)];
        const list = Array.isArray(g.stalls) && g.stalls.length ? g.stalls : null;
        return [el('tr', { class: 'rgn', 'data-region': g.kind }, el('th', { scope: 'row' }, el('span', { class: 'sw', 'aria-hidden': 'true' }), REGION[g.kind] || g.kind),
          cells.map((v, j) => el('td', { 'data-k': ['n', 'warp', 'thread', 'on', 'lanes'][j] },
            el('span', { class: 'dl', 'aria-hidden': 'true' }, cols[j + 1]), el('span', { class: 'v' }, v)))),
        list ? el('tr', { class: 'stl', 'data-region': g.kind }, el('td', { 'data-k': 'stalls', colspan: cols.length },
          `Top stall reasons ${g.kind === 'before' || g.kind === 'after' ? '' : 'of '}${regionIn(g.kind)} (PC samples): `,
          el('span', { class: 'v' }, list.map((q) => `${stallWords(q.reason)} ${fx(q.share * 100, 1)}%`).join(', ')))) : null];
      });
      return el('table', { class: 'rg' }, el('caption', {}, 'Per region, over the row\u2019s full grid'),
        el('thead', {}, el('tr', {}, cols.map((c) => el('th', { scope: 'col' }, c)))), el('tbody', {}, body));
    }

    // One warp of block 0 (the first split one, else warp 0) from the
    // row's mask (Row `lanes_block0`), beside the lanes per execution the
    // GPU counted on each path: the picture and the counts together.
    warpBeside(r, regs) {
      const lanes = Array.isArray(r.lanes_block0) && r.lanes_block0.length ? r.lanes_block0 : null;
      const said = ['path_a', 'path_b'].map((k) => regs.find((g) => g.kind === k)).filter(Boolean)
        .map((g) => `${REGION[g.kind]} ${fx(g.lanes_per_execution, 1)}`);
      const counted = said.length ? el('p', { class: 'counted' }, `Lanes per executed instruction the GPU counted over the grid: ${said.join(', ')}.`) : null;
      if (!lanes) return counted;
      const k = Math.max(0, lanes.findIndex(isSplit)), w = lanes[k];
      const nA = [...w].filter((c) => c === 'A').length, nB = [...w].filter((c) => c === 'B').length;
      return el('div', { class: 'warp1' }, this.laneMap(lanes, r, k),
        el('div', { class: 'wsay' }, el('p', {}, `This warp sends ${nA} of its lanes down path A and ${nB} down path B.`), counted));
    }

    // The runs in three sections: before the branch, the branch (from the
    // first to the last run of path A, path B or reconvergence), after it.
    runTable(runs, id) {
      let first = -1, last = -1;
      runs.forEach((u, n) => { if (inBranch(u.region)) { if (first < 0) first = n; last = n; } });
      const parts = first < 0 ? [{ key: 'all', title: 'All instructions', list: runs, open: true }] : [
        { key: 'before', title: 'Before the branch', list: runs.slice(0, first), open: false },
        { key: 'branch', title: runs.slice(first, last + 1).some((u) => u.region === 'reconverge') ? 'The branch: path A, path B and where they reconverge' : 'The branch: path A and path B',
          list: runs.slice(first, last + 1), open: true },
        { key: 'after', title: 'After the branch', list: runs.slice(last + 1), open: false },
      ].filter((p) => p.list.length);
      // The file most runs are on is the caption's; a line in another file
      // (the predicate's header, inlined) carries a mark the caption
      // explains, so the line column stays a number wide at any width.
      const one = fileMarks(runs);
      const cols = ['Path', 'Line', 'PC', 'SASS', 'Lanes', 'Warp executions', 'Thread executions'];
      const N = cols.length;
      const sections = parts.map((p, s) => {
        const n = p.list.reduce((a, u) => a + u.count, 0);
        const body = el('tbody', { class: 'sec', 'data-part': p.key });
        const btn = el('button', { type: 'button', class: 'sx', 'aria-expanded': 'false', 'aria-controls': `${id}-s${s}` },
          `${p.title}: ${p.list.length} run${p.list.length === 1 ? '' : 's'}, ${n} instruction${n === 1 ? '' : 's'}`);
        body.id = `${id}-s${s}`;
        let rows = null;
        const set = (open) => {
          if (open && !rows) { rows = p.list.flatMap((u, k) => this.runRows(u, `${id}-s${s}-${k}`, one, cols, N)); body.append(...rows); }
          if (rows) for (const tr of rows) tr.hidden = !open || (tr.classList.contains('more') && tr.dataset.open !== 'true');
          btn.setAttribute('aria-expanded', open ? 'true' : 'false');
        };
        btn.addEventListener('click', () => set(btn.getAttribute('aria-expanded') !== 'true'));
        body.append(el('tr', { class: 'sh' }, el('th', { scope: 'rowgroup', colspan: N }, btn)));
        set(p.open);
        return body;
      });
      const keys = ['path', 'line', 'pc', 'sass', 'lanes', 'warp', 'thread'];
      return el('table', { class: 'lst' }, el('caption', {}, `The instructions in program order${one.main ? `, beside their source lines in ${one.main}` : ''}` +
        Object.entries(one.marks).map(([f, m]) => ` (a line marked ${m} is in ${f})`).join('') + '; counts per instruction, over the row\u2019s full grid'),
        el('colgroup', {}, keys.map((k) => el('col', { class: `c-${k}` }))),
        el('thead', {}, el('tr', {}, cols.map((c, j) => el('th', { scope: 'col', class: j >= 5 ? 'n' : null }, c)))), sections);
    }

    // A run's row, and for a run of several instructions the row its ×N
    // button opens: the first and the last instruction and the counts each
    // of them has.
    runRows(u, rid, one, cols, N) {
      const multi = u.count > 1, text = u.sass != null ? u.sass : u.opcode;
      const guard = u.guarded && u.sass != null ? /^@!?U?P[T0-9]+/.exec(u.sass) : null;
      const code = el('code', {}, u.guarded ? el('span', { class: 'sr' }, 'predicated: ') : null,
        u.guarded ? el('mark', { class: 'gd' }, guard ? guard[0] : '@P') : null, guard ? text.slice(guard[0].length) : (u.guarded ? ' ' : '') + text);
      const dl = (j) => el('span', { class: 'dl', 'aria-hidden': 'true' }, cols[j]);
      const td = (k, j, ...v) => el('td', { 'data-k': k }, dl(j), el('span', { class: 'v' }, ...v));
      const bar = el('span', { class: 'lbar', 'aria-hidden': 'true' }, el('span', { class: 'act' }), el('span', { class: 'on' }));
      bar.firstChild.style.width = `${(Math.min(32, activeLanes(u)) / 32) * 100}%`;
      bar.lastChild.style.width = `${(Math.min(32, onLanes(u)) / 32) * 100}%`;
      const a = activeLanes(u), o = onLanes(u);
      const off = u.warp_executions > 0 && Math.abs(a - o) > 0.05;
      const xn = multi ? el('button', { type: 'button', class: 'xn', 'aria-expanded': 'false', 'aria-controls': `${rid}-m`,
        'aria-label': `${u.count} such instructions: show the first and the last` }, `\u00d7${u.count}`) : null;
      const mark = u.file && u.file !== one.main ? one.marks[u.file] : null;
      const line = u.line == null ? [D] : [String(u.line), mark ? el('span', { class: 'fm', title: u.file, 'aria-label': ` in ${u.file}` }, mark) : null];
      const row = el('tr', { class: 'run', 'data-region': u.region, 'data-pc': u.pc, 'data-count': u.count, 'data-guarded': u.guarded ? 'true' : 'false' },
        td('path', 0, TAG[u.region] || ''), td('line', 1, ...line), td('pc', 2, hex(u.pc)),
        el('th', { scope: 'row', class: 'sass' }, code, xn),
        el('td', { 'data-k': 'lanes' }, dl(4), el('span', { class: 'v' }, bar,
          el('span', { class: 'ln', 'aria-hidden': 'true' }, u.warp_executions > 0 ? fx(a, 1) : 'not run'),
          off ? el('span', { class: 'ln2', 'aria-hidden': 'true' }, `${fx(o, 1)} on`) : null, el('span', { class: 'sr' }, lanesSaid(u)))),
        td('warp', 5, big(u.warp_executions)), td('thread', 6, big(u.thread_executions)));
      if (!multi) return [row];
      // Every SASS instruction since Volta is 16 bytes, so the run's last pc follows from its first.
      const lastPc = u.pc + 16 * (u.count - 1);
      const more = el('tr', { class: 'more', id: `${rid}-m`, 'data-open': 'false' }, el('td', { colspan: N },
        el('p', {}, `${u.count} consecutive instructions, pc ${hex(u.pc)} to ${hex(lastPc)}, each executed ${big(u.warp_executions)} times by warps, ` +
          `${big(u.thread_executions)} by threads, ${big(u.pred_on_thread_executions)} with the predicate on` +
          (u.divergent_targets > 0 ? `, ${big(u.divergent_targets)} divergent branch targets` : '') + '.'),
        el('p', {}, 'First: ', el('code', {}, text), el('br'), 'Last: ', el('code', {}, u.last_sass != null ? u.last_sass : u.opcode))));
      xn.addEventListener('click', () => {
        const open = more.dataset.open !== 'true';
        more.dataset.open = open ? 'true' : 'false';
        more.hidden = !open;
        xn.setAttribute('aria-expanded', open ? 'true' : 'false');
      });
      return [row, more];
    }

    // Part 2 read both ways (Table `readings`): under the rows, each reading
    // as a row of its own, the row read against the other, its sentence, the
    // measured and the predicted ratio in the table's ratio columns.
    readingRows(t, cols) {
      const list = Array.isArray(t.readings) ? t.readings : [];
      if (!list.length) return null;
      const n = cols.length, ratioAt = cols.indexOf('Ratio vs baseline');
      const cell = (k, head, v, span) => el('td', { 'data-k': k, colspan: span > 1 ? span : null },
        head ? el('span', { class: 'dl', 'aria-hidden': 'true' }, head) : null, el('span', { class: 'v' }, v));
      return el('tbody', { class: 'readings' },
        el('tr', {}, el('th', { scope: 'rowgroup', colspan: n }, 'Read both ways: each ratio below is one row\u2019s time over another\u2019s, not over the baseline')),
        list.map((g) => el('tr', { 'data-reading': g.kind },
          el('th', { scope: 'row' }, el('code', {}, this.rowLabel(t, g.row)), ' against ', el('code', {}, this.rowLabel(t, g.against))),
          cell('sentence', null, g.sentence, ratioAt - 1),
          cell('ratio', 'Ratio (measured)', fx(g.ratio, 2)), cell('predicted', 'Predicted ratio', fx(g.predicted, 2)),
          n - ratioAt - 2 > 0 ? el('td', { 'data-k': 'pad', colspan: n - ratioAt - 2 > 1 ? n - ratioAt - 2 : null }) : null)));
    }

    // The label of the row of `t` named `name` (a reading names rows by name).
    rowLabel(t, name) {
      const r = (t.rows || []).find((x) => x.name === name);
      return r ? r.label : name;
    }

    // Horizontal bars: per row a solid bar (measured ratio) above a hatched bar
    // (predicted ratio), each with its value as text; a dashed line marks 1.00.
    chart(t, id) {
      const rows = t.rows || [];
      // With counters, a third bar per row: the GPU's own instruction count
      // over the baseline row's, the ratio the hardware testifies to.
      const gpu = (r) => (r.counters ? r.counters.instructions_vs_baseline : null);
      const counted = rows.some((r) => fin(gpu(r)));
      // Each measured ratio's 95% interval (Row `ratio_ci`), a whisker across
      // its bar's end; none on the baseline row (1 by definition).
      const cis = rows.map((r, i) => (i === t.baseline_row ? null : ciOf(r.ratio, r.ratio_ci)));
      const whiskers = cis.some(Boolean);
      // 380 wide with 15px text: at phone width (about 340px) text stays >= 13px.
      // A ratio with its interval has a decimal more, written after the whisker: its bars are a little shorter.
      const W = 380, X0 = 8, XMAX = whiskers ? 238 : 250, TOP = 18 + 20 * (1 + (counted || whiskers ? 1 : 0) + (counted && whiskers ? 1 : 0)), RH = counted ? 84 : 64;
      // Part 2's readings (one row against another) below the rows, each
      // a measured/predicted pair under a two-line label.
      const readings = Array.isArray(t.readings) ? t.readings : [];
      const GH = 30, QH = 84;
      const vals = rows.flatMap((r, i) => [r.ratio, r.predicted_ratio, gpu(r), cis[i] && cis[i].hi]).concat(readings.flatMap((g) => [g.ratio, g.predicted])).filter(fin);
      const max = Math.max(1, ...vals) * 1.05;
      const x = (v) => X0 + (XMAX - X0) * (fin(v) ? Math.max(0, v) : 0) / max;
      // Labels wrap (SVG text does not): rows grow by a line per extra line.
      const LH = 18, labels = rows.map((r) => wrapText(r.label + (r.comparable === false ? ' (not comparable)' : ''), LABEL_CHARS));
      const rlab = readings.map((rd) => [...wrapText(this.rowLabel(t, rd.row), LABEL_CHARS), ...wrapText(`against ${this.rowLabel(t, rd.against)}`, LABEL_CHARS)]);
      const ys = [], rys = [];
      let yy = TOP;
      for (const l of labels) { ys.push(yy); yy += RH + (l.length - 1) * LH; }
      const RT = yy + (readings.length ? GH : 0);
      yy = RT;
      for (const l of rlab) { rys.push(yy); yy += QH + (l.length - 2) * LH; }
      const H = yy + 20;
      const desc = rows.map((r, i) => `${r.label}: measured ${cis[i] ? `${cis[i].point}x (${cis[i].said})` : `${fx(r.ratio, 2)}x`}, predicted ${fx(r.predicted_ratio, 2)}x` +
        (counted ? `, GPU instruction count ${fx(gpu(r), 2)}x` : '') +
        (r.comparable === false ? ' (not comparable)' : '')).join('; ') +
        (readings.length ? '. Read both ways: ' + readings.map((g) => `${this.rowLabel(t, g.row)} against ${this.rowLabel(t, g.against)}: ` +
          `measured ${fx(g.ratio, 2)}x, predicted ${fx(g.predicted, 2)}x`).join('; ') : '');
      const title = `${t.title}: measured ratio beside predicted ratio, per row`;
      // A bar with its value; with an interval, the whisker (a line from lo
      // to hi with a cap at each end, to scale: an interval narrower than
      // the caps draws as one tick) and the value after the whisker.
      const bar = (v, yy, cls, word, ci) => [
        svg('rect', { class: cls, x: X0, y: yy, width: Math.max(1, x(v) - X0), height: 16, ...(cls === 'bp' ? { fill: `url(#${id}-h)` } : {}) }),
        ci ? svg('g', { class: 'wh', 'aria-hidden': 'true' }, svg('line', { class: 'wl', x1: x(ci.lo), x2: x(ci.hi), y1: yy + 8, y2: yy + 8 }),
          svg('line', { class: 'wlo', x1: x(ci.lo), x2: x(ci.lo), y1: yy - 3, y2: yy + 19 }), svg('line', { class: 'whi', x1: x(ci.hi), x2: x(ci.hi), y1: yy - 3, y2: yy + 19 })) : null,
        svg('text', { x: Math.max(x(v), ci ? x(ci.hi) + 2 : 0) + 5, y: yy + 14 }, fin(v) ? `${ci ? ci.point : fx(v, 2)}\u00d7 ${word}` : `no ${word} value`),
      ];
      const g = rows.map((r, i) => {
        const y = ys[i], b = y + (labels[i].length - 1) * LH;
        return svg('g', { class: 'pair', 'data-row': i },
          labels[i].map((l, k) => svg('text', { x: X0, y: y + 14 + k * LH, 'font-weight': 600 }, l)),
          bar(r.ratio, b + 20, 'bm', 'measured', cis[i]), bar(r.predicted_ratio, b + 40, 'bp', 'predicted'),
          counted ? bar(gpu(r), b + 60, 'bg', 'GPU count') : null);
      });
      const rg = readings.length ? [svg('text', { x: X0, y: RT - 8, 'font-weight': 600, class: 'rhead' }, 'Read both ways (one row against another)'),
        ...readings.map((rd, i) => {
          const y = rys[i], b = y + (rlab[i].length - 2) * LH;
          return svg('g', { class: 'reading', 'data-reading': rd.kind },
            rlab[i].map((l, k) => svg('text', { x: X0, y: y + 14 + k * LH }, l)),
            bar(rd.ratio, b + 40, 'bm', 'measured'), bar(rd.predicted, b + 60, 'bp', 'predicted'));
        })] : [];
      const one = x(1);
      return el('figure', {},
        el('figcaption', {}, `Chart: solid bars are the measured ratio, hatched bars the model's prediction` +
          (counted ? `, outlined bars the GPU's own count of warp instructions against the baseline row's` : '') +
          (whiskers ? '; the whisker across a solid bar\u2019s end is its 95% interval, drawn to scale (one tick where the interval is narrower than the tick)' : '') +
          `; the dashed line is 1.00, the baseline` + (readings.length ? ' (for the readings, the row read against)' : '') + '.'),
        svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-t ${id}-d` },
          svg('title', { id: `${id}-t` }, title), svg('desc', { id: `${id}-d` }, desc),
          svg('defs', {}, svg('pattern', { id: `${id}-h`, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
            svg('line', { class: 'hatch', x1: 0, y1: 0, x2: 0, y2: 6 }))),
          svg('g', { class: 'legend', 'aria-hidden': 'true' },
            svg('rect', { class: 'bm', x: X0, y: 6, width: 18, height: 14 }), svg('text', { x: X0 + 24, y: 19 }, 'measured'),
            svg('rect', { class: 'bp', fill: `url(#${id}-h)`, x: 120, y: 6, width: 18, height: 14 }), svg('text', { x: 144, y: 19 }, 'predicted (model)'),
            counted ? svg('rect', { class: 'bg', x: X0, y: 28, width: 18, height: 14 }) : null,
            counted ? svg('text', { x: X0 + 24, y: 41 }, 'GPU count (instructions vs baseline)') : null,
            whiskers ? svg('g', { class: 'wh' }, svg('line', { x1: X0 + 3, x2: X0 + 15, y1: 35 + (counted ? 20 : 0), y2: 35 + (counted ? 20 : 0) }),
              svg('line', { x1: X0 + 3, x2: X0 + 3, y1: 27 + (counted ? 20 : 0), y2: 43 + (counted ? 20 : 0) }),
              svg('line', { x1: X0 + 15, x2: X0 + 15, y1: 27 + (counted ? 20 : 0), y2: 43 + (counted ? 20 : 0) })) : null,
            whiskers ? svg('text', { x: X0 + 24, y: 41 + (counted ? 20 : 0) }, 'measured ratio\u2019s 95% interval') : null),
          g, rg,
          svg('line', { class: 'ref', x1: one, x2: one, y1: TOP - 4, y2: H - 16 }),
            svg('text', { x: one, y: H - 3, 'text-anchor': one < 70 ? 'start' : 'middle' }, '1.00 = baseline')));
    }

    // The suite's request: GET /suites, else the evidence's recorded request, else rebuilt from the document.
    async suiteRequest() {
      const r = await this.call('GET', '/suites');
      const list = r.status === 200 && r.json && Array.isArray(r.json.suites) ? r.json.suites : [];
      const s = list.find((x) => x.name === this.suite);
      if (s && s.requests.length) return s.requests[0];
      const p = this.evidence && this.evidence.provenance;
      if (p && p.request) return p.request;
      const d = this.doc, cfg = (d && d.config) || {}, t = d && d.tables && d.tables[0];
      if (!t) return {};
      const part = { part1: 1, part2: 2 }[cfg.experiment] || (cfg.experiment === 'all' ? 'all' : 1);
      const req = { part, blocks: cfg.blocks, threads_per_block: cfg.threads_per_block, iterations: cfg.iterations };
      if (part === 1) Object.assign(req, { predicates: t.rows.map((x) => x.name), baseline: t.baseline });
      return req;
    }

    // One measurement at a time from this widget: both buttons wait for it.
    // `mine`: the request is the try box's (errors name "your predicate").
    async run(req, asking, done, mine) {
      if (this.busy) return;
      if (this.blocked) { this.say(this.blocked); return; }
      this.busy = true;
      this.setButtons(false);
      this.say(asking);
      try {
        const got = await this.measure(await req(), mine);
        if (got) done(got.doc, got);
      } finally {
        this.prog.hidden = true;
        this.busy = false;
        this.setButtons(!this.blocked);
      }
    }

    measureSuite() {
      this.run(() => this.suiteRequest(), 'Asking the server to measure\u2026', (doc, got) => {
        this.show(doc, { finished_utc: got.finished_utc }, got);
        this.say(got.age_s >= 5 ? `Done: the server answered from its cache (measured ${ago(got.age_s * 1000)}).` : 'Done: the table now shows the fresh measurement.');
      });
    }

    // POST /measure, then poll the job. Returns {doc, age_s}, or null after
    // saying why (`mine`: the request's first predicate is the reader's own).
    async measure(req, mine) {
      let r = await this.call('POST', '/measure', req);
      if (r.status === 200 && r.json && r.json.document) {
        const age = fin(r.json.age_s) ? r.json.age_s : 0;
        return { doc: r.json.document, age_s: age, finished_utc: new Date(Date.now() - age * 1000).toISOString().replace(/\.\d+Z$/, 'Z') };
      }
      if (r.status !== 202) return this.fail(r, req, mine);
      if (!r.json || !r.json.id) return this.fail({ status: 202, json: { error: { reason: 'the server gave no job id' } } });
      const path = `/jobs/${encodeURIComponent(r.json.id)}`;
      this.prog.hidden = false;
      this.prog.removeAttribute('value');
      // The job's own stream (queued with its position, running, done) where
      // the browser has EventSource; else GET /jobs/{id}?wait=, which the
      // server holds until the job ends or WAIT_S pass, so the page neither
      // polls on a timer nor learns of the end late.
      let j = r.json;
      if (!ended(j) && typeof EventSource === 'function') {
        const streamed = await this.stream(path);
        if (streamed) j = streamed;
      }
      for (let n = 0; n < POLL_LIMIT; n++) {
        if (j.state === 'done') {
          const doc = j.document;
          if (!doc) return this.fail({ status: 200, json: { error: { reason: 'the finished job held no document' } } });
          const t = utcMs(j.finished_utc);
          return { doc, age_s: t != null ? Math.max(0, (Date.now() - t) / 1000) : 0, finished_utc: j.finished_utc };
        }
        if (j.state === 'failed') { this.say(`The measurement failed: ${errOf(j).reason || 'no reason given'}.` + this.keep); return null; }
        this.progress(j);
        const t0 = Date.now();
        r = await this.call('GET', `${path}?wait=${WAIT_S}`);
        if (r.status !== 200) return this.fail(r);
        j = r.json || {};
        // A server that does not hold the request answers at once: poll then.
        if (!ended(j) && Date.now() - t0 < 200)
          await new Promise((ok) => setTimeout(ok, POLL_MS));
      }
      this.say('Gave up waiting for the measurement.' + this.keep);
      return null;
    }

    // Says where a queued or running job stands (a Job tells its state and,
    // while queued, its position; not how far a run has got, so the progress
    // bar stays indeterminate).
    progress(j) {
      this.say(j.state === 'running' ? 'Running on the GPU\u2026' : `Queued: position ${j.position ?? '?'} in the queue\u2026`);
    }

    // Follows GET {path} as an event stream until done or failed: the job
    // document of the last event, or null when the stream broke off (the
    // caller then long-polls).
    stream(path) {
      return new Promise((resolve) => {
        let es;
        try { es = new EventSource(this.base + path); } catch (_) { resolve(null); return; }
        const end = (v) => { es.close(); resolve(v); };
        const parse = (ev) => { try { return JSON.parse(ev.data); } catch (_) { return null; } };
        for (const name of ['queued', 'running']) es.addEventListener(name, (ev) => { const j = parse(ev); if (j) this.progress(j); });
        for (const name of ['done', 'failed']) es.addEventListener(name, (ev) => end(parse(ev)));
        es.addEventListener('gone', () => end(null));
        es.onerror = () => end(null);
      });
    }

    // Says why a measurement ended without numbers; `req` is the request the
    // answer is about (its fields are named in the reader's words), `mine`
    // whether its first predicate is the reader's own.
    fail(r, req, mine) {
      const e = errOf(r.json), why = e.reason || '';
      const retry = r.headers && r.headers.get('Retry-After') || e.retry_after_s;
      let m;
      if (r.status === 429) m = `The server is busy${why ? ` (${why})` : ''}. Try again${retry ? ` in ${retry} s` : ' later'}.`;
      else if (r.status === 503) m = `Measuring is not available right now: ${/cuda|gpu|device|driver/i.test(why) ? plainGpuReason(why) : why || 'the server has no GPU'}.`;
      else if (r.status === 401) m = 'This measurement needs an access token on this server, which a page cannot send' +
        (fin(e.open_limit) && e.open_limit > 0 ? ': it is larger than what the server measures for anyone (the lesson\u2019s own tables are within that).' : '.');
      else if (r.status === 0) m = `Could not measure: ${why}.`;
      else {
        const what = fieldWords(e.field, req, mine);
        m = `The server refused the measurement (HTTP ${r.status})${what ? `, about ${what}` : ''}: ${why || 'no reason given'}.`;
      }
      this.say(m + this.keep);
      return null;
    }

    tryBox(uid, measure) {
      this.inp = el('input', { id: uid + '-x', type: 'text', spellcheck: 'false', autocomplete: 'off', autocapitalize: 'off',
        placeholder: 'threadIdx.x < 16', 'aria-describedby': uid + '-hint', oninput: () => this.edited() });
      const dim = (k, v, text) => el('label', { for: `${uid}-${k}` }, text,
        el('input', { id: `${uid}-${k}`, type: 'number', min: 1, max: 1024, step: 1, value: v, inputmode: 'numeric', oninput: () => this.edited() }));
      this.bx = dim('bx', 256, 'Block width (blockDim.x)');
      this.by = dim('by', 1, 'Block height (blockDim.y)');
      [this.bx, this.by] = [this.bx.querySelector('input'), this.by.querySelector('input')];
      this.out = el('div', { class: 'out', 'aria-live': 'polite' });
      this.perma = el('p', { class: 'perma' });
      this.mbtn = measure ? el('button', { type: 'button', onclick: () => this.measureMine(), 'aria-describedby': uid + '-why' }, 'Measure this') : null;
      this.mine = el('div', { class: 'mine' });
      const box = el('fieldset', { class: 'try' }, el('legend', {}, 'Try your own predicate'),
        el('label', { for: uid + '-x' }, 'Predicate (C expression; nonzero sends the thread down path A)'),
        this.inp,
        el('div', { class: 'shape', role: 'group', 'aria-label': 'Block shape' }, this.bx.parentNode, this.by.parentNode),
        el('p', { class: 'hint', id: uid + '-hint' },
          'Names: threadIdx.x/.y, blockIdx.x, blockDim.x/.y, warpSize, lane, warp. Checked as you type' +
          (measure ? '; the GPU runs it only on Measure this.' : '.')),
        this.out, this.perma, measure ? el('div', { class: 'bar' }, this.mbtn) : null, this.mine);
      this.restore();
      return box;
    }

    baseline() {
      const t = this.doc && this.doc.tables.find((x) => x.id === 'part1');
      return (t && t.baseline) || 'warp-parity';
    }

    // The block shape of the try box as a request's threads_per_block (x, or
    // [x, y] when y > 1), or null when a box holds no whole number.
    shape() {
      const x = Number(this.bx.value), y = Number(this.by.value);
      if (!Number.isInteger(x) || !Number.isInteger(y) || this.bx.value === '' || this.by.value === '') return null;
      return y === 1 ? x : [x, y];
    }

    // The try box's request: the reader's predicate against the baseline, in its block shape.
    tryRequest(expr) {
      const base = this.baseline();
      return { part: 1, predicates: [expr, base], baseline: base, threads_per_block: this.shape() };
    }

    // The permalink: the URL's query keeps the tried predicate (`try`) and
    // the block shape (`block`, "256" or "32x8"), so a link reproduces what
    // the reader tried; a widget with an id uses `<id>.try` and `<id>.block`,
    // so two try boxes on one page keep apart. Read once when the box is
    // made, rewritten (history.replaceState, no new history entry per
    // keystroke) as the reader types.
    key(k) { return this.id ? `${this.id}.${k}` : k; }

    restore() {
      const q = new URLSearchParams(location.search);
      const m = /^(\d+)(?:x(\d+))?$/.exec(q.get(this.key('block')) || '');
      if (m) { this.bx.value = m[1]; this.by.value = m[2] || '1'; }
      const expr = q.get(this.key('try'));
      if (expr) { this.inp.value = expr; this.remember(); this.queueAnalyze(); }
    }

    remember() {
      const u = new URL(location.href), expr = this.inp.value.trim(), sh = this.shape();
      if (expr) u.searchParams.set(this.key('try'), expr); else u.searchParams.delete(this.key('try'));
      if (expr && sh != null) u.searchParams.set(this.key('block'), Array.isArray(sh) ? sh.join('x') : String(sh));
      else u.searchParams.delete(this.key('block'));
      if (u.href !== location.href) history.replaceState(history.state, '', u.href);
      this.perma.replaceChildren(...(expr ? [el('a', { href: u.href }, 'Link to this predicate'), ' (this page with the predicate and block shape filled in)'] : []));
    }

    edited() {
      this.remember();
      this.queueAnalyze();
    }

    queueAnalyze() {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.analyze(), DEBOUNCE_MS);
    }

    // An Error answer of the try box: what is at fault in the reader's
    // words, the server's reason, and the predicate with a caret under the
    // column the error names.
    tryError(r, req) {
      const e = errOf(r.json);
      const what = fieldWords(e.field, req, true);
      const text = fieldText(e.field, req);
      const col = fin(e.expr_column) && e.expr_column > 0 && typeof text === 'string' ? e.expr_column : 0;
      if (r.refused) return el('div', { class: 'err' }, el('p', {}, `Could not check the predicate: ${this.corsWords(true)}.`));
      const head = r.status === 0 ? 'Could not check the predicate:'
        : what ? `${capital(what)} is not valid:` : `The server refused the analysis (HTTP ${r.status}):`;
      return el('div', { class: 'err' }, el('p', {}, `${head} ${e.reason || `HTTP ${r.status}`}${/[.!?]$/.test(e.reason || '') ? '' : '.'}`),
        col ? caretView(text, col) : null);
    }

    async analyze() {
      const expr = this.inp.value.trim();
      if (this.ctl) this.ctl.abort();
      if (!expr) { this.out.replaceChildren(); return; }
      if (this.shape() == null) { this.out.replaceChildren(el('div', { class: 'err' }, el('p', {}, 'The block shape needs a whole number of threads in each box.'))); return; }
      const ctl = this.ctl = new AbortController();
      const req = this.tryRequest(expr), base = req.baseline;
      let r;
      try { r = await this.call('POST', '/analyze', req, ctl.signal); } catch (_) { return; }
      if (ctl !== this.ctl) return;
      if (r.status !== 200) { this.out.replaceChildren(this.tryError(r, req)); return; }
      const doc = r.json || {}; // POST /analyze answers the divergence.v1 document itself
      const t = (doc.tables || [])[0] || {};
      const row = (t.rows || []).find((x) => x.name === expr) || (t.rows || [])[0];
      if (!row) { this.out.replaceChildren(el('p', {}, 'The server returned no analysis for this predicate.')); return; }
      const item = (k, v) => el('div', {}, el('dt', {}, k), el('dd', {}, v));
      const dl = el('dl', { class: 'an' },
        item('Warps split per block', count(row.warps_split_per_block, row.warps_split, row.warps_per_block)),
        item('Threads on path A per block', count(row.threads_on_a_per_block, row.threads_on_a, row.threads_per_block)),
        item('Path-runs per block', count(row.path_runs_per_block, row.path_runs)),
        item(`Predicted ratio vs ${t.baseline || base}`, fx(row.predicted_ratio, 2)),
        item('Comparable', row.comparable === false ? `no \u2014 ${ncReason(row)}` : 'yes: same work as the baseline'));
      this.out.replaceChildren(el('div', { class: 'an-wrap' }, dl, Array.isArray(row.lanes_block0) ? this.laneMap(row.lanes_block0, row) : null),
        t.note ? this.baseNote(t) : null);
    }

    // The lane map of block 0 (Row `lanes_block0`, from the server's
    // analysis: no GPU, and no second copy of the predicate here): one row
    // per warp, one cell per lane, path A solid in the chart's measured
    // colour, path B hatched in its predicted colour, a missing lane of a
    // partial warp outlined; split warps marked. The same in words, for
    // screen readers (the SVG's description) and for anyone (the details).
    // `only`: the index of one warp to draw alone (the instruction
    // listing's warp), with its lanes numbered underneath.
    laneMap(lanes, row, only) {
      const one = Number.isInteger(only);
      const id = `${this.uid}-lanes${one ? `-${(this.maps = (this.maps || 0) + 1)}` : ''}`, CW = 9, CH = 14, LX = 60, GAP = 4, W = LX + 32 * CW + 44;
      const shown = one ? [only] : lanes.map((_, k) => k);
      const H = shown.length * (CH + GAP) + 4 + (one ? 16 : 0);
      const split = lanes.map(isSplit), nSplit = split.filter(Boolean).length;
      // Words per warp, with runs of identical warps said once ("warps 1-7: ...").
      const words = [];
      for (let n = 0; n < shown.length;) {
        const i = shown[n];
        let m = n;
        while (m + 1 < shown.length && lanes[shown[m + 1]] === lanes[i]) m++;
        const j = shown[m];
        words.push(`${i === j ? `warp ${i}` : `warps ${i}-${j}`}${split[i] ? ', split' : ''}: ${laneWords(lanes[i])}`);
        n = m + 1;
      }
      const cells = shown.map((k, n) => {
        const w = lanes[k], y = 2 + n * (CH + GAP);
        return svg('g', { class: 'warp', 'data-warp': k, 'data-split': split[k] ? 'true' : 'false' },
          svg('text', { x: 0, y: y + CH - 2, 'font-weight': split[k] ? 700 : 400 }, `warp ${k}`),
          [...w].map((c, i) => svg('rect', {
            class: c === 'A' ? 'la' : c === 'B' ? 'lb' : 'ln', 'data-lane': i, 'data-path': c,
            x: LX + i * CW + 0.5, y, width: CW - 1.5, height: CH, ...(c === 'B' ? { fill: `url(#${id}-h)` } : {}),
          })),
          split[k] ? svg('text', { class: 'sp', x: LX + 32 * CW + 6, y: y + CH - 2 }, 'split') : null);
      });
      // Lane numbers every 8 lanes under a single warp, so "which lane" can be read off.
      const ticks = one ? svg('g', { class: 'ticks', 'aria-hidden': 'true' }, [0, 8, 16, 24, 31].map((i) =>
        svg('text', { x: LX + i * CW + CW / 2, y: H - 2, 'text-anchor': 'middle' }, String(i)))) : null;
      const summary = one ? `Warp ${only} of block 0, lane by lane${split[only] ? ' (split)' : ''}.`
        : `Block 0, lane by lane: ${nSplit} of ${lanes.length} warp${lanes.length === 1 ? '' : 's'} split.`;
      return el('figure', { class: 'lanes' },
        el('figcaption', {}, summary + ' Solid cells take path A, hatched cells path B' +
          (shown.some((k) => lanes[k].includes('-')) ? ', outlined cells are lanes the last warp lacks' : '') + '.'),
        svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-t ${id}-d` },
          svg('title', { id: `${id}-t` }, `Lane map of ${one ? `warp ${only} of ` : ''}block 0 for ${row.label}`),
          svg('desc', { id: `${id}-d` }, words.join('; ') + '.'),
          svg('defs', {}, svg('pattern', { id: `${id}-h`, width: 3, height: 3, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
            svg('rect', { class: 'lb', width: 3, height: 3 }), svg('line', { class: 'lbh', x1: 0, y1: 0, x2: 0, y2: 3 }))),
          cells, ticks),
        el('details', {}, el('summary', {}, 'The lane map in words'), el('ul', {}, words.map((w) => el('li', {}, w)))));
    }

    measureMine() {
      const expr = this.inp.value.trim();
      if (!expr) { this.say('Type a predicate first.'); this.inp.focus(); return; }
      if (this.shape() == null) { this.say('The block shape needs a whole number of threads in each box.'); return; }
      const req = this.tryRequest(expr), base = req.baseline;
      this.run(async () => req, `Asking the server to measure ${expr}\u2026`, (doc, got) => {
        this.mine.replaceChildren(el('p', { class: 'prov' }, ...this.provenance(doc, { finished_utc: got.finished_utc }, got)), ...this.renderDoc(doc, 'mine'));
        this.say(`Done: ${expr} measured against ${base}.`);
      }, true);
    }
  }

  if (!customElements.get('divergence-widget')) customElements.define('divergence-widget', DivergenceWidget);
})();

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
 * /jobs/{id} (its event stream, else long polls with ?wait=); errors (401, 429, 503, a failed job) go to an aria-live region
 * and never clear the last good table. "Try your own predicate" asks POST
 * /analyze 250 ms after the last keystroke and shows the analysis or the
 * error with its column; "Measure this" measures it below the box.
 * Attributes: server ("" = same origin), suite, gpu (a GPU model's slug,
 * e.g. nvidia-h200: show that GPU's evidence; default the server's own), no-try,
 * no-measure (no measure buttons at all). Where the store holds evidence of
 * the suite from several GPU models (GET /evidence/latest lists them in
 * `gpus`), a selector switches the main view between them and a side-by-side
 * table and chart show each GPU's ratios with each GPU's provenance. The element's `state` attribute says what it shows
 * (loading, empty, shown), so a page can hide text that needs numbers.
 *
 * Numbers: fixed decimals per quantity (ms 3, ratios and noise % 2, clocks
 * 0), rounded as C's printf rounds them (the CLI, the .txt transcripts and
 * the README use printf): to the nearest, and a value exactly halfway to the
 * even digit, so the model's 1.125 reads 1.12 everywhere.
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
  const KEEP = ' The table still shows the last good numbers.';
  const HOW = 'a server with a GPU records one with divergence refresh (its nightly timer runs it)';

  const CSS = `
:host{display:block;--dw-m:#1d4ed8;--dw-p:#7e22ce;--dw-line:#8889;max-width:100%;container-type:inline-size}
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
.why{font-size:.92em;margin:0}
.picker:empty,.cmp:empty{display:none}
.picker select{font:inherit;padding:.3rem}
.cmp h3{font-size:1.05em;margin:1.2rem 0 .3rem}
.provs{margin:.2rem 0 .6rem;padding-left:1.2rem;font-size:.92em}
.g0{fill:var(--dw-m)}.g1{fill:#b45309}.g2{fill:#047857}.g3{fill:#be123c}
.why:empty,.note:empty,.warn:empty{display:none}
.note,.warn{margin:.2rem 0 .8rem;padding:.3rem .6rem;border-left:4px solid var(--dw-p)}
.warn{list-style:none}
.warn li{margin:.1rem 0}
button[disabled]{cursor:not-allowed}
.dl{display:none}
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
.dl{display:block;font-size:.8em;font-weight:normal;opacity:.85}
}
@media (prefers-color-scheme:dark){:host{--dw-m:#7aa7ff;--dw-p:#d19bff}}`;

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
  const hasTestimony = (t) => (t.rows || []).some((r) => r.observed != null || r.counters != null);
  const ncReason = (r) => r.comparable_reason || 'does different work from the baseline';
  // The `error` object of an Error answer, or of a failed Job ({} when there is none).
  const errOf = (j) => (j && j.error) || {};
  // Whether a Job (or QueuedJob) has ended.
  const ended = (j) => j.state === 'done' || j.state === 'failed';

  class DivergenceWidget extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: 'open' });
      const uid = 'dw' + Math.random().toString(36).slice(2, 8);
      this.uid = uid;
      this.setAttribute('state', 'loading');
      this.prov = el('p', { class: 'prov' }, 'Loading the latest measurement\u2026');
      this.note = el('p', { class: 'note' });
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
      root.append(el('style', { text: CSS }), this.picker, this.prov, this.note, this.warn, this.tables,
        measure ? el('div', { class: 'bar' }, this.btn, this.prog, this.why) : null, this.msg);
      root.append(this.cmp);
      if (!this.hasAttribute('no-try')) root.append(this.tryBox(uid, measure));
      this.blocked = '';
      this.probe();
      this.load();
    }

    get base() { return (this.getAttribute('server') || '').replace(/\/+$/, ''); }
    get suite() { return this.getAttribute('suite') || 'day22-part1'; }

    // fetch() that never throws: {status, json, headers}; status 0 on a network error.
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
        return { status: 0, json: { error: { reason: 'the server could not be reached' } }, headers: new Headers() };
      }
    }

    say(text) { this.msg.textContent = text; }
    get keep() { return this.doc ? KEEP : ''; }

    // What this server lets a page do: a GPU to measure on, and no token needed.
    async probe() {
      const [h, d] = await Promise.all([this.call('GET', '/healthz'), this.call('GET', '/device')]);
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
      this.warn.replaceChildren(...this.warnings(doc).map((w) => el('li', {}, '\u26a0 ', w)));
      this.tables.replaceChildren(...this.renderDoc(doc, 'main'));
      this.note.textContent = '';
      this.labelRecorded();
    }

    // The document's warnings and the rows' notes, each once.
    warnings(doc) {
      const out = new Set((doc.warnings || []).filter((w) => typeof w === 'string' && w));
      for (const t of doc.tables || []) if (t.noise_ok === false) out.add(`${t.title}: a row stayed noisier than ${fx((t.noise_limit || 0) * 100, 2)}%.`);
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

    renderDoc(doc, key) {
      return (doc.tables || []).flatMap((t, i) => [this.table(t, doc), this.chart(t, `${this.uid}-${key}-${i}`)]);
    }

    table(t, doc) {
      const testimony = hasTestimony(t);
      const cols = ['Predicate', 'Warps split (per block)', 'Threads on path A (per block)', 'Time (ms, median)',
        'Ratio vs baseline', 'Predicted ratio', 'Noise (%)', 'Check'].concat(testimony ? ["GPU's testimony"] : []);
      const body = (t.rows || []).map((r, i) => {
        const isBase = i === t.baseline_row;
        const first = el('th', { scope: 'row' }, el('code', { title: r.name }, r.label), isBase ? ' (baseline)' : null);
        if (r.comparable === false) first.append(el('span', { class: 'nc' }, el('b', {}, 'not comparable'), ncReason(r)));
        const c = r.check, cells = {
          split: count(r.warps_split_per_block, r.warps_split, r.warps_per_block),
          'on-a': count(r.threads_on_a_per_block, r.threads_on_a, r.threads_per_block),
          time: fx(r.time_ms && r.time_ms.median, 3), ratio: fx(r.ratio, 2), predicted: fx(r.predicted_ratio, 2),
          noise: fin(r.noise) ? fx(r.noise * 100, 2) : D, check: checkText(c) };
        if (testimony) cells.gpu = gpuSaw(r) || D;
        // Each cell carries its column name (shown only where the table reflows into cards).
        return el('tr', { 'data-row': i }, first, Object.entries(cells).map(([k, v], j) =>
          el('td', { 'data-k': k, class: k === 'check' && c && !c.ok ? 'fail' : null },
            el('span', { class: 'dl', 'aria-hidden': 'true' }, cols[j + 1]), el('span', { class: 'v' }, v))));
      });
      const cfg = doc.config || {};
      const cap = `${t.title} \u2014 ratios against ${t.baseline || 'the baseline row'}` +
        (fin(cfg.blocks) ? `; ${cfg.blocks} blocks \u00d7 ${cfg.threads_per_block} threads, ${cfg.iterations} multiply-adds per thread` : '') +
        (t.kernel ? `; kernel: ${t.kernel}` : '') + (t.kernel_iterations ? ` (${t.kernel_iterations} iterations)` : '');
      return el('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': t.title + ' (scrolls sideways)' },
        el('table', {}, el('caption', {}, el('span', {}, cap)),
          el('thead', {}, el('tr', {}, cols.map((c) => el('th', { scope: 'col' }, c)))),
          el('tbody', {}, body)));
    }

    // Horizontal bars: per row a solid bar (measured ratio) above a hatched bar
    // (predicted ratio), each with its value as text; a dashed line marks 1.00.
    chart(t, id) {
      const rows = t.rows || [];
      // With counters, a third bar per row: the GPU's own instruction count
      // over the baseline row's, the ratio the hardware testifies to.
      const gpu = (r) => (r.counters ? r.counters.instructions_vs_baseline : null);
      const counted = rows.some((r) => fin(gpu(r)));
      // 380 wide with 15px text: at phone width (about 340px) text stays >= 13px.
      const W = 380, X0 = 8, XMAX = 250, TOP = counted ? 58 : 38, RH = counted ? 84 : 64;
      const vals = rows.flatMap((r) => [r.ratio, r.predicted_ratio, gpu(r)]).filter(fin);
      const max = Math.max(1, ...vals) * 1.05;
      const x = (v) => X0 + (XMAX - X0) * (fin(v) ? Math.max(0, v) : 0) / max;
      const H = TOP + rows.length * RH + 20;
      const desc = rows.map((r) => `${r.label}: measured ${fx(r.ratio, 2)}x, predicted ${fx(r.predicted_ratio, 2)}x` +
        (counted ? `, GPU instruction count ${fx(gpu(r), 2)}x` : '') +
        (r.comparable === false ? ' (not comparable)' : '')).join('; ');
      const title = `${t.title}: measured ratio beside predicted ratio, per row`;
      const g = rows.map((r, i) => {
        const y = TOP + i * RH;
        const bar = (v, yy, cls, word) => [
          svg('rect', { class: cls, x: X0, y: yy, width: Math.max(1, x(v) - X0), height: 16, ...(cls === 'bp' ? { fill: `url(#${id}-h)` } : {}) }),
          svg('text', { x: x(v) + 5, y: yy + 14 }, fin(v) ? `${fx(v, 2)}\u00d7 ${word}` : `no ${word} value`),
        ];
        return svg('g', { class: 'pair', 'data-row': i },
          svg('text', { x: X0, y: y + 14, 'font-weight': 600 }, r.label + (r.comparable === false ? ' (not comparable)' : '')),
          bar(r.ratio, y + 20, 'bm', 'measured'), bar(r.predicted_ratio, y + 40, 'bp', 'predicted'),
          counted ? bar(gpu(r), y + 60, 'bg', 'GPU instructions') : null);
      });
      const one = x(1);
      return el('figure', {},
        el('figcaption', {}, `Chart: solid bars are the measured ratio, hatched bars the model's prediction` +
          (counted ? `, outlined bars the GPU's own count of warp instructions against the baseline row's` : '') +
          `; the dashed line is 1.00, the baseline.`),
        svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-t ${id}-d` },
          svg('title', { id: `${id}-t` }, title), svg('desc', { id: `${id}-d` }, desc),
          svg('defs', {}, svg('pattern', { id: `${id}-h`, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
            svg('line', { class: 'hatch', x1: 0, y1: 0, x2: 0, y2: 6 }))),
          svg('g', { class: 'legend', 'aria-hidden': 'true' },
            svg('rect', { class: 'bm', x: X0, y: 6, width: 18, height: 14 }), svg('text', { x: X0 + 24, y: 19 }, 'measured'),
            svg('rect', { class: 'bp', fill: `url(#${id}-h)`, x: 120, y: 6, width: 18, height: 14 }), svg('text', { x: 144, y: 19 }, 'predicted (model)'),
            counted ? svg('rect', { class: 'bg', x: X0, y: 28, width: 18, height: 14 }) : null,
            counted ? svg('text', { x: X0 + 24, y: 41 }, 'GPU count (instructions vs baseline)') : null),
          g,
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
    async run(req, asking, done) {
      if (this.busy) return;
      if (this.blocked) { this.say(this.blocked); return; }
      this.busy = true;
      this.setButtons(false);
      this.say(asking);
      try {
        const got = await this.measure(await req());
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

    // POST /measure, then poll the job. Returns {doc, age_s}, or null after saying why.
    async measure(req) {
      let r = await this.call('POST', '/measure', req);
      if (r.status === 200 && r.json && r.json.document) {
        const age = fin(r.json.age_s) ? r.json.age_s : 0;
        return { doc: r.json.document, age_s: age, finished_utc: new Date(Date.now() - age * 1000).toISOString().replace(/\.\d+Z$/, 'Z') };
      }
      if (r.status !== 202) return this.fail(r);
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

    fail(r) {
      const e = errOf(r.json), why = e.reason || '';
      const retry = r.headers && r.headers.get('Retry-After') || e.retry_after_s;
      let m;
      if (r.status === 429) m = `The server is busy${why ? ` (${why})` : ''}. Try again${retry ? ` in ${retry} s` : ' later'}.`;
      else if (r.status === 503) m = `Measuring is not available right now: ${/cuda|gpu|device|driver/i.test(why) ? plainGpuReason(why) : why || 'the server has no GPU'}.`;
      else if (r.status === 401) m = 'This measurement needs an access token on this server, which a page cannot send' +
        (fin(e.open_limit) && e.open_limit > 0 ? ': it is larger than what the server measures for anyone (the lesson\u2019s own tables are within that).' : '.');
      else if (r.status === 0) m = `Could not measure: ${why}.`;
      else m = `The server refused the measurement (HTTP ${r.status})${e.field ? ` in ${e.field}` : ''}: ${why || 'no reason given'}.`;
      this.say(m + this.keep);
      return null;
    }

    tryBox(uid, measure) {
      this.inp = el('input', { id: uid + '-x', type: 'text', spellcheck: 'false', autocomplete: 'off', autocapitalize: 'off',
        placeholder: 'threadIdx.x < 16', 'aria-describedby': uid + '-hint', oninput: () => this.queueAnalyze() });
      this.out = el('div', { class: 'out', 'aria-live': 'polite' });
      this.mbtn = measure ? el('button', { type: 'button', onclick: () => this.measureMine(), 'aria-describedby': uid + '-why' }, 'Measure this') : null;
      this.mine = el('div', { class: 'mine' });
      return el('fieldset', { class: 'try' }, el('legend', {}, 'Try your own predicate'),
        el('label', { for: uid + '-x' }, 'Predicate (C expression; nonzero sends the thread down path A)'),
        this.inp,
        el('p', { class: 'hint', id: uid + '-hint' },
          'Names: threadIdx.x/.y, blockIdx.x, blockDim.x/.y, warpSize, lane, warp. Checked as you type' +
          (measure ? '; the GPU runs it only on Measure this.' : '.')),
        this.out, measure ? el('div', { class: 'bar' }, this.mbtn) : null, this.mine);
    }

    baseline() {
      const t = this.doc && this.doc.tables.find((x) => x.id === 'part1');
      return (t && t.baseline) || 'warp-parity';
    }

    queueAnalyze() {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.analyze(), DEBOUNCE_MS);
    }

    async analyze() {
      const expr = this.inp.value.trim();
      if (this.ctl) this.ctl.abort();
      if (!expr) { this.out.replaceChildren(); return; }
      const ctl = this.ctl = new AbortController();
      const base = this.baseline();
      let r;
      try { r = await this.call('POST', '/analyze', { part: 1, predicates: [expr, base], baseline: base }, ctl.signal); } catch (_) { return; }
      if (ctl !== this.ctl) return;
      if (r.status !== 200) {
        const e = errOf(r.json);
        const where = [e.field, e.expr_column ? `column ${e.expr_column}` : ''].filter(Boolean).join(', ');
        this.out.replaceChildren(el('p', { class: 'err' }, `Not a valid predicate${where ? ` (${where})` : ''}:`),
          el('pre', { class: 'caret' }, [e.reason || `HTTP ${r.status}`, e.caret].filter(Boolean).join('\n')));
        return;
      }
      const doc = r.json || {}; // POST /analyze answers the divergence.v1 document itself
      const t = (doc.tables || [])[0] || {};
      const row = (t.rows || []).find((x) => x.name === expr) || (t.rows || [])[0];
      if (!row) { this.out.replaceChildren(el('p', {}, 'The server returned no analysis for this predicate.')); return; }
      const item = (k, v) => el('div', {}, el('dt', {}, k), el('dd', {}, v));
      this.out.replaceChildren(el('dl', { class: 'an' },
        item('Warps split per block', count(row.warps_split_per_block, row.warps_split, row.warps_per_block)),
        item('Threads on path A per block', count(row.threads_on_a_per_block, row.threads_on_a, row.threads_per_block)),
        item('Path-runs per block', count(row.path_runs_per_block, row.path_runs)),
        item(`Predicted ratio vs ${t.baseline || base}`, fx(row.predicted_ratio, 2)),
        item('Comparable', row.comparable === false ? `no \u2014 ${ncReason(row)}` : 'yes: same work as the baseline')));
    }

    measureMine() {
      const expr = this.inp.value.trim(), base = this.baseline();
      if (!expr) { this.say('Type a predicate first.'); this.inp.focus(); return; }
      this.run(async () => ({ part: 1, predicates: [expr, base], baseline: base }), `Asking the server to measure ${expr}\u2026`, (doc, got) => {
        this.mine.replaceChildren(el('p', { class: 'prov' }, ...this.provenance(doc, { finished_utc: got.finished_utc }, got)), ...this.renderDoc(doc, 'mine'));
        this.say(`Done: ${expr} measured against ${base}.`);
      });
    }
  }

  if (!customElements.get('divergence-widget')) customElements.define('divergence-widget', DivergenceWidget);
})();

/* divergence-widget.js -- <divergence-widget server="" suite="day22-part1">, the lesson widget.
 *
 * A dependency-free custom element (no build step, no CDN) rendering into a
 * shadow root. It reads GET {server}/evidence/latest/{suite} (evidence around a
 * divergence.v1 document) and shows the provenance line, one <table> and one
 * SVG chart (measured beside predicted ratio, a bar pair per row) per table.
 * "Measure now" posts the suite's request (GET /suites, else rebuilt from the
 * document) to POST /measure and polls GET /jobs/{id}; errors (429, 503, a
 * failed job) go to an aria-live region and never clear the last good table.
 * "Try your own predicate" asks POST /analyze 250 ms after the last keystroke
 * and shows the analysis or the error with its column; "Measure this" measures
 * it below the box. Attributes: server ("" = same origin), suite, no-try.
 */
(() => {
  'use strict';
  const SVGNS = 'http://www.w3.org/2000/svg';
  const POLL_MS = 1000, POLL_LIMIT = 600, DEBOUNCE_MS = 250;
  const KEEP = ' The table still shows the last good numbers.';

  const CSS = `
:host{display:block;--dw-m:#1d4ed8;--dw-p:#7e22ce;--dw-line:#8889;max-width:100%}
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
svg{display:block;width:100%;max-width:32rem;height:auto}
svg text{fill:currentColor;font-size:13px;font-family:inherit}
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
@media (prefers-color-scheme:dark){:host{--dw-m:#7aa7ff;--dw-p:#d19bff}}`;

  // Number formatting follows the lesson page: ms to 3 decimals, ratios to 2.
  const D = '\u2014';
  const fin = (v) => typeof v === 'number' && isFinite(v);
  const fx = (v, d) => (fin(v) ? v.toFixed(d) : D);
  const num = (v) => (fin(v) ? (Number.isInteger(v) ? String(v) : v.toFixed(1)) : D);
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

  // "8 of 8", or "0-256 (mean 128) of 256" when blocks differ (blockIdx.x predicates).
  function count(r, k, of) {
    const o = r[k], pb = r[k + '_per_block'];
    let s = num(fin(pb) ? pb : o && typeof o === 'object' ? o.per_block : o);
    if (o && typeof o === 'object' && fin(o.min) && o.min !== o.max) s = `${o.min}\u2013${o.max} (mean ${s})`;
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
  const hasTestimony = (t) => (t.rows || []).some((r) => r.observed || r.counters);
  const ncReason = (r) => r.comparable_reason || r.reason || 'does different work from the baseline';
  const docOf = (j) => (j && j.schema === 'divergence.v1' ? j : j && (j.document || j.result || j.report)) || null;
  const errOf = (j) => { const e = j && j.error; return typeof e === 'string' ? { reason: e } : e || {}; };

  class DivergenceWidget extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: 'open' });
      const uid = 'dw' + Math.random().toString(36).slice(2, 8);
      this.uid = uid;
      this.prov = el('p', { class: 'prov' }, 'Loading the latest measurement\u2026');
      this.tables = el('div', { class: 'tables' });
      this.btn = el('button', { type: 'button', onclick: () => this.measureSuite() }, 'Measure now');
      this.prog = el('progress', { hidden: true, max: 1, 'aria-label': 'Measurement progress' });
      this.msg = el('p', { class: 'msg', role: 'status', 'aria-live': 'polite' });
      root.append(el('style', { text: CSS }), this.prov, this.tables,
        el('div', { class: 'bar' }, this.btn, this.prog), this.msg);
      if (!this.hasAttribute('no-try')) root.append(this.tryBox(uid));
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

    async load() {
      const r = await this.call('GET', `/evidence/latest/${encodeURIComponent(this.suite)}`);
      const doc = r.status === 200 && docOf(r.json);
      if (!doc) {
        this.prov.textContent = r.status === 404
          ? `No measurement of suite ${this.suite} has been recorded yet.`
          : `The latest measurement could not be loaded: ${errOf(r.json).reason || 'HTTP ' + r.status}.`;
        return;
      }
      this.evidence = r.json;
      this.show(doc, r.json.provenance || {}, false);
      if (r.json.status && r.json.status !== 'ok') this.say(`The last run of ${this.suite} did not succeed: ${r.json.reason || r.json.status}.`);
    }

    // Renders a document into the main area (the last good numbers from now on).
    show(doc, prov, fresh) {
      this.doc = doc;
      this.prov.replaceChildren(...this.provenance(doc, prov, fresh));
      this.tables.replaceChildren(...this.renderDoc(doc, 'main'));
    }

    provenance(doc, prov, fresh) {
      const d = doc.device || {};
      const when = String(prov.finished_utc || doc.finished_utc || '').replace('T', ' ').replace(/(:\d\d)(\.\d+)?Z?$/, '$1') ;
      const parts = [
        (fresh ? 'Measured just now on ' : 'Measured on ') + (d.name || 'an unknown GPU'),
        d.nvidia_driver_version ? 'driver ' + d.nvidia_driver_version : 'CUDA driver ' + cuver(d.driver_version),
        'CUDA runtime ' + cuver(d.runtime_version),
        when ? when + ' UTC' : 'date unknown',
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
        const isBase = r.name === t.baseline || i === t.baseline_row;
        const first = el('th', { scope: 'row' }, el('code', { title: r.name }, r.label || r.name), isBase ? ' (baseline)' : null);
        if (r.comparable === false) first.append(el('span', { class: 'nc' }, el('b', {}, 'not comparable'), ncReason(r)));
        const c = r.check, cells = {
          split: count(r, 'warps_split', r.warps_per_block), 'on-a': count(r, 'threads_on_a', r.threads_per_block),
          time: fx(r.time_ms && r.time_ms.median, 3), ratio: fx(r.ratio, 2), predicted: fx(r.predicted_ratio, 2),
          noise: fin(r.noise) ? (r.noise * 100).toFixed(2) : D, check: checkText(c) };
        if (testimony) cells.gpu = gpuSaw(r) || D;
        return el('tr', { 'data-row': i }, first, Object.entries(cells).map(([k, v]) =>
          el('td', { 'data-k': k, class: k === 'check' && c && !c.ok ? 'fail' : null }, v)));
      });
      const cfg = doc.config || {};
      const cap = `${t.title || t.id || 'Table'} \u2014 ratios against ${t.baseline || 'the baseline row'}` +
        (fin(cfg.blocks) ? `; ${cfg.blocks} blocks \u00d7 ${cfg.threads_per_block} threads, ${cfg.iterations} multiply-adds per thread` : '') +
        (t.kernel ? `; kernel: ${t.kernel}` : '') + (t.kernel_iterations ? ` (${t.kernel_iterations} iterations)` : '');
      return el('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': (t.title || 'Results') + ' (scrolls sideways)' },
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
      const W = 420, X0 = 8, XMAX = 300, TOP = 34, RH = counted ? 76 : 58;
      const vals = rows.flatMap((r) => [r.ratio, r.predicted_ratio, gpu(r)]).filter(fin);
      const max = Math.max(1, ...vals) * 1.05;
      const x = (v) => X0 + (XMAX - X0) * (fin(v) ? Math.max(0, v) : 0) / max;
      const H = TOP + rows.length * RH + 20;
      const desc = rows.map((r) => `${r.label || r.name}: measured ${fx(r.ratio, 2)}x, predicted ${fx(r.predicted_ratio, 2)}x` +
        (counted ? `, GPU instruction count ${fx(gpu(r), 2)}x` : '') +
        (r.comparable === false ? ' (not comparable)' : '')).join('; ');
      const title = `${t.title || 'Results'}: measured ratio beside predicted ratio, per row`;
      const g = rows.map((r, i) => {
        const y = TOP + i * RH;
        const bar = (v, yy, cls, word) => [
          svg('rect', { class: cls, x: X0, y: yy, width: Math.max(1, x(v) - X0), height: 14, ...(cls === 'bp' ? { fill: `url(#${id}-h)` } : {}) }),
          svg('text', { x: x(v) + 5, y: yy + 12 }, fin(v) ? `${v.toFixed(2)}\u00d7 ${word}` : `no ${word} value`),
        ];
        return svg('g', { class: 'pair', 'data-row': i },
          svg('text', { x: X0, y: y + 12, 'font-weight': 600 }, (r.label || r.name) + (r.comparable === false ? ' (not comparable)' : '')),
          bar(r.ratio, y + 18, 'bm', 'measured'), bar(r.predicted_ratio, y + 36, 'bp', 'predicted'),
          counted ? bar(gpu(r), y + 54, 'bg', 'GPU instructions') : null);
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
            svg('rect', { class: 'bm', x: X0, y: 6, width: 18, height: 12 }), svg('text', { x: X0 + 24, y: 17 }, 'measured ratio'),
            svg('rect', { class: 'bp', fill: `url(#${id}-h)`, x: 150, y: 6, width: 18, height: 12 }), svg('text', { x: 174, y: 17 }, 'predicted ratio (model)'),
            counted ? svg('rect', { class: 'bg', x: 320, y: 6, width: 18, height: 12 }) : null,
            counted ? svg('text', { x: 344, y: 17 }, 'GPU count') : null),
          g,
          svg('line', { class: 'ref', x1: one, x2: one, y1: TOP - 4, y2: H - 16 }),
          svg('text', { x: one, y: H - 3, 'text-anchor': 'middle' }, '1.00 = baseline')));
    }

    // The suite's request: GET /suites, else the evidence's recorded request, else rebuilt from the document.
    async suiteRequest() {
      const r = await this.call('GET', '/suites');
      const j = r.status === 200 ? r.json : null;
      const list = Array.isArray(j) ? j : j && Array.isArray(j.suites) ? j.suites : [];
      let s = list.find((x) => x && (x.name || x.id || x.suite) === this.suite);
      const rq = s && (s.request || (Array.isArray(s.requests) ? s.requests[0] : s.requests));
      if (rq) return rq;
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
      const btns = [this.btn, this.mbtn].filter(Boolean);
      this.busy = true;
      btns.forEach((x) => { x.disabled = true; });
      this.say(asking);
      try {
        const doc = await this.measure(await req());
        if (doc) done(doc);
      } finally {
        this.prog.hidden = true;
        this.busy = false;
        btns.forEach((x) => { x.disabled = false; });
      }
    }

    measureSuite() {
      this.run(() => this.suiteRequest(), 'Asking the server to measure\u2026', (doc) => {
        this.show(doc, {}, true);
        this.say('Done: the table now shows the fresh measurement.');
      });
    }

    // POST /measure, then poll the job. Returns the document, or null after saying why.
    async measure(req) {
      let r = await this.call('POST', '/measure', req);
      if (r.status === 200 && docOf(r.json)) return docOf(r.json);
      if (r.status !== 202) return this.fail(r);
      const loc = r.headers.get('Location');
      const path = r.json && r.json.id != null ? `/jobs/${encodeURIComponent(r.json.id)}` : loc && loc.replace(/^https?:\/\/[^/]+/, '');
      if (!path) return this.fail({ status: 202, json: { error: { reason: 'the server gave no job id' } } });
      this.prog.hidden = false;
      this.prog.removeAttribute('value');
      for (let n = 0; n < POLL_LIMIT; n++) {
        const j = r.json || {};
        const st = j.state || j.status;
        if (st === 'done') return docOf(j) || this.fail({ status: 200, json: { error: { reason: 'the finished job held no document' } } });
        if (st === 'failed') { this.say(`The measurement failed: ${j.reason || errOf(j).reason || 'no reason given'}.` + KEEP); return null; }
        const pg = j.progress, f = fin(pg) ? pg : pg && fin(pg.done) && pg.total ? pg.done / pg.total : null;
        if (fin(f)) this.prog.value = f;
        this.say(st === 'running'
          ? `Running on the GPU${fin(f) ? ` (${Math.round(f * 100)}%)` : ''}\u2026`
          : `Queued: position ${j.position ?? '?'} in the queue\u2026`);
        await new Promise((ok) => setTimeout(ok, POLL_MS));
        r = await this.call('GET', path);
        if (r.status !== 200) return this.fail(r);
      }
      this.say('Gave up waiting for the measurement.' + KEEP);
      return null;
    }

    fail(r) {
      const e = errOf(r.json), why = e.reason || e.message || '';
      const retry = r.headers && r.headers.get('Retry-After') || e.retry_after;
      let m;
      if (r.status === 429) m = `The server is busy${why ? ` (${why})` : ''}. Try again${retry ? ` in ${retry} s` : ' later'}.`;
      else if (r.status === 503) m = `Measuring is not available right now: ${why || 'the server has no GPU'}.`;
      else if (r.status === 0) m = `Could not measure: ${why}.`;
      else m = `The server refused the measurement (HTTP ${r.status})${e.field ? ` in ${e.field}` : ''}: ${why || 'no reason given'}.`;
      this.say(m + KEEP);
      return null;
    }

    tryBox(uid) {
      this.inp = el('input', { id: uid + '-x', type: 'text', spellcheck: 'false', autocomplete: 'off', autocapitalize: 'off',
        placeholder: 'threadIdx.x < 16', 'aria-describedby': uid + '-hint', oninput: () => this.queueAnalyze() });
      this.out = el('div', { class: 'out', 'aria-live': 'polite' });
      this.mbtn = el('button', { type: 'button', onclick: () => this.measureMine() }, 'Measure this');
      this.mine = el('div', { class: 'mine' });
      return el('fieldset', { class: 'try' }, el('legend', {}, 'Try your own predicate'),
        el('label', { for: uid + '-x' }, 'Predicate (C expression; nonzero sends the thread down path A)'),
        this.inp,
        el('p', { class: 'hint', id: uid + '-hint' },
          'Names: threadIdx.x/.y, blockIdx.x, blockDim.x/.y, warpSize, lane, warp. Checked as you type; the GPU runs it only on Measure this.'),
        this.out, el('div', { class: 'bar' }, this.mbtn), this.mine);
    }

    baseline() {
      const t = this.doc && (this.doc.tables || []).find((x) => x.id === 'part1' || x.kernel === 'branch' || x.kernel === 'mask');
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
        const where = [e.field, e.expr_column ? `column ${e.expr_column}` : e.column ? `column ${e.column}` : ''].filter(Boolean).join(', ');
        this.out.replaceChildren(el('p', { class: 'err' }, `Not a valid predicate${where ? ` (${where})` : ''}:`),
          el('pre', { class: 'caret' }, [e.reason || `HTTP ${r.status}`, e.caret].filter(Boolean).join('\n')));
        return;
      }
      const doc = docOf(r.json) || r.json || {};
      const t = (doc.tables || [])[0] || {};
      const row = (t.rows || []).find((x) => x.name === expr) || (t.rows || [])[0];
      if (!row) { this.out.replaceChildren(el('p', {}, 'The server returned no analysis for this predicate.')); return; }
      const item = (k, v) => el('div', {}, el('dt', {}, k), el('dd', {}, v));
      this.out.replaceChildren(el('dl', { class: 'an' },
        item('Warps split per block', count(row, 'warps_split', row.warps_per_block)),
        item('Threads on path A per block', count(row, 'threads_on_a', row.threads_per_block)),
        item('Path-runs per block', count(row, 'path_runs')),
        item(`Predicted ratio vs ${t.baseline || base}`, fx(row.predicted_ratio, 2)),
        item('Comparable', row.comparable === false ? `no \u2014 ${ncReason(row)}` : 'yes: same work as the baseline')));
    }

    measureMine() {
      const expr = this.inp.value.trim(), base = this.baseline();
      if (!expr) { this.say('Type a predicate first.'); this.inp.focus(); return; }
      this.run(async () => ({ part: 1, predicates: [expr, base], baseline: base }), `Asking the server to measure ${expr}\u2026`, (doc) => {
        this.mine.replaceChildren(el('p', { class: 'prov' }, ...this.provenance(doc, {}, true)), ...this.renderDoc(doc, 'mine'));
        this.say(`Done: ${expr} measured against ${base}.`);
      });
    }
  }

  if (!customElements.get('divergence-widget')) customElements.define('divergence-widget', DivergenceWidget);
})();

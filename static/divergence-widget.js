/* divergence-widget.js -- <divergence-widget server="" suite="day22-part1">,
 * the lesson widget: the one module a page loads
 * (<script type="module" src=".../static/divergence-widget.js">).
 *
 * A custom element rendering into a shadow root, served as it is (no build
 * step, no dependencies). It reads the suite's latest evidence (GET
 * /evidence/latest/{suite}, or /evidence/{gpu}/latest/{suite}) and shows
 * it (widget/evidence.js, widget/chart.js), asks the server what it can do
 * (GET /healthz: whether a token guards POST /measure; GET /device, else
 * /readyz: whether there is a GPU) and disables "Measure now" with the
 * reason in plain words when it cannot. With no good evidence it says what
 * is missing, and why the last attempt failed (GET /evidence/latest). A
 * server of another origin that does not allow this page (CORS) is told
 * apart from one that is down. Measuring (widget/jobs.js), a row's
 * instruction view (widget/listing.js) and the several-GPU view
 * (widget/compare.js) are loaded when first needed; the try box is
 * widget/trybox.js; the stylesheet divergence-widget.css. Where the
 * evidence has a previous night, mountNights() (widget/evidence.js) adds each table's line
 * of what changed and each row's history sparkline.
 *
 * One page, one fetch of each answer the widgets share: the health, the
 * device and the evidence index are fetched once per server for every
 * widget on the page, and so is each evidence document and the stylesheet.
 *
 * Attributes: server ("" = same origin), suite, id (prefixes the URL's
 * keys, `<id>.try`), gpu (a GPU model's slug: show that GPU's evidence),
 * no-try, no-measure. The element's `state` attribute says what it shows
 * (loading, empty, shown), so a page can hide its own text that needs
 * numbers; `shown` is set once the stylesheet is in place.
 *
 * The contract: the widget reads only the fields api/openapi.yaml names for
 * the answer it holds, and never guesses between alternative names.
 * tests/browser/widget.test.mjs records every property read on a parsed
 * answer and checks it against the document.
 */
import { el, errOf, plainGpuReason, kids } from './widget/format.js';
import { provenance, sinceLines, warnings, renderDoc, mountNights } from './widget/evidence.js';
import { TryBox } from './widget/trybox.js';

const PROBE_MS = 1000, PROBE_LIMIT = 60;
const KEEP = ' The table still shows the last good numbers.';
const HOW = 'a server with a GPU records one with divergence refresh (its nightly timer runs it)';

// The stylesheet, fetched once for every widget on the page; a widget
// whose sheet cannot be fetched works unstyled.
let sheet = null;
async function adopt(root) {
  if (!sheet) sheet = fetch(new URL('divergence-widget.css', import.meta.url)).then((r) => (r.ok ? r.text() : ''), () => '').then((text) => {
    try { const s = new CSSStyleSheet(); s.replaceSync(text); return s; } catch (_) { return text; }
  });
  const s = await sheet;
  if (typeof s === 'string') root.prepend(el('style', { text: s }));
  else root.adoptedStyleSheets = [...root.adoptedStyleSheets, s];
}

// fetch() that never throws: {status, json, headers}; status 0 when no
// answer could be read, with `refused` true when the server did answer but
// the browser kept the answer from this page (CORS).
async function call(base, method, path, body, signal) {
  try {
    const res = await fetch(base + path, {
      method, signal, headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    let json = null;
    try { json = await res.json(); } catch (_) { /* not JSON */ }
    return { status: res.status, json, headers: res.headers };
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    const refused = await corsRefused(base);
    const o = origin(base), cross = o !== location.origin;
    const reason = refused ? corsWords(base) : `the server${cross ? ` at ${o}` : ''} could not be reached`;
    return { status: 0, refused, json: { error: { reason } }, headers: new Headers() };
  }
}

// The answers every widget of the page shares, per server and path: one
// fetch each. `fresh` asks again (a worker still starting), and widgets
// asking again within half a PROBE_MS share that answer too.
const answers = new Map();
function shared(base, path, fresh) {
  const k = `${base} ${path}`, e = answers.get(k);
  if (e && !(fresh && Date.now() - e.t >= PROBE_MS / 2)) return e.p;
  const p = call(base, 'GET', path);
  answers.set(k, { p, t: Date.now() });
  return p;
}

// The server's origin, and the words for a CORS refusal of this page: in
// full (the provenance line, the first thing a reader sees), or `short`
// where the full words are already on show.
function origin(base) { try { return new URL(base || location.href, location.href).origin; } catch (_) { return base; } }
function corsWords(base, short) {
  const fix = `divergence serve --cors-origin ${location.origin}`;
  return short ? `the server does not let this page\u2019s origin read its answers (a CORS refusal; ${fix} allows it)`
    : `the server at ${origin(base)} answers, but does not let pages of this origin (${location.origin}) read its answers ` +
    `(a CORS refusal); its operator can allow this page with ${fix}`;
}
// After a failed fetch: did the server answer? A fetch in no-cors mode
// needs no permission and resolves (to an opaque answer) whenever the
// server answers, and fails as the first did when nothing does. Asked once
// per server.
const refusals = new Map();
function corsRefused(base) {
  if (origin(base) === location.origin) return Promise.resolve(false);
  if (!refusals.has(base)) refusals.set(base, fetch(base + '/healthz', { mode: 'no-cors', cache: 'no-store' }).then(() => true, () => false));
  return refusals.get(base);
}

class DivergenceWidget extends HTMLElement {
  connectedCallback() {
    if (this.shadowRoot) return;
    const root = this.attachShadow({ mode: 'open' });
    const uid = 'dw' + Math.random().toString(36).slice(2, 8);
    this.uid = uid;
    this.setAttribute('state', 'loading');
    this.styled = adopt(root);
    this.prov = el('p', { class: 'prov' }, 'Loading the latest measurement\u2026');
    this.note = el('p', { class: 'note' });
    this.since = el('ul', { class: 'since', 'aria-label': 'Since the previous night' });
    this.warn = el('ul', { class: 'warn', 'aria-label': 'Warnings about this measurement' });
    this.tables = el('div', { class: 'tables' });
    this.picker = el('p', { class: 'picker' });
    this.cmp = el('section', { class: 'cmp' });
    this.why = el('p', { class: 'why', id: uid + '-why' });
    this.prog = el('progress', { hidden: true, max: 1, 'aria-label': 'Measurement progress' });
    this.msg = el('p', { class: 'msg', role: 'status', 'aria-live': 'polite' });
    const measure = !this.hasAttribute('no-measure');
    this.btn = measure ? el('button', { type: 'button', onclick: () => this.measureSuite(), 'aria-describedby': uid + '-why' }, 'Measure now') : null;
    this.tryBox = this.hasAttribute('no-try') ? null : new TryBox(this, measure);
    this.mbtn = this.tryBox && this.tryBox.mbtn;
    root.append(...kids(this.picker, this.prov, this.since, this.note, this.warn, this.tables,
      measure ? el('div', { class: 'bar' }, this.btn, this.prog, this.why) : null, this.msg, this.cmp, this.tryBox && this.tryBox.box));
    this.blocked = '';
    this.probe();
    this.load();
    this.styled.then(() => { if (this.tryBox) this.tryBox.place(this.wide); });
  }

  // Whether the widget has room beside its text for what a phone shows a
  // click away (the charts, the try box): 36rem, where tables stop being cards.
  get wide() { return this.clientWidth >= 36 * parseFloat(getComputedStyle(this).fontSize || '16'); }

  get base() { return (this.getAttribute('server') || '').replace(/\/+$/, ''); }
  get suite() { return this.getAttribute('suite') || 'day22-part1'; }
  call(method, path, body, signal) { return call(this.base, method, path, body, signal); }
  // A GET every widget of the page shares (one fetch per server and path).
  shared(path) { return shared(this.base, path); }
  corsWords(short) { return corsWords(this.base, short); }
  say(text) { this.msg.textContent = text; }
  get keep() { return this.doc ? KEEP : ''; }

  // What this server lets a page do: a GPU to measure on, and no token needed.
  async probe(fresh) {
    const [h, d] = await Promise.all([shared(this.base, '/healthz', fresh), shared(this.base, '/device', fresh)]);
    // Refused by CORS, this page can neither read nor measure: say so, once.
    if (h.refused) { this.block(`Measuring is off: ${this.corsWords(true)}.`); return; }
    const m = h.status === 200 && h.json && h.json.measure;
    let dev = d.status === 200 && d.json ? d.json.device : null;
    // A worker still starting (or restarting) has not said yet whether
    // there is a GPU, so its `present: false` is no verdict: ask again
    // shortly, and until then leave the buttons as a GPU would.
    if (dev && ['starting', 'down'].includes(d.json.worker.state)) {
      dev = null;
      if ((this.probes = (this.probes || 0) + 1) < PROBE_LIMIT) setTimeout(() => this.probe(true), PROBE_MS);
    } else if (!dev) {
      // A front may keep /device to operators (deploy/nginx): ask /readyz,
      // whose 503 names a missing GPU (a worker still starting is no reason).
      const r = await shared(this.base, '/readyz', fresh);
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

  // The suite's latest evidence: this server's GPU, or the `gpu` attribute's;
  // with evidence of several GPU models in the store, the selector and the
  // side-by-side view as well (widget/compare.js).
  async load() {
    const [ix] = await Promise.all([shared(this.base, '/evidence/latest'), this.styled]);
    const index = ix.status === 200 && ix.json ? ix.json : {};
    const gpus = Array.isArray(index.gpus) ? index.gpus : [];
    this.gpus = gpus.filter((g) => (g.suites || []).some((e) => e && e.suite === this.suite && e.date));
    if (!this.selected) this.selected = this.getAttribute('gpu') || index.gpu || '';
    this.ownGpu = index.gpu || '';
    await this.loadGpu(this.selected, index);
    if (this.gpus.length >= 2) this.compare(index);
  }

  evidencePath(slug, index) {
    const s = encodeURIComponent(this.suite);
    return !slug || slug === index.gpu ? `/evidence/latest/${s}` : `/evidence/${encodeURIComponent(slug)}/latest/${s}`;
  }

  async loadGpu(slug, index) {
    const own = !slug || slug === index.gpu;
    const r = await shared(this.base, this.evidencePath(slug, index));
    const list = own ? index.suites : ((index.gpus || []).find((g) => g.gpu === slug) || {}).suites;
    const entry = Array.isArray(list) ? list.find((e) => e && e.suite === this.suite) : null;
    const doc = r.status === 200 && r.json ? r.json.document : null;
    if (!doc) { this.empty(r, entry, own ? '' : slug); return; }
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

  // No document to show: what is missing, or why the last attempt failed.
  empty(r, entry, slug) {
    this.setAttribute('state', 'empty');
    const last = entry && entry.last_attempt, on = slug ? ` on ${slug}` : '';
    if (r.status === 404 && last && last.status && last.status !== 'ok') {
      this.prov.textContent = `No good measurement of ${this.suite}${on} has been recorded yet: the last attempt` +
        ` (${last.date || 'date unknown'}) failed: ${last.reason || 'no reason was recorded'}.`;
    } else if (r.status === 404) {
      this.prov.textContent = `No measurement of ${this.suite}${on} has been recorded on this server yet, so there are no numbers to show: ${HOW}.`;
    } else {
      this.prov.textContent = `The latest measurement could not be loaded: ${errOf(r.json).reason || 'HTTP ' + r.status}.`;
    }
  }

  async compare(index) {
    const recs = await Promise.all(this.gpus.map((g) => shared(this.base, this.evidencePath(g.gpu, index))));
    const cols = this.gpus.map((g, i) => ({ g, doc: recs[i].status === 200 && recs[i].json ? recs[i].json.document : null, rec: recs[i].json }))
      .filter((c) => c.doc);
    if (cols.length < 2) return;
    (await import('./widget/compare.js')).compare(this, index, cols);
  }

  // The note under the provenance for evidence read from the store: what it
  // is (a recorded measurement), and a failed run since.
  labelRecorded() {
    if (!this.evidence || this.live) return;
    const d = this.doc.device || {}, e = this.entry;
    const parts = [];
    if (this.noGpu) parts.push(`A recorded measurement from ${d.name || 'another GPU'}: this server has no GPU to measure again.`);
    if (e && e.status && e.status !== 'ok' && e.last_attempt)
      parts.push(`The latest run (${e.last_attempt.date || 'date unknown'}) failed: ${e.last_attempt.reason || 'no reason recorded'}; these are the last good numbers.`);
    this.note.textContent = parts.join(' ');
  }

  // Renders a document into the main area (the last good numbers from now on).
  // `live`: null for stored evidence, else {age_s} of a measurement made on request.
  show(doc, prov, live) {
    this.doc = doc;
    this.live = live;
    this.prov.replaceChildren(provenance(doc, prov, live));
    this.since.hidden = false; // mountNights() hides it where each table says its nights
    this.since.replaceChildren(...(live ? [] : sinceLines(this.evidence, doc)));
    this.warn.replaceChildren(...warnings(doc).map((w) => el('li', {}, '\u26a0 ', w)));
    this.tables.replaceChildren(...renderDoc(this, doc, 'main'));
    // Each table against the nights before (mountNights(), widget/evidence.js),
    // only where there is a previous night: one night draws and fetches nothing.
    const ev = this.evidence, c = ev && ev.comparison;
    if (!live && c && c.previous) mountNights(this, ev, doc).catch(() => {});
    this.note.textContent = '';
    this.labelRecorded();
  }

  // Measuring (widget/jobs.js, loaded on the first measurement).
  async run(req, asking, done, mine) { return (await import('./widget/jobs.js')).run(this, req, asking, done, mine); }
  async measure(req, mine) { return (await import('./widget/jobs.js')).measure(this, req, mine); }
  async measureSuite() {
    const jobs = await import('./widget/jobs.js');
    return jobs.run(this, () => jobs.suiteRequest(this), 'Asking the server to measure\u2026', (doc, got) => jobs.measuredSuite(this, doc, got));
  }
}

if (!customElements.get('divergence-widget')) customElements.define('divergence-widget', DivergenceWidget);

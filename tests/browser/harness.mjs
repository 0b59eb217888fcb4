// harness.mjs -- what the browser tests share: the environment, the server
// and browser they start, the numbers written as printf writes them, the
// record of what the widget reads (the contract check), and the page
// checks every flow ends with (no text reading null, undefined or NaN;
// nothing wider than the screen). widget.test.mjs and page.test.mjs import
// it; each test file runs in a process of its own, so the state here
// (servers, reads, the session) is the file's.
//
// Environment: DV_BINARY (the server binary, required), DV_WORKER_CMD
// (default <dir of DV_BINARY>/tests/fake_worker), DV_EVIDENCE_DIR (default
// tests/fixtures/evidence), DV_STATIC_DIR (default static/), DV_TEST_OUTPUT
// (screenshots; default <tmp>/dv-browser-output), DV_CHROMIUM (default
// /usr/bin/chromium).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import * as acorn from 'acorn';
import { spec, operationOf, answerSchema, undefinedPrefix, show } from '../api/openapi/contract.mjs';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..', '..');
export const env = process.env;
export const binary = env.DV_BINARY;
export const worker = env.DV_WORKER_CMD || (binary && path.join(path.dirname(binary), 'tests', 'fake_worker'));
export const evidenceSrc = env.DV_EVIDENCE_DIR || path.join(repo, 'tests', 'fixtures', 'evidence');
export const staticDir = env.DV_STATIC_DIR || path.join(repo, 'static');
export const outDir = env.DV_TEST_OUTPUT || path.join(os.tmpdir(), 'dv-browser-output');
export const browserPath = env.DV_CHROMIUM || '/usr/bin/chromium';
export const SUITE = 'day22-part1';
export const W = `divergence-widget[suite="${SUITE}"]`; // playwright's CSS engine pierces open shadow roots
export const W2 = 'divergence-widget[suite="day22-part2"]';
export const PHONE = 390; // a phone's CSS width

// The same formatting as the widget, the CLI and the lesson page: printf's
// rounding (an exact tie goes to the even digit), written independently of
// the widget's code with the exact decimal expansion printf rounds.
export function fx(v, d) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '\u2014';
  const exact = Math.abs(v).toFixed(60); // toFixed(60) keeps every digit a double of this size has
  const [ip, fp] = exact.split('.');
  let digits = BigInt(ip + fp.slice(0, d));
  const rest = fp.slice(d);
  const half = rest[0] === '5' && /^50*$/.test(rest);
  if (rest[0] > '5' || (rest[0] === '5' && !half) || (half && digits % 2n === 1n)) digits += 1n;
  const str = digits.toString().padStart(d + 1, '0');
  return (v < 0 && digits ? '-' : '') + (d ? `${str.slice(0, -d)}.${str.slice(-d)}` : str);
}

// How row `i` of table `t` reads its ratio, written from the transcript's
// rule (api/report_text.c): with an interval (Row `ratio_ci`), the ratio and
// its ends to 3 decimals, or to 4 where all three print the same at 3 and
// the interval is not a point; the baseline row (1 by definition) to the
// table's decimals, with no interval; without intervals, 2 decimals.
// {point, ci: "[lo, hi]" | null, said: the words for screen readers | null}.
export function ratioWant(t, i) {
  const dOf = (r) => {
    const c = r.ratio_ci;
    if (!c || typeof c.lo !== 'number' || typeof c.hi !== 'number' || typeof r.ratio !== 'number') return 0;
    const p = fx(r.ratio, 3);
    return c.lo < c.hi && p === fx(c.lo, 3) && p === fx(c.hi, 3) ? 4 : 3;
  };
  const r = t.rows[i];
  if (i === t.baseline_row) {
    const d = Math.max(0, ...t.rows.map((q, k) => (k === t.baseline_row ? 0 : dOf(q))));
    return { point: fx(r.ratio, d || 2), ci: null, said: null, byDefinition: d > 0 };
  }
  const d = dOf(r);
  if (!d) return { point: fx(r.ratio, 2), ci: null, said: null };
  const [lo, hi] = [fx(r.ratio_ci.lo, d), fx(r.ratio_ci.hi, d)];
  return { point: fx(r.ratio, d), ci: `[${lo}, ${hi}]`, said: `95% interval ${lo} to ${hi}` };
}
// The ratio shown in a chart's measured label: with an interval, as the table; else 2 decimals.
export const chartRatio = (t, i) => (ratioWant(t, i).ci ? ratioWant(t, i).point : fx(t.rows[i].ratio, 2));

// Latest <date>/<suite>.json of an evidence store, as the server picks it.
export function latestEvidence(dir, suite) {
  const dates = fs.readdirSync(dir).filter((d) => fs.existsSync(path.join(dir, d, suite + '.json'))).sort();
  assert.ok(dates.length, `no ${suite}.json under any date folder of ${dir}`);
  return path.join(dir, dates.at(-1), suite + '.json');
}

export const servers = [];
export const pageErrors = [];
export const reads = []; // {src, segs} of every page, collected as each one closes

// Runs in every page before its scripts (addInitScript): wraps each parsed
// answer in a Proxy that records the property paths read on it, with where
// the answer came from. Array methods and the questions every object is
// asked (`then` by await, `toJSON` by JSON.stringify, Object.prototype's
// own) are not reads of a field.
export function recordReads() {
  const seen = new Map();
  Object.defineProperty(window, '__dvReads', { value: seen });
  const quiet = new Set(['then', 'toJSON']);
  const note = (src, segs) => { const k = JSON.stringify([src, segs]); if (!seen.has(k)) seen.set(k, { src, segs }); };
  const wrap = (v, src, segs) => {
    if (v === null || typeof v !== 'object') return v;
    const arr = Array.isArray(v);
    return new Proxy(v, {
      get(t, k, recv) {
        const x = Reflect.get(t, k, recv);
        if (typeof k !== 'string' || quiet.has(k)) return x;
        if (arr) return /^\d+$/.test(k) ? wrap(x, src, [...segs, '[]']) : x;
        if (!Object.hasOwn(t, k) && k in Object.prototype) return x;
        note(src, [...segs, k]);
        return wrap(x, src, [...segs, k]);
      },
      has(t, k) {
        if (typeof k === 'string' && !arr) note(src, [...segs, k]);
        return Reflect.has(t, k);
      },
    });
  };
  const methods = new WeakMap();
  const fetch0 = window.fetch;
  window.fetch = async function (input, init) {
    const res = await fetch0.call(this, input, init);
    methods.set(res, ((init && init.method) || 'GET').toUpperCase());
    return res;
  };
  const json0 = Response.prototype.json;
  Response.prototype.json = async function () {
    const v = await json0.call(this);
    const media = (this.headers.get('content-type') || '').split(';')[0].trim();
    return wrap(v, { method: methods.get(this) || 'GET', path: new URL(this.url).pathname, status: this.status, media }, []);
  };
  // The job stream: the data of an event, parsed while its listener runs.
  let current = null;
  const ES = window.EventSource;
  window.EventSource = class extends ES {
    addEventListener(type, fn, opts) {
      const p = new URL(this.url).pathname;
      return super.addEventListener(type, (ev) => {
        current = { data: ev.data, src: { method: 'GET', path: p, status: 200, media: 'text/event-stream', event: type } };
        try { return fn.call(this, ev); } finally { current = null; }
      }, opts);
    }
  };
  const parse0 = JSON.parse;
  JSON.parse = function (text, reviver) {
    const v = parse0.call(this, text, reviver);
    return current && text === current.data ? wrap(v, current.src, []) : v;
  };
}

// What page `p` read so far.
export const pageReads = (p) => p.evaluate(() => [...window.__dvReads.values()]);

export async function closePage(p) {
  reads.push(...(await pageReads(p)));
  assert.deepEqual(await strayText(p), [], `text that reads null, undefined or NaN on ${p.url()}`);
  await p.close();
}

// The text nodes of page `p`, shadow roots included (closed <details>
// too), that read null, undefined or NaN: a value the widget failed to
// leave out or write.
export const strayText = (p) => p.evaluate(() => {
  const bad = [];
  const walk = (root) => {
    const it = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (let n = it.currentNode; n; n = it.nextNode()) {
      if (n.nodeType === Node.TEXT_NODE) {
        if (/\b(null|undefined|NaN)\b/.test(n.data) && !(n.parentElement && n.parentElement.closest('style, script'))) bad.push(n.data.trim().slice(0, 160));
      } else if (n.shadowRoot) walk(n.shadowRoot);
    }
  };
  walk(document.documentElement);
  return bad;
});

export const assertNoStray = async (p) => assert.deepEqual(await strayText(p), [], `text that reads null, undefined or NaN on ${p.url()}`);

// What on page `p` is wider than the viewport or scrolls sideways, shadow
// roots included: the document itself, any element whose box runs past
// either edge, any scroll box whose content is wider than it (an SVG's
// own drawing is checked by the chart tests; visually hidden text is
// clipped on purpose).
export const tooWide = (p) => p.evaluate(() => {
  const vw = document.documentElement.clientWidth, out = [];
  if (document.documentElement.scrollWidth > vw) out.push(`the document: ${document.documentElement.scrollWidth} > ${vw}`);
  const name = (e) => `${e.tagName.toLowerCase()}${e.className && typeof e.className === 'string' ? '.' + e.className.trim().replace(/\s+/g, '.') : ''}${e.dataset && e.dataset.k ? `[${e.dataset.k}]` : ''}`;
  const walk = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.shadowRoot) walk(e.shadowRoot);
      if (e.closest('svg') && e.tagName.toLowerCase() !== 'svg') continue;
      let hidden = false;
      for (let a = e; a && !hidden; a = a.parentElement) if (getComputedStyle(a).clipPath !== 'none') hidden = true;
      if (hidden) continue;
      const r = e.getBoundingClientRect(), cs = getComputedStyle(e);
      if (!r.width && !r.height) continue;
      if (r.right > vw + 1 || r.left < -1) out.push(`${name(e)}: ${Math.round(r.left)}..${Math.round(r.right)} outside 0..${vw}`);
      if (cs.overflowX !== 'visible' && e.scrollWidth > e.clientWidth + 1) out.push(`${name(e)} scrolls sideways: ${e.scrollWidth} > ${e.clientWidth}`);
    }
  };
  walk(document);
  return out;
});

// Every request page `p` makes until stop(), with its bytes on the wire
// (response headers and body as transferred): {url, status, bytes}.
export function recordRequests(p) {
  const list = [];
  const on = (q) => list.push(q);
  p.on('request', on);
  return {
    async stop() {
      p.off('request', on);
      return Promise.all(list.map(async (q) => {
        const res = await q.response();
        const z = res ? await q.sizes() : null;
        return { url: q.url(), status: res ? res.status() : 0, bytes: z ? z.responseHeadersSize + z.responseBodySize : 0 };
      }));
    },
  };
}
export const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

// The schema of the answer a read was made on. The job stream's events carry
// the Job document as data (GET /jobs/{id} in api/openapi.yaml).
export function schemaOfAnswer(src) {
  const t = operationOf(src.path);
  if (!t) return null;
  if (src.media === 'text/event-stream') return t === '/jobs/{id}' ? { schema: spec.components.schemas.Job, operationId: 'getJob' } : null;
  return answerSchema(t, src.method, src.status, src.media);
}

// Reads of fields the document does not define for their answer, one line
// each ("GET /jobs/{id} 200: status"), and the operations read from.
export function contractCheck(list) {
  const bad = new Set(), ops = new Set();
  for (const { src, segs } of list) {
    const where = `${src.method} ${operationOf(src.path) || src.path} ${src.status}${src.event ? ` (event ${src.event})` : ''}`;
    const a = schemaOfAnswer(src);
    if (!a) { bad.add(`${where}: an answer api/openapi.yaml does not describe`); continue; }
    ops.add(a.operationId);
    const miss = undefinedPrefix(a.schema, segs);
    if (miss) bad.add(`${where}: ${show(miss)}`);
  }
  return { bad: [...bad].sort(), ops };
}

// Guesses between two fields of one object in the widget's source:
// `a.x || a.y` and `a.x ?? a.y` (chains too), with their lines.
export function fieldGuesses(source) {
  const ast = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  const out = [];
  const operands = (n, op) => (n.type === 'LogicalExpression' && n.operator === op ? [...operands(n.left, op), ...operands(n.right, op)] : [n]);
  const field = (n) => (n.type === 'MemberExpression' && (!n.computed || n.property.type === 'Literal')
    ? { of: source.slice(n.object.start, n.object.end), name: n.computed ? String(n.property.value) : n.property.name } : null);
  const visit = (n, parentOp) => {
    if (!n || typeof n.type !== 'string') return;
    if (n.type === 'LogicalExpression' && n.operator !== '&&' && parentOp !== n.operator) {
      const names = new Map();
      for (const f of operands(n, n.operator).map(field).filter(Boolean)) {
        if (!names.has(f.of)) names.set(f.of, new Set());
        names.get(f.of).add(f.name);
      }
      for (const [of, set] of names) {
        if (set.size > 1) out.push(`line ${n.loc.start.line}: ${[...set].map((k) => `${of}.${k}`).join(` ${n.operator} `)}`);
      }
    }
    for (const [k, v] of Object.entries(n)) {
      if (k === 'loc') continue;
      for (const c of Array.isArray(v) ? v : [v]) if (c && typeof c === 'object') visit(c, n.type === 'LogicalExpression' ? n.operator : null);
    }
  };
  visit(ast, null);
  return out;
}

// Starts `divergence serve`; resolves to its base URL once it says where it listens.
export function startServer(evidenceDir, extraEnv, extraArgs = []) {
  return new Promise((resolve, reject) => {
    const args = ['serve', '--port', '0', '--evidence-dir', evidenceDir, '--static-dir', staticDir, '--worker-cmd', worker, ...extraArgs];
    const proc = spawn(binary, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    servers.push(proc);
    let log = '';
    // Opening a store of three nights takes the server about 22 s of wall
    // time on two cores at load average 12: the limit catches a server that
    // never listens, not a slow machine.
    const timer = setTimeout(() => reject(new Error(`server did not say "listening on" within 90 s; its output:\n${log}`)), 90000);
    const onData = (chunk) => {
      log += chunk;
      const m = log.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    };
    proc.stderr.on('data', onData);
    proc.stdout.on('data', onData);
    proc.on('exit', (code, sig) => { clearTimeout(timer); reject(new Error(`server exited (${code ?? sig}) before listening:\n${log}`)); });
    proc.on('error', (e) => { clearTimeout(timer); reject(e); });
  });
}


// The session a test file runs in: a copy of the evidence store served by
// a server without a GPU (base), the capture's Part 1 record (fixture) and
// document (doc), a browser whose pages record what the widget reads
// (ctx), and its first page on the lesson page (page).
export const S = {};
export async function startSession() {
  assert.ok(binary, 'DV_BINARY must name the divergence binary');
  S.tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dv-browser-'));
  S.evidence = path.join(S.tmp, 'evidence');
  fs.cpSync(evidenceSrc, S.evidence, { recursive: true });
  S.fixture = JSON.parse(fs.readFileSync(latestEvidence(S.evidence, SUITE), 'utf8'));
  S.doc = S.fixture.document || S.fixture;
  assert.ok(Array.isArray(S.doc.tables) && S.doc.tables.length, 'the fixture document has no tables');
  fs.mkdirSync(outDir, { recursive: true });
  S.base = await startServer(S.evidence, { FAKE_WORKER_NO_GPU: '1' });
  S.ctx = await chromium.launchPersistentContext(path.join(S.tmp, 'profile'), {
    executablePath: browserPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
  });
  await S.ctx.addInitScript(recordReads);
  S.page = S.ctx.pages()[0] || (await S.ctx.newPage());
  S.page.on('pageerror', (e) => pageErrors.push(String(e)));
  await S.page.goto(S.base + '/');
  await S.page.locator(`${W} tbody tr`).first().waitFor({ timeout: 15000 });
  return S;
}

export async function endSession() {
  if (S.ctx) await S.ctx.close();
  for (const proc of servers) {
    if (proc.exitCode !== null || proc.signalCode !== null) continue;
    const gone = new Promise((ok) => proc.once('exit', ok));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 10000);
    await gone;
    clearTimeout(t);
  }
  if (S.tmp) fs.rmSync(S.tmp, { recursive: true, force: true });
}

// Desktop and phone screenshots of `p` as <name>-desktop.png and <name>-phone.png.
export async function shots(p, name) {
  await p.setViewportSize({ width: 1280, height: 900 });
  await p.waitForTimeout(150);
  await p.screenshot({ path: path.join(outDir, `${name}-desktop.png`), fullPage: true });
  await p.setViewportSize({ width: PHONE, height: 844 });
  await p.waitForTimeout(150);
  await p.screenshot({ path: path.join(outDir, `${name}-phone.png`), fullPage: true });
  // One phone screen from the top of the first widget: what a reader scrolls to.
  await p.evaluate((sel) => document.querySelector(sel).scrollIntoView(), W);
  await p.screenshot({ path: path.join(outDir, `${name}-phone-widget.png`) });
  await p.setViewportSize({ width: 1280, height: 900 });
}

// Screenshots of what `sel` selects (the whole page when null; with `at`,
// the screen scrolled to what `at` selects, centred or with `top` at the
// top) at 1280 and PHONE px wide, light
// and dark (prefers-color-scheme), as <name>-<width>-<light|dark>.png; the
// page is left light at 1280.
export async function shotsLD(p, name, sel, { at, top } = {}) {
  for (const scheme of ['light', 'dark']) {
    await p.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, PHONE]) {
      await p.setViewportSize({ width, height: width === PHONE ? 844 : 900 });
      await p.waitForTimeout(150);
      const file = path.join(outDir, `${name}-${width}-${scheme}.png`);
      if (at) { await p.locator(at).first().evaluate((e, t) => e.scrollIntoView({ block: t ? 'start' : 'center' }), !!top); await p.screenshot({ path: file }); }
      else if (sel) await p.locator(sel).first().screenshot({ path: file });
      else await p.screenshot({ path: file, fullPage: true });
    }
  }
  await p.emulateMedia({ colorScheme: 'light' });
  await p.setViewportSize({ width: 1280, height: 900 });
}

// Nothing inside the element `sel` selects is wider than its box (no text
// cut off or scrolled away), and the element lies inside the viewport:
// the tags of what overflows, and the element's box.
export async function overflowIn(p, sel) {
  const loc = p.locator(sel).first();
  // Visually hidden parts (the table's head where rows become cards) are clipped on purpose.
  const wide = await loc.evaluate((e) => [e, ...e.querySelectorAll('*')]
    .filter((x) => { for (let a = x; a && a !== e.parentNode; a = a.parentElement) if (getComputedStyle(a).clipPath !== 'none') return false; return true; })
    .filter((x) => getComputedStyle(x).display !== 'inline' && x.scrollWidth > x.clientWidth + 1)
    .map((x) => `${x.tagName.toLowerCase()}.${x.className || ''}${x.dataset.k ? `[${x.dataset.k}]` : ''}${x.closest("tr") ? `@${x.closest("tr").dataset.pc}` : ''} ${x.scrollWidth} > ${x.clientWidth}`));
  const b = await loc.boundingBox();
  const vw = p.viewportSize().width;
  if (b.x < 0 || b.x + b.width > vw + 0.5) wide.push(`box ${b.x}..${b.x + b.width} outside 0..${vw}`);
  return wide;
}

export const shadowText = (p, sel, inner) => p.evaluate(([s, i]) => document.querySelector(s)?.shadowRoot.querySelector(i)?.textContent || '', [sel, inner]);

// Opens `url` + `at` (default "/") in a new page once `setup(p)` (routes)
// has run, and waits for the widget `sel` to have loaded.
export async function openPage(url, sel = W, { setup, at = '/' } = {}) {
  const p = await S.ctx.newPage();
  await p.setViewportSize({ width: 1280, height: 900 });
  p.on('pageerror', (e) => pageErrors.push(String(e)));
  if (setup) await setup(p);
  await p.goto(url + at);
  await p.waitForFunction((s) => { const w = document.querySelector(s); return w && w.getAttribute('state') !== 'loading'; }, sel);
  return p;
}

// Stand-ins for fields api/openapi.yaml names that the server did not always
// send. Each stands in only where the server's answer lacks the field, so a
// document of an older server still reads; `used` says which stood in
// (printed at the end), `wrong` what the server's own values got wrong.
export const standIn = { used: new Set(), wrong: [] };
// The answer a routed request would have had, fetched by the test on a
// connection of its own. Playwright's fetch keeps connections alive with no
// idle limit of its own, while the server shuts a connection idle for its
// header timeout (10 s): a kept connection reused just as the server shuts
// it fails with ECONNRESET, and the page waits for an answer that never
// comes. Closing each connection after its answer leaves none idle to be shut.
export const passOn = (route) => route.fetch({ headers: { ...route.request().headers(), connection: 'close' } });

// Row.instructions, Row.lanes_block0 and testimony.instructions of an
// evidence document (all proposed in api/openapi.yaml), from
// instructions_fixture.json (make_instructions_fixture.mjs made it from an
// H200 probe's per-instruction counts). A row or testimony the server fills
// itself is left as the server wrote it: the test then reads whatever it says.
export const insFixture = JSON.parse(fs.readFileSync(path.join(here, 'instructions_fixture.json'), 'utf8'));
export function instructionsStandIn(body, suite) {
  const d = body && body.document;
  if (!d || !insFixture.testimony[suite]) return;
  if (!d.testimony || d.testimony.instructions === undefined) {
    d.testimony = { ...(d.testimony || {}), instructions: structuredClone(insFixture.testimony[suite]) };
    standIn.used.add(`testimony.instructions (GET /evidence/latest/${suite})`);
  }
  for (const t of d.tables) for (const r of t.rows) {
    const f = insFixture.rows[r.name];
    if (!f) continue;
    if (r.instructions === undefined) { r.instructions = structuredClone(f.instructions); standIn.used.add(`tables[].rows[].instructions (GET /evidence/latest/${suite})`); }
    if (r.lanes_block0 === undefined && f.lanes_block0) { r.lanes_block0 = f.lanes_block0; standIn.used.add(`tables[].rows[].lanes_block0 (GET /evidence/latest/${suite})`); }
    else if (f.lanes_block0 && JSON.stringify(r.lanes_block0) !== JSON.stringify(f.lanes_block0)) standIn.wrong.push(`lanes_block0 of ${r.name}: ${JSON.stringify(r.lanes_block0)}`);
  }
}
// Routes GET /evidence/latest/<suite> of page `p` through `edit(body, suite)` as well as the stand-in.
// The page gets the full record (.full.json, every row's runs inline, as a
// job's document carries them), so an edit can reach the runs; the slim
// record and its listings are the first load's (page.test.mjs).
export async function editEvidence(p, suites, edit = () => {}) {
  for (const suite of suites) {
    await p.route(`**/evidence/latest/${suite}`, async (route) => {
      const res = await route.fetch({ url: `${route.request().url()}.full.json`, headers: { ...route.request().headers(), connection: 'close' } });
      const body = await res.json();
      if (res.status() === 200) { instructionsStandIn(body, suite); edit(body, suite); }
      await route.fulfill({ response: res, json: body });
    });
  }
}
// The evidence document of `suite` as the page gets it through editEvidence
// (the full record, stood in, then `edit`).
export async function evidenceDoc(suite, edit = () => {}) {
  const body = await (await fetch(`${S.base}/evidence/latest/${suite}.full.json`)).json();
  instructionsStandIn(body, suite);
  edit(body, suite);
  return body.document;
}
// Counts as the listing writes them: grouped in thousands.
export const grouped = (v) => String(Math.round(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
export const hexPc = (pc) => '0x' + pc.toString(16).padStart(4, '0');
// The runs of the branch section: from the first run of path A, path B or reconvergence to the last.
export function branchSpan(runs) {
  const idx = runs.map((u, i) => (['path_a', 'path_b', 'reconverge'].includes(u.region) ? i : -1)).filter((i) => i >= 0);
  return { first: idx[0], last: idx.at(-1) };
}

// The widget's modules: the entry and everything under static/widget/, {name: source}.
export function widgetModules() {
  const out = { 'divergence-widget.js': fs.readFileSync(path.join(staticDir, 'divergence-widget.js'), 'utf8') };
  for (const f of fs.readdirSync(path.join(staticDir, 'widget')).filter((n) => n.endsWith('.js')).sort())
    out[`widget/${f}`] = fs.readFileSync(path.join(staticDir, 'widget', f), 'utf8');
  return out;
}


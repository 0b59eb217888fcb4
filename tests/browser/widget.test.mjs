// widget.test.mjs -- the lesson widget in a real browser against the real server.
//
// Starts `divergence serve` on a loopback ephemeral port with a copy of an
// evidence store (a captured measurement), the repository's static/ folder and
// the fake GPU worker told there is no GPU (so POST /measure answers 503).
// Drives Debian's chromium through playwright-core: the demo page must show
// the fixture's rows and ratios (read from the fixture file itself), one bar
// pair per row, a bad predicate's error with its column, a good predicate's
// analysis, and the 503 message while the table stays. Saves desktop and
// phone screenshots. A second server, whose fake worker reports a GPU, shows
// the Measure now round trip: 202, polling GET /jobs/{id}, the fresh table.
//
// Environment: DV_BINARY (the server binary, required), DV_WORKER_CMD
// (default <dir of DV_BINARY>/tests/fake_worker), DV_EVIDENCE_DIR (default
// tests/fixtures/evidence), DV_STATIC_DIR (default static/), DV_TEST_OUTPUT
// (screenshots; default <tmp>/dv-browser-output), DV_CHROMIUM (default
// /usr/bin/chromium).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const env = process.env;
const binary = env.DV_BINARY;
const worker = env.DV_WORKER_CMD || (binary && path.join(path.dirname(binary), 'tests', 'fake_worker'));
const evidenceSrc = env.DV_EVIDENCE_DIR || path.join(repo, 'tests', 'fixtures', 'evidence');
const staticDir = env.DV_STATIC_DIR || path.join(repo, 'static');
const outDir = env.DV_TEST_OUTPUT || path.join(os.tmpdir(), 'dv-browser-output');
const browserPath = env.DV_CHROMIUM || '/usr/bin/chromium';
const SUITE = 'day22-part1';
const W = `divergence-widget[suite="${SUITE}"]`; // playwright's CSS engine pierces open shadow roots

// The same formatting as the widget and the lesson page.
const fx = (v, d) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(d) : '\u2014');

// Latest <date>/<suite>.json of an evidence store, as the server picks it.
function latestEvidence(dir, suite) {
  const dates = fs.readdirSync(dir).filter((d) => fs.existsSync(path.join(dir, d, suite + '.json'))).sort();
  assert.ok(dates.length, `no ${suite}.json under any date folder of ${dir}`);
  return path.join(dir, dates.at(-1), suite + '.json');
}

let base, ctx, page, tmp, fixture, doc;
const servers = [];
const pageErrors = [];

// Starts `divergence serve`; resolves to its base URL once it says where it listens.
function startServer(evidenceDir, extraEnv) {
  return new Promise((resolve, reject) => {
    const args = ['serve', '--port', '0', '--evidence-dir', evidenceDir, '--static-dir', staticDir, '--worker-cmd', worker];
    const proc = spawn(binary, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    servers.push(proc);
    let log = '';
    const timer = setTimeout(() => reject(new Error(`server did not say "listening on" within 20 s; its output:\n${log}`)), 20000);
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

before(async () => {
  assert.ok(binary, 'DV_BINARY must name the divergence binary');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dv-browser-'));
  const evidence = path.join(tmp, 'evidence');
  fs.cpSync(evidenceSrc, evidence, { recursive: true });
  fixture = JSON.parse(fs.readFileSync(latestEvidence(evidence, SUITE), 'utf8'));
  doc = fixture.document || fixture;
  assert.ok(Array.isArray(doc.tables) && doc.tables.length, 'the fixture document has no tables');
  fs.mkdirSync(outDir, { recursive: true });
  base = await startServer(evidence, { FAKE_WORKER_NO_GPU: '1' });
  ctx = await chromium.launchPersistentContext(path.join(tmp, 'profile'), {
    executablePath: browserPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
  });
  page = ctx.pages()[0] || (await ctx.newPage());
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(base + '/');
  await page.locator(`${W} tbody tr`).first().waitFor({ timeout: 15000 });
});

after(async () => {
  if (ctx) await ctx.close();
  for (const proc of servers) {
    if (proc.exitCode !== null || proc.signalCode !== null) continue;
    const gone = new Promise((ok) => proc.once('exit', ok));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 10000);
    await gone;
    clearTimeout(t);
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// Every table's rows: label, split, time, ratio, predicted ratio, check, comparable marker.
async function assertTablesMatchFixture() {
  const tables = page.locator(`${W} .tables table`);
  assert.equal(await tables.count(), doc.tables.length, 'one <table> per table of the document');
  for (const [ti, t] of doc.tables.entries()) {
    const table = tables.nth(ti);
    assert.equal(await table.locator('caption').count(), 1);
    assert.equal(await table.locator('thead th[scope=col]').count(), 8);
    const rows = table.locator('tbody tr');
    assert.equal(await rows.count(), t.rows.length, `table ${ti}: one <tr> per fixture row`);
    for (const [i, r] of t.rows.entries()) {
      const tr = rows.nth(i);
      const cell = (k) => tr.locator(`td[data-k="${k}"]`).innerText();
      assert.ok((await tr.locator('th').innerText()).includes(r.label || r.name), `row ${i} label`);
      assert.equal(await cell('ratio'), fx(r.ratio, 2), `row ${i} (${r.name}) ratio`);
      assert.equal(await cell('predicted'), fx(r.predicted_ratio, 2), `row ${i} (${r.name}) predicted ratio`);
      assert.equal(await cell('time'), fx(r.time_ms?.median, 3), `row ${i} (${r.name}) median time`);
      assert.equal(await cell('noise'), fx(r.noise * 100, 2), `row ${i} (${r.name}) noise`);
      assert.equal(await cell('check'), r.check.ok ? 'ok' : `FAIL ${r.check.mismatches}, first thread ${r.check.first_mismatch}`);
      const split = r.warps_split_per_block ?? r.warps_split?.per_block;
      assert.ok((await cell('split')).startsWith(String(split)), `row ${i} (${r.name}) warps split`);
      const marked = (await tr.locator('th').innerText()).includes('not comparable');
      assert.equal(marked, r.comparable === false, `row ${i} (${r.name}) not-comparable marker in text`);
    }
  }
}

test('the table renders the fixture rows, ratios and provenance', async () => {
  await assertTablesMatchFixture();
  const prov = await page.locator(`${W} .prov`).first().innerText();
  assert.ok(prov.includes(doc.device.name), `provenance names the GPU: ${prov}`);
  assert.ok(prov.includes(`${fx(doc.device.measured_sm_clock_mhz, 0)} MHz measured`), `provenance gives the measured clock: ${prov}`);
  assert.match(prov, /CUDA runtime \d+\.\d/);
  assert.match(prov, /\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC/);
});

test('the chart has one measured/predicted bar pair per row, labelled', async () => {
  const charts = page.locator(`${W} .tables svg[role=img]`);
  assert.equal(await charts.count(), doc.tables.length);
  for (const [ti, t] of doc.tables.entries()) {
    const svg = charts.nth(ti);
    assert.equal(await svg.locator('g.pair').count(), t.rows.length, `table ${ti}: one pair per row`);
    assert.equal(await svg.locator('g.pair rect.bm').count(), t.rows.length);
    assert.equal(await svg.locator('g.pair rect.bp').count(), t.rows.length);
    const labels = await svg.locator('g.pair').allInnerTexts();
    for (const [i, r] of t.rows.entries()) {
      const text = await svg.locator('g.pair').nth(i).textContent();
      assert.ok(text.includes(`${fx(r.ratio, 2)}\u00d7 measured`), `bar label ${i}: ${text} ${labels}`);
    }
    const named = await svg.evaluate((s) => s.getAttribute('aria-labelledby').split(' ').map((id) => s.getRootNode().getElementById(id)?.textContent || ''));
    assert.ok(named[0].length > 0 && named[1].includes(t.rows[0].label || t.rows[0].name), 'title and desc name the chart');
  }
});

test('a bad predicate shows its error with the column and caret', async () => {
  const input = page.getByLabel(/^Predicate/).first();
  const expr = 'threadIdx.x + $ 1';
  const res = page.waitForResponse((r) => r.url().endsWith('/analyze') && r.request().postDataJSON().predicates[0] === expr);
  await input.fill(expr);
  const r = await res;
  assert.equal(r.status(), 400);
  const e = (await r.json()).error;
  assert.equal(e.expr_column, expr.indexOf('$') + 1, 'the server points at the bad character');
  const out = page.locator(`${W} .out`);
  await out.locator('pre').waitFor();
  const text = await out.innerText();
  assert.ok(text.includes(`column ${e.expr_column}`), `column shown: ${text}`);
  assert.ok(text.includes(e.reason), `reason shown: ${text}`);
  const caret = await out.locator('pre').innerText();
  const lines = caret.split('\n');
  const at = lines.findIndex((l) => /^\s*\^/.test(l));
  assert.ok(at > 0 && lines[at].indexOf('^') === lines[at - 1].indexOf('$'), `caret under the bad character:\n${caret}`);
});

test('a good predicate shows its analysis live', async () => {
  const input = page.getByLabel(/^Predicate/).first();
  await input.fill('threadIdx.x < 16');
  const out = page.locator(`${W} .out dl`);
  await out.waitFor();
  await page.waitForFunction((sel) => {
    const w = document.querySelector(sel);
    return w && /1 of 8/.test(w.shadowRoot.querySelector('.out').textContent);
  }, W);
  const text = await out.innerText();
  assert.match(text, /Warps split per block\s+1 of 8/);
  assert.match(text, /Threads on path A per block\s+16 of 256/);
  assert.match(text, /Predicted ratio vs \S+\s+1\.13/);
  assert.match(text, /Comparable\s+no/);
});

test('Measure now answered 503 shows the reason and keeps the table', async () => {
  await page.screenshot({ path: path.join(outDir, 'widget-desktop-before-measure.png'), fullPage: true });
  const res = page.waitForResponse((r) => r.url().endsWith('/measure'));
  await page.locator(`${W} button`, { hasText: 'Measure now' }).focus();
  await page.keyboard.press('Enter');
  const r = await res;
  assert.equal(r.status(), 503);
  const reason = (await r.json()).error.reason;
  const msg = page.locator(`${W} .msg[aria-live=polite]`);
  await page.waitForFunction((sel) => /not available/.test(document.querySelector(sel).shadowRoot.querySelector('.msg').textContent), W);
  const said = await msg.innerText();
  assert.ok(said.includes(reason), `message gives the server's reason: ${said}`);
  assert.match(said, /last good numbers/);
  await assertTablesMatchFixture();
  assert.equal(await page.locator(`${W} button`, { hasText: 'Measure now' }).isEnabled(), true);
  await page.screenshot({ path: path.join(outDir, 'widget-desktop.png'), fullPage: true });
});

test('at phone width the page does not overflow and the table scrolls inside its box', async () => {
  await page.setViewportSize({ width: 375, height: 812 });
  await page.waitForTimeout(200);
  const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(pageWidth <= 375, `page is ${pageWidth}px wide at 375`);
  const box = page.locator(`${W} .scroll`).first();
  const [sw, cw] = await box.evaluate((e) => [e.scrollWidth, e.clientWidth]);
  assert.ok(sw > cw && cw <= 375, `table scrolls inside its container (${sw} > ${cw})`);
  await page.screenshot({ path: path.join(outDir, 'widget-phone.png'), fullPage: true });
  assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  console.log(`screenshots: ${outDir}/widget-desktop.png, ${outDir}/widget-phone.png`);
});

test('Measure now with a GPU worker queues, polls the job and shows the fresh document', async () => {
  // A second server whose (fake) worker reports a GPU and answers jobs with
  // the planned analysis and plausible timings.
  const url = await startServer(path.join(tmp, 'evidence'), { FAKE_WORKER_NO_GPU: '0' });
  const p = await ctx.newPage();
  await p.setViewportSize({ width: 1280, height: 900 });
  p.on('pageerror', (e) => pageErrors.push(String(e)));
  await p.goto(url + '/');
  await p.locator(`${W} tbody tr`).first().waitFor({ timeout: 15000 });
  const accepted = p.waitForResponse((r) => r.url().endsWith('/measure'));
  const finished = p.waitForResponse(async (r) => /\/jobs\/[^/]+$/.test(r.url()) && (await r.json()).state === 'done', { timeout: 60000 });
  await p.locator(`${W} button`, { hasText: 'Measure now' }).click();
  const a = await accepted;
  assert.ok([200, 202].includes(a.status()), `POST /measure answered ${a.status()}`);
  const fresh = (await (await finished).json()).document;
  await p.waitForFunction((sel) => /^Done:/.test(document.querySelector(sel).shadowRoot.querySelector('.msg').textContent), W);
  const rows = p.locator(`${W} .tables table`).first().locator('tbody tr');
  const t = fresh.tables[0];
  assert.equal(await rows.count(), t.rows.length);
  for (const [i, r] of t.rows.entries()) {
    assert.equal(await rows.nth(i).locator('td[data-k="ratio"]').innerText(), fx(r.ratio, 2), `fresh row ${i} ratio`);
  }
  assert.match(await p.locator(`${W} .prov`).first().innerText(), /^Measured just now on /);
  await p.close();
});

// A real H200 capture with the GPU's testimony (witness and counters), rendered
// by the widget: the table gains a "GPU's testimony" column, the caption names
// the instantiation, the chart a third bar per row (the GPU's instruction count
// against the baseline row's). Every expected string is read from the capture.
test("the GPU's testimony shows beside the model in the table and the chart", async () => {
  const cap = JSON.parse(fs.readFileSync(path.join(repo, 'tests', 'fixtures', 'testimony', 'h200-lesson.json'), 'utf8'));
  const got = await page.evaluate(([sel, d]) => {
    const box = document.createElement('div');
    box.append(...document.querySelector(sel).renderDoc(d, 'testimony'));
    return {
      tables: [...box.querySelectorAll('table')].map((t) => ({
        head: [...t.querySelectorAll('thead th')].map((h) => h.textContent),
        gpu: [...t.querySelectorAll('td[data-k=gpu]')].map((c) => c.textContent),
        cap: t.querySelector('caption').textContent,
      })),
      charts: [...box.querySelectorAll('svg[role=img]')].map((s) => ({
        pairs: s.querySelectorAll('g.pair').length, counted: s.querySelectorAll('g.pair rect.bg').length,
        desc: s.querySelector('desc').textContent, text: s.textContent,
      })),
    };
  }, [W, cap]);
  assert.equal(got.tables.length, cap.tables.length);
  for (const [ti, t] of cap.tables.entries()) {
    const g = got.tables[ti];
    assert.ok(g.head.includes("GPU's testimony"), `table ${ti} has the testimony column: ${g.head}`);
    assert.ok(g.cap.includes(`(${t.kernel_iterations} iterations)`), `caption names the instantiation: ${g.cap}`);
    assert.equal(g.gpu.length, t.rows.length);
    for (const [i, r] of t.rows.entries()) {
      const c = r.counters, o = r.observed, cell = g.gpu[i];
      assert.ok(cell.includes(`split ${fx(o.split_warps_per_block, 2)}`), `row ${i}: ${cell}`);
      assert.ok(cell.includes(o.agrees ? 'agrees with the model' : o.predicated ? 'predicated' : 'differs'), `row ${i}: ${cell}`);
      assert.ok(cell.includes(`${fx(c['smsp__thread_inst_executed_per_inst_executed.ratio'], 1)} lanes/instr`), `row ${i}: ${cell}`);
      assert.ok(cell.includes(`${fx(c.divergent_branches_per_block, 2)} divergent/block`), `row ${i}: ${cell}`);
      assert.ok(cell.includes(`${fx(c.warp_instructions_per_fma, 2)} instr/FMA`), `row ${i}: ${cell}`);
      assert.equal(cell.includes('timed kernel predicated'), c.predicated, `row ${i}: ${cell}`);
    }
    const ch = got.charts[ti];
    assert.equal(ch.counted, t.rows.length, `chart ${ti}: a GPU-count bar per row`);
    assert.equal(ch.pairs, t.rows.length);
    for (const r of t.rows)
      assert.ok(ch.text.includes(`${fx(r.counters.instructions_vs_baseline, 2)}\u00d7 GPU instructions`), `chart ${ti}: ${r.name}`);
    assert.ok(ch.desc.includes('GPU instruction count'), ch.desc);
  }
  // The lane-parity row of Part 1: about 16 active lanes per instruction and 8 divergent branches per block.
  assert.match(got.tables[0].gpu[0], /16\.\d lanes\/instr/);
  assert.ok(got.tables[0].gpu[0].includes('8.00 divergent/block'));
});

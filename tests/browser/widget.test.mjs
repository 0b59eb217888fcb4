// widget.test.mjs -- the lesson widget in a real browser against the real server.
//
// Starts `divergence serve` on loopback ephemeral ports with the fake GPU
// worker and drives Debian's chromium through playwright-core:
// - demo mode: a copy of the committed H200 capture, a server with no GPU:
//   the page shows the fixture's rows and ratios (read from the fixture file),
//   labelled as a recorded measurement with its age, the buttons disabled with
//   the reason in plain words; a predicate's analysis; phone width shows the
//   ratio without sideways scrolling and chart text of at least 12 px;
// - a fresh server (no evidence, no GPU): says what is missing, hides the page
//   text that reads numbers, shows what it can;
// - a failed refresh (every row over the noise limit): the reason of the
//   failed night is on the page;
// - a server with a token: with the open limit at 0 the buttons are disabled
//   and say why; with the default limit a page measures the lesson's suite,
//   polls GET /jobs/{id}, shows the fresh document with its warnings, and a
//   second click is labelled as a cached result with its age;
// - `no-measure` hides the buttons; the widget, the CLI and the .txt agree on
//   the model's 1.125;
// - evidence of three GPU models in one store (the H200 capture and two
//   servers of two fake GPU models refreshing into the same directory): the
//   selector and the side-by-side table and chart;
// - the answers that end a measurement without numbers (a crashed job, no
//   GPU, a token needed) said in plain words;
// - errors in the reader's words ("your predicate", "predicate 2 (...)",
//   "the block shape"), wrapped at 1280 and 390 px, with a caret under the
//   column a parse or an evaluation error names;
// - the lane map of block 0 beside the analysis, as the server sends it
//   (Row.lanes_block0) and as lanes_fixture.json writes it out from the
//   predicates' definitions (a few predicates and block shapes, a partial
//   warp among them): the server's map must be the fixture's, and the page
//   must draw it per lane, split warps marked, and say it in words;
// - the permalink: the tried predicate and block shape in the URL
//   (replaceState), restored from a link;
// - a page of another origin serving the widget's modules: a CORS refusal
//   named with the flag that fixes it and the buttons disabled; the flag
//   given, the page works, and the modules load from the server itself; a
//   server that does not allow the page cannot serve it the modules either,
//   and the element's own text stays; a server that is down is not called
//   a refusal;
// - Part 2 read both ways: the readings in the table and the chart;
// - the instruction listing of a row (instructions_fixture.json, made by
//   make_instructions_fixture.mjs from an H200 probe's per-instruction
//   counts, stood in for the proposed Row `instructions`): opened from the
//   row by keyboard, its regions in a warp's order with their lanes and
//   stall samples, one warp's lanes, the kernel's source lines (the runs
//   summed per line), at most two screens tall at 1280 px; the SASS one
//   click further: the runs of the branch (the sections before and after it
//   collapsed and not built), lane bars to scale and in words, guards
//   marked, paths in the chart's colours, a run's first and last
//   instruction, Escape back to the row; Part 2's predicated branch; no
//   SASS text, a cached profile, none collected; the fixture against the
//   proposed schema;
// - the scenarios suite measured from a page against the fake worker;
// - fields the server did not always send (Part 2's readings) stood in by
//   the test where the answer lacks them and read as the server sends them
//   where it has them (`standIn`);
// - the contract (STYLE.md rule 21): every property the widget reads on a
//   parsed answer of the server is recorded in the page (a Proxy around what
//   Response.json() and the job stream's JSON.parse() return) and must be
//   defined by api/openapi.yaml's schema of that answer; a planted read of a
//   field the document lacks is caught. A read that a short-circuit skips
//   cannot be recorded, so every module of the widget is also parsed
//   (acorn) and no `a.x || a.y` / `a.x ?? a.y` guess between two fields of
//   one object may stand in it;
// - after every flow, on every page it used: no text node reads null,
//   undefined or NaN (closePage, and afterEach for the shared page).
// Screenshots (desktop and phone; the new items at 1280 and 390 px, light
// and dark) of each go to DV_TEST_OUTPUT. The session, the contract record
// and the page checks are harness.mjs's (its environment variables);
// page.test.mjs holds the lesson page's first load and the rows' sentences.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import {
  S, startSession, endSession, here, repo, evidenceSrc, staticDir, outDir, binary, SUITE, W, W2, PHONE, fx, ratioWant, chartRatio,
  latestEvidence, pageErrors, reads, pageReads, closePage, assertNoStray, contractCheck, fieldGuesses, startServer, shots, shotsLD,
  overflowIn, shadowText, openPage, standIn, passOn, insFixture, editEvidence, evidenceDoc, grouped, hexPc, branchSpan, widgetModules,
} from './harness.mjs';
import { spec } from '../api/openapi/contract.mjs';

let base, ctx, page, tmp, fixture, doc;

before(async () => {
  ({ base, ctx, page, tmp, fixture, doc } = await startSession());
});

after(endSession);

// After each flow, on the page the flows share as on every page a flow
// closes (closePage): no text reads null, undefined or NaN.
afterEach(async () => { if (page && !page.isClosed()) await assertNoStray(page); });

// Every table's rows: label, split, time, ratio, predicted ratio, check, comparable marker.
async function assertTablesMatchFixture(p = page) {
  const tables = p.locator(`${W} .tables table`);
  assert.equal(await tables.count(), doc.tables.length, 'one <table> per table of the document');
  for (const [ti, t] of doc.tables.entries()) {
    const table = tables.nth(ti);
    assert.equal(await table.locator('caption').count(), 1);
    // Five columns: the predicate, the model (warps split, threads on A),
    // the ratio and the prediction; the rest opens in place under each row.
    assert.deepEqual(await table.locator('thead th[scope=col]').allTextContents(),
      ['Predicate', 'Warps split (per block)', 'Threads on path A (per block)', 'Ratio vs baseline', 'Predicted ratio']);
    const rows = table.locator('tbody tr[data-row]');
    assert.equal(await rows.count(), t.rows.length, `table ${ti}: one <tr> per fixture row`);
    for (const [i, r] of t.rows.entries()) {
      const tr = rows.nth(i), say = table.locator(`tr[data-say="${i}"]`);
      const cell = (k) => tr.locator(`td[data-k="${k}"] .v`).innerText();
      // Time, noise and the check: in the row's details, closed.
      const fact = (k) => say.locator(`details.more [data-k="${k}"] .v`).textContent();
      assert.ok((await tr.locator('th').innerText()).includes(r.label || r.name), `row ${i} label`);
      assert.equal(await tr.locator('td[data-k="ratio"] .v').innerText(), ratioWant(t, i).point, `row ${i} (${r.name}) ratio`);
      assert.equal(await cell('predicted'), fx(r.predicted_ratio, 2), `row ${i} (${r.name}) predicted ratio`);
      assert.equal(await say.locator('details.more').getAttribute('open'), null, `row ${i}: the details start closed`);
      assert.equal(await fact('time'), fx(r.time_ms?.median, 3), `row ${i} (${r.name}) median time`);
      assert.equal(await fact('noise'), fx(r.noise * 100, 2), `row ${i} (${r.name}) noise`);
      assert.equal(await fact('check'), r.check.ok ? 'ok' : `FAIL ${r.check.mismatches}, first thread ${r.check.first_mismatch}`);
      const split = r.warps_split_per_block ?? r.warps_split?.per_block;
      assert.ok((await cell('split')).startsWith(String(split)), `row ${i} (${r.name}) warps split`);
      const marked = (await tr.locator('th').innerText()).includes('not comparable');
      assert.equal(marked, r.comparable === false, `row ${i} (${r.name}) not-comparable marker in text`);
    }
  }
}

// The lanes of block 0 for a few predicates and block shapes, written out
// from the predicates' definitions, not by the server: what its
// Row.lanes_block0 must say.
const lanesFixture = JSON.parse(fs.readFileSync(path.join(here, 'lanes_fixture.json'), 'utf8')).cases;

// Table.readings of Part 2 (split: the lane-parity per-iteration row against
// the warp-parity one; question: the warp-parity one against no branch), as
// the contract defines them, from the rows' own ratios.
function readingsStandIn(body) {
  for (const t of body.document.tables) {
    const by = (n) => t.rows.find((r) => r.name === n);
    const split = by('per-iteration-lane-parity'), uni = by('per-iteration-warp-parity'), none = by('no-branch');
    if (!split || !uni || !none) continue;
    if (t.readings !== undefined) continue; // the server's own: the test reads whatever it says
    const q = (a, b) => (typeof a === 'number' && typeof b === 'number' && b ? a / b : null);
    t.readings = [
      { kind: 'split', row: split.name, against: uni.name, ratio: q(split.ratio, uni.ratio), predicted: q(split.predicted_ratio, uni.predicted_ratio),
        sentence: 'Stand-in sentence: the split row against the warp-uniform one, the cost of splitting a warp.' },
      { kind: 'question', row: uni.name, against: none.name, ratio: q(uni.ratio, none.ratio), predicted: q(uni.predicted_ratio, none.predicted_ratio),
        sentence: 'Stand-in sentence: the warp-uniform row against no branch, the cost of asking the question in the loop.' },
    ];
    standIn.used.add('tables[].readings (GET /evidence/latest/day22-part2)');
  }
}

test('demo mode: the fixture rows, ratios and provenance, labelled as a recorded measurement', async () => {
  await assertTablesMatchFixture();
  const prov = await page.locator(`${W} .prov`).first().innerText();
  assert.ok(prov.includes(doc.device.name), `provenance names the GPU: ${prov}`);
  assert.ok(prov.includes(`${fx(doc.device.measured_sm_clock_mhz, 0)} MHz measured`), `provenance gives the measured clock: ${prov}`);
  assert.match(prov, /CUDA runtime \d+\.\d/);
  assert.match(prov, /\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC \(\d+ (days|h|min|s) ago\)/, `the real age: ${prov}`);
  assert.doesNotMatch(prov, /just now/);
  await page.waitForFunction((sel) => /recorded measurement/.test(document.querySelector(sel).shadowRoot.querySelector('.note').textContent), W);
  const note = await page.locator(`${W} .note`).innerText();
  assert.match(note, new RegExp(`A recorded measurement from ${doc.device.name}: this server has no GPU to measure again`));
});

test('demo mode: Measure now is disabled with the reason in plain words', async () => {
  const btn = page.locator(`${W} button`, { hasText: 'Measure now' });
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.why').textContent.length > 0, W);
  assert.equal(await btn.isDisabled(), true);
  const why = await page.locator(`${W} .why`).innerText();
  assert.match(why, /^Measuring is off: this server has no NVIDIA GPU/, why);
  assert.equal(await page.locator(`${W} button`, { hasText: 'Measure this' }).isDisabled(), true);
  // The page's own text about the numbers is there: the widget has numbers.
  assert.equal(await page.locator('.needs-part1').first().isVisible(), true);
  assert.equal(await page.locator('.if-empty.part1').isVisible(), false);
});

test('the chart has one measured/predicted bar pair per row, labelled', async () => {
  const charts = page.locator(`${W} .tables figure.chart > svg[role=img]`);
  assert.equal(await charts.count(), doc.tables.length);
  for (const [ti, t] of doc.tables.entries()) {
    const svg = charts.nth(ti);
    assert.equal(await svg.locator('g.pair').count(), t.rows.length, `table ${ti}: one pair per row`);
    assert.equal(await svg.locator('g.pair rect.bm').count(), t.rows.length);
    assert.equal(await svg.locator('g.pair rect.bp').count(), t.rows.length);
    const labels = await svg.locator('g.pair').allInnerTexts();
    for (const [i, r] of t.rows.entries()) {
      const text = await svg.locator('g.pair').nth(i).textContent();
      assert.ok(text.includes(`${chartRatio(t, i)}\u00d7 measured`), `bar label ${i}: ${text} ${labels}`);
    }
    const named = await svg.evaluate((s) => s.getAttribute('aria-labelledby').split(' ').map((id) => s.getRootNode().getElementById(id)?.textContent || ''));
    assert.ok(named[0].length > 0 && named[1].includes(t.rows[0].label || t.rows[0].name), 'title and desc name the chart');
  }
});

test('errors are said in the reader\'s words, wrap at every width, and put a caret under the column', async () => {
  const evalExpr = 'threadIdx.x / (lane - lane)', endExpr = 'threadIdx.x <', badExpr = 'threadIdx.x + $ 1';
  const p = await openPage(base);
  const input = p.getByLabel(/^Predicate/).first();
  const out = `${W} .out`;
  // Types `expr`; resolves to the Error of the answer once the page shows its reason.
  const tryExpr = async (expr) => {
    const res = p.waitForResponse((r) => r.url().endsWith('/analyze') && r.request().postDataJSON().predicates[0] === expr);
    await input.fill(expr);
    const r = await res;
    assert.equal(r.status(), 400, expr);
    const e = (await r.json()).error;
    await p.waitForFunction(([s, why]) => document.querySelector(s).shadowRoot.querySelector('.out').textContent.includes(why), [W, e.reason]);
    return e;
  };
  // The caret: under the character at `col` (one past the end: a blank), below the line.
  const caretAt = async (expr, col) => {
    const mark = p.locator(`${out} .expr mark.at`);
    assert.equal(await mark.count(), 1, 'one marked character');
    const [marked, shown] = await mark.evaluate((m) => [m.firstChild.textContent, m.closest('.expr').textContent]);
    assert.equal(marked, expr[col - 1] ?? '\u00a0', `the marked character is column ${col} of ${expr}`);
    assert.equal(shown.replace('^', '').replace(/\u00a0$/, ''), expr, 'the predicate is shown whole');
    const mb = await mark.boundingBox(), cb = await mark.locator('.cr').boundingBox();
    assert.ok(cb.y >= mb.y + mb.height * 0.6, `the caret is below its character: ${JSON.stringify([mb, cb])}`);
    assert.ok(Math.abs(cb.x + cb.width / 2 - (mb.x + mb.width / 2)) < 1.5, `the caret is centred under it: ${JSON.stringify([mb, cb])}`);
  };
  // A parse error: the server's column, in the reader's words.
  const e1 = await tryExpr(badExpr);
  assert.equal(e1.field, 'predicates[0]');
  assert.equal(e1.expr_column, badExpr.indexOf('$') + 1, 'the server points at the bad character');
  let text = await p.locator(out).innerText();
  assert.ok(text.startsWith(`Your predicate is not valid: ${e1.reason}`), text);
  assert.doesNotMatch(text, /predicates\[/, 'no wire name');
  await caretAt(badExpr, e1.expr_column);
  // An evaluation error: long, it wraps at 1280 px, with its caret too,
  // under the column the server sends (the operator that failed).
  const e2 = await tryExpr(evalExpr);
  assert.match(e2.reason, /column 13: division by zero$/);
  assert.equal(e2.field, 'predicates[0]');
  assert.equal(e2.expr_column, evalExpr.indexOf('/') + 1, 'the server points at the division that failed');
  assert.equal(e2.caret, `${evalExpr}\n${' '.repeat(evalExpr.indexOf('/'))}^`, 'and draws its own caret there');
  text = await p.locator(out).innerText();
  assert.ok(text.includes('Your predicate is not valid: ') && text.includes('division by zero'), text);
  assert.deepEqual(await overflowIn(p, `${out} .err`), [], 'the error box wraps at 1280 px');
  await caretAt(evalExpr, e2.expr_column);
  await shotsLD(p, 'error-evaluation', `${W} fieldset.try`);
  // At phone width: the end of the input, the caret one past the last character.
  await p.setViewportSize({ width: PHONE, height: 844 });
  const e3 = await tryExpr(endExpr);
  assert.match(e3.reason, /unexpected end of input/);
  assert.deepEqual(await overflowIn(p, `${out} .err`), [], `the error box wraps at ${PHONE} px`);
  assert.deepEqual(await overflowIn(p, `${W} fieldset.try`), [], `the try box fits at ${PHONE} px`);
  await caretAt(endExpr, e3.expr_column);
  await shotsLD(p, 'error-phone', `${W} fieldset.try`);
  // The block shape the server refuses, in words.
  await input.fill('lane');
  const shape = p.waitForResponse((r) => r.url().endsWith('/analyze') && JSON.stringify(r.request().postDataJSON().threads_per_block) === '[64,32]');
  await p.getByLabel('Block width (blockDim.x)').fill('64');
  await p.getByLabel('Block height (blockDim.y)').fill('32');
  const e4 = (await (await shape).json()).error;
  assert.equal(e4.field, 'threads_per_block');
  await p.waitForFunction(([s, why]) => document.querySelector(s).shadowRoot.querySelector('.out').textContent.includes(why), [W, e4.reason]);
  text = await p.locator(out).innerText();
  assert.ok(text.startsWith(`The block shape (threads per block) is not valid: ${e4.reason}`), text);
  assert.doesNotMatch(text, /threads_per_block/);
  // A measurement's refusal names the predicate by its place and text, or as the reader's own.
  const say = () => p.evaluate((sel) => document.querySelector(sel).shadowRoot.querySelector('.msg').textContent, W);
  await p.evaluate((sel) => document.querySelector(sel).measure({ part: 1, predicates: ['lane-parity', 'threadIdx.x % 0'] }), W);
  assert.match(await say(), /^The server refused the measurement \(HTTP 400\), about predicate 2 \(threadIdx\.x % 0\): .*modulo by zero\./);
  await p.evaluate((sel) => document.querySelector(sel).measure({ part: 1, predicates: ['threadIdx.x % 0', 'warp-parity'] }, true), W);
  assert.match(await say(), /^The server refused the measurement \(HTTP 400\), about your predicate: /);
  assert.doesNotMatch(await say(), /predicates\[/);
  await closePage(p);
});

test('a good predicate shows its analysis live, rounded as the CLI rounds it', async () => {
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
  assert.match(text, /Comparable\s+no/);
  // The model's 9/8 = 1.125 exactly: the widget, the CLI and the recorded
  // transcript must print it the same way.
  const shown = text.match(/Predicted ratio vs \S+\s+(\d+\.\d+)/)[1];
  const cli = execFileSync(binary, ['analyze', '--part', '1', '--predicates', 'threadIdx.x < 16,warp-parity', '--baseline', 'warp-parity'], { encoding: 'utf8' });
  const cliRow = cli.split('\n').find((l) => l.startsWith('threadIdx.x < 16'));
  assert.ok(cliRow, cli);
  const cliValue = cliRow.trim().split(/\s+/).at(-1);
  const exercise = fs.readFileSync(path.join(path.dirname(latestEvidence(evidenceSrc, 'day22-exercise')), 'day22-exercise.txt'), 'utf8');
  const txtRow = exercise.split('\n').find((l) => l.startsWith('threadIdx.x < 16'));
  assert.equal(shown, '1.12', `widget: ${shown}`);
  assert.equal(cliValue, shown, `CLI row: ${cliRow}`);
  assert.ok(txtRow && txtRow.includes(` ${shown} `), `transcript row: ${txtRow}`);
  assert.equal(fx(1.125, 2), '1.12');
  assert.equal(fx(0.375, 2), '0.38');
  assert.equal(fx(2.675, 2), '2.67'); // 2.675 is below the tie as a double
});

test('demo mode at phone width: the ratio shows without sideways scrolling, chart text >= 12 px', async () => {
  await shots(page, 'demo');
  await page.setViewportSize({ width: 375, height: 812 });
  await page.waitForTimeout(200);
  const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(pageWidth <= 375, `page is ${pageWidth}px wide at 375`);
  const cells = page.locator(`${W} .tables table`).first().locator('td[data-k="ratio"]');
  for (let i = 0; i < await cells.count(); i++) {
    const b = await cells.nth(i).boundingBox();
    assert.ok(b && b.x >= 0 && b.x + b.width <= 375, `ratio cell ${i} inside the screen: ${JSON.stringify(b)}`);
    assert.match(await cells.nth(i).innerText(), /^Ratio\s*\d\.\d\d/);
  }
  const box = page.locator(`${W} .scroll`).first();
  const [sw, cw] = await box.evaluate((e) => [e.scrollWidth, e.clientWidth]);
  assert.ok(sw <= cw + 1, `no sideways scroller (${sw} vs ${cw})`);
  const px = await page.locator(`${W} .tables figure.chart > svg[role=img]`).first().evaluate((s) => {
    const t = s.querySelector('g.pair text');
    return t.getBoundingClientRect().height;
  });
  assert.ok(px >= 12, `chart text is ${px}px high at phone width`);
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
});

test('a fresh server without evidence says what is missing and hides the text that needs numbers', async () => {
  const empty = path.join(tmp, 'empty-evidence');
  fs.mkdirSync(empty);
  const url = await startServer(empty, { FAKE_WORKER_NO_GPU: '1' });
  const p = await openPage(url);
  assert.equal(await p.locator(W).getAttribute('state'), 'empty');
  const prov = await p.locator(`${W} .prov`).innerText();
  assert.match(prov, /No measurement of day22-part1 has been recorded on this server yet/);
  assert.match(prov, /divergence refresh/);
  assert.equal(await p.locator(`${W} table`).count(), 0);
  assert.equal(await p.locator('.needs-part1').first().isVisible(), false, 'the page no longer says "read the ratio column"');
  assert.equal(await p.locator('.if-empty.part1').isVisible(), true);
  await p.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.why').textContent.length > 0, W);
  assert.equal(await p.locator(`${W} button`, { hasText: 'Measure now' }).isDisabled(), true);
  assert.doesNotMatch(await shadowText(p, W, '.msg'), /last good numbers/);
  // The model still answers without a GPU.
  await p.getByLabel(/^Predicate/).first().fill('threadIdx.x & 1');
  await p.locator(`${W} .out dl`).waitFor();
  await shots(p, 'fresh');
  await closePage(p);
});

test('after a failed refresh the page gives the reason', async () => {
  const dir = path.join(tmp, 'failed-evidence');
  fs.mkdirSync(dir);
  // A GPU whose every row is too noisy: each suite fails the refresh's noise limit.
  const url = await startServer(dir, { FAKE_WORKER_NO_GPU: '0', FAKE_WORKER_NOISE: '0.5' });
  for (let n = 0; n < 100 && (await fetch(url + '/readyz')).status !== 200; n++) await new Promise((ok) => setTimeout(ok, 100));
  const r = await fetch(url + '/evidence/refresh', { method: 'POST', headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.status, 202);
  const id = (await r.json()).id;
  let st;
  for (let n = 0; n < 100; n++) {
    st = await (await fetch(`${url}/evidence/refresh/${id}`)).json();
    if (st.state === 'done') break;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  assert.equal(st.state, 'done');
  const reason = st.suites.find((x) => x.suite === SUITE).reason;
  assert.ok(reason, JSON.stringify(st));
  const p = await openPage(url);
  const prov = await p.locator(`${W} .prov`).innerText();
  assert.match(prov, /No good measurement of day22-part1 has been recorded yet: the last attempt \(\d{4}-\d\d-\d\d\) failed: /);
  assert.ok(prov.includes(reason), `the recorded reason (${reason}) in: ${prov}`);
  assert.doesNotMatch(prov, /not recorded yet|has been recorded on this server yet/);
  await shots(p, 'failed-refresh');
  await closePage(p);
});

test('a server whose token guards every measurement disables the buttons and says why', async () => {
  const url = await startServer(path.join(tmp, 'evidence'), { FAKE_WORKER_NO_GPU: '0' }, ['--token', 'tok-' + process.pid, '--open-measure-cost', '0']);
  const p = await openPage(url);
  await p.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.why').textContent.length > 0, W);
  assert.equal(await p.locator(`${W} button`, { hasText: 'Measure now' }).isDisabled(), true);
  assert.match(await p.locator(`${W} .why`).innerText(), /access token, which a page cannot send/);
  await assertTablesMatchFixture(p);
  await shots(p, 'token');
  await closePage(p);
});

test('behind a front that keeps /device to operators, /readyz still tells the page there is no GPU', async () => {
  const p = await ctx.newPage();
  p.on('pageerror', (e) => pageErrors.push(String(e)));
  await p.route(base + '/device', (r) => r.fulfill({ status: 403, contentType: 'text/html', body: '<h1>403 Forbidden</h1>' }));
  await p.goto(base + '/');
  await p.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.why').textContent.length > 0, W);
  assert.match(await p.locator(`${W} .why`).innerText(), /^Measuring is off: this server has no NVIDIA GPU/);
  assert.equal(await p.locator(`${W} button`, { hasText: 'Measure now' }).isDisabled(), true);
  await closePage(p);
});

test('no-measure hides the buttons', async () => {
  await page.evaluate(() => {
    const w = document.createElement('divergence-widget');
    w.setAttribute('suite', 'day22-exercise');
    w.setAttribute('no-measure', '');
    document.querySelector('main').append(w);
  });
  const sel = 'divergence-widget[suite="day22-exercise"]';
  await page.waitForFunction((s) => document.querySelector(s).getAttribute('state') === 'shown', sel);
  // No button that measures or tries a predicate; a row's instruction
  // listing (reading, not measuring) keeps its button.
  assert.equal(await page.locator(`${sel} button:not(.ib):not(.sx):not(.xn)`).count(), 0);
  assert.equal(await page.locator(`${sel} tbody tr`).count() > 0, true);
});

test('with a token and the default open limit a page measures the suite, shows warnings, labels a cached answer', async () => {
  // The fake worker reports a GPU and answers with the planned analysis,
  // plausible timings and the warning "fake worker: no GPU was used".
  const url = await startServer(path.join(tmp, 'evidence'), { FAKE_WORKER_NO_GPU: '0' }, ['--token', 'tok-' + process.pid, '--rate-limit', '0']);
  const p = await openPage(url);
  await p.waitForFunction((sel) => { const b = document.querySelector(sel).shadowRoot.querySelector('button'); return b && !b.disabled; }, W);
  assert.equal(await p.locator(`${W} .why`).innerText(), '');
  const accepted = p.waitForResponse((r) => r.url().endsWith('/measure'));
  // How the widget follows the job: its event stream, or GET ?wait= long polls; never a timer.
  const follows = [];
  p.on('request', (q) => { if (/\/jobs\//.test(q.url())) follows.push({ url: q.url(), accept: q.headers().accept || '' }); });
  await p.locator(`${W} button`, { hasText: 'Measure now' }).click();
  const a = await accepted;
  assert.equal(a.status(), 202, 'no token needed for the lesson suite');
  await p.waitForFunction((sel) => /^Done:/.test(document.querySelector(sel).shadowRoot.querySelector('.msg').textContent), W, { timeout: 60000 });
  assert.ok(follows.length > 0, 'the widget followed the job');
  assert.ok(follows.every((f) => f.accept.includes('text/event-stream') || /[?&]wait=\d+/.test(f.url)),
    `every follow is the event stream or a long poll: ${JSON.stringify(follows)}`);
  const fresh = (await (await fetch(`${url}/jobs/${(await a.json()).id}`)).json()).document;
  const rows = p.locator(`${W} .tables table`).first().locator('tbody tr[data-row]');
  const t = fresh.tables[0];
  assert.equal(await rows.count(), t.rows.length);
  for (const [i, r] of t.rows.entries()) {
    assert.equal(await rows.nth(i).locator('td[data-k="ratio"] .v').innerText(), ratioWant(t, i).point, `fresh row ${i} ratio`);
  }
  assert.match(await p.locator(`${W} .prov`).first().innerText(), /^Measured just now on /);
  assert.equal(await p.locator(`${W} ul.since li`).count(), 0, 'a measurement made now is compared with no night');
  assert.ok(fresh.warnings.length > 0, 'the fake worker warns');
  assert.ok((await p.locator(`${W} .warn`).innerText()).includes(fresh.warnings[0]), 'the warning is on the page');
  // The same request again after a while: the cache answers, and says how old it is.
  await new Promise((ok) => setTimeout(ok, 6000));
  const again = p.waitForResponse((r) => r.url().endsWith('/measure'));
  await p.locator(`${W} button`, { hasText: 'Measure now' }).click();
  const c = await again;
  assert.equal(c.status(), 200);
  assert.equal((await c.json()).cached, true);
  await p.waitForFunction((sel) => /^Done:/.test(document.querySelector(sel).shadowRoot.querySelector('.msg').textContent), W);
  assert.match(await p.locator(`${W} .prov`).first().innerText(), /^Measured \d+ s ago \(a cached result of the same request\) on /);
  assert.match(await shadowText(p, W, '.msg'), /from its cache \(measured \d+ s ago\)/);
  await shots(p, 'token-measured');
  await closePage(p);
  assert.deepEqual(pageErrors, [], 'no uncaught errors in the pages');
  console.log(`screenshots in ${outDir}`);
});

test('evidence of three GPU models in one store: a selector and the side-by-side view with each GPU\'s provenance', async () => {
  // Two servers of two (fake) GPU models share one evidence directory that
  // also holds the H200 capture; each refreshes its own GPU's suites. The
  // documents of the fake GPUs say "fake worker: no GPU was used".
  const dir = path.join(tmp, 'shared-evidence');
  fs.cpSync(evidenceSrc, dir, { recursive: true });
  const urls = [];
  for (const name of ['Fake GPU A', 'Fake GPU B']) {
    const url = await startServer(dir, { FAKE_WORKER_NO_GPU: '0', FAKE_WORKER_GPU_NAME: name }, ['--rate-limit', '0']);
    for (let n = 0; n < 100 && (await fetch(url + '/readyz')).status !== 200; n++) await new Promise((ok) => setTimeout(ok, 100));
    const r = await (await fetch(url + '/evidence/refresh', { method: 'POST', headers: { 'Content-Type': 'application/json' } })).json();
    let st;
    for (let n = 0; n < 100; n++) {
      st = await (await fetch(`${url}/evidence/refresh/${r.id}`)).json();
      if (st.state === 'done') break;
      await new Promise((ok) => setTimeout(ok, 100));
    }
    assert.equal(st.failed, 0, JSON.stringify(st));
    urls.push(url);
  }
  // A server sees a peer's writes within a second or so (the store rechecks).
  let index;
  for (let n = 0; n < 50; n++) {
    index = await (await fetch(urls[0] + '/evidence/latest')).json();
    if (index.gpus.length >= 3) break;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  const slugs = index.gpus.map((g) => g.gpu).sort();
  assert.deepEqual(slugs, ['fake-gpu-a', 'fake-gpu-b', 'nvidia-h200'], 'the store keeps three GPU models apart');
  const recs = {};
  for (const g of index.gpus) recs[g.gpu] = await (await fetch(`${urls[0]}/evidence/${g.gpu}/latest/${SUITE}`)).json();
  const p = await openPage(urls[0]);
  const cmp = p.locator(`${W} table.cmp`);
  await cmp.first().waitFor({ timeout: 15000 });
  const heads = await cmp.first().locator('thead th').allInnerTexts();
  assert.deepEqual(heads, ['Predicate', 'Predicted ratio', ...index.gpus.map((g) => `Ratio on ${g.name}`)]);
  const rows = cmp.first().locator('tbody tr');
  const base = recs[index.gpus[0].gpu].document.tables[0];
  assert.equal(await rows.count(), base.rows.length);
  for (const [i, r] of base.rows.entries()) {
    const want = [fx(r.predicted_ratio, 2), ...index.gpus.map((g) => fx(recs[g.gpu].document.tables[0].rows.find((x) => x.name === r.name)?.ratio, 2))];
    assert.deepEqual(await rows.nth(i).locator('td .v').allInnerTexts(), want, `row ${r.name}`);
  }
  const h200 = index.gpus.findIndex((g) => g.gpu === 'nvidia-h200');
  assert.equal(await cmp.first().locator('tbody tr').first().locator('td .v').nth(1 + h200).innerText(), fx(doc.tables[0].rows[0].ratio, 2), 'the H200 column is the capture');
  const provs = await p.locator(`${W} .provs li`).allInnerTexts();
  assert.equal(provs.length, 3);
  for (const [k, g] of index.gpus.entries()) assert.ok(provs[k].startsWith(`Measured on ${g.name} \u00b7`), provs[k]);
  const chart = p.locator(`${W} section.cmp svg[role=img]`).first();
  assert.equal(await chart.locator('g.pair').count(), base.rows.length);
  assert.equal(await chart.locator('g.pair rect.g2').count(), base.rows.length, 'a bar of the third GPU per row');
  // The selector switches the main view between the GPUs: this server's is first shown.
  const sel = p.locator(`${W} .picker select`);
  assert.deepEqual(await sel.locator('option').allInnerTexts(), index.gpus.map((g) => g.name));
  assert.equal(await sel.inputValue(), 'fake-gpu-a');
  await sel.selectOption('nvidia-h200');
  await p.waitForFunction(([w, n]) => document.querySelector(w).shadowRoot.querySelector('.prov').textContent.includes(n), [W, doc.device.name]);
  await assertTablesMatchFixture(p);
  assert.equal(await p.locator(`${W} .why`).innerText(), "Measure now runs on this server's GPU (Fake GPU A), not on the one shown.");
  await sel.selectOption('fake-gpu-b');
  await p.waitForFunction((w) => /fake worker/.test(document.querySelector(w).shadowRoot.querySelector('.warn').textContent), W);
  await sel.selectOption('fake-gpu-a');
  await p.waitForFunction((w) => document.querySelector(w).shadowRoot.querySelector('.why').textContent === '', W);
  await sel.selectOption('nvidia-h200');
  await p.waitForFunction(([w, n]) => document.querySelector(w).shadowRoot.querySelector('.prov').textContent.includes(n), [W, doc.device.name]);
  await p.evaluate((sel) => document.querySelector(sel).shadowRoot.querySelector('.cmp').scrollIntoView(), W);
  await shots(p, 'multi-gpu');
  await p.setViewportSize({ width: 375, height: 812 });
  await p.evaluate((sel) => document.querySelector(sel).shadowRoot.querySelector('.cmp').scrollIntoView(), W);
  await p.screenshot({ path: path.join(outDir, 'multi-gpu-phone-compare.png') });
  await closePage(p);
  assert.deepEqual(pageErrors, [], 'no uncaught errors in the pages');
});

test('a page opened while the GPU worker is still starting takes its verdict once it is up', async () => {
  // The worker says hello when the test creates its gate file (not after a
  // delay the page's load could outlast on a loaded machine); until then
  // /device says present false with worker state starting, which is no
  // verdict on the GPU: the page must not say "no GPU" for good, and must
  // hear the real answer (a GPU, or none) once the worker is up.
  const ready = async (url) => {
    for (let n = 0; n < 100; n++) {
      if ((await (await fetch(url + '/device')).json()).worker.state === 'ready') return;
      await new Promise((ok) => setTimeout(ok, 100));
    }
    assert.fail('the fake worker never said hello');
  };
  const why = (p) => p.evaluate((sel) => document.querySelector(sel).shadowRoot.querySelector('.why').textContent, W);
  for (const noGpu of ['0', '1']) {
    const gate = path.join(tmp, `hello-gate-${noGpu}`);
    const url = await startServer(path.join(tmp, 'evidence'), { FAKE_WORKER_NO_GPU: noGpu, FAKE_WORKER_HELLO_GATE: gate }, ['--rate-limit', '0']);
    const p = await openPage(url);
    assert.equal((await (await fetch(url + '/device')).json()).worker.state, 'starting', 'the page opened before the hello');
    assert.equal(await why(p), '', 'no verdict while the worker starts');
    fs.writeFileSync(gate, '');
    await ready(url);
    if (noGpu === '0') {
      await p.waitForFunction((sel) => { const b = document.querySelector(sel).shadowRoot.querySelector('button'); return b && !b.disabled; }, W, { timeout: 5000 });
      assert.equal(await why(p), '');
    } else {
      await p.waitForFunction((sel) => /^Measuring is off: this server has no NVIDIA GPU \(.*fake worker: no CUDA device/.test(
        document.querySelector(sel).shadowRoot.querySelector('.why').textContent), W, { timeout: 5000 });
      assert.equal(await p.locator(`${W} button`, { hasText: 'Measure now' }).isDisabled(), true);
    }
    await closePage(p);
  }
});

test('a crashed job, a server without a GPU and a token the page lacks are said in plain words', async () => {
  const say = (p, sel) => p.evaluate((s) => document.querySelector(s).shadowRoot.querySelector('.msg').textContent, sel);
  // A job the fake worker crashes on (iterations 2222): the job's own reason.
  const url = await startServer(path.join(tmp, 'evidence'), { FAKE_WORKER_NO_GPU: '0' }, ['--rate-limit', '0']);
  const p = await openPage(url);
  await p.waitForFunction((sel) => { const b = document.querySelector(sel).shadowRoot.querySelector('button'); return b && !b.disabled; }, W);
  const accepted = p.waitForResponse((r) => r.url().endsWith('/measure'));
  await p.evaluate((sel) => document.querySelector(sel).run(async () => ({ part: 1, iterations: 2222, budget_ms: 100 }), 'Asking\u2026', () => {}), W);
  const id = (await (await accepted).json()).id;
  await p.waitForFunction((sel) => /^The measurement failed: /.test(document.querySelector(sel).shadowRoot.querySelector('.msg').textContent), W, { timeout: 30000 });
  const job = await (await fetch(`${url}/jobs/${id}`)).json();
  assert.equal(job.state, 'failed');
  assert.equal(await say(p, W), `The measurement failed: ${job.error.reason}. The table still shows the last good numbers.`);
  await closePage(p);
  // No GPU (the demo server): 503, with CUDA's words in plain ones.
  await page.evaluate((sel) => document.querySelector(sel).measure({}), W);
  assert.match(await say(page, W), /^Measuring is not available right now: this server has no NVIDIA GPU \(.*fake worker: no CUDA device .* The table still shows the last good numbers\.$/);
  // A token guards every measurement: 401.
  const tok = await startServer(path.join(tmp, 'evidence'), { FAKE_WORKER_NO_GPU: '0' }, ['--token', 'tok-' + process.pid, '--open-measure-cost', '0']);
  const q = await openPage(tok);
  await q.evaluate((sel) => document.querySelector(sel).measure({}), W);
  assert.equal(await say(q, W), 'This measurement needs an access token on this server, which a page cannot send. The table still shows the last good numbers.');
  await closePage(q);
});

test('as the reader types, the block\'s lane map from the analysis: a row per warp, split warps marked, in words too', async () => {
  // The demo server: no GPU. Each case types a predicate and a block shape.
  const p = await openPage(base);
  const input = p.getByLabel(/^Predicate/).first();
  const map = `${W} .out figure.lanes`;
  for (const c of lanesFixture) {
    const [bx, by] = Array.isArray(c.threads_per_block) ? c.threads_per_block : [c.threads_per_block, 1];
    await p.getByLabel('Block width (blockDim.x)').fill(String(bx));
    await p.getByLabel('Block height (blockDim.y)').fill(String(by));
    const res = p.waitForResponse((r) => r.url().endsWith('/analyze') && r.request().postDataJSON().predicates[0] === c.predicate &&
      JSON.stringify(r.request().postDataJSON().threads_per_block) === JSON.stringify(c.threads_per_block));
    await input.fill(c.predicate);
    const answer = await res;
    assert.equal(answer.status(), 200, c.predicate);
    // The server's map of the reader's row is the fixture's: the server and
    // the widget agree on which lane takes which path.
    const row = (await answer.json()).tables[0].rows.find((r) => r.name === c.predicate);
    assert.ok(row, `${c.predicate}: the reader's row`);
    assert.deepEqual(row.lanes_block0, c.lanes_block0, `${c.predicate} in a block of ${JSON.stringify(c.threads_per_block)}: the server's lanes`);
    await p.waitForFunction(([s, n]) => { const f = document.querySelector(s).shadowRoot.querySelector('.out figure.lanes'); return f && f.querySelectorAll('g.warp').length === n; },
      [W, c.lanes_block0.length]);
    // One row per warp, 32 cells, each the path its lane takes.
    const warps = await p.locator(`${map} g.warp`).evaluateAll((gs) => gs.map((g) => ({
      paths: [...g.querySelectorAll('rect')].map((r) => r.dataset.path).join(''),
      classes: [...g.querySelectorAll('rect')].map((r) => r.getAttribute('class')).join(' '),
      split: g.dataset.split === 'true', marked: g.textContent.includes('split'),
    })));
    assert.deepEqual(warps.map((w) => w.paths), c.lanes_block0, `${c.predicate}: the lanes, warp by warp`);
    for (const [k, w] of warps.entries()) {
      assert.equal(w.classes, [...c.lanes_block0[k]].map((ch) => ({ A: 'la', B: 'lb', '-': 'ln' })[ch]).join(' '), `${c.predicate}: warp ${k}'s cells drawn by path`);
    }
    assert.deepEqual(warps.flatMap((w, k) => (w.split ? [k] : [])), c.split_warps, `${c.predicate}: the split warps`);
    assert.deepEqual(warps.flatMap((w, k) => (w.marked ? [k] : [])), c.split_warps, `${c.predicate}: the split warps are marked`);
    // Path A, path B and a missing lane look different (the chart's colours; B hatched).
    const fills = await p.locator(`${map} svg`).evaluate((svg) => Object.fromEntries(['la', 'lb', 'ln'].map((k) => {
      const r = svg.querySelector(`rect.${k}`);
      return [k, r ? `${getComputedStyle(r).fill} ${getComputedStyle(r).stroke}` : null];
    })));
    const used = new Set([...c.lanes_block0.join('')].map((ch) => ({ A: 'la', B: 'lb', '-': 'ln' })[ch]));
    const seen = [...used].map((k) => fills[k]);
    assert.equal(new Set(seen).size, seen.length, `each path drawn its own way: ${JSON.stringify(fills)}`);
    // The text alternative: the SVG's description and the details list.
    const desc = await p.locator(`${map} svg desc`).textContent();
    assert.equal(desc, c.words, `${c.predicate}: the map in words`);
    assert.equal((await p.locator(`${map} details li`).allTextContents()).join('; ') + '.', c.words);
    const named = await p.locator(`${map} svg`).evaluate((s) => s.getAttribute('aria-labelledby').split(' ').map((id) => s.getRootNode().getElementById(id)?.tagName));
    assert.deepEqual(named, ['title', 'desc']);
    assert.match(await p.locator(`${map} figcaption`).innerText(), new RegExp(`^Block 0, lane by lane: ${c.split_warps.length} of ${c.lanes_block0.length} warps? split\\.`));
    if (c.predicate === 'threadIdx.x < 16') {
      // Beside the numbers at 1280 px, under them at phone width, inside the screen at both.
      const dl = await p.locator(`${W} .out dl`).boundingBox(), fig = await p.locator(map).boundingBox();
      assert.ok(fig.x > dl.x + 100 && fig.y < dl.y + dl.height, `beside the numbers: ${JSON.stringify([dl, fig])}`);
      await shotsLD(p, 'lane-map', `${W} fieldset.try`);
      await p.setViewportSize({ width: PHONE, height: 844 });
      await p.waitForTimeout(100);
      const dl2 = await p.locator(`${W} .out dl`).boundingBox(), fig2 = await p.locator(map).boundingBox();
      assert.ok(fig2.y >= dl2.y + dl2.height - 1, `under the numbers at ${PHONE} px: ${JSON.stringify([dl2, fig2])}`);
      assert.deepEqual(await overflowIn(p, map), [], `the map fits at ${PHONE} px`);
      await p.setViewportSize({ width: 1280, height: 900 });
    }
    if (c.predicate === 'threadIdx.x < 40') await shotsLD(p, 'lane-map-partial', `${W} fieldset.try`);
  }
  await closePage(p);
});

test('the tried predicate and block shape are in the page\'s URL, and a link to it reproduces them', async () => {
  const p = await openPage(base);
  const input = p.getByLabel(/^Predicate/).first();
  const expr = '(threadIdx.y & 1) == 0';
  const entries = await p.evaluate(() => history.length);
  await p.getByLabel('Block width (blockDim.x)').fill('32');
  await p.getByLabel('Block height (blockDim.y)').fill('8');
  await input.fill(expr);
  await p.waitForFunction((want) => new URL(location.href).searchParams.get('try') === want, expr);
  const url = new URL(p.url());
  assert.equal(url.searchParams.get('block'), '32x8');
  assert.equal(await p.evaluate(() => history.length), entries, 'no history entry per keystroke (replaceState)');
  assert.equal(await p.locator(`${W} .perma a`).getAttribute('href'), p.url(), 'the link on the page is the URL');
  await p.locator(`${W} .out dl`).waitFor();
  const analysed = await p.locator(`${W} .out dl`).innerText();
  await shotsLD(p, 'permalink', `${W} fieldset.try`);
  // A new page from the link: the same predicate, block shape and analysis, at once.
  const asked = [];
  const q = await openPage(base, W, { at: url.pathname + url.search, setup: (x) => x.on('request', (r) => { if (r.url().endsWith('/analyze')) asked.push(r.postDataJSON()); }) });
  assert.equal(await q.getByLabel(/^Predicate/).first().inputValue(), expr);
  assert.equal(await q.getByLabel('Block width (blockDim.x)').inputValue(), '32');
  assert.equal(await q.getByLabel('Block height (blockDim.y)').inputValue(), '8');
  await q.waitForFunction((s) => /Threads on path A/.test(document.querySelector(s).shadowRoot.querySelector('.out').textContent), W);
  assert.equal(await q.locator(`${W} .out dl`).innerText(), analysed, 'the same analysis');
  assert.match(analysed, /Warps split per block\s+0 of 8/);
  assert.deepEqual(asked[0].predicates[0], expr);
  assert.deepEqual(asked[0].threads_per_block, [32, 8]);
  // Clearing the predicate takes it out of the URL.
  await q.getByLabel(/^Predicate/).first().fill('');
  await q.waitForFunction(() => !new URL(location.href).searchParams.has('try') && !new URL(location.href).searchParams.has('block'));
  await closePage(q);
  // A widget with an id keeps its own keys, so two try boxes on a page keep apart.
  const r = await openPage(base, W, { at: '/?second.try=lane%20%3C%208&second.block=64' });
  await r.evaluate(() => {
    const w = document.createElement('divergence-widget');
    w.id = 'second';
    w.setAttribute('suite', 'day22-exercise');
    document.querySelector('main').append(w);
  });
  const second = 'divergence-widget#second';
  await r.waitForFunction((s) => document.querySelector(s).getAttribute('state') !== 'loading', second);
  assert.equal(await r.locator(`${second} input[type=text]`).inputValue(), 'lane < 8');
  assert.equal(await r.locator(`${second} input[type=number]`).first().inputValue(), '64');
  assert.equal(await r.locator(`${W} input[type=text]`).inputValue(), '', 'the first widget has no predicate in the URL');
  await closePage(r);
  await closePage(p);
});

// A page of another origin (another port) that embeds the widget, as a
// course site would: its modules and stylesheet copied onto the site
// (module=site, the default), or loaded from the server (module=server,
// which needs the server to allow the site's origin). The element holds
// the text a reader sees when the widget never runs. {origin, close()}.
const FALLBACK = 'The lesson\'s measurements load from the course server. If this text stays, the widget could not load from there.';
async function courseSite() {
  const site = http.createServer((q, r) => {
    const u = new URL(q.url, 'http://x');
    const f = /^\/((?:widget\/)?[a-z-]+\.(js|css))$/.exec(u.pathname);
    if (f) {
      r.setHeader('Content-Type', f[2] === 'js' ? 'text/javascript' : 'text/css');
      r.end(fs.readFileSync(path.join(staticDir, f[1])));
      return;
    }
    const server = u.searchParams.get('server'), src = u.searchParams.get('module') === 'server' ? `${server}/static/divergence-widget.js` : '/divergence-widget.js';
    r.setHeader('Content-Type', 'text/html; charset=utf-8');
    r.end(`<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">` +
      `<title>Course page</title><body style="font:17px/1.5 system-ui;margin:1rem"><h1>A course page</h1>` +
      `<divergence-widget server="${server}" suite="${SUITE}">${FALLBACK}</divergence-widget><script type="module" src="${src}"></script>`);
  });
  await new Promise((ok) => site.listen(0, '127.0.0.1', ok));
  return { origin: `http://127.0.0.1:${site.address().port}`, close: () => site.close() };
}

test('embedded on another origin: a CORS refusal is named with the flag that fixes it, a server that is down is not', async () => {
  const { origin, close } = await courseSite();
  try {
    const why = (p) => p.evaluate((s) => document.querySelector(s).shadowRoot.querySelector('.why').textContent, W);
    // Refused: the demo server allows no other origin.
    const p = await openPage(origin, W, { at: `/?server=${encodeURIComponent(base)}` });
    await p.waitForFunction((s) => document.querySelector(s).shadowRoot.querySelector('.why').textContent.length > 0, W);
    const flag = `divergence serve --cors-origin ${origin}`;
    const prov = await p.locator(`${W} .prov`).innerText();
    assert.match(prov, /CORS/, prov);
    assert.ok(prov.includes(flag), `the flag that fixes it: ${prov}`);
    assert.doesNotMatch(prov, /could not be reached/);
    assert.ok((await why(p)).startsWith('Measuring is off: ') && (await why(p)).includes(flag), await why(p));
    assert.equal(await p.locator(`${W} button`, { hasText: 'Measure now' }).isDisabled(), true);
    assert.equal(await p.locator(`${W} button`, { hasText: 'Measure this' }).isDisabled(), true);
    await p.getByLabel(/^Predicate/).first().fill('lane < 8');
    await p.waitForFunction((s) => /CORS/.test(document.querySelector(s).shadowRoot.querySelector('.out').textContent), W);
    assert.equal(await p.locator(`${W} .out`).innerText(), `Could not check the predicate: the server does not let this page\u2019s origin read its answers (a CORS refusal; ${flag} allows it).`);
    await shotsLD(p, 'cors-refused', null);
    await closePage(p);
    // Allowed with that flag: the same page works.
    const allowed = await startServer(path.join(tmp, 'evidence'), { FAKE_WORKER_NO_GPU: '0' }, ['--cors-origin', origin, '--rate-limit', '0']);
    const q = await openPage(origin, W, { at: `/?server=${encodeURIComponent(allowed)}` });
    await q.locator(`${W} tbody tr`).first().waitFor();
    await q.waitForFunction((s) => { const b = document.querySelector(s).shadowRoot.querySelector('button'); return b && !b.disabled; }, W);
    assert.equal(await why(q), '');
    await q.getByLabel(/^Predicate/).first().fill('lane < 8');
    await q.locator(`${W} .out dl`).waitFor();
    assert.doesNotMatch(await q.locator(W).innerText(), /CORS/);
    assert.doesNotMatch(await q.locator(W).innerText(), /course server/, 'the element\'s own text is not shown once the widget runs');
    await closePage(q);
    // Down: nothing listens there. Not a CORS refusal.
    const port = await new Promise((ok) => { const s = net.createServer().listen(0, '127.0.0.1', () => { const n = s.address().port; s.close(() => ok(n)); }); });
    const d = await openPage(origin, W, { at: `/?server=${encodeURIComponent(`http://127.0.0.1:${port}`)}` });
    const down = await d.locator(`${W} .prov`).innerText();
    assert.match(down, new RegExp(`could not be reached`), down);
    assert.doesNotMatch(down, /CORS|--cors-origin/);
    await closePage(d);
  } finally {
    close();
  }
});

test('the widget\'s modules load from the server onto another origin\'s page only where the server allows that origin; elsewhere the element\'s own text stays', async () => {
  const { origin, close } = await courseSite();
  try {
    // Allowed: modules are fetched with CORS, and the server answers them for an allowed origin.
    const allowed = await startServer(path.join(tmp, 'evidence'), { FAKE_WORKER_NO_GPU: '0' }, ['--cors-origin', origin, '--rate-limit', '0']);
    const fromServer = await openPage(origin, W, { at: `/?server=${encodeURIComponent(allowed)}&module=server` });
    assert.equal(await fromServer.locator(W).getAttribute('state'), 'shown');
    await fromServer.locator(`${W} tbody tr[data-row]`).first().waitFor();
    assert.doesNotMatch(await fromServer.locator(W).innerText(), /course server/);
    await closePage(fromServer);
    // Not allowed (the demo server): the module is refused, the widget never runs.
    const notAllowed = await ctx.newPage();
    const failed = [];
    notAllowed.on('requestfailed', (x) => failed.push(x.url()));
    await notAllowed.goto(`${origin}/?server=${encodeURIComponent(base)}&module=server`);
    await notAllowed.waitForLoadState('networkidle');
    assert.ok(failed.some((x) => x.endsWith('/static/divergence-widget.js')), `the module was refused: ${failed}`);
    assert.equal(await notAllowed.evaluate(() => customElements.get('divergence-widget') === undefined), true, 'the widget never ran');
    assert.equal(await notAllowed.locator('divergence-widget').innerText(), FALLBACK);
    await closePage(notAllowed);
  } finally {
    close();
  }
});

test('Part 2 read both ways: both readings with their sentences in the table and the chart', async () => {
  const p = await openPage(base, W2, {
    setup: (q) => q.route('**/evidence/latest/day22-part2', async (route) => {
      const res = await passOn(route);
      const body = await res.json();
      if (res.status() === 200) readingsStandIn(body);
      await route.fulfill({ response: res, json: body });
    }),
  });
  const got = await (await fetch(`${base}/evidence/latest/day22-part2`)).json();
  readingsStandIn(got); // the same document as the page's (a no-op once the server sends readings)
  const t = got.document.tables.find((x) => Array.isArray(x.readings));
  assert.ok(t, 'a table with readings');
  assert.deepEqual(t.readings.map((g) => g.kind).sort(), ['question', 'split']);
  const ti = got.document.tables.indexOf(t);
  const table = p.locator(`${W2} .tables table`).nth(ti);
  const label = (n) => t.rows.find((r) => r.name === n).label;
  assert.match(await table.locator('tbody.readings th[scope=rowgroup]').innerText(), /^Read both ways/);
  for (const g of t.readings) {
    const tr = table.locator(`tbody.readings tr[data-reading="${g.kind}"]`);
    assert.equal(await tr.locator('th').innerText(), `${label(g.row)} against ${label(g.against)}`);
    assert.equal(await tr.locator('td[data-k="sentence"]').innerText(), g.sentence);
    assert.equal(await tr.locator('td[data-k="ratio"] .v').innerText(), fx(g.ratio, 2), `${g.kind}: measured`);
    assert.equal(await tr.locator('td[data-k="predicted"] .v').innerText(), fx(g.predicted, 2), `${g.kind}: predicted`);
    const bars = p.locator(`${W2} .tables figure.chart > svg[role=img]`).nth(ti).locator(`g.reading[data-reading="${g.kind}"]`);
    const text = await bars.textContent();
    assert.ok(text.includes(label(g.row)) && text.includes(`against ${label(g.against)}`), text);
    assert.ok(text.includes(`${fx(g.ratio, 2)}\u00d7 measured`) && text.includes(`${fx(g.predicted, 2)}\u00d7 predicted`), text);
    assert.equal(await bars.locator('rect.bm').count(), 1);
    assert.equal(await bars.locator('rect.bp').count(), 1);
    const desc = await p.locator(`${W2} .tables figure.chart > svg[role=img]`).nth(ti).locator('desc').textContent();
    assert.ok(desc.includes(`${label(g.row)} against ${label(g.against)}: measured ${fx(g.ratio, 2)}x, predicted ${fx(g.predicted, 2)}x`), desc);
  }
  // The table's columns still line up: a reading row spans the table's columns.
  const spans = await table.locator('tbody.readings tr[data-reading]').first().evaluate((tr) => [...tr.children].reduce((n, c) => n + (c.colSpan || 1), 0));
  assert.equal(spans, await table.locator('thead th').count());
  await p.evaluate((s) => document.querySelector(s).scrollIntoView(), W2);
  await shotsLD(p, 'part2-readings', W2);
  await p.setViewportSize({ width: PHONE, height: 844 });
  assert.deepEqual(await overflowIn(p, `${W2} .tables`), [], `the readings fit at ${PHONE} px`);
  await p.setViewportSize({ width: 1280, height: 900 });
  await closePage(p);
});

// The visible text of what `loc` selects (screen-reader-only parts left
// out) and what a screen reader hears (aria-hidden parts left out).
// A cell's history sparkline (mountNights()) is its own figure, checked in
// nights.test.mjs: left out here.
const seenAndSaid = (loc) => loc.evaluate((e) => {
  const strip = (sel) => { const k = e.cloneNode(true); k.querySelectorAll(`${sel}, .spark`).forEach((x) => x.remove()); return k.textContent; };
  return { seen: strip('.sr'), said: strip('[aria-hidden="true"]') };
});

// A chart's bars and whiskers per row: the measured bar's left end and
// width, the whisker's ends and the measured label's x, in the SVG's units.
const whiskersOf = (svgLoc) => svgLoc.evaluate((s) => [...s.querySelectorAll('g.pair')].map((g) => {
  const bm = g.querySelector('rect.bm'), wh = g.querySelector('g.wh');
  const num = (el, a) => (el ? Number(el.getAttribute(a)) : null);
  const label = [...g.querySelectorAll('text')].find((t) => /measured$/.test(t.textContent));
  return { row: Number(g.dataset.row), x0: num(bm, 'x'), w: num(bm, 'width'), lo: num(wh && wh.querySelector('.wlo'), 'x1'),
    hi: num(wh && wh.querySelector('.whi'), 'x1'), line: wh ? [num(wh.querySelector('.wl'), 'x1'), num(wh.querySelector('.wl'), 'x2')] : null,
    labelX: label ? Number(label.getAttribute('x')) : null, labelRight: label ? label.getBBox().x + label.getBBox().width : null, W: s.viewBox.baseVal.width };
}));

// Each row's whisker against the chart's scale: the measured bar's width is
// the ratio's (from its left end), so each end of the whisker lies at lo /
// ratio and hi / ratio of it; none on the baseline row or a row without an
// interval; the label after the whisker, inside the chart.
function assertWhiskers(t, got) {
  for (const [i, r] of t.rows.entries()) {
    const w = got.find((x) => x.row === i), want = ratioWant(t, i);
    if (!want.ci) { assert.equal(w.lo, null, `${t.id} row ${i} (${r.name}): no whisker`); continue; }
    const at = (v) => w.x0 + w.w * v / r.ratio;
    assert.ok(Math.abs(w.lo - at(r.ratio_ci.lo)) < 1e-3, `${t.id} row ${i}: whisker's low end ${w.lo} vs ${at(r.ratio_ci.lo)}`);
    assert.ok(Math.abs(w.hi - at(r.ratio_ci.hi)) < 1e-3, `${t.id} row ${i}: whisker's high end ${w.hi} vs ${at(r.ratio_ci.hi)}`);
    assert.deepEqual(w.line, [w.lo, w.hi], `${t.id} row ${i}: the whisker's line joins its ends`);
    assert.ok(w.lo <= w.x0 + w.w + 1e-6 && w.x0 + w.w <= w.hi + 1e-6, `${t.id} row ${i}: the bar's end lies inside its interval`);
    assert.ok(w.labelX > w.hi, `${t.id} row ${i}: the value is written after the whisker`);
    assert.ok(w.labelRight <= w.W + 0.5, `${t.id} row ${i}: the value stays inside the chart`);
  }
}

// Each row's ratio cell against ratioWant: the number, the interval under
// it, the interval in words for screen readers.
async function assertIntervals(p, sel, d) {
  const tables = p.locator(`${sel} .tables table`);
  for (const [ti, t] of d.tables.entries()) {
    for (const [i, r] of t.rows.entries()) {
      const td = tables.nth(ti).locator(`tbody:not(.readings) tr[data-row="${i}"] td[data-k="ratio"]`);
      const want = ratioWant(t, i);
      assert.equal(await td.locator('.v').innerText(), want.point, `${t.id} row ${i} (${r.name}): ratio`);
      const { seen, said } = await seenAndSaid(td);
      if (want.ci) {
        assert.equal(seen, `Ratio${want.point}${want.ci}`, `${t.id} row ${i} (${r.name}): the interval shown`);
        assert.equal(said, `${want.point}, ${want.said}`, `${t.id} row ${i} (${r.name}): the interval in words`);
      } else {
        assert.equal(seen, `Ratio${want.point}${want.byDefinition ? 'by definition' : ''}`, `${t.id} row ${i} (${r.name}): no interval`);
      }
    }
  }
}

test('each ratio with its 95% interval, to the transcript\'s decimals, and its whisker to scale in the chart', async () => {
  // The committed H200 capture: every measured row has ratio_ci.
  for (const t of doc.tables) for (const [i, r] of t.rows.entries()) if (i !== t.baseline_row) assert.ok(r.ratio_ci && typeof r.ratio_ci.lo === 'number', `${t.id} ${r.name} has ratio_ci`);
  await assertIntervals(page, W, doc);
  // The same strings as the transcript the CLI wrote for the same night.
  const txt = fs.readFileSync(latestEvidence(evidenceSrc, SUITE).replace(/\.json$/, '.txt'), 'utf8').split('\n');
  const t0 = doc.tables[0];
  for (const [i, r] of t0.rows.entries()) {
    if (i === t0.baseline_row) continue;
    const line = txt.find((l) => l.startsWith(r.label + ' '));
    const m = line && line.match(/(\d+\.\d+) (\[\d+\.\d+, \d+\.\d+\])/);
    assert.ok(m, `the transcript's row of ${r.label}: ${line}`);
    const tr = page.locator(`${W} .tables table`).first().locator(`tbody tr[data-row="${i}"] td[data-k="ratio"]`);
    assert.equal(`${await tr.locator('.v').innerText()} ${await tr.locator('.ci').innerText()}`, `${m[1]} ${m[2]}`, `${r.label}: widget and transcript`);
  }
  // The charts: a whisker per measured row, to scale; named in the legend and the caption; said in the description.
  const charts = page.locator(`${W} .tables figure.chart > svg[role=img]`);
  for (const [ti, t] of doc.tables.entries()) {
    assertWhiskers(t, await whiskersOf(charts.nth(ti)));
    assert.equal(await charts.nth(ti).locator('g.legend text', { hasText: '95% interval' }).count(), 1, 'the legend names the whisker');
    const i = t.rows.findIndex((_, k) => k !== t.baseline_row);
    assert.ok((await charts.nth(ti).locator('desc').textContent()).includes(`${t.rows[i].label}: measured ${ratioWant(t, i).point}x (${ratioWant(t, i).said})`));
  }
  assert.match(await page.locator(`${W} .tables figure figcaption`).first().innerText(), /whisker across a solid bar.s end is its 95% interval, drawn to scale/);
  const cut = await page.locator(`${W} .tables figure.chart > svg[role=img]`).evaluateAll((svgs) => svgs.flatMap((s) => [...s.querySelectorAll('text')]
    .filter((x) => { const b = x.getBBox(); return b.x + b.width > s.viewBox.baseVal.width + 0.5; }).map((x) => x.textContent)));
  assert.deepEqual(cut, [], 'chart text that runs past the chart\'s edge');
  await shotsLD(page, 'intervals-table', `${W} .tables .scroll`);
  await shotsLD(page, 'intervals-chart', `${W} .tables figure`);

  // Edited in through the route: the 4-decimal case, an interval narrower
  // than 0.001 that 3 decimals still tell from a point, a wide interval (a
  // whisker one can see) and a row from before intervals.
  const narrow = (body, suite) => {
    if (suite !== SUITE) return;
    const rows = body.document.tables[0].rows, by = (n) => rows.find((r) => r.name === n);
    Object.assign(by('lane-parity'), { ratio: 1.9512, ratio_ci: { lo: 1.95104, hi: 1.95136 } });
    Object.assign(by('lane-half'), { ratio: 1.95152, ratio_ci: { lo: 1.95146, hi: 1.95158 } });
    by('block-parity').ratio_ci = { lo: 0.82, hi: 1.12 };
    if (by('first-16')) by('first-16').ratio_ci = null;
    rows.push({ ...structuredClone(by('lane-half')), name: 'old', label: 'a row from before intervals', ratio_ci: null, instructions: null });
    delete rows.at(-1).ratio_ci;
  };
  const p = await openPage(base, W, { setup: (q) => editEvidence(q, [SUITE], narrow) });
  const d = await evidenceDoc(SUITE, narrow);
  const t = d.tables[0], by = (n) => t.rows.findIndex((r) => r.name === n);
  assert.deepEqual(ratioWant(t, by('lane-parity')), { point: '1.9512', ci: '[1.9510, 1.9514]', said: '95% interval 1.9510 to 1.9514' });
  assert.deepEqual(ratioWant(t, by('lane-half')), { point: '1.952', ci: '[1.951, 1.952]', said: '95% interval 1.951 to 1.952' });
  assert.equal(ratioWant(t, by('old')).ci, null);
  await assertIntervals(p, W, d);
  const ws = await whiskersOf(p.locator(`${W} .tables figure.chart > svg[role=img]`).first());
  assertWhiskers(t, ws);
  const wide = ws.find((w) => w.row === by('block-parity'));
  assert.ok(wide.hi - wide.lo > 20, `a wide interval draws a wide whisker: ${JSON.stringify(wide)}`);
  await shotsLD(p, 'intervals-edited-chart', `${W} .tables figure`);
  await p.setViewportSize({ width: PHONE, height: 844 });
  await p.waitForTimeout(100);
  assert.deepEqual(await overflowIn(p, `${W} .tables`), [], `the tables with intervals fit at ${PHONE} px`);
  await p.setViewportSize({ width: 1280, height: 900 });
  await closePage(p);
});

test('under the provenance, the night against the previous good night: unchanged, changed with its interval, what changed around it, or nothing', async () => {
  // The demo capture's latest night is compared with the night before it.
  assert.equal(fixture.comparison.previous.date, '2026-12-02');
  const prevNight = { date: '2026-11-30', finished_utc: '2026-11-30T03:10:00Z' };
  const change = (label, change, lo, hi) => ({ label, change, change_ci: { lo, hi }, ratio: 1.9 });
  // `set(c)` edits the record's comparison; resolves to the lines' text as seen and as said.
  const linesOf = async (set) => {
    const edit = (body, suite) => { if (suite === SUITE) { if (set) set(body); } };
    const p = await openPage(base, W, { setup: (q) => editEvidence(q, [SUITE], edit) });
    const lis = p.locator(`${W} ul.since li`);
    const out = [];
    for (let k = 0; k < await lis.count(); k++) out.push(await seenAndSaid(lis.nth(k)));
    return { p, seen: out.map((x) => x.seen), said: out.map((x) => x.said) };
  };
  const base0 = (body) => {
    const c = body.comparison;
    c.previous = prevNight;
    c.history_nights = 1;
    for (const r of c.rows) r.previous = change('same', 0.001, -0.002, 0.004);
    Object.assign(c.counts, { same: c.rows.length, not_compared: 0 });
    return c;
  };
  const t0 = doc.tables[0];
  const rowLabel = (name) => t0.rows.find((r) => r.name === name).label;

  // Every ratio the same.
  let got = await linesOf((body) => { base0(body).unchanged_since = '2026-11-29'; });
  const n = fixture.comparison.rows.length;
  assert.deepEqual(got.seen, [`Unchanged since 2026-11-29 (${n} ratios the same within 1.0%).`]);
  await shotsLD(got.p, 'since-unchanged', null, { at: `${W} p.nights` });
  await closePage(got.p);

  // The same, with the driver moved: said after it.
  got = await linesOf((body) => {
    const c = base0(body);
    c.unchanged_since = '2026-11-30';
    c.environment = [{ what: 'driver', before: '580.159', after: '585.01' }];
  });
  assert.deepEqual(got.seen, [`Unchanged since 2026-11-30 (${n} ratios the same within 1.0%); since 2026-11-30: driver 580.159 \u2192 585.01.`]);
  assert.deepEqual(got.said, [`Unchanged since 2026-11-30 (${n} ratios the same within 1.0%); since 2026-11-30: driver 580.159 to 585.01.`]);
  await closePage(got.p);

  // One ratio lower, with its interval (magnitudes), one ambiguous (signed), the driver and the CUDA runtime changed.
  const [r0, r1] = fixture.comparison.rows;
  got = await linesOf((body) => {
    const c = base0(body);
    c.unchanged_since = null;
    c.rows[1].previous = change('ambiguous', 0.008, -0.003, 0.019);
    c.rows[0].previous = change('lower', -0.044, -0.049, -0.039);
    Object.assign(c.counts, { same: n - 2, lower: 1, ambiguous: 1 });
    c.changed = 1;
    c.environment = [{ what: 'driver', before: '580.159', after: '585.01' }, { what: 'CUDA runtime', before: '13.0', after: '13.1' }];
  });
  assert.deepEqual(got.seen, [
    `${rowLabel(r0.name)}: lower by 4.4% [3.9, 4.9] since 2026-11-30.`,
    `${rowLabel(r1.name)}: ambiguous: +0.8% [-0.3, +1.9] since 2026-11-30 (neither shown within 1.0% nor beyond it).`,
    'Changed since 2026-11-30: driver 580.159 \u2192 585.01; CUDA runtime 13.0 \u2192 13.1.',
  ]);
  assert.equal(await got.p.locator(`${W} ul.since li[data-label="lower"][data-row="${r0.name}"] b`).innerText(), 'lower by 4.4%');
  await shotsLD(got.p, 'since-changed', null, { at: `${W} p.nights` });
  await closePage(got.p);

  // Higher, and more changed ratios than the lines name: the rest counted.
  got = await linesOf((body) => {
    const c = base0(body);
    c.unchanged_since = null;
    const extra = [0, 1, 2].map((k) => ({ ...structuredClone(c.rows[0]), name: `x${k}`, label: `x${k}` }));
    c.rows.push(...extra);
    for (const r of c.rows) r.previous = change('higher', 0.052, 0.047, 0.057);
    Object.assign(c.counts, { same: 0, higher: c.rows.length });
    c.changed = c.rows.length;
  });
  assert.equal(got.seen.length, 4);
  assert.equal(got.seen[0], `${rowLabel(r0.name)}: higher by 5.2% [4.7, 5.7] since 2026-11-30.`);
  // Six changed ratios, three named: three more counted.
  assert.equal(n, 3, 'the capture compares three ratios');
  assert.equal(got.seen[3], '3 more ratios changed or are ambiguous.');
  await closePage(got.p);

  // A first night (no previous night to compare with): nothing.
  got = await linesOf((body) => {
    const c = body.comparison;
    c.previous = null;
    c.history_nights = 0;
    delete c.unchanged_since;
    delete c.tables;
    for (const r of c.rows) r.previous = null;
  });
  assert.deepEqual(got.seen, [], 'a first night says nothing');
  await closePage(got.p);

  // A record from before comparisons: nothing.
  got = await linesOf((body) => { delete body.comparison; });
  assert.deepEqual(got.seen, []);
  assert.equal(await got.p.locator(`${W} ul.since`).isVisible(), false);
  await closePage(got.p);
});

test('a table whose intervals missed their target says so among the warnings, from intervals_ok and why sampling stopped', async () => {
  const missed = (body, suite) => {
    if (suite !== SUITE) return;
    Object.assign(body.document.tables[0], { intervals_ok: false, noise_ok: false, stop_reason: 'budget', halfwidth_target: 0.005, worst_halfwidth: 0.0072 });
  };
  const p = await openPage(base, W, { setup: (q) => editEvidence(q, [SUITE], missed) });
  const t = doc.tables[0];
  assert.deepEqual(await p.locator(`${W} ul.warn li`).allInnerTexts(),
    [`\u26a0 ${t.title}: sampling spent its time budget with an interval wider than \u00b10.50% of its ratio (the widest \u00b10.72%).`]);
  await closePage(p);
  // The capture met its target: no warning.
  assert.equal(t.intervals_ok, true);
  assert.equal(await page.locator(`${W} ul.warn li`).count(), 0);
});

test('a table whose baseline puts every thread of the block on one path says so under the baseline, with the baseline it suggests', async () => {
  // What the server's analysis says for the lesson's baseline in a 32x8 block.
  const req = { part: 1, predicates: ['threadIdx.x & 1', 'warp-parity'], baseline: 'warp-parity', threads_per_block: [32, 8] };
  const a = await (await fetch(`${base}/analyze`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(req) })).json();
  const at = a.tables[0];
  assert.ok(at.note && at.suggested_baseline, `the analysis of a 32x8 block has a note and a suggested baseline: ${JSON.stringify(at)}`);
  const sentence = (t) => `${t.note.charAt(0).toUpperCase()}${t.note.slice(1)}${/[.!?]$/.test(t.note) ? '' : '.'}` +
    (t.suggested_baseline ? ` To compare the rows, measure them against ${t.suggested_baseline} as the baseline.` : '');
  // The try box: the reader's predicate in that block.
  const p = await openPage(base, W, { setup: (q) => editEvidence(q, [SUITE, 'day22-part2'], (body, suite) => {
    const t = body.document.tables[0];
    if (suite === SUITE) Object.assign(t, { note: at.note, suggested_baseline: at.suggested_baseline });
    else t.note = 'a stand-in note without a suggested baseline';
  }) });
  await p.getByLabel(/^Predicate/).first().fill('threadIdx.x & 1');
  await p.getByLabel('Block width (blockDim.x)').first().fill('32');
  await p.getByLabel('Block height (blockDim.y)').first().fill('8');
  // The width alone (a block of 32 threads) is analysed too, as the reader
  // types: wait for the note of the 32x8 block, not the first note shown.
  await p.waitForFunction((s) => /32x8/.test(document.querySelector(s).shadowRoot.querySelector('.out .tnote')?.textContent || ''), W);
  assert.equal(await p.locator(`${W} .out .tnote`).innerText(), sentence(at));
  assert.equal(await p.locator(`${W} .out .tnote code`).innerText(), at.suggested_baseline);
  // In a table: under the table, full width; the baseline row points to it
  // and is described by it, and no other row.
  const t = doc.tables[0];
  const table = p.locator(`${W} .tables table`).first();
  const note = p.locator(`${W} .tables > p.tnote`);
  assert.equal(await note.count(), 1);
  assert.equal(await note.innerText(), sentence(at));
  assert.equal(await p.locator(`${W} .tables > .scroll + p.tnote`).count(), 1, 'right under its table');
  const th = table.locator(`tbody tr[data-row="${t.baseline_row}"] th`);
  assert.equal(await th.locator('.bn').innerText(), 'See the note under the table.');
  assert.ok((await th.getAttribute('aria-describedby')).split(' ').includes(await note.getAttribute('id')), 'the baseline row is described by the note');
  assert.equal(await table.locator('tbody th .bn').count(), 1);
  // Without a suggested baseline, the note alone.
  assert.equal(await p.locator(`${W2} .tables > p.tnote`).innerText(), 'A stand-in note without a suggested baseline.');
  // A table without a note has none (the capture's own).
  assert.equal(await page.locator(`${W} .tables .bn, ${W} .tables .tnote`).count(), 0);
  await shotsLD(p, 'baseline-note-table', null, { at: `${W} .tables > p.tnote` });
  await shotsLD(p, 'baseline-note-try', `${W} fieldset.try`);
  await p.setViewportSize({ width: PHONE, height: 844 });
  await p.waitForTimeout(100);
  assert.deepEqual(await overflowIn(p, `${W} .tables`), [], `the note fits at ${PHONE} px`);
  assert.deepEqual(await overflowIn(p, `${W} fieldset.try`), [], `the try box's note fits at ${PHONE} px`);
  await p.setViewportSize({ width: 1280, height: 900 });
  await closePage(p);
});

test('the instruction fixture holds the wire shape and adds up', async () => {
  // Against api/openapi.yaml's proposed schemas (the same Ajv the API tests use).
  const req = createRequire(path.join(repo, 'tests', 'api', 'openapi', 'package.json'));
  const Ajv2020 = req('ajv/dist/2020.js').default;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(spec, 'spec');
  const row = ajv.getSchema('spec#/components/schemas/Row/properties/instructions');
  const lanes = ajv.getSchema('spec#/components/schemas/Row/properties/lanes_block0');
  const testimony = ajv.getSchema('spec#/components/schemas/Testimony/properties/instructions');
  assert.ok(row && lanes && testimony, 'api/openapi.yaml defines Row.instructions, Row.lanes_block0 and Testimony.instructions');
  for (const [name, f] of Object.entries(insFixture.rows)) {
    assert.ok(row(f.instructions), `${name}: ${JSON.stringify(row.errors)}`);
    if (f.lanes_block0) assert.ok(lanes(f.lanes_block0), `${name}: ${JSON.stringify(lanes.errors)}`);
  }
  for (const [suite, t] of Object.entries(insFixture.testimony)) assert.ok(testimony(t), `${suite}: ${JSON.stringify(testimony.errors)}`);
  // A planted drift is caught: a run without its region's name.
  const bad = structuredClone(insFixture.rows['lane-parity'].instructions);
  bad.runs[0].region = 'path_c';
  assert.equal(row(bad), false);
  // Each region's totals are its runs' counts times their lengths; lanes are thread / warp executions.
  for (const [name, f] of Object.entries(insFixture.rows)) {
    if (!f.instructions) continue;
    for (const g of f.instructions.regions) {
      const rs = f.instructions.runs.filter((u) => u.region === g.kind);
      assert.equal(rs.reduce((a, u) => a + u.count, 0), g.instructions, `${name} ${g.kind}: instructions`);
      for (const k of ['warp_executions', 'thread_executions', 'pred_on_thread_executions']) assert.equal(rs.reduce((a, u) => a + u.count * u[k], 0), g[k], `${name} ${g.kind}: ${k}`);
    }
    for (const u of f.instructions.runs) assert.equal(u.lanes, u.warp_executions ? u.thread_executions / u.warp_executions : 0, `${name} pc ${u.pc}: lanes`);
  }
  // The lesson's facts in the H200's counts: 16 lanes per FFMA on each path for lane parity,
  // 32 for warp parity, predicated per-iteration FFMAs at 32 lanes with 16 on.
  const ffma = (name, reg) => insFixture.rows[name].instructions.runs.filter((u) => u.region === reg && u.opcode === 'FFMA' && u.warp_executions > 0);
  for (const reg of ['path_a', 'path_b']) {
    assert.ok(ffma('lane-parity', reg).every((u) => u.lanes === 16 && !u.guarded), `lane parity ${reg}`);
    assert.ok(ffma('warp-parity', reg).every((u) => u.lanes === 32), `warp parity ${reg}`);
    assert.ok(ffma('per-iteration-lane-parity', reg).every((u) => u.lanes === 32 && u.guarded && u.pred_on_thread_executions * 2 === u.thread_executions), `per-iteration ${reg}`);
  }
});

// The regions of an instruction view against Row.instructions.regions:
// in the order a warp meets them, each with its instructions, warp
// executions, lanes (and lanes with the predicate on) and its stall reasons.
const REGION_ORDER = ['before', 'path_a', 'path_b', 'reconverge', 'after'];
async function assertRegions(panel, x) {
  const regRows = panel.locator('table.rg tbody tr.rgn');
  const want = [...x.regions].sort((a, b) => REGION_ORDER.indexOf(a.kind) - REGION_ORDER.indexOf(b.kind));
  assert.deepEqual(await regRows.evaluateAll((trs) => trs.map((tr) => tr.dataset.region)), want.map((g) => g.kind), 'the regions in a warp\'s order');
  for (const [k, g] of want.entries()) {
    const tr = regRows.nth(k), cell = (c) => tr.locator(`td[data-k="${c}"] .v`).textContent();
    assert.equal(await cell('n'), String(g.instructions));
    assert.equal(await cell('warp'), grouped(g.warp_executions), `${g.kind} warp executions`);
    const on = g.warp_executions ? g.pred_on_thread_executions / g.warp_executions : 0;
    assert.equal(await tr.locator('td[data-k="lanes"] .ln').textContent(), g.warp_executions ? fx(g.lanes_per_execution, 1) : 'not run', `${g.kind} lanes`);
    assert.equal(await tr.locator('td[data-k="lanes"] .ln2').count(), g.warp_executions && Math.abs(g.lanes_per_execution - on) > 0.05 ? 1 : 0, `${g.kind}: lanes with the predicate on iff fewer`);
    const st = await panel.locator(`table.rg tr.stl[data-region="${g.kind}"] td[data-k="stalls"] .v`).textContent();
    if (g.stalls && g.stalls.length) assert.equal(st, g.stalls.map((q) => `${STALL_WORDS[q.reason] || q.reason.replace(/_/g, ' ')} ${fx(q.share * 100, 1)}%`).join(', '), `${g.kind} stalls`);
    else assert.equal(st, g.stalls ? 'none (no sample fell here)' : 'not sampled (PC sampling did not run)', `${g.kind} stalls`);
  }
}
// The reader's words for a few of CUPTI's stall names; the rest with their underscores as blanks.
const STALL_WORDS = { wait: 'wait (fixed latency)', selected: 'selected (issuing)', not_selected: 'not selected', long_sb: 'long scoreboard',
  no_inst: 'no instruction', no_instructions: 'no instruction', imc_miss: 'constant cache miss', mio_throttle: 'MIO throttle',
  math_pipe_throttle: 'math pipe throttle', short_scoreboard: 'short scoreboard', long_scoreboard: 'long scoreboard' };

// The source lines of an instruction view: one row per file:line of the
// runs (the main file first, then by line), with the line's instructions,
// warp executions and lanes per execution summed from its runs.
async function assertSourceLines(panel, x) {
  const by = new Map();
  for (const u of x.runs) {
    const k = `${u.file || ''}:${u.line ?? ''}`;
    const s = by.get(k) || { file: u.file || '', line: u.line == null ? '' : String(u.line), n: 0, w: 0, t: 0 };
    s.n += u.count; s.w += u.count * u.warp_executions; s.t += u.count * u.thread_executions;
    by.set(k, s);
  }
  const perFile = new Map();
  for (const u of x.runs) if (u.file) perFile.set(u.file, (perFile.get(u.file) || 0) + 1);
  const main = [...perFile.keys()].sort((a, b) => perFile.get(b) - perFile.get(a))[0];
  const rank = (s) => [s.file === main ? 0 : s.file ? 1 : 2, s.file, s.line === '' ? Infinity : Number(s.line)];
  const want = [...by.values()].sort((a, b) => { const p = rank(a), q = rank(b); return p[0] - q[0] || (p[1] < q[1] ? -1 : p[1] > q[1] ? 1 : 0) || p[2] - q[2]; });
  const got = await panel.locator('table.srcl tbody tr.src').evaluateAll((trs) => trs.map((tr) => ({
    file: tr.dataset.file, line: tr.dataset.line, n: tr.querySelector('td[data-k="n"] .v').textContent,
    w: tr.querySelector('td[data-k="warp"] .v').textContent, lanes: tr.querySelector('td[data-k="lanes"] .ln').textContent })));
  assert.deepEqual(got, want.map((s) => ({ file: s.file, line: s.line, n: String(s.n), w: grouped(s.w), lanes: s.w ? fx(s.t / s.w, 1) : 'not run' })),
    'one row per source line, its runs summed');
}

test('from any row, the annotated listing: source line beside SASS, lane bars, guards marked, the paths in the chart\'s colours, one warp\'s lanes', async () => {
  const p = await openPage(base, W, { setup: (q) => editEvidence(q, [SUITE, 'day22-part2']) });
  const d = await evidenceDoc(SUITE);
  const t = d.tables[0];
  const table = p.locator(`${W} .tables table`).first();
  // A button on each row that has a listing, none on a row whose instructions are null, and why.
  for (const [i, r] of t.rows.entries()) {
    const b = table.locator(`tr[data-say="${i}"] button.ib`);
    assert.equal(await b.count(), r.instructions && typeof r.instructions === 'object' ? 1 : 0, `${r.name}: a button iff a listing`);
  }
  // Nothing of what the widget leaves out shows up as text.
  for (const w of [W, W2]) assert.doesNotMatch(await p.locator(`${w} .tables`).innerText(), /\b(null|undefined)\b/, `${w}: no stray null`);
  const none = t.rows.filter((r) => r.instructions === null);
  if (none.length) {
    const note = await p.locator(`${W} .inote`).first().innerText();
    for (const r of none) assert.ok(note.includes(r.label), `the note names ${r.label}: ${note}`);
  }
  // Opened from the keyboard: Enter on the row's button; the focus moves to the listing's heading.
  const ri = t.rows.findIndex((r) => r.name === 'lane-parity');
  const r = t.rows[ri], x = r.instructions;
  const btn = table.locator(`tr[data-say="${ri}"] button.ib`);
  await btn.focus();
  await p.keyboard.press('Enter');
  const panel = p.locator(`${W} section.ins`).first();
  await panel.locator('h3').waitFor();
  assert.equal(await btn.getAttribute('aria-expanded'), 'true');
  assert.equal(await p.evaluate((s) => document.querySelector(s).shadowRoot.activeElement.tagName, W), 'H3');
  assert.equal(await panel.locator('h3').innerText(), `Instructions of ${r.label}`);
  const meta = await panel.locator('.meta').innerText();
  assert.ok(meta.includes(`on ${grouped(x.grid.blocks)} block${x.grid.blocks === 1 ? '' : 's'} \u00d7 ${x.grid.block[0]} threads`), meta);
  if (x.scale !== 1) assert.ok(meta.includes(`scaled \u00d7${fx(x.scale, 2)} to this row\u2019s grid`), meta);
  assert.ok(meta.includes(x.disassembler) && meta.includes(x.kernel) && meta.includes(`${fx(x.mapped * 100, 1)}% of its instructions mapped`), meta);
  assert.ok(meta.includes(x.cached ? 'from the cache of an identical launch' : `in ${fx(x.collect_ms, 1)} ms`), meta);
  // The regions, in the order a warp meets them: their counts, lanes and stall reasons.
  await assertRegions(panel, x);
  // The source lines: the runs summed per file:line, each with its lane bar.
  await assertSourceLines(panel, x);
  // The first screen is at most two screens tall at 1280 px until the reader asks for the SASS.
  const panelH = await panel.evaluate((e) => e.getBoundingClientRect().height);
  assert.ok(panelH <= 2 * 900, `the instruction view is ${panelH} px tall before the SASS`);
  assert.equal(await panel.locator('table.lst').count(), 0, 'the SASS listing is not built before it is asked for');
  await shotsLD(p, 'instruction-view-first-screen', null, { at: `${W} section.ins h3`, top: true });
  // One warp's lanes from the row's mask: the first split warp of block 0, beside the lanes the GPU counted.
  const wk = r.lanes_block0.findIndex((w) => w.includes('A') && w.includes('B'));
  const warp = panel.locator('figure.lanes g.warp');
  assert.equal(await warp.count(), 1);
  assert.equal(await warp.getAttribute('data-warp'), String(Math.max(0, wk)));
  assert.equal(await warp.locator('rect').evaluateAll((rs) => rs.map((q) => q.dataset.path).join('')), r.lanes_block0[Math.max(0, wk)]);
  assert.equal(await panel.locator('figure.lanes svg desc').textContent(), 'warp 0, split: lane 0 on A, 1 on B, repeating every 2 lanes.');
  assert.match(await panel.locator('.wsay').innerText(), /sends 16 of its lanes down path A and 16 down path B\.[\s\S]*Path A 16\.0, Path B 16\.0\./);
  // The SASS, one more click: before and after the branch collapsed (not even built), the branch open.
  const sasb = panel.locator('button.sasb');
  assert.equal(await sasb.innerText(), `The SASS listing: ${x.runs.length} runs of ${x.runs.reduce((a, u) => a + u.count, 0)} instructions`);
  assert.equal(await sasb.getAttribute('aria-expanded'), 'false');
  await sasb.focus();
  await p.keyboard.press('Enter');
  assert.equal(await sasb.getAttribute('aria-expanded'), 'true');
  console.log(`instruction view of ${r.label}: ${Math.round(panelH)} px tall at 1280 px before the SASS, ` +
    `${Math.round(await panel.evaluate((e) => e.getBoundingClientRect().height))} px with it open`);
  const { first, last } = branchSpan(x.runs);
  const secs = panel.locator('table.lst tbody.sec');
  assert.deepEqual(await secs.evaluateAll((b) => b.map((q) => q.dataset.part)), ['before', 'branch', 'after']);
  const sec = (k) => panel.locator(`table.lst tbody.sec[data-part="${k}"]`);
  assert.equal(await sec('before').locator('button.sx').getAttribute('aria-expanded'), 'false');
  assert.equal(await sec('after').locator('button.sx').getAttribute('aria-expanded'), 'false');
  assert.equal(await sec('before').locator('tr.run').count(), 0, 'a closed section is not built');
  assert.equal(await sec('branch').locator('button.sx').getAttribute('aria-expanded'), 'true');
  const span = x.runs.slice(first, last + 1);
  assert.match(await sec('branch').locator('button.sx').innerText(), new RegExp(`: ${span.length} runs, ${span.reduce((a, u) => a + u.count, 0)} instructions$`));
  const rows = await sec('branch').locator('tr.run').evaluateAll((trs) => trs.map((tr) => {
    const c = (k) => tr.querySelector(`td[data-k="${k}"] .v`);
    const code = tr.querySelector('th.sass code').cloneNode(true);
    code.querySelectorAll('.sr').forEach((e) => e.remove());
    const bar = c('lanes').querySelector('.lbar'), on = bar.querySelector('.on');
    return { pc: Number(tr.dataset.pc), region: tr.dataset.region, path: c('path').textContent, line: c('line').textContent, pcText: c('pc').textContent,
      sass: code.textContent, mark: tr.querySelector('th.sass mark.gd')?.textContent || null, n: tr.querySelector('button.xn')?.textContent || null,
      lanes: c('lanes').querySelector('.ln').textContent + (c('lanes').querySelector('.ln2') ? ` \u00b7 ${c('lanes').querySelector('.ln2').textContent}` : ''), said: c('lanes').querySelector('.sr').textContent,
      onW: on.getBoundingClientRect().width / bar.clientWidth, warp: c('warp').textContent, thread: c('thread').textContent,
      onBg: getComputedStyle(on).backgroundColor + ' ' + getComputedStyle(on).backgroundImage };
  }));
  assert.equal(rows.length, span.length);
  // The file most runs are on is the caption's; a line in another file carries its mark.
  const perFile = new Map();
  for (const u of x.runs) if (typeof u.file === 'string') perFile.set(u.file, (perFile.get(u.file) || 0) + 1);
  const byRuns = [...perFile.keys()].sort((a, b) => perFile.get(b) - perFile.get(a));
  const markOf = Object.fromEntries(byRuns.slice(1).map((f, k) => [f, ['\u2020', '\u2021', '\u00a7', '\u00b6', '#', '*'][k]]));
  const caption = await panel.locator('table.lst caption').innerText();
  if (byRuns[0]) assert.ok(caption.includes(`beside their source lines in ${byRuns[0]}`), caption);
  for (const [f, m] of Object.entries(markOf)) assert.ok(caption.includes(`(a line marked ${m} is in ${f})`), caption);
  for (const [k, u] of span.entries()) {
    const w = rows[k], at = `run at pc ${hexPc(u.pc)}`;
    assert.equal(w.pc, u.pc, at);
    assert.equal(w.path, { path_a: 'A', path_b: 'B', reconverge: 'sync' }[u.region] || '', `${at}: its path in text`);
    // The line alone when every run is in one file (the caption names it), else file:line.
    assert.equal(w.line, u.line == null ? '\u2014' : `${u.line}${(u.file && markOf[u.file]) || ''}`, `${at}: its source line`);
    assert.equal(w.pcText, hexPc(u.pc));
    assert.equal(w.sass, u.sass, `${at}: its SASS`);
    assert.equal(w.mark, u.guarded ? /^@!?U?P[T0-9]+/.exec(u.sass)[0] : null, `${at}: a guard is marked`);
    assert.equal(w.n, u.count > 1 ? `\u00d7${u.count}` : null, `${at}: a run shows its count`);
    const on = u.warp_executions ? u.pred_on_thread_executions / u.warp_executions : 0;
    assert.ok(Math.abs(w.onW - on / 32) < 0.02, `${at}: the bar fills ${w.onW} of the warp for ${on} lanes`);
    assert.equal(w.lanes, !u.warp_executions ? 'not run' : fx(u.lanes, 1) + (Math.abs(u.lanes - on) > 0.05 ? ` \u00b7 ${fx(on, 1)} on` : ''));
    assert.match(w.said, u.warp_executions ? new RegExp(`^${fx(u.lanes, 1)} of 32 lanes active per execution`) : /^never executed$/, `${at}: the bar in words`);
    assert.equal(w.warp, grouped(u.warp_executions));
    assert.equal(w.thread, grouped(u.thread_executions));
  }
  // Path A and path B in the chart's colours: A the measured bars' fill, B the predicted bars' colour, hatched.
  const chart = await p.locator(`${W} .tables figure.chart > svg[role=img]`).first().evaluate((s) => ({
    m: getComputedStyle(s.querySelector('rect.bm')).fill, pr: getComputedStyle(s.querySelector('rect.bp')).stroke }));
  const a = rows.find((w) => w.region === 'path_a' && w.onW > 0), b = rows.find((w) => w.region === 'path_b' && w.onW > 0);
  assert.ok(a.onBg.startsWith(chart.m), `path A's bars: ${a.onBg} vs the chart's ${chart.m}`);
  assert.ok(b.onBg.includes(chart.pr) && /repeating-linear-gradient/.test(b.onBg), `path B's bars hatched in ${chart.pr}: ${b.onBg}`);
  await shotsLD(p, 'instructions-lane-parity', `${W} section.ins`);
  await shotsLD(p, 'instructions-in-page', null, { at: `${W} section.ins h3` });
  await shotsLD(p, 'instructions-row-button', null, { at: `${W} tr[data-say="${ri}"] button.ib` });
  // A run's ×N opens (Space on the button) its first and last instruction with the pc range.
  const big = span.find((u) => u.count > 2);
  const xn = sec('branch').locator(`tr.run[data-pc="${big.pc}"] button.xn`);
  await xn.focus();
  await p.keyboard.press(' ');
  assert.equal(await xn.getAttribute('aria-expanded'), 'true');
  const more = sec('branch').locator(`tr.run[data-pc="${big.pc}"] + tr.more`);
  assert.equal(await more.isVisible(), true);
  const mt = await more.innerText();
  assert.ok(mt.startsWith(`${big.count} consecutive instructions, pc ${hexPc(big.pc)} to ${hexPc(big.pc + 16 * (big.count - 1))}, each executed ${grouped(big.warp_executions)} times by warps`), mt);
  assert.ok(mt.includes(`First: ${big.sass}`) && mt.includes(`Last: ${big.last_sass}`), mt);
  await shotsLD(p, 'instructions-run-open', null, { at: `${W} tr.more:not([hidden])` });
  // Before the branch opens from the keyboard too, built then.
  const before = x.runs.slice(0, first);
  await sec('before').locator('button.sx').focus();
  await p.keyboard.press('Enter');
  assert.equal(await sec('before').locator('tr.run').count(), before.length);
  assert.equal(await sec('before').locator('tr.run[data-guarded="true"] mark.gd').count(), before.filter((u) => u.guarded).length);
  assert.equal(await sec('before').locator('tr.run').filter({ hasText: 'not run' }).count(), before.filter((u) => !u.warp_executions).length);
  await p.keyboard.press('Enter');
  assert.equal(await sec('before').locator('tr.run:visible').count(), 0, 'and closes again');
  // At phone width the listing fits: nothing wider than the screen.
  await p.setViewportSize({ width: PHONE, height: 844 });
  await p.waitForTimeout(100);
  assert.deepEqual(await overflowIn(p, `${W} section.ins`), [], `the listing fits at ${PHONE} px`);
  assert.ok(await p.evaluate(() => document.documentElement.scrollWidth) <= PHONE, 'no sideways scrolling');
  await p.setViewportSize({ width: 1280, height: 900 });
  // Escape closes it and gives the focus back to the row's button; another row opens in its place.
  await panel.locator('h3').focus();
  await p.keyboard.press('Escape');
  assert.equal(await panel.isVisible(), false);
  assert.equal(await btn.getAttribute('aria-expanded'), 'false');
  assert.equal(await p.evaluate((s) => document.querySelector(s).shadowRoot.activeElement.getAttribute('data-row'), W), String(ri));
  const wi = t.rows.findIndex((q) => q.name === 'warp-parity');
  await table.locator(`tr[data-say="${wi}"] button.ib`).click();
  assert.equal(await panel.locator('h3').innerText(), `Instructions of ${t.rows[wi].label}`);
  assert.equal(await panel.locator('.pred').count(), 0, 'a branch that branches is not called predicated');
  assert.match(await panel.locator('figcaption').innerText(), /^Warp 0 of block 0, lane by lane\./);
  await table.locator(`tr[data-say="${wi}"] button.ib`).click();
  assert.equal(await panel.isVisible(), false, 'the same button closes it');

  // Part 2: the compiler predicated the per-iteration branch: guarded runs with 32 lanes, 16 on.
  const d2 = await evidenceDoc('day22-part2');
  const t2 = d2.tables[0], pi = t2.rows.findIndex((q) => q.name === 'per-iteration-lane-parity');
  const x2 = t2.rows[pi].instructions;
  await p.locator(`${W2} .tables table`).first().locator(`tr[data-say="${pi}"] button.ib`).click();
  const panel2 = p.locator(`${W2} section.ins`).first();
  assert.match(await panel2.locator('.pred').innerText(), /^The compiler predicated this branch/);
  await assertRegions(panel2, x2);
  await assertSourceLines(panel2, x2);
  const panel2H = await panel2.evaluate((e) => e.getBoundingClientRect().height);
  assert.ok(panel2H <= 2 * 900, `Part 2's instruction view is ${panel2H} px tall before the SASS`);
  await p.evaluate((s) => document.querySelector(s).scrollIntoView(), W2);
  await shotsLD(p, 'instruction-view-first-screen-part2', null, { at: `${W2} section.ins h3`, top: true });
  await panel2.locator('button.sasb').click();
  console.log(`instruction view of ${t2.rows[pi].label}: ${Math.round(panel2H)} px tall at 1280 px before the SASS, ` +
    `${Math.round(await panel2.evaluate((e) => e.getBoundingClientRect().height))} px with it open`);
  const s2 = branchSpan(x2.runs), span2 = x2.runs.slice(s2.first, s2.last + 1);
  const guarded = await panel2.locator('tbody.sec[data-part="branch"] tr.run[data-guarded="true"]').evaluateAll((trs) => trs.map((tr) => {
    const ln2 = tr.querySelector('td[data-k="lanes"] .ln2');
    return [Number(tr.dataset.pc), tr.querySelector('td[data-k="lanes"] .ln').textContent + (ln2 ? ` \u00b7 ${ln2.textContent}` : '')];
  }));
  // A guarded run the loop never reached (its unrolled remainder, say) says so.
  assert.deepEqual(guarded, span2.filter((u) => u.guarded).map((u) => [u.pc, !u.warp_executions ? 'not run'
    : `${fx(u.lanes, 1)} \u00b7 ${fx(u.pred_on_thread_executions / u.warp_executions, 1)} on`]));
  assert.ok(guarded.some(([, l]) => l === '32.0 \u00b7 16.0 on'), JSON.stringify(guarded));
  const stalls = await panel2.locator('table.rg tr.stl[data-region="path_a"] td[data-k="stalls"] .v').innerText();
  const want = x2.regions.find((g) => g.kind === 'path_a').stalls;
  // The reader's words for a few of CUPTI's names; the rest with their underscores as blanks.
  const words = { wait: 'wait (fixed latency)', selected: 'selected (issuing)', long_sb: 'long scoreboard', no_inst: 'no instruction',
    no_instructions: 'no instruction', imc_miss: 'constant cache miss', mio_throttle: 'MIO throttle' };
  if (want) assert.equal(stalls, want.map((q) => `${words[q.reason] || q.reason.replace(/_/g, ' ')} ${fx(q.share * 100, 1)}%`).join(', '));
  await p.evaluate((s) => document.querySelector(s).scrollIntoView(), W2);
  await shotsLD(p, 'instructions-per-iteration', `${W2} section.ins`);
  await p.setViewportSize({ width: PHONE, height: 844 });
  await p.waitForTimeout(100);
  assert.deepEqual(await overflowIn(p, `${W2} section.ins`), [], `the predicated listing fits at ${PHONE} px`);
  await p.setViewportSize({ width: 1280, height: 900 });
  await closePage(p);
  assert.deepEqual(standIn.wrong, [], 'the server\'s own lane maps agree with the fixture');
});

test('a listing without SASS text, one from the cache, and a document whose listings were not collected say so', async () => {
  const reason = 'stand-in reason: the request turned instruction profiles off';
  const noText = (body, suite) => {
    for (const r of body.document.tables[0].rows) {
      if (!r.instructions) continue;
      if (suite === SUITE) {
        Object.assign(r.instructions, { disassembler: null, disassembly_reason: 'stand-in: no disassembler on the GPU host', cached: true });
        for (const u of r.instructions.runs) { u.sass = null; u.last_sass = null; }
      } else r.instructions = null;
    }
    if (suite !== SUITE) body.document.testimony.instructions = { requested: false, taken: false, reason, host_ms: 0, cached_rows: 0 };
  };
  const p = await openPage(base, W, { setup: (q) => editEvidence(q, [SUITE, 'day22-part2'], noText) });
  const d = await evidenceDoc(SUITE, noText);
  const t = d.tables[0], ri = t.rows.findIndex((r) => r.instructions);
  const x = t.rows[ri].instructions;
  await p.locator(`${W} .tables table`).first().locator(`tr[data-say="${ri}"] button.ib`).click();
  const panel = p.locator(`${W} section.ins`).first();
  const meta = await panel.locator('.meta').innerText();
  assert.ok(meta.includes('no SASS text (stand-in: no disassembler on the GPU host), so each instruction shows its opcode'), meta);
  assert.ok(meta.includes(`served from the cache of an identical launch collected ${x.collected_utc.replace('T', ' ').replace(/Z$/, '')} UTC`), meta);
  const { first, last } = branchSpan(x.runs);
  await panel.locator('button.sasb').click();
  const ops = await panel.locator('tbody.sec[data-part="branch"] tr.run th.sass code').evaluateAll((cs) => cs.map((c) => {
    const k = c.cloneNode(true); k.querySelectorAll('.sr').forEach((e) => e.remove()); return k.textContent;
  }));
  assert.deepEqual(ops, x.runs.slice(first, last + 1).map((u) => (u.guarded ? `@P ${u.opcode}` : u.opcode)));
  // Part 2 here: nothing collected, the reason said once, no buttons.
  assert.equal(await p.locator(`${W2} button.ib`).count(), 0);
  assert.equal(await p.locator(`${W2} .inote`).innerText(), `Instruction listings were not collected: ${reason}.`);
  await closePage(p);
});

test('the scenarios suite measured from the page against the stand-in GPU worker', async () => {
  // The server's own analysis cap: the suite's request is within it.
  const url = await startServer(path.join(tmp, 'evidence'), { FAKE_WORKER_NO_GPU: '0' }, ['--rate-limit', '0']);
  const p = await openPage(url);
  const S = 'divergence-widget[suite="scenarios"]';
  await p.evaluate(() => {
    const w = document.createElement('divergence-widget');
    w.setAttribute('suite', 'scenarios');
    w.setAttribute('no-try', '');
    document.querySelector('main').append(w);
  });
  await p.waitForFunction((s) => { const w = document.querySelector(s); return w.getAttribute('state') === 'shown' && !w.shadowRoot.querySelector('button').disabled; }, S, { timeout: 15000 });
  const accepted = p.waitForResponse((r) => r.url().endsWith('/measure'));
  await p.locator(`${S} button`, { hasText: 'Measure now' }).click();
  const a = await accepted;
  assert.equal(a.status(), 202, `the scenarios request is accepted: ${await a.text()}`);
  assert.equal(a.request().postDataJSON().scenario, 'all');
  await p.waitForFunction((s) => /^Done:/.test(document.querySelector(s).shadowRoot.querySelector('.msg').textContent), S, { timeout: 60000 });
  const fresh = (await (await fetch(`${url}/jobs/${(await a.json()).id}`)).json()).document;
  const tables = p.locator(`${S} .tables table`);
  assert.equal(await tables.count(), fresh.tables.length);
  for (const [ti, t] of fresh.tables.entries()) {
    const rows = tables.nth(ti).locator('tbody tr[data-row]');
    assert.equal(await rows.count(), t.rows.length, t.id);
    for (const [i, r] of t.rows.entries()) assert.equal(await rows.nth(i).locator('td[data-k="ratio"] .v').innerText(), ratioWant(t, i).point, `${t.id} row ${i} (${r.name})`);
  }
  assert.match(await p.locator(`${S} .prov`).first().innerText(), /^Measured just now on /);
  // The worked cases' long row labels wrap inside their charts rather than run off the edge.
  const cut = await p.locator(`${S} .tables figure.chart > svg[role=img]`).evaluateAll((svgs) => svgs.flatMap((s) => [...s.querySelectorAll('text')]
    .filter((t) => { const b = t.getBBox(); return b.x + b.width > s.viewBox.baseVal.width + 0.5; }).map((t) => t.textContent)));
  assert.deepEqual(cut, [], 'chart text that runs past the chart\'s edge');
  await shotsLD(p, 'scenarios-measured-top', null, { at: `${S} .prov` });
  await shotsLD(p, 'scenarios-measured-done', null, { at: `${S} .msg` });
  await closePage(p);
  assert.deepEqual(pageErrors, [], 'no uncaught errors in the pages');
});

test('no guess between two fields of one object stands in the widget (a planted one is found)', () => {
  const mods = widgetModules();
  // Every module the entry imports, directly or on demand, is parsed.
  const imported = new Set(Object.values(mods).flatMap((src) => [...src.matchAll(/import\s*(?:[^'"()]*from\s*)?\(?\s*'\.\/(?:widget\/)?([a-z]+\.js)'/g)].map((m) => m[1])));
  assert.deepEqual([...imported].sort(), Object.keys(mods).filter((n) => n.startsWith('widget/')).map((n) => n.slice(7)).sort(), 'the modules the widget imports are the ones parsed');
  for (const [name, src] of Object.entries(mods)) assert.deepEqual(fieldGuesses(src), [], name);
  const src = mods['widget/jobs.js'];
  const plantedAt = "if (j.state === 'done') {";
  assert.ok(src.includes(plantedAt), 'the place to plant a guess is in the widget');
  const planted = src.replace(plantedAt, "if ((j.state || j.status) === 'done') {");
  assert.deepEqual(fieldGuesses(planted).map((x) => x.replace(/^line \d+: /, '')), ['j.state || j.status']);
  const chain = src.replace('const doc = j.document;', 'const doc = j.document || j.result || j.report;');
  assert.deepEqual(fieldGuesses(chain).map((x) => x.replace(/^line \d+: /, '')), ['j.document || j.result || j.report']);
  // Two objects are no guess: the document's GPU name, else the record's.
  assert.deepEqual(fieldGuesses('x = d.name || prov.gpu_name;'), []);
});

test('a planted read of a field the contract lacks is caught', async () => {
  // The widget as it is, but reading a Job's `status` where it reads `state`.
  const src = widgetModules()['widget/jobs.js'];
  const honest = "const ended = (j) => j.state === 'done' || j.state === 'failed';";
  assert.ok(src.includes(honest), 'the place to plant the read is in the widget');
  const planted = src.replace(honest, "const ended = (j) => j.status === 'done' || j.status === 'failed';");
  const url = await startServer(path.join(tmp, 'evidence'), { FAKE_WORKER_NO_GPU: '0' }, ['--rate-limit', '0']);
  const p = await ctx.newPage();
  p.on('pageerror', (e) => pageErrors.push(String(e)));
  await p.route('**/static/widget/jobs.js', (r) => r.fulfill({ status: 200, contentType: 'text/javascript', body: planted }));
  await p.goto(url + '/');
  await p.waitForFunction((sel) => { const b = document.querySelector(sel).shadowRoot.querySelector('button'); return b && !b.disabled; }, W);
  await p.locator(`${W} button`, { hasText: 'Measure now' }).click();
  await p.waitForFunction((sel) => /^Done:/.test(document.querySelector(sel).shadowRoot.querySelector('.msg').textContent), W, { timeout: 60000 });
  const { bad } = contractCheck(await pageReads(p));
  await p.close(); // its reads are the plant's, not the widget's
  assert.ok(bad.includes('POST /measure 202: status'), `the planted read is reported: ${JSON.stringify(bad)}`);
  assert.ok(bad.every((x) => /: status$/.test(x)), `only the planted read is reported: ${JSON.stringify(bad)}`);
});

test('the widget reads only fields api/openapi.yaml defines for each answer', async () => {
  reads.push(...(await pageReads(page)));
  const { bad, ops } = contractCheck(reads);
  assert.deepEqual(bad, [], 'reads of fields the document does not define');
  // Every answer the widget uses was read here, so the check above covers them.
  const want = ['getHealth', 'getDevice', 'getReadiness', 'getEvidenceIndex', 'getLatestEvidence', 'getGpuLatestEvidence',
    'listSuites', 'measure', 'getJob', 'analyze'];
  assert.deepEqual(want.filter((o) => !ops.has(o)), [], `operations read from: ${[...ops].sort().join(', ')}`);
  console.log(`${reads.length} distinct reads on answers of ${ops.size} operations, each defined by api/openapi.yaml`);
  console.log(`stood in for fields the server did not send: ${[...standIn.used].sort().join('; ') || 'none'}`);
});


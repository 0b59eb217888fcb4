// nights.test.mjs -- the nights on the lesson page (mountNights(), static/widget/evidence.js),
// in a real browser against the real server:
// - a capture of three nights (tests/capture_fake filing the suites under
//   2026-11-29, -30 and 12-01 as `measure --file-as` does, the demo
//   capture's way): each table says since when it is unchanged, or what
//   changed with its interval since the previous night, and that the night
//   is filed under the capture's date with when it was measured; each row
//   but the baseline has a sparkline of 3 points with the numbers in its
//   accessible name; the history comes in the latest record itself (no
//   history request: the lesson page's first load); nothing wider
//   than the screen at 1280 and 390 px; screenshots light and dark;
// - a capture of one night: no line, no sparkline, no history fetched;
// - no text reading null, undefined or NaN, and only fields api/openapi.yaml
//   defines read.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  S, startSession, endSession, startServer, W, W2, PHONE, binary, pageErrors, reads, pageReads, closePage,
  assertNoStray, tooWide, recordRequests, contractCheck, shotsLD,
} from './harness.mjs';

const NIGHTS = ['2026-11-29', '2026-11-30', '2026-12-01'];
const fake = path.join(path.dirname(binary), 'tests', 'capture_fake');

before(startSession);
after(endSession);
afterEach(async () => { if (S.page && !S.page.isClosed()) await assertNoStray(S.page); });

// A store of the three nights, the last one's ratios times `last`; served.
async function threeNights(name, last) {
  const store = path.join(S.tmp, name);
  NIGHTS.forEach((d, k) => execFileSync(fake, [store, '--file-as', d, '--scale', String(k === 2 ? last : 1)]));
  return { store, base: await startServer(store, { FAKE_WORKER_NO_GPU: '1' }) };
}

// The lesson page of `base` once both widgets show numbers and the network
// is quiet: the page and the URLs it fetched.
async function lessonPage(base, width = 1280) {
  const p = await S.ctx.newPage();
  p.on('pageerror', (e) => pageErrors.push(String(e)));
  await p.setViewportSize({ width, height: width === PHONE ? 844 : 900 });
  const rec = recordRequests(p);
  await p.goto(base + '/');
  await p.waitForFunction(() => [...document.querySelectorAll('divergence-widget')].every((w) => w.getAttribute('state') === 'shown'), null, { timeout: 15000 });
  await p.waitForLoadState('networkidle');
  return { p, urls: (await rec.stop()).map((g) => g.url) };
}

const record = (store, date, suite) => JSON.parse(fs.readFileSync(path.join(store, 'nvidia-h200', date, `${suite}.json`), 'utf8'));

// Every sparkline of widget `sel`: its row, points, circles and name.
const sparks = (p, sel) => p.evaluate((s) => [...document.querySelector(s).shadowRoot.querySelectorAll('tr[data-row]')]
  .map((tr) => { const g = tr.querySelector('.spark svg'); return { row: Number(tr.dataset.row), points: g ? Number(g.dataset.points) : 0,
    circles: g ? g.querySelectorAll('circle').length : 0, last: g ? g.querySelectorAll('circle.sx').length : 0, name: g ? g.getAttribute('aria-label') : '' }; }), sel);

test('three nights: each table says what changed since the night before, each row has its history, carried by the latest record', async () => {
  const { store, base } = await threeNights('three', 1);
  const { p, urls } = await lessonPage(base);
  assert.deepEqual(urls.filter((u) => u.includes('/history/')), [], `the history is in the latest record: ${urls.join(' ')}`);
  for (const suite of ['day22-part1', 'day22-part2']) {
    const slim = await (await fetch(`${base}/evidence/latest/${suite}`)).json();
    assert.equal(slim.history.nights.length, 3, `${suite}: the latest record carries its three nights`);
  }
  for (const [sel, suite] of [[W, 'day22-part1'], [W2, 'day22-part2']]) {
    const rec = record(store, NIGHTS[2], suite), t = rec.document.tables[0];
    assert.equal(rec.filed_as, NIGHTS[2]);
    const line = await p.locator(`${sel} p.nights`).first().innerText();
    assert.match(line, new RegExp(`^Unchanged since ${NIGHTS[0]} \\((all \\d+|its ratio) within 1\\.0%\\)\\.`), line);
    assert.ok(line.includes(`Filed as ${NIGHTS[2]} by the demo capture.`), line);
    const prov = await p.locator(`${sel} .prov`).first().innerText();
    assert.ok(prov.includes(rec.provenance.finished_utc.replace('T', ' ').replace(/(\.\d+)?Z$/, '')), `the provenance says when it was measured: ${prov}`);
    const got = await sparks(p, sel);
    for (const s of got) {
      if (s.row === t.baseline_row) { assert.equal(s.points, 0, 'the baseline (1 by definition) has no sparkline'); continue; }
      assert.equal(s.points, 3, `row ${s.row}: 3 nights`);
      assert.equal(s.circles, 3, `row ${s.row}: a point per night`);
      assert.equal(s.last, 1, `row ${s.row}: the last night marked`);
      const r = t.rows[s.row];
      assert.ok(s.name.startsWith(`${r.label}: the ratio on 3 nights, oldest first: ${NIGHTS[0]} `), s.name);
      assert.ok(s.name.includes(`${NIGHTS[2]} ${r.ratio.toFixed(3)} [`), `${s.name} names the last night's ratio ${r.ratio}`);
    }
    assert.ok(got.filter((s) => s.points === 3).length >= 2, `${suite}: sparklines on the rows`);
  }
  for (const width of [1280, PHONE]) {
    await p.setViewportSize({ width, height: width === PHONE ? 844 : 900 });
    await p.waitForTimeout(150);
    assert.deepEqual(await tooWide(p), [], `nothing wider than the screen at ${width} px`);
  }
  await shotsLD(p, 'nights-first-fold', null, { at: `${W} p.nights`, top: true });
  reads.push(...(await pageReads(p)));
  await closePage(p);
});

test('a night whose ratios moved says by how much, with the interval, since the night before', async () => {
  const { store, base } = await threeNights('moved', 1.2);
  const { p } = await lessonPage(base, PHONE);
  const c = record(store, NIGHTS[2], 'day22-part1').comparison;
  const line = await p.locator(`${W} p.nights`).first().innerText();
  const moved = c.rows.filter((r) => r.previous && r.previous.label !== 'same');
  assert.ok(moved.length > 0, 'the fixture moved some ratio');
  assert.ok(!line.includes('Unchanged'), line);
  for (const r of moved) {
    const ch = r.previous, sign = ch.label === 'lower' ? -1 : 1;
    const said = ch.label === 'ambiguous' ? `${ch.change >= 0 ? '+' : ''}${(100 * ch.change).toFixed(1)}%` : `${ch.label} by ${(100 * sign * ch.change).toFixed(1)}%`;
    assert.ok(line.includes(`${r.label} ${said}`), `"${line}" says ${r.label} ${said}`);
  }
  assert.ok(line.includes(`since ${NIGHTS[1]}`), line);
  assert.deepEqual(await tooWide(p), [], 'nothing wider than the screen at 390 px');
  await shotsLD(p, 'nights-moved', null, { at: `${W} p.nights`, top: true });
  reads.push(...(await pageReads(p)));
  await closePage(p);
});

test('one night: no nights line, no sparkline, no history fetched', async () => {
  const one = path.join(S.tmp, 'one');
  execFileSync(fake, [one, '--file-as', NIGHTS[0]]);
  const base = await startServer(one, { FAKE_WORKER_NO_GPU: '1' });
  const { p, urls } = await lessonPage(base);
  assert.deepEqual(urls.filter((u) => u.includes('/history/')), [], urls.join(' '));
  const slim = await (await fetch(`${base}/evidence/latest/day22-part1`)).json();
  assert.equal(slim.history, undefined, 'one night: no history in the record');
  for (const sel of [W, W2]) {
    assert.equal(await p.locator(`${sel} p.nights`).count(), 0);
    assert.equal(await p.locator(`${sel} .spark`).count(), 0);
  }
  reads.push(...(await pageReads(p)));
  await closePage(p);
});

test('the pages here read only fields api/openapi.yaml defines for each answer', async () => {
  reads.push(...(await pageReads(S.page)));
  const { bad } = contractCheck(reads);
  assert.deepEqual(bad, [], 'reads of fields the document does not define');
  assert.deepEqual(pageErrors, [], 'no uncaught errors in the pages');
});

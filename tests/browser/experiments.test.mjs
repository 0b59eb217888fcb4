// experiments.test.mjs -- the compiler-and-warp experiments on the lesson
// page (static/widget/experiments.js), in a real browser against the real
// server serving the committed demo capture (harness.mjs's session):
// - the lesson's first load fetches neither the experiments' evidence nor
//   their module; the section is one closed line ("Experiments:
//   compiler, warp, memory, sort", one line of text at 390 px) until opened, and
//   opening it, or arriving at #compiler-and-warp, loads the widget;
// - four charts, one per experiment table, each under a sentence saying
//   what the table is about; the k-paths chart has a mark per row with a k
//   (its name, arrangement, k and ratio the row's) and the fit's line; the
//   predication map has 64 cells, a P or B on each measured point that is
//   the lane-split row's own instructions shape, nothing on the others, and
//   the boundary drawn; the branchless chart pairs each arrangement's branch
//   and select; the reconvergence chart has each row's join record;
// - under each chart a sentence that reads it, with the document's numbers
//   (the k-paths top ratio and b, the predication boundary and the spans of
//   its P and B ratios, the branchless pairs, whether every warp met again);
// - every chart's text at least 12 px on the phone;
// - nothing wider than the screen at 1280 and 390 px, no text reading null,
//   undefined or NaN, and only fields api/openapi.yaml defines read;
// - screenshots at 1280x900 and 390x844, light and dark: the section's
//   first screen (experiments-<width>-<scheme>.png) and each chart
//   (experiments-<experiment>-<width>-<scheme>.png).
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  S, startSession, endSession, PHONE, outDir, pageErrors, reads, pageReads, closePage, assertNoStray, tooWide,
  recordRequests, contractCheck, fx,
} from './harness.mjs';

const SUITE = 'compiler-and-warp';
const X = `divergence-widget[suite="${SUITE}"]`;

before(startSession);
after(endSession);
afterEach(async () => { if (S.page && !S.page.isClosed()) await assertNoStray(S.page); });

// The suite's document as the page gets it (the slim record).
async function doc() {
  const r = await fetch(`${S.base}/evidence/latest/${SUITE}`);
  assert.equal(r.status, 200, `GET /evidence/latest/${SUITE}`);
  return (await r.json()).document;
}

// What the sentence under each chart must say, from the document: the
// fragments written independently of the widget.
function readingWant(d) {
  const by = Object.fromEntries(d.tables.map((t) => [t.experiment, t]));
  const x = '\u00d7', span = (vs) => { const lo = fx(Math.min(...vs), 2), hi = fx(Math.max(...vs), 2); return lo === hi ? lo : `${lo} to ${hi}`; };
  const kt = by['k-paths'], split = kt.rows.filter((r) => r.point.arrangement === 'lane-mod');
  const top = split.reduce((a, r) => (r.point.k > a.point.k ? r : a));
  const aligned = kt.rows.filter((r) => r.point.arrangement === 'warp-mod');
  const p = d.findings.predication;
  const span2 = (b) => span(p.points.filter((q) => q.branching === b).map((q) => q.ratio));
  const bl = (arr, v) => by.branchless.rows.find((r) => r.point.arrangement === arr && r.point.variant === v).ratio;
  const rc = by.reconvergence.rows;
  return {
    'k-paths': [`${top.point.k} paths inside every warp took ${fx(top.ratio, 2)}${x}`, `adds b = ${fx(kt.fit.b_ms * 1000, 2)} \u00b5s`,
      `stay at ${span(aligned.map((r) => r.ratio))}${x}`],
    predication: [`inside the solid line (LA + LB \u2264 ${p.sum_rule})`, `splitting the warp cost ${span2('predicated')}${x}`,
      `the split warp took ${span2('branched')}${x}`, p.guide_disagrees === 0 ? `agrees on all ${p.points.length} measured points` : `disagrees on ${p.guide_disagrees}`],
    branchless: [`(${fx(bl('warps', 'select'), 2)}${x} against ${fx(bl('warps', 'branch'), 2)}${x})`, `(${fx(bl('lanes', 'select'), 2)}${x} against ${fx(bl('lanes', 'branch'), 2)}${x})`],
    reconvergence: rc.every((r) => r.join.reconverged_warps === r.join.warps) ? [`every solid bar is full`, `in all ${rc.length} rows every warp read the join in one group`]
      : [`${rc.filter((r) => r.join.reconverged_warps === r.join.warps).length} of ${rc.length} bars are full`],
  };
}

// The lesson page with the experiments shown, at `width`: the page, and
// the URLs fetched before and after opening the section, and the closed
// section's height and line height.
async function shown(width) {
  const p = await S.ctx.newPage();
  p.on('pageerror', (e) => pageErrors.push(String(e)));
  await p.setViewportSize({ width, height: width === PHONE ? 844 : 900 });
  const rec = recordRequests(p);
  await p.goto(S.base + '/');
  await p.waitForFunction(() => [...document.querySelectorAll('divergence-widget')].every((w) => w.getAttribute('state') === 'shown'), null, { timeout: 15000 });
  await p.waitForLoadState('networkidle');
  const first = (await rec.stop()).map((g) => g.url);
  const closed = await p.locator('#compiler-and-warp').evaluate((d) => ({
    open: d.open, height: d.getBoundingClientRect().height, line: parseFloat(getComputedStyle(d.querySelector('summary')).lineHeight),
    widgets: d.querySelectorAll('divergence-widget').length,
  }));
  const rec2 = recordRequests(p);
  await p.locator('#compiler-and-warp > summary', { hasText: 'Experiments: compiler, warp, memory, sort' }).click();
  await p.waitForFunction((s) => { const w = document.querySelector(s); return w && w.getAttribute('state') === 'shown'; }, X, { timeout: 15000 });
  await p.locator(`${X} figure.xchart`).nth(3).waitFor({ state: 'attached', timeout: 15000 });
  await p.waitForLoadState('networkidle');
  const later = (await rec2.stop()).map((g) => g.url);
  // The charts are a click away on a phone: open them all.
  await p.evaluate((s) => document.querySelector(s).shadowRoot.querySelectorAll('details.chart').forEach((d) => { d.open = true; }), X);
  return { p, first, later, closed };
}

test('the experiments: one closed line until opened (or arrived at), four charts from the document, nothing too wide, light and dark', async () => {
  const d = await doc();
  const byExp = Object.fromEntries(d.tables.map((t, i) => [t.experiment, { t, i }]));
  assert.deepEqual(Object.keys(byExp).sort(), ['branchless', 'k-paths', 'predication', 'reconvergence'], 'the capture has the four experiments');
  for (const width of [1280, PHONE]) {
    const { p, first, later, closed } = await shown(width);
    assert.ok(!first.some((u) => u.includes(SUITE) || u.endsWith('/experiments.js')), `the first load fetches no experiment: ${first.join(' ')}`);
    assert.equal(closed.open, false, 'the section is closed on first load');
    assert.equal(closed.widgets, 0, 'no experiments widget before the section is opened');
    assert.ok(closed.height <= closed.line + 0.5, `the closed section is one line at ${width} px: ${closed.height} px, a line ${closed.line} px`);
    assert.ok(later.some((u) => u.endsWith('/static/widget/experiments.js')), `opening the section loads the experiments' module: ${later.join(' ')}`);
    const got = await p.evaluate((s) => {
      const root = document.querySelector(s).shadowRoot;
      const figs = [...root.querySelectorAll('details.chart[data-experiment]')];
      return {
        charts: figs.map((f) => ({ exp: f.dataset.experiment, svg: !!f.querySelector('figure.xchart svg[role=img] desc'), desc: (f.querySelector('desc') || {}).textContent || '',
          read: (f.querySelector('figure.xchart > p.xread') || {}).textContent || '' })),
        // The smallest text of the charts as drawn: its font size times the SVG's scale.
        minText: Math.min(...figs.flatMap((f) => [...f.querySelectorAll('figure.xchart svg text')].map((t) => {
          const s = t.ownerSVGElement;
          return parseFloat(getComputedStyle(t).fontSize) * s.getBoundingClientRect().width / s.viewBox.baseVal.width;
        }))),
        about: [...root.querySelectorAll('.xabout-slot > p.xabout')].map((x) => ({ exp: x.dataset.experiment, text: x.textContent })),
        kp: [...root.querySelectorAll('g.kp')].map((g) => ({ row: g.dataset.row, k: Number(g.dataset.k), arr: g.dataset.arr, ratio: Number(g.dataset.ratio) })),
        fit: root.querySelectorAll('line.kf').length,
        cells: [...root.querySelectorAll('g.cell')].map((g) => ({ la: Number(g.dataset.la), lb: Number(g.dataset.lb), b: g.dataset.branching, letter: (g.querySelector('.xl') || {}).textContent || '' })),
        boundary: (root.querySelector('path.xbd') || { getAttribute: () => '' }).getAttribute('d'),
        pairs: [...root.querySelectorAll('g.pair[data-arr]')].map((g) => ({ arr: g.dataset.arr, rows: [...g.querySelectorAll('[data-row]')].map((x) => x.dataset.row) })),
        rc: [...root.querySelectorAll('g.rc')].map((g) => ({ row: g.dataset.row, text: g.textContent })),
      };
    }, X);
    assert.deepEqual(got.charts.map((c) => c.exp), d.tables.map((t) => t.experiment), 'a chart per experiment table, in order');
    assert.ok(got.charts.every((c) => c.svg && c.desc.length > 40), 'each chart an SVG image with its numbers in words');
    assert.deepEqual(got.about.map((a) => a.exp), d.tables.map((t) => t.experiment), 'a sentence above each experiment table');
    const want = readingWant(d);
    for (const c of got.charts) {
      assert.match(c.read, /^Reading it: /, `${c.exp}: a sentence under the chart reads it`);
      for (const frag of want[c.exp]) assert.ok(c.read.includes(frag), `${c.exp}: the reading says "${frag}": ${c.read}`);
    }
    assert.ok(got.minText >= 12, `the charts' smallest text is ${got.minText.toFixed(1)} px at ${width} px`);
    // k paths: a mark per row with a k, as the document has it; the fit's line.
    const kt = byExp['k-paths'].t;
    const kpWant = kt.rows.filter((r) => Number.isInteger(r.point.k)).map((r) => ({ row: r.name, k: r.point.k, arr: r.point.arrangement === 'lane-mod' ? 'split' : 'aligned', ratio: r.ratio }));
    assert.equal(kpWant.length, 14);
    assert.deepEqual(got.kp, kpWant, 'the k-paths points are the document\'s rows');
    assert.ok(got.fit >= 2, 'the fit drawn (and in the legend)');
    const ab = got.about.find((a) => a.exp === 'k-paths').text;
    assert.match(ab, new RegExp(`b / a = ${kt.fit.b_over_a.toFixed(2).replace('.', '\\.')}`), `the fit in the sentence: ${ab}`);
    // The predication map: 64 cells; each lane-split row's point lettered by its own shape, the rest blank.
    assert.equal(got.cells.length, 64, '8 x 8 cells');
    const pt = byExp.predication.t, letter = { predicated: 'P', branched: 'B' };
    const lanes = pt.rows.filter((r) => r.point.arrangement === 'lanes');
    assert.ok(lanes.length >= 8, 'the capture measures at least the diagonal');
    for (const c of got.cells) {
      const r = lanes.find((x) => x.point.la === c.la && x.point.lb === c.lb);
      if (!r) { assert.equal(c.letter, '', `LA ${c.la} LB ${c.lb} not measured, no letter`); continue; }
      assert.equal(c.letter, letter[r.instructions.shape.branching], `LA ${c.la} LB ${c.lb}: the letter of ${r.name}'s shape (${r.instructions.shape.branching})`);
    }
    assert.equal(got.cells.filter((c) => c.letter).length, lanes.length, 'a letter per measured point');
    assert.ok(got.boundary && got.boundary.length > 10, 'the boundary drawn');
    // Branchless: each arrangement's branch beside its select.
    assert.deepEqual(got.pairs.map((g) => g.arr), ['warps', 'lanes']);
    for (const g of got.pairs) assert.deepEqual(g.rows.sort(), byExp.branchless.t.rows.filter((r) => r.point.arrangement === g.arr).map((r) => r.name).sort());
    // Reconvergence: each row's join record.
    const rt = byExp.reconvergence.t;
    assert.deepEqual(got.rc.map((g) => g.row), rt.rows.map((r) => r.name));
    for (const g of got.rc) {
      const j = rt.rows.find((r) => r.name === g.row).join;
      assert.ok(g.text.includes(`${j.reconverged_warps} of ${j.warps} warps met`) && g.text.includes(`spread ${j.clock_spread_cycles_median.toFixed(0)} cycles`), `${g.row}: ${g.text}`);
    }
    assert.deepEqual(await tooWide(p), [], `nothing wider than the screen at ${width} px`);
    for (const scheme of ['light', 'dark']) {
      await p.emulateMedia({ colorScheme: scheme });
      await p.locator('#compiler-and-warp').evaluate((e) => e.scrollIntoView({ block: 'start' }));
      await p.screenshot({ path: path.join(outDir, `experiments-${width}-${scheme}.png`), fullPage: false });
      for (const t of d.tables) {
        const fig = p.locator(`${X} details.chart[data-experiment="${t.experiment}"]`);
        await fig.scrollIntoViewIfNeeded();
        await fig.screenshot({ path: path.join(outDir, `experiments-${t.experiment}-${width}-${scheme}.png`) });
      }
    }
    await p.emulateMedia({ colorScheme: 'light' });
    await closePage(p);
  }
  // Arriving at the section's address opens it and shows the experiments.
  const p = await S.ctx.newPage();
  p.on('pageerror', (e) => pageErrors.push(String(e)));
  await p.goto(S.base + '/#compiler-and-warp');
  await p.waitForFunction((s) => { const w = document.querySelector(s); return w && w.getAttribute('state') === 'shown'; }, X, { timeout: 15000 });
  assert.equal(await p.locator('#compiler-and-warp').evaluate((d) => d.open), true, 'the section opened at #compiler-and-warp');
  await p.locator(`${X} figure.xchart`).nth(3).waitFor({ state: 'attached', timeout: 15000 });
  await closePage(p);
  const { bad } = contractCheck(reads);
  assert.deepEqual(bad, [], 'the widget reads only fields api/openapi.yaml defines');
});

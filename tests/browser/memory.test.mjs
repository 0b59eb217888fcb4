// memory.test.mjs -- the memory experiments on the lesson page
// (static/widget/experiments.js): arithmetic intensity (the penalty curve)
// and data-dependent divergence with the sort (the crossover map), in a
// real browser against the real server, the two suites' evidence served
// from H200 measurements committed beside this file:
// - intensity_fixture.json: the capture's arithmetic-intensity record of
//   its last night (NVIDIA H200, 2026-12-03; the DRAM pass read every row,
//   so each point has its dram_intensity), slimmed of what no chart reads
//   (the transcript, the comparison's rows, the summary's tables, the rows'
//   per-lane histograms and instruction profiles);
// - sort_fixture.json: the capture's data-sort record of the same night,
//   slimmed the same way and of the cells' per-warp witness.
// The page's GET /evidence/latest/<suite> is answered from them, so the
// charts are checked against these figures whatever the capture holds.
// - the lesson's first load fetches neither; opening the experiments' line
//   makes both widgets;
// - the penalty curve: a mark per lane-split row with F and L, at its
//   intensity (dram_intensity where present, as in the fixture; the same
//   document with other DRAM intensities planted moves each mark there, and
//   without any the marks sit at the intensity as written), coloured by bound, one
//   curve per table, the ridge a vertical line at roofline.ridge; the
//   sentence under it reads the first and last points and the ridge;
// - the crossover map: a cell per document sort cell with its ratio and
//   verdict, ambiguous cells marked with a "?" (a planted ambiguous cell
//   shows it), the crossover C marked per row; the sentence under it;
// - charts' text at least 12 px on the phone, nothing wider than the
//   screen, no text reading null/undefined/NaN, only fields
//   api/openapi.yaml defines read;
// - screenshots at 1280x900 and 390x844, light and dark, of each chart
//   (memory-<intensity|data-sort>-<width>-<scheme>.png).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  S, startSession, endSession, PHONE, outDir, pageErrors, reads, closePage, tooWide, recordRequests, contractCheck, fx, here,
} from './harness.mjs';

const FIX = {
  'arithmetic-intensity': JSON.parse(fs.readFileSync(path.join(here, 'intensity_fixture.json'), 'utf8')),
  'data-sort': JSON.parse(fs.readFileSync(path.join(here, 'sort_fixture.json'), 'utf8')),
};
// An intensity as the sentence writes it (static/widget/experiments.js's ix).
const ix = (v) => (Number.isInteger(v) ? String(v) : v < 0.1 ? String(Number(v.toPrecision(1))) : v < 1 ? v.toFixed(2) : v.toFixed(1));
const XI = 'divergence-widget[suite="arithmetic-intensity"]', XS = 'divergence-widget[suite="data-sort"]';

before(startSession);
after(endSession);

// The lesson page with the experiments' line opened at `width`, the two
// suites answered from the fixtures (each passed through `edit`): the page,
// and the URLs fetched on first load.
async function shown(width, edit = {}) {
  const p = await S.ctx.newPage();
  p.on('pageerror', (e) => pageErrors.push(String(e)));
  await p.setViewportSize({ width, height: width === PHONE ? 844 : 900 });
  for (const [suite, rec] of Object.entries(FIX)) {
    const body = structuredClone(rec);
    if (edit[suite]) edit[suite](body.document);
    await p.route(`**/evidence/latest/${suite}`, (r) => r.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(body) }));
  }
  const rec = recordRequests(p);
  await p.goto(S.base + '/');
  await p.waitForFunction(() => [...document.querySelectorAll('divergence-widget')].every((w) => w.getAttribute('state') === 'shown'), null, { timeout: 15000 });
  await p.waitForLoadState('networkidle');
  const first = (await rec.stop()).map((g) => g.url);
  await p.locator('#compiler-and-warp > summary').click();
  for (const x of [XI, XS]) {
    await p.waitForFunction((s) => { const w = document.querySelector(s); return w && w.getAttribute('state') === 'shown'; }, x, { timeout: 15000 });
    await p.locator(`${x} figure.xchart`).first().waitFor({ state: 'attached', timeout: 15000 });
  }
  await p.evaluate((ss) => ss.forEach((s) => document.querySelector(s).shadowRoot.querySelectorAll('details.chart').forEach((d) => { d.open = true; })), [XI, XS]);
  return { p, first };
}

// What the page drew: per widget its charts, the marks and cells, the sentences, the smallest text.
const drawn = (p) => p.evaluate(([xi, xs]) => {
  const ri = document.querySelector(xi).shadowRoot, rs = document.querySelector(xs).shadowRoot;
  const minText = (root) => Math.min(...[...root.querySelectorAll('figure.xchart svg text')].map((t) => {
    const s = t.ownerSVGElement;
    return parseFloat(getComputedStyle(t).fontSize) * s.getBoundingClientRect().width / s.viewBox.baseVal.width;
  }));
  const marks = [...ri.querySelectorAll('g.ip')].map((g) => {
    const m = g.querySelector('circle, rect'), b = m.getBBox();
    return { row: g.dataset.row, table: g.dataset.table, x: Number(g.dataset.x), ratio: Number(g.dataset.ratio), bound: g.dataset.bound, cls: m.getAttribute('class'), cx: b.x + b.width / 2 };
  });
  const ridge = [...ri.querySelectorAll('line.iridge')].map((l) => ({ ridge: Number(l.dataset.ridge), table: l.dataset.table, x: Number(l.getAttribute('x1')) }));
  return {
    charts: [ri, rs].map((r) => [...r.querySelectorAll('details.chart[data-experiment]')].map((d) => d.dataset.experiment)),
    curves: [...ri.querySelectorAll('g.icurve')].map((g) => g.dataset.table),
    marks, ridge,
    readI: (ri.querySelector('figure.xchart > p.xread') || {}).textContent || '',
    readS: (rs.querySelector('figure.xchart > p.xread') || {}).textContent || '',
    cells: [...rs.querySelectorAll('g.scell')].map((g) => ({ dist: g.dataset.dist, m: Number(g.dataset.m), c: Number(g.dataset.c), verdict: g.dataset.verdict,
      cls: g.querySelector('rect').getAttribute('class'), text: g.textContent })),
    cross: [...rs.querySelectorAll('g.sdist line.xcross')].map((l) => ({ dist: l.dataset.dist, m: Number(l.dataset.m), c: Number(l.dataset.c) })),
    minText: Math.min(minText(ri), minText(rs)),
  };
}, [XI, XS]);

test('the memory experiments: the penalty curve and the crossover map from the H200 documents, light and dark, 1280 and 390 px', async () => {
  const di = FIX['arithmetic-intensity'].document, ds = FIX['data-sort'].document;
  const itabs = di.tables.filter((t) => t.experiment === 'intensity');
  assert.equal(itabs.length, 2, 'the fixture has the streaming and the chase tables');
  for (const width of [1280, PHONE]) {
    const { p, first } = await shown(width);
    assert.ok(!first.some((u) => /arithmetic-intensity|data-sort|experiments\.js/.test(u)), `the first load fetches neither experiment: ${first.join(' ')}`);
    const got = await drawn(p);
    assert.deepEqual(got.charts, [['intensity'], ['data-sort']], 'one chart per document: the penalty curve, the crossover map');
    // The curve: each lane-split row with F and L, at its DRAM intensity, coloured by its bound.
    assert.deepEqual(got.curves, itabs.map((t) => t.id), 'a curve per intensity table');
    const want = itabs.flatMap((t) => t.rows.filter((r) => r.point.arrangement === 'lanes' && r.intensity.fmas !== null)
      .map((r) => ({ row: r.name, table: t.id, x: r.intensity.dram_intensity, ratio: r.ratio, bound: r.intensity.bound })));
    assert.ok(want.every((m) => Number.isFinite(m.x)), 'the fixture has every point\'s DRAM intensity');
    assert.equal(want.length, 12);
    assert.deepEqual(got.marks.map(({ row, table, x, ratio, bound }) => ({ row, table, x, ratio, bound })).sort((a, b) => (a.table + a.row).localeCompare(b.table + b.row)),
      want.sort((a, b) => (a.table + a.row).localeCompare(b.table + b.row)), 'the marks are the lane-split rows at their intensity');
    for (const m of got.marks) assert.equal(m.cls, m.bound === 'compute' ? 'icomp' : 'imem', `${m.table} ${m.row}: coloured by its bound`);
    // Log axis: equal ratios of intensity, equal distances.
    const xs = got.marks.filter((m) => m.table === itabs[0].id).sort((a, b) => a.x - b.x);
    const per = (a, b) => (b.cx - a.cx) / Math.log10(b.x / a.x);
    assert.ok(Math.abs(per(xs[0], xs[1]) - per(xs[3], xs[4])) < 0.5, 'the intensity axis is logarithmic');
    assert.deepEqual(got.ridge.map((r) => r.ridge), itabs.map((t) => t.roofline.ridge), 'each table\'s ridge drawn');
    const s0 = itabs[0].rows.find((r) => r.name === 'f1-l16-lanes'), s9 = itabs[0].rows.find((r) => r.name === 'f256-l1-lanes');
    for (const frag of [`at ${ix(s0.intensity.dram_intensity)} FLOP/byte the lane-split branch costs ${fx(s0.ratio, 3)}\u00d7 [${fx(s0.ratio_ci.lo, 3)}, ${fx(s0.ratio_ci.hi, 3)}]`, `at ${ix(s9.intensity.dram_intensity)} it costs ${fx(s9.ratio, 3)}\u00d7`,
      `ridge, measured in the same run, is at ${fx(itabs[0].roofline.ridge, 1)} FLOP/byte`]) assert.ok(got.readI.includes(frag), `the curve's sentence says "${frag}": ${got.readI}`);
    assert.match(got.readI, /^Reading it: with streaming loads/);
    // The map: a cell per document cell, its ratio and verdict; the crossover per row.
    assert.equal(got.cells.length, ds.sort.cells.length);
    for (const c of ds.sort.cells) {
      const g = got.cells.find((x) => x.dist === c.distribution && x.m === c.m && x.c === c.c);
      assert.ok(g, `cell ${c.distribution} M ${c.m} C ${c.c} drawn`);
      assert.equal(g.verdict, c.verdict);
      assert.equal(g.cls, c.verdict === 'pays' ? 'xpay' : 'xcost', `${c.distribution} M ${c.m} C ${c.c}: filled where it pays, hatched where it costs`);
      assert.ok(g.text.includes(`${fx(c.ratio, 2)}\u00d7`) && g.text.includes(c.verdict), `${c.distribution} M ${c.m} C ${c.c}: ${g.text}`);
    }
    assert.deepEqual(got.cross, ds.sort.crossover.filter((x) => Number.isInteger(x.c)).map((x) => ({ dist: x.distribution, m: x.m, c: x.c })), 'the crossover C marked per row');
    assert.ok(got.readS.includes('from C = 128 with 32 materials') && got.readS.includes('No cell is ambiguous'), `the map's sentence: ${got.readS}`);
    assert.ok(got.minText >= 12, `the charts' smallest text is ${got.minText.toFixed(1)} px at ${width} px`);
    assert.deepEqual(await tooWide(p), [], `nothing wider than the screen at ${width} px`);
    for (const scheme of ['light', 'dark']) {
      await p.emulateMedia({ colorScheme: scheme });
      for (const [x, exp] of [[XI, 'intensity'], [XS, 'data-sort']]) {
        const fig = p.locator(`${x} details.chart[data-experiment="${exp}"]`);
        await fig.scrollIntoViewIfNeeded();
        await fig.screenshot({ path: path.join(outDir, `memory-${exp}-${width}-${scheme}.png`) });
      }
    }
    await p.emulateMedia({ colorScheme: 'light' });
    await closePage(p);
  }
  const { bad } = contractCheck(reads);
  assert.deepEqual(bad, [], 'the widget reads only fields api/openapi.yaml defines');
});

test('the penalty curve at DRAM intensities where the counters measured them; an ambiguous cell marked, not by colour alone', async () => {
  const { p } = await shown(1280, {
    // Planted: each row's DRAM intensity, the intensity over 8 (a chase reads 32-byte sectors for 4-byte loads).
    'arithmetic-intensity': (d) => { for (const t of d.tables) for (const r of t.rows) if (r.intensity.intensity !== null) r.intensity.dram_intensity = r.intensity.intensity / 8; },
    // Planted: one cell's interval straddles 1.
    'data-sort': (d) => { Object.assign(d.sort.cells[0], { ratio: 1.001, ratio_ci: [0.99, 1.01], verdict: 'ambiguous', ambiguous: true }); },
  });
  const got = await drawn(p);
  const d = FIX['arithmetic-intensity'].document;
  for (const m of got.marks) {
    const r = d.tables.find((t) => t.id === m.table).rows.find((x) => x.name === m.row);
    assert.equal(m.x, r.intensity.intensity / 8, `${m.row}: at its DRAM intensity`);
  }
  assert.match(got.readI, /at 0\.004 FLOP\/byte/, 'the sentence reads the DRAM intensity');
  const c0 = FIX['data-sort'].document.sort.cells[0];
  const g = got.cells.find((x) => x.dist === c0.distribution && x.m === c0.m && x.c === c0.c);
  assert.equal(g.cls, 'xamb', 'the ambiguous cell outlined');
  assert.ok(g.text.includes('?'), `the ambiguous cell carries a question mark: ${g.text}`);
  assert.ok(got.readS.includes('1 cell (marked ?) cannot tell'), got.readS);
  await closePage(p);
});

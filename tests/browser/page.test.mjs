// page.test.mjs -- the lesson page as a reader first meets it, in a real
// browser against the real server (the session of harness.mjs: the
// committed H200 capture on a server without a GPU):
// - the first load with nothing cached: each URL fetched once, at most 12
//   requests with every module and stylesheet counted, nothing wider than
//   the screen at 1280 and 390 px, at most 5 phone screens tall before any
//   panel opens, at most 150 KB transferred (gzip, the slim documents), no
//   row's listing; opening an instruction view fetches that row's listing,
//   one request of at most 25 KB;
// - every row's GPU verdict in one sentence from its witness and counters,
//   and Part 2's predicated row saying so beside its ratio with what it
//   means for splitting;
// - the page's prose quotes Part 1's predicates as the table labels them;
// - screenshots at 1280x900 and 390x844, light and dark: the first fold,
//   the first table's rows with their sentences, the predicated row;
// - no text reading null, undefined or NaN after each flow, and the
//   widget's reads against api/openapi.yaml, as in widget.test.mjs.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  S, startSession, endSession, W, W2, SUITE, PHONE, outDir, fx, pageErrors, reads, pageReads, closePage, strayText,
  assertNoStray, tooWide, recordRequests, kb, contractCheck, openPage, editEvidence, evidenceDoc, shotsLD,
} from './harness.mjs';

before(startSession);
after(endSession);
afterEach(async () => { if (S.page && !S.page.isClosed()) await assertNoStray(S.page); });

// The lesson page as a reader's browser first loads it, at `width`, with
// nothing cached: the requests it made, and the S.page, once both widgets
// show their numbers and the network is quiet.
async function firstLoad(width, height) {
  const p = await S.ctx.newPage();
  p.on('pageerror', (e) => pageErrors.push(String(e)));
  await p.setViewportSize({ width, height });
  const cdp = await S.ctx.newCDPSession(p);
  await cdp.send('Network.enable');
  await cdp.send('Network.clearBrowserCache');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const rec = recordRequests(p);
  await p.goto(S.base + '/');
  await p.waitForFunction(() => [...document.querySelectorAll('divergence-widget')].every((w) => w.getAttribute('state') === 'shown'), null, { timeout: 15000 });
  await p.waitForLoadState('networkidle');
  return { p, got: await rec.stop() };
}

// The bytes of what opening row `ri`'s instruction view of widget `sel` fetched.
async function listingBytes(p, sel, ri) {
  const rec = recordRequests(p);
  await p.locator(`${sel} .tables table`).first().locator(`tr[data-say="${ri}"] button.ib`).click();
  await p.locator(`${sel} section.ins h3`).first().waitFor();
  await p.waitForLoadState('networkidle');
  return rec.stop();
}

test('the lesson page\'s first load: each URL once, at most 12 requests, nothing wider than the screen, at most 5 phone screens tall', async () => {
  for (const [width, height] of [[1280, 900], [PHONE, 844]]) {
    const { p, got } = await firstLoad(width, height);
    const urls = got.map((g) => g.url);
    assert.deepEqual(urls.filter((u, k) => urls.indexOf(u) !== k), [], `no URL fetched twice: ${urls.join(' ')}`);
    assert.ok(got.length <= 12, `${got.length} requests on first load, every module and stylesheet counted: ${urls.join(' ')}`);
    assert.ok(got.every((g) => g.status === 200), `every request answered: ${JSON.stringify(got)}`);
    // Bytes as transferred (headers and the encoded body: gzip where the browser asks for it).
    const bytes = got.reduce((a, g) => a + g.bytes, 0);
    console.log(`first load at ${width} px: ${got.length} requests, ${kb(bytes)} transferred: ` +
      got.map((g) => `${new URL(g.url).pathname} ${kb(g.bytes)}`).join(', '));
    assert.ok(bytes <= 150 * 1024, `the first load transferred ${kb(bytes)}, more than 150 KB`);
    assert.ok(got.every((g) => !g.url.includes('/rows/')), 'no row\'s listing on the first load');
    assert.deepEqual(await tooWide(p), [], `nothing wider than the screen at ${width} px`);
    assert.deepEqual(await strayText(p), []);
    const tall = await p.evaluate(() => document.documentElement.scrollHeight);
    console.log(`the lesson page at ${width} px before any panel opens: ${tall} px tall (${(tall / height).toFixed(2)} screens)`);
    if (width === PHONE) assert.ok(tall <= 5 * 844, `the page is ${tall} px tall at ${PHONE} px, more than 5 screens`);
    // The first fold, the first table's rows with their sentences, Part 2's predicated row.
    for (const scheme of ['light', 'dark']) {
      await p.emulateMedia({ colorScheme: scheme });
      await p.evaluate(() => window.scrollTo(0, 0));
      await p.screenshot({ path: path.join(outDir, `first-fold-${width}-${scheme}.png`) });
      await p.locator(`${W} .tables .scroll`).first().evaluate((e) => e.scrollIntoView({ block: 'start' }));
      await p.screenshot({ path: path.join(outDir, `gpu-sentences-${width}-${scheme}.png`) });
      await p.locator(`${W2} tr[data-say] .means`).first().evaluate((e) => e.closest('tr').previousElementSibling.scrollIntoView({ block: 'start' }));
      await p.screenshot({ path: path.join(outDir, `predication-${width}-${scheme}.png`) });
    }
    await p.emulateMedia({ colorScheme: 'light' });
    if (width === 1280) {
      // Opening a row's instruction view: its listing, one request of at most 25 KB (and, the first time, the view's module).
      const d1 = await evidenceDoc(SUITE), d2 = await evidenceDoc('day22-part2');
      const one = await listingBytes(p, W, d1.tables[0].rows.findIndex((r) => r.name === 'lane-parity'));
      const two = await listingBytes(p, W2, d2.tables[0].rows.findIndex((r) => r.name === 'per-iteration-lane-parity'));
      for (const [what, list] of [['Part 1 lane parity (the first listing opened)', one], ['Part 2 per-iteration lane parity (the second)', two]])
        console.log(`opening the instruction view of ${what}: ${list.length} requests, ${kb(list.reduce((a, g) => a + g.bytes, 0))}` +
          (list.length ? `: ${list.map((g) => `${new URL(g.url).pathname} ${kb(g.bytes)}`).join(', ')}` : ''));
      assert.deepEqual(two.map((g) => g.url).filter((u) => one.some((o) => o.url === u)), [], 'the view\'s module is fetched once');
      for (const list of [one, two]) {
        const rows = list.filter((g) => g.url.includes('/rows/'));
        assert.equal(rows.length, 1, `one listing fetched: ${list.map((g) => g.url).join(' ')}`);
        assert.equal(rows[0].status, 200);
        assert.ok(rows[0].bytes <= 25 * 1024, `the listing transferred ${kb(rows[0].bytes)}, more than 25 KB`);
      }
    }
    await closePage(p);
  }
});

// The sentence a row's witness and counters make, written from the
// contract's fields independently of the widget: a predicated branch
// (the counters' verdict), else the witness's split warps and lanes, else
// the counters' divergent branches and lanes; each with the GPU's count of
// instructions against the baseline row's.
function sentenceWant(t, i) {
  const r = t.rows[i], o = r.observed, c = r.counters, base = i === t.baseline_row;
  if (!o && !c) return null;
  const vs = base ? ' (the baseline)' : c && typeof c.instructions_vs_baseline === 'number' ? `: ${fx(c.instructions_vs_baseline, 2)}\u00d7 the baseline\u2019s instructions` : '';
  if (c && c.predicated) return 'The compiler predicated this branch: the GPU took no divergent branch, and every warp issued both paths\u2019 instructions with all 32 lanes, ' +
    `the lanes whose predicate is off doing nothing${vs}.`;
  if (o) {
    const per = o.iterations > 1 ? ` at each of its ${o.iterations} iterations` : '';
    if (o.split_warps.max === 0) return `The GPU split no warp${per}: all 32 lanes of each warp took the same path${vs}.`;
    const allPartial = o.runs.every((n, k) => n > 0 && n === o.partial_runs[k]);
    const [a, b] = o.lanes_per_run;
    const lanes = allPartial ? (a === b ? `, ${a} of 32 lanes each` : `, ${a} lanes on path A and ${b} on path B`) : '';
    return `The GPU ran both paths in all ${r.warps_per_block} warps${per}${lanes}${vs}.`;
  }
  return `The GPU took ${fx(c.divergent_branches_per_block, 2)} divergent branches per block, ` +
    `${fx(c['smsp__thread_inst_executed_per_inst_executed.ratio'], 1)} of 32 lanes active per instruction${vs}.`;
}

// Each row's sentence (the visible text of its .gpu line) in table `ti` of widget `sel`.
const sentencesOf = (p, sel, ti) => p.locator(`${sel} .tables table`).nth(ti).locator('tr[data-say]').evaluateAll((trs) => trs.map((tr) => {
  const g = tr.querySelector('.gpu');
  if (!g) return null;
  const k = g.cloneNode(true);
  k.querySelectorAll('.means').forEach((e) => e.remove());
  return k.textContent;
}));

test('every row says what the GPU did in one plain sentence; the predicated row says so where its ratio is, and what it means for the ratio', async () => {
  // The capture: Part 1's split rows in the issue's words.
  const t1 = S.doc.tables[0];
  const got1 = await sentencesOf(S.page, W, 0);
  assert.deepEqual(got1, t1.rows.map((_, i) => sentenceWant(t1, i)));
  const lp = t1.rows.findIndex((r) => r.name === 'lane-parity');
  assert.match(got1[lp], /^The GPU ran both paths in all 8 warps, 16 of 32 lanes each: \d\.\d\d\u00d7 the baseline\u2019s instructions\.$/);
  assert.equal(await S.page.locator(`${W} .pm`).count(), 0, 'no Part 1 row is predicated');
  // Part 2: the compiler predicated the per-iteration branch; the row says
  // so beside its ratio, and what that means for splitting, from the
  // reading of the row against the warp-uniform one and the two rows' counts.
  const d2 = await evidenceDoc('day22-part2'), t2 = d2.tables[0];
  assert.deepEqual(await sentencesOf(S.page, W2, 0), t2.rows.map((_, i) => sentenceWant(t2, i)));
  const pi = t2.rows.findIndex((r) => r.name === 'per-iteration-lane-parity'), r2 = t2.rows[pi];
  assert.equal(r2.counters.predicated, true, 'the capture\'s per-iteration lane parity is predicated');
  const g = t2.readings.find((x) => x.row === r2.name), other = t2.rows.find((x) => x.name === g.against);
  const row2 = S.page.locator(`${W2} .tables table`).first().locator(`tr[data-row="${pi}"]`);
  assert.equal(await row2.locator('td[data-k="ratio"] .pm').textContent(), `predicated splitting ${fx(g.ratio, 2)}\u00d7, model ${fx(g.predicted, 2)}\u00d7`);
  assert.equal(await S.page.locator(`${W2} .pm`).count(), 1, 'only the predicated row is marked');
  assert.equal(await S.page.locator(`${W2} tr[data-say="${pi}"] .means`).textContent(),
    `So splitting the warps costs ${fx(g.ratio, 2)}\u00d7 against ${other.label}, not the model\u2019s ${fx(g.predicted, 2)}\u00d7: ` +
    `both rows issue the same instructions (${fx(r2.counters.instructions_vs_baseline, 2)}\u00d7 and ${fx(other.counters.instructions_vs_baseline, 2)}\u00d7 the baseline\u2019s).`);
  assert.match(fx(g.ratio, 2), /^1\.0\d$/, 'splitting costs about nothing when both rows issue the same instructions');
  // The sentence describes its row for a screen reader.
  const th = S.page.locator(`${W2} .tables table`).first().locator(`tr[data-row="${pi}"] th`);
  assert.ok((await th.getAttribute('aria-describedby')).split(' ').includes(await S.page.locator(`${W2} tr[data-say="${pi}"] .gpu`).getAttribute('id')));
  await assertNoStray(S.page);

  // Edited in through the route: the witness alone, the counters alone, neither, and a witness that disagrees.
  const edit = (body, suite) => {
    if (suite !== SUITE) return;
    const t = body.document.tables[0], by = (n) => t.rows.find((r) => r.name === n);
    by('lane-half').counters = null;
    by('lane-parity').observed = null;
    Object.assign(by('block-parity'), { observed: null, counters: null });
    Object.assign(by('warp-parity').observed, { agrees: false, verdict: 'differs from the model in block 3' });
  };
  const p = await openPage(S.base, W, { setup: (q) => editEvidence(q, [SUITE], edit) });
  const d = await evidenceDoc(SUITE, edit), t = d.tables[0], at = (n) => t.rows.findIndex((r) => r.name === n);
  const got = await sentencesOf(p, W, 0);
  assert.equal(got[at('lane-half')], 'The GPU ran both paths in all 8 warps, 16 of 32 lanes each.', 'the witness alone: no instruction count');
  assert.equal(got[at('lane-parity')], sentenceWant(t, at('lane-parity')));
  assert.match(got[at('lane-parity')], /^The GPU took 8\.00 divergent branches per block, 16\.1 of 32 lanes active per instruction: /);
  assert.equal(got[at('block-parity')], null, 'no testimony, no sentence');
  assert.equal(await p.locator(`${W} tr[data-say="${at('block-parity')}"] details.more`).count(), 1, 'the details are still there');
  assert.equal(got[at('warp-parity')], 'The GPU split no warp: all 32 lanes of each warp took the same path (the baseline). Its record differs from the model: differs from the model in block 3.');
  await closePage(p);
  await shotsLD(S.page, 'gpu-sentences-table', `${W} .tables .scroll`);
  await shotsLD(S.page, 'predication-row', null, { at: `${W2} tr[data-row="${pi}"]`, top: true });
});


test('the page\'s prose names Part 1\'s predicates as the table labels them', async () => {
  // The paragraphs that read numbers off Part 1's table (.needs-part1): each predicate they quote is a row of it.
  const labels = S.doc.tables[0].rows.map((r) => r.label);
  const quoted = await S.page.locator('p.needs-part1 code').allTextContents();
  assert.ok(quoted.length >= 4, `the prose quotes the table's predicates: ${quoted}`);
  assert.deepEqual(quoted.filter((q) => !labels.includes(q)), [], `quoted predicates that are no label of the table (${labels.join('; ')})`);
});

test('the pages here read only fields api/openapi.yaml defines for each answer', async () => {
  reads.push(...(await pageReads(S.page)));
  const { bad } = contractCheck(reads);
  assert.deepEqual(bad, [], 'reads of fields the document does not define');
  assert.deepEqual(pageErrors, [], 'no uncaught errors in the pages');
});

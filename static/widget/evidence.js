/* evidence.js -- a divergence.v1 document on the page: the provenance, the
 * night against the previous one, the warnings, and per table its rows,
 * notes, instruction panel and chart.
 *
 * Every row shows, with no sideways scroll: the model (warps split,
 * threads on path A), the ratio with its 95% interval beside the
 * prediction, and under it the GPU's verdict in one sentence, built from
 * the row's witness (`observed`), counters and, for a branch the compiler
 * predicated, the table's reading of that row against the row that issues
 * the same instructions; that row says "predicated" where its ratio is.
 * Time, noise, the FMA floor, the check and the counters' figures open in
 * place (a <details> per row). A row with an instruction profile has an
 * "Instructions" button; the view it opens (listing.js) is loaded when
 * first asked for. At narrow widths each row becomes a card.
 */
import { el, svg, kids, fin, fx, fixed, ciOf, pct, ago, utcMs, utcText, cuver, count, capital, stop, rowLabel, D } from './format.js';
import { chart } from './chart.js';

// Table `stop_reason` of a table whose intervals missed their target.
const STOPPED = { cap: 'sampling kept its most rounds', budget: 'sampling spent its time budget', throttled: 'too many rounds were sampled while the GPU throttled' };
const SINCE_ROWS = 3; // changed ratios named under the provenance; the rest counted
const COLS = ['Predicate', 'Warps split (per block)', 'Threads on path A (per block)', 'Ratio vs baseline', 'Predicted ratio'];
// The same, shorter, over each figure where a row is a card.
const CARD = ['Predicate', 'Warps split', 'Threads on A', 'Ratio', 'Predicted'];

const ncReason = (r) => r.comparable_reason || 'does different work from the baseline';
const checkText = (c) => (!c ? D : c.ok ? 'ok' : `FAIL ${c.mismatches}, first thread ${c.first_mismatch}`);
const times = (v) => `${fx(v, 2)}\u00d7`;

// The provenance line: the GPU, driver, CUDA, when (with its real age for
// stored evidence) and the SM clock measured during the run. `live`: null
// for stored evidence, else {age_s} of a measurement made on request.
export function provenance(doc, prov, live) {
  const d = doc.device || {};
  const finished = prov.finished_utc || doc.finished_utc || '';
  const when = utcText(finished), t = utcMs(finished);
  let head = 'Measured on ';
  if (live) head = fin(live.age_s) && live.age_s >= 5 ? `Measured ${ago(live.age_s * 1000)} (a cached result of the same request) on ` : 'Measured just now on ';
  const parts = [
    head + (d.name || prov.gpu_name || 'an unknown GPU'),
    d.nvidia_driver_version ? 'driver ' + d.nvidia_driver_version : 'CUDA driver ' + cuver(d.driver_version_raw),
    'CUDA runtime ' + cuver(d.runtime_version_raw),
    when ? `${when} UTC${!live && t != null ? ` (${ago(Date.now() - t)})` : ''}` : 'date unknown',
    `SM clock ${fx(d.measured_sm_clock_mhz, 0)} MHz measured` + (fin(d.rated_sm_clock_mhz) ? ` (rated ${fx(d.rated_sm_clock_mhz, 0)} MHz)` : ''),
  ];
  return parts.join(' \u00b7 ') + '.';
}

// The document's warnings and the tables' missed targets, each once.
export function warnings(doc) {
  const out = new Set((doc.warnings || []).filter((w) => typeof w === 'string' && w));
  // Table `intervals_ok`: the interval the stopping rule judges, not the per-sample spread.
  for (const t of doc.tables || []) if (t.intervals_ok === false) out.add(`${t.title}: ${STOPPED[t.stop_reason] || 'sampling stopped'} with an interval` +
    ` wider than \u00b1${fx(100 * t.halfwidth_target, 2)}% of its ratio (the widest \u00b1${fx(100 * t.worst_halfwidth, 2)}%).`);
  return [...out];
}

// The lines under the provenance of stored evidence (Evidence
// `comparison`): the night against the previous good night on the same
// GPU model. "Unchanged since <date>" when every ratio is the same; else
// each changed ratio (at most SINCE_ROWS, the ambiguous after the higher
// and lower) with its change and interval, and what changed around the
// numbers (driver, CUDA, build, clocks). Nothing on a first night or for a
// record from before comparisons.
export function sinceLines(ev, doc) {
  const c = ev && ev.comparison;
  if (!c || !c.previous) return [];
  const prev = c.previous.date || 'the previous night', n = c.counts || {}, tol = `${pct(c.tolerance)}%`;
  const compared = ['same', 'higher', 'lower', 'ambiguous'].reduce((k, w) => k + (fin(n[w]) ? n[w] : 0), 0);
  const env = (Array.isArray(c.environment) ? c.environment : []).flatMap((e, k) => [k ? '; ' : '', `${e.what} ${e.before}`,
    el('span', { 'aria-hidden': 'true' }, ' \u2192 '), el('span', { class: 'sr' }, ' to '), e.after]);
  const tables = doc.tables || [];
  const title = (id) => { const t = tables.find((x) => x.id === id); return tables.length > 1 && t ? `${t.title}: ` : ''; };
  const ratios = (k) => `${k} ratio${k === 1 ? '' : 's'}`;
  const out = [];
  if (!compared) return [el('li', {}, `No ratio could be compared with ${prev}: one of the two nights has no intervals.`)];
  if (c.unchanged_since) return [el('li', { 'data-label': 'same' }, `Unchanged since ${c.unchanged_since}`, ` (${ratios(compared)} the same within ${tol})`,
    env.length ? ['; since ', prev, ': ', ...env] : null, '.')];
  const rank = { higher: 0, lower: 0, ambiguous: 1 };
  const rows = (Array.isArray(c.rows) ? c.rows : []).filter((r) => r.previous && r.previous.label in rank)
    .sort((a, b) => rank[a.previous.label] - rank[b.previous.label]);
  for (const r of rows.slice(0, SINCE_ROWS)) {
    const ch = r.previous, ci = ch.change_ci || {};
    const what = ch.label === 'higher' ? [el('b', {}, `higher by ${pct(ch.change)}%`), ` [${pct(ci.lo)}, ${pct(ci.hi)}]`]
      : ch.label === 'lower' ? [el('b', {}, `lower by ${pct(-ch.change)}%`), ` [${pct(-ci.hi)}, ${pct(-ci.lo)}]`]
        : [el('b', {}, 'ambiguous'), `: ${pct(ch.change, true)}% [${pct(ci.lo, true)}, ${pct(ci.hi, true)}]`];
    out.push(el('li', { 'data-label': ch.label, 'data-table': r.table, 'data-row': r.name }, title(r.table), el('code', {}, r.label), ': ', what,
      ` since ${prev}`, ch.label === 'ambiguous' ? ` (neither shown within ${tol} nor beyond it)` : null, '.'));
  }
  const more = rows.length - SINCE_ROWS;
  if (more > 0) out.push(el('li', {}, `${more} more ratio${more === 1 ? ' changed or is' : 's changed or are'} ambiguous.`));
  if (!rows.length) out.push(el('li', {}, `No ratio changed by more than ${tol} since ${prev}.`));
  if (env.length) out.push(el('li', { 'data-k': 'environment' }, `Changed since ${prev}: `, ...env, '.'));
  return out;
}

// Table `readings` (Part 2: one row read against another) about row `r`.
const readingOf = (t, r) => (Array.isArray(t.readings) ? t.readings : []).find((g) => g.row === r.name) || null;

// The GPU's lanes in the split warps of a witness (Row `observed`): "16 of
// 32 lanes each", or each path's; only where every run of both paths was
// partial, so lanes_per_run is the split warps' own. '' otherwise.
function splitLanes(o) {
  const [a, b] = Array.isArray(o.lanes_per_run) ? o.lanes_per_run : [];
  const all = Array.isArray(o.runs) && Array.isArray(o.partial_runs) && o.runs.every((n, k) => n > 0 && n === o.partial_runs[k]);
  if (!all || !fin(a) || !fin(b)) return '';
  return a === b ? `, ${fx(a, 0)} of 32 lanes each` : `, ${fx(a, 0)} lanes on path A and ${fx(b, 0)} on path B`;
}

// The GPU's verdict on row `i` of table `t` in one plain sentence, from its
// witness (`observed`: the lanes each warp's paths ran with) and counters
// (divergent branches, lanes per instruction, warp instructions against
// the baseline row's); null when the document has neither. A scenario row's
// witness counts its own paths, so its sentence is the counters'.
export function gpuSentence(t, r, i) {
  const o = r.observed, c = r.counters, base = i === t.baseline_row;
  if (!o && !c) return null;
  const vs = c && fin(c.instructions_vs_baseline) && !base ? `: ${times(c.instructions_vs_baseline)} the baseline\u2019s instructions` : base ? ' (the baseline)' : '';
  if (c && c.predicated) {
    return 'The compiler predicated this branch: the GPU took no divergent branch, and every warp issued both paths\u2019 instructions ' +
      `with all 32 lanes, the lanes whose predicate is off doing nothing${vs}.`;
  }
  if (o && r.kernel !== 'scenario' && fin(o.split_warps_per_block)) {
    const W = r.warps_per_block, s = o.split_warps_per_block, c0 = o.split_warps;
    const per = o.iterations > 1 ? ` at each of its ${o.iterations} iterations` : '';
    const every = (Array.isArray(o.lanes_per_run) ? o.lanes_per_run : []).filter(fin);
    let say;
    if (s === 0 && (!c0 || c0.max === 0)) say = `The GPU split no warp${per}: ${every.length && every.every((v) => v === 32) ? 'all 32' : 'all the'} lanes of each warp took the same path`;
    else if (s === W && (!c0 || c0.min === c0.max)) say = `The GPU ran both paths in all ${W} warps${per}${splitLanes(o)}`;
    else say = `The GPU ran both paths in ${count(s, c0, W)} warps${per}`;
    return say + vs + '.' + (o.agrees === false && o.verdict ? ` Its record differs from the model: ${stop(o.verdict)}` : '');
  }
  if (!c) return o.verdict ? `The GPU\u2019s witness ${stop(o.verdict)}` : null;
  return `The GPU took ${fx(c.divergent_branches_per_block, 2)} divergent branches per block, ` +
    `${fx(c['smsp__thread_inst_executed_per_inst_executed.ratio'], 1)} of 32 lanes active per instruction${vs}.`;
}

// What a predicated branch means for the ratio: Part 2's reading of the
// row against the row that asks the same question without splitting, and
// the two rows' instruction counts. Null when the row is not predicated.
function predicatedWords(t, r) {
  if (!(r.counters && r.counters.predicated)) return null;
  const g = readingOf(t, r), other = g && (t.rows || []).find((x) => x.name === g.against);
  if (!g) return 'The model counts each path once per split warp; predicated code issues both paths in every warp, split or not, so splitting costs little here.';
  const a = r.counters.instructions_vs_baseline, b = other && other.counters ? other.counters.instructions_vs_baseline : null;
  const same = fin(a) && fin(b) && Math.abs(a / b - 1) < 0.02;
  return `So splitting the warps costs ${times(g.ratio)} against ${rowLabel(t, g.against)}, not the model\u2019s ${times(g.predicted)}: ` +
    (same ? `both rows issue the same instructions (${times(a)} and ${times(b)} the baseline\u2019s).`
      : `this row issues ${times(a)} the baseline\u2019s instructions, that one ${times(b)}.`);
}

// The row's figures that open in place: time, noise, floor, check, and the
// witness's and counters' own words and figures.
function facts(r) {
  const c = r.counters, o = r.observed, tci = r.median_ci_ms;
  const item = (k, name, v, under) => el('div', { 'data-k': k, class: k === 'check' && r.check && !r.check.ok ? 'fail' : null },
    el('dt', {}, name), el('dd', {}, el('span', { class: 'v' }, v), under));
  const n = (k, d) => (c ? fx(c[k], d) : D);
  return el('dl', { class: 'facts' },
    item('time', 'Time (ms, median)', fx(r.time_ms && r.time_ms.median, 3),
      tci && fin(tci.lo) && fin(tci.hi) ? el('span', { class: 'ci' }, ` [${fixed(tci.lo, 3)}, ${fixed(tci.hi, 3)}]`) : null),
    item('noise', 'Noise (%)', fin(r.noise) ? fx(r.noise * 100, 2) : D),
    fin(r.floor_fraction) ? item('floor', 'FMA floor', `${fx(r.floor_fraction * 100, 0)}% of the time`) : null,
    item('check', 'Check', checkText(r.check)),
    fin(r.samples) ? item('samples', 'Rounds kept', String(r.samples)) : null,
    o && o.verdict ? item('witness', 'Witness', o.verdict) : null,
    c ? [item('divergent', 'Divergent branches per block', n('divergent_branches_per_block', 2)),
      item('lanes', 'Lanes per instruction', n('smsp__thread_inst_executed_per_inst_executed.ratio', 1)),
      item('per-fma', 'Warp instructions per FMA', n('warp_instructions_per_fma', 2)),
      item('vs-base', 'Instructions vs baseline', n('instructions_vs_baseline', 2)),
      c.verdict ? item('counters', 'Counters', c.verdict) : null] : null);
}

// Row `i`: its cells, then the GPU's sentence and the details in a row of
// their own under it, full width. `ins` is the table's listing panel.
function rowPair(w, t, r, i, cis, ciD, ins, noteId) {
  const isBase = i === t.baseline_row, ci = cis[i];
  const first = el('th', { scope: 'row', id: `${noteId}-r${i}` }, el('code', { title: r.name }, r.label), isBase ? ' (baseline)' : null);
  if (r.comparable === false) first.append(el('span', { class: 'nc' }, el('b', {}, 'not comparable'), ncReason(r)));
  // The table's note is about its baseline: the baseline row points to it (and is described by it).
  if (isBase && t.note) { first.append(el('span', { class: 'bn' }, 'See the note under the table.')); first.setAttribute('aria-describedby', noteId); }
  const pred = !!(r.counters && r.counters.predicated), g = pred ? readingOf(t, r) : null;
  const pm = pred ? el('span', { class: 'pm' }, el('b', {}, 'predicated'),
    g ? el('span', { class: 'pw' }, ` splitting ${times(g.ratio)}, model ${times(g.predicted)}`) : null) : null;
  const cell = (k, j, v, ...under) => el('td', { 'data-k': k }, el('span', { class: 'dl', 'aria-hidden': 'true' }, CARD[j]), el('span', { class: 'v' }, v), ...under);
  const ratio = ci ? ci.point : isBase && ciD && fin(r.ratio) ? fixed(r.ratio, ciD) : fx(r.ratio, 2);
  const under = ci ? [el('span', { class: 'ci', 'aria-hidden': 'true' }, ci.text), el('span', { class: 'sr' }, `, ${ci.said}`)]
    : isBase && ciD ? [el('span', { class: 'ci' }, 'by definition')] : [];
  const main = el('tr', { 'data-row': i }, first,
    cell('split', 1, count(r.warps_split_per_block, r.warps_split, r.warps_per_block)),
    cell('on-a', 2, count(r.threads_on_a_per_block, r.threads_on_a, r.threads_per_block)),
    cell('ratio', 3, ratio, ...under, pm), cell('predicted', 4, fx(r.predicted_ratio, 2)));
  const said = gpuSentence(t, r, i), means = predicatedWords(t, r);
  const ib = ins && r.instructions !== null && typeof r.instructions === 'object' ? listingButton(w, t, r, i, ins) : null;
  const say = el('tr', { class: 'say', 'data-say': i }, el('td', { colspan: COLS.length, 'data-k': 'gpu' },
    said ? el('p', { class: 'gpu', id: `${noteId}-s${i}` }, said, means ? el('span', { class: 'means' }, means) : null) : null,
    el('div', { class: 'acts' }, el('details', { class: 'more' }, el('summary', {}, 'Time, noise, check', r.counters ? ' and counters' : ''), facts(r)), ib)));
  if (said) first.setAttribute('aria-describedby', [first.getAttribute('aria-describedby'), `${noteId}-s${i}`].filter(Boolean).join(' '));
  return [main, say];
}

// Part 2 read both ways (Table `readings`): under the rows, each reading
// as a row of its own, the row read against the other, its sentence, the
// measured and the predicted ratio in the table's ratio columns.
function readingRows(t) {
  const list = Array.isArray(t.readings) ? t.readings : [];
  if (!list.length) return null;
  const n = COLS.length, ratioAt = COLS.indexOf('Ratio vs baseline');
  const cell = (k, head, v, span) => el('td', { 'data-k': k, colspan: span > 1 ? span : null },
    head ? el('span', { class: 'dl', 'aria-hidden': 'true' }, head) : null, el('span', { class: 'v' }, v));
  return el('tbody', { class: 'readings' },
    el('tr', {}, el('th', { scope: 'rowgroup', colspan: n }, 'Read both ways: one row\u2019s time over another\u2019s, not over the baseline')),
    list.map((g) => el('tr', { 'data-reading': g.kind },
      el('th', { scope: 'row' }, el('code', {}, rowLabel(t, g.row)), ' against ', el('code', {}, rowLabel(t, g.against))),
      cell('sentence', null, g.sentence, ratioAt - 1),
      cell('ratio', 'Ratio (measured)', fx(g.ratio, 2)), cell('predicted', 'Predicted ratio', fx(g.predicted, 2)))));
}

function table(w, t, doc, ins, noteId) {
  // A ratio with an interval to the interval's decimals; the baseline
  // row's is 1 by definition, so it shows no interval and takes the
  // table's decimals (the most any of its intervals needs).
  const cis = (t.rows || []).map((r, i) => (i === t.baseline_row ? null : ciOf(r.ratio, r.ratio_ci)));
  const ciD = Math.max(0, ...cis.map((c) => (c ? c.d : 0)));
  const body = (t.rows || []).flatMap((r, i) => rowPair(w, t, r, i, cis, ciD, ins, noteId));
  const cfg = doc.config || {};
  const cfgText = [fin(cfg.blocks) ? `${cfg.blocks} blocks \u00d7 ${cfg.threads_per_block} threads, ${cfg.iterations} multiply-adds per thread` : '',
    t.kernel ? `kernel: ${t.kernel}` + (t.kernel_iterations ? ` (${t.kernel_iterations} iterations)` : '') : ''].filter(Boolean).join('; ');
  return el('div', { class: 'scroll', role: 'region', 'aria-label': t.title },
    el('table', { class: 'rows' }, el('caption', {}, el('span', {}, `${t.title} \u2014 ratios against ${t.baseline || 'the baseline row'}`), cfgText ? el('span', { class: 'cfg' }, cfgText) : null),
      el('colgroup', {}, COLS.map((_, j) => el('col', { class: `c${j}` }))),
      el('thead', {}, el('tr', {}, COLS.map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, body), readingRows(t)));
}

// The table's note (Table `note`: a baseline that puts every thread of
// the block on one path, say) under the table and the try box's analysis,
// full width, with the baseline the table suggests instead (Table
// `suggested_baseline`).
export function baseNote(t, id) {
  return el('p', { class: 'tnote', id }, stop(capital(t.note)), t.suggested_baseline
    ? [' To compare the rows, measure them against ', el('code', {}, t.suggested_baseline), ' as the baseline.'] : null);
}

// Under the table: what the GPU did not testify to, and why (the
// document's `testimony` says it once for all rows): rows without a
// listing, and a witness or counters not taken.
function testimonyNote(t, doc) {
  const ti = doc.testimony || {}, out = [];
  const why = (x) => (x && typeof x.reason === 'string' && x.reason ? `: ${x.reason}` : '');
  if (ti.instructions) {
    const none = (t.rows || []).filter((r) => r.instructions === null);
    if (none.length) out.push(!ti.instructions.taken ? `Instruction listings were not collected${why(ti.instructions)}`
      : `No instruction listing for ${none.map((r) => r.label).join(', ')}${why(ti.instructions)}`);
  }
  if (!(t.rows || []).some((r) => r.observed != null || r.counters != null)) {
    for (const [k, name] of [['witness', 'The lane witness'], ['counters', 'The hardware counters']])
      if (ti[k] && ti[k].taken === false && why(ti[k])) out.push(`${name} did not run${why(ti[k])}`);
  }
  return out.length ? el('p', { class: 'inote' }, out.map(stop).join(' ')) : null;
}

// Per table: the table, its note, what the GPU did not testify to, the
// panel a row's instruction view opens in, the chart. `key` keeps the ids
// of the main view and a measurement of the try box apart.
export function renderDoc(w, doc, key) {
  // The charts repeat the tables in a picture: open where there is room, a click away on a phone.
  const wide = w.wide, slots = [];
  const slot = (k, i, ...under) => { const s = el('div', { [`data-${k}`]: i, class: `${k}-slot` }, ...under); slots.push(s); return s; };
  const drawn = new Set();
  const out = (doc.tables || []).flatMap((t, i) => {
    const ins = listingPanel(`${w.uid}-${key}-${i}-ins`), noteId = `${w.uid}-${key}-${i}-note`;
    // An experiment table (Table `experiment`): what it is about above it,
    // and its own chart (widget/experiments.js) in place of measured beside
    // predicted. A chart of the whole document (XONCE: the penalty curve of
    // both intensity tables, the map of every data-sort cell) comes once,
    // above the experiment's first table; its other tables stand alone.
    const x = XCHART[t.experiment], once = XONCE.has(t.experiment), first = once && !drawn.has(t.experiment);
    if (once) drawn.add(t.experiment);
    const fig = x && (!once || first) ? el('details', { class: 'chart', open: wide, 'data-experiment': t.experiment }, el('summary', {}, x),
      slot('xslot', i, el('p', { class: 'hint' }, 'Drawing the chart\u2026'))) : null;
    const plain = x ? null : el('details', { class: 'chart', open: wide }, el('summary', {}, 'Chart: measured beside predicted'), chart(t, `${w.uid}-${key}-${i}`));
    return [x && (!once || first) ? slot('xabout', i) : null, once ? fig : null, table(w, t, doc, ins, noteId), t.note ? baseNote(t, noteId) : null, testimonyNote(t, doc), ins.panel,
      once ? null : fig || plain].filter(Boolean);
  });
  // The experiments' module is fetched only for a document that has experiment tables.
  if (slots.length) import('./experiments.js').then((m) => m.mount(w, doc, slots, key), (e) => {
    for (const s of slots.filter((x) => 'xslot' in x.dataset)) s.replaceChildren(el('p', { class: 'err' }, `The chart could not be loaded: ${e && e.message ? e.message : 'no reason given'}.`));
  });
  return out;
}

// The summary of an experiment table's chart, per experiment.
const XCHART = {
  'k-paths': 'Chart: time against k, split beside aligned, with the fit',
  predication: 'Chart: the LA \u00d7 LB map, predicated or branched',
  branchless: 'Chart: the branch beside compute-both-then-select',
  reconvergence: 'Chart: warps met again and clock spread at the join',
  intensity: 'Chart: the divergence penalty against arithmetic intensity',
  'data-sort': 'Chart: where sorting by material pays, the crossover map',
};
const XONCE = new Set(['intensity', 'data-sort']);

// The panel a table's instruction views open in, one row at a time. The
// view's module is fetched the first time a reader opens one, and builds
// only what is on show (listing.js).
function listingPanel(id) {
  const ins = { id, buttons: [], open: null, seq: 0 };
  ins.panel = el('section', { class: 'ins', id, hidden: true, 'aria-label': 'Instructions',
    onkeydown: (e) => { if (e.key === 'Escape' && ins.open != null) { e.preventDefault(); closeListing(ins, true); } } });
  return ins;
}

function listingButton(w, t, r, i, ins) {
  const b = el('button', { type: 'button', class: 'ib', 'aria-expanded': 'false', 'aria-controls': ins.id, 'data-row': i,
    'aria-label': `Instructions of ${r.label}`, onclick: () => toggleListing(w, t, r, i, ins) }, 'Instructions');
  ins.buttons[i] = b;
  return b;
}

async function toggleListing(w, t, r, i, ins) {
  if (ins.open === i) { closeListing(ins, true); return; }
  closeListing(ins, false);
  ins.open = i;
  const seq = ++ins.seq;
  let parts;
  try {
    const m = await import('./listing.js');
    parts = await m.listing(w, t, r, () => closeListing(ins, true));
  } catch (e) {
    parts = [el('p', { class: 'err' }, `The instruction view could not be loaded: ${e && e.message ? e.message : 'no reason given'}.`)];
  }
  if (seq !== ins.seq || ins.open !== i) return; // closed, or another row opened, meanwhile
  ins.panel.replaceChildren(...kids(parts));
  ins.panel.hidden = false;
  ins.panel.setAttribute('aria-label', `Instructions of ${r.label}`);
  ins.buttons[i].setAttribute('aria-expanded', 'true');
  const h = ins.panel.querySelector('h3');
  if (h) h.focus();
}

// Closes the panel; `refocus`: back to the button that opened it.
function closeListing(ins, refocus) {
  const was = ins.open;
  ins.open = null;
  ins.seq++;
  ins.panel.hidden = true;
  ins.panel.replaceChildren();
  for (const b of ins.buttons) if (b) b.setAttribute('aria-expanded', 'false');
  if (refocus && was != null && ins.buttons[was]) ins.buttons[was].focus();
}

/* ---- the nights ---------------------------------------------------------------
 * line, and per row a sparkline of its ratio night by night.
 *
 * The line reads the record's comparison (Evidence `comparison`, made by
 * the server when the night was filed): "Unchanged since D" from the
 * table's own entry (Comparison `tables`), else each changed ratio with its
 * change and 95% interval since the previous night, and what changed
 * around the numbers (driver, CUDA, build, GPU). A night the demo capture
 * filed under a date it gave (Evidence `filed_as`) says so, with when it
 * was measured: the date is where it is filed, not when it ran.
 *
 * The sparklines read the suite's history: the latest record's own
 * `history` (its last nights, put there by the service), else GET
 * /evidence/history/{suite} or /evidence/{gpu}/history/{suite}, fetched once per page through the
 * element's shared answers. The element mounts them only where there is a
 * previous night, so a capture of one night draws and fetches nothing. Each sparkline is a small inline SVG in the widget's palette:
 * the intervals as a band, the ratios as a line, the last night marked,
 * and the numbers in its accessible name.
 */


const HISTORY_LIMIT = 30; // nights a sparkline shows at most
const SW = 88, SH = 26, PAD = 3; // a sparkline's box, px

// The history path of the suite the widget shows, on the GPU it shows.
function historyPath(w, ev) {
  const s = encodeURIComponent(w.suite), own = !w.selected || w.selected === w.ownGpu;
  return own ? `/evidence/history/${s}?limit=${HISTORY_LIMIT}` : `/evidence/${encodeURIComponent(ev.gpu)}/history/${s}?limit=${HISTORY_LIMIT}`;
}

// What changed around the numbers (Comparison `environment`), as words.
const envWords = (c) => (Array.isArray(c.environment) ? c.environment : [])
  .filter((e) => e && e.what && e.before != null && e.after != null).map((e) => `${e.what} ${e.before} to ${e.after}`);

// A row's change since the previous night (Comparison rows[].previous).
function changeWords(r) {
  const ch = r.previous, ci = ch.change_ci || {};
  if (ch.label === 'higher') return `higher by ${pct(ch.change)}% [${pct(ci.lo)}, ${pct(ci.hi)}]`;
  if (ch.label === 'lower') return `lower by ${pct(-ch.change)}% [${pct(-ci.hi)}, ${pct(-ci.lo)}]`;
  return `${pct(ch.change, true)}% [${pct(ci.lo, true)}, ${pct(ci.hi, true)}], neither within the tolerance nor beyond it`;
}

// Table `t`'s line: null where there is no previous night to compare with.
export function nightsLine(ev, t) {
  const c = ev && ev.comparison;
  if (!c || !c.previous) return null;
  const prev = c.previous.date || 'the previous night', tol = `${pct(c.tolerance)}%`;
  const te = (Array.isArray(c.tables) ? c.tables : []).find((x) => x.id === t.id) || null;
  const rows = (Array.isArray(c.rows) ? c.rows : []).filter((r) => r.table === t.id && r.previous);
  const moved = rows.filter((r) => ['higher', 'lower', 'ambiguous'].includes(r.previous.label));
  const name = (r) => el('code', {}, r.label);
  let head;
  if (te && te.unchanged_since) head = [el('b', {}, `Unchanged since ${te.unchanged_since}`), ` (${rows.length === 1 ? 'its ratio' : `all ${rows.length}`} within ${tol})`];
  else if (moved.length) head = moved.flatMap((r, k) => [k ? '; ' : '', name(r), ' ', el('b', {}, changeWords(r).split(' [')[0]), ` [${changeWords(r).split(' [').slice(1).join(' [')}`]).concat([` since ${prev}`]);
  else if (rows.length) head = [`No ratio changed by more than ${tol} since ${prev}`];
  else head = [`No ratio could be compared with ${prev}`];
  const env = envWords(c);
  // Said where the filing date is not the day it was measured (the
  // provenance line above says when that was).
  const filed = ev.filed_as && ev.provenance && ev.provenance.finished_utc && !ev.provenance.finished_utc.startsWith(ev.filed_as)
    ? ` Filed as ${ev.filed_as} by the demo capture.` : '';
  return el('p', { class: 'nights', 'data-table': t.id }, head, env.length ? `; changed since ${prev}: ${env.join('; ')}` : '', '.', filed);
}

// The points of row `name` of table `table`: the good nights that measured it.
function pointsOf(nights, table, name) {
  const out = [];
  for (const n of nights) {
    if (!n || n.status !== 'ok' || !Array.isArray(n.rows)) continue;
    const r = n.rows.find((x) => x.table === table && x.name === name);
    if (!r || !fin(r.ratio)) continue;
    const ci = r.ratio_ci && fin(r.ratio_ci.lo) && fin(r.ratio_ci.hi) ? r.ratio_ci : null;
    out.push({ date: n.date, v: r.ratio, lo: ci ? ci.lo : r.ratio, hi: ci ? ci.hi : r.ratio, ci: !!ci });
  }
  return out;
}

// A sparkline of `pts` (at least two), or null.
export function sparkline(pts, label) {
  if (pts.length < 2) return null;
  let lo = Math.min(...pts.map((p) => p.lo)), hi = Math.max(...pts.map((p) => p.hi));
  if (!(hi - lo > 1e-3 * Math.abs(hi))) { const m = (lo + hi) / 2 || 1; lo = m * 0.995; hi = m * 1.005; }
  const x = (k) => PAD + (k * (SW - 2 * PAD)) / (pts.length - 1);
  const y = (v) => SH - PAD - ((v - lo) / (hi - lo)) * (SH - 2 * PAD);
  const xy = (k, v) => `${x(k).toFixed(1)},${y(v).toFixed(1)}`;
  const band = pts.map((p, k) => xy(k, p.hi)).concat(pts.map((p, k) => xy(k, p.lo)).reverse()).join(' ');
  const said = `${label}: the ratio on ${pts.length} nights, oldest first: ` +
    pts.map((p) => `${p.date} ${fixed(p.v, 3)}${p.ci ? ` [${fixed(p.lo, 3)}, ${fixed(p.hi, 3)}]` : ''}`).join('; ');
  const last = pts.length - 1;
  return el('span', { class: 'spark' },
    svg('svg', { viewBox: `0 0 ${SW} ${SH}`, width: SW, height: SH, role: 'img', 'aria-label': said, 'data-points': pts.length },
      svg('title', {}, said),
      svg('polygon', { class: 'sb', points: band }),
      svg('polyline', { class: 'sl', points: pts.map((p, k) => xy(k, p.v)).join(' ') }),
      pts.map((p, k) => svg('circle', { class: k === last ? 'sx' : 'sp', cx: x(k).toFixed(1), cy: y(p.v).toFixed(1), r: k === last ? 2.6 : 1.4 }))),
    el('span', { class: 'sn', 'aria-hidden': 'true' }, `${pts.length} nights`));
}

// Puts each table's line above it and each row's sparkline under its
// ratio, in the tables the element has rendered (`w.tables`).
export async function mountNights(w, ev, doc) {
  const tables = doc.tables || [];
  const boxes = [...w.tables.querySelectorAll(':scope > .scroll')];
  let lines = 0;
  tables.forEach((t, i) => { const line = boxes[i] && nightsLine(ev, t); if (line) { boxes[i].before(line); lines++; } });
  // Every table says its nights above it: the suite's list under the
  // provenance would say it again.
  if (w.since && lines && lines === tables.length) w.since.hidden = true;
  // The latest record carries its suite's last nights (`history`); a
  // record without them (an older night, a long history) asks the route.
  const page = ev.history && Array.isArray(ev.history.nights) ? ev.history
    : await w.shared(historyPath(w, ev)).then((r) => (r.status === 200 ? r.json : null));
  const nights = page && Array.isArray(page.nights) ? page.nights : [];
  if (w.evidence !== ev) return; // another document is on show now
  tables.forEach((t, i) => {
    if (!boxes[i]) return;
    (t.rows || []).forEach((row, k) => {
      if (k === t.baseline_row) return; // 1 by definition, every night
      const cell = boxes[i].querySelector(`tr[data-row="${k}"] td[data-k="ratio"]`);
      const sp = cell && sparkline(pointsOf(nights, t.id, row.name), row.label);
      if (sp) cell.append(sp);
    });
  });
}

/* listing.js -- a row's instruction view (Row `instructions`), loaded the
 * first time a reader opens one.
 *
 * First screen, for a student: the regions (before the branch, path A,
 * path B, where the warp reconverged, after it) with their instructions,
 * lanes per execution and where their stall samples went, one warp of
 * block 0 lane by lane beside the lanes the GPU counted, the kernel's source
 * lines (the runs summed per file:line, each with a lane bar), and where the
 * counts come from. The SASS listing is one more click: in program order
 * beside its source lines, one row per run of identical instructions (xN,
 * expandable to its first and last), before and after the branch collapsed
 * and built only when opened. Lane bars: lanes with the predicate on, lanes
 * active with it off, in words for screen readers; paths A and B in the
 * chart's colours; guarded instructions marked.
 */
import { el, fin, fx, big, hex, isSplit, utcText, D } from './format.js';
import { laneMap } from './chart.js';

const REGION = { before: 'Before the branch', path_a: 'Path A', path_b: 'Path B', reconverge: 'Where the warp reconverged', after: 'After the branch' };
const ORDER = ['before', 'path_a', 'path_b', 'reconverge', 'after'];
const TAG = { path_a: 'A', path_b: 'B', reconverge: 'sync' };
const CONTROL = /^(BRA|BRX|JMP|JMX|CALL|RET|EXIT|BREAK|BSSY|BSYNC|WARPSYNC|YIELD)\b/;
const inBranch = (k) => k === 'path_a' || k === 'path_b' || k === 'reconverge';
// The PC-sampling stall reasons' short names in words.
const STALL = {
  wait: 'wait (fixed latency)', selected: 'selected (issuing)', not_selected: 'not selected', long_sb: 'long scoreboard',
  short_sb: 'short scoreboard', no_inst: 'no instruction', imc: 'constant cache miss', branch_resolving: 'branch resolving',
  math: 'math pipe throttle', mio: 'MIO throttle', lg: 'LG throttle', tex: 'texture throttle', drain: 'drain',
  dispatch: 'dispatch stall', membar: 'memory barrier', sleep: 'sleeping', barrier: 'barrier', misc: 'miscellaneous',
  // CUPTI's own names (smsp__pcsamp_warps_issue_stalled_<name>) where the words differ from the name's.
  imc_miss: 'constant cache miss', long_scoreboard: 'long scoreboard', short_scoreboard: 'short scoreboard',
  no_instructions: 'no instruction', math_pipe_throttle: 'math pipe throttle', mio_throttle: 'MIO throttle',
  lg_throttle: 'LG throttle', tex_throttle: 'texture throttle',
};
const stallWords = (k) => STALL[k] || String(k).replace(/_/g, ' ');
const COLLECTOR = { 'cupti-sass': 'CUPTI\u2019s SASS metrics', ncu: 'Nsight Compute\u2019s Source page' };
const FILE_MARKS = ['\u2020', '\u2021', '\u00a7', '\u00b6', '#', '*'];

// Where a row's runs come from: a full document carries them (Row
// `instructions.runs`); the first document a page loads leaves them out
// and names the row's listing (`instructions.listing_url`), fetched here
// the first time the reader opens the view, once per page.
const listings = new Map();
export async function runsOf(w, r) {
  const x = r.instructions;
  if (Array.isArray(x.runs)) return x.runs;
  if (typeof x.listing_url !== 'string') return [];
  const key = w.base + x.listing_url;
  if (!listings.has(key)) {
    listings.set(key, w.call('GET', x.listing_url).then((a) => {
      if (a.status === 200 && a.json && Array.isArray(a.json.runs)) return a.json.runs;
      listings.delete(key); // not kept: a later open asks again
      const why = a.json && a.json.error && a.json.error.reason ? a.json.error.reason : `HTTP ${a.status}`;
      throw new Error(`the row's listing could not be fetched (${why})`);
    }));
  }
  return listings.get(key);
}

// Lanes per execution of a run (or a line's sum): active, and with the predicate on.
const activeLanes = (x) => (x.warp_executions > 0 ? x.thread_executions / x.warp_executions : 0);
const onLanes = (x) => (x.warp_executions > 0 ? x.pred_on_thread_executions / x.warp_executions : 0);
function lanesSaid(x) {
  if (!(x.warp_executions > 0)) return 'never executed';
  const a = activeLanes(x), o = onLanes(x);
  return `${fx(a, 1)} of 32 lanes active per execution` + (Math.abs(a - o) > 0.05 ? `, ${fx(o, 1)} with the predicate on` : '');
}
// A lane bar (32 lanes: pale the active ones, filled the ones with the
// predicate on, a tick at 16), its number(s), and its words.
function laneCell(x) {
  const bar = el('span', { class: 'lbar', 'aria-hidden': 'true' }, el('span', { class: 'act' }), el('span', { class: 'on' }));
  const a = activeLanes(x), o = onLanes(x), off = x.warp_executions > 0 && Math.abs(a - o) > 0.05;
  bar.firstChild.style.width = `${(Math.min(32, a) / 32) * 100}%`;
  bar.lastChild.style.width = `${(Math.min(32, o) / 32) * 100}%`;
  return [bar, el('span', { class: 'ln', 'aria-hidden': 'true' }, x.warp_executions > 0 ? fx(a, 1) : 'not run'),
    off ? el('span', { class: 'ln2', 'aria-hidden': 'true' }, `${fx(o, 1)} on`) : null, el('span', { class: 'sr' }, lanesSaid(x))];
}

// The source file most of the runs are on (`main`, named once in a
// caption) and a mark for each other file ({file: mark}).
function fileMarks(runs) {
  const n = new Map();
  for (const u of runs) if (typeof u.file === 'string') n.set(u.file, (n.get(u.file) || 0) + 1);
  const order = [...n.keys()].sort((a, b) => n.get(b) - n.get(a));
  const marks = {};
  order.slice(1).forEach((f, k) => { marks[f] = FILE_MARKS[k] || `[${k + 1}]`; });
  return { main: order[0] || null, marks };
}
const lineText = (u, one) => {
  const mark = u.file && u.file !== one.main ? one.marks[u.file] : null;
  return u.line == null ? [D] : [String(u.line), mark ? el('span', { class: 'fm', title: u.file, 'aria-label': ` in ${u.file}` }, mark) : null];
};
const fileNote = (one) => Object.entries(one.marks).map(([f, m]) => ` (a line marked ${m} is in ${f})`).join('');

// A branch the compiler predicated: guarded work (not a guarded jump,
// which a loop that branches has too) on both paths, issued with every
// lane and done by some.
function predicated(runs) {
  const on = (k) => runs.some((u) => u.region === k && u.guarded && !CONTROL.test(u.opcode) && u.warp_executions > 0 &&
    activeLanes(u) >= 31.95 && onLanes(u) < activeLanes(u) - 0.05);
  return on('path_a') && on('path_b');
}

let views = 0; // instruction views opened on this page: each its own ids

// The view of row `r` of table `t`: its parts, for the table's panel;
// `close` closes it.
export async function listing(w, t, r, close) {
  const x = r.instructions, runs = await runsOf(w, r);
  const regs = Array.isArray(x.regions) ? x.regions : [];
  const id = `${w.uid}-l${++views}`;
  const g = x.grid || {}, blk = Array.isArray(g.block) ? g.block : [];
  const shape = `${big(g.blocks)} block${g.blocks === 1 ? '' : 's'} \u00d7 ${blk[1] > 1 ? `${blk[0]}\u00d7${blk[1]}` : blk[0]} threads`;
  const scaled = fin(x.scale) && Math.abs(x.scale - 1) > 1e-9 ? `, scaled \u00d7${fx(x.scale, 2)} to this row\u2019s grid` : ' (this row\u2019s grid)';
  const when = utcText(x.collected_utc);
  const cost = x.cached ? `served from the cache of an identical launch collected ${when} UTC (collecting it took ${fx(x.collect_ms, 1)} ms)`
    : `collected ${when} UTC in ${fx(x.collect_ms, 1)} ms`;
  const sass = x.disassembler ? `SASS text by ${x.disassembler}` : `no SASS text (${x.disassembly_reason || 'no disassembler was found'}), so each instruction shows its opcode`;
  const meta = el('p', { class: 'meta' }, `Counted by ${COLLECTOR[x.source] || x.source} on ${shape}${scaled}; ${cost}; ${sass}; ` +
    `${fx(x.mapped * 100, 1)}% of its instructions mapped to a source line. Kernel: `, el('code', {}, x.kernel), '.');
  const pred = predicated(runs) ? el('p', { class: 'pred' },
    'The compiler predicated this branch: the guarded instructions of path A and path B (their guard marked) issue with all 32 lanes, ' +
    'and only the lanes whose predicate is on do the work.') : null;
  return [
    el('div', { class: 'ins-head' }, el('h3', { tabindex: -1 }, 'Instructions of ', el('code', {}, r.label)),
      el('button', { type: 'button', class: 'ib', onclick: close }, 'Close')),
    pred, regionTable(regs), warpBeside(r, regs),
    el('p', { class: 'legend' }, el('span', { class: 'lbar', 'aria-hidden': 'true' }, el('span', { class: 'act' }), el('span', { class: 'on', 'data-w': 'half' })),
      ' Each bar is the 32 lanes of a warp: filled, the lanes that executed with their predicate on; pale, lanes active with it off; ' +
      'the tick marks 16; a second number is the lanes with the predicate on. Path A solid, path B hatched (the chart\u2019s colours).'),
    sourceLines(runs), meta, sassToggle(runs, id),
  ];
}

// Per region, in the order a warp meets them: instructions, lanes per
// execution, warp executions, and under each region its top stall reasons
// as shares of its PC samples (a line of their own: they are words).
function regionTable(regs) {
  const cols = ['Region', 'Instructions', 'Lanes per execution', 'Warp executions'];
  const sorted = [...regs].sort((a, b) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind));
  const body = sorted.flatMap((g) => {
    const list = Array.isArray(g.stalls) && g.stalls.length ? g.stalls : null;
    const cell = (k, j, ...v) => el('td', { 'data-k': k }, el('span', { class: 'dl', 'aria-hidden': 'true' }, cols[j]), el('span', { class: 'v' }, ...v));
    return [el('tr', { class: 'rgn', 'data-region': g.kind }, el('th', { scope: 'row' }, el('span', { class: 'sw', 'aria-hidden': 'true' }), REGION[g.kind] || g.kind),
      cell('n', 1, String(g.instructions)), cell('lanes', 2, ...laneCell(g)), cell('warp', 3, big(g.warp_executions))),
    el('tr', { class: 'stl', 'data-region': g.kind }, el('td', { 'data-k': 'stalls', colspan: cols.length }, 'Its stall samples: ',
      el('span', { class: 'v' }, list ? list.map((q) => `${stallWords(q.reason)} ${fx(q.share * 100, 1)}%`).join(', ')
        : Array.isArray(g.stalls) ? 'none (no sample fell here)' : 'not sampled (PC sampling did not run)')))];
  });
  return el('table', { class: 'rg' }, el('caption', {}, 'Per region, over the row\u2019s full grid'),
    el('thead', {}, el('tr', {}, cols.map((c) => el('th', { scope: 'col' }, c)))), el('tbody', {}, body));
}

// One warp of block 0 (the first split one, else warp 0) from the row's
// mask (Row `lanes_block0`), beside the lanes per execution the GPU
// counted on each path: the picture and the counts together.
function warpBeside(r, regs) {
  const lanes = Array.isArray(r.lanes_block0) && r.lanes_block0.length ? r.lanes_block0 : null;
  const said = ['path_a', 'path_b'].map((k) => regs.find((g) => g.kind === k)).filter(Boolean)
    .map((g) => `${REGION[g.kind]} ${fx(g.lanes_per_execution, 1)}`);
  const counted = said.length ? el('p', { class: 'counted' }, `Lanes per executed instruction the GPU counted over the grid: ${said.join(', ')}.`) : null;
  if (!lanes) return counted;
  const k = Math.max(0, lanes.findIndex(isSplit)), w = lanes[k];
  const nA = [...w].filter((c) => c === 'A').length, nB = [...w].filter((c) => c === 'B').length;
  return el('div', { class: 'warp1' }, laneMap(lanes, r, k),
    el('div', { class: 'wsay' }, el('p', {}, `This warp sends ${nA} of its lanes down path A and ${nB} down path B.`), counted));
}

// The kernel's source lines: the runs summed per file:line, in line order
// (the main file first), each with its regions, instructions and lanes.
function sourceLines(runs) {
  const one = fileMarks(runs), by = new Map();
  for (const u of runs) {
    const k = `${u.file || ''}:${u.line == null ? '' : u.line}`;
    const s = by.get(k) || { file: u.file, line: u.line, count: 0, warp_executions: 0, thread_executions: 0, pred_on_thread_executions: 0, regions: new Map() };
    s.count += u.count;
    s.warp_executions += u.count * u.warp_executions;
    s.thread_executions += u.count * u.thread_executions;
    s.pred_on_thread_executions += u.count * u.pred_on_thread_executions;
    s.regions.set(u.region, (s.regions.get(u.region) || 0) + u.count);
    by.set(k, s);
  }
  const rank = (s) => [s.file === one.main ? 0 : 1, s.file || '\uffff', s.line == null ? Infinity : s.line];
  const lines = [...by.values()].sort((a, b) => { const p = rank(a), q = rank(b); return p[0] - q[0] || (p[1] < q[1] ? -1 : p[1] > q[1] ? 1 : 0) || p[2] - q[2]; });
  if (!lines.length) return null;
  const cols = ['Line', 'Region', 'Instructions', 'Lanes per execution', 'Warp executions'];
  const body = lines.map((s) => {
    const regs = ORDER.filter((k) => s.regions.has(k));
    const most = regs.reduce((a, k) => (s.regions.get(k) > (s.regions.get(a) || 0) ? k : a), regs[0]);
    const cell = (k, j, ...v) => el('td', { 'data-k': k }, el('span', { class: 'dl', 'aria-hidden': 'true' }, cols[j]), el('span', { class: 'v' }, ...v));
    return el('tr', { class: 'src', 'data-line': s.line == null ? '' : s.line, 'data-file': s.file || '', 'data-region': most },
      el('th', { scope: 'row' }, ...lineText(s, one)),
      cell('region', 1, regs.map((k) => REGION[k].replace(/^(Before|After|Where|Path)/, (m) => (m === 'Path' ? m : m.toLowerCase()))).join(', ')),
      cell('n', 2, String(s.count)), cell('lanes', 3, ...laneCell(s)), cell('warp', 4, big(s.warp_executions)));
  });
  return el('table', { class: 'srcl' }, el('caption', {}, `The kernel\u2019s source lines${one.main ? ` in ${one.main}` : ''}${fileNote(one)}: ` +
    'each line\u2019s instructions summed over the row\u2019s full grid'),
    el('thead', {}, el('tr', {}, cols.map((c) => el('th', { scope: 'col' }, c)))), el('tbody', {}, body));
}

// The button that shows the SASS listing, built the first time.
function sassToggle(runs, id) {
  if (!runs.length) return null;
  const n = runs.reduce((a, u) => a + u.count, 0);
  const box = el('div', { class: 'sass-box', id: `${id}-sass`, hidden: true });
  const btn = el('button', { type: 'button', class: 'sx sasb', 'aria-expanded': 'false', 'aria-controls': `${id}-sass` },
    `The SASS listing: ${runs.length} run${runs.length === 1 ? '' : 's'} of ${n} instruction${n === 1 ? '' : 's'}`);
  btn.addEventListener('click', () => {
    const open = btn.getAttribute('aria-expanded') !== 'true';
    if (open && !box.firstChild) box.append(el('p', { class: 'legend' }, el('mark', { class: 'gd' }, '@P0'), ' marks a guarded (predicated) instruction; ' +
      '\u00d7N is a run of N identical instructions, shown collapsed.'), runTable(runs, id));
    box.hidden = !open;
    btn.setAttribute('aria-expanded', open ? 'true' : 'false');
  });
  return el('div', { class: 'sass' }, btn, box);
}

// The runs in three sections: before the branch, the branch (from the
// first to the last run of path A, path B or reconvergence), after it.
function runTable(runs, id) {
  let first = -1, last = -1;
  runs.forEach((u, n) => { if (inBranch(u.region)) { if (first < 0) first = n; last = n; } });
  const parts = first < 0 ? [{ key: 'all', title: 'All instructions', list: runs, open: true }] : [
    { key: 'before', title: 'Before the branch', list: runs.slice(0, first), open: false },
    { key: 'branch', title: runs.slice(first, last + 1).some((u) => u.region === 'reconverge') ? 'The branch: path A, path B and where they reconverge' : 'The branch: path A and path B',
      list: runs.slice(first, last + 1), open: true },
    { key: 'after', title: 'After the branch', list: runs.slice(last + 1), open: false },
  ].filter((p) => p.list.length);
  // The file most runs are on is the caption's; a line in another file
  // (the predicate's header, inlined) carries a mark the caption
  // explains, so the line column stays a number wide at any width.
  const one = fileMarks(runs);
  const cols = ['Path', 'Line', 'PC', 'SASS', 'Lanes', 'Warp executions', 'Thread executions'];
  const sections = parts.map((p, s) => {
    const n = p.list.reduce((a, u) => a + u.count, 0);
    const body = el('tbody', { class: 'sec', 'data-part': p.key, id: `${id}-s${s}` });
    const btn = el('button', { type: 'button', class: 'sx', 'aria-expanded': 'false', 'aria-controls': `${id}-s${s}` },
      `${p.title}: ${p.list.length} run${p.list.length === 1 ? '' : 's'}, ${n} instruction${n === 1 ? '' : 's'}`);
    let rows = null;
    const set = (open) => {
      if (open && !rows) { rows = p.list.flatMap((u, k) => runRows(u, `${id}-s${s}-${k}`, one, cols)); body.append(...rows); }
      if (rows) for (const tr of rows) tr.hidden = !open || (tr.classList.contains('more') && tr.dataset.open !== 'true');
      btn.setAttribute('aria-expanded', open ? 'true' : 'false');
    };
    btn.addEventListener('click', () => set(btn.getAttribute('aria-expanded') !== 'true'));
    body.append(el('tr', { class: 'sh' }, el('th', { scope: 'rowgroup', colspan: cols.length }, btn)));
    set(p.open);
    return body;
  });
  const keys = ['path', 'line', 'pc', 'sass', 'lanes', 'warp', 'thread'];
  return el('table', { class: 'lst' }, el('caption', {}, `The instructions in program order${one.main ? `, beside their source lines in ${one.main}` : ''}` +
    fileNote(one) + '; counts per instruction, over the row\u2019s full grid'),
    el('colgroup', {}, keys.map((k) => el('col', { class: `c-${k}` }))),
    el('thead', {}, el('tr', {}, cols.map((c, j) => el('th', { scope: 'col', class: j >= 5 ? 'n' : null }, c)))), sections);
}

// A run's row, and for a run of several instructions the row its ×N
// button opens: the first and the last instruction and the counts each
// of them has.
function runRows(u, rid, one, cols) {
  const multi = u.count > 1, text = u.sass != null ? u.sass : u.opcode;
  const guard = u.guarded && u.sass != null ? /^@!?U?P[T0-9]+/.exec(u.sass) : null;
  const code = el('code', {}, u.guarded ? el('span', { class: 'sr' }, 'predicated: ') : null,
    u.guarded ? el('mark', { class: 'gd' }, guard ? guard[0] : '@P') : null, guard ? text.slice(guard[0].length) : (u.guarded ? ' ' : '') + text);
  const dl = (j) => el('span', { class: 'dl', 'aria-hidden': 'true' }, cols[j]);
  const td = (k, j, ...v) => el('td', { 'data-k': k }, dl(j), el('span', { class: 'v' }, ...v));
  const xn = multi ? el('button', { type: 'button', class: 'xn', 'aria-expanded': 'false', 'aria-controls': `${rid}-m`,
    'aria-label': `${u.count} such instructions: show the first and the last` }, `\u00d7${u.count}`) : null;
  const row = el('tr', { class: 'run', 'data-region': u.region, 'data-pc': u.pc, 'data-count': u.count, 'data-guarded': u.guarded ? 'true' : 'false' },
    td('path', 0, TAG[u.region] || ''), td('line', 1, ...lineText(u, one)), td('pc', 2, hex(u.pc)),
    el('th', { scope: 'row', class: 'sass' }, code, xn),
    el('td', { 'data-k': 'lanes' }, dl(4), el('span', { class: 'v' }, ...laneCell(u))),
    td('warp', 5, big(u.warp_executions)), td('thread', 6, big(u.thread_executions)));
  if (!multi) return [row];
  // Every SASS instruction since Volta is 16 bytes, so the run's last pc follows from its first.
  const lastPc = u.pc + 16 * (u.count - 1);
  const more = el('tr', { class: 'more', id: `${rid}-m`, 'data-open': 'false' }, el('td', { colspan: cols.length },
    el('p', {}, `${u.count} consecutive instructions, pc ${hex(u.pc)} to ${hex(lastPc)}, each executed ${big(u.warp_executions)} times by warps, ` +
      `${big(u.thread_executions)} by threads, ${big(u.pred_on_thread_executions)} with the predicate on` +
      (u.divergent_targets > 0 ? `, ${big(u.divergent_targets)} divergent branch targets` : '') + '.'),
    el('p', {}, 'First: ', el('code', {}, text), el('br'), 'Last: ', el('code', {}, u.last_sass != null ? u.last_sass : u.opcode))));
  xn.addEventListener('click', () => {
    const open = more.dataset.open !== 'true';
    more.dataset.open = open ? 'true' : 'false';
    more.hidden = !open;
    xn.setAttribute('aria-expanded', open ? 'true' : 'false');
  });
  return [row, more];
}

/* experiments.js -- the experiments (Table `experiment`: compiler-and-warp,
 * arithmetic-intensity and data-sort)
 * as pictures: per table a sentence saying what it is about, read from the
 * document, and a chart in the slot renderDoc() left for it.
 *
 * - k-paths: each row's time ratio against k, the split rows (lane % k,
 *   filled) beside the aligned ones (warp % k, hollow), intervals as
 *   whiskers, and the fit (Table `fit`) as the line T(k) / T(1).
 * - predication: the LA x LB grid, 8 x 8, a letter per measured point (P
 *   predicated, B branched, from Findings `predication.points`, the lane-
 *   split row's instruction shape) with its ratio; the boundary the
 *   findings give drawn solid, the Best Practices Guide's old rule dashed.
 * - branchless: per arrangement the branch beside compute-both-then-select,
 *   paired bars with whiskers.
 * - reconvergence: per row the warps that met again at the join (Row
 *   `join`) and the lanes' clock spread there.
 * - intensity (one chart for the document's intensity tables): the
 *   divergence penalty, each lane-split row's ratio over its warp-aligned
 *   row with its interval as a band, against FLOP per byte on a log axis
 *   (Intensity `dram_intensity` where the counters measured it, else
 *   `intensity`), a curve per table, each point coloured by its `bound`,
 *   the table's measured `roofline.ridge` a vertical line.
 * - data-sort (one chart for the document's `sort`): per distribution a
 *   map, M down, C across, each cell naive / (sort + shade) filled where
 *   sorting pays and hatched where it costs, an ambiguous cell outlined
 *   with a "?", each row's crossover C a thick line.
 *
 * Under each chart a sentence reads it for the student (what the marks
 * show and what that says about the warp), from the same fields.
 *
 * The palette and conventions are chart.js's (380-unit SVGs, 15px text,
 * --dw-m solid, --dw-p hatched, a title and a description with every
 * number for screen readers). divergence-widget.js imports this module only
 * for a document with experiment tables, so the lesson's first load does
 * not fetch it.
 */
import { el, svg, fin, fx, fixed, ciOf, wrapText, capital, D } from './format.js';

const W = 380, X0 = 8, XMAX = 238, LABEL_CHARS = 40, LH = 18;
const GRID = 8; // the predication map's LA and LB, 1..8

const hatch = (id) => svg('defs', {}, svg('pattern', { id: `${id}-h`, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
  svg('line', { class: 'hatch', x1: 0, y1: 0, x2: 0, y2: 6 })));
const us = (ms) => (fin(ms) ? fixed(ms * 1000, 2) : D);
const ciUs = (c) => (c && fin(c.lo) && fin(c.hi) ? ` [${us(c.lo)}, ${us(c.hi)}]` : '');
const ratioSaid = (r) => { const c = ciOf(r.ratio, r.ratio_ci); return c ? `${c.point}\u00d7 (${c.said})` : `${fx(r.ratio, 2)}\u00d7`; };
const rowsOf = (t) => (Array.isArray(t.rows) ? t.rows : []);
const pointOf = (r) => (r.point && typeof r.point === 'object' ? r.point : {});

// The frame every chart shares: a figure with its caption, an SVG whose
// title and description carry the numbers, and under it the sentence that
// reads it (`read`; none where the document lacks what it needs).
function figure(id, caption, read, title, desc, H, ...body) {
  return el('figure', { class: 'chart xchart' }, el('figcaption', {}, caption),
    svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-t ${id}-d` },
      svg('title', { id: `${id}-t` }, title), svg('desc', { id: `${id}-d` }, desc), hatch(id), body),
    read ? el('p', { class: 'xread' }, el('b', {}, 'Reading it: '), read) : null);
}

// "1.77" or "1.77 to 1.84": the span of `vs` at 2 decimals.
function span(vs) {
  const lo = fx(Math.min(...vs), 2), hi = fx(Math.max(...vs), 2);
  return lo === hi ? lo : `${lo} to ${hi}`;
}

// How row a's ratio stands to row b's, in `words` [more, less, the same]:
// with both intervals, overlapping ones are no difference.
function against(a, b, words) {
  const ca = ciOf(a.ratio, a.ratio_ci), cb = ciOf(b.ratio, b.ratio_ci);
  if (ca && cb && ca.lo <= cb.hi && cb.lo <= ca.hi) return words[2];
  return a.ratio > b.ratio ? words[0] : words[1];
}
const LONGER = ['longer than', 'shorter than', 'as long as'], MORE = ['more than', 'less than', 'no different from'];

// A row's code label cut into lines of at most `max` characters after a
// statement or a brace where it can be (SVG text does not wrap), else at spaces.
function codeLines(text, max) {
  const out = [];
  let line = '';
  for (const part of String(text).split(/(?<=[;{}]) /)) {
    const next = line ? `${line} ${part}` : part;
    if (next.length <= max) { line = next; continue; }
    if (line) out.push(line);
    if (part.length <= max) { line = part; continue; }
    const cut = wrapText(part, max);
    out.push(...cut.slice(0, -1));
    line = cut[cut.length - 1];
  }
  if (line || !out.length) out.push(line);
  return out;
}

// A horizontal bar from X0 to x(v), with its interval's whisker and its value after.
function hbar(x, v, y, cls, id, text, ci) {
  return [svg('rect', { class: cls, x: X0, y, width: Math.max(1, x(v) - X0), height: 16, ...(cls === 'bp' ? { fill: `url(#${id}-h)` } : {}) }),
    ci ? svg('g', { class: 'wh', 'aria-hidden': 'true' }, svg('line', { x1: x(ci.lo), x2: x(ci.hi), y1: y + 8, y2: y + 8 }),
      svg('line', { x1: x(ci.lo), x2: x(ci.lo), y1: y - 3, y2: y + 19 }), svg('line', { x1: x(ci.hi), x2: x(ci.hi), y1: y - 3, y2: y + 19 })) : null,
    svg('text', { x: Math.max(x(v), ci ? x(ci.hi) + 2 : 0) + 5, y: y + 14 }, text)];
}

// ---- k paths ---------------------------------------------------------------

function kAbout(t) {
  const f = t.fit;
  const head = 'Every row does the same work: the split rows run k paths in every warp (path = lane % k), the aligned rows the same k paths one per warp (warp % k).';
  if (!f || !fin(f.a_ms) || !fin(f.b_ms)) return head;
  const lvl = fin(f.level) ? ` (${fixed(100 * f.level, 0)}% intervals)` : '';
  return `${head} Fitted over the ${f.points} split rows, T(k) = a + b\u00b7k with a = ${us(f.a_ms)} \u00b5s${ciUs(f.a_ci)} and b = ${us(f.b_ms)} \u00b5s per path${ciUs(f.b_ci)}` +
    `, b / a = ${fx(f.b_over_a, 2)}${f.b_over_a_ci ? ` [${fx(f.b_over_a_ci.lo, 2)}, ${fx(f.b_over_a_ci.hi, 2)}]` : ''}${lvl}; the line misses a row's median by at most ${fx(100 * f.residual_max_rel, 2)}%.`;
}

function kRead(t) {
  const pts = rowsOf(t).filter((r) => Number.isInteger(pointOf(r).k) && fin(r.ratio));
  const split = pts.filter((r) => pointOf(r).arrangement === 'lane-mod'), aligned = pts.filter((r) => pointOf(r).arrangement !== 'lane-mod');
  if (!split.length) return null;
  const top = split.reduce((a, r) => (pointOf(r).k > pointOf(a).k ? r : a)), k = pointOf(top).k, f = t.fit;
  const fits = f && fin(f.a_ms) && fin(f.b_ms);
  const alignedTop = aligned.length ? Math.max(...aligned.map((r) => pointOf(r).k)) : 0;
  return `the filled circles climb with k: ${k} paths inside every warp took ${fx(top.ratio, 2)}\u00d7 the one-path row\u2019s time` +
    (fits ? `, and they lie on the line: each path a warp\u2019s lanes take adds b = ${us(f.b_ms)} \u00b5s to a fixed ${us(f.a_ms)} \u00b5s, so the warp pays the sum of its paths` : '') +
    (aligned.length ? `. The hollow squares stay at ${span(aligned.map((r) => r.ratio))}\u00d7 up to k = ${alignedTop}: the same paths given one to a warp cost nothing, because no warp runs more than one.` : '.');
}

function kChart(t, id) {
  const pts = rowsOf(t).map((r, i) => ({ r, i, k: pointOf(r).k, split: pointOf(r).arrangement === 'lane-mod', ci: ciOf(r.ratio, r.ratio_ci) }))
    .filter((p) => Number.isInteger(p.k) && fin(p.r.ratio));
  const f = t.fit, fits = f && fin(f.a_ms) && fin(f.b_ms) && f.a_ms + f.b_ms > 0;
  const kmax = Math.max(1, ...pts.map((p) => p.k));
  const line = (k) => (f.a_ms + f.b_ms * k) / (f.a_ms + f.b_ms);
  const ymax = Math.max(1, ...pts.map((p) => (p.ci ? p.ci.hi : p.r.ratio)), fits ? line(kmax) : 1) * 1.05;
  const L = 44, R = 366, T = 48, B = 236, H = 270;
  const x = (k) => L + (R - L) * k / kmax, y = (v) => B - (B - T) * v / ymax;
  const step = ymax > 20 ? 5 : ymax > 8 ? 2 : ymax > 3 ? 1 : 0.5;
  const yt = []; for (let v = 0; v <= ymax; v += step) yt.push(v);
  const xt = [...new Set(pts.map((p) => p.k))].filter((k) => k === 1 || k >= 4).sort((a, b) => a - b);
  const said = (p) => `${p.split ? 'split' : 'aligned'} k = ${p.k}: ${p.ci ? `${p.ci.point} [${fixed(p.ci.lo, p.ci.d)}, ${fixed(p.ci.hi, p.ci.d)}]` : fx(p.r.ratio, 2)}`;
  const desc = pts.map(said).join('; ') + (fits ? `. The fit T(k) / T(1) = (a + b k) / (a + b): ${fixed(line(2), 2)} at k = 2, ${fixed(line(kmax), 2)} at k = ${kmax}.` : '.');
  const marks = pts.map((p) => svg('g', { class: 'kp', 'data-row': p.r.name, 'data-k': p.k, 'data-arr': p.split ? 'split' : 'aligned', 'data-ratio': p.r.ratio },
    p.ci ? svg('g', { class: 'wh', 'aria-hidden': 'true' }, svg('line', { x1: x(p.k), x2: x(p.k), y1: y(p.ci.lo), y2: y(p.ci.hi) }),
      svg('line', { x1: x(p.k) - 4, x2: x(p.k) + 4, y1: y(p.ci.lo), y2: y(p.ci.lo) }), svg('line', { x1: x(p.k) - 4, x2: x(p.k) + 4, y1: y(p.ci.hi), y2: y(p.ci.hi) })) : null,
    p.split ? svg('circle', { class: 'ks', cx: x(p.k), cy: y(p.r.ratio), r: 4 })
      : svg('rect', { class: 'ka', x: x(p.k) - 3.5, y: y(p.r.ratio) - 3.5, width: 7, height: 7 })));
  const last = pts.filter((p) => p.split && p.k === kmax)[0];
  return figure(id, 'Chart: each row\u2019s time over the one-path row\u2019s, against k. Filled circles split the k paths inside every warp, hollow squares give each warp one path; ' +
    'the whiskers are 95% intervals (most are narrower than the marks)' + (fits ? '; the line is the fit T(k) / T(1).' : '.'), kRead(t),
  `${t.title}: time ratio against k`, desc, H,
  svg('g', { class: 'legend', 'aria-hidden': 'true' },
    svg('circle', { class: 'ks', cx: L + 6, cy: 14, r: 4 }), svg('text', { x: L + 16, y: 19 }, 'split (lane % k)'),
    svg('rect', { class: 'ka', x: L + 146, y: 10.5, width: 7, height: 7 }), svg('text', { x: L + 160, y: 19 }, 'aligned (warp % k)'),
    fits ? [svg('line', { class: 'kf', x1: L, x2: L + 12, y1: 34, y2: 34 }), svg('text', { x: L + 16, y: 39 }, 'fit T(k) / T(1) = (a + b k) / (a + b)')] : null),
  svg('g', { class: 'axis', 'aria-hidden': 'true' },
    svg('line', { x1: L, x2: R, y1: B, y2: B }), svg('line', { x1: L, x2: L, y1: T - 4, y2: B }),
    yt.map((v) => [svg('line', { class: 'grid', x1: L, x2: R, y1: y(v), y2: y(v) }), svg('text', { x: L - 6, y: y(v) + 5, 'text-anchor': 'end' }, step < 1 ? fixed(v, 1) : String(v))]),
    xt.map((k) => svg('text', { x: x(k), y: B + 18, 'text-anchor': 'middle' }, String(k))),
    svg('text', { x: R, y: H - 2, 'text-anchor': 'end' }, 'k, paths per warp')),
  fits ? svg('line', { class: 'kf', x1: x(1), y1: y(1), x2: x(kmax), y2: y(line(kmax)) }) : null,
  marks,
  last ? svg('text', { x: x(kmax) - 8, y: y(last.r.ratio) + 5, 'text-anchor': 'end' }, `${fixed(last.r.ratio, 2)}\u00d7`) : null);
}

// ---- the predication map -------------------------------------------------

const LETTER = { predicated: 'P', branched: 'B', unconditional: 'U', mixed: 'M', unknown: '?', none: '\u2013' };

// The rule the findings give, as a test of (LA, LB), with its words.
function ruleOf(p) {
  if (fin(p.sum_rule)) return { f: (a, b) => a + b <= p.sum_rule, said: `LA + LB \u2264 ${p.sum_rule}` };
  if (Array.isArray(p.side_rule)) return { f: (a, b) => a <= p.side_rule[0] && b <= p.side_rule[1], said: `LA \u2264 ${p.side_rule[0]} and LB \u2264 ${p.side_rule[1]}` };
  if (fin(p.max_rule)) return { f: (a, b) => Math.max(a, b) <= p.max_rule, said: `max(LA, LB) \u2264 ${p.max_rule}` };
  return null;
}
// The rules that fit, besides the one drawn, in words.
function otherRules(p, drawn) {
  const all = [fin(p.sum_rule) ? `LA + LB \u2264 ${p.sum_rule}` : null, Array.isArray(p.side_rule) ? `LA \u2264 ${p.side_rule[0]} and LB \u2264 ${p.side_rule[1]}` : null,
    fin(p.max_rule) ? `max(LA, LB) \u2264 ${p.max_rule}` : null].filter((s) => s && s !== drawn);
  return all.length ? ` (${all.join(' and ').replace(/ and (?=max|LA \u2264)/, '; ')} fit${all.length === 1 ? 's' : ''} too)` : '';
}

// The outline of the cells where f holds: the edges between such a cell
// and one where f fails or the grid ends. `cx`, `cy`: a cell's corner.
function outline(f, cx, cy, CW, CHT) {
  const d = [];
  for (let a = 1; a <= GRID; a++) for (let b = 1; b <= GRID; b++) {
    if (!f(a, b)) continue;
    const x0 = cx(b), y0 = cy(a), x1 = x0 + CW, y1 = y0 + CHT;
    if (a === 1 || !f(a - 1, b)) d.push(`M${x0} ${y0}H${x1}`);
    if (a === GRID || !f(a + 1, b)) d.push(`M${x0} ${y1}H${x1}`);
    if (b === 1 || !f(a, b - 1)) d.push(`M${x0} ${y0}V${y1}`);
    if (b === GRID || !f(a, b + 1)) d.push(`M${x1} ${y0}V${y1}`);
  }
  return d.join('');
}

function predAbout(t, doc) {
  const p = doc.findings && doc.findings.predication;
  const head = 'Each point is an if/else of LA and LB FMAs, its lane-split row timed over its warp-split row; the row\u2019s own instructions say whether the compiler predicated it or branched.';
  return p && p.text ? `${head} ${p.text.charAt(0).toUpperCase()}${p.text.slice(1)}.` : head;
}

function predRead(doc) {
  const p = doc.findings && doc.findings.predication;
  const pts = p && Array.isArray(p.points) ? p.points.filter((q) => fin(q.ratio)) : [];
  const pred = pts.filter((q) => q.branching === 'predicated'), br = pts.filter((q) => q.branching === 'branched');
  if (!pred.length && !br.length) return null;
  const rule = ruleOf(p);
  const parts = [];
  if (pred.length) parts.push(`${rule ? `inside the solid line (${rule.said}) ` : ''}the compiler predicated the if/else (P), and splitting the warp cost ${span(pred.map((q) => q.ratio))}\u00d7: ` +
    'every warp issues both sides\u2019 instructions whether its lanes split or not');
  if (br.length) parts.push(`${rule && pred.length ? 'outside it ' : ''}it branched (B), and the split warp took ${span(br.map((q) => q.ratio))}\u00d7, running one side after the other`);
  const guide = fin(p.guide_threshold) && fin(p.guide_disagrees)
    ? ` The guide\u2019s old rule (dashed) ${p.guide_disagrees === 0 ? `agrees on all ${pts.length} measured points` : `disagrees on ${p.guide_disagrees} of the ${pts.length} measured points`}.` : '';
  return `${parts.join('; ')}.${guide}`;
}

function predChart(t, doc, id) {
  const p = doc.findings && doc.findings.predication;
  const pts = p && Array.isArray(p.points) ? p.points : [];
  const at = new Map(pts.map((q) => [`${q.la}x${q.lb}`, q]));
  const LX = 52, TY = 46, CW = 39, CHT = 36, H = TY + GRID * CHT + 10;
  const cx = (b) => LX + (b - 1) * CW, cy = (a) => TY + (a - 1) * CHT;
  const rule = p ? ruleOf(p) : null;
  const guide = p && fin(p.guide_threshold) ? (a, b) => a + b <= p.guide_threshold : null;
  const cells = [];
  for (let a = 1; a <= GRID; a++) for (let b = 1; b <= GRID; b++) {
    const q = at.get(`${a}x${b}`), letter = q ? LETTER[q.branching] || '?' : '';
    const cls = !q ? 'xn' : q.branching === 'predicated' ? 'xp' : q.branching === 'branched' ? 'xb' : 'xo';
    cells.push(svg('g', { class: 'cell', 'data-la': a, 'data-lb': b, 'data-branching': q ? q.branching : 'not measured' },
      svg('rect', { class: cls, x: cx(b) + 1, y: cy(a) + 1, width: CW - 2, height: CHT - 2, ...(cls === 'xb' ? { fill: `url(#${id}-h)` } : {}) }),
      q ? [svg('text', { class: 'xl', x: cx(b) + CW / 2, y: cy(a) + 16, 'text-anchor': 'middle' }, letter),
        svg('text', { class: 'xr', x: cx(b) + CW / 2, y: cy(a) + 30, 'text-anchor': 'middle' }, fx(q.ratio, 2))] : null));
  }
  const heads = [];
  for (let k = 1; k <= GRID; k++) {
    heads.push(svg('text', { x: cx(k) + CW / 2, y: TY - 6, 'text-anchor': 'middle' }, String(k)));
    heads.push(svg('text', { x: LX - 8, y: cy(k) + CHT / 2 + 5, 'text-anchor': 'end' }, String(k)));
  }
  const words = pts.map((q) => `LA ${q.la}, LB ${q.lb}: ${q.branching}, ${ciOf(q.ratio, q.ratio_ci) ? ciOf(q.ratio, q.ratio_ci).point : fx(q.ratio, 2)}\u00d7`).join('; ');
  const desc = `${pts.length} of ${GRID * GRID} points measured. ${words || 'None.'}` + (rule ? ` The boundary found: ${rule.said}.` : '') +
    (guide ? ` The guide's old rule: LA + LB \u2264 ${p.guide_threshold}.` : '');
  return figure(id, [`Chart: the LA \u00d7 LB map, rows LA (the if side\u2019s FMAs), columns LB (the else side\u2019s). P: the compiler predicated the point (filled), B: it branched (hatched), with the lane-split row\u2019s time over the warp-split row\u2019s; ` +
    `an empty cell was not measured (${pts.length} of ${GRID * GRID} were).`, rule ? ` The solid line is the boundary found, ${rule.said}${otherRules(p, rule.said)}` : '',
  guide ? `; the dashed line the Best Practices Guide\u2019s old rule, LA + LB \u2264 ${p.guide_threshold}.` : '.'], predRead(doc),
  `${t.title}: predicated or branched per LA and LB`, desc, H,
  svg('text', { x: LX, y: 16, 'font-weight': 600 }, 'LB, the else side \u2192'),
  svg('text', { x: 4, y: TY - 6, 'font-weight': 600 }, 'LA \u2193'),
  heads, cells,
  guide ? svg('path', { class: 'xg', d: outline(guide, cx, cy, CW, CHT) }) : null,
  rule ? svg('path', { class: 'xbd', d: outline(rule.f, cx, cy, CW, CHT) }) : null);
}

// ---- branchless against branch -------------------------------------------

const ARR = { warps: 'Warp-aligned: whole warps on one side', lanes: 'Split: both sides in every warp' };

function pairOf(t) {
  const rows = rowsOf(t);
  return ['warps', 'lanes'].map((a) => ({ a, branch: rows.find((r) => pointOf(r).arrangement === a && pointOf(r).variant === 'branch'),
    select: rows.find((r) => pointOf(r).arrangement === a && pointOf(r).variant === 'select') })).filter((g) => [g.branch, g.select].some(Boolean));
}

function blAbout(t) {
  const g = pairOf(t), w = g.find((x) => x.a === 'warps'), s = g.find((x) => x.a === 'lanes');
  const head = 'The same two sides as an if/else and as compute-both-then-select (every lane computes both, then picks one), every row over the warp-aligned branch.';
  if (!w || !s || !w.select || !s.branch || !s.select) return head;
  return `${head} Selecting took ${fx(w.select.ratio, 2)}\u00d7 where the branch splits no warp and ${fx(s.select.ratio, 2)}\u00d7 where it splits every warp, ` +
    `against ${fx(s.branch.ratio, 2)}\u00d7 for the split branch.`;
}

function blRead(t) {
  const g = pairOf(t), w = g.find((x) => x.a === 'warps'), s = g.find((x) => x.a === 'lanes');
  const ok = (x) => x && x.branch && x.select && fin(x.branch.ratio) && fin(x.select.ratio);
  const parts = [];
  if (ok(w)) parts.push(`where whole warps take one side, the hatched bar is ${against(w.select, w.branch, LONGER)} the solid one ` +
    `(${fx(w.select.ratio, 2)}\u00d7 against ${fx(w.branch.ratio, 2)}\u00d7): selecting makes every warp compute both sides, the branch only the side its warp takes`);
  if (ok(s)) parts.push(`where every warp splits, the branch runs both sides one after the other too, and selecting took ${against(s.select, s.branch, MORE)} the branch ` +
    `(${fx(s.select.ratio, 2)}\u00d7 against ${fx(s.branch.ratio, 2)}\u00d7)`);
  return parts.length ? `${parts.join('; ')}.` : null;
}

function blChart(t, id) {
  const groups = pairOf(t), all = groups.flatMap((g) => [g.branch, g.select]).filter(Boolean);
  const cis = new Map(all.map((r) => [r, ciOf(r.ratio, r.ratio_ci)]));
  const max = Math.max(1, ...all.map((r) => (cis.get(r) ? cis.get(r).hi : r.ratio)).filter(fin)) * 1.05;
  const x = (v) => X0 + (XMAX - X0) * (fin(v) ? Math.max(0, v) : 0) / max;
  const TOP = 48, GH = 86, H = TOP + Math.max(0, groups.length - 1) * GH + 76; // the last group's bars end 68 under its top
  const text = (r, word) => { const c = cis.get(r); return fin(r.ratio) ? `${c ? c.point : fx(r.ratio, 2)}\u00d7 ${word}` : `no ${word} value`; };
  const bars = groups.map((g, i) => {
    const y = TOP + i * GH;
    return svg('g', { class: 'pair', 'data-arr': g.a },
      svg('text', { x: X0, y: y + 14, 'font-weight': 600 }, ARR[g.a]),
      g.branch ? svg('g', { 'data-row': g.branch.name }, hbar(x, g.branch.ratio, y + 24, 'bm', id, text(g.branch, 'branch'), cis.get(g.branch))) : null,
      g.select ? svg('g', { 'data-row': g.select.name }, hbar(x, g.select.ratio, y + 48, 'bp', id, text(g.select, 'select'), cis.get(g.select))) : null,
      // 1.00, under the group's title, not through it.
      svg('line', { class: 'ref', x1: x(1), x2: x(1), y1: y + 20, y2: y + 68 }));
  });
  const desc = all.map((r) => `${r.label}: ${ratioSaid(r)}`).join('; ') + '.';
  return figure(id, 'Chart: solid bars the if/else, hatched bars compute-both-then-select, each row\u2019s time over the warp-aligned branch\u2019s; the whiskers are 95% intervals; the dashed line is 1.00.',
    blRead(t), `${t.title}: the branch beside the select`, desc, H,
    svg('g', { class: 'legend', 'aria-hidden': 'true' },
      svg('rect', { class: 'bm', x: X0, y: 6, width: 18, height: 14 }), svg('text', { x: X0 + 24, y: 19 }, 'if/else (branch)'),
      svg('rect', { class: 'bp', fill: `url(#${id}-h)`, x: 170, y: 6, width: 18, height: 14 }), svg('text', { x: 194, y: 19 }, 'select (both sides)')),
    bars);
}

// ---- reconvergence -------------------------------------------------------

function rcAbout(t) {
  const rows = rowsOf(t).filter((r) => r.join && typeof r.join === 'object');
  const head = 'An if/else, a loop with break and an early return, each with and without __syncwarp() at the join: every lane that reaches the join records __activemask() and clock64() right after it.';
  if (!rows.length) return `${head} No join record was taken.`;
  const met = rows.filter((r) => r.join.reconverged_warps === r.join.warps);
  const spread = Math.max(...rows.map((r) => r.join.clock_spread_cycles_max).filter(fin), 0);
  if (met.length === rows.length) return `${head} On this GPU every warp of all ${rows.length} rows met again at the join, with and without __syncwarp(): one group per warp, a clock spread of at most ${fx(spread, 0)} cycles.`;
  return `${head} ${met.length} of ${rows.length} rows met again at the join in every warp; ` +
    rows.filter((r) => !met.includes(r)).map((r) => `${r.label}: ${r.join.reconverged_warps} of ${r.join.warps} warps`).join('; ') + '.';
}

function rcRead(t) {
  const rows = rowsOf(t).filter((r) => r.join && typeof r.join === 'object' && fin(r.join.warps) && r.join.warps > 0);
  if (!rows.length) return null;
  const met = rows.filter((r) => r.join.reconverged_warps === r.join.warps);
  const spread = Math.max(0, ...rows.map((r) => r.join.clock_spread_cycles_max).filter(fin));
  if (met.length === rows.length) return `every solid bar is full${spread === 0 ? ' and every spread 0 cycles' : ''}: in all ${rows.length} rows every warp read the join in one group, ` +
    `with __syncwarp() and without it${spread === 0 ? ', so no group of its lanes came later than another' : `, its groups at most ${fx(spread, 0)} cycles apart`}. On this GPU and compiler the warps met again at the join without it too; ` +
    'the language does not promise that, and __syncwarp() does.';
  const not = rows.filter((r) => !met.includes(r));
  return `${met.length} of ${rows.length} bars are full; ${not.map((r) => `${r.label}: ${r.join.reconverged_warps} of ${r.join.warps} warps met again`).join('; ')}. ` +
    'A warp that did not read the join in one group was still diverged past it, its groups up to the outlined spread apart.';
}

function rcChart(t, id) {
  const rows = rowsOf(t);
  const spreadMax = Math.max(1, ...rows.map((r) => (r.join ? r.join.clock_spread_cycles_max : null)).filter(fin));
  const share = (j) => (j && j.warps > 0 ? j.reconverged_warps / j.warps : null);
  const XS = 170, xs = (v) => X0 + (XS - X0) * (fin(v) ? v : 0), xc = (v) => X0 + (XS - X0) * (fin(v) ? v : 0) / spreadMax;
  const labels = rows.map((r) => codeLines(r.label, LABEL_CHARS));
  const TOP = 48, RH = 62, ys = [];
  let yy = TOP;
  for (const l of labels) { ys.push(yy); yy += RH + (l.length - 1) * LH; }
  const H = yy + 6;
  const g = rows.map((r, i) => {
    const j = r.join, b = ys[i] + (labels[i].length - 1) * LH, s = share(j);
    return svg('g', { class: 'rc', 'data-row': r.name },
      labels[i].map((l, k) => svg('text', { x: X0, y: ys[i] + 14 + k * LH, 'font-weight': 600 }, l)),
      j ? [svg('rect', { class: 'bm', x: X0, y: b + 20, width: Math.max(1, xs(s) - X0), height: 14 }),
        svg('text', { x: xs(s) + 5, y: b + 32 }, `${j.reconverged_warps} of ${j.warps} warps met`),
        svg('rect', { class: 'bg', x: X0, y: b + 40, width: Math.max(1, xc(j.clock_spread_cycles_median) - X0), height: 12 }),
        svg('text', { x: xc(j.clock_spread_cycles_median) + 5, y: b + 51 }, `spread ${fx(j.clock_spread_cycles_median, 0)} cycles (max ${fx(j.clock_spread_cycles_max, 0)})`)]
        : svg('text', { x: X0, y: b + 32 }, 'no join record'));
  });
  const desc = rows.map((r) => (r.join ? `${r.label}: ${r.join.reconverged_warps} of ${r.join.warps} warps met again at the join, ` +
    `mask 0x${r.join.expected_mask} expected, clock spread median ${fx(r.join.clock_spread_cycles_median, 0)} cycles, max ${fx(r.join.clock_spread_cycles_max, 0)}; time ${ratioSaid(r)}` : `${r.label}: no join record`)).join('; ') + '.';
  return figure(id, `Chart: per row, solid the share of warps that read the join in one group with every lane that reaches it; outlined the median clock spread between a warp\u2019s groups there (${spreadMax > 1 ? `scale 0 to ${fx(spreadMax, 0)} cycles` : 'a tick where it is 0 cycles'}).`, rcRead(t),
    `${t.title}: warps met again and clock spread at the join`, desc, H,
    svg('g', { class: 'legend', 'aria-hidden': 'true' },
      svg('rect', { class: 'bm', x: X0, y: 6, width: 18, height: 14 }), svg('text', { x: X0 + 24, y: 19 }, 'warps met again'),
      svg('rect', { class: 'bg', x: 170, y: 6, width: 18, height: 14 }), svg('text', { x: 194, y: 19 }, 'clock spread')), g);
}

// ---- arithmetic intensity: the penalty curve ------------------------------

const CURVE = { stream: 'streaming loads', chase: 'dependent loads (a chase)' };
// An intensity as the axis and the sentences write it: 0.03, 0.25, 2, 128.
const ix = (v) => (Number.isInteger(v) ? String(v) : v < 0.1 ? String(Number(v.toPrecision(1))) : v < 1 ? fixed(v, 2) : fixed(v, 1));

// A table's curve: its lane-split rows with F and L (the ridge rows have
// none), each at its DRAM intensity where the counters measured it, else at
// its intensity as written; the table's ridge where both ridge rows ran.
function curveOf(t) {
  const pts = rowsOf(t).filter((r) => pointOf(r).arrangement === 'lanes' && r.intensity && r.intensity.fmas !== null && fin(r.ratio))
    .map((r) => { const i = r.intensity, dram = fin(i.dram_intensity); return { r, x: dram ? i.dram_intensity : i.intensity, dram, bound: i.bound, variant: i.variant, ci: ciOf(r.ratio, r.ratio_ci) }; })
    .filter((p) => fin(p.x) && p.x > 0).sort((a, b) => a.x - b.x);
  const rf = t.roofline;
  return { t, pts, variant: pts.length ? pts[0].variant : null, roof: rf && rf.present && fin(rf.ridge) && rf.ridge > 0 ? rf : null };
}
const curvesOf = (doc) => (doc.tables || []).filter((t) => t.experiment === 'intensity').map(curveOf).filter((c) => c.pts.length);
const curveName = (c) => CURVE[c.variant] || c.t.title;

function intAbout(t, doc) {
  const head = 'The lesson\u2019s branch again, each path doing F FMAs per L 4-byte loads: the lane-split row (path = lane & 1) timed over the warp-aligned one (path = warp & 1), ' +
    'with streaming coalesced loads and with dependent loads (a pointer chase), F/L swept from memory-bound to compute-bound; two rows beside them measure this GPU\u2019s roofline.';
  const c = curvesOf(doc);
  const dram = c.some((x) => x.pts.some((p) => p.dram));
  const why = c.map((x) => x.roof && x.roof.dram_reason).find((w) => typeof w === 'string' && w);
  return `${head} ${dram ? 'Each point sits at its FLOP per DRAM byte, read by the counters.' : `The counters gave no DRAM bytes${why ? ` (${why})` : ''}, so each point sits at its FLOP per byte loaded, as written.`}`;
}

// The sentence under the penalty curve: per curve its first and last
// point (and where it turns between them), then the ridge, then what the
// points left of it say.
function intRead(doc) {
  const cs = curvesOf(doc);
  if (!cs.length) return null;
  const at = (p) => `${ix(p.x)} FLOP/byte`, cost = (p) => (p.ci ? `${p.ci.point}\u00d7 ${p.ci.text}` : `${fx(p.r.ratio, 2)}\u00d7`);
  const lo_ = (p) => (p.ci ? p.ci.lo : p.r.ratio), hi_ = (p) => (p.ci ? p.ci.hi : p.r.ratio);
  const parts = cs.map((c) => {
    const a = c.pts[0], z = c.pts[c.pts.length - 1];
    const lo = c.pts.reduce((m, p) => (p.r.ratio < m.r.ratio ? p : m)), hi = c.pts.reduce((m, p) => (p.r.ratio > m.r.ratio ? p : m));
    const turn = [lo, hi].filter((p) => p !== a && p !== z && (hi_(p) < Math.min(lo_(a), lo_(z)) || lo_(p) > Math.max(hi_(a), hi_(z))))
      .map((p) => `${p === lo ? 'falls' : 'rises'} to ${fx(p.r.ratio, 2)}\u00d7 at ${ix(p.x)}`);
    return `with ${curveName(c)}, at ${at(a)} the lane-split branch costs ${cost(a)} the warp-aligned one${a === z ? '' : `; at ${ix(z.x)} it costs ${cost(z)}`}` +
      (turn.length ? ` (in between it ${turn.join(' and ')})` : '');
  });
  const roof = cs.map((c) => c.roof).find(Boolean);
  const ridge = roof ? ` This GPU\u2019s ridge, measured in the same run, is at ${ix(Math.round(roof.ridge * 10) / 10)} FLOP/byte ` +
    `(${fx(roof.flop_rate / 1e12, 1)} TFLOP/s over ${fx(roof.bandwidth_gbs, 0)} GB/s${roof.bandwidth_from === 'dram' ? ' read from DRAM' : ' loaded'}).` : '';
  const left = roof ? cs.map((c) => {
    const ps = c.pts.filter((p) => p.x < roof.ridge);
    return ps.length ? { c, ps, flat: ps.every((p) => hi_(p) <= 1.05) } : null;
  }).filter(Boolean).sort((u, v) => v.flat - u.flat).map((g, i) => (g.flat
    ? `with ${curveName(g.c)} the loads bound the time and the second path\u2019s issue hides under them (${span(g.ps.map((p) => p.r.ratio))}\u00d7)`
    : `with ${curveName(g.c)} the split still costs ${span(g.ps.map((p) => p.r.ratio))}\u00d7${i ? ' there' : ''}: these loads do not hide the second path`)) : [];
  return `${parts.join('; ')}.${ridge}${left.length ? ` Left of it, ${left.join('; ')}.` : ''}`;
}

function intChart(doc, id) {
  const cs = curvesOf(doc), all = cs.flatMap((c) => c.pts);
  const roofs = cs.map((c) => c.roof).filter(Boolean);
  const xs = [...all.map((p) => p.x), ...roofs.map((r) => r.ridge)];
  const lx0 = Math.log10(Math.min(...xs) / 1.6), lx1 = Math.log10(Math.max(...xs) * 1.6);
  const ylo = Math.min(0.9, ...all.map((p) => (p.ci ? p.ci.lo : p.r.ratio))), yhi = Math.max(2.1, ...all.map((p) => (p.ci ? p.ci.hi : p.r.ratio)));
  const L = 44, R = 368, T = 62, B = 236, H = 272;
  const x = (v) => L + (R - L) * (Math.log10(v) - lx0) / (lx1 - lx0), y = (v) => B - (B - T) * (v - ylo) / (yhi - ylo);
  const yt = []; for (let v = Math.ceil(ylo * 2) / 2; v <= yhi + 1e-9; v += 0.5) yt.push(v);
  const xt = []; for (let e = Math.ceil(lx0); e <= Math.floor(lx1); e++) xt.push(10 ** e);
  const mark = (c, p) => {
    const cls = p.bound === 'compute' ? 'icomp' : 'imem', cx = x(p.x), cy = y(p.r.ratio);
    return svg('g', { class: 'ip', 'data-row': p.r.name, 'data-table': c.t.id, 'data-x': p.x, 'data-ratio': p.r.ratio, 'data-bound': p.bound || 'unknown' },
      p.ci ? svg('g', { class: 'wh', 'aria-hidden': 'true' }, svg('line', { x1: cx, x2: cx, y1: y(p.ci.lo), y2: y(p.ci.hi) })) : null,
      c.variant === 'chase' ? svg('rect', { class: cls, x: cx - 4, y: cy - 4, width: 8, height: 8 }) : svg('circle', { class: cls, cx, cy, r: 4.5 }));
  };
  const curves = cs.map((c) => {
    const band = c.pts.filter((p) => p.ci);
    return svg('g', { class: 'icurve', 'data-table': c.t.id, 'data-variant': c.variant },
      band.length > 1 ? svg('path', { class: 'iband', d: `M${band.map((p) => `${x(p.x)} ${y(p.ci.hi)}`).join('L')}L${band.slice().reverse().map((p) => `${x(p.x)} ${y(p.ci.lo)}`).join('L')}Z` }) : null,
      svg('path', { class: `iline${c.variant === 'chase' ? ' ichase' : ''}`, d: `M${c.pts.map((p) => `${x(p.x)} ${y(p.r.ratio)}`).join('L')}` }),
      c.pts.map((p) => mark(c, p)));
  });
  const r0 = roofs[0], ridgeText = r0 ? `ridge ${ix(Math.round(r0.ridge * 10) / 10)}` : '';
  const ridges = roofs.map((r, i) => svg('line', { class: 'iridge', 'data-ridge': r.ridge, 'data-table': cs.filter((c) => c.roof)[i].t.id, x1: x(r.ridge), x2: x(r.ridge), y1: T - 8, y2: B }));
  const said = (c) => `${curveName(c)}: ${c.pts.map((p) => `${ix(p.x)} FLOP/byte ${p.bound || 'unbounded'}-bound ${p.ci ? `${p.ci.point} [${fixed(p.ci.lo, p.ci.d)}, ${fixed(p.ci.hi, p.ci.d)}]` : fx(p.r.ratio, 2)}`).join(', ')}`;
  const desc = `${cs.map(said).join('; ')}.${r0 ? ` The ridge at ${fx(r0.ridge, 1)} FLOP/byte.` : ''}`;
  const xwords = all.some((p) => p.dram) ? 'FLOP per DRAM byte' : 'FLOP per byte loaded';
  return figure(id, `Chart: the divergence penalty, each lane-split row\u2019s time over its warp-aligned row\u2019s, against arithmetic intensity (${xwords}, a log scale); ` +
    'circles streaming loads, squares dependent loads; filled blue memory-bound, purple outlined compute-bound (the measured ridge, the vertical line, divides them); the whiskers and the shaded band are 95% intervals.',
  intRead(doc), 'The divergence penalty against arithmetic intensity', desc, H,
  svg('g', { class: 'legend', 'aria-hidden': 'true' },
    svg('path', { class: 'iline', d: `M${L} 14H${L + 22}` }), svg('circle', { class: 'imem', cx: L + 11, cy: 14, r: 4.5 }), svg('text', { x: L + 28, y: 19 }, 'streaming'),
    svg('path', { class: 'iline ichase', d: `M${L + 150} 14H${L + 172}` }), svg('rect', { class: 'imem', x: L + 157, y: 10, width: 8, height: 8 }), svg('text', { x: L + 178, y: 19 }, 'dependent loads'),
    svg('circle', { class: 'imem', cx: L + 11, cy: 36, r: 4.5 }), svg('text', { x: L + 28, y: 41 }, 'memory-bound'),
    svg('circle', { class: 'icomp', cx: L + 161, cy: 36, r: 4.5 }), svg('text', { x: L + 178, y: 41 }, 'compute-bound')),
  svg('g', { class: 'axis', 'aria-hidden': 'true' },
    svg('line', { x1: L, x2: R, y1: B, y2: B }), svg('line', { x1: L, x2: L, y1: T - 8, y2: B }),
    yt.map((v) => [svg('line', { class: 'grid', x1: L, x2: R, y1: y(v), y2: y(v) }), svg('text', { x: L - 6, y: y(v) + 5, 'text-anchor': 'end' }, fixed(v, 1))]),
    xt.map((v) => svg('text', { x: x(v), y: B + 18, 'text-anchor': 'middle' }, String(Number(v.toPrecision(1))))),
    svg('text', { x: R, y: H - 2, 'text-anchor': 'end' }, `${xwords} \u2192`)),
  ridges, r0 ? svg('text', { class: 'irt', x: x(r0.ridge) + (x(r0.ridge) > R - 90 ? -4 : 4), y: T - 2, 'text-anchor': x(r0.ridge) > R - 90 ? 'end' : 'start' }, ridgeText) : null,
  curves);
}

// ---- data-dependent divergence: the crossover map --------------------------

const VERDICT = { pays: 'pays', costs: 'costs', ambiguous: 'ambiguous?' };
const DIST = { uniform: 'uniformly drawn materials', zipf: 'Zipf-skewed materials', tiles: 'materials in coherent tiles', presorted: 'pre-sorted materials' };
const distWords = (d) => DIST[d] || `${d} materials`;
const ciPair = (a) => (Array.isArray(a) && fin(a[0]) && fin(a[1]) ? { lo: a[0], hi: a[1] } : null);
const sortOf = (doc) => (doc.sort && typeof doc.sort === 'object' && Array.isArray(doc.sort.cells) ? doc.sort : null);
const uniq = (vs) => [...new Set(vs)].sort((a, b) => a - b);

function sortAbout(t, doc) {
  const s = sortOf(doc), n = s ? s.cells.length : 0;
  return 'Items with a material id out of M, shaded by a path of C FMAs per material: shading them as given (naive) against sorting them by material (CUB\u2019s radix sort) and then shading, ' +
    `both timed in paired rounds; a table per cell below${n ? ` (${n} cells)` : ''}, each with the sort alone and the shade through a sorted index beside them.`;
}

// Per distribution and M, the crossover in words: "from C = 512", "never".
function crossWords(s, dist) {
  const rows = (Array.isArray(s.crossover) ? s.crossover : []).filter((x) => x.distribution === dist).sort((a, b) => a.m - b.m);
  return rows.map((x) => `${Number.isInteger(x.c) ? `from C = ${x.c}` : 'at no C measured'} with ${x.m} material${x.m === 1 ? '' : 's'}`).join(', ');
}

function sortRead(doc) {
  const s = sortOf(doc);
  const cells = s ? s.cells.filter((c) => c.measured && fin(c.ratio)) : [];
  if (!cells.length) return null;
  const dists = [...new Set(cells.map((c) => c.distribution))];
  const pays = cells.filter((c) => c.verdict === 'pays'), costs = cells.filter((c) => c.verdict === 'costs'), amb = cells.filter((c) => c.ambiguous);
  const top = cells.reduce((a, c) => (c.ratio > a.ratio ? c : a)), low = cells.reduce((a, c) => (c.ratio < a.ratio ? c : a));
  const where = (c) => `${c.distribution}, M = ${c.m}, C = ${c.c}`;
  return `sorting pays ${dists.map((d) => `for ${distWords(d)} ${crossWords(s, d)}`).join('; ')} (the thick line). ` +
    `It pays in ${pays.length} of ${cells.length} cells, up to ${fx(top.ratio, 2)}\u00d7 (${where(top)}), and costs in ${costs.length}, down to ${fx(low.ratio, 2)}\u00d7 (${where(low)}): ` +
    'where it costs, sorting and then shading took longer than shading the items as given. ' +
    (amb.length ? `${amb.length} cell${amb.length === 1 ? '' : 's'} (marked ?) cannot tell: the interval holds 1.` : 'No cell is ambiguous: every interval lies clear of 1.');
}

function sortChart(doc, id) {
  const s = sortOf(doc), cells = s ? s.cells : [];
  const dists = [...new Set(cells.map((c) => c.distribution))], ms = uniq(cells.map((c) => c.m)), cs = uniq(cells.map((c) => c.c));
  const LX = 64, RX = 372, CW = Math.min(100, (RX - LX) / Math.max(1, cs.length)), CHT = 40, GH = 40 + ms.length * CHT + 14;
  const TOP = 34, H = TOP + dists.length * GH;
  const cross = new Map((Array.isArray(s && s.crossover) ? s.crossover : []).map((x) => [`${x.distribution}:${x.m}`, x.c]));
  const blocks = dists.map((d, di) => {
    const y0 = TOP + di * GH, gy = y0 + 40, cx = (c) => LX + cs.indexOf(c) * CW, cy = (m) => gy + ms.indexOf(m) * CHT;
    const grid = cells.filter((c) => c.distribution === d).map((c) => {
      const cls = !c.measured || !fin(c.ratio) ? 'xun' : c.ambiguous ? 'xamb' : c.verdict === 'pays' ? 'xpay' : 'xcost';
      const ci = ciPair(c.ratio_ci);
      return svg('g', { class: 'scell', 'data-dist': d, 'data-m': c.m, 'data-c': c.c, 'data-verdict': c.verdict || 'unmeasured', 'data-ratio': c.ratio },
        svg('rect', { class: cls, x: cx(c.c) + 1, y: cy(c.m) + 1, width: CW - 2, height: CHT - 2, ...(cls === 'xcost' ? { fill: `url(#${id}-h)` } : {}) }),
        fin(c.ratio) ? [svg('text', { class: 'xsr', x: cx(c.c) + CW / 2, y: cy(c.m) + 17, 'text-anchor': 'middle' }, `${fx(c.ratio, 2)}\u00d7`),
          svg('text', { class: 'xsv', x: cx(c.c) + CW / 2, y: cy(c.m) + 33, 'text-anchor': 'middle' }, VERDICT[c.verdict] || (ci ? '' : 'no interval'))]
          : svg('text', { class: 'xsv', x: cx(c.c) + CW / 2, y: cy(c.m) + 25, 'text-anchor': 'middle' }, 'not measured'));
    });
    const marks = ms.map((m) => {
      const c = cross.get(`${d}:${m}`);
      return Number.isInteger(c) && cs.includes(c) ? svg('line', { class: 'xcross', 'data-dist': d, 'data-m': m, 'data-c': c, x1: cx(c), x2: cx(c), y1: cy(m), y2: cy(m) + CHT }) : null;
    });
    return svg('g', { class: 'sdist', 'data-dist': d },
      svg('text', { x: 4, y: y0 + 14, 'font-weight': 600 }, capital(distWords(d))),
      cs.map((c) => svg('text', { x: cx(c) + CW / 2, y: gy - 6, 'text-anchor': 'middle' }, `C = ${c}`)),
      ms.map((m) => svg('text', { x: LX - 6, y: cy(m) + CHT / 2 + 5, 'text-anchor': 'end' }, `M = ${m}`)), grid, marks);
  });
  const desc = cells.map((c) => `${c.distribution}, M = ${c.m}, C = ${c.c}: ${fin(c.ratio) ? `${fx(c.ratio, 2)}\u00d7, ${c.verdict}` : 'not measured'}`).join('; ') + '.';
  return figure(id, `Chart: per distribution a map, M (materials) down, C (FMAs per material) across, each cell naive / (sort + shade): above 1 sorting pays (filled), below 1 it costs (hatched); ` +
    'an ambiguous cell, whose 95% interval holds 1, is outlined with a question mark; the thick line marks the smallest C from which sorting pays in that row.', sortRead(doc),
  'Where sorting by material pays: naive over sort and shade', desc, H,
  svg('g', { class: 'legend', 'aria-hidden': 'true' },
    svg('rect', { class: 'xpay', x: 4, y: 6, width: 18, height: 14 }), svg('text', { x: 28, y: 19 }, 'pays'),
    svg('rect', { class: 'xcost', fill: `url(#${id}-h)`, x: 72, y: 6, width: 18, height: 14 }), svg('text', { x: 96, y: 19 }, 'costs'),
    svg('rect', { class: 'xamb', x: 146, y: 6, width: 18, height: 14 }), svg('text', { x: 170, y: 19 }, '? ambiguous'),
    svg('line', { class: 'xcross', x1: 272, x2: 272, y1: 4, y2: 22 }), svg('text', { x: 280, y: 19 }, 'pays from')),
  blocks);
}

// ---- mounting ------------------------------------------------------------

const KINDS = {
  'k-paths': { about: kAbout, chart: kChart },
  predication: { about: predAbout, chart: predChart },
  branchless: { about: (t) => blAbout(t), chart: blChart },
  reconvergence: { about: (t) => rcAbout(t), chart: rcChart },
  // Drawn once for the document, at its first table of the experiment.
  intensity: { about: intAbout, chart: (t, id, doc) => intChart(doc, id) },
  'data-sort': { about: sortAbout, chart: (t, id, doc) => sortChart(doc, id) },
};

// What table `t` is about (one paragraph), or null for a table of no experiment.
export function about(t, doc) {
  const k = KINDS[t.experiment];
  return k ? el('p', { class: 'xabout', 'data-experiment': t.experiment }, k.about(t, doc)) : null;
}

// Fills the slots renderDoc() left for each experiment table (`slots`:
// elements with `data-xabout`, above the table, or `data-xslot`, in its
// chart's details; the value the table's index) with its sentence and its
// chart. `key` keeps the SVG ids of several views apart.
export function mount(w, doc, slots, key) {
  const tables = doc.tables || [];
  for (const slot of slots) {
    const isChart = 'xslot' in slot.dataset, i = Number(isChart ? slot.dataset.xslot : slot.dataset.xabout), t = tables[i];
    if (!t || !KINDS[t.experiment]) continue;
    const id = `${w.uid}-${key}-x${i}`;
    slot.replaceChildren(!isChart ? about(t, doc) : t.experiment === 'predication' ? predChart(t, doc, id) : KINDS[t.experiment].chart(t, id, doc));
  }
}

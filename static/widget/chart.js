/* chart.js -- the widget's two pictures, drawn as SVG from the document.
 *
 * chart(): per table, horizontal bars: per row the measured ratio (solid,
 * with its 95% interval as a whisker across the bar's end, to scale), the
 * model's prediction (hatched) and, with counters, the GPU's own count of
 * warp instructions against the baseline row's (outlined); Part 2's readings
 * (one row against another) below; a dashed line at 1.00. laneMap(): block
 * 0 lane by lane (Row `lanes_block0`), one row of 32 cells per warp, path A
 * solid, path B hatched, split warps marked, and the same in words.
 * The colours are the stylesheet's (--dw-m measured and path A, --dw-p
 * predicted and path B); api/report_svg.c draws the same palette.
 */
import { el, svg, fin, fx, ciOf, laneWords, isSplit, wrapText, rowLabel } from './format.js';

// LABEL_CHARS fits a chart's 380-unit width at 15px bold.
const LABEL_CHARS = 40;
let maps = 0; // lane maps drawn on this page: each its own ids

// The hatching of a predicted bar, id `id`-h.
const hatch = (id) => svg('defs', {}, svg('pattern', { id: `${id}-h`, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
  svg('line', { class: 'hatch', x1: 0, y1: 0, x2: 0, y2: 6 })));

// The legend: measured, predicted and, where drawn, the GPU count and the whisker.
function legend(id, X0, counted, whiskers) {
  const wy = counted ? 20 : 0;
  return svg('g', { class: 'legend', 'aria-hidden': 'true' },
    svg('rect', { class: 'bm', x: X0, y: 6, width: 18, height: 14 }), svg('text', { x: X0 + 24, y: 19 }, 'measured'),
    svg('rect', { class: 'bp', fill: `url(#${id}-h)`, x: 120, y: 6, width: 18, height: 14 }), svg('text', { x: 144, y: 19 }, 'predicted (model)'),
    counted ? [svg('rect', { class: 'bg', x: X0, y: 28, width: 18, height: 14 }), svg('text', { x: X0 + 24, y: 41 }, 'GPU count (instructions vs baseline)')] : null,
    whiskers ? [svg('g', { class: 'wh' }, svg('line', { x1: X0 + 3, x2: X0 + 15, y1: 35 + wy, y2: 35 + wy }),
      svg('line', { x1: X0 + 3, x2: X0 + 3, y1: 27 + wy, y2: 43 + wy }), svg('line', { x1: X0 + 15, x2: X0 + 15, y1: 27 + wy, y2: 43 + wy })),
    svg('text', { x: X0 + 24, y: 41 + wy }, 'measured ratio\u2019s 95% interval')] : null);
}

// Horizontal bars per row of table `t`; `id` prefixes the SVG's ids.
export function chart(t, id) {
  const rows = t.rows || [];
  const gpu = (r) => (r.counters ? r.counters.instructions_vs_baseline : null);
  const counted = rows.some((r) => fin(gpu(r)));
  // No whisker on the baseline row (1 by definition).
  const cis = rows.map((r, i) => (i === t.baseline_row ? null : ciOf(r.ratio, r.ratio_ci)));
  const whiskers = cis.some(Boolean);
  // 380 wide with 15px text: at phone width (about 340px) text stays >= 13px.
  // A ratio with its interval has a decimal more, written after the whisker: its bars are a little shorter.
  const W = 380, X0 = 8, XMAX = whiskers ? 238 : 250, TOP = 18 + 20 * (1 + (counted || whiskers ? 1 : 0) + (counted && whiskers ? 1 : 0)), RH = counted ? 84 : 64;
  const readings = Array.isArray(t.readings) ? t.readings : [];
  const GH = 30, QH = 84;
  const vals = rows.flatMap((r, i) => [r.ratio, r.predicted_ratio, gpu(r), cis[i] && cis[i].hi]).concat(readings.flatMap((g) => [g.ratio, g.predicted])).filter(fin);
  const max = Math.max(1, ...vals) * 1.05;
  const x = (v) => X0 + (XMAX - X0) * (fin(v) ? Math.max(0, v) : 0) / max;
  // Labels wrap (SVG text does not): rows grow by a line per extra line.
  const LH = 18, labels = rows.map((r) => wrapText(r.label + (r.comparable === false ? ' (not comparable)' : ''), LABEL_CHARS));
  const rlab = readings.map((rd) => [...wrapText(rowLabel(t, rd.row), LABEL_CHARS), ...wrapText(`against ${rowLabel(t, rd.against)}`, LABEL_CHARS)]);
  const ys = [], rys = [];
  let yy = TOP;
  for (const l of labels) { ys.push(yy); yy += RH + (l.length - 1) * LH; }
  const RT = yy + (readings.length ? GH : 0);
  yy = RT;
  for (const l of rlab) { rys.push(yy); yy += QH + (l.length - 2) * LH; }
  const H = yy + 20;
  const desc = rows.map((r, i) => `${r.label}: measured ${cis[i] ? `${cis[i].point}x (${cis[i].said})` : `${fx(r.ratio, 2)}x`}, predicted ${fx(r.predicted_ratio, 2)}x` +
    (counted ? `, GPU instruction count ${fx(gpu(r), 2)}x` : '') + (r.comparable === false ? ' (not comparable)' : '')).join('; ') +
    (readings.length ? '. Read both ways: ' + readings.map((g) => `${rowLabel(t, g.row)} against ${rowLabel(t, g.against)}: ` +
      `measured ${fx(g.ratio, 2)}x, predicted ${fx(g.predicted, 2)}x`).join('; ') : '');
  // A bar with its value; with an interval, the whisker (a line from lo
  // to hi with a cap at each end, to scale: an interval narrower than
  // the caps draws as one tick) and the value after the whisker.
  const bar = (v, yy, cls, word, ci) => [
    svg('rect', { class: cls, x: X0, y: yy, width: Math.max(1, x(v) - X0), height: 16, ...(cls === 'bp' ? { fill: `url(#${id}-h)` } : {}) }),
    ci ? svg('g', { class: 'wh', 'aria-hidden': 'true' }, svg('line', { class: 'wl', x1: x(ci.lo), x2: x(ci.hi), y1: yy + 8, y2: yy + 8 }),
      svg('line', { class: 'wlo', x1: x(ci.lo), x2: x(ci.lo), y1: yy - 3, y2: yy + 19 }), svg('line', { class: 'whi', x1: x(ci.hi), x2: x(ci.hi), y1: yy - 3, y2: yy + 19 })) : null,
    svg('text', { x: Math.max(x(v), ci ? x(ci.hi) + 2 : 0) + 5, y: yy + 14 }, fin(v) ? `${ci ? ci.point : fx(v, 2)}\u00d7 ${word}` : `no ${word} value`),
  ];
  const g = rows.map((r, i) => {
    const y = ys[i], b = y + (labels[i].length - 1) * LH;
    return svg('g', { class: 'pair', 'data-row': i },
      labels[i].map((l, k) => svg('text', { x: X0, y: y + 14 + k * LH, 'font-weight': 600 }, l)),
      bar(r.ratio, b + 20, 'bm', 'measured', cis[i]), bar(r.predicted_ratio, b + 40, 'bp', 'predicted'),
      counted ? bar(gpu(r), b + 60, 'bg', 'GPU count') : null);
  });
  const rg = readings.length ? [svg('text', { x: X0, y: RT - 8, 'font-weight': 600, class: 'rhead' }, 'Read both ways (one row against another)'),
    ...readings.map((rd, i) => {
      const y = rys[i], b = y + (rlab[i].length - 2) * LH;
      return svg('g', { class: 'reading', 'data-reading': rd.kind },
        rlab[i].map((l, k) => svg('text', { x: X0, y: y + 14 + k * LH }, l)),
        bar(rd.ratio, b + 40, 'bm', 'measured'), bar(rd.predicted, b + 60, 'bp', 'predicted'));
    })] : [];
  const one = x(1);
  return el('figure', { class: 'chart' },
    el('figcaption', {}, `Chart: solid bars are the measured ratio, hatched bars the model's prediction` +
      (counted ? `, outlined bars the GPU's own count of warp instructions against the baseline row's` : '') +
      (whiskers ? '; the whisker across a solid bar\u2019s end is its 95% interval, drawn to scale (one tick where the interval is narrower than the tick)' : '') +
      `; the dashed line is 1.00, the baseline` + (readings.length ? ' (for the readings, the row read against)' : '') + '.'),
    svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-t ${id}-d` },
      svg('title', { id: `${id}-t` }, `${t.title}: measured ratio beside predicted ratio, per row`), svg('desc', { id: `${id}-d` }, desc),
      hatch(id), legend(id, X0, counted, whiskers), g, rg,
      svg('line', { class: 'ref', x1: one, x2: one, y1: TOP - 4, y2: H - 16 }),
      svg('text', { x: one, y: H - 3, 'text-anchor': one < 70 ? 'start' : 'middle' }, '1.00 = baseline')));
}

// The lane map of block 0 (Row `lanes_block0`, from the server's
// analysis: no GPU, and no second copy of the predicate here): one row
// per warp, one cell per lane, path A solid in the chart's measured
// colour, path B hatched in its predicted colour, a missing lane of a
// partial warp outlined; split warps marked. The same in words, for
// screen readers (the SVG's description) and for anyone (the details).
// `only`: the index of one warp to draw alone (the instruction view's
// warp), with its lanes numbered underneath.
export function laneMap(lanes, row, only) {
  const one = Number.isInteger(only);
  const id = `dw-lanes${++maps}`, CW = 9, CH = 14, LX = 60, GAP = 4, W = LX + 32 * CW + 44;
  const shown = one ? [only] : lanes.map((_, k) => k);
  const H = shown.length * (CH + GAP) + 4 + (one ? 16 : 0);
  const split = lanes.map(isSplit), nSplit = split.filter(Boolean).length;
  // Words per warp, with runs of identical warps said once ("warps 1-7: ...").
  const words = [];
  for (let n = 0; n < shown.length;) {
    const i = shown[n];
    let m = n;
    while (m + 1 < shown.length && lanes[shown[m + 1]] === lanes[i]) m++;
    const j = shown[m];
    words.push(`${i === j ? `warp ${i}` : `warps ${i}-${j}`}${split[i] ? ', split' : ''}: ${laneWords(lanes[i])}`);
    n = m + 1;
  }
  const cells = shown.map((k, n) => {
    const w = lanes[k], y = 2 + n * (CH + GAP);
    return svg('g', { class: 'warp', 'data-warp': k, 'data-split': split[k] ? 'true' : 'false' },
      svg('text', { x: 0, y: y + CH - 2, 'font-weight': split[k] ? 700 : 400 }, `warp ${k}`),
      [...w].map((c, i) => svg('rect', {
        class: c === 'A' ? 'la' : c === 'B' ? 'lb' : 'ln', 'data-lane': i, 'data-path': c,
        x: LX + i * CW + 0.5, y, width: CW - 1.5, height: CH, ...(c === 'B' ? { fill: `url(#${id}-h)` } : {}),
      })),
      split[k] ? svg('text', { class: 'sp', x: LX + 32 * CW + 6, y: y + CH - 2 }, 'split') : null);
  });
  // Lane numbers every 8 lanes under a single warp, so "which lane" can be read off.
  const ticks = one ? svg('g', { class: 'ticks', 'aria-hidden': 'true' }, [0, 8, 16, 24, 31].map((i) =>
    svg('text', { x: LX + i * CW + CW / 2, y: H - 2, 'text-anchor': 'middle' }, String(i)))) : null;
  const summary = one ? `Warp ${only} of block 0, lane by lane${split[only] ? ' (split)' : ''}.`
    : `Block 0, lane by lane: ${nSplit} of ${lanes.length} warp${lanes.length === 1 ? '' : 's'} split.`;
  return el('figure', { class: 'lanes' },
    el('figcaption', {}, summary + ' Solid cells take path A, hatched cells path B' +
      (shown.some((k) => lanes[k].includes('-')) ? ', outlined cells are lanes the last warp lacks' : '') + '.'),
    svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-t ${id}-d` },
      svg('title', { id: `${id}-t` }, `Lane map of ${one ? `warp ${only} of ` : ''}block 0 for ${row.label}`),
      svg('desc', { id: `${id}-d` }, words.join('; ') + '.'),
      svg('defs', {}, svg('pattern', { id: `${id}-h`, width: 3, height: 3, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
        svg('rect', { class: 'lb', width: 3, height: 3 }), svg('line', { class: 'lbh', x1: 0, y1: 0, x2: 0, y2: 3 }))),
      cells, ticks),
    el('details', {}, el('summary', {}, 'The lane map in words'), el('ul', {}, words.map((w) => el('li', {}, w)))));
}

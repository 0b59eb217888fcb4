/* compare.js -- a suite measured on several GPU models (GET /evidence/latest
 * lists them in `gpus`), loaded only where the store holds two or more.
 *
 * A selector switches the widget's main view between the GPUs; one table
 * and one chart per table of the suite show each GPU's ratio side by side
 * with the prediction, under each GPU's provenance.
 */
import { el, svg, fin, fx } from './format.js';
import { provenance } from './evidence.js';

// `cols`: [{g: the GPU's index entry, doc, rec: its Evidence record}] of
// the GPUs with evidence of the suite, two or more.
export function compare(w, index, cols) {
  const uid = w.uid + '-gpu';
  const sel = el('select', { id: uid, onchange: async (e) => { w.selected = e.target.value; await w.loadGpu(w.selected, index); } },
    cols.map((c) => el('option', { value: c.g.gpu, selected: c.g.gpu === (w.selected || index.gpu) ? true : null }, c.g.name)));
  w.picker.replaceChildren(el('label', { for: uid }, 'GPU shown above: '), sel);
  const provs = el('ul', { class: 'provs' }, cols.map((c) => el('li', {}, provenance(c.doc, { ...((c.rec && c.rec.provenance) || {}), gpu_name: c.g.name }, null))));
  const tables = (cols[0].doc.tables || []).flatMap((t, ti) => {
    const rows = t.rows || [];
    const ratio = (c, r) => { const ct = (c.doc.tables || []).find((x) => x.id === t.id); const cr = ct && (ct.rows || []).find((x) => x.name === r.name); return cr ? cr.ratio : null; };
    const head = ['Predicate', 'Predicted ratio', ...cols.map((c) => `Ratio on ${c.g.name}`)];
    const body = rows.map((r) => el('tr', {},
      el('th', { scope: 'row' }, el('code', {}, r.label)),
      [fx(r.predicted_ratio, 2), ...cols.map((c) => fx(ratio(c, r), 2))].map((v, j) =>
        el('td', { 'data-k': j ? `gpu-${cols[j - 1].g.gpu}` : 'predicted' }, el('span', { class: 'dl', 'aria-hidden': 'true' }, head[j + 1]), el('span', { class: 'v' }, v)))));
    const table = el('div', { class: 'scroll', role: 'region', 'aria-label': `${t.title} on each GPU` },
      el('table', { class: 'cmp' }, el('caption', {}, `${t.title} \u2014 the ratio against ${t.baseline || 'the baseline'} on each GPU`),
        el('thead', {}, el('tr', {}, head.map((h) => el('th', { scope: 'col' }, h)))), el('tbody', {}, body)));
    return [table, compareChart(t, rows, cols, ratio, `${uid}-${ti}`)];
  });
  w.cmp.replaceChildren(el('h3', {}, `${w.suite} on each GPU`), provs, ...tables);
}

// Per row: one solid bar per GPU (its own colour) and the hatched prediction.
function compareChart(t, rows, cols, ratio, id) {
  // A legend names the GPUs (names are long); the bars carry only their values.
  const W = 380, X0 = 8, XMAX = 300, LH = 20, TOP = 8 + (cols.length + 1) * LH + 6, BH = 14, RH = 26 + (cols.length + 1) * (BH + 4);
  const vals = rows.flatMap((r) => [r.predicted_ratio, ...cols.map((c) => ratio(c, r))]).filter(fin);
  const max = Math.max(1, ...vals) * 1.05;
  const x = (v) => X0 + (XMAX - X0) * (fin(v) ? Math.max(0, v) : 0) / max;
  const H = TOP + rows.length * RH + 20;
  const g = rows.map((r, i) => {
    const y = TOP + i * RH;
    const bars = cols.map((c, k) => {
      const v = ratio(c, r), yy = y + 22 + k * (BH + 4);
      return [svg('rect', { class: `g${k % 4}`, x: X0, y: yy, width: Math.max(1, x(v) - X0), height: BH }),
        svg('text', { x: x(v) + 5, y: yy + 12 }, `${fx(v, 2)}\u00d7`)];
    });
    const yp = y + 22 + cols.length * (BH + 4);
    return svg('g', { class: 'pair', 'data-row': i },
      svg('text', { x: X0, y: y + 14, 'font-weight': 600 }, r.label), bars.flat(),
      svg('rect', { class: 'bp', fill: `url(#${id}-h)`, x: X0, y: yp, width: Math.max(1, x(r.predicted_ratio) - X0), height: BH }),
      svg('text', { x: x(r.predicted_ratio) + 5, y: yp + 12 }, `${fx(r.predicted_ratio, 2)}\u00d7`));
  });
  const desc = rows.map((r) => `${r.label}: ` + cols.map((c) => `${c.g.name} ${fx(ratio(c, r), 2)}x`).join(', ') +
    `, predicted ${fx(r.predicted_ratio, 2)}x`).join('; ');
  const one = x(1);
  return el('figure', {}, el('figcaption', {}, 'Chart: one solid bar per GPU (its measured ratio), the hatched bar the model\u2019s prediction; the dashed line is 1.00.'),
    svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-t ${id}-d` },
      svg('title', { id: `${id}-t` }, `${t.title}: the measured ratio on each GPU beside the prediction`), svg('desc', { id: `${id}-d` }, desc),
      svg('defs', {}, svg('pattern', { id: `${id}-h`, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
        svg('line', { class: 'hatch', x1: 0, y1: 0, x2: 0, y2: 6 }))),
      svg('g', { class: 'legend', 'aria-hidden': 'true' },
        cols.map((c, k) => [svg('rect', { class: `g${k % 4}`, x: X0, y: 8 + k * LH, width: 18, height: 14 }),
          svg('text', { x: X0 + 24, y: 20 + k * LH }, c.g.name)]).flat(),
        svg('rect', { class: 'bp', fill: `url(#${id}-h)`, x: X0, y: 8 + cols.length * LH, width: 18, height: 14 }),
        svg('text', { x: X0 + 24, y: 20 + cols.length * LH }, 'predicted (model)')),
      g, svg('line', { class: 'ref', x1: one, x2: one, y1: TOP, y2: H - 16 }),
      svg('text', { x: one, y: H - 3, 'text-anchor': one < 70 ? 'start' : 'middle' }, '1.00 = baseline')));
}

/* nights.js -- stored evidence against the nights before it: per table one
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
 * The sparklines read the suite's history (GET /evidence/history/{suite},
 * or /evidence/{gpu}/history/{suite}), fetched once per page through the
 * element's shared answers. This module is loaded only where there is a
 * previous night, so a capture of one night fetches neither it nor the
 * history. Each sparkline is a small inline SVG in the widget's palette:
 * the intervals as a band, the ratios as a line, the last night marked,
 * and the numbers in its accessible name.
 */
import { el, svg, fin, fixed, pct, utcText } from './format.js';

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
  if (te && te.unchanged_since) head = [el('b', {}, `Unchanged since ${te.unchanged_since}`), ` (${rows.length} ratio${rows.length === 1 ? '' : 's'} the same within ${tol})`];
  else if (moved.length) head = moved.flatMap((r, k) => [k ? '; ' : '', name(r), ' ', el('b', {}, changeWords(r).split(' [')[0]), ` [${changeWords(r).split(' [').slice(1).join(' [')}`]).concat([` since ${prev}`]);
  else if (rows.length) head = [`No ratio changed by more than ${tol} since ${prev}`];
  else head = [`No ratio could be compared with ${prev}`];
  const env = envWords(c);
  const filed = ev.filed_as && ev.provenance && ev.provenance.finished_utc
    ? ` This night is filed as ${ev.filed_as} by the demo capture; it was measured ${utcText(ev.provenance.finished_utc)} UTC, ${prev}\u2019s ${utcText(c.previous.finished_utc) || 'at a time not recorded'} UTC.` : '';
  return el('p', { class: 'nights', 'data-table': t.id }, 'Nights: ', head, env.length ? `; changed since ${prev}: ${env.join('; ')}` : '', '.', filed);
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
export async function mount(w, ev, doc) {
  const tables = doc.tables || [];
  const boxes = [...w.tables.querySelectorAll(':scope > .scroll')];
  tables.forEach((t, i) => { const line = boxes[i] && nightsLine(ev, t); if (line) boxes[i].before(line); });
  const r = await w.shared(historyPath(w, ev));
  const nights = r.status === 200 && r.json && Array.isArray(r.json.nights) ? r.json.nights : [];
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

/* trybox.js -- "Try your own predicate": a C expression and a block shape,
 * analysed by POST /analyze 250 ms after the last keystroke (no GPU).
 *
 * It shows the analysis (warps split, threads on path A, path-runs, the
 * predicted ratio against the Part 1 baseline, whether the row is
 * comparable) beside the lane map of block 0 (Row `lanes_block0`, drawn
 * from the analysis, so no copy of the predicate lives here), the table's
 * note where the block puts every thread on one path, or the error,
 * wrapped, with a caret under the column it names. The page's URL keeps
 * the predicate and the block shape (`?try=...&block=32x8`, or
 * `<id>.try` for a widget with an id), so a link reproduces them. The box
 * starts open where the widget is wide or a link brought a predicate, and
 * one click away on a phone.
 * "Measure this" measures it below the box (jobs.js).
 */
import { el, fin, fx, count, capital, errOf, fieldWords, fieldText, kids } from './format.js';
import { laneMap } from './chart.js';
import { baseNote, provenance, renderDoc } from './evidence.js';

const DEBOUNCE_MS = 250;

// A predicate's text with a caret under the character an Error's
// `expr_column` names (1-based; one past the end for "unexpected end of
// input"). The text wraps at any width and the caret stays under its
// character, being drawn below the marked character rather than on a
// second line of its own. The column counts bytes, which is the character
// index here: the parser stops at the first byte that is not ASCII.
function caretView(text, col) {
  const i = Math.min(Math.max(0, col - 1), text.length);
  const at = text.slice(i, i + 1) || '\u00a0';
  return el('p', { class: 'expr' }, el('code', {}, text.slice(0, i),
    el('mark', { class: 'at' }, at, el('span', { class: 'cr', 'aria-hidden': 'true' }, '^')), text.slice(i + 1)));
}

export class TryBox {
  // `w`: the widget (its server, status line and measurements); `measure`:
  // whether the box has a "Measure this" button.
  constructor(w, measure) {
    const uid = w.uid;
    this.w = w;
    this.inp = el('input', { id: uid + '-x', type: 'text', spellcheck: 'false', autocomplete: 'off', autocapitalize: 'off',
      placeholder: 'threadIdx.x < 16', 'aria-describedby': uid + '-hint', oninput: () => this.edited() });
    const dim = (k, v, text) => el('label', { for: `${uid}-${k}` }, text,
      el('input', { id: `${uid}-${k}`, type: 'number', min: 1, max: 1024, step: 1, value: v, inputmode: 'numeric', oninput: () => this.edited() }));
    const bx = dim('bx', 256, 'Block width (blockDim.x)'), by = dim('by', 1, 'Block height (blockDim.y)');
    [this.bx, this.by] = [bx.querySelector('input'), by.querySelector('input')];
    this.out = el('div', { class: 'out', 'aria-live': 'polite' });
    this.perma = el('p', { class: 'perma' });
    this.mbtn = measure ? el('button', { type: 'button', onclick: () => this.measureMine(), 'aria-describedby': uid + '-why' }, 'Measure this') : null;
    this.mine = el('div', { class: 'mine' });
    const set = el('fieldset', { class: 'try', 'aria-labelledby': uid + '-try' },
      el('label', { for: uid + '-x' }, 'Predicate (C expression; nonzero sends the thread down path A)'),
      this.inp,
      el('div', { class: 'shape', role: 'group', 'aria-label': 'Block shape' }, bx, by),
      el('p', { class: 'hint', id: uid + '-hint' },
        'Names: threadIdx.x/.y, blockIdx.x, blockDim.x/.y, warpSize, lane, warp. Checked as you type' +
        (measure ? '; the GPU runs it only on Measure this.' : '.')),
      this.out, this.perma, measure ? el('div', { class: 'bar' }, this.mbtn) : null, this.mine);
    // Open where there is room for it, or where a link brought a predicate;
    // a click away on a phone.
    this.box = el('details', { class: 'trybox' }, el('summary', { id: uid + '-try' }, 'Try your own predicate'), set);
    this.restore();
  }

  // Opens the box where the widget is wide (`wide`) or the URL held a predicate.
  place(wide) { if (wide || this.inp.value) this.box.open = true; }

  baseline() {
    const t = this.w.doc && this.w.doc.tables.find((x) => x.id === 'part1');
    return (t && t.baseline) || 'warp-parity';
  }

  // The block shape as a request's threads_per_block (x, or [x, y] when
  // y > 1), or null when a box holds no whole number.
  shape() {
    const x = Number(this.bx.value), y = Number(this.by.value);
    if (!Number.isInteger(x) || !Number.isInteger(y) || this.bx.value === '' || this.by.value === '') return null;
    return y === 1 ? x : [x, y];
  }

  // The reader's predicate against the baseline, in its block shape.
  request(expr) {
    const base = this.baseline();
    return { part: 1, predicates: [expr, base], baseline: base, threads_per_block: this.shape() };
  }

  // The permalink: the URL's query keeps the tried predicate (`try`) and
  // the block shape (`block`, "256" or "32x8"); a widget with an id uses
  // `<id>.try` and `<id>.block`, so two try boxes on one page keep apart.
  // Read once when the box is made, rewritten (history.replaceState, no
  // new history entry per keystroke) as the reader types.
  key(k) { return this.w.id ? `${this.w.id}.${k}` : k; }

  restore() {
    const q = new URLSearchParams(location.search);
    const m = /^(\d+)(?:x(\d+))?$/.exec(q.get(this.key('block')) || '');
    if (m) { this.bx.value = m[1]; this.by.value = m[2] || '1'; }
    const expr = q.get(this.key('try'));
    if (expr) { this.inp.value = expr; this.remember(); this.queue(); }
  }

  remember() {
    const u = new URL(location.href), expr = this.inp.value.trim(), sh = this.shape();
    if (expr) u.searchParams.set(this.key('try'), expr); else u.searchParams.delete(this.key('try'));
    if (expr && sh != null) u.searchParams.set(this.key('block'), Array.isArray(sh) ? sh.join('x') : String(sh));
    else u.searchParams.delete(this.key('block'));
    if (u.href !== location.href) history.replaceState(history.state, '', u.href);
    this.perma.replaceChildren(...(expr ? [el('a', { href: u.href }, 'Link to this predicate'), ' (this page with the predicate and block shape filled in)'] : []));
  }

  edited() {
    this.remember();
    this.queue();
  }

  queue() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.analyze(), DEBOUNCE_MS);
  }

  // An Error answer: what is at fault in the reader's words, the server's
  // reason, and the predicate with a caret under the column it names.
  error(r, req) {
    const e = errOf(r.json);
    const what = fieldWords(e.field, req, true);
    const text = fieldText(e.field, req);
    const col = fin(e.expr_column) && e.expr_column > 0 && typeof text === 'string' ? e.expr_column : 0;
    if (r.refused) return el('div', { class: 'err' }, el('p', {}, `Could not check the predicate: ${this.w.corsWords(true)}.`));
    const head = r.status === 0 ? 'Could not check the predicate:'
      : what ? `${capital(what)} is not valid:` : `The server refused the analysis (HTTP ${r.status}):`;
    return el('div', { class: 'err' }, el('p', {}, `${head} ${e.reason || `HTTP ${r.status}`}${/[.!?]$/.test(e.reason || '') ? '' : '.'}`),
      col ? caretView(text, col) : null);
  }

  async analyze() {
    const expr = this.inp.value.trim();
    if (this.ctl) this.ctl.abort();
    if (!expr) { this.out.replaceChildren(); return; }
    if (this.shape() == null) { this.out.replaceChildren(el('div', { class: 'err' }, el('p', {}, 'The block shape needs a whole number of threads in each box.'))); return; }
    const ctl = this.ctl = new AbortController();
    const req = this.request(expr), base = req.baseline;
    let r;
    try { r = await this.w.call('POST', '/analyze', req, ctl.signal); } catch (_) { return; }
    if (ctl !== this.ctl) return;
    if (r.status !== 200) { this.out.replaceChildren(this.error(r, req)); return; }
    const doc = r.json || {}; // POST /analyze answers the divergence.v1 document itself
    const t = (doc.tables || [])[0] || {};
    const row = (t.rows || []).find((x) => x.name === expr) || (t.rows || [])[0];
    if (!row) { this.out.replaceChildren(el('p', {}, 'The server returned no analysis for this predicate.')); return; }
    const item = (k, v) => el('div', {}, el('dt', {}, k), el('dd', {}, v));
    const dl = el('dl', { class: 'an' },
      item('Warps split per block', count(row.warps_split_per_block, row.warps_split, row.warps_per_block)),
      item('Threads on path A per block', count(row.threads_on_a_per_block, row.threads_on_a, row.threads_per_block)),
      item('Path-runs per block', count(row.path_runs_per_block, row.path_runs)),
      item(`Predicted ratio vs ${t.baseline || base}`, fx(row.predicted_ratio, 2)),
      item('Comparable', row.comparable === false ? `no \u2014 ${row.comparable_reason || 'does different work from the baseline'}` : 'yes: same work as the baseline'));
    this.out.replaceChildren(...kids(el('div', { class: 'an-wrap' }, dl, Array.isArray(row.lanes_block0) ? laneMap(row.lanes_block0, row) : null),
      t.note ? baseNote(t) : null));
  }

  measureMine() {
    const w = this.w, expr = this.inp.value.trim();
    if (!expr) { w.say('Type a predicate first.'); this.inp.focus(); return; }
    if (this.shape() == null) { w.say('The block shape needs a whole number of threads in each box.'); return; }
    const req = this.request(expr), base = req.baseline;
    w.run(async () => req, `Asking the server to measure ${expr}\u2026`, (doc, got) => {
      this.mine.replaceChildren(el('p', { class: 'prov' }, provenance(doc, { finished_utc: got.finished_utc }, got)), ...renderDoc(w, doc, 'mine'));
      w.say(`Done: ${expr} measured against ${base}.`);
    }, true);
  }
}

/* format.js -- how the widget writes things: numbers, the reader's words for
 * what the server names, and the two element builders every view uses.
 *
 * Numbers have fixed decimals per quantity (ms 3, ratios and noise % 2,
 * clocks 0, a ratio with its interval 3, or 4 where 3 would print the
 * interval as a point, changes between nights in % 1), rounded as C's printf
 * rounds them (the CLI, the .txt transcripts and the README use printf): to
 * the nearest, and a value exactly halfway to the even digit, so the model's
 * 1.125 reads 1.12 everywhere. A value that is not there is a dash, never
 * "null" or "NaN".
 */
const SVGNS = 'http://www.w3.org/2000/svg';
export const D = '\u2014';
export const fin = (v) => typeof v === 'number' && isFinite(v);

// toFixed() rounds the exact value of the double; only an exact tie differs
// from printf, and a double is an exact tie at d decimals when v * 2^(d+1)
// is an odd integer.
export function fixed(v, d) {
  const t = Math.abs(v) * 2 ** (d + 1);
  if (!Number.isInteger(t) || t % 2 === 0 || t > Number.MAX_SAFE_INTEGER) return v.toFixed(d);
  const n = Math.floor(Math.abs(v) * 10 ** d); // the lower neighbour, exact for a tie
  const k = n % 2 === 0 ? n : n + 1;           // to the even one
  const s = String(k).padStart(d + 1, '0');
  return (v < 0 && k ? '-' : '') + (d ? `${s.slice(0, -d)}.${s.slice(-d)}` : s);
}
export const fx = (v, d) => (fin(v) ? fixed(v, d) : D);
export const num = (v) => (fin(v) ? (Number.isInteger(v) ? String(v) : fixed(v, 1)) : D);
// Counts grouped in thousands (the listing's counts are exact), pcs in hex.
export const big = (v) => (fin(v) ? Math.round(v).toLocaleString('en-US') : D);
export const hex = (pc) => (Number.isInteger(pc) ? '0x' + pc.toString(16).padStart(4, '0') : D);

// A ratio with its 95% interval (Row `ratio_ci`) as the transcript prints
// it: 3 decimals, or 4 where 3 would print an interval that is not a point
// as the point itself. The point takes the interval's decimals, so 0.998
// [0.996, 0.998] never reads as 1.00 beside an interval without it. Null
// without an interval (a document from before them).
export function ciOf(v, ci) {
  if (!fin(v) || !ci || !fin(ci.lo) || !fin(ci.hi)) return null;
  const p = fixed(v, 3), d = ci.lo < ci.hi && p === fixed(ci.lo, 3) && p === fixed(ci.hi, 3) ? 4 : 3;
  return { lo: ci.lo, hi: ci.hi, d, point: fixed(v, d), text: `[${fixed(ci.lo, d)}, ${fixed(ci.hi, d)}]`, said: `95% interval ${fixed(ci.lo, d)} to ${fixed(ci.hi, d)}` };
}
// A relative change (Comparison `change`, `change_ci`) in percent to 1
// decimal, as the server's summary line prints it.
export const pct = (v, sign) => (fin(v) ? (sign && v >= 0 ? '+' : '') + fixed(100 * v, 1) : D);
// "3 min ago" from milliseconds.
export function ago(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 5) return 'just now';
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}
export const utcMs = (t) => { const ms = Date.parse(t || ''); return isFinite(ms) ? ms : null; };
// "2026-12-01 22:18:38" from "2026-12-01T22:18:38Z" (or its fraction of a second).
export const utcText = (t) => String(t || '').replace('T', ' ').replace(/(:\d\d)(\.\d+)?Z?$/, '$1');
export const cuver = (v) => (fin(v) && v >= 1000 ? `${Math.floor(v / 1000)}.${(v % 1000) / 10}` : v == null ? '?' : String(v));
export const capital = (t) => t.charAt(0).toUpperCase() + t.slice(1);
// A sentence ends in a full stop unless it ends in one already.
export const stop = (t) => (/[.!?]$/.test(t) ? t : t + '.');

// "8 of 8", or "0-256 (mean 128) of 256" when blocks differ (blockIdx.x
// predicates): `mean` a row's *_per_block figure, `c` its Count over the
// blocks ({min, max, total}), `of` what it counts out of.
export function count(mean, c, of) {
  let s = num(mean);
  if (c && fin(c.min) && c.min !== c.max) s = `${c.min}\u2013${c.max} (mean ${s})`;
  return fin(of) ? `${s} of ${of}` : s;
}

// CUDA's words for "no usable GPU" in plain ones, CUDA's own text kept after.
export function plainGpuReason(why) {
  const w = String(why || '');
  let p = 'this server has no usable NVIDIA GPU';
  if (/InsufficientDriver|driver version is insufficient/i.test(w)) p = 'the NVIDIA driver on this server is missing or too old for its CUDA build';
  else if (/NoDevice|no CUDA-capable device|no CUDA device/i.test(w)) p = 'this server has no NVIDIA GPU';
  return w ? `${p} (${w})` : p;
}

// The `error` object of an Error answer, or of a failed Job ({} when there is none).
export const errOf = (j) => (j && j.error) || {};

// A request field an Error names (`field`, the JSON name) in a reader's
// words. `req` is the request the error answers: predicates[i] becomes
// "predicate i+1 (its text)"; `mine`, in the try box, says which entry is
// the reader's own predicate ("your predicate") and which the baseline.
const FIELD_WORDS = {
  part: 'the part', predicates: 'the predicates', baseline: 'the baseline', blocks: 'the number of blocks',
  threads_per_block: 'the block shape (threads per block)', iterations: 'the iterations per thread',
  max_noise: 'the noise limit', budget_ms: 'the time budget', min_samples: 'the fewest samples',
  max_samples: 'the most samples', scenario: 'the scenario', witness: 'the witness switch', counters: 'the counters switch',
};
export function fieldWords(field, req, mine) {
  if (!field) return '';
  const m = /^predicates\[(\d+)\]$/.exec(field);
  const list = (req && Array.isArray(req.predicates)) ? req.predicates : [];
  if (m) {
    const i = Number(m[1]), text = list[i];
    if (mine && i === 0) return 'your predicate';
    if (mine && i === 1) return `the baseline predicate (${text})`;
    return text != null ? `predicate ${i + 1} (${text})` : `predicate ${i + 1}`;
  }
  return FIELD_WORDS[field] || `the field ${field}`;
}
// The text an Error's `field` names, when it is a predicate of `req`.
export function fieldText(field, req) {
  const m = /^predicates\[(\d+)\]$/.exec(field || '');
  if (m && req && Array.isArray(req.predicates)) return req.predicates[Number(m[1])];
  if (field === 'baseline' && req) return req.baseline;
  return undefined;
}

// A warp's string of a lane map (Row `lanes_block0`: A, B or - per lane)
// in words: "lanes 0-15 on A, 16-31 on B"; "all 32 lanes on B"; a warp
// that repeats a shorter pattern says the pattern once ("lane 0 on B, 1 on
// A, repeating every 2 lanes"); one of more than four runs otherwise lists
// each path's lanes; a partial warp says which lanes it lacks.
export function laneWords(w) {
  const present = w.replace(/-+$/, ''), n = present.length;
  const runsOf = (str) => {
    const out = [];
    for (let i = 0; i < str.length;) {
      let j = i;
      while (j + 1 < str.length && str[j + 1] === str[i]) j++;
      out.push({ p: str[i], a: i, b: j });
      i = j + 1;
    }
    return out;
  };
  const span = (r) => (r.a === r.b ? String(r.a) : `${r.a}-${r.b}`);
  const list = (rs) => (rs[0].a === rs[0].b ? 'lane ' : 'lanes ') + rs.map((r) => `${span(r)} on ${r.p}`).join(', ');
  const runs = runsOf(present);
  let period = 0;
  for (let q = 2; q <= n / 2 && !period; q++) if (n % q === 0 && present === present.slice(0, q).repeat(n / q)) period = q;
  let s;
  if (runs.length === 1) s = `all ${n} lanes on ${runs[0].p}`;
  else if (runs.length <= 4) s = list(runs);
  else if (period && runsOf(present.slice(0, period)).length <= 4) s = `${list(runsOf(present.slice(0, period)))}, repeating every ${period} lanes`;
  else s = ['A', 'B'].map((p) => { const on = runs.filter((r) => r.p === p); return `${on.reduce((k, r) => k + r.b - r.a + 1, 0)} lanes on ${p} (${on.map(span).join(', ')})`; }).join(', ');
  if (n < w.length) s += `; lanes ${n}-${w.length - 1} absent (a partial warp)`;
  return s;
}
export const isSplit = (w) => w.includes('A') && w.includes('B');

// `text` cut at spaces into lines of at most `max` characters (a word
// longer than that gets a line of its own, cut): SVG text does not wrap.
export function wrapText(text, max) {
  const out = [];
  let line = '';
  for (const w of String(text).split(/\s+/).filter(Boolean)) {
    for (let word = w; word;) {
      const room = line ? max - line.length - 1 : max;
      if (word.length <= room) { line = line ? `${line} ${word}` : word; word = ''; }
      else if (line) { out.push(line); line = ''; }
      else { out.push(word.slice(0, max)); word = word.slice(max); }
    }
  }
  if (line || !out.length) out.push(line);
  return out;
}

// An element: attributes (null and false left out, `on*` as listeners,
// `text` as its text) and children (arrays flattened, null and undefined
// left out, so a missing part never shows as the word "null").
export function el(tag, attrs, ...children) {
  const e = tag.startsWith('svg:') ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of children.flat(Infinity)) if (k != null && k !== false) e.append(k);
  return e;
}
export const svg = (tag, attrs, ...kids) => el('svg:' + tag, attrs, ...kids);
// Children for replaceChildren(): the same rule as el()'s.
export const kids = (...list) => list.flat(Infinity).filter((k) => k != null && k !== false);

// The label of the row of table `t` named `name` (a reading names rows by name).
export function rowLabel(t, name) {
  const r = (t.rows || []).find((x) => x.name === name);
  return r ? r.label : name;
}

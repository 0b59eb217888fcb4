/* jobs.js -- a measurement from the page, loaded the first time a reader
 * asks for one.
 *
 * POST /measure with the suite's request (GET /suites, else the evidence's
 * recorded request, else one rebuilt from the document) or the try box's,
 * then GET /jobs/{id}: its event stream where the browser has EventSource,
 * else long polls with ?wait=, never a timer. Errors (401, 429, 503, a
 * failed job) are said in the reader's words in the widget's status line
 * and never clear the last good table; a field an Error names is said as
 * the reader knows it ("your predicate", "predicate 2 (...)").
 */
import { fin, ago, utcMs, errOf, fieldWords, plainGpuReason } from './format.js';

const POLL_MS = 1000, POLL_LIMIT = 600, WAIT_S = 25;

// Whether a Job (or QueuedJob) has ended.
const ended = (j) => j.state === 'done' || j.state === 'failed';

// The suite's request: GET /suites, else the evidence's recorded request, else rebuilt from the document.
export async function suiteRequest(w) {
  const r = await w.call('GET', '/suites');
  const list = r.status === 200 && r.json && Array.isArray(r.json.suites) ? r.json.suites : [];
  const s = list.find((x) => x.name === w.suite);
  if (s && s.requests.length) return s.requests[0];
  const p = w.evidence && w.evidence.provenance;
  if (p && p.request) return p.request;
  const d = w.doc, cfg = (d && d.config) || {}, t = d && d.tables && d.tables[0];
  if (!t) return {};
  const part = { part1: 1, part2: 2 }[cfg.experiment] || (cfg.experiment === 'all' ? 'all' : 1);
  const req = { part, blocks: cfg.blocks, threads_per_block: cfg.threads_per_block, iterations: cfg.iterations };
  if (part === 1) Object.assign(req, { predicates: t.rows.map((x) => x.name), baseline: t.baseline });
  return req;
}

// One measurement at a time from a widget: both buttons wait for it.
// `req` makes the request; `done(doc, got)` shows the answer; `mine`: the
// request is the try box's (errors name "your predicate").
export async function run(w, req, asking, done, mine) {
  if (w.busy) return;
  if (w.blocked) { w.say(w.blocked); return; }
  w.busy = true;
  w.setButtons(false);
  w.say(asking);
  try {
    const got = await measure(w, await req(), mine);
    if (got) done(got.doc, got);
  } finally {
    w.prog.hidden = true;
    w.busy = false;
    w.setButtons(!w.blocked);
  }
}

// POST /measure, then follow the job. Returns {doc, age_s, finished_utc},
// or null after saying why.
export async function measure(w, req, mine) {
  let r = await w.call('POST', '/measure', req);
  if (r.status === 200 && r.json && r.json.document) {
    const age = fin(r.json.age_s) ? r.json.age_s : 0;
    return { doc: r.json.document, age_s: age, finished_utc: new Date(Date.now() - age * 1000).toISOString().replace(/\.\d+Z$/, 'Z') };
  }
  if (r.status !== 202) return fail(w, r, req, mine);
  if (!r.json || !r.json.id) return fail(w, { status: 202, json: { error: { reason: 'the server gave no job id' } } });
  const path = `/jobs/${encodeURIComponent(r.json.id)}`;
  w.prog.hidden = false;
  w.prog.removeAttribute('value');
  // The job's own stream (queued with its position, running, done) where
  // the browser has EventSource; else GET /jobs/{id}?wait=, which the
  // server holds until the job ends or WAIT_S pass, so the page neither
  // polls on a timer nor learns of the end late.
  let j = r.json;
  if (!ended(j) && typeof EventSource === 'function') {
    const streamed = await stream(w, path);
    if (streamed) j = streamed;
  }
  for (let n = 0; n < POLL_LIMIT; n++) {
    if (j.state === 'done') {
      const doc = j.document;
      if (!doc) return fail(w, { status: 200, json: { error: { reason: 'the finished job held no document' } } });
      const t = utcMs(j.finished_utc);
      return { doc, age_s: t != null ? Math.max(0, (Date.now() - t) / 1000) : 0, finished_utc: j.finished_utc };
    }
    if (j.state === 'failed') { w.say(`The measurement failed: ${errOf(j).reason || 'no reason given'}.` + w.keep); return null; }
    progress(w, j);
    const t0 = Date.now();
    r = await w.call('GET', `${path}?wait=${WAIT_S}`);
    if (r.status !== 200) return fail(w, r);
    j = r.json || {};
    // A server that does not hold the request answers at once: poll then.
    if (!ended(j) && Date.now() - t0 < 200) await new Promise((ok) => setTimeout(ok, POLL_MS));
  }
  w.say('Gave up waiting for the measurement.' + w.keep);
  return null;
}

// Says where a queued or running job stands (a Job tells its state and,
// while queued, its position; not how far a run has got, so the progress
// bar stays indeterminate).
function progress(w, j) {
  w.say(j.state === 'running' ? 'Running on the GPU\u2026' : `Queued: position ${j.position ?? '?'} in the queue\u2026`);
}

// Follows GET {path} as an event stream until done or failed: the job
// document of the last event, or null when the stream broke off (the
// caller then long-polls).
function stream(w, path) {
  return new Promise((resolve) => {
    let es;
    try { es = new EventSource(w.base + path); } catch (_) { resolve(null); return; }
    const end = (v) => { es.close(); resolve(v); };
    const parse = (ev) => { try { return JSON.parse(ev.data); } catch (_) { return null; } };
    for (const name of ['queued', 'running']) es.addEventListener(name, (ev) => { const j = parse(ev); if (j) progress(w, j); });
    for (const name of ['done', 'failed']) es.addEventListener(name, (ev) => end(parse(ev)));
    es.addEventListener('gone', () => end(null));
    es.onerror = () => end(null);
  });
}

// Says why a measurement ended without numbers; `req` is the request the
// answer is about (its fields are named in the reader's words), `mine`
// whether its first predicate is the reader's own.
function fail(w, r, req, mine) {
  const e = errOf(r.json), why = e.reason || '';
  const retry = r.headers && r.headers.get('Retry-After') || e.retry_after_s;
  let m;
  if (r.status === 429) m = `The server is busy${why ? ` (${why})` : ''}. Try again${retry ? ` in ${retry} s` : ' later'}.`;
  else if (r.status === 503) m = `Measuring is not available right now: ${/cuda|gpu|device|driver/i.test(why) ? plainGpuReason(why) : why || 'the server has no GPU'}.`;
  else if (r.status === 401) m = 'This measurement needs an access token on this server, which a page cannot send' +
    (fin(e.open_limit) && e.open_limit > 0 ? ': it is larger than what the server measures for anyone (the lesson\u2019s own tables are within that).' : '.');
  else if (r.status === 0) m = `Could not measure: ${why}.`;
  else {
    const what = fieldWords(e.field, req, mine);
    m = `The server refused the measurement (HTTP ${r.status})${what ? `, about ${what}` : ''}: ${why || 'no reason given'}.`;
  }
  w.say(m + w.keep);
  return null;
}

// After a measurement of the suite: the fresh document in the main view.
export function measuredSuite(w, doc, got) {
  w.show(doc, { finished_utc: got.finished_utc }, got);
  w.say(got.age_s >= 5 ? `Done: the server answered from its cache (measured ${ago(got.age_s * 1000)}).` : 'Done: the table now shows the fresh measurement.');
}

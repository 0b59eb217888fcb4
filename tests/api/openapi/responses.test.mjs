// responses.test.mjs -- every route of the real server, answered for real,
// validated against api/openapi.yaml with Ajv (JSON Schema 2020-12, which is
// OpenAPI 3.1's schema dialect).
//
// Four servers with the fake GPU worker: one with a GPU and a copy of the
// committed H200 evidence, one with a token, one without a GPU, and one whose
// rows are all too noisy, so its refresh fails every suite (a failed night's
// record, summary null, is validated too). Each
// answer is matched to its operation (path template, method) and status in
// the document; an undocumented status or content type is a failure, and so
// is a body that does not validate. At the end every operation of the
// document must have been exercised at least once.
//
// Environment: DV_BINARY (required), DV_WORKER_CMD, DV_EVIDENCE_DIR,
// DV_STATIC_DIR (defaults as in tests/browser).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { spec, specPath, deref, operationOf, answerSchema } from './contract.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..', '..');
const env = process.env;
const binary = env.DV_BINARY;
const worker = env.DV_WORKER_CMD || (binary && path.join(path.dirname(binary), 'tests', 'fake_worker'));
const evidenceSrc = env.DV_EVIDENCE_DIR || path.join(repo, 'tests', 'fixtures', 'evidence');
const staticDir = env.DV_STATIC_DIR || path.join(repo, 'static');

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat('binary', true);
ajv.addSchema(spec, 'spec');

const seen = new Set();
let checked = 0;
const servers = [];
let tmp;

// One request, validated. Returns {status, headers, body, json}.
async function call(base, method, p, { body, headers = {}, want } = {}) {
  const res = await fetch(base + p, {
    method, headers: { ...(body !== undefined || method === 'POST' ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  const where = `${method} ${p} -> ${res.status}`;
  if (want !== undefined) assert.equal(res.status, want, `${where}: expected ${want}; body ${text.slice(0, 300)}`);
  const t = operationOf(p.split('?')[0]);
  assert.ok(t, `${where}: no path of the document matches`);
  const op = spec.paths[t][method.toLowerCase()];
  assert.ok(op, `${where}: the document has no ${method} for ${t}`);
  seen.add(`${method.toLowerCase()} ${t}`);
  const r = deref(op.responses[String(res.status)]);
  assert.ok(r, `${where}: status ${res.status} is not documented for ${method} ${t}`);
  const ct = (res.headers.get('content-type') || '').split(';')[0].trim();
  let json = null;
  if (r.content) {
    const media = r.content[ct] ? ct : r.content['*/*'] ? '*/*' : null;
    assert.ok(media, `${where}: content type ${ct} is not documented (${Object.keys(r.content)})`);
    const schema = r.content[media].schema;
    if (ct === 'application/json') {
      json = JSON.parse(text);
      const { at } = answerSchema(t, method, res.status, media);
      const validate = ajv.getSchema(at) || ajv.compile({ $ref: at });
      const ok = validate(json);
      assert.ok(ok, `${where}: the body does not match the document:\n${JSON.stringify(validate.errors, null, 1).slice(0, 2000)}\nbody: ${text.slice(0, 600)}`);
    } else if (schema && schema.type === 'string') {
      assert.equal(typeof text, 'string');
    }
  } else {
    assert.equal(text, '', `${where}: documented without a body, and one came`);
  }
  checked++;
  return { status: res.status, headers: res.headers, body: text, json };
}

function startServer(evidenceDir, extraEnv, extraArgs = []) {
  return new Promise((resolve, reject) => {
    const args = ['serve', '--port', '0', '--evidence-dir', evidenceDir, '--static-dir', staticDir,
      '--openapi', specPath, '--worker-cmd', worker, ...extraArgs];
    const proc = spawn(binary, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    servers.push(proc);
    let log = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${log}`)), 20000);
    const onData = (c) => {
      log += c;
      const m = log.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    };
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}):\n${log}`)); });
  });
}

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
async function until(base, p, pred, what) {
  for (let n = 0; n < 200; n++) {
    const r = await call(base, 'GET', p);
    if (pred(r)) return r;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

let gpu, tok, nogpu, noisy, gate;
before(async () => {
  assert.ok(binary, 'DV_BINARY must name the divergence binary');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dv-openapi-'));
  fs.cpSync(evidenceSrc, path.join(tmp, 'ev'), { recursive: true });
  fs.mkdirSync(path.join(tmp, 'empty'));
  // Its first job (iterations 3333) runs until the test opens the gate: the
  // queue is full for as long as the test needs, however loaded the machine.
  gate = path.join(tmp, 'gate');
  gpu = await startServer(path.join(tmp, 'ev'), { FAKE_WORKER_NO_GPU: '0', FAKE_WORKER_GATE: gate }, ['--queue', '2', '--rate-limit', '0']);
  tok = await startServer(path.join(tmp, 'ev'), { FAKE_WORKER_NO_GPU: '0' }, ['--token', 'tok', '--rate-limit', '3']);
  nogpu = await startServer(path.join(tmp, 'empty'), { FAKE_WORKER_NO_GPU: '1' }, ['--rate-limit', '0']);
  fs.mkdirSync(path.join(tmp, 'noisy'));
  noisy = await startServer(path.join(tmp, 'noisy'), { FAKE_WORKER_NO_GPU: '0', FAKE_WORKER_NOISE: '0.5' }, ['--rate-limit', '0']);
  for (const b of [gpu, tok, nogpu, noisy]) await until(b, '/healthz', (r) => r.status === 200, 'healthz');
  await until(noisy, '/readyz', (r) => r.status === 200, 'the noisy fake GPU');
  await until(gpu, '/readyz', (r) => r.status === 200, 'the fake GPU');
});

after(async () => {
  for (const p of servers) if (p.exitCode === null) { const gone = new Promise((ok) => p.once('exit', ok)); p.kill('SIGTERM'); await gone; }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('service routes', async () => {
  await call(gpu, 'GET', '/healthz', { want: 200 });
  await call(tok, 'GET', '/healthz', { want: 200 });
  await call(gpu, 'GET', '/readyz', { want: 200 });
  await until(nogpu, '/readyz', (r) => r.status === 503, 'no GPU: 503');
  await call(gpu, 'GET', '/device', { want: 200 });
  const d = await call(nogpu, 'GET', '/device', { want: 200 });
  assert.equal(d.json.device.present, false);
  await call(gpu, 'GET', '/metrics', { want: 200 });
  const y = await call(gpu, 'GET', '/openapi.yaml', { want: 200 });
  assert.ok(y.body.startsWith('openapi: 3.1'));
  await call(gpu, 'GET', '/', { want: 200 });
  const w = await call(gpu, 'GET', '/static/divergence-widget.js', { want: 200 });
  await call(gpu, 'GET', '/static/divergence-widget.js', { want: 304, headers: { 'If-None-Match': w.headers.get('etag') } });
  await call(gpu, 'GET', '/static/no-such-file.js', { want: 404 });
  await call(gpu, 'GET', '/predicates', { want: 200 });
});

test('measure, jobs and analyze', async () => {
  const q = await call(gpu, 'POST', '/measure', { body: { part: 1, iterations: 3333, budget_ms: 100 }, want: 202 });
  await call(gpu, 'GET', `/jobs/${q.json.id}`, { want: 200 });
  const behind = await call(gpu, 'POST', '/measure', { body: { part: 1, iterations: 3334, budget_ms: 100 }, want: 202 }); // queued behind it
  const waiting = await call(gpu, 'GET', `/jobs/${behind.json.id}`, { want: 200 }); // position, expected_start_s, eta_s
  assert.equal(waiting.json.state, 'queued');
  assert.ok(waiting.json.expected_start_s > 0 && waiting.json.eta_s > waiting.json.expected_start_s, JSON.stringify(waiting.json));
  await call(gpu, 'POST', '/measure', { body: { part: 1, iterations: 3335, budget_ms: 100 }, want: 202 });
  await call(gpu, 'POST', '/measure', { body: { part: 1, iterations: 3336, budget_ms: 100 }, want: 429 }); // the queue holds 2
  fs.writeFileSync(gate, ''); // the first job ends
  const done = await until(gpu, `/jobs/${q.json.id}`, (r) => r.json.state === 'done', 'the job');
  assert.equal(done.json.document.schema, 'divergence.v1');
  await until(gpu, '/readyz', (r) => r.status === 200, 'idle');
  const all = await call(gpu, 'POST', '/measure', { body: { part: 'all', scenario: 'all', blocks: 1024, budget_ms: 200 }, want: 202 });
  await until(gpu, `/jobs/${all.json.id}`, (r) => r.json.state === 'done', 'the scenario job');
  const c = await call(gpu, 'POST', '/measure', { body: { part: 'all', scenario: 'all', blocks: 1024, budget_ms: 200 }, want: 200 });
  assert.equal(c.json.cached, true);
  const crash = await call(gpu, 'POST', '/measure', { body: { part: 1, iterations: 2222, budget_ms: 100 }, want: 202 });
  const failed = await until(gpu, `/jobs/${crash.json.id}`, (r) => r.json.state === 'failed', 'the crashed job');
  assert.ok(failed.json.error.reason);
  await call(gpu, 'GET', '/jobs/0123456789abcdef0123456789abcdef', { want: 404 });
  await call(gpu, 'POST', '/measure', { body: '{"part": 3}', want: 400 });
  await call(gpu, 'POST', '/measure', { body: '{"part": 1,', want: 400 });
  await call(gpu, 'POST', '/measure', { body: JSON.stringify({ predicates: ['x'.repeat(200)], pad: 'y'.repeat(70000) }), want: 413 });
  await call(tok, 'POST', '/measure', { body: { part: 1, blocks: 32768, iterations: 8192 }, want: 401 });
  await call(nogpu, 'POST', '/measure', { body: {}, want: 503 });
  await call(gpu, 'POST', '/analyze', { body: { part: 1, predicates: ['threadIdx.x < 16', 'warp-parity'] }, want: 200 });
  await call(gpu, 'POST', '/analyze', { body: {}, want: 200 });
  await call(gpu, 'POST', '/analyze', { body: { predicates: ['threadIdx.x + $'] }, want: 400 });
  await call(gpu, 'POST', '/analyze', { body: 'x'.repeat(70000), want: 413 });
  await call(tok, 'POST', '/measure', { body: { part: 1, iterations: 91, budget_ms: 100 }, want: 202 });
  await call(tok, 'POST', '/measure', { body: { part: 1, iterations: 92, budget_ms: 100 }, want: 202 });
});

test('evidence routes, the recorded H200 capture and a failed night', async () => {
  await call(gpu, 'GET', '/suites', { want: 200 });
  const ix = await call(gpu, 'GET', '/evidence/latest', { want: 200 });
  await call(gpu, 'GET', '/evidence/latest', { want: 304, headers: { 'If-None-Match': ix.headers.get('etag') } });
  for (const s of ['day22-part1', 'day22-part2', 'day22-exercise', 'scenarios']) {
    const e = await call(gpu, 'GET', `/evidence/latest/${s}`, { want: 200 });
    assert.equal(e.json.document.device.name, 'NVIDIA H200');
    await call(gpu, 'GET', `/evidence/latest/${s}.txt`, { want: 200 });
    // The slim record names each row's listing; the full one carries it.
    const full = await call(gpu, 'GET', `/evidence/latest/${s}.full.json`, { want: 200 });
    const rows = (d) => d.document.tables.flatMap((t) => t.rows).filter((r) => r.instructions);
    const slim = rows(e.json), whole = rows(full.json);
    assert.equal(slim.length, whole.length, `${s}: rows with instructions`);
    for (const r of slim) assert.ok(!('runs' in r.instructions) && typeof r.instructions.listing_url === 'string', `${s} ${r.name}`);
    if (slim.length) {
      const l = await call(gpu, 'GET', slim[0].instructions.listing_url, { want: 200 });
      assert.deepEqual(l.json, whole[0].instructions, `${s}: the listing is the full record's`);
    }
  }
  await call(gpu, 'GET', '/evidence/nvidia-h200/2026-12-01/day22-part1/rows/99.0/instructions.json', { want: 404 });
  await call(gpu, 'GET', '/evidence/nvidia-h200/2026-12-01/day22-part1/rows/x/instructions.json', { want: 400 });
  await call(gpu, 'GET', '/evidence/2026-12-01/day22-part1.json', { want: 200 });
  await call(gpu, 'GET', '/evidence/2026-02-30/day22-part1.json', { want: 400 });
  await call(gpu, 'GET', '/evidence/2020-01-01/day22-part1.json', { want: 404 });
  await call(gpu, 'GET', '/evidence/latest/no-such-suite', { want: 404 });
  await call(gpu, 'GET', '/evidence/history/day22-part1', { want: 200 });
  await call(gpu, 'GET', '/evidence/history/no-such-suite', { want: 404 });
  // The per-GPU views of the same capture (filed under its GPU's slug).
  const slug = ix.json.gpus[0].gpu;
  assert.equal(slug, 'nvidia-h200');
  await call(gpu, 'GET', `/evidence/${slug}/latest`, { want: 200 });
  await call(gpu, 'GET', `/evidence/${slug}/latest/day22-part1`, { want: 200 });
  await call(gpu, 'GET', `/evidence/${slug}/latest/day22-part1.txt`, { want: 200 });
  await call(gpu, 'GET', `/evidence/${slug}/2026-12-01/day22-part1.json`, { want: 200 });
  await call(gpu, 'GET', `/evidence/${slug}/history/day22-part1`, { want: 200 });
  await call(gpu, 'GET', '/evidence/no-such-gpu/latest', { want: 404 });
  await call(gpu, 'GET', `/evidence/${slug}/latest/no-such-suite`, { want: 404 });
  await call(tok, 'POST', '/evidence/refresh', { want: 401 }); // a failed token charges no limit
  // The rate limit (3 a minute, one back every 20 s): at most 3 more go
  // through before the 429, however long the tests before took.
  let limited = null;
  for (let k = 0; k < 4 && !limited; k++) {
    const r = await call(tok, 'POST', '/measure', { body: { part: 1, iterations: 93 + k, budget_ms: 100 } });
    if (r.status === 429) limited = r;
    else assert.equal(r.status, 202, `POST /measure under the rate limit: ${r.status}`);
  }
  assert.ok(limited, 'no 429 after 4 requests against a limit of 3 a minute');
  await call(tok, 'POST', '/measure', { body: { part: 1, iterations: 97, budget_ms: 100 }, want: 429 }); // the rate limit
  await call(nogpu, 'POST', '/evidence/refresh', { want: 503 }); // no GPU: refused whole, nothing filed
  // A night whose every ratio is known too poorly: each suite fails the refresh's gate.
  const r = await call(noisy, 'POST', '/evidence/refresh', { want: 202 });
  const done = await until(noisy, `/evidence/refresh/${r.json.id}`, (x) => x.json.state === 'done', 'the refresh');
  assert.equal(done.json.failed, done.json.suites.length, 'every suite fails its limit');
  await call(noisy, 'GET', '/evidence/refresh/rnosuchrefresh', { want: 404 });
  const failed = await call(noisy, 'GET', `/evidence/${done.json.date}/day22-part1.json`, { want: 200 });
  assert.equal(failed.json.status, 'failed');
  assert.match(failed.json.reason, /interval over limit/);
  // A night that failed before any document (a crashed job) files summary and
  // document null: the real record with both nulled must validate too.
  const v = ajv.getSchema('spec#/components/schemas/Evidence') || ajv.compile({ $ref: 'spec#/components/schemas/Evidence' });
  assert.ok(v({ ...failed.json, summary: null, document: null }), JSON.stringify(v.errors));
  await call(noisy, 'GET', '/evidence/latest', { want: 200 });
  await call(noisy, 'GET', '/evidence/latest/day22-part1', { want: 404 });
  await call(noisy, 'GET', '/evidence/history/day22-part1', { want: 200 });
  await call(nogpu, 'GET', '/evidence/latest', { want: 200 });
});

test('every operation of the document was exercised', () => {
  const all = Object.entries(spec.paths).flatMap(([t, ops]) => Object.keys(ops).filter((m) => ['get', 'post', 'put', 'delete', 'patch'].includes(m)).map((m) => `${m} ${t}`));
  const missing = all.filter((k) => !seen.has(k));
  assert.deepEqual(missing, [], `operations never called: ${missing.join(', ')}`);
  console.log(`validated ${checked} responses of ${all.length} operations against api/openapi.yaml`);
});

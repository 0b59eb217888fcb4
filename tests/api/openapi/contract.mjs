// contract.mjs -- api/openapi.yaml as the tests read it.
//
// The one place that knows how an answer maps to the document: the parsed
// document, the operation whose path template a request path matches
// (templates with more literal segments first, as the server routes
// /evidence/latest/{suite} before /evidence/{date}/{suite}), the schema of an
// operation's answer, and what a schema defines at a property path.
// responses.test.mjs validates the server's answers with it,
// report_schema.test.mjs the report writer's keys, and
// tests/browser/widget.test.mjs the widget's reads.
//
// A property path is a list of segments: a property name, or '[]' for an
// array's items. A schema defines a path when some alternative of it
// ($ref, allOf, oneOf and anyOf opened) defines each segment in turn.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const here = path.dirname(fileURLToPath(import.meta.url));
export const specPath = path.resolve(here, '..', '..', '..', 'api', 'openapi.yaml');
export const spec = YAML.parse(fs.readFileSync(specPath, 'utf8'));

// A JSON pointer's parts, escaped.
export const ptr = (...parts) => parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

// Follows $ref (local to the document) until a schema, response or parameter is reached.
export function deref(o) {
  while (o && o.$ref) o = o.$ref.slice(2).split('/').reduce((a, k) => a[k.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
  return o;
}

const templates = Object.keys(spec.paths).map((t) => {
  const segs = t.split('/');
  const re = new RegExp('^' + segs.map((s) => (/^\{.*\}$/.test(s) ? (s === '{path}' ? '.+' : '[^/]+') : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/') + '$');
  return { t, re, literal: segs.filter((s) => s && !/^\{/.test(s)).length };
}).sort((a, b) => b.literal - a.literal);

// The path template of the document that a request path (no query) matches, or undefined.
export const operationOf = (p) => templates.find((x) => x.re.test(p))?.t;

// The schema of the answer of `method` on template `t` with `status` in
// `media`: {schema, at} with `at` its pointer ("spec#/..."), or null when
// the document describes no such answer.
export function answerSchema(t, method, status, media = 'application/json') {
  const op = spec.paths[t] && spec.paths[t][method.toLowerCase()];
  const ref = op && op.responses[String(status)];
  const r = deref(ref);
  if (!r || !r.content || !r.content[media]) return null;
  const at = ref.$ref
    ? `spec#/${ptr('components', 'responses', ref.$ref.split('/').at(-1), 'content', media, 'schema')}`
    : `spec#/${ptr('paths', t, method.toLowerCase(), 'responses', String(status), 'content', media, 'schema')}`;
  return { schema: r.content[media].schema, at, operationId: op.operationId };
}

// `schema` and every schema it stands for through $ref, allOf, oneOf and anyOf.
function alternatives(schema, out = []) {
  const s = deref(schema);
  if (!s || typeof s !== 'object' || out.includes(s)) return out;
  out.push(s);
  for (const k of ['allOf', 'oneOf', 'anyOf']) for (const x of s[k] || []) alternatives(x, out);
  return out;
}

// The schemas of segment `seg` under any of `schemas`.
function step(schemas, seg) {
  const next = [];
  for (const s of schemas) {
    if (seg === '[]') {
      if (s.items) alternatives(s.items, next);
    } else if (s.properties && Object.hasOwn(s.properties, seg)) {
      alternatives(s.properties[seg], next);
    }
  }
  return next;
}

// The shortest prefix of `segs` that `schema` does not define, or null when
// it defines all of it.
export function undefinedPrefix(schema, segs) {
  let cur = alternatives(schema);
  for (let i = 0; i < segs.length; i++) {
    cur = step(cur, segs[i]);
    if (!cur.length) return segs.slice(0, i + 1);
  }
  return null;
}

// Every property path `schema` defines, as printable strings (see show()).
export function definedPaths(schema, segs = [], out = new Set(), depth = 0) {
  if (depth > 16) return out; // no schema of the document nests deeper; a cycle stops here
  for (const s of alternatives(schema)) {
    for (const [k, v] of Object.entries(s.properties || {})) {
      out.add(show([...segs, k]));
      definedPaths(v, [...segs, k], out, depth + 1);
    }
    if (s.items) definedPaths(s.items, [...segs, '[]'], out, depth + 1);
  }
  return out;
}

// The property paths of `schema` at or under a property marked
// `x-proposed: true`: fields the document names for a reader before the
// writer writes them (report_schema.test.mjs holds them to "not written
// yet", so the mark goes when the writer starts writing the field).
export function proposedPaths(schema) { return markedPaths(schema, (x) => x['x-proposed'] === true); }

// `x-written-by: evidence-store`: fields the evidence store writes into a
// document it serves (the slim record's `instructions.listing_url`), never
// the report writer.
export function storePaths(schema) { return markedPaths(schema, (x) => x['x-written-by'] === 'evidence-store'); }

function markedPaths(schema, marked) {
  const out = new Set();
  const mark = (s, segs, depth, under) => {
    if (depth > 16) return;
    for (const a of alternatives(s)) {
      for (const [k, v] of Object.entries(a.properties || {})) {
        const p = [...segs, k];
        const here = under || alternatives(v).some(marked);
        if (here) out.add(show(p));
        mark(v, p, depth + 1, here);
      }
      if (a.items) mark(a.items, [...segs, '[]'], depth + 1, under);
    }
  };
  mark(schema, [], 0, false);
  return out;
}

// Every property path a JSON value holds, as printable strings.
export function valuePaths(v, segs = [], out = new Set()) {
  if (Array.isArray(v)) {
    for (const x of v) valuePaths(x, [...segs, '[]'], out);
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.add(show([...segs, k]));
      valuePaths(x, [...segs, k], out);
    }
  }
  return out;
}

// A property path as a reader writes it: tables[].rows[].label,
// counters["smsp__inst_executed.sum"].
export const show = (segs) => segs.map((s, i) => (s === '[]' ? '[]' : /^[A-Za-z_$][\w$]*$/.test(s) ? (i ? '.' : '') + s : `[${JSON.stringify(s)}]`)).join('');

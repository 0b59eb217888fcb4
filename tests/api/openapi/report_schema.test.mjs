// report_schema.test.mjs -- the report writer (api/report_dump.c) against
// api/openapi.yaml's Report schema, key by key, both ways.
//
// report_sample (tests/api/report_sample.c) prints the documents of a report
// with every field set (tests/api/report_full.h): measured, and the same as
// an analysis. Each must validate against Report (Ajv: types, required
// names, enums), and, as if every object of the schema said
// `additionalProperties: false`, every key they hold must be one the schema
// defines at that place; and every property the schema defines must be
// written by one of them. So a field added to the writer and not to the
// document fails here, and so does one added to the document that the writer
// never writes. (test_report.c reads the same report back through
// report_load.c; tests/browser checks what the widget reads.) A self-test
// plants one drift of each kind in copies and must see both.
//
// Environment: DV_REPORT_SAMPLE (required: the report_sample program).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { spec, definedPaths, proposedPaths, storePaths, valuePaths } from './contract.mjs';

const sample = process.env.DV_REPORT_SAMPLE;
const REPORT = '#/components/schemas/Report';

// The documents report_sample prints, one a line.
function documents() {
  assert.ok(sample, 'DV_REPORT_SAMPLE must name the report_sample program');
  const out = execFileSync(sample, { encoding: 'utf8' });
  return out.trim().split('\n').map((l) => JSON.parse(l));
}

// What the documents and the schema disagree on: keys written that the
// schema does not define there, properties it defines that none writes, and
// properties it marks as proposed (x-proposed: named for readers, not
// written yet) that one writes after all.
function drift(docs, schema) {
  const defined = definedPaths(schema);
  const proposed = proposedPaths(schema);
  const store = storePaths(schema);
  const written = new Set();
  for (const d of docs) for (const p of valuePaths(d)) written.add(p);
  return {
    undocumented: [...written].filter((p) => !defined.has(p)).sort(),
    unwritten: [...defined].filter((p) => !written.has(p) && !proposed.has(p) && !store.has(p)).sort(),
    proposedButWritten: [...proposed].filter((p) => written.has(p)).sort(),
  };
}

test('the report writer writes exactly the keys api/openapi.yaml defines for Report', () => {
  const docs = documents();
  assert.equal(docs.length, 2, 'a measured document and an analysis');
  assert.equal(docs[0].measured, true);
  assert.equal(docs[1].measured, false);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(spec, 'spec');
  const validate = ajv.getSchema(`spec${REPORT}`);
  for (const d of docs) {
    assert.ok(validate(d), `measured ${d.measured}: ${JSON.stringify(validate.errors, null, 1).slice(0, 2000)}`);
  }
  const { undocumented, unwritten, proposedButWritten } = drift(docs, spec.components.schemas.Report);
  assert.deepEqual(undocumented, [], 'keys the writer writes that api/openapi.yaml does not define');
  assert.deepEqual(unwritten, [], 'properties api/openapi.yaml defines that the writer never writes (or report_full.h leaves unset)');
  assert.deepEqual(proposedButWritten, [], 'properties marked x-proposed that the writer writes: drop the mark');
  console.log(`${definedPaths(spec.components.schemas.Report).size} property paths of Report, each written and each documented`);
});

test('self-test: a key planted in a document, or a property planted in the schema, is found', () => {
  const docs = documents();
  const extraKey = structuredClone(docs);
  extraKey[0].tables[0].rows[0].planted_key = 1;
  assert.ok(drift(extraKey, spec.components.schemas.Report).undocumented.includes('tables[].rows[].planted_key'));
  const schema = structuredClone(spec.components.schemas.Report);
  schema.properties.device = { allOf: [spec.components.schemas.Device, { properties: { planted_property: { type: 'integer' } } }] };
  assert.ok(drift(docs, schema).unwritten.includes('device.planted_property'));
  // A proposed property is no drift while nothing writes it, and is one once something does.
  const proposal = structuredClone(spec.components.schemas.Report);
  proposal.properties.device = { allOf: [spec.components.schemas.Device, { properties: { planted_property: { type: 'integer', 'x-proposed': true } } }] };
  assert.ok(!drift(docs, proposal).unwritten.includes('device.planted_property'));
  const writes = structuredClone(docs);
  writes[0].device.planted_property = 1;
  assert.deepEqual(drift(writes, proposal).proposedButWritten, ['device.planted_property']);
});

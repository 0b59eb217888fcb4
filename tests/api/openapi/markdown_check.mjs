// markdown_check.mjs -- the Markdown form of a report (api/report_md.c) read
// by a real Markdown parser: markdown-it (CommonMark with GitHub's tables).
// For every DIR/<name>.md beside its DIR/<name>.json: one table per document
// table, in order; its header row the first column's name and then the
// columns; one body row per document row whose first cell is the row's label
// (plus " [n]" for a row that is not comparable) and whose "predicted" or
// "model ratio" cell is the document's predicted ratio to two decimals; and
// for Part 2, the readings as a list naming both kinds.
//
// Usage: node markdown_check.mjs DIR. Prints one line per file; exit 1 on
// any mismatch.
import fs from 'node:fs';
import path from 'node:path';
import MarkdownIt from 'markdown-it';

const dir = process.argv[2];
const md = new MarkdownIt();
let failed = 0;
const fail = (msg) => { failed++; console.error(`FAIL: ${msg}`); };

// The tables of a token stream as arrays of rows of cell texts (inline
// content rendered to plain text: code spans and escapes resolved).
function tables(tokens) {
  const out = [];
  let table = null, row = null, cell = false;
  for (const t of tokens) {
    if (t.type === 'table_open') table = [];
    else if (t.type === 'table_close') { out.push(table); table = null; }
    else if (t.type === 'tr_open') row = [];
    else if (t.type === 'tr_close') { table.push(row); row = null; }
    else if (t.type === 'th_open' || t.type === 'td_open') cell = true;
    else if (t.type === 'th_close' || t.type === 'td_close') cell = false;
    else if (t.type === 'inline' && cell && row) {
      row.push((t.children || []).map((c) => c.content).join(''));
    }
  }
  return out;
}

const fixed2 = (v) => (v === null || v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(2));

for (const name of fs.readdirSync(dir).filter((f) => f.endsWith('.md')).sort()) {
  const doc = JSON.parse(fs.readFileSync(path.join(dir, name.replace(/\.md$/, '.json')), 'utf8'));
  const text = fs.readFileSync(path.join(dir, name), 'utf8');
  const tokens = md.parse(text, {});
  const found = tables(tokens);
  if (found.length !== doc.tables.length) {
    fail(`${name}: ${found.length} tables, the document has ${doc.tables.length}`);
    continue;
  }
  doc.tables.forEach((t, i) => {
    const [head, ...body] = found[i];
    const col = head.findIndex((h) => h === 'predicted' || h === 'model ratio');
    if (col < 0) fail(`${name} ${t.id}: no predicted column in ${JSON.stringify(head)}`);
    if (body.length !== t.rows.length) fail(`${name} ${t.id}: ${body.length} rows, the document has ${t.rows.length}`);
    let note = 0;
    t.rows.forEach((r, k) => {
      const cells = body[k] || [];
      const label = r.comparable ? r.label : `${r.label} [${++note}]`;
      if (cells[0] !== label) fail(`${name} ${t.id} row ${k}: first cell ${JSON.stringify(cells[0])}, want ${JSON.stringify(label)}`);
      if (cells.length !== head.length) fail(`${name} ${t.id} row ${k}: ${cells.length} cells under ${head.length} headers`);
      if (col >= 0 && cells[col] !== fixed2(r.predicted_ratio)) {
        fail(`${name} ${t.id} row ${k}: predicted ${cells[col]}, the document ${r.predicted_ratio}`);
      }
    });
    if (t.readings) {
      const items = tokens.filter((x) => x.type === 'inline' && /^(split|question): /.test(x.children.map((c) => c.content).join('')));
      const kinds = new Set(items.map((x) => x.children.map((c) => c.content).join('').split(':')[0]));
      if (!kinds.has('split') || !kinds.has('question')) fail(`${name} ${t.id}: the readings are not both listed`);
    }
  });
  console.log(`${name}: ${found.length} tables, ${doc.tables.reduce((n, t) => n + t.rows.length, 0)} rows as the document has them`);
}
process.exit(failed ? 1 : 0);

// make_instructions_fixture.mjs -- instructions_fixture.json from an H200
// probe's per-instruction counts: the Row `instructions` and document
// `testimony.instructions` that api/openapi.yaml proposes, for the browser
// test to stand in until the server writes them.
//
// Usage: node make_instructions_fixture.mjs RESULTS_DIR [OUT.json]
//
// RESULTS_DIR is the results folder of the CUPTI probe run on an NVIDIA H200
// (driver 580.159.04, CUDA 13.0): kernels shaped like the lesson's, one
// branch on a runtime `mode` around two 4096-FMA chains (probeBranch), the
// same branch inside the loop (probePerIter, which the compiler predicated)
// and no branch (probeNoBranch), on 132 blocks x 256 threads. It reads
//   data/sass_<step>_<kernel>_<mode>.tsv  per instruction: pc, source line,
//       SASS text, and CUPTI's SASS metrics smsp__sass_inst_executed,
//       _thread_inst_executed, _thread_inst_executed_pred_on,
//       _branch_targets_threads_divergent;
//   data/cubin_0_<crc>.nvdisasm.txt  the labels, for the branch's target;
//   ncu/source_sass.csv  Nsight Compute's Source page of four of the same
//       launches: its counts must equal CUPTI's instruction by instruction,
//       and its warp-stall samples give each region's top stall reasons;
//   logs/*.log  the collection's cold cost, the disassembler's version.
// Nothing is made up: a field with no source in the probe (a mask hash) is
// derived from data here and said so in `about`; block parity, which the
// probe did not run, gets `instructions: null`.
//
// How it reads the probe's data as the service's collector is meant to:
// - Counts are scaled from the 132-block grid to the lesson's 4096 blocks
//   (`scale` = 4096/132): every count must divide by 132 (the per-block
//   counts of these predicates are the same in every block), and where the
//   probe also ran the 1,056-block grid, its counts must be 8 times these.
// - Regions. A kernel whose `if` compiled to a branch (a guarded BRA on the
//   `if` line that ran): up to and including that branch is `before`; the
//   fall-through side runs to the branch's target, the taken side from the
//   target to the BSYNC that closes the BSSY before the branch; the side
//   holding path A's line is `path_a`; that BSYNC is `reconverge`; the rest
//   is `after`. A kernel without one (predicated, or no branch): the span
//   from the first to the last instruction on a path's line that ran is the
//   branch region; in it path A's and path B's lines are `path_a` and
//   `path_b`, BSSY/BSYNC/WARPSYNC are `reconverge`, the loop's other
//   instructions (the predicate asked again each iteration) `before`;
//   before and after it, `before` and `after`.
// - Runs: consecutive instructions of one opcode (the mnemonic with its
//   modifiers, after any @P guard), guard, region, source line and counts.
// - Each path's FFMA thread executions with the predicate on, summed over
//   the grid, must equal the threads on that path x 4096 iterations.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = process.argv[2];
const outFile = process.argv[3] || path.join(here, 'instructions_fixture.json');
if (!dir) { console.error('usage: node make_instructions_fixture.mjs RESULTS_DIR [OUT.json]'); process.exit(2); }

const BLOCKS = 4096, THREADS = 256, ITERS = 4096, PROBE_BLOCKS = 132;
const fail = (what) => { console.error(`make_instructions_fixture: ${what}`); process.exit(1); };
const read = (rel) => { const f = path.join(dir, rel); if (!fs.existsSync(f)) fail(`${rel}: not found under ${dir}`); return fs.readFileSync(f, 'utf8'); };

// The lesson's predicates (kernels/model/model/predicate.h), for the lane masks
// and the threads on each path.
const takesA = {
  'lane-parity': (t, b, p) => ((t + p) & 1) === 0,
  'lane-half': (t, b, p) => ((t + p) % 32) < 16,
  'warp-parity': (t, b, p) => ((Math.floor(t / 32) + p) & 1) === 0,
  'first-16': (t) => t < 16,
  'always-a': () => true,
};
const lanesBlock0 = (mode) => Array.from({ length: THREADS / 32 }, (_, w) =>
  Array.from({ length: 32 }, (_, l) => (takesA[mode](w * 32 + l, 0, 0) ? 'A' : 'B')).join(''));
const onA = (mode) => { let n = 0; for (let t = 0; t < THREADS; t++) if (takesA[mode](t, 0, 0)) n++; return n; };

// The probe's source lines (its probe_lines.h): the `if` and each path's FMA statement.
const LINES = {
  _Z11probeBranchILi4096EEvPKfPfmi: { if: 38, a: [40], b: [43] },
  _Z12probePerIterILi4096EEvPKfPfmi: { if: 53, a: [54], b: [56] },
  _Z13probeNoBranchILi4096EEvPKfPfmi: { if: null, a: [68], b: [] },
};

// The rows of the lesson's evidence, by name (Part 1's, its exercise's
// first-16, Part 2's): the probe's TSV of the same predicate and kernel
// shape, and the 1,056-block TSV where there is one. null: not probed.
const ROWS = {
  'lane-parity': { tsv: 'sass_eager_lazy0_g0_s0_branch_lane-parity.tsv', big: 'sass_grid1056_g0_s0_branch_lane-parity.tsv', mode: 'lane-parity', log: '66_sass_eager_lazy0' },
  'lane-half': { tsv: 'sass_modes_g0_s2_branch_lane-half.tsv', mode: 'lane-half', log: '69_sass_modes' },
  'warp-parity': { tsv: 'sass_modes_g0_s0_branch_warp-parity.tsv', mode: 'warp-parity', log: '69_sass_modes' },
  'block-parity': null,
  'first-16': { tsv: 'sass_modes_g0_s1_branch_first-16.tsv', mode: 'first-16', log: '69_sass_modes' },
  'no-branch': { tsv: 'sass_modes_g0_s4_nobranch_always-a.tsv', mode: 'always-a', log: '69_sass_modes' },
  'per-iteration-lane-parity': { tsv: 'sass_eager_lazy0_g0_s1_periter_lane-parity.tsv', big: 'sass_grid1056_g0_s1_periter_lane-parity.tsv', mode: 'lane-parity', log: '66_sass_eager_lazy0' },
  'per-iteration-warp-parity': { tsv: 'sass_modes_g0_s3_periter_warp-parity.tsv', mode: 'warp-parity', log: '69_sass_modes' },
};
// The suites' rows, for each document's testimony.
const SUITES = {
  'day22-part1': ['lane-parity', 'lane-half', 'warp-parity', 'block-parity'],
  'day22-exercise': ['lane-parity', 'lane-half', 'warp-parity', 'block-parity', 'first-16'],
  'day22-part2': ['no-branch', 'per-iteration-lane-parity', 'per-iteration-warp-parity'],
};

function tsv(rel) {
  const [head, ...lines] = read(path.join('data', rel)).split('\n').filter(Boolean);
  const k = head.split('\t');
  const n = (v) => (v === '' ? 0 : Number(v));
  return lines.map((l) => {
    const c = Object.fromEntries(l.split('\t').map((v, i) => [k[i], v]));
    return {
      fn: c.function, crc: c.cubin_crc32, pc: parseInt(c.pc, 16), file: c.file, line: Number(c.line), sass: c.sass.trim(),
      warp: n(c.smsp__sass_inst_executed), thread: n(c.smsp__sass_thread_inst_executed),
      predOn: n(c.smsp__sass_thread_inst_executed_pred_on), divergent: n(c.smsp__sass_branch_targets_threads_divergent),
    };
  }).sort((a, b) => a.pc - b.pc);
}

// Nsight Compute's Source page (CSV): one block per profiled kernel, each
// printed twice; per instruction its address, counts and stall samples.
function csvLine(l) {
  const out = [];
  for (let i = 0; i < l.length;) {
    if (l[i] === '"') { let j = i + 1, s = ''; while (j < l.length && l[j] !== '"') s += l[j++]; out.push(s); i = j + 2; }
    else { const j = l.indexOf(',', i); out.push(j < 0 ? l.slice(i) : l.slice(i, j)); i = j < 0 ? l.length : j + 1; }
  }
  return out;
}
function ncuBlocks() {
  const blocks = [];
  let cur = null, head = null;
  for (const l of read('ncu/source_sass.csv').split('\n').filter(Boolean)) {
    const c = csvLine(l);
    if (c[0] === 'Kernel Name') { cur = { kernel: c[1], rows: [] }; blocks.push(cur); head = null; continue; }
    if (c[0] === 'Address') { head = c; continue; }
    const r = Object.fromEntries(c.map((v, i) => [head[i], v]));
    cur.rows.push(r);
  }
  for (const b of blocks) {
    const base = parseInt(b.rows[0].Address, 16);
    b.byPc = new Map(b.rows.map((r) => [Number(BigInt(r.Address) - BigInt(base)), r]));
  }
  return blocks;
}
const ncu = ncuBlocks();
const ncuInt = (v) => Number(String(v).replace(/,/g, ''));
// The ncu block with CUPTI's counts, instruction by instruction, or null.
function ncuOf(ins) {
  // ncu lists the function's padding after its last instruction too (never run).
  const pcs = new Set(ins.map((i) => i.pc));
  return ncu.find((b) => ins.every((i) => {
    const r = b.byPc.get(i.pc);
    return r && ncuInt(r['Instructions Executed']) === i.warp && ncuInt(r['Thread Instructions Executed']) === i.thread &&
      ncuInt(r['Predicated-On Thread Instructions Executed']) === i.predOn;
  }) && [...b.byPc].every(([pc, r]) => pcs.has(pc) || ncuInt(r['Instructions Executed']) === 0)) || null;
}

// The pc of each label of function `fn` in nvdisasm's listing.
function labels(crc, fn) {
  const text = read(path.join('data', `cubin_0_${crc.replace(/^0x/, '').padStart(16, '0')}.nvdisasm.txt`));
  const at = text.indexOf(`.text.${fn}:`);
  if (at < 0) fail(`${fn}: not in the disassembly`);
  const out = new Map();
  let pending = [];
  for (const l of text.slice(at).split('\n').slice(1)) {
    if (/^\s*\.section\s/.test(l)) break;
    const m = /^(\.L_x_\d+):/.exec(l);
    if (m) { pending.push(m[1]); continue; }
    const p = /\/\*([0-9a-f]{4,})\*\//.exec(l);
    if (p && pending.length) { for (const n of pending) out.set(n, parseInt(p[1], 16)); pending = []; }
  }
  return out;
}

const GUARD = /^@!?U?P[T0-9]\s+/;
const opcode = (s) => s.replace(GUARD, '').split(/\s+/)[0].replace(/;$/, '');
const isSync = (op) => /^(BSSY|BSYNC|WARPSYNC)\b/.test(op);

// Regions of a kernel's instructions (see the top of the file).
function regions(ins, lines) {
  const onLine = (i, ls) => ls.includes(i.line);
  const branch = lines.if != null && ins.find((i) => i.line === lines.if && GUARD.test(i.sass) && opcode(i.sass) === 'BRA' && i.warp > 0);
  if (branch) {
    const lab = labels(ins[0].crc, ins[0].fn);
    const target = lab.get((/`\((\.L_x_\d+)\)/.exec(branch.sass) || [])[1]);
    const bssy = ins.filter((i) => i.pc < branch.pc && opcode(i.sass) === 'BSSY').at(-1);
    // BSSY names the pc where the warp goes on once reconverged: the
    // instruction after the BSYNC that waits for the lanes.
    const resume = bssy && lab.get((/`\((\.L_x_\d+)\)/.exec(bssy.sass) || [])[1]);
    const sync = ins.filter((i) => i.pc < resume && opcode(i.sass) === 'BSYNC').at(-1);
    const join = sync && sync.pc;
    if (target == null || join == null || !(branch.pc < target && target < join)) fail(`${ins[0].fn}: no branch target and reconvergence point after pc ${branch.pc}`);
    const fall = ins.filter((i) => i.pc > branch.pc && i.pc < target), taken = ins.filter((i) => i.pc >= target && i.pc < join);
    const aFirst = taken.some((i) => onLine(i, lines.a) && i.warp > 0);
    for (const i of ins) {
      if (i.pc <= branch.pc) i.region = 'before';
      else if (i.pc < target) i.region = aFirst ? 'path_b' : 'path_a';
      else if (i.pc < join) i.region = aFirst ? 'path_a' : 'path_b';
      else if (i.pc === join) i.region = 'reconverge';
      else i.region = 'after';
    }
    if (!fall.length || !taken.length) fail(`${ins[0].fn}: an empty side`);
    return 'branch';
  }
  const ran = ins.filter((i) => i.warp > 0 && (onLine(i, lines.a) || onLine(i, lines.b)));
  const lo = ran[0].pc, hi = ran.at(-1).pc;
  for (const i of ins) {
    if (i.pc < lo) i.region = 'before';
    else if (i.pc > hi) i.region = 'after';
    else if (onLine(i, lines.a)) i.region = 'path_a';
    else if (onLine(i, lines.b)) i.region = 'path_b';
    else if (isSync(opcode(i.sass))) i.region = 'reconverge';
    else i.region = 'before';
  }
  return ins.some((i) => /^path_/.test(i.region) && GUARD.test(i.sass) && i.warp > 0) ? 'predicated' : 'no branch';
}

// The top three stall reasons of each region from ncu's samples: shares of the region's samples.
function stalls(ins, block) {
  if (!block) return null;
  const keys = Object.keys(block.rows[0]).filter((k) => /^stall_/.test(k) && !/\(Not Issued\)$/.test(k));
  const per = {};
  for (const i of ins) {
    const r = block.byPc.get(i.pc), s = (per[i.region] ||= {});
    for (const k of keys) s[k] = (s[k] || 0) + ncuInt(r[k]);
  }
  const out = {};
  for (const [reg, s] of Object.entries(per)) {
    const total = Object.values(s).reduce((a, b) => a + b, 0);
    out[reg] = total ? Object.entries(s).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).slice(0, 3)
      .map(([k, v]) => ({ reason: k.replace(/^stall_/, ''), share: Math.round((v / total) * 1000) / 1000 })) : null;
  }
  return out;
}

// The cold cost of the probe run (process start to its first result) and the disassembler.
function coldMs(log) {
  const m = /cold_cost_ms: process_to_first_result=([\d.]+)/.exec(read(path.join('logs', `${log}.log`)));
  if (!m) fail(`logs/${log}.log: no cold cost`);
  return Number(m[1]);
}
const env = read('logs/00_env.log');
const nvdisasm = (() => {
  const l = env.split('\n'), i = l.findIndex((x) => /^nvdisasm: /.test(x));
  // The tools' versions follow in the order nvcc, ncu, nvdisasm (two lines each).
  const rel = l.filter((x) => /^Cuda compilation tools, release/.test(x))[1];
  const v = rel && /release ([\d.]+), (V[\d.]+)/.exec(rel);
  return i >= 0 && v ? `nvdisasm ${v[1]} (${v[2]})` : null;
})();
const when = (() => {
  const m = /^date: \w+ (\w+)\s+(\d+) (\d\d):(\d\d):(\d\d) (AM|PM) UTC (\d{4})/m.exec(env);
  if (!m) fail('logs/00_env.log: no date');
  const mon = 'JanFebMarAprMayJunJulAugSepOctNovDec'.indexOf(m[1]) / 3;
  const h = (Number(m[3]) % 12) + (m[6] === 'PM' ? 12 : 0);
  return new Date(Date.UTC(Number(m[7]), mon, Number(m[2]), h, Number(m[4]), Number(m[5]))).toISOString().replace(/\.\d+Z$/, 'Z');
})();

// FNV-1a (64-bit) of the block's lane strings: the fixture's stand-in for
// the service's hash of the row's path mask (any hash of the mask serves a
// cache key; the widget does not read it).
function fnv(s) {
  let h = 0xcbf29ce484222325n;
  for (const ch of s) { h ^= BigInt(ch.charCodeAt(0)); h = (h * 0x100000001b3n) & 0xffffffffffffffffn; }
  return h.toString(16).padStart(16, '0');
}

const scale = BLOCKS / PROBE_BLOCKS;
const full = (v, what) => {
  if (v % PROBE_BLOCKS) fail(`${what}: ${v} does not divide by ${PROBE_BLOCKS} blocks`);
  return (v / PROBE_BLOCKS) * BLOCKS;
};
const checks = [];

function profile(name, spec) {
  const ins = tsv(spec.tsv);
  const fn = ins[0].fn, lines = LINES[fn];
  if (!lines) fail(`${spec.tsv}: unknown kernel ${fn}`);
  if (spec.big) {
    const big = tsv(spec.big);
    const bad = ins.filter((i, k) => !big[k] || big[k].pc !== i.pc || big[k].warp !== 8 * i.warp || big[k].thread !== 8 * i.thread || big[k].predOn !== 8 * i.predOn);
    if (bad.length) fail(`${name}: the 1,056-block counts are not 8x the 132-block ones at pc ${bad.map((i) => i.pc.toString(16)).join(', ')}`);
    checks.push(`${name}: the 1,056-block grid counted 8x the 132-block grid at each of ${ins.length} instructions`);
  }
  const shape = regions(ins, lines);
  const block = ncuOf(ins);
  if (block) checks.push(`${name}: Nsight Compute's Source page has the same warp, thread and predicated-on counts at each of ${ins.length} instructions`);
  // Thread FFMAs per path (predicate on) = threads on the path x iterations, over the grid.
  const threadsA = onA(spec.mode) * BLOCKS, threadsB = (THREADS - onA(spec.mode)) * BLOCKS;
  for (const [reg, want] of [['path_a', threadsA * ITERS], ['path_b', threadsB * ITERS]]) {
    const got = ins.filter((i) => i.region === reg && opcode(i.sass) === 'FFMA').reduce((a, i) => a + full(i.predOn, name), 0);
    if (got !== want && !(reg === 'path_b' && want === 0 && got === 0)) fail(`${name}: ${reg} FFMA thread executions ${got}, want ${want}`);
    if (want) checks.push(`${name}: ${reg} FFMA thread executions with the predicate on = ${want} = threads on the path x ${ITERS}`);
  }
  const st = stalls(ins, block);
  const runs = [];
  for (const i of ins) {
    const g = GUARD.test(i.sass), op = opcode(i.sass), last = runs.at(-1);
    const same = last && last.opcode === op && last.guarded === g && last.region === i.region && last.line === i.line &&
      last.warp === i.warp && last.thread === i.thread && last.predOn === i.predOn && last.divergent === i.divergent;
    if (same) { last.count++; last.last_sass = i.sass; continue; }
    runs.push({ pc: i.pc, count: 1, opcode: op, sass: i.sass, last_sass: i.sass, line: i.line, region: i.region, guarded: g,
      warp: i.warp, thread: i.thread, predOn: i.predOn, divergent: i.divergent });
  }
  const kinds = [];
  for (const i of ins) if (!kinds.includes(i.region)) kinds.push(i.region);
  const sum = (list, k) => list.reduce((a, i) => a + full(i[k], name), 0);
  const file = path.basename(ins[0].file); // the probe's source, named without the folder it was built in
  return {
    shape,
    instructions: {
      source: 'cupti-sass',
      kernel: fn,
      cubin_crc: ins[0].crc.replace(/^0x/, '').padStart(16, '0'),
      mask_hash: fnv(lanesBlock0(spec.mode).join('')),
      grid: { blocks: PROBE_BLOCKS, block: [THREADS, 1] },
      scale,
      cached: false,
      collected_utc: when,
      collect_ms: coldMs(spec.log),
      disassembler: nvdisasm,
      disassembly_reason: null,
      mapped: ins.filter((i) => i.file && i.line > 0).length / ins.length,
      regions: kinds.map((k) => {
        const list = ins.filter((i) => i.region === k);
        const w = sum(list, 'warp'), t = sum(list, 'thread');
        return { kind: k, instructions: list.length, warp_executions: w, thread_executions: t,
          pred_on_thread_executions: sum(list, 'predOn'), lanes_per_execution: w ? t / w : 0, stalls: st ? st[k] : null };
      }),
      runs: runs.map((r) => ({
        pc: r.pc, count: r.count, opcode: r.opcode, sass: r.sass, last_sass: r.last_sass, file, line: r.line,
        region: r.region, guarded: r.guarded, warp_executions: full(r.warp, name), thread_executions: full(r.thread, name),
        pred_on_thread_executions: full(r.predOn, name), lanes: r.warp ? r.thread / r.warp : 0, divergent_targets: full(r.divergent, name),
      })),
    },
    lanes_block0: lanesBlock0(spec.mode),
  };
}

const rows = {};
const shapes = [];
for (const [name, spec] of Object.entries(ROWS)) {
  if (!spec) { rows[name] = { instructions: null }; continue; }
  const p = profile(name, spec);
  shapes.push(`${name}: ${p.shape}, ${p.instructions.runs.length} runs of ${p.instructions.regions.reduce((a, r) => a + r.instructions, 0)} instructions`);
  rows[name] = { instructions: p.instructions, lanes_block0: p.lanes_block0 };
}
// Each document's testimony: every row was asked for; host_ms the rows' collections.
const testimony = Object.fromEntries(Object.entries(SUITES).map(([suite, names]) => [suite, {
  requested: true, taken: true, reason: null, cached_rows: 0,
  host_ms: Math.round(names.reduce((a, n) => a + (rows[n].instructions ? rows[n].instructions.collect_ms : 0), 0) * 10) / 10,
}]));

const out = {
  about: 'Row `instructions` and document `testimony.instructions` (api/openapi.yaml, proposed) for the rows of the lesson\'s evidence, ' +
    'converted by make_instructions_fixture.mjs from a CUPTI probe run on an NVIDIA H200 (driver 580.159.04, CUDA 13.0) of kernels shaped like the lesson\'s: ' +
    'per-instruction SASS metrics on 132 blocks x 256 threads, scaled to the evidence\'s 4096 blocks; SASS text by nvdisasm; stall reasons from Nsight Compute\'s Source page ' +
    'where it profiled the same launch (null elsewhere). The kernels are the probe\'s (probeBranch, probePerIter, probeNoBranch in kernels.cu), not the service\'s, so kernel names and ' +
    'lines are theirs. collect_ms is the cold cost of the probe run that collected the row; mask_hash is FNV-1a of the row\'s lane strings; block parity was not probed, so its ' +
    'instructions are null. lanes_block0 is written out from the predicates\' definitions. The browser test stands these in where the server\'s answer lacks them and ' +
    'checks the server\'s own against the same expectations once it writes them.',
  checks,
  testimony,
  rows,
};
// One run a line: the file stays readable and diffs per run.
const text = JSON.stringify(out, (k, v) => (k === 'runs' ? v.map((r) => `\u0000${JSON.stringify(r)}\u0000`) : v), 1)
  .replace(/"\\u0000(.*?)\\u0000"/g, (_, j) => JSON.parse(`"${j}"`));
fs.writeFileSync(outFile, text + '\n');
console.log(shapes.join('\n'));
console.log(checks.join('\n'));
console.log(`wrote ${outFile} (${fs.statSync(outFile).size} bytes)`);

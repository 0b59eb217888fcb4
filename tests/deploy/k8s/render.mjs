// render.mjs -- the subset of kustomize that deploy/k8s uses, so the
// manifests test can render an overlay where kubectl is not installed (the
// test compares this rendering with `kubectl kustomize` wherever kubectl is
// there, so the two cannot drift apart unnoticed).
//
// A kustomization is rendered as kustomize does it: its resources (files, or
// folders holding a kustomization, rendered first), then each component in
// order (its resources added, then its patches applied to everything
// accumulated so far), then its own patches, then its images. Patches are
// JSON 6902 operation lists (add, replace, remove; "-" appends) with a
// target of kind, name and optionally group/version; images rewrite the
// image of every container and init container whose name matches. Anything
// else in a kustomization is refused by name, so a feature added to the
// manifests without its counterpart here fails loudly instead of rendering
// wrong.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

const KNOWN = new Set(['apiVersion', 'kind', 'resources', 'components', 'patches', 'images']);

function readKustomization(dir) {
  const file = path.join(dir, 'kustomization.yaml');
  const k = YAML.parse(fs.readFileSync(file, 'utf8'));
  for (const key of Object.keys(k)) {
    if (!KNOWN.has(key)) throw new Error(`${file}: render.mjs does not support "${key}"`);
  }
  return k;
}

function readDocs(file) {
  return YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'))
    .map((d) => d.toJS({ maxAliasCount: 100 }))
    .filter(Boolean)
    .map((o) => structuredClone(o)); // anchors become independent copies, as kustomize writes them
}

function addResources(dir, k, acc) {
  for (const r of k.resources ?? []) {
    const p = path.resolve(dir, r);
    if (fs.statSync(p).isDirectory()) acc.push(...render(p));
    else acc.push(...readDocs(p));
  }
}

function matches(obj, t) {
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
  if (t.kind && t.kind !== obj.kind) return false;
  if (t.name && t.name !== obj.metadata?.name) return false;
  if (t.group !== undefined && t.group !== group) return false;
  if (t.version && t.version !== version) return false;
  return true;
}

function pointer(p) {
  return p.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function applyOp(obj, op) {
  const keys = pointer(op.path);
  const last = keys.pop();
  let parent = obj;
  for (const key of keys) {
    parent = parent?.[Array.isArray(parent) ? Number(key) : key];
    if (parent === undefined) throw new Error(`patch ${op.op} ${op.path}: no ${key}`);
  }
  if (Array.isArray(parent)) {
    if (op.op === 'add') {
      if (last === '-') parent.push(structuredClone(op.value));
      else parent.splice(Number(last), 0, structuredClone(op.value));
    } else if (op.op === 'replace') {
      parent[Number(last)] = structuredClone(op.value);
    } else if (op.op === 'remove') {
      parent.splice(Number(last), 1);
    } else {
      throw new Error(`patch op ${op.op} not supported`);
    }
    return;
  }
  if ((op.op === 'replace' || op.op === 'remove') && !(last in parent)) {
    throw new Error(`patch ${op.op} ${op.path}: no ${last}`);
  }
  if (op.op === 'add' || op.op === 'replace') parent[last] = structuredClone(op.value);
  else if (op.op === 'remove') delete parent[last];
  else throw new Error(`patch op ${op.op} not supported`);
}

function applyPatches(dir, k, acc) {
  for (const p of k.patches ?? []) {
    if (!p.target || typeof p.patch !== 'string') throw new Error(`${dir}: only inline JSON 6902 patches with a target`);
    const ops = YAML.parse(p.patch);
    const hit = acc.filter((o) => matches(o, p.target));
    if (hit.length === 0) throw new Error(`${dir}: a patch matches nothing (${JSON.stringify(p.target)})`);
    for (const o of hit) for (const op of ops) applyOp(o, op);
  }
}

function imageName(image) {
  return image.replace(/@.*$/, '').replace(/:[^/:]*$/, '');
}

function applyImages(k, acc) {
  const walk = (node) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if ((key === 'containers' || key === 'initContainers') && Array.isArray(value)) {
        for (const c of value) {
          const rule = (k.images ?? []).find((i) => i.name === imageName(c.image ?? ''));
          if (!rule) continue;
          const tag = c.image.slice(imageName(c.image).length);
          c.image = (rule.newName ?? rule.name) + (rule.newTag !== undefined ? `:${rule.newTag}` : tag);
        }
      }
      walk(value);
    }
  };
  walk(acc);
}

// render(dir): every object the kustomization in dir produces.
export function render(dir) {
  const k = readKustomization(dir);
  const acc = [];
  addResources(dir, k, acc);
  for (const c of k.components ?? []) {
    const cdir = path.resolve(dir, c);
    const ck = readKustomization(cdir);
    if (ck.kind !== 'Component') throw new Error(`${cdir}: not a kustomize Component`);
    addResources(cdir, ck, acc);
    applyPatches(cdir, ck, acc);
    applyImages(ck, acc);
  }
  applyPatches(dir, k, acc);
  applyImages(k, acc);
  return acc;
}

// manifests.test.mjs -- every manifest in deploy/k8s validated against the
// Kubernetes API schemas (kubernetes-models: the OpenAPI schemas of
// Kubernetes, one class per kind), then checked for what the service needs:
// one GPU per pod, pods pinned to a GPU model by the GPU operator's label,
// probes on /readyz and /healthz, the shared evidence volume, limits, a
// non-root read-only security context, a Service per model and one for all,
// a refresh CronJob per model, and a NetworkPolicy that admits only the
// front (and the refresh) to the servers. Each check also runs once on a
// broken copy that it must reject.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Namespace, PersistentVolumeClaim, Service, ConfigMap } from 'kubernetes-models/v1';
import { StatefulSet, Deployment } from 'kubernetes-models/apps/v1';
import { CronJob } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = path.resolve(here, '..', '..', '..', 'deploy', 'k8s');
const kinds = { Namespace, PersistentVolumeClaim, Service, ConfigMap, StatefulSet, Deployment, CronJob, NetworkPolicy };

const files = fs.readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const docs = files.flatMap((f) => YAML.parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8'))
  .map((d, i) => ({ file: f, i, obj: d.toJS({ maxAliasCount: 100 }) })).filter((d) => d.obj));
const of = (kind) => docs.filter((d) => d.obj.kind === kind).map((d) => d.obj);

function validate(obj) {
  const K = kinds[obj.kind];
  if (!K) throw new Error(`no schema for kind ${obj.kind}`);
  new K(obj).validate();
}

test('every manifest validates against the Kubernetes schemas', () => {
  assert.ok(docs.length >= 10, `${docs.length} documents`);
  for (const d of docs) {
    try { validate(d.obj); } catch (e) { assert.fail(`${d.file} #${d.i} (${d.obj.kind} ${d.obj.metadata?.name}): ${e.message}`); }
  }
  // The validator must catch a misspelt field and a wrong type.
  const sts = structuredClone(of('StatefulSet')[0]);
  sts.spec.replicas = 'one';
  assert.throws(() => validate(sts));
  const svc = structuredClone(of('Service')[0]);
  svc.spec.ports[0].port = 'http';
  assert.throws(() => validate(svc));
  const listed = YAML.parse(fs.readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')).resources.sort();
  assert.deepEqual(listed, [...files].sort(), 'kustomization.yaml lists every manifest');
});

function serverProblems(s) {
  const p = [], spec = s.spec.template.spec, c = spec.containers[0], sc = { ...spec.securityContext, ...c.securityContext };
  const gpu = s.metadata.labels['divergence/gpu'];
  if (c.resources?.limits?.['nvidia.com/gpu'] !== 1) p.push('limits nvidia.com/gpu must be 1');
  if (!c.resources?.limits?.memory || !c.resources?.limits?.cpu) p.push('cpu and memory limits');
  if (!spec.nodeSelector?.['nvidia.com/gpu.product']) p.push('nodeSelector nvidia.com/gpu.product');
  if (c.readinessProbe?.httpGet?.path !== '/readyz') p.push('readiness /readyz');
  if (c.livenessProbe?.httpGet?.path !== '/healthz') p.push('liveness /healthz');
  if (sc.runAsNonRoot !== true || !(sc.runAsUser > 0)) p.push('non-root');
  if (sc.readOnlyRootFilesystem !== true || sc.allowPrivilegeEscalation !== false) p.push('read-only, no privilege escalation');
  if (!sc.capabilities?.drop?.includes('ALL')) p.push('capabilities drop ALL');
  const ev = spec.volumes?.find((v) => v.persistentVolumeClaim?.claimName === 'divergence-evidence');
  if (!ev || !c.volumeMounts?.some((m) => m.name === ev.name && m.mountPath === '/var/lib/divergence/evidence')) p.push('the shared evidence volume');
  if (!c.args?.some((a) => a.startsWith('--job-id-prefix='))) p.push('--job-id-prefix');
  if (!gpu) p.push('label divergence/gpu');
  return p;
}

test('one StatefulSet per GPU model: one GPU per pod, probes, evidence, limits, non-root', () => {
  const sets = of('StatefulSet');
  assert.ok(sets.length >= 2, 'at least two GPU models');
  const products = new Set();
  const prefixes = new Set();
  for (const s of sets) {
    assert.deepEqual(serverProblems(s), [], s.metadata.name);
    products.add(s.spec.template.spec.nodeSelector['nvidia.com/gpu.product']);
    prefixes.add(s.spec.template.spec.containers[0].args.find((a) => a.startsWith('--job-id-prefix='))[16]);
  }
  assert.equal(products.size, sets.length, 'each model its own product label');
  assert.equal(prefixes.size, sets.length, 'each model its own job id digit');
  const bad = structuredClone(sets[0]);
  bad.spec.template.spec.containers[0].resources.limits['nvidia.com/gpu'] = 2;
  delete bad.spec.template.spec.securityContext.runAsNonRoot;
  assert.equal(serverProblems(bad).length, 2, 'the checks see a broken copy');
});

test('Services per model and for all, the refresh CronJobs, the front and the NetworkPolicy', () => {
  const svcs = of('Service'), sets = of('StatefulSet');
  for (const s of sets) {
    const gpu = s.metadata.labels['divergence/gpu'];
    assert.ok(svcs.some((v) => v.metadata.name === `divergence-${gpu}` && v.spec.selector['divergence/gpu'] === gpu), `Service for ${gpu}`);
    assert.ok(svcs.some((v) => v.metadata.name === s.spec.serviceName && v.spec.clusterIP === 'None'), `headless Service for ${gpu}`);
    const cj = of('CronJob').find((j) => j.metadata.labels['divergence/gpu'] === gpu);
    assert.ok(cj, `refresh CronJob for ${gpu}`);
    assert.deepEqual(cj.spec.jobTemplate.spec.template.spec.containers[0].args, ['refresh', '--server', `http://divergence-${gpu}:8080`]);
    assert.equal(cj.spec.concurrencyPolicy, 'Forbid');
  }
  const all = svcs.find((v) => v.metadata.name === 'divergence');
  assert.ok(all && !all.spec.selector['divergence/gpu'], 'one Service for all servers');
  const np = of('NetworkPolicy')[0];
  assert.ok(np, 'a NetworkPolicy');
  assert.equal(np.spec.podSelector.matchLabels['app.kubernetes.io/component'], 'server');
  const from = np.spec.ingress.flatMap((r) => r.from).map((f) => f.podSelector?.matchLabels?.['app.kubernetes.io/component']);
  assert.deepEqual(from.sort(), ['front', 'refresh']);
  assert.ok(np.spec.ingress.every((r) => r.from.every((f) => f.podSelector && !f.namespaceSelector && !f.ipBlock)), 'nothing but the front and the refresh');
  const front = of('Deployment').find((d) => d.metadata.labels['app.kubernetes.io/component'] === 'front');
  assert.ok(front, 'the front Deployment');
  const conf = of('ConfigMap').find((c) => c.metadata.name === 'divergence-front').data['nginx.conf'];
  for (const s of sets) {
    const gpu = s.metadata.labels['divergence/gpu'];
    const digit = s.spec.template.spec.containers[0].args.find((a) => a.startsWith('--job-id-prefix='))[16];
    assert.match(conf, new RegExp(`\\n\\s*${gpu}\\s+divergence-${gpu}\\.divergence\\.svc\\.cluster\\.local:8080;`), `front routes /gpus/${gpu}/measure`);
    assert.ok(conf.includes(`~^/jobs/${digit}(?<n>[0-9]) divergence-${gpu}-$n.${s.spec.serviceName}.divergence.svc.cluster.local:8080`), `front routes ${digit}... jobs to ${gpu}'s pods`);
  }
});

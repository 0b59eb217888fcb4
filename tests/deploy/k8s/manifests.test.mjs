// manifests.test.mjs -- deploy/k8s as the cluster would get it: each overlay
// (deploy/k8s/overlays/<gpu-model>) rendered (render.mjs, the subset of
// kustomize the manifests use; checked against `kubectl kustomize` where
// kubectl is installed), every rendered object validated against the
// Kubernetes API schemas (kubernetes-models: the OpenAPI schemas of
// Kubernetes, one class per kind), then checked for what the service needs:
// exactly one GPU model per overlay, the overlay's image on every container,
// the servers trusting the front by the pod network range (--trusted-proxy,
// not --trust-forwarded), one GPU per pod, pods pinned to the model by the
// GPU operator's label, probes on /readyz and /healthz, the shared evidence
// volume, limits, a non-root read-only security context, the Services, the
// refresh CronJob, the front's routes for that model only, and a
// NetworkPolicy that admits only the front (and the refresh) to the servers.
// Each check also runs once on a broken copy that it must reject.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Namespace, PersistentVolumeClaim, Service, ConfigMap } from 'kubernetes-models/v1';
import { StatefulSet, Deployment } from 'kubernetes-models/apps/v1';
import { CronJob } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { render } from './render.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const k8s = path.resolve(here, '..', '..', '..', 'deploy', 'k8s');
const kinds = { Namespace, PersistentVolumeClaim, Service, ConfigMap, StatefulSet, Deployment, CronJob, NetworkPolicy };
// The GPU operator's product label of each model the manifests know.
const PRODUCT = { 'nvidia-h200': 'NVIDIA-H200', 'nvidia-l4': 'NVIDIA-L4' };

const overlays = fs.readdirSync(path.join(k8s, 'overlays')).sort();
const rendered = Object.fromEntries(overlays.map((o) => [o, render(path.join(k8s, 'overlays', o))]));
const of = (objs, kind) => objs.filter((o) => o.kind === kind);
const key = (o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function validate(obj) {
  const K = kinds[obj.kind];
  if (!K) throw new Error(`no schema for kind ${obj.kind}`);
  new K(obj).validate();
}

function podSpecs(objs) {
  return objs.flatMap((o) => {
    if (o.kind === 'Deployment' || o.kind === 'StatefulSet') return [o.spec.template.spec];
    if (o.kind === 'CronJob') return [o.spec.jobTemplate.spec.template.spec];
    return [];
  });
}

// The GPU models an overlay's objects refer to, by every way they can: the
// divergence/gpu label, the product nodeSelector, and any
// divergence-<model> name anywhere (Services, routes, refresh targets).
function modelsIn(objs) {
  const found = new Set();
  for (const o of objs) {
    const gpu = o.metadata.labels?.['divergence/gpu'];
    if (gpu) found.add(gpu);
    for (const m of JSON.stringify(o).matchAll(/divergence-(nvidia-[a-z0-9]+)/g)) found.add(m[1]);
  }
  for (const s of podSpecs(objs)) {
    const product = s.nodeSelector?.['nvidia.com/gpu.product'];
    if (product) found.add(Object.keys(PRODUCT).find((m) => PRODUCT[m] === product) ?? product);
  }
  return found;
}

function overlayImage(overlay) {
  const k = YAML.parse(fs.readFileSync(path.join(k8s, 'overlays', overlay, 'kustomization.yaml'), 'utf8'));
  assert.equal(k.images?.length, 1, `${overlay}: one images: entry`);
  return `${k.images[0].newName}:${k.images[0].newTag}`;
}

function imageProblems(objs, want) {
  return podSpecs(objs).flatMap((s) => [...(s.containers ?? []), ...(s.initContainers ?? [])])
    .filter((c) => c.image !== want).map((c) => `${c.name}: ${c.image}`);
}

test('one overlay per GPU model, each over the base and its model\'s component', () => {
  const models = fs.readdirSync(path.join(k8s, 'gpus')).sort();
  assert.deepEqual(overlays, models, 'an overlay for every component in deploy/k8s/gpus');
  assert.ok(!fs.existsSync(path.join(k8s, 'kustomization.yaml')), 'deploy/k8s itself is no kustomization: apply an overlay');
  // Every manifest file is named by its folder's kustomization.
  for (const dir of ['base', ...models.map((m) => path.join('gpus', m))]) {
    const k = YAML.parse(fs.readFileSync(path.join(k8s, dir, 'kustomization.yaml'), 'utf8'));
    const files = fs.readdirSync(path.join(k8s, dir)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    assert.deepEqual([...k.resources].sort(), files.sort(), `${dir}/kustomization.yaml lists every manifest`);
  }
});

for (const overlay of overlays) {
  const objs = rendered[overlay];
  const image = overlayImage(overlay);

  test(`${overlay}: every rendered object validates against the Kubernetes schemas`, () => {
    assert.ok(objs.length >= 10, `${objs.length} objects`);
    for (const o of objs) {
      try { validate(o); } catch (e) { assert.fail(`${key(o)}: ${e.message}`); }
    }
    const names = objs.map(key);
    assert.equal(new Set(names).size, names.length, 'no object rendered twice');
    // The validator must catch a wrong type.
    const sts = structuredClone(of(objs, 'StatefulSet')[0]);
    sts.spec.replicas = 'one';
    assert.throws(() => validate(sts));
    const svc = structuredClone(of(objs, 'Service')[0]);
    svc.spec.ports[0].port = 'http';
    assert.throws(() => validate(svc));
  });

  test(`${overlay}: exactly one GPU model`, () => {
    assert.deepEqual([...modelsIn(objs)], [overlay]);
    assert.equal(of(objs, 'StatefulSet').length, 1, 'one StatefulSet');
    assert.equal(of(objs, 'StatefulSet')[0].spec.template.spec.nodeSelector['nvidia.com/gpu.product'], PRODUCT[overlay]);
    // The check sees a second model: this overlay's objects with another's.
    const other = overlays.find((o) => o !== overlay);
    if (other) assert.equal(modelsIn([...objs, ...rendered[other]]).size, 2, 'two models are seen as two');
  });

  test(`${overlay}: the overlay's image on every container`, () => {
    assert.match(image, /^[^:]+\/divergence:[0-9]/);
    assert.deepEqual(imageProblems(objs, image), []);
    const bad = structuredClone(objs);
    of(bad, 'CronJob')[0].spec.jobTemplate.spec.template.spec.containers[0].image = 'divergence';
    assert.equal(imageProblems(bad, image).length, 1, 'an unset image is seen');
  });

  test(`${overlay}: servers trust the front by the pod network range`, () => {
    const net = of(objs, 'ConfigMap').find((c) => c.metadata.name === 'divergence-network');
    assert.ok(net, 'the divergence-network ConfigMap');
    const cidr = net.data['trusted-proxy'];
    assert.match(cidr, /^(\d{1,3}\.){3}\d{1,3}\/([0-9]|[12][0-9]|3[0-2])$|^[0-9a-f:]+\/\d{1,3}$/, `a CIDR: ${cidr}`);
    const problems = (s) => {
      const c = s.spec.template.spec.containers[0], p = [];
      if (c.args.includes('--trust-forwarded')) p.push('--trust-forwarded trusts loopback only');
      if (!c.args.includes('--trusted-proxy=$(TRUSTED_PROXY)')) p.push('--trusted-proxy=$(TRUSTED_PROXY)');
      const env = c.env?.find((e) => e.name === 'TRUSTED_PROXY');
      const ref = env?.valueFrom?.configMapKeyRef;
      if (ref?.name !== 'divergence-network' || ref?.key !== 'trusted-proxy') p.push('TRUSTED_PROXY from divergence-network');
      return p;
    };
    for (const s of of(objs, 'StatefulSet')) assert.deepEqual(problems(s), [], s.metadata.name);
    const bad = structuredClone(of(objs, 'StatefulSet')[0]);
    bad.spec.template.spec.containers[0].args = bad.spec.template.spec.containers[0].args
      .map((a) => (a.startsWith('--trusted-proxy') ? '--trust-forwarded' : a));
    assert.equal(problems(bad).length, 2, 'the check sees --trust-forwarded back');
  });

  test(`${overlay}: the StatefulSet: one GPU per pod, probes, evidence, limits, non-root`, () => {
    const problems = (s) => {
      const p = [], spec = s.spec.template.spec, c = spec.containers[0], sc = { ...spec.securityContext, ...c.securityContext };
      if (c.resources?.limits?.['nvidia.com/gpu'] !== 1) p.push('limits nvidia.com/gpu must be 1');
      if (!c.resources?.limits?.memory || !c.resources?.limits?.cpu) p.push('cpu and memory limits');
      if (c.readinessProbe?.httpGet?.path !== '/readyz') p.push('readiness /readyz');
      if (c.livenessProbe?.httpGet?.path !== '/healthz') p.push('liveness /healthz');
      if (sc.runAsNonRoot !== true || !(sc.runAsUser > 0)) p.push('non-root');
      if (sc.readOnlyRootFilesystem !== true || sc.allowPrivilegeEscalation !== false) p.push('read-only, no privilege escalation');
      if (!sc.capabilities?.drop?.includes('ALL')) p.push('capabilities drop ALL');
      const ev = spec.volumes?.find((v) => v.persistentVolumeClaim?.claimName === 'divergence-evidence');
      if (!ev || !c.volumeMounts?.some((m) => m.name === ev.name && m.mountPath === '/var/lib/divergence/evidence')) p.push('the shared evidence volume');
      if (!c.args?.some((a) => a.startsWith('--job-id-prefix='))) p.push('--job-id-prefix');
      if (s.metadata.labels['divergence/gpu'] !== overlay) p.push('label divergence/gpu');
      return p;
    };
    const [s] = of(objs, 'StatefulSet');
    assert.deepEqual(problems(s), []);
    const bad = structuredClone(s);
    bad.spec.template.spec.containers[0].resources.limits['nvidia.com/gpu'] = 2;
    delete bad.spec.template.spec.securityContext.runAsNonRoot;
    assert.equal(problems(bad).length, 2, 'the checks see a broken copy');
  });

  test(`${overlay}: Services, the refresh CronJob, the front's routes and the NetworkPolicy`, () => {
    const [s] = of(objs, 'StatefulSet');
    const svcs = of(objs, 'Service');
    assert.ok(svcs.some((v) => v.metadata.name === `divergence-${overlay}` && v.spec.selector['divergence/gpu'] === overlay), 'the model\'s Service');
    assert.ok(svcs.some((v) => v.metadata.name === s.spec.serviceName && v.spec.clusterIP === 'None'), 'the headless Service');
    const all = svcs.find((v) => v.metadata.name === 'divergence');
    assert.ok(all && !all.spec.selector['divergence/gpu'], 'one Service for all servers');
    const cj = of(objs, 'CronJob').find((j) => j.metadata.labels['divergence/gpu'] === overlay);
    assert.ok(cj, 'the refresh CronJob');
    assert.deepEqual(cj.spec.jobTemplate.spec.template.spec.containers[0].args, ['refresh', '--server', `http://divergence-${overlay}:8080`]);
    assert.equal(cj.spec.concurrencyPolicy, 'Forbid');

    const np = of(objs, 'NetworkPolicy')[0];
    assert.equal(np.spec.podSelector.matchLabels['app.kubernetes.io/component'], 'server');
    const from = np.spec.ingress.flatMap((r) => r.from).map((f) => f.podSelector?.matchLabels?.['app.kubernetes.io/component']);
    assert.deepEqual(from.sort(), ['front', 'refresh']);
    assert.ok(np.spec.ingress.every((r) => r.from.every((f) => f.podSelector && !f.namespaceSelector && !f.ipBlock)), 'nothing but the front and the refresh');

    // The front: its maps include the routes files, and the routes of this
    // model (and no other) are projected into its configuration volume.
    const front = of(objs, 'Deployment').find((d) => d.metadata.labels['app.kubernetes.io/component'] === 'front');
    assert.ok(front, 'the front Deployment');
    const conf = of(objs, 'ConfigMap').find((c) => c.metadata.name === 'divergence-front').data['nginx.conf'];
    assert.match(conf, /include \/etc\/divergence-front\/\*\.services;/);
    assert.match(conf, /include \/etc\/divergence-front\/\*\.jobs;/);
    const vol = front.spec.template.spec.volumes.find((v) => v.name === 'conf');
    assert.ok(front.spec.template.spec.containers[0].volumeMounts.some((m) => m.name === 'conf' && m.mountPath === '/etc/divergence-front'));
    const projected = vol.projected.sources.map((x) => x.configMap.name).sort();
    assert.deepEqual(projected, ['divergence-front', `divergence-front-${overlay}`]);
    const routes = of(objs, 'ConfigMap').find((c) => c.metadata.name === `divergence-front-${overlay}`).data;
    const digit = s.spec.template.spec.containers[0].args.find((a) => a.startsWith('--job-id-prefix='))[16];
    assert.equal(routes[`${overlay}.services`].trim(), `${overlay} divergence-${overlay}.divergence.svc.cluster.local:8080;`);
    assert.equal(routes[`${overlay}.jobs`].trim(),
      `~^/jobs/${digit}(?<n>[0-9]) divergence-${overlay}-$n.${s.spec.serviceName}.divergence.svc.cluster.local:8080;`);
  });
}

// kustomize itself, where it is installed: render.mjs must agree with it.
let kubectl = null;
try { execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' }); kubectl = 'kubectl'; } catch { /* not installed */ }
test('render.mjs agrees with kubectl kustomize', { skip: kubectl ? false : 'kubectl not installed' }, () => {
  for (const overlay of overlays) {
    const out = execFileSync(kubectl, ['kustomize', path.join(k8s, 'overlays', overlay)], { encoding: 'utf8' });
    const theirs = YAML.parseAllDocuments(out).map((d) => d.toJS()).filter(Boolean);
    const byKey = (list) => Object.fromEntries(list.map((o) => [key(o), o]));
    assert.deepEqual(byKey(rendered[overlay]), byKey(theirs), overlay);
  }
});

#!/usr/bin/env bash
# deploy/k8s in `make test`: every overlay rendered and every rendered object
# checked against the Kubernetes schemas and the service's rules
# (manifests.test.mjs: render.mjs, kubernetes-models; compared with `kubectl
# kustomize` when kubectl is installed), then per overlay the front's
# nginx.conf with that model's routes through `nginx -t` (the cluster
# resolver swapped for loopback: nginx resolves it at load; the configuration
# volume's path swapped for a temp folder holding the same files). The
# schemas check types, required fields, enums and formats; they do not
# reject unknown field names (the API server does).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
[ -d "$here/node_modules/kubernetes-models" ] ||
  { echo "k8s_check: tests/deploy/k8s/node_modules missing (run: cd tests/deploy/k8s && npm ci)" >&2; exit 1; }
command -v nginx >/dev/null || { echo "k8s_check: nginx not installed: the front's nginx.conf not checked" >&2; exit 1; }
(cd "$here" && node --test --test-reporter=spec manifests.test.mjs)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for overlay in "$repo"/deploy/k8s/overlays/*/; do
  o=$(basename "$overlay")
  conf=$tmp/$o/etc
  mkdir -p "$conf"
  # The ConfigMaps projected into the front's /etc/divergence-front, as files.
  node --input-type=module -e "
import fs from 'node:fs'; import { render } from '$here/render.mjs';
const objs = render('$overlay');
const front = objs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'divergence-front');
for (const s of front.spec.template.spec.volumes.find((v) => v.name === 'conf').projected.sources) {
  const cm = objs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === s.configMap.name);
  for (const [k, v] of Object.entries(cm.data)) fs.writeFileSync('$conf/' + k, v);
}"
  sed -i -e 's|resolver kube-dns.kube-system.svc.cluster.local|resolver 127.0.0.1|' -e "s|/tmp/|$tmp/$o/|g" \
    -e "s|/etc/divergence-front/|$conf/|g" "$conf/nginx.conf"
  grep -q "include $conf/\*\.services;" "$conf/nginx.conf" || { echo "k8s_check: $o: nginx.conf includes no routes" >&2; exit 1; }
  nginx -t -q -p "$tmp/$o" -e "$tmp/$o/error.log" -c "$conf/nginx.conf"
  echo "k8s_check: $o: nginx -t on the front's nginx.conf with $(ls "$conf" | grep -c '\.services$') model's routes: ok"
  # nginx -t must see a broken route line (the check loads the routes).
  printf 'broken line without a semicolon\n' >> "$conf/$o.services"
  if nginx -t -q -p "$tmp/$o" -e "$tmp/$o/error.log" -c "$conf/nginx.conf" 2>/dev/null; then
    echo "k8s_check: $o: nginx -t accepted a broken route: the routes are not loaded" >&2; exit 1
  fi
  if command -v kubectl >/dev/null; then
    echo "k8s_check: $o: kubectl kustomize: $(kubectl kustomize "$overlay" | grep -c '^kind:') objects"
  fi
done
echo "k8s_check: ok"

#!/usr/bin/env bash
# deploy/k8s in `make test`: every manifest against the Kubernetes schemas
# and the service's rules (manifests.test.mjs, kubernetes-models), the
# front's nginx.conf through `nginx -t` (the cluster resolver swapped for
# loopback: nginx resolves it at load), and `kubectl kustomize` when kubectl
# is installed. The schemas check types, required fields, enums and formats;
# they do not reject unknown field names (the API server does).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
[ -d "$here/node_modules/kubernetes-models" ] ||
  { echo "k8s_check: tests/deploy/k8s/node_modules missing (run: cd tests/deploy/k8s && npm ci)" >&2; exit 1; }
(cd "$here" && node --test --test-reporter=spec manifests.test.mjs)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node --input-type=module -e "
import fs from 'node:fs'; import YAML from '$here/node_modules/yaml/dist/index.js';
const docs = YAML.parseAllDocuments(fs.readFileSync('$repo/deploy/k8s/front.yaml', 'utf8')).map((d) => d.toJS());
process.stdout.write(docs.find((d) => d.kind === 'ConfigMap').data['nginx.conf']);" > "$tmp/nginx.conf"
sed -i -e 's|resolver kube-dns.kube-system.svc.cluster.local|resolver 127.0.0.1|' -e "s|/tmp/|$tmp/|g" "$tmp/nginx.conf"
if command -v nginx >/dev/null; then
  nginx -t -q -p "$tmp" -e "$tmp/error.log" -c "$tmp/nginx.conf" && echo "k8s_check: nginx -t on the front's nginx.conf: ok"
else
  echo "k8s_check: nginx not installed: the front's nginx.conf not checked" >&2; exit 1
fi
if command -v kubectl >/dev/null; then
  n=$(kubectl kustomize "$repo/deploy/k8s" | grep -c '^kind:')
  echo "k8s_check: kubectl kustomize: $n objects"
fi
echo "k8s_check: ok"

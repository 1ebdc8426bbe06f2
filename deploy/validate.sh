#!/usr/bin/env bash
# Validates the deployment files without a cluster or a Docker engine:
#   1. docker-compose.yml parses (Debian's docker-compose 1.29: `config -q`), and its encoder
#      service is refused without the sentence encoder (LOCUS_EMBEDDER=local);
#   2. k8s/base, k8s/overlays/production and k8s/overlays/without-encoder render (`kubectl kustomize`);
#   3. every rendered object passes the Kubernetes API schemas (kubernetes-models), the KEDA
#      objects their documented shape, and every Locus process's environment, in both, passes
#      Locus's own configuration rules (deploy/validate-manifests.ts);
#   4. k8s/monitoring renders, its alerts pass `promtool check rules` and their unit tests
#      (k8s/monitoring/alerts.test.yaml, `promtool test rules`), its Grafana dashboard's queries
#      parse (`promtool check rules`, each as a recording rule), and so do the KEDA triggers'
#      queries, which also pass their unit tests (deploy/keda-queries.test.yaml).
# Installs docker-compose, kubectl and promtool (prometheus) from Debian's packages when missing
# (CI runs as root).
# Exits non-zero on the first tool that fails, or with the list of every problem found.
#
#   bash deploy/validate.sh        (or: pnpm --filter @locus/deploy validate)
set -euo pipefail
cd "$(dirname "$0")/.."

# KUBECTL picks another kubectl (e.g. an older one, to check the kustomizations still render).
KUBECTL="${KUBECTL:-kubectl}"
missing=()
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v "$KUBECTL" >/dev/null 2>&1 || missing+=(kubernetes-client)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "validate: missing Debian package(s) ${missing[*]}; install them with apt-get" >&2
    exit 1
  fi
  echo "validate: installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

echo "== docker-compose config ($(docker-compose version --short 2>/dev/null))"
# The file has no default for its secrets: without them it must refuse to render.
if env -u POSTGRES_PASSWORD -u RABBITMQ_PASSWORD -u MINIO_ROOT_PASSWORD -u LOCUS_INTERNAL_SECRET \
  -u LOCUS_SIGNING_SECRET docker-compose -f docker-compose.yml --env-file /dev/null config -q 2>/dev/null; then
  echo "validate: docker-compose.yml renders without its secrets set: it must require them" >&2
  exit 1
fi
echo "docker-compose.yml refuses to start without its secrets"
# With secrets made as deploy/compose-env.sh makes them (and nothing else from this shell).
secrets="$out/secrets.env"
bash deploy/compose-env.sh --print >"$secrets"
# docker-compose config with those secrets and no setting of this shell's that the file reads;
# arguments: NAME=value settings to add, then docker-compose's options (--profile).
render() {
  local settings=()
  while [ $# -gt 0 ] && [[ "$1" == *=* ]]; do settings+=("$1"); shift; done
  env -u MINIO_ROOT_USER -u LOCUS_PUBLIC_URL -u LOCUS_EMBEDDER -u COMPOSE_PROFILES "${settings[@]}" \
    docker-compose -f docker-compose.yml --env-file "$secrets" "$@" config
}
render >"$out/compose.yaml" ||
  { echo "validate: docker-compose.yml does not parse (message above)" >&2; exit 1; }
echo "docker-compose.yml parses"
# Without the sentence encoder its service must be refused by the checks below (the file says to
# scale it to 0 then): a check that let it pass would let it crash-loop.
render LOCUS_EMBEDDER=local >"$out/compose-word-vectors.yaml"
if node --import tsx deploy/validate-manifests.ts --compose "$out/compose-word-vectors.yaml" >/dev/null 2>&1; then
  echo "validate: the encoder service passed the checks with LOCUS_EMBEDDER=local: they must refuse it" >&2
  exit 1
fi
echo "the encoder service is refused without the sentence encoder"

echo "== kubectl kustomize ($("$KUBECTL" version --client 2>/dev/null | head -n 1))"
for dir in k8s/base k8s/overlays/production k8s/overlays/without-encoder; do
  if ! "$KUBECTL" kustomize "$dir" >"$out/$(basename "$dir").yaml"; then
    echo "validate: kubectl kustomize $dir failed (message above)" >&2
    exit 1
  fi
done
echo "k8s/base, k8s/overlays/production and k8s/overlays/without-encoder render"

echo "== alerts (promtool $(promtool --version 2>/dev/null | head -n 1 | awk '{print $3}'))"
# k8s/monitoring renders, and its alerts pass promtool's checks and their unit tests.
if ! "$KUBECTL" kustomize k8s/monitoring >"$out/monitoring.yaml"; then
  echo "validate: kubectl kustomize k8s/monitoring failed (message above)" >&2
  exit 1
fi
mkdir -p "$out/alerts"
node --import tsx deploy/prometheus-rules.ts alerts k8s/monitoring/prometheus-rule.yaml "$out/alerts/rules.yaml"
cp k8s/monitoring/alerts.test.yaml "$out/alerts/"
promtool check rules "$out/alerts/rules.yaml"
promtool test rules "$out/alerts/alerts.test.yaml"
# The Grafana dashboard's queries, each as a recording rule: one that does not parse fails here.
node --import tsx deploy/prometheus-rules.ts dashboard k8s/monitoring/grafana-dashboard.json "$out/alerts/dashboard.yaml"
promtool check rules "$out/alerts/dashboard.yaml"
# The KEDA triggers' queries (the rendered production overlay's), each as a recording rule: they
# parse, and return what deploy/keda-queries.test.yaml expects of them.
node --import tsx deploy/prometheus-rules.ts keda "$out/production.yaml" "$out/alerts/keda.yaml"
cp deploy/keda-queries.test.yaml "$out/alerts/"
promtool check rules "$out/alerts/keda.yaml"
promtool test rules "$out/alerts/keda-queries.test.yaml"

echo "== schemas and cross-references"
node --import tsx deploy/validate-manifests.ts \
  --compose "$out/compose.yaml" \
  --k8s "base=$out/base.yaml" \
  --k8s "production=$out/production.yaml" \
  --k8s "without-encoder=$out/without-encoder.yaml"
echo "deploy: every check passed"

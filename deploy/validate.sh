#!/usr/bin/env bash
# Validates the deployment files without a cluster or a Docker engine:
#   1. docker-compose.yml parses (Debian's docker-compose 1.29: `config -q`), and its encoder
#      service is refused without the sentence encoder (LOCUS_EMBEDDER=local);
#   2. k8s/base, k8s/overlays/production and k8s/overlays/without-encoder render (kustomize v5:
#      `kubectl kustomize`, or `kustomize build` installed as below) without a warning, and so does
#      a next release (production with another image and setting), which must apply over the first;
#   3. every rendered object passes the Kubernetes API schemas (kubernetes-models), the KEDA
#      objects their documented shape, and every Locus process's environment, in both, passes
#      Locus's own configuration rules (deploy/validate-manifests.ts);
#   4. k8s/monitoring renders, its alerts pass `promtool check rules` and their unit tests
#      (k8s/monitoring/alerts.test.yaml, `promtool test rules`), its Grafana dashboard's queries
#      parse (`promtool check rules`, each as a recording rule), and so do the KEDA triggers'
#      queries, which also pass their unit tests (deploy/keda-queries.test.yaml).
# Installs docker-compose and promtool (prometheus) from Debian's packages when missing (CI runs as
# root). The kustomizations need kustomize v5 (`replacements`, `patches`): kubectl 1.27 or later
# has it built in; without one (Debian's kubectl 1.20 has kustomize v2.0.3), kustomize
# KUSTOMIZE_VERSION is built from the Go module proxy with `go install` (see below).
# Exits non-zero on the first tool that fails, or with the list of every problem found.
#
#   bash deploy/validate.sh        (or: pnpm --filter @locus/deploy validate)
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
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

# kustomize: kubectl's own when it is v5 or later, else a kustomize binary of v5 or later, else
# KUSTOMIZE_VERSION built with Go (pinned: the renderings are checked with what CI ran). KUSTOMIZE
# names a command to use instead ("kustomize build", "kubectl kustomize").
KUSTOMIZE_VERSION=v5.5.0
major() { sed -n 's/.*v\([0-9][0-9]*\)\..*/\1/p' | head -n 1; }
if [ -n "${KUSTOMIZE:-}" ]; then
  read -r -a kustomize <<<"$KUSTOMIZE"
elif command -v kubectl >/dev/null 2>&1 &&
  [ "$(kubectl version --client 2>/dev/null | grep -i '^kustomize version' | major)" -ge 5 ] 2>/dev/null; then
  kustomize=(kubectl kustomize)
elif command -v kustomize >/dev/null 2>&1 && [ "$(kustomize version 2>/dev/null | major)" -ge 5 ] 2>/dev/null; then
  kustomize=(kustomize build)
else
  if ! command -v go >/dev/null 2>&1; then
    echo "validate: no kustomize v5 (nor kubectl 1.27+), and no Go to build kustomize $KUSTOMIZE_VERSION with" >&2
    exit 1
  fi
  # A directory per version: a `go install`ed kustomize reports its version as "(devel)".
  gobin="$(go env GOPATH)/kustomize-$KUSTOMIZE_VERSION"
  if [ ! -x "$gobin/kustomize" ]; then
    echo "validate: building kustomize $KUSTOMIZE_VERSION (go install, from the Go module proxy)"
    start=$SECONDS
    GOBIN="$gobin" go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
    echo "validate: kustomize built in $((SECONDS - start)) s"
  fi
  kustomize=("$gobin/kustomize" build)
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

if [ "${kustomize[1]:-}" = kustomize ]; then
  version="$("${kustomize[0]}" version --client 2>/dev/null | sed -n 's/^Kustomize Version: //p')"
elif [ -n "${gobin:-}" ]; then
  version="$KUSTOMIZE_VERSION"
else
  version="$("${kustomize[0]}" version 2>/dev/null)"
fi
echo "== ${kustomize[*]} (kustomize $version)"
# Renders a kustomization into a file; fails on kustomize's failure, and on anything it prints
# besides (a deprecation warning: what it names goes in a coming kustomize).
build() {
  local dir="$1" to="$2"
  if ! "${kustomize[@]}" "$dir" >"$to" 2>"$out/stderr"; then
    cat "$out/stderr" >&2
    echo "validate: ${kustomize[*]} $dir failed (message above)" >&2
    exit 1
  fi
  if [ -s "$out/stderr" ]; then
    cat "$out/stderr" >&2
    echo "validate: ${kustomize[*]} $dir printed a warning (above): rewrite what it names" >&2
    exit 1
  fi
}
for dir in k8s/base k8s/overlays/production k8s/overlays/without-encoder; do
  build "$dir" "$out/$(basename "$dir").yaml"
done
echo "k8s/base, k8s/overlays/production and k8s/overlays/without-encoder render without a warning"
# The next release as the release step makes it (another version's image, by digest), with a
# changed setting besides: applied over the production overlay, it must change no immutable field
# (a Job's pod template; the checks below). The digest is a hash of this text, no image's.
mkdir -p "$out/release"  # kustomize takes a relative path to another kustomization only
cat >"$out/release/kustomization.yaml" <<EOF
resources:
  - $(realpath --relative-to="$out/release" k8s/overlays/production)
images:
  - name: registry.example.com/locus
    newTag: "1.0.1"
    digest: sha256:$(echo "locus validate.sh: the next release" | sha256sum | cut -d' ' -f1)
configMapGenerator:
  - name: locus-config
    behavior: merge
    literals:
      - LOCUS_PUBLIC_URL=https://search.example.org
EOF
build "$out/release" "$out/release.yaml"
echo "a next release renders"

echo "== alerts (promtool $(promtool --version 2>/dev/null | head -n 1 | awk '{print $3}'))"
# k8s/monitoring renders, and its alerts pass promtool's checks and their unit tests.
build k8s/monitoring "$out/monitoring.yaml"
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
  --k8s "without-encoder=$out/without-encoder.yaml" \
  --k8s "release=$out/release.yaml" \
  --second-apply "production=$out/production.yaml,$out/release.yaml"
echo "deploy: every check passed"

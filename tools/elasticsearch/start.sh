#!/usr/bin/env bash
# One Elasticsearch node on 127.0.0.1 for the test suites and the benchmarks, without Docker:
# Elastic's own distribution as its build publishes it on Maven Central
# (org.elasticsearch.distribution.integ-test-zip, pinned by version and SHA-256), run by this
# machine's Java 17. Nothing of it is copied into the repository; it is unpacked under
# LOCUS_ES_HOME on first use. docs/research/elasticsearch-from-maven.md says why this artefact.
#
#   bash tools/elasticsearch/start.sh          starts it (or finds it running), prints its URL
#   bash tools/elasticsearch/start.sh --stop   stops it
#
# Settings (environment): LOCUS_ES_PORT (9200), LOCUS_ES_HEAP (512m), LOCUS_ES_HOME
# (/var/tmp/locus-elasticsearch: the distribution, and the node's data, logs and settings under
# node/, which a start wipes: a test node keeps nothing), LOCUS_MAVEN_REPOSITORY (a mirror of Maven
# Central, same layout).
set -euo pipefail

VERSION=8.19.4
SHA256=553088b4c0f60f04d7c63da609aaeae372c483159f4fb8013599e91233aab0de
PORT=${LOCUS_ES_PORT:-9200}
HEAP=${LOCUS_ES_HEAP:-512m}
HOME_DIR=${LOCUS_ES_HOME:-/var/tmp/locus-elasticsearch}
REPOSITORY=${LOCUS_MAVEN_REPOSITORY:-https://repo1.maven.org/maven2}
URL="http://127.0.0.1:$PORT"
DIST="$HOME_DIR/elasticsearch-$VERSION"
NODE="$HOME_DIR/node"

# By its nodes' version: this distribution has no `GET /` (the rest-root module is not in it).
answers() { curl -sf "$URL/_nodes/_local?filter_path=nodes.*.version" 2>/dev/null | grep -q "\"$VERSION\""; }

stop() {
  if [ -f "$NODE/pid" ]; then
    local pid
    pid=$(cat "$NODE/pid")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    fi
    rm -f "$NODE/pid"
  fi
}

if [ "${1:-}" = "--stop" ]; then
  stop
  echo "Elasticsearch stopped"
  exit 0
fi

if answers; then
  echo "Elasticsearch $VERSION is up at $URL"
  exit 0
fi

# Java 17: the distribution has no JDK of its own (8.19 on 24 and later runs under entitlements
# instead of the Security Manager, untested here).
java_home=""
for candidate in "${LOCUS_ES_JAVA_HOME:-}" /usr/lib/jvm/java-17-openjdk-*; do
  if [ -n "$candidate" ] && [ -x "$candidate/bin/java" ]; then java_home=$candidate; break; fi
done
if [ -z "$java_home" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing openjdk-17-jre-headless"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jre-headless
    java_home=$(ls -d /usr/lib/jvm/java-17-openjdk-* | head -n 1)
  else
    echo "no Java 17 under /usr/lib/jvm (set LOCUS_ES_JAVA_HOME)" >&2
    exit 1
  fi
fi

mkdir -p "$HOME_DIR"
if [ ! -x "$DIST/bin/elasticsearch" ]; then
  zip="$HOME_DIR/elasticsearch-$VERSION.zip"
  from="$REPOSITORY/org/elasticsearch/distribution/integ-test-zip/elasticsearch/$VERSION/elasticsearch-$VERSION.zip"
  echo "fetching Elasticsearch $VERSION from $from"
  curl -sSfL --retry 3 -o "$zip.partial" "$from"
  if [ "$(sha256sum "$zip.partial" | cut -d' ' -f1)" != "$SHA256" ]; then
    rm -f "$zip.partial"
    echo "$from is not the pinned file (SHA-256 differs)" >&2
    exit 1
  fi
  rm -rf "$DIST" "$DIST.partial"
  mkdir "$DIST.partial"
  (cd "$DIST.partial" && unzip -q "$zip.partial")
  mv "$DIST.partial/elasticsearch-$VERSION" "$DIST"
  rm -rf "$DIST.partial" "$zip.partial"
fi

# A fresh node each start: its settings, data and logs under node/.
stop
rm -rf "$NODE"
mkdir -p "$NODE/data" "$NODE/logs" "$NODE/tmp"
cp -r "$DIST/config" "$NODE/config"
cat >"$NODE/config/elasticsearch.yml" <<YML
# Written by tools/elasticsearch/start.sh: one node for tests, on this machine only.
cluster.name: locus-test
node.name: locus-test-1
discovery.type: single-node
network.host: 127.0.0.1
http.port: $PORT
path.data: $NODE/data
path.logs: $NODE/logs
# No TLS or passwords: it listens on 127.0.0.1 only and holds test data.
xpack.security.enabled: false
# A test machine's disk may be fuller than a cluster's: never stop writes for it.
cluster.routing.allocation.disk.threshold_enabled: false
YML

run=(env "ES_JAVA_HOME=$java_home" "ES_PATH_CONF=$NODE/config" "ES_TMPDIR=$NODE/tmp"
  "ES_JAVA_OPTS=-Xms$HEAP -Xmx$HEAP" "HOME=$NODE"
  "$DIST/bin/elasticsearch" -d -p "$NODE/pid")
# Elasticsearch refuses to run as root: as root, the node runs as nobody, who owns node/.
if [ "$(id -u)" = 0 ]; then
  chown -R nobody:nogroup "$NODE"
  run=(runuser -u nobody -- "${run[@]}")
fi
# Its console (the start-up log, also in logs/) goes to a file: the caller gets one line.
"${run[@]}" >"$NODE/logs/start.out" 2>&1 || {
  echo "Elasticsearch did not start; its output: $NODE/logs/start.out" >&2
  tail -n 40 "$NODE/logs/start.out" >&2
  exit 1
}

for _ in $(seq 1 180); do
  if curl -sf "$URL/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null 2>&1; then
    echo "Elasticsearch $VERSION is up at $URL (heap $HEAP, data in $NODE)"
    exit 0
  fi
  sleep 1
done
echo "Elasticsearch did not come up within 180 s; its log: $NODE/logs/locus-test.log" >&2
tail -n 40 "$NODE/logs/locus-test.log" >&2 || true
exit 1

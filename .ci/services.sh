#!/usr/bin/env bash
# Makes sure the services the tests talk to are up on this machine: PostgreSQL, RabbitMQ, Redis
# and Elasticsearch on their standard local ports. Installs the first three from Debian's packages
# if they are missing, starts any that is stopped, and waits until each answers. Elasticsearch is
# Elastic's distribution from Maven Central on Java 17 (tools/elasticsearch/start.sh).
set -euo pipefail

need_install=()
compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || need_install+=(postgresql)
command -v rabbitmq-server >/dev/null 2>&1 || need_install+=(rabbitmq-server)
command -v redis-server >/dev/null 2>&1 || need_install+=(redis-server)
if [ ${#need_install[@]} -gt 0 ]; then
  echo "installing ${need_install[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_install[@]}"
fi

wait_for() { # name, seconds, command...
  local name=$1 seconds=$2
  shift 2
  for _ in $(seq 1 "$seconds"); do
    if "$@" >/dev/null 2>&1; then echo "$name is up"; return 0; fi
    sleep 1
  done
  echo "$name did not come up within ${seconds}s" >&2
  return 1
}

# Debian's cluster asks for a password over TCP (scram-sha-256) and checks the OS user on the
# socket (peer); the tests connect as postgres@127.0.0.1 with no password. This machine's cluster
# is for tests only, so local connections are trusted: pg_hba.conf is rewritten to say so (once,
# the original kept beside it) and the server reloads it.
pg_version=$(ls /etc/postgresql | sort -V | tail -n 1)
pg_hba=/etc/postgresql/$pg_version/main/pg_hba.conf
if [ ! -f "$pg_hba.locus-orig" ]; then cp "$pg_hba" "$pg_hba.locus-orig"; fi
cat >"$pg_hba" <<'HBA'
# Written by Locus's .ci/services.sh: a test machine's cluster, trusted from this machine only.
local   all          all                     trust
host    all          all    127.0.0.1/32     trust
host    all          all    ::1/128          trust
local   replication  all                     trust
host    replication  all    127.0.0.1/32     trust
host    replication  all    ::1/128          trust
HBA
if pg_isready -q -h 127.0.0.1 -p 5432; then
  pg_ctlcluster --skip-systemctl-redirect "$pg_version" main reload
else
  pg_ctlcluster --skip-systemctl-redirect "$pg_version" main start
fi
wait_for PostgreSQL 60 psql -h 127.0.0.1 -U postgres -d postgres -c "select 1"
# The tests use the database "test" (trust auth on the machine's cluster).
if ! psql -h 127.0.0.1 -U postgres -d postgres -tAc "select 1 from pg_database where datname = 'test'" | grep -q 1; then
  psql -h 127.0.0.1 -U postgres -d postgres -c "create database test"
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi
wait_for Redis 30 redis-cli -h 127.0.0.1 -p 6379 ping

if ! rabbitmq-diagnostics -q check_port_connectivity >/dev/null 2>&1; then
  if ! rabbitmq-server -detached; then echo "rabbitmq-server -detached failed; waiting for it anyway"; fi
fi
wait_for RabbitMQ 90 rabbitmq-diagnostics -q check_port_connectivity

# One Elasticsearch node on 127.0.0.1:9200 (tools/elasticsearch/start.sh: fetched from Maven Central
# and checked by SHA-256 on first use, Java 17 installed if missing, a fresh node each start).
if ! curl -sf "http://127.0.0.1:9200/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null 2>&1; then
  bash "$(dirname "$0")/../tools/elasticsearch/start.sh"
fi
wait_for Elasticsearch 60 curl -sf "http://127.0.0.1:9200/_cluster/health?wait_for_status=yellow&timeout=1s"

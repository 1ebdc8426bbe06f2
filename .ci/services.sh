#!/usr/bin/env bash
# Makes sure the services the tests talk to are up on this machine: PostgreSQL, RabbitMQ and
# Redis on their standard local ports. Installs them from Debian's packages if they are missing,
# starts any that is stopped, and waits until each answers.
set -euo pipefail

need_install=()
command -v pg_ctlcluster >/dev/null 2>&1 || need_install+=(postgresql)
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

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start
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

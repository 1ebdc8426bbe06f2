#!/usr/bin/env bash
# The secrets docker-compose.yml requires, made at random: it has no defaults for them, so a
# deployment never runs on a value that is printed in this repository.
#
#   bash deploy/compose-env.sh          writes .env beside docker-compose.yml (keeps what is there)
#   bash deploy/compose-env.sh --print  prints KEY=value lines instead (deploy/validate.sh uses it)
#
# .env is read by docker-compose and must never be committed (.gitignore has it).
set -euo pipefail
cd "$(dirname "$0")/.."

# URL-safe (they end up inside DATABASE_URL and AMQP_URL): letters, digits, - and _.
random() { head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'; }

NAMES=(POSTGRES_PASSWORD RABBITMQ_PASSWORD MINIO_ROOT_PASSWORD LOCUS_INTERNAL_SECRET LOCUS_SIGNING_SECRET)

if [ "${1:-}" = "--print" ]; then
  for name in "${NAMES[@]}"; do echo "$name=$(random)"; done
  exit 0
fi

touch .env
chmod 600 .env
for name in "${NAMES[@]}"; do
  if grep -q "^$name=" .env; then
    echo "$name: kept"
  else
    echo "$name=$(random)" >>.env
    echo "$name: made"
  fi
done
echo "wrote .env (readable by you only); docker-compose reads it from here"

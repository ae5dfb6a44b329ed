#!/usr/bin/env bash
# The HTTP end-to-end suite against a server whose activity goes Kafka -> ingester -> Cassandra
# (GUARD_ACTIVITY_PIPELINE=kafka) on the real engines of infra/local/engines.sh:
#   npm run test:e2e:pipeline
# Starts the engines (and stops them at the end if it started them), the activity ingester and
# the server, runs `vitest --project e2e` with E2E_BASE_URL, and exits with the suite's status.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
run=$$
npx tsc -b || exit 1
bash infra/local/engines.sh up >&2 || exit 1
export KAFKA_BROKERS=${KAFKA_BROKERS:-127.0.0.1:9092}
export CASSANDRA_CONTACT_POINTS=${CASSANDRA_CONTACT_POINTS:-127.0.0.1:9042}
export CASSANDRA_LOCAL_DC=${CASSANDRA_LOCAL_DC:-datacenter1}
export CASSANDRA_KEYSPACE=e2e_pipeline_$run KAFKA_ACTIVITY_TOPIC=guard.activity.e2e.$run
key=gk_e2e_pipeline_${run}_0123456789abcdef
logs=$(mktemp -d)
PORT=0 HOST=127.0.0.1 KAFKA_CONSUMER_GROUP=e2e-$run GUARD_LOG_LEVEL=warn \
  node services/activity-ingester/dist/main.js >"$logs/ingester.log" 2>&1 &
ingester=$!
GUARD_DATA_DIR=$logs/data GUARD_BOOTSTRAP_ADMIN_KEY=$key GUARD_ACTIVITY_PIPELINE=kafka \
  GUARD_ACTIVITY_SETTLE_MS=3000 GUARD_WORKERS=1 PORT=0 GUARD_LOG_LEVEL=info GUARD_ACCESS_LOG=false \
  node services/standalone/dist/main.js >"$logs/server.log" 2>&1 &
server=$!
port=
for _ in $(seq 1 100); do
  port=$(grep -o '"guard listening"' -m1 "$logs/server.log" >/dev/null && grep -o '"port":[0-9]*' -m1 "$logs/server.log" | cut -d: -f2)
  [[ -n $port ]] && break
  sleep 0.2
done
if [[ -z $port ]]; then
  echo "server did not start; log: $logs/server.log" >&2
  rc=1
else
  E2E_BASE_URL=http://127.0.0.1:$port E2E_STAFF_KEY=$key npx vitest run --project e2e
  rc=$?
fi
kill "$server" "$ingester" 2>/dev/null
wait
bash infra/local/engines.sh down >&2
echo "logs: $logs" >&2
exit $rc

#!/usr/bin/env bash
# The HTTP end-to-end suite against a distributed deployment on the real engines of
# infra/local/engines.sh:
#   npm run test:distributed
# Starts the engines (and stops them at the end if it started them), then the roles as separate
# processes: 2 API pods (ROLE=api) behind a round-robin front, 2 scorers, 1 activity ingester and
# 1 jobs worker (Temporal); runs `vitest --project e2e` with E2E_BASE_URL pointed at the front, and exits with
# the suite's status. Every run has its own keyspace, topic, consumer group, score stream and
# task queue.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
run=$$
npx tsc -b || exit 1
bash infra/local/engines.sh acquire "$run" >&2 || exit 1
eval "$(bash infra/local/engines.sh env)"
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379}
export KAFKA_BROKERS=${KAFKA_BROKERS:-127.0.0.1:9092}
export CASSANDRA_CONTACT_POINTS=${CASSANDRA_CONTACT_POINTS:-127.0.0.1:9042}
export TEMPORAL_ADDRESS=${TEMPORAL_ADDRESS:-127.0.0.1:7233}
export CASSANDRA_LOCAL_DC=${CASSANDRA_LOCAL_DC:-datacenter1}
export CASSANDRA_KEYSPACE=e2e_dist_$run KAFKA_ACTIVITY_TOPIC=guard.activity.dist.$run
export GUARD_SCORE_REQUEST_STREAM=guard:score:requests:dist:$run GUARD_JOBS_TASK_QUEUE=guard-jobs-dist-$run
export GUARD_LOG_LEVEL=info GUARD_ACCESS_LOG=false PORT=0 HOST=127.0.0.1
key=gk_e2e_dist_${run}_0123456789abcdef
logs=$(mktemp -d)
pids=()

# start NAME COMMAND...: runs a role in the background, its log in $logs/NAME.log.
start() {
  local name=$1
  shift
  "$@" >"$logs/$name.log" 2>&1 &
  pids+=($!)
}

# port_of NAME: the port a role logged it listens on ("guard listening" or {"listening": N}).
port_of() {
  local log=$logs/$1.log p=
  for _ in $(seq 1 300); do
    p=$(grep -m1 '"guard listening"\|^{"listening":' "$log" 2>/dev/null |
      grep -o '"port":[0-9]*\|"listening":[0-9]*' | grep -o '[0-9]*$')
    [[ -n $p ]] && { echo "$p"; return 0; }
    sleep 0.2
  done
  echo "$1 did not start within 60 s; log: $log" >&2
  tail -5 "$log" >&2
  return 1
}

stop_all() {
  kill "${pids[@]}" 2>/dev/null
  wait 2>/dev/null
  bash infra/local/engines.sh release "$run" >&2
  echo "logs: $logs" >&2
}
trap stop_all EXIT

start ingester env KAFKA_CONSUMER_GROUP=e2e-dist-$run node services/activity-ingester/dist/main.js
start scorer-1 env GUARD_SCORE_THREADS=1 node services/scorer/dist/main.js
start scorer-2 env GUARD_SCORE_THREADS=1 node services/scorer/dist/main.js
# The first API pod applies the migrations and makes the staff key; the second then starts too.
start api-1 env GUARD_BOOTSTRAP_ADMIN_KEY=$key GUARD_ACTIVITY_SETTLE_MS=3000 \
  node services/api/dist/distributed/main.js
api1=$(port_of api-1) || exit 1
start api-2 env GUARD_BOOTSTRAP_ADMIN_KEY=$key GUARD_ACTIVITY_SETTLE_MS=3000 \
  node services/api/dist/distributed/main.js
api2=$(port_of api-2) || exit 1
start jobs-worker node services/jobs-worker/dist/main.js
start front node scripts/distributed/round-robin.mjs 0 "http://127.0.0.1:$api1" "http://127.0.0.1:$api2"
front=$(port_of front) || exit 1

echo "distributed deployment: front :$front -> api :$api1, :$api2; logs in $logs" >&2
E2E_BASE_URL=http://127.0.0.1:$front E2E_STAFF_KEY=$key npx vitest run --project e2e "$@"

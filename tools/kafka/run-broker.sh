#!/usr/bin/env bash
# Start one Apache Kafka node (KRaft, combined broker+controller; a single-node cluster by
# default) from the jars in tools/kafka/.jars, listening on 127.0.0.1 only. For tests, fixtures
# and benchmarks.
#
#   tools/kafka/run-broker.sh --data-dir DIR [--port N] [--controller-port N]
#                             [--node-id N] [--voters ID@HOST:PORT,...]
#                             [--set key=value]... [--foreground] [--wait-secs N]
#   tools/kafka/stop-broker.sh DIR          # SIGTERM, wait for a clean shutdown
#
# Layout under DIR (created if missing; formatted on first start, reused after):
#   DIR/config/server.properties, DIR/config/log4j2.properties   written on every start
#   DIR/kafka-logs/           log.dirs: partition directories such as fixture-0/
#   DIR/metadata/             metadata.log.dir (__cluster_metadata-0)
#   DIR/broker.log            the JVM's stdout+stderr (Kafka's log4j output)
#   DIR/broker.pid            pid of the JVM while it runs
#
# Default (background) mode returns once the broker logged "Kafka Server started" and prints,
# one per line:  pid=… bootstrap=127.0.0.1:PORT controller=127.0.0.1:CPORT log_dirs=… log=…
# --foreground execs the JVM instead (stop it with SIGTERM / Ctrl-C; a caller's trap works).
# Ports default to free ephemeral ports. --node-id (default 1) and --voters
# (controller.quorum.voters, default: this node alone, NODE@127.0.0.1:CPORT) make the node one
# member of a larger quorum: tools/kafka/run-cluster.sh starts three that way. --set adds or
# overrides a server property (e.g. --set log.segment.bytes=1048576). Env: KAFKA_HEAP_OPTS
# (default -Xms256m -Xmx1g), KAFKA_JARS_DIR (default: whatever fetch-jars.sh prints),
# KAFKA_CLUSTER_ID (default: fixed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

data="" port="" cport="" node_id=1 voters="" fg=0 wait_secs=90
sets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data-dir) data="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --controller-port) cport="$2"; shift 2 ;;
    --node-id) node_id="$2"; shift 2 ;;
    --voters) voters="$2"; shift 2 ;;
    --set) sets+=("$2"); shift 2 ;;
    --foreground) fg=1; shift ;;
    --wait-secs) wait_secs="$2"; shift 2 ;;
    -h|--help) sed -n '2,26p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "run-broker.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$data" ]] || { echo "run-broker.sh: --data-dir is required" >&2; exit 2; }
mkdir -p "$data"
data="$(cd "$data" && pwd)"

if [[ -f "$data/broker.pid" ]] && kill -0 "$(cat "$data/broker.pid")" 2>/dev/null; then
  echo "run-broker.sh: a broker already runs for $data (pid $(cat "$data/broker.pid"))" >&2
  exit 1
fi

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
[[ -n "$port" ]] || port="$(free_port)"
[[ -n "$cport" ]] || cport="$(free_port)"
[[ "$port" != "$cport" ]] || { echo "run-broker.sh: port and controller port must differ" >&2; exit 2; }
[[ "$node_id" =~ ^[0-9]+$ ]] || { echo "run-broker.sh: --node-id wants a number, got $node_id" >&2; exit 2; }
[[ -n "$voters" ]] || voters="$node_id@127.0.0.1:$cport"
[[ ",$voters," == *",$node_id@127.0.0.1:$cport,"* ]] \
  || { echo "run-broker.sh: --voters $voters does not list this node ($node_id@127.0.0.1:$cport)" >&2; exit 2; }

jars="${KAFKA_JARS_DIR:-$("$here/fetch-jars.sh")}"
cp="$jars/*"
# A fixed cluster id (22 chars, base64 of a UUID) keeps meta.properties stable between runs.
cluster_id="${KAFKA_CLUSTER_ID:-ZmVycm9sb2ctZml4dHVyZQ}"

mkdir -p "$data/config" "$data/kafka-logs" "$data/metadata"
props="$data/config/server.properties"
cat >"$props" <<PROPS
# written by tools/kafka/run-broker.sh
process.roles=broker,controller
node.id=$node_id
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$data/kafka-logs
metadata.log.dir=$data/metadata
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
PROPS
for kv in "${sets[@]+"${sets[@]}"}"; do
  [[ "$kv" == *=* ]] || { echo "run-broker.sh: --set wants key=value, got $kv" >&2; exit 2; }
  # drop an earlier line for the same key, then append
  awk -v k="${kv%%=*}" 'index($0, k "=") != 1' "$props" >"$props.tmp"
  mv "$props.tmp" "$props"
  echo "$kv" >>"$props"
done

cat >"$data/config/log4j2.properties" <<'L4J'
status = warn
appender.out.type = Console
appender.out.name = STDOUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.controller.name = org.apache.kafka.controller
logger.controller.level = INFO
logger.raft.name = org.apache.kafka.raft
logger.raft.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
L4J

jvm=(java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g} -XX:+UseG1GC -Djava.awt.headless=true
     -Dlog4j2.configurationFile="$data/config/log4j2.properties" -Dfile.encoding=UTF-8 -cp "$cp")

if [[ ! -f "$data/kafka-logs/meta.properties" ]]; then
  "${jvm[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$props" --ignore-formatted \
    >"$data/format.log" 2>&1 || { cat "$data/format.log" >&2; exit 1; }
fi

if [[ $fg == 1 ]]; then
  echo "$$" >"$data/broker.pid"
  echo "pid=$$"
  echo "bootstrap=127.0.0.1:$port"
  exec "${jvm[@]}" kafka.Kafka "$props"
fi

: >"$data/broker.log"
# setsid: the broker does not get the caller's Ctrl-C / job-control signals.
setsid "${jvm[@]}" kafka.Kafka "$props" >>"$data/broker.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$data/broker.pid"

deadline=$((SECONDS + wait_secs))
until grep -q "Kafka Server started" "$data/broker.log"; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "run-broker.sh: broker exited during start-up; tail of $data/broker.log:" >&2
    tail -n 40 "$data/broker.log" >&2
    rm -f "$data/broker.pid"
    exit 1
  fi
  if (( SECONDS >= deadline )); then
    echo "run-broker.sh: broker not started after ${wait_secs}s; stopping it" >&2
    "$here/stop-broker.sh" "$data" >&2 || true
    exit 1
  fi
  sleep 0.2
done
echo "pid=$pid"
echo "bootstrap=127.0.0.1:$port"
echo "controller=127.0.0.1:$cport"
echo "log_dirs=$data/kafka-logs"
echo "log=$data/broker.log"

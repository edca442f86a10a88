#!/usr/bin/env bash
# Start an Apache Kafka KRaft cluster of N nodes (default 3) from the jars in tools/kafka/.jars,
# on 127.0.0.1 only: every node is a combined broker+controller (run-broker.sh with --node-id and
# --voters) and the N controllers form the metadata quorum. For benchmarks and tests.
#
#   tools/kafka/run-cluster.sh --data-dir DIR [--nodes N] [--set key=value]... [--wait-secs N]
#   tools/kafka/stop-cluster.sh DIR [--timeout N]     # SIGTERM to every node, clean shutdown
#
# Why combined nodes rather than N brokers and a separate controller: ferrolog's cluster runs
# a Controller in every broker (the one holding etcd's `controller` key acts), so a broker
# killed there may be the active controller too; N combined Kafka nodes have the same shape
# (a killed node may hold the quorum's leadership) with N processes, not N + 1.
#
# Layout under DIR (created if missing; each node formatted on first start, reused after):
#   DIR/node-<id>/            a run-broker.sh data dir (config/, kafka-logs/, metadata/,
#                             broker.log, broker.pid), ids 1..N
#   DIR/cluster.ports         "id port controller_port" per node, chosen on the first start and
#                             reused after (the quorum's voters must not move)
#
# Returns once every node logged "Kafka Server started" and prints, one line per node, then one
# for the cluster:
#   node=1 pid=… bootstrap=127.0.0.1:PORT controller=127.0.0.1:CPORT log=DIR/node-1/broker.log
#   bootstrap=127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3
# If a node does not start, the others are stopped and the exit status is 1.
#
# Defaults for a cluster (each overridable with --set, which is passed to every node):
# default.replication.factor=N, and the internal topics (__consumer_offsets, transactions,
# share-group state) with replication factor N and min ISR min(2, N).
# Env: as run-broker.sh (KAFKA_HEAP_OPTS, KAFKA_JARS_DIR, KAFKA_CLUSTER_ID).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

data="" nodes=3 wait_secs=120
sets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data-dir) data="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --set) sets+=("$2"); shift 2 ;;
    --wait-secs) wait_secs="$2"; shift 2 ;;
    -h|--help) sed -n '2,29p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "run-cluster.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$data" ]] || { echo "run-cluster.sh: --data-dir is required" >&2; exit 2; }
[[ "$nodes" =~ ^[1-9][0-9]*$ ]] || { echo "run-cluster.sh: --nodes wants a positive number, got $nodes" >&2; exit 2; }
mkdir -p "$data"
data="$(cd "$data" && pwd)"

# Ports: 2 per node, all bound at once so that none is handed out twice.
ports_file="$data/cluster.ports"
if [[ ! -f "$ports_file" ]]; then
  python3 - "$nodes" >"$ports_file.tmp" <<'PY'
import socket, sys
n = int(sys.argv[1])
socks = []
for _ in range(2 * n):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
ports = [s.getsockname()[1] for s in socks]
for i in range(n):
    print(i + 1, ports[2 * i], ports[2 * i + 1])
for s in socks:
    s.close()
PY
  mv "$ports_file.tmp" "$ports_file"
fi
[[ "$(wc -l <"$ports_file")" -eq "$nodes" ]] \
  || { echo "run-cluster.sh: $ports_file holds $(wc -l <"$ports_file") nodes, not $nodes (another cluster size in this dir?)" >&2; exit 2; }

ids=() port=() cport=() voters=""
while read -r id p c; do
  ids+=("$id"); port[$id]=$p; cport[$id]=$c
  voters+="${voters:+,}$id@127.0.0.1:$c"
done <"$ports_file"

min_isr=$(( nodes < 2 ? nodes : 2 ))
node_sets=(
  "default.replication.factor=$nodes"
  "offsets.topic.replication.factor=$nodes"
  "transaction.state.log.replication.factor=$nodes"
  "transaction.state.log.min.isr=$min_isr"
  "share.coordinator.state.topic.replication.factor=$nodes"
  "share.coordinator.state.topic.min.isr=$min_isr"
  "${sets[@]+"${sets[@]}"}"
)
set_args=()
for kv in "${node_sets[@]}"; do set_args+=(--set "$kv"); done

# All nodes start together: a node's start completes only once the quorum has a majority.
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
declare -A starters
for id in "${ids[@]}"; do
  "$here/run-broker.sh" --data-dir "$data/node-$id" --node-id "$id" --voters "$voters" \
    --port "${port[$id]}" --controller-port "${cport[$id]}" --wait-secs "$wait_secs" "${set_args[@]}" \
    >"$out/$id.out" 2>"$out/$id.err" &
  starters[$id]=$!
done
failed=0
for id in "${ids[@]}"; do
  if ! wait "${starters[$id]}"; then
    failed=1
    echo "run-cluster.sh: node $id did not start:" >&2
    cat "$out/$id.err" >&2
  fi
done
if (( failed )); then
  "$here/stop-cluster.sh" "$data" >&2 || true
  exit 1
fi

bootstrap=""
for id in "${ids[@]}"; do
  pid="$(sed -n 's/^pid=//p' "$out/$id.out")"
  echo "node=$id pid=$pid bootstrap=127.0.0.1:${port[$id]} controller=127.0.0.1:${cport[$id]} log=$data/node-$id/broker.log"
  bootstrap+="${bootstrap:+,}127.0.0.1:${port[$id]}"
done
echo "bootstrap=$bootstrap"

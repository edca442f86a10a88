#!/usr/bin/env bash
# Stop a broker started by run-broker.sh: SIGTERM to the pid in DIR/broker.pid, then wait for
# the JVM to exit (Kafka's shutdown hook flushes, trims the indexes and writes the clean
# shutdown marker). SIGKILL only after --timeout seconds (default 60), and then exit 1.
#   tools/kafka/stop-broker.sh DIR [--timeout N]
set -euo pipefail
data="${1:?usage: stop-broker.sh DIR [--timeout N]}"
timeout=60
[[ "${2:-}" == "--timeout" ]] && timeout="${3:?}"
pidfile="$data/broker.pid"
[[ -f "$pidfile" ]] || { echo "stop-broker.sh: no $pidfile (not running?)" >&2; exit 0; }
pid="$(cat "$pidfile")"
if ! kill -0 "$pid" 2>/dev/null; then
  rm -f "$pidfile"; echo "stop-broker.sh: pid $pid already gone" >&2; exit 0
fi
kill -TERM "$pid"
deadline=$((SECONDS + timeout))
while kill -0 "$pid" 2>/dev/null; do
  if (( SECONDS >= deadline )); then
    echo "stop-broker.sh: pid $pid still alive after ${timeout}s, sending SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$pidfile"
    exit 1
  fi
  sleep 0.2
done
rm -f "$pidfile"
echo "stopped pid=$pid"

#!/usr/bin/env bash
# Stop a cluster started by run-cluster.sh: stop-broker.sh on every node at once (SIGTERM, wait
# for a clean shutdown, SIGKILL after --timeout seconds, default 60). At once, not one by one:
# a combined node's controlled shutdown needs a quorum majority, which the last nodes of a
# one-by-one stop no longer have. Exit 1 if a node had to be killed.
#   tools/kafka/stop-cluster.sh DIR [--timeout N]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="${1:?usage: stop-cluster.sh DIR [--timeout N]}"
shift
stoppers=()
for dir in "$data"/node-*/; do
  [[ -d "$dir" ]] || continue
  "$here/stop-broker.sh" "${dir%/}" "$@" &
  stoppers+=($!)
done
status=0
for pid in "${stoppers[@]+"${stoppers[@]}"}"; do wait "$pid" || status=1; done
exit $status

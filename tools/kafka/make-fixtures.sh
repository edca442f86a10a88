#!/usr/bin/env bash
# Regenerate __test__/fixtures/kafka/ (fixture-0/, expected.json, dump-log-segments.txt) with a
# real Apache Kafka broker. Not run by CI: run it by hand, look at the diff, commit.
#
#   tools/kafka/make-fixtures.sh
#
# Steps: fetch jars -> compile FixtureProducer.java -> start a fresh single-node KRaft broker
# (run-broker.sh, in a temp dir) -> create topic `fixture` (kafka-topics, i.e. TopicCommand)
# -> FixtureProducer -> stop the broker cleanly -> copy the partition directory -> dump it with
# DumpLogSegments (dump-log.sh; must be clean) -> fixture-expected.py builds expected.json.
# What differs between two runs: the topic id (partition.metadata), the timestamps of the two
# transaction markers and hence the last segment's .timeindex and the producer snapshots
# (broker wall-clock), and the crc of those marker batches. Everything else is deterministic.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="$repo/__test__/fixtures/kafka"

# Topic configuration. segment.bytes has a 1 MiB minimum in Kafka 4.x; internal.segment.bytes
# is Kafka's own (test) topic config that sets the segment size without that minimum.
topic_configs=(
  internal.segment.bytes=16384
  index.interval.bytes=1024
  retention.ms=-1
  message.timestamp.type=CreateTime
)

jars="$("$here/fetch-jars.sh")"
kafka_version="$(ls "$jars" | sed -n 's/^kafka-clients-\(.*\)\.jar$/\1/p')"
mkdir -p "$here/.classes"
javac -cp "$jars/*" -d "$here/.classes" "$here/FixtureProducer.java"

work="$(mktemp -d /tmp/ferrolog-fixture.XXXXXX)"
cleanup() {
  "$here/stop-broker.sh" "$work/broker" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$here/run-broker.sh" --data-dir "$work/broker" >"$work/broker.out"
cat "$work/broker.out"
bootstrap="$(sed -n 's/^bootstrap=//p' "$work/broker.out")"
log4j=(-Dlog4j2.configurationFile="$here/log4j2-tools.properties")

create=(--bootstrap-server "$bootstrap" --create --topic fixture --partitions 1 --replication-factor 1)
for c in "${topic_configs[@]}"; do create+=(--config "$c"); done
java "${log4j[@]}" -cp "$jars/*" org.apache.kafka.tools.TopicCommand "${create[@]}"

java "${log4j[@]}" -Dfile.encoding=UTF-8 -cp "$here/.classes:$jars/*" \
  FixtureProducer "$bootstrap" fixture "$work/plan.jsonl"

"$here/stop-broker.sh" "$work/broker"
[[ -f "$work/broker/kafka-logs/.kafka_cleanshutdown" ]] || { echo "make-fixtures.sh: no clean shutdown marker" >&2; exit 1; }

rm -rf "$out/fixture-0"
mkdir -p "$out"
cp -a "$work/broker/kafka-logs/fixture-0" "$out/fixture-0"

# Kafka's view of the copy; relative paths so that the text does not depend on this machine.
(cd "$out" && "$here/dump-log.sh" fixture-0 >"$out/dump-log-segments.txt")
python3 "$here/fixture-expected.py" --dump "$out/dump-log-segments.txt" --plan "$work/plan.jsonl" \
  --dir "$out/fixture-0" --out "$out/expected.json" --kafka-version "$kafka_version"

# Log-dir level files, for the record (README.md quotes them).
for f in meta.properties recovery-point-offset-checkpoint replication-offset-checkpoint \
         log-start-offset-checkpoint .kafka_cleanshutdown; do
  echo "== $f"; cat "$work/broker/kafka-logs/$f"; echo
done
du -sh "$out"

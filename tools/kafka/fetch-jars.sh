#!/usr/bin/env bash
# Copy Apache Kafka's jars (and their dependencies) from Maven Central into tools/kafka/.jars/
# and print that directory. Idempotent: when the jar set for this pom.xml is already there it
# only prints the directory. Batch mode, no stdin needed (CI=true is fine).
#
#   tools/kafka/fetch-jars.sh            -> prints /abs/path/tools/kafka/.jars
#   CP="$(tools/kafka/fetch-jars.sh)/*"  -> a java -cp value
#
# Env: KAFKA_JARS_DIR overrides the target dir; FETCH_JARS_FORCE=1 re-copies.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${KAFKA_JARS_DIR:-$here/.jars}"
pom="$here/pom.xml"
stamp="$dir/.pom.sha256"

want="$(sha256sum "$pom" | cut -d' ' -f1)"
if [[ "${FETCH_JARS_FORCE:-0}" != 1 && -f "$stamp" && "$(cat "$stamp")" == "$want" ]] \
   && compgen -G "$dir/kafka-tools-*.jar" >/dev/null; then
  echo "$dir"
  exit 0
fi

command -v mvn >/dev/null || { echo "fetch-jars.sh: mvn not found (apt-get install maven)" >&2; exit 1; }
tmp="$dir.tmp.$$"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
# Maven's own chatter goes to stderr so that stdout is only the directory.
mvn -B -q -f "$pom" -Dstyle.color=never dependency:copy-dependencies -DoutputDirectory="$tmp" \
  -DincludeScope=runtime </dev/null >&2
rm -rf "$dir"
mv "$tmp" "$dir"
echo "$want" >"$stamp"
echo "$dir"

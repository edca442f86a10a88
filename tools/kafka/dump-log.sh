#!/usr/bin/env bash
# Check segment files with Apache Kafka's own DumpLogSegments and exit non-zero when it finds
# a problem.
#
#   tools/kafka/dump-log.sh [--quiet] [--no-sanity] [--] FILE_OR_DIR...
#
# Arguments are files (.log .index .timeindex .txnindex .snapshot) or partition directories
# (expanded to those files, per segment in the order log, index, timeindex, txnindex,
# snapshot). Runs (Kafka 4.x main class; in 3.x it was kafka.tools.DumpLogSegments)
#   java org.apache.kafka.tools.DumpLogSegments --deep-iteration --print-data-log --files F1,F2,..
# then, unless --no-sanity, once more with --index-sanity-check on the .index/.timeindex files
# (the check a broker runs at start-up). Kafka's stdout goes to stdout (--quiet drops it),
# Kafka's stderr and our verdict go to stderr.
# Exit: 0 clean; 1 Kafka reported a problem (listed on stderr as "dump-log.sh: PROBLEM: ...");
# 2 usage error or the jars could not be fetched.
#
# DumpLogSegments output, Kafka 4.4 (stdout; one line each; tests may parse it):
#   Dumping <file as given>
#   Log starting offset: 0                                        (.log: base offset from name)
#   baseOffset: 0 lastOffset: 0 count: 1 baseSequence: 0 lastSequence: 0 producerId: 0
#     producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: false isControl: false
#     deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000000 size: 116
#     magic: 2 compresscodec: none crc: 2898612361 isvalid: true  (one batch; one line; the
#     timestamp is the batch's maxTimestamp, labelled CreateTime or LogAppendTime; position
#     and size in bytes; crc unsigned decimal; compresscodec none|gzip|snappy|lz4|zstd)
#   | offset: 0 CreateTime: 1700000000000 keySize: 9 valueSize: 39 sequence: 0 headerKeys: []
#     key: key-00000 payload: value 0: ...                       (one record, deep iteration;
#     "key: K" left out for a null key, "payload: V" left out for a null value, both as UTF-8
#     text; headerKeys lists keys only, comma-separated; control records instead end in
#     " endTxnMarker: COMMIT coordinatorEpoch: 0" and print no key/payload)
#   offset: 37 position: 2101                                   (.index entry)
#   timestamp: 1700000037000 offset: 37                         (.timeindex entry)
#   version: 0 producerId: 5 firstOffset: 265 lastOffset: 268 lastStableOffset: 269  (.txnindex)
#   producerId: 0 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: ... (.snapshot)
#   <file> is empty.                                             (.index with no entries)
#   <file> passed sanity check.                                  (--index-sanity-check)
# Problems it reports, as Kafka 4.4.0 prints them (DumpLogSegments exits 0 for all but the
# exceptions, so this script does the judging):
#   stdout "baseOffset: ... crc: 2898612361 isvalid: false"  batch CRC-32C does not match
#          (uncompressed: records still listed; compressed: usually an exception follows)
#   stdout "Found 472 invalid bytes at the end of 00000000000000000264.log"  partial last batch
#   stderr "Mismatches in :/abs/00000000000000000000.index"      .index entry != batch lastOffset
#          "  Index offset: 40, log offset: 45"
#   stderr "Found timestamp mismatch in :/abs/00000000000000000000.timeindex"
#          "  Index timestamp: 1700000039999, log timestamp: 1700000040000"
#   stderr "Found out of order timestamp in :/abs/F.timeindex"
#          "  Index timestamp: T, Previously indexed timestamp: T2"
#   stderr "The following indexed offsets are not found in :/abs/F.timeindex"
#          "Indexed offset: 40, found log offset: 45"
#   stderr "Non-consecutive offsets in /abs/F.log" then "  A is followed by B"
#          (Kafka starts each file at -1, so "-1 is followed by <first offset>" shows up for
#          every segment whose base offset is not 0: not a problem, ignored here)
#   stderr "Exception in thread "main" <class>: <message>" + stack trace, exit 1, e.g.
#          org.apache.kafka.common.errors.CorruptRecordException: Found record size 0 smaller
#            than minimum record overhead (14) in file /abs/F.log.      (batchLength zeroed)
#          org.apache.kafka.common.InvalidRecordException: Invalid record size: -51 is
#            negative.                                 (damaged compressed batch, deep iteration)
#          org.apache.kafka.storage.internals.log.CorruptIndexException: Index file /abs/F.index
#            is corrupt, found 59 bytes which is neither positive nor a multiple of 8
#            (--index-sanity-check; likewise "Corrupt index found, index file /abs/F.index has
#            non-zero size but the last offset is 90 which is less than the base offset 106"
#            and "Corrupt time index found, time index file (/abs/F.timeindex) has non-zero
#            size but the last timestamp is 5 which is less than the first timestamp ...")
# Any other stderr line also counts as a problem.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

quiet=0 sanity=1
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quiet) quiet=1; shift ;;
    --no-sanity) sanity=0; shift ;;
    -h|--help) sed -n '2,16p' "${BASH_SOURCE[0]}"; exit 0 ;;
    --) shift; args+=("$@"); break ;;
    -*) echo "dump-log.sh: unknown option $1" >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[[ ${#args[@]} -gt 0 ]] || { echo "usage: dump-log.sh [--quiet] [--no-sanity] FILE_OR_DIR..." >&2; exit 2; }

files=()
for a in "${args[@]}"; do
  if [[ -d "$a" ]]; then
    bases=$(cd "$a" && ls -1 | sed -n 's/^\([0-9]\{20\}\)\.\(log\|index\|timeindex\|txnindex\|snapshot\)$/\1/p' | sort -u)
    for b in $bases; do
      for ext in log index timeindex txnindex snapshot; do
        [[ -f "$a/$b.$ext" ]] && files+=("${a%/}/$b.$ext")
      done
    done
  elif [[ -f "$a" ]]; then
    files+=("$a")
  else
    echo "dump-log.sh: no such file or directory: $a" >&2; exit 2
  fi
done
[[ ${#files[@]} -gt 0 ]] || { echo "dump-log.sh: no segment files in ${args[*]}" >&2; exit 2; }
for f in "${files[@]}"; do
  [[ "$f" != *,* ]] || { echo "dump-log.sh: file names with commas are not supported: $f" >&2; exit 2; }
done

jars="${KAFKA_JARS_DIR:-$("$here/fetch-jars.sh")}" || { echo "dump-log.sh: fetch-jars.sh failed" >&2; exit 2; }
java=(java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
      -Dfile.encoding=UTF-8 -Dsun.stdout.encoding=UTF-8 -Dsun.stderr.encoding=UTF-8
      -Dstdout.encoding=UTF-8 -Dstderr.encoding=UTF-8
      -Dlog4j2.configurationFile="$here/log4j2-tools.properties"
      -cp "$jars/*" org.apache.kafka.tools.DumpLogSegments)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
problems="$tmp/problems"
: >"$problems"

joined="$(IFS=,; echo "${files[*]}")"
"${java[@]}" --deep-iteration --print-data-log --files "$joined" >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $quiet == 1 ]] || cat "$tmp/out"
cat "$tmp/err" >&2
[[ $rc == 0 ]] || echo "DumpLogSegments exited with status $rc" >>"$problems"

grep -E ' isvalid: false$' "$tmp/out" | sed 's/^/invalid batch: /' >>"$problems"
grep -E '^Found [0-9]+ invalid bytes at the end of ' "$tmp/out" >>"$problems"

# stderr: known report blocks; drop the harmless "-1 is followed by <first offset>" of every file.
python3 - "$tmp/err" >>"$problems" <<'PY'
import re, sys, os
lines = open(sys.argv[1], encoding="utf-8", errors="replace").read().splitlines()
cur = None   # (kind, file)
for ln in lines:
    m = re.match(r"^Non-consecutive offsets in (.*)$", ln)
    if m:
        cur = ("nonconsec", m.group(1)); continue
    if cur and cur[0] == "nonconsec":
        m = re.match(r"^  (-?\d+) is followed by (-?\d+)$", ln)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            name = os.path.basename(cur[1])
            base = int(name.split(".")[0]) if name.split(".")[0].isdigit() else 0
            if a == -1 and b >= base:
                continue
            print(f"non-consecutive offsets in {cur[1]}: {a} is followed by {b}")
            continue
    cur = None
    if ln.startswith("Ignoring unknown file "):
        continue
    if ln.startswith("\tat ") or re.match(r"^\t\.\.\. \d+ more$", ln):
        continue   # stack trace frames: the exception line itself is reported
    if ln.strip():
        print(ln)
PY

if [[ $sanity == 1 ]]; then
  idx=()
  for f in "${files[@]}"; do [[ "$f" == *.index || "$f" == *.timeindex ]] && idx+=("$f"); done
  if [[ ${#idx[@]} -gt 0 ]]; then
    joined="$(IFS=,; echo "${idx[*]}")"
    "${java[@]}" --index-sanity-check --files "$joined" >"$tmp/out2" 2>"$tmp/err2"
    rc=$?
    [[ $quiet == 1 ]] || grep -v '^Dumping ' "$tmp/out2"
    cat "$tmp/err2" >&2
    if [[ $rc != 0 ]]; then
      echo "index sanity check failed (status $rc): $(head -n 1 "$tmp/err2")" >>"$problems"
    fi
  fi
fi

if [[ -s "$problems" ]]; then
  sed 's/^/dump-log.sh: PROBLEM: /' "$problems" >&2
  exit 1
fi
echo "dump-log.sh: OK (${#files[@]} files)" >&2
exit 0

#!/usr/bin/env python3
"""Build __test__/fixtures/kafka/expected.json from Kafka's own view of the fixture files.

    fixture-expected.py --dump DUMP.txt --plan PLAN.jsonl --dir FIXTURE_DIR --out expected.json

DUMP.txt is the stdout of `tools/kafka/dump-log.sh FIXTURE_DIR` (DumpLogSegments with
--deep-iteration --print-data-log, plus the index sanity check). Every batch, record, index,
time index and transaction index entry in expected.json comes from it. DumpLogSegments prints
header keys but not header values, so those (and only those) come from PLAN.jsonl, the
producer's log of what it sent (tools/kafka/FixtureProducer.java); every field that both know
(offset, timestamp, key, value, header keys, compression, transaction outcome) must agree, or
this script fails. Python 3.11 standard library only.
"""
import argparse
import json
import os
import re
import sys

BATCH_RE = re.compile(
    r"^baseOffset: (?P<baseOffset>-?\d+) lastOffset: (?P<lastOffset>-?\d+) count: (?P<count>\S+)"
    r" baseSequence: (?P<baseSequence>-?\d+) lastSequence: (?P<lastSequence>-?\d+)"
    r" producerId: (?P<producerId>-?\d+) producerEpoch: (?P<producerEpoch>-?\d+)"
    r" partitionLeaderEpoch: (?P<partitionLeaderEpoch>-?\d+)"
    r" isTransactional: (?P<isTransactional>true|false) isControl: (?P<isControl>true|false)"
    r" deleteHorizonMs: (?P<deleteHorizonMs>\S+) position: (?P<position>\d+)"
    r" (?P<timestampType>CreateTime|LogAppendTime|NoTimestampType): (?P<maxTimestamp>-?\d+)"
    r" size: (?P<size>\d+) magic: (?P<magic>\d+) compresscodec: (?P<compression>\w+)"
    r" crc: (?P<crc>\d+) isvalid: (?P<isvalid>true|false)$"
)
RECORD_RE = re.compile(
    r"^\| offset: (?P<offset>\d+) (?P<timestampType>CreateTime|LogAppendTime|NoTimestampType):"
    r" (?P<timestamp>-?\d+) keySize: (?P<keySize>-?\d+) valueSize: (?P<valueSize>-?\d+)"
    r" sequence: (?P<sequence>-?\d+) headerKeys: \[(?P<headerKeys>[^\]]*)\](?P<rest>.*)$"
)
CONTROL_RE = re.compile(r"^ endTxnMarker: (?P<type>\w+) coordinatorEpoch: (?P<coordinatorEpoch>-?\d+)$")
INDEX_RE = re.compile(r"^offset: (?P<offset>\d+) position: (?P<position>\d+)$")
TIMEINDEX_RE = re.compile(r"^timestamp: (?P<timestamp>-?\d+) offset: (?P<offset>\d+)$")
TXNINDEX_RE = re.compile(
    r"^version: (?P<version>\d+) producerId: (?P<producerId>-?\d+) firstOffset: (?P<firstOffset>\d+)"
    r" lastOffset: (?P<lastOffset>\d+) lastStableOffset: (?P<lastStableOffset>\d+)$"
)


def fail(msg):
    sys.exit(f"fixture-expected.py: {msg}")


def ints(d, *names):
    return {k: int(v) if k in names else v for k, v in d.items()}


def take_utf8(rest, label, size, lineno):
    """rest starts with ' <label>: ' followed by `size` UTF-8 bytes; return (text, remainder)."""
    prefix = f" {label}: "
    if not rest.startswith(prefix):
        fail(f"line {lineno}: expected {prefix!r} in {rest[:60]!r}")
    raw = rest[len(prefix):].encode("utf-8")
    if len(raw) < size:
        fail(f"line {lineno}: {label} shorter than its size {size}")
    return raw[:size].decode("utf-8"), raw[size:].decode("utf-8")


def parse_dump(path):
    segments = {}          # base offset -> segment dict
    batches, records = [], []
    cur_file = cur_kind = None
    cur_batch = None
    sanity = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if line.startswith("Dumping "):
                cur_file = os.path.basename(line[len("Dumping "):])
                stem, _, cur_kind = cur_file.partition(".")
                base = int(stem)
                seg = segments.setdefault(base, {"baseOffset": base, "log": None, "index": [],
                                                 "timeindex": [], "txnindex": [], "files": []})
                seg["files"].append(cur_file)
                if cur_kind == "log":
                    seg["log"] = cur_file
                cur_batch = None
                continue
            if line.endswith(" passed sanity check."):
                sanity[os.path.basename(line[: -len(" passed sanity check.")])] = True
                continue
            if cur_kind is None:
                fail(f"line {lineno}: output before the first 'Dumping' line: {line!r}")
            seg = segments[int(cur_file.split(".")[0])]
            if cur_kind == "log":
                if line.startswith("Log starting offset: "):
                    continue
                m = BATCH_RE.match(line)
                if m:
                    b = m.groupdict()
                    if b["isvalid"] != "true":
                        fail(f"line {lineno}: invalid batch in {cur_file}")
                    cur_batch = {
                        "segment": cur_file,
                        "baseOffset": int(b["baseOffset"]), "lastOffset": int(b["lastOffset"]),
                        "count": int(b["count"]), "position": int(b["position"]), "size": int(b["size"]),
                        "compression": b["compression"], "magic": int(b["magic"]), "crc": int(b["crc"]),
                        "timestampType": b["timestampType"], "maxTimestamp": int(b["maxTimestamp"]),
                        "producerId": int(b["producerId"]), "producerEpoch": int(b["producerEpoch"]),
                        "baseSequence": int(b["baseSequence"]), "lastSequence": int(b["lastSequence"]),
                        "partitionLeaderEpoch": int(b["partitionLeaderEpoch"]),
                        "isTransactional": b["isTransactional"] == "true",
                        "isControl": b["isControl"] == "true",
                        "deleteHorizonMs": b["deleteHorizonMs"],
                    }
                    batches.append(cur_batch)
                    continue
                m = RECORD_RE.match(line)
                if m:
                    if cur_batch is None:
                        fail(f"line {lineno}: record before any batch")
                    r = m.groupdict()
                    key_size, value_size = int(r["keySize"]), int(r["valueSize"])
                    rec = {
                        "offset": int(r["offset"]), "timestamp": int(r["timestamp"]),
                        "timestampType": r["timestampType"],
                        "key": None, "value": None, "headers": [],
                        "headerKeys": [k for k in r["headerKeys"].split(",") if k != ""],
                        "keySize": key_size, "valueSize": value_size, "sequence": int(r["sequence"]),
                        "compression": cur_batch["compression"], "batchBaseOffset": cur_batch["baseOffset"],
                        "segment": cur_file, "control": None, "transaction": None,
                    }
                    rest = r["rest"]
                    if cur_batch["isControl"]:
                        c = CONTROL_RE.match(rest)
                        if not c:
                            fail(f"line {lineno}: unknown control record {rest!r}")
                        rec["control"] = {"type": c["type"], "coordinatorEpoch": int(c["coordinatorEpoch"])}
                    else:
                        if key_size >= 0:
                            rec["key"], rest = take_utf8(rest, "key", key_size, lineno)
                        if value_size >= 0:
                            rec["value"], rest = take_utf8(rest, "payload", value_size, lineno)
                        if rest:
                            fail(f"line {lineno}: unparsed tail {rest!r}")
                    records.append(rec)
                    continue
            elif cur_kind == "index":
                m = INDEX_RE.match(line)
                if m:
                    seg["index"].append({"offset": int(m["offset"]), "position": int(m["position"])})
                    continue
                if line.endswith(" is empty."):
                    continue
            elif cur_kind == "timeindex":
                m = TIMEINDEX_RE.match(line)
                if m:
                    seg["timeindex"].append({"timestamp": int(m["timestamp"]), "offset": int(m["offset"])})
                    continue
            elif cur_kind == "txnindex":
                m = TXNINDEX_RE.match(line)
                if m:
                    seg["txnindex"].append({k: int(v) for k, v in m.groupdict().items()})
                    continue
            elif cur_kind == "snapshot":
                if line.startswith("producerId: "):
                    continue   # producer state snapshots: listed as files only
            fail(f"line {lineno}: unexpected line for a .{cur_kind} file: {line!r}")
    return segments, batches, records, sanity


def to_json(out):
    """Pretty JSON with one line per segment, batch and record (diff-friendly, compact)."""
    one = lambda v: json.dumps(v, ensure_ascii=False)
    parts = []
    for k, v in out.items():
        if isinstance(v, list) and v and isinstance(v[0], dict):
            body = ",\n".join("  " + one(e) for e in v)
            parts.append(f" {one(k)}: [\n{body}\n ]")
        else:
            parts.append(f" {one(k)}: {one(v)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--dir", required=True, help="the fixture partition directory")
    ap.add_argument("--out", required=True)
    ap.add_argument("--kafka-version", required=True)
    a = ap.parse_args()

    segments, batches, records, sanity = parse_dump(a.dump)

    # Kafka's view must be self-consistent: offsets dense and increasing, batch counts right.
    for i, r in enumerate(records):
        if i and r["offset"] != records[i - 1]["offset"] + 1:
            fail(f"offset {records[i - 1]['offset']} is followed by {r['offset']}")
    for b in batches:
        n = sum(1 for r in records if r["batchBaseOffset"] == b["baseOffset"])
        if n != b["count"] or b["lastOffset"] - b["baseOffset"] + 1 != n:
            fail(f"batch {b['baseOffset']}: count {b['count']} but {n} records")

    # Transaction outcome, from Kafka's view: transactional data records are "aborted" when a
    # .txnindex entry of their producer covers them, else "committed".
    aborted = [t for s in segments.values() for t in s["txnindex"]]
    by_base = {b["baseOffset"]: b for b in batches}
    for r in records:
        b = by_base[r["batchBaseOffset"]]
        if b["isTransactional"] and not b["isControl"]:
            hit = any(t["producerId"] == b["producerId"] and t["firstOffset"] <= r["offset"] <= t["lastOffset"]
                      for t in aborted)
            r["transaction"] = "aborted" if hit else "committed"

    # Header values from the producer's plan; everything else cross-checked.
    plan = {}
    with open(a.plan, encoding="utf-8") as fh:
        for line in fh:
            p = json.loads(line)
            plan[p["offset"]] = p
    data_records = [r for r in records if r["control"] is None]
    if sorted(plan) != [r["offset"] for r in data_records]:
        fail("the plan's offsets differ from the data records DumpLogSegments shows")
    for r in data_records:
        p = plan[r["offset"]]
        for field in ("timestamp", "key", "value", "compression", "transaction"):
            if p[field] != r[field]:
                fail(f"offset {r['offset']}: {field} is {r[field]!r} in the log, {p[field]!r} in the plan")
        if [h["key"] for h in p["headers"]] != r["headerKeys"]:
            fail(f"offset {r['offset']}: header keys {r['headerKeys']} in the log, {p['headers']} in the plan")
        r["headers"] = [{"key": h["key"], "value": h["value"]} for h in p["headers"]]
    for r in records:
        del r["headerKeys"]

    # Segments: files present, sizes from the directory, sanity results.
    present = sorted(f for f in os.listdir(a.dir) if not f.startswith("."))
    segs = []
    for base in sorted(segments):
        s = segments[base]
        if s["log"] is None:
            continue   # e.g. the producer snapshot at the log end offset: in "files" only
        s["logSizeBytes"] = os.path.getsize(os.path.join(a.dir, s["log"])) if s["log"] else None
        s["batchCount"] = sum(1 for b in batches if b["segment"] == s["log"])
        # --index-sanity-check said "passed" for each .index/.timeindex of the segment
        s["indexSane"] = all(sanity.get(f, False) for f in s["files"] if f.endswith((".index", ".timeindex")))
        s["files"] = sorted(s["files"])
        segs.append(s)

    last = batches[-1]
    out = {
        "about": (
            "Kafka's own view of fixture-0/ (DumpLogSegments --deep-iteration --print-data-log, "
            "Kafka " + a.kafka_version + "); header values from the producer's plan. key/value: UTF-8 "
            "text, null = null key / null value (tombstone). compression: of the batch the record is in. "
            "control: commit/abort marker (key/value then null; keySize/valueSize are the marker's). "
            "transaction: null, 'committed' or 'aborted'. Timestamps in ms. position/size in bytes. "
            "index/timeindex: the entries Kafka wrote; txnindex: aborted transactions. "
            "See README.md."
        ),
        "kafkaVersion": a.kafka_version,
        "topic": "fixture",
        "partition": 0,
        "files": present,
        "logStartOffset": batches[0]["baseOffset"],
        "logEndOffset": last["lastOffset"] + 1,
        "recordCount": len(records),
        "dataRecordCount": len(data_records),
        "segments": segs,
        "batches": batches,
        "records": records,
    }
    with open(a.out, "w", encoding="utf-8") as fh:
        fh.write(to_json(out))
    print(f"fixture-expected.py: {len(segs)} segments, {len(batches)} batches, {len(records)} records -> {a.out}")


if __name__ == "__main__":
    main()

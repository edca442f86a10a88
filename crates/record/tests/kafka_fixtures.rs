//! The segment files a real Kafka 4.4 broker wrote (`__test__/fixtures/kafka/fixture-0/`, see its
//! README.md) read back exactly as Kafka's DumpLogSegments saw them (`expected.json`): every
//! batch header, every record, every codec, the transaction markers. Uncompressed batches are
//! also rebuilt with `BatchBuilder` and must come out byte for byte as Kafka wrote them.
use std::fs;
use std::path::PathBuf;

use serde_json::Value;

use ferrolog_record::{
    decode_batch, end_txn_marker_batch, validate_records, BatchBuilder, BatchIter, Compression,
    DecodedBatch, EndTransactionMarker, Header,
};

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../__test__/fixtures/kafka")
}

fn expected() -> Value {
    let path = fixture_dir().join("expected.json");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// (segment file name, position, decoded batch, raw bytes) for every batch of every segment.
fn read_all_batches(expected: &Value) -> Vec<(String, usize, DecodedBatch, Vec<u8>)> {
    let mut all = Vec::new();
    for segment in expected["segments"].as_array().unwrap() {
        let name = segment["log"].as_str().unwrap();
        let bytes = fs::read(fixture_dir().join("fixture-0").join(name)).unwrap();
        let mut iter = BatchIter::new(&bytes).verify_crc();
        let mut count = 0;
        for item in iter.by_ref() {
            let (pos, header) = item.unwrap_or_else(|e| panic!("{name}: {e}"));
            let raw = &bytes[pos..pos + header.size_in_bytes()];
            let batch = decode_batch(raw).unwrap_or_else(|e| panic!("{name} at {pos}: {e}"));
            assert_eq!(batch.header, header);
            all.push((name.to_string(), pos, batch, raw.to_vec()));
            count += 1;
        }
        assert_eq!(
            iter.whole_bytes(),
            bytes.len(),
            "{name}: every byte is a whole batch"
        );
        assert_eq!(count, uint(segment, "batchCount") as usize, "{name}");
        assert_eq!(bytes.len() as u64, uint(segment, "logSizeBytes"), "{name}");
    }
    all
}

fn text(v: &Value) -> Option<&[u8]> {
    v.as_str().map(str::as_bytes)
}

/// The batch's records built again with `BatchBuilder` and `codec`, with its header's offsets,
/// timestamps and producer fields.
fn rebuild(batch: &DecodedBatch, codec: Compression) -> Vec<u8> {
    let h = &batch.header;
    let mut b = BatchBuilder::new(codec, None, h.base_offset, None)
        .producer(h.producer_id, h.producer_epoch, h.base_sequence)
        .transactional(h.is_transactional())
        .partition_leader_epoch(h.partition_leader_epoch);
    for r in &batch.records {
        b.append(
            r.timestamp(h.base_timestamp),
            r.key.as_deref(),
            r.value.as_deref(),
            &r.headers,
        )
        .unwrap();
    }
    b.build().unwrap()
}

/// The integer field `field` of an expected-JSON object.
fn int(v: &Value, field: &str) -> i64 {
    v[field].as_i64().unwrap()
}

fn uint(v: &Value, field: &str) -> u64 {
    v[field].as_u64().unwrap()
}

#[test]
fn every_batch_header_matches_kafka() {
    let expected = expected();
    let batches = read_all_batches(&expected);
    let want = expected["batches"].as_array().unwrap();
    assert_eq!(batches.len(), want.len());
    for ((segment, pos, batch, _), w) in batches.iter().zip(want) {
        let h = &batch.header;
        let at = format!("{segment} at {pos}");
        assert_eq!(segment, w["segment"].as_str().unwrap(), "{at}");
        assert_eq!(*pos as u64, uint(w, "position"), "{at}");
        assert_eq!(h.size_in_bytes() as u64, uint(w, "size"), "{at}");
        assert_eq!(h.base_offset, int(w, "baseOffset"), "{at}");
        assert_eq!(h.last_offset(), int(w, "lastOffset"), "{at}");
        assert_eq!(h.records_count as i64, int(w, "count"), "{at}");
        assert_eq!(
            batch.compression().unwrap().name(),
            w["compression"].as_str().unwrap(),
            "{at}"
        );
        assert_eq!(h.magic as i64, int(w, "magic"), "{at}");
        assert_eq!(h.crc as u64, uint(w, "crc"), "{at}");
        let ts_type = if h.is_log_append_time() {
            "LogAppendTime"
        } else {
            "CreateTime"
        };
        assert_eq!(ts_type, w["timestampType"].as_str().unwrap(), "{at}");
        assert_eq!(h.max_timestamp, int(w, "maxTimestamp"), "{at}");
        assert_eq!(h.producer_id, int(w, "producerId"), "{at}");
        assert_eq!(h.producer_epoch as i64, int(w, "producerEpoch"), "{at}");
        assert_eq!(h.base_sequence as i64, int(w, "baseSequence"), "{at}");
        assert_eq!(
            h.partition_leader_epoch as i64,
            int(w, "partitionLeaderEpoch"),
            "{at}"
        );
        assert_eq!(
            h.is_transactional(),
            w["isTransactional"].as_bool().unwrap(),
            "{at}"
        );
        assert_eq!(h.is_control(), w["isControl"].as_bool().unwrap(), "{at}");
    }
    // All five codecs are in the fixture.
    for codec in Compression::ALL {
        assert!(
            batches
                .iter()
                .any(|(_, _, b, _)| b.compression().unwrap() == codec),
            "{}",
            codec.name()
        );
    }
}

#[test]
fn every_record_matches_kafka() {
    let expected = expected();
    let batches = read_all_batches(&expected);
    let want = expected["records"].as_array().unwrap();
    let mut n = 0;
    for (segment, _, batch, raw) in &batches {
        let h = &batch.header;
        validate_records(raw, h)
            .unwrap_or_else(|e| panic!("{segment} batch {}: {e}", h.base_offset));
        for r in &batch.records {
            let w = &want[n];
            n += 1;
            let offset = r.offset(h.base_offset);
            let at = format!("offset {offset}");
            assert_eq!(offset, int(w, "offset"), "{at}");
            assert_eq!(h.base_offset, int(w, "batchBaseOffset"), "{at}");
            assert_eq!(segment, w["segment"].as_str().unwrap(), "{at}");
            let timestamp = if h.is_log_append_time() {
                h.max_timestamp
            } else {
                r.timestamp(h.base_timestamp)
            };
            assert_eq!(timestamp, int(w, "timestamp"), "{at}");
            let sequence = if h.base_sequence < 0 {
                -1
            } else {
                h.base_sequence + r.offset_delta
            };
            assert_eq!(sequence as i64, int(w, "sequence"), "{at}");
            assert_eq!(
                r.key.as_ref().map_or(-1, |k| k.len() as i64),
                int(w, "keySize"),
                "{at}"
            );
            assert_eq!(
                r.value.as_ref().map_or(-1, |v| v.len() as i64),
                int(w, "valueSize"),
                "{at}"
            );
            if h.is_control() {
                let marker =
                    EndTransactionMarker::parse(r.key.as_deref().unwrap(), r.value.as_deref())
                        .unwrap();
                let control = &w["control"];
                assert_eq!(
                    format!("{:?}", marker.control_type).to_uppercase(),
                    control["type"].as_str().unwrap(),
                    "{at}"
                );
                assert_eq!(
                    marker.coordinator_epoch as i64,
                    int(control, "coordinatorEpoch"),
                    "{at}"
                );
                continue;
            }
            assert!(w["control"].is_null(), "{at}");
            assert_eq!(r.key.as_deref(), text(&w["key"]), "{at}");
            assert_eq!(r.value.as_deref(), text(&w["value"]), "{at}");
            let headers: Vec<Header> = w["headers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|hv| Header::new(hv["key"].as_str().unwrap(), text(&hv["value"])))
                .collect();
            assert_eq!(r.headers, headers, "{at}");
        }
    }
    assert_eq!(n, want.len());
    assert_eq!(n as u64, uint(&expected, "recordCount"));
}

#[test]
fn uncompressed_batches_rebuild_byte_for_byte() {
    let expected = expected();
    let mut rebuilt = 0;
    for (segment, pos, batch, raw) in read_all_batches(&expected) {
        let h = &batch.header;
        if batch.compression().unwrap() != Compression::None {
            continue;
        }
        let bytes = if h.is_control() {
            let r = &batch.records[0];
            let marker =
                EndTransactionMarker::parse(r.key.as_deref().unwrap(), r.value.as_deref()).unwrap();
            end_txn_marker_batch(
                h.base_offset,
                h.base_timestamp,
                h.partition_leader_epoch,
                h.producer_id,
                h.producer_epoch,
                &marker,
            )
            .unwrap()
        } else {
            rebuild(&batch, Compression::None)
        };
        assert_eq!(bytes, raw, "{segment} at {pos}");
        rebuilt += 1;
    }
    assert!(rebuilt >= 8, "{rebuilt} uncompressed batches");
}

#[test]
fn compressed_batches_survive_our_recompression() {
    // Rebuilding a compressed batch with our codecs gives other compressed bytes than Java's
    // libraries, but the same records and the same header apart from size and CRC.
    let expected = expected();
    for (segment, pos, batch, _) in read_all_batches(&expected) {
        let h = &batch.header;
        let codec = batch.compression().unwrap();
        if codec == Compression::None || h.is_control() {
            continue;
        }
        let again = decode_batch(&rebuild(&batch, codec)).unwrap();
        assert_eq!(again.records, batch.records, "{segment} at {pos}");
        let strip = |mut h: ferrolog_record::BatchHeader| {
            h.batch_length = 0;
            h.crc = 0;
            h
        };
        assert_eq!(strip(again.header), strip(*h), "{segment} at {pos}");
    }
}

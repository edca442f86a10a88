use std::fs;

use ferrolog_record::batch::{update_crc, RECORDS_COUNT_OFFSET};
use ferrolog_record::{validate_batch, BatchIter};
use tempfile::TempDir;

use super::*;
use crate::config::TimestampType;
use crate::leader_epoch::{EpochEntry, LEADER_EPOCH_CHECKPOINT_FILE};
use crate::log::{LeaderBatches, LeaderChecks};
use crate::test_util::batch_in_epoch;

fn log_bytes(log: &Log) -> Vec<u8> {
    fs::read(&log.segments()[0].file).unwrap()
}

fn headers(bytes: &[u8]) -> Vec<ferrolog_record::BatchHeader> {
    BatchIter::new(bytes).map(|b| b.unwrap().1).collect()
}

#[test]
fn leader_append_assigns_offsets_and_stamps_the_epoch_with_valid_crcs() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    let mut buf = batch(0, 3, 20, 1_000);
    buf.extend(batch(0, 2, 20, 2_000));
    let info = log.append_as_leader(&buf, 7, 0).unwrap();
    assert_eq!(
        (
            info.first_offset,
            info.last_offset,
            info.record_count,
            info.batch_count
        ),
        (0, 4, 5, 2)
    );
    assert_eq!(
        (
            info.max_timestamp,
            info.offset_of_max_timestamp,
            info.log_append_time
        ),
        (2_001, 4, -1)
    );
    assert_eq!(info.valid_bytes as usize, buf.len());
    assert_eq!(log.log_end_offset(), 5);
    let bytes = log_bytes(&log);
    let stamped: Vec<_> = headers(&bytes)
        .iter()
        .map(|h| (h.base_offset, h.partition_leader_epoch))
        .collect();
    assert_eq!(stamped, [(0, 7), (3, 7)]);
    for (position, header) in BatchIter::new(&bytes).map(Result::unwrap) {
        validate_batch(&bytes[position..position + header.size_in_bytes()]).unwrap();
    }
    assert_eq!(
        log.epoch_entries(),
        [EpochEntry {
            epoch: 7,
            start_offset: 0
        }]
    );
    // The append does not write the checkpoint (no fsync on the appending thread): the flush
    // does, once the batches are durable.
    let path = dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE);
    assert_eq!(fs::read_to_string(&path).unwrap_or_default(), "");
    log.flush().unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "0\n1\n7 0\n");
}

#[test]
fn a_roll_flush_writes_only_the_epochs_that_start_below_it() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    let path = dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE);
    log.append_as_leader(&batch(0, 3, 20, 1_000), 1, 0).unwrap();
    // A roll at 3 hands out the flush of offsets 0..3; epochs 2 and 3 start after it.
    log.roll().unwrap();
    log.append_as_leader(&batch(0, 3, 20, 1_000), 2, 0).unwrap();
    log.append_as_leader(&batch(0, 3, 20, 1_000), 3, 0).unwrap();
    let job = log.take_roll_flush().expect("a roll flush");
    assert_eq!(job.log_end_offset(), 3);
    let flushed = job.run().unwrap();
    log.complete_flush(flushed);
    assert_eq!(log.recovery_point(), 3);
    assert_eq!(fs::read_to_string(&path).unwrap(), "0\n1\n1 0\n");
    assert!(log.epochs.is_behind());
    log.flush().unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "0\n3\n1 0\n2 3\n3 6\n");
    assert!(!log.epochs.is_behind());
}

#[test]
fn a_new_leader_epoch_is_recorded_at_its_first_offset() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.append_as_leader(&batch(0, 3, 20, 1_000), 1, 0).unwrap();
    log.append_as_leader(&batch(0, 3, 20, 1_000), 1, 0).unwrap();
    log.append_as_leader(&batch(0, 3, 20, 1_000), 4, 0).unwrap();
    let entries: Vec<_> = log
        .epoch_entries()
        .iter()
        .map(|e| (e.epoch, e.start_offset))
        .collect();
    assert_eq!(entries, [(1, 0), (4, 6)]);
    assert_eq!(log.latest_epoch(), Some(4));
    let end = log.end_offset_for_epoch(1).unwrap();
    assert_eq!((end.epoch, end.end_offset), (1, 6));
    assert_eq!(log.end_offset_for_epoch(4).unwrap().end_offset, 9);
    assert!(log.end_offset_for_epoch(9).is_none());
}

#[test]
fn leader_append_refuses_a_corrupt_batch_without_writing_anything() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    let mut bad = batch(0, 2, 20, 1_000);
    let last = bad.len() - 1;
    bad[last] ^= 0xFF;
    let mut buf = batch(0, 3, 20, 1_000);
    buf.extend(&bad);
    let err = log.append_as_leader(&buf, 0, 0).unwrap_err();
    assert_eq!(err.code(), "CORRUPT_RECORD");
    assert_eq!(log.log_end_offset(), 0);
    assert!(log_bytes(&log).is_empty());
}

#[test]
fn leader_append_refuses_records_that_do_not_match_the_header() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    let mut bad = batch(0, 2, 20, 1_000);
    bad[RECORDS_COUNT_OFFSET..RECORDS_COUNT_OFFSET + 4].copy_from_slice(&1i32.to_be_bytes());
    update_crc(&mut bad);
    assert_eq!(
        log.append_as_leader(&bad, 0, 0).unwrap_err().code(),
        "INVALID_RECORD"
    );
    assert!(log_bytes(&log).is_empty());
}

#[test]
fn leader_append_refuses_trailing_bytes_and_oversized_batches() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            max_message_bytes: 100,
            ..config()
        },
    );
    let mut buf = batch(0, 1, 10, 1_000);
    buf.extend([0u8; 5]);
    assert_eq!(
        log.append_as_leader(&buf, 0, 0).unwrap_err().code(),
        "CORRUPT_RECORD"
    );
    let big = batch(0, 3, 50, 1_000);
    let err = log.append_as_leader(&big, 0, 0).unwrap_err();
    assert_eq!(err.code(), "RECORD_TOO_LARGE");
    assert!(err.to_string().contains("max.message.bytes 100"), "{err}");
    assert_eq!(log.log_end_offset(), 0);
}

#[test]
fn log_append_time_stamps_the_batch_and_recomputes_its_crc() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            message_timestamp_type: TimestampType::LogAppendTime,
            ..config()
        },
    );
    let info = log
        .append_as_leader(&batch(0, 2, 20, 1_000), 0, 55_555)
        .unwrap();
    assert_eq!((info.log_append_time, info.max_timestamp), (55_555, 55_555));
    let bytes = log_bytes(&log);
    let header = validate_batch(&bytes).unwrap();
    assert!(header.is_log_append_time());
    assert_eq!(
        (header.max_timestamp, header.base_timestamp),
        (55_555, 1_000)
    );
}

#[test]
fn an_empty_append_changes_nothing() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    let info = log.append_as_leader(&[], 0, 0).unwrap();
    assert_eq!(
        (info.first_offset, info.batch_count, info.valid_bytes),
        (-1, 0, 0)
    );
    assert_eq!(log.log_end_offset(), 0);
}

#[test]
fn follower_append_keeps_offsets_and_epochs() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    let mut buf = batch_in_epoch(0, 3, 2);
    buf.extend(batch_in_epoch(3, 2, 5));
    let info = log.append_as_follower(&buf).unwrap();
    assert_eq!((info.first_offset, info.last_offset), (0, 4));
    assert_eq!(log_bytes(&log), buf);
    let entries: Vec<_> = log
        .epoch_entries()
        .iter()
        .map(|e| (e.epoch, e.start_offset))
        .collect();
    assert_eq!(entries, [(2, 0), (5, 3)]);
}

#[test]
fn follower_append_refuses_gaps_and_overlaps() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.append_as_follower(&batch_in_epoch(0, 3, 0)).unwrap();
    let gap = log
        .append_as_follower(&batch_in_epoch(4, 1, 0))
        .unwrap_err();
    assert_eq!(gap.code(), "UNEXPECTED_APPEND_OFFSET");
    assert!(
        gap.to_string()
            .contains("expected a batch at offset 3, found 4"),
        "{gap}"
    );
    assert_eq!(
        log.append_as_follower(&batch_in_epoch(2, 1, 0))
            .unwrap_err()
            .code(),
        "UNEXPECTED_APPEND_OFFSET"
    );
    let mut not_contiguous = batch_in_epoch(3, 2, 0);
    not_contiguous.extend(batch_in_epoch(6, 1, 0));
    assert_eq!(
        log.append_as_follower(&not_contiguous).unwrap_err().code(),
        "UNEXPECTED_APPEND_OFFSET"
    );
    assert_eq!(log.log_end_offset(), 3);
}

#[test]
fn follower_append_checks_crcs_and_leaves_out_a_partial_tail() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    let mut corrupt = batch_in_epoch(0, 2, 0);
    let last = corrupt.len() - 1;
    corrupt[last] ^= 1;
    assert_eq!(
        log.append_as_follower(&corrupt).unwrap_err().code(),
        "CORRUPT_RECORD"
    );
    let whole = batch_in_epoch(0, 2, 0);
    let mut buf = whole.clone();
    buf.extend(&batch_in_epoch(2, 2, 0)[..30]);
    let info = log.append_as_follower(&buf).unwrap();
    assert_eq!(
        (info.valid_bytes as usize, log.log_end_offset()),
        (whole.len(), 2)
    );
}

#[test]
fn flush_messages_moves_the_recovery_point_with_appends() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            flush_messages: 4,
            ..config()
        },
    );
    append(&mut log, 1, 3);
    assert_eq!(log.recovery_point(), 0);
    append(&mut log, 1, 3);
    assert_eq!(log.recovery_point(), 6);
}

#[test]
fn appends_after_close_fail_with_log_closed() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.close().unwrap();
    log.close().unwrap();
    let err = log.append_as_leader(&batch(0, 1, 1, 0), 0, 0).unwrap_err();
    assert_eq!(err.code(), "LOG_CLOSED");
}

#[test]
fn checked_leader_batches_append_as_append_as_leader_does_and_only_at_the_max_they_were_checked_for(
) {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.append_as_leader(&batch(0, 2, 20, 1_000), 0, 0).unwrap();
    // Checked without the log (as the binding's worker does), then appended from the LEO.
    let checked = LeaderBatches::check(batch(0, 3, 20, 2_000), log.leader_checks()).unwrap();
    let info = log.append_checked_as_leader(checked, 4, 0).unwrap();
    assert_eq!(
        (info.first_offset, info.last_offset, info.batch_count),
        (2, 4, 1)
    );
    assert_eq!(log.latest_epoch(), Some(4));
    let stored = headers(&log_bytes(&log));
    assert_eq!(
        (stored[1].base_offset, stored[1].partition_leader_epoch),
        (2, 4)
    );
    // Refused by the checks as by append_as_leader.
    let err = LeaderBatches::check(batch(0, 3, 50, 1_000), LeaderChecks::max_message_bytes(100))
        .err()
        .unwrap();
    assert_eq!(err.code(), "RECORD_TOO_LARGE");
    // Checked against another max.message.bytes than the log's now: refused, nothing written.
    let stale = LeaderBatches::check(
        batch(0, 1, 10, 3_000),
        LeaderChecks::max_message_bytes(1 << 16),
    )
    .unwrap();
    let err = log.append_checked_as_leader(stale, 4, 0).unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert_eq!(log.log_end_offset(), 5);
    let again = LeaderBatches::check(
        LeaderBatches::check(
            batch(0, 1, 10, 3_000),
            LeaderChecks::max_message_bytes(1 << 16),
        )
        .unwrap()
        .into_bytes(),
        log.leader_checks(),
    )
    .unwrap();
    assert_eq!(
        log.append_checked_as_leader(again, 4, 0)
            .unwrap()
            .first_offset,
        5
    );
}

#[test]
fn a_compacted_log_refuses_records_without_a_key_as_kafkas_log_validator_does() {
    use ferrolog_record::{BatchBuilder, Compression};
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            compact: true,
            ..config()
        },
    );
    log.append_as_leader(&batch(0, 3, 20, 1_000), 0, 0).unwrap();
    for compression in [Compression::None, Compression::Lz4] {
        let mut b = BatchBuilder::new(compression, None, 0, None);
        b.append(1_000, Some(b"k"), Some(b"v"), &[]).unwrap();
        b.append(1_001, None, Some(b"no key"), &[]).unwrap();
        let err = log.append_as_leader(&b.build().unwrap(), 0, 0).unwrap_err();
        assert_eq!(err.code(), "INVALID_RECORD", "{compression:?}: {err}");
    }
    assert_eq!(log.log_end_offset(), 3);
    // The same batch on a log that is not compacted, and as a follower's copy, is accepted.
    log.update_config(config()).unwrap();
    log.append_as_leader(&batch_in_epoch(0, 2, 0), 0, 0)
        .unwrap();
    assert_eq!(log.log_end_offset(), 5);
}

#[test]
fn a_small_compressed_batch_of_records_larger_than_max_message_bytes_is_appended_as_kafka_does() {
    use ferrolog_record::{BatchBuilder, Compression};
    let dir = TempDir::new().unwrap();
    // Kafka's default max.message.bytes; each record alone is larger.
    let mut log = open(&dir, config());
    assert_eq!(log.config().max_message_bytes, 1024 * 1024 + 12);
    let zeros = vec![0u8; 1 << 20];
    let mut b = BatchBuilder::new(Compression::Gzip, None, 0, None);
    for i in 0..3 {
        b.append(1_000 + i, None, Some(&zeros), &[]).unwrap();
    }
    let bytes = b.build().unwrap();
    assert!(bytes.len() < 8 << 10, "{} bytes", bytes.len());
    let info = log.append_as_leader(&bytes, 0, 0).unwrap();
    assert_eq!((info.first_offset, info.last_offset), (0, 2));
    // A batch whose records inflate past the bound is still refused, nothing appended.
    let mut bomb = BatchBuilder::new(Compression::Zstd, None, 0, None);
    bomb.append(0, None, Some(&vec![0u8; 101 << 20]), &[])
        .unwrap();
    let err = log
        .append_as_leader(&bomb.build().unwrap(), 0, 0)
        .unwrap_err();
    assert_eq!(err.code(), "RECORD_TOO_LARGE", "{err}");
    assert_eq!(log.log_end_offset(), 3);
}

#[test]
fn records_a_compacted_log_refuses_are_all_named_with_kafkas_messages_and_nothing_is_appended() {
    use ferrolog_record::{BatchBuilder, Compression};
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("events-3");
    std::fs::create_dir_all(&path).unwrap();
    let mut log = open_with(
        &path,
        LogConfig {
            compact: true,
            ..config()
        },
        0,
        0,
        false,
    );
    let mut b = BatchBuilder::new(Compression::Zstd, None, 0, None);
    for i in 0..100 {
        let key = (i % 10 != 7).then_some(&b"k"[..]);
        b.append(1_000 + i, key, Some(b"v"), &[]).unwrap();
    }
    let err = log
        .append_as_leader(&b.build().unwrap(), 0, 2_000)
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_RECORD");
    let named = err.record_errors();
    assert_eq!(
        named.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        (0..10).map(|i| i * 10 + 7).collect::<Vec<_>>()
    );
    assert_eq!(
        named[9].1,
        "Compacted topic cannot accept message without key in topic partition events-3"
    );
    assert!(
        err.to_string()
            .starts_with("One or more records have been rejected due to 10 record errors in total"),
        "{err}"
    );
    assert_eq!(log.log_end_offset(), 0);
}

#[test]
fn create_time_records_outside_the_logs_timestamp_window_are_invalid_timestamp() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            message_timestamp_before_max_ms: 1_000,
            message_timestamp_after_max_ms: 1_000,
            ..config()
        },
    );
    let now = 1_700_000_000_000;
    // Kafka 4's default after.max.ms is an hour: a record a day ahead is refused by default too.
    let err = log
        .append_as_leader(&batch(0, 2, 10, now - 5_000), 0, now)
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_TIMESTAMP");
    assert_eq!(
        err.to_string(),
        "One or more records have been rejected due to invalid timestamp"
    );
    assert_eq!(err.record_errors().len(), 2);
    log.append_as_leader(&batch(0, 2, 10, now - 500), 0, now)
        .unwrap();
    log.update_config(LogConfig {
        message_timestamp_type: TimestampType::LogAppendTime,
        ..log.config().clone()
    })
    .unwrap();
    log.append_as_leader(&batch(0, 2, 10, now - 5_000), 0, now)
        .unwrap();
    log.update_config(config()).unwrap();
    let err = log
        .append_as_leader(&batch(0, 1, 10, now + 24 * 3_600_000), 0, now)
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_TIMESTAMP");
    assert_eq!(log.log_end_offset(), 4);
}

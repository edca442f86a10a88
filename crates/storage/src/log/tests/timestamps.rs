use ferrolog_record::Compression;
use tempfile::TempDir;

use super::*;
use crate::log::read::{EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP};
use crate::test_util::batch_with;

fn found(log: &Log, ts: i64) -> Option<(i64, i64, i32)> {
    log.fetch_offset_by_timestamp(ts)
        .unwrap()
        .map(|t| (t.offset, t.timestamp, t.leader_epoch))
}

/// Two segments: [0, 3) timestamps 100, 300, 200 in epoch 1; [3, 6) 400, 350, 500 in epoch 2.
fn two_segments(dir: &TempDir) -> Log {
    let mut log = open(
        dir,
        LogConfig {
            index_interval_bytes: 0,
            ..config()
        },
    );
    log.append_as_leader(&batch_with(Compression::None, 0, &[100, 300, 200], 5), 1, 0)
        .unwrap();
    log.roll().unwrap();
    log.append_as_leader(&batch_with(Compression::Lz4, 0, &[400, 350, 500], 5), 2, 0)
        .unwrap();
    log.update_high_watermark(6);
    log
}

#[test]
fn earliest_and_latest_are_the_log_bounds_with_their_epochs() {
    let dir = TempDir::new().unwrap();
    let log = two_segments(&dir);
    assert_eq!(found(&log, EARLIEST_TIMESTAMP), Some((0, -1, 1)));
    assert_eq!(found(&log, LATEST_TIMESTAMP), Some((6, -1, 2)));
}

#[test]
fn a_timestamp_finds_the_first_record_at_or_after_it() {
    let dir = TempDir::new().unwrap();
    let log = two_segments(&dir);
    assert_eq!(found(&log, 0), Some((0, 100, 1)));
    assert_eq!(found(&log, 250), Some((1, 300, 1)));
    assert_eq!(found(&log, 301), Some((3, 400, 2)));
    assert_eq!(found(&log, 360), Some((3, 400, 2)));
    assert_eq!(found(&log, 401), Some((5, 500, 2)));
    assert_eq!(found(&log, 501), None);
}

#[test]
fn max_timestamp_finds_the_first_record_carrying_it() {
    let dir = TempDir::new().unwrap();
    let log = two_segments(&dir);
    assert_eq!(found(&log, MAX_TIMESTAMP), Some((5, 500, 2)));
    assert_eq!(
        found(&log, -7),
        None,
        "unknown special timestamps find nothing"
    );
    assert_eq!(
        found(&log, -4),
        Some((0, -1, 1)),
        "earliest local is the log start"
    );
}

#[test]
fn records_below_the_log_start_offset_are_skipped() {
    let dir = TempDir::new().unwrap();
    let mut log = two_segments(&dir);
    log.maybe_increment_log_start_offset(1).unwrap();
    assert_eq!(found(&log, 0), Some((1, 300, 1)));
    assert_eq!(found(&log, EARLIEST_TIMESTAMP), Some((1, -1, 1)));
}

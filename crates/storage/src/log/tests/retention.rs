use tempfile::TempDir;

use super::*;
use crate::fetch::FetchIsolation::LogEnd;
use crate::test_util::batch_in_epoch;

fn bases(log: &Log) -> Vec<i64> {
    log.segments().iter().map(|s| s.base_offset).collect()
}

/// Segments [0, 4), [4, 8), [8, 12) of equal size and an empty active one at 12.
fn three_segments(dir: &TempDir, config: LogConfig) -> Log {
    let mut log = open(dir, config);
    for _ in 0..3 {
        append(&mut log, 2, 2);
        log.roll().unwrap();
    }
    log
}

#[test]
fn retention_by_size_deletes_the_oldest_segments_past_retention_bytes() {
    let dir = TempDir::new().unwrap();
    let mut log = three_segments(&dir, config());
    let size = log.segments()[0].size as i64;
    log.config.retention_bytes = size + 1;
    assert_eq!(log.delete_old_segments(0).unwrap(), 1);
    assert_eq!(bases(&log), [4, 8, 12]);
    assert_eq!(log.log_start_offset(), 4);
    assert!(!dir.path().join("00000000000000000000.log").exists());
    assert!(!dir.path().join("00000000000000000000.index").exists());
    log.config.retention_bytes = size;
    assert_eq!(log.delete_old_segments(0).unwrap(), 1);
    assert_eq!(bases(&log), [8, 12]);
}

#[test]
fn retention_by_time_uses_each_segments_largest_timestamp() {
    let dir = TempDir::new().unwrap();
    let mut log = three_segments(
        &dir,
        LogConfig {
            retention_ms: 100,
            ..config()
        },
    );
    let newest_of_first = log.segments[&0].largest_timestamp().unwrap();
    assert_eq!(log.delete_old_segments(newest_of_first + 100).unwrap(), 0);
    assert_eq!(log.delete_old_segments(newest_of_first + 101).unwrap(), 1);
    assert_eq!(bases(&log), [4, 8, 12]);
    assert_eq!(
        log.delete_old_segments(i64::MAX / 2).unwrap(),
        2,
        "never the active segment"
    );
    assert_eq!((bases(&log), log.log_start_offset()), (vec![12], 12));
}

#[test]
fn retention_never_passes_the_high_watermark() {
    let dir = TempDir::new().unwrap();
    let mut log = three_segments(
        &dir,
        LogConfig {
            retention_ms: 0,
            ..config()
        },
    );
    log.update_high_watermark(7);
    assert_eq!(log.delete_old_segments(i64::MAX / 2).unwrap(), 1);
    assert_eq!(bases(&log), [4, 8, 12]);
}

#[test]
fn deleting_records_raises_the_log_start_offset_and_frees_segments() {
    let dir = TempDir::new().unwrap();
    let mut log = three_segments(&dir, config());
    log.maybe_increment_log_start_offset(9).unwrap();
    assert_eq!(log.log_start_offset(), 9);
    log.maybe_increment_log_start_offset(5).unwrap();
    assert_eq!(log.log_start_offset(), 9, "never lowered");
    assert_eq!(log.delete_old_segments(0).unwrap(), 2);
    assert_eq!((bases(&log), log.log_start_offset()), (vec![8, 12], 9));
    let err = log.maybe_increment_log_start_offset(13).unwrap_err();
    assert_eq!(err.code(), "OFFSET_OUT_OF_RANGE");
}

#[test]
fn raising_the_log_start_offset_moves_the_first_epoch() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.append_as_follower(&batch_in_epoch(0, 3, 1)).unwrap();
    log.append_as_follower(&batch_in_epoch(3, 3, 2)).unwrap();
    assert_eq!(
        log.maybe_increment_log_start_offset(4).unwrap_err().code(),
        "OFFSET_OUT_OF_RANGE"
    );
    log.update_high_watermark(6);
    log.maybe_increment_log_start_offset(4).unwrap();
    let entries: Vec<_> = log
        .epoch_entries()
        .iter()
        .map(|e| (e.epoch, e.start_offset))
        .collect();
    assert_eq!(entries, [(2, 4)]);
}

#[test]
fn truncate_to_deletes_later_segments_and_cuts_the_floor_one() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.append_as_follower(&batch_in_epoch(0, 2, 1)).unwrap();
    log.append_as_follower(&batch_in_epoch(2, 2, 1)).unwrap();
    log.roll().unwrap();
    log.append_as_follower(&batch_in_epoch(4, 2, 3)).unwrap();
    log.append_as_follower(&batch_in_epoch(6, 2, 3)).unwrap();
    assert_eq!(log.high_watermark(), 0);
    log.update_high_watermark(8);
    log.flush().unwrap();
    log.truncate_to(2).unwrap();
    assert_eq!(
        (
            log.log_end_offset(),
            log.high_watermark(),
            log.recovery_point()
        ),
        (2, 2, 2)
    );
    assert_eq!(bases(&log), [0]);
    assert!(!dir.path().join("00000000000000000004.log").exists());
    assert_eq!(log.epoch_entries().len(), 1);
    assert_eq!(
        log.segments()[0].size as usize,
        batch_in_epoch(0, 2, 1).len()
    );
    // The log takes appends again where it was cut, in the same segment.
    log.append_as_follower(&batch_in_epoch(2, 1, 4)).unwrap();
    assert_eq!((log.log_end_offset(), bases(&log)), (3, vec![0]));
    log.truncate_to(100).unwrap();
    assert_eq!(
        log.log_end_offset(),
        3,
        "truncating past the end does nothing"
    );
}

#[test]
fn truncate_to_inside_a_batch_drops_the_whole_batch() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 3, 4);
    log.truncate_to(6).unwrap();
    assert_eq!(log.log_end_offset(), 4);
}

#[test]
fn truncate_fully_and_start_at_empties_the_log() {
    let dir = TempDir::new().unwrap();
    let mut log = three_segments(&dir, config());
    log.truncate_fully_and_start_at(100).unwrap();
    assert_eq!(
        (
            log.log_start_offset(),
            log.log_end_offset(),
            log.high_watermark()
        ),
        (100, 100, 100)
    );
    assert_eq!(bases(&log), [100]);
    assert!(log.epoch_entries().is_empty());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names.len(),
        4,
        "{names:?}: the new segment's three files and the checkpoint"
    );
    append(&mut log, 1, 2);
    assert_eq!(log.log_end_offset(), 102);
    // Truncating below the first segment starts the log over too.
    log.truncate_to(50).unwrap();
    assert_eq!(
        (log.log_start_offset(), log.log_end_offset(), bases(&log)),
        (50, 50, vec![50])
    );
}

/// Segments [0, 4), [4, 8) and an active one [8, 12) holding two batches, all committed.
fn three_segments_active_not_empty(dir: &TempDir, config: LogConfig) -> Log {
    let mut log = open(dir, config);
    for i in 0..3 {
        if i > 0 {
            log.roll().unwrap();
        }
        append(&mut log, 2, 2);
    }
    log
}

fn file_names(dir: &TempDir) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn retention_by_time_deletes_the_active_segment_too_rolling_an_empty_one_at_the_leo() {
    let dir = TempDir::new().unwrap();
    let config = LogConfig {
        retention_ms: 100,
        ..config()
    };
    let mut log = three_segments_active_not_empty(&dir, config.clone());
    assert_eq!(bases(&log), [0, 4, 8]);
    assert_eq!(log.delete_old_segments(i64::MAX / 2).unwrap(), 3);
    assert_eq!(bases(&log), [12]);
    assert_eq!(log.segments()[0].size, 0);
    assert_eq!(
        (
            log.log_start_offset(),
            log.log_end_offset(),
            log.high_watermark(),
            log.recovery_point()
        ),
        (12, 12, 12, 12)
    );
    let epochs: Vec<_> = log
        .epoch_entries()
        .iter()
        .map(|e| (e.epoch, e.start_offset))
        .collect();
    assert_eq!(epochs, [(0, 12)]);
    assert_eq!(
        file_names(&dir),
        [
            "00000000000000000012.index",
            "00000000000000000012.log",
            // The roll at the LEO wrote the producer snapshot there, as Kafka's roll does.
            "00000000000000000012.snapshot",
            "00000000000000000012.timeindex",
            "leader-epoch-checkpoint",
        ]
    );
    assert_eq!(
        log.delete_old_segments(i64::MAX / 2).unwrap(),
        0,
        "the new active segment is empty"
    );
    log.close().unwrap();

    // The files alone say where the log starts: reopen with a stale start offset of 0.
    let mut log = open_with(dir.path(), config, 0, 0, true);
    assert_eq!(bases(&log), [12]);
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (12, 12));
    append(&mut log, 1, 3);
    assert_eq!(log.log_end_offset(), 15);
    let batches = log.read_batches(12, 1_000_000, LogEnd).unwrap();
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].header.base_offset, 12);
    assert_eq!(
        log.read_batches(11, 1_000_000, LogEnd).unwrap_err().code(),
        "OFFSET_OUT_OF_RANGE"
    );
}

#[test]
fn retention_by_size_reaches_into_the_active_segment_only_at_zero_bytes() {
    let dir = TempDir::new().unwrap();
    let mut log = three_segments_active_not_empty(&dir, config());
    let active_size = log.segments()[2].size as i64;
    log.config.retention_bytes = active_size;
    assert_eq!(
        log.delete_old_segments(0).unwrap(),
        2,
        "what stays holds retention.bytes"
    );
    assert_eq!((bases(&log), log.log_start_offset()), (vec![8], 8));
    log.config.retention_bytes = 0;
    assert_eq!(log.delete_old_segments(0).unwrap(), 1);
    assert_eq!((bases(&log), log.log_start_offset()), (vec![12], 12));
    assert!(!dir.path().join("00000000000000000008.log").exists());
    append(&mut log, 1, 2);
    assert_eq!(log.log_end_offset(), 14);
}

#[test]
fn retention_keeps_the_active_segment_while_the_high_watermark_is_below_the_leo() {
    let dir = TempDir::new().unwrap();
    let mut log = three_segments_active_not_empty(
        &dir,
        LogConfig {
            retention_ms: 0,
            retention_bytes: 0,
            ..config()
        },
    );
    log.update_high_watermark(11);
    assert_eq!(log.delete_old_segments(i64::MAX / 2).unwrap(), 2);
    assert_eq!((bases(&log), log.log_start_offset()), (vec![8], 8));
    log.update_high_watermark(12);
    assert_eq!(log.delete_old_segments(i64::MAX / 2).unwrap(), 1);
    assert_eq!((bases(&log), log.log_start_offset()), (vec![12], 12));
}

#[test]
fn retention_never_deletes_an_empty_active_segment() {
    let dir = TempDir::new().unwrap();
    let config = LogConfig {
        retention_ms: 0,
        retention_bytes: 0,
        ..config()
    };
    let mut log = open(&dir, config.clone());
    assert_eq!(log.delete_old_segments(i64::MAX / 2).unwrap(), 0);
    assert_eq!(bases(&log), [0]);
    drop(log);
    let dir = TempDir::new().unwrap();
    let mut log = three_segments(&dir, config);
    assert_eq!(log.delete_old_segments(i64::MAX / 2).unwrap(), 3);
    assert_eq!((bases(&log), log.log_start_offset()), (vec![12], 12));
    assert_eq!(log.delete_old_segments(i64::MAX / 2).unwrap(), 0);
}

#[test]
fn the_log_start_offset_rule_never_deletes_the_active_segment() {
    let dir = TempDir::new().unwrap();
    let mut log = three_segments_active_not_empty(&dir, config());
    log.maybe_increment_log_start_offset(12).unwrap();
    assert_eq!(log.delete_old_segments(0).unwrap(), 2);
    assert_eq!((bases(&log), log.log_start_offset()), (vec![8], 12));
}

use std::fs;

use ferrolog_record::Compression;
use tempfile::TempDir;

use super::*;
use crate::index::offset_index::OFFSET_INDEX_ENTRY_SIZE;
use crate::index::time_index::TIME_INDEX_ENTRY_SIZE;
use crate::segment::{file_name, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX};
use crate::test_util::batch_with;

fn bases(log: &Log) -> Vec<i64> {
    log.segments().iter().map(|s| s.base_offset).collect()
}

#[test]
fn rolls_when_a_batch_would_pass_segment_bytes() {
    let dir = TempDir::new().unwrap();
    let size = batch(0, 2, 20, 0).len() as i32;
    let mut log = open(
        &dir,
        LogConfig {
            segment_bytes: 3 * size,
            ..config()
        },
    );
    append(&mut log, 7, 2);
    assert_eq!(bases(&log), [0, 6, 12]);
    assert!(log.segments().iter().all(|s| s.size as i32 <= 3 * size));
    assert_eq!(
        log.segments()[0].file,
        dir.path().join("00000000000000000000.log")
    );
    assert_eq!(
        log.segments()[2].file,
        dir.path().join("00000000000000000012.log")
    );
}

#[test]
fn a_batch_larger_than_segment_bytes_gets_a_segment_of_its_own() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            segment_bytes: 50,
            ..config()
        },
    );
    append(&mut log, 3, 2);
    assert_eq!(bases(&log), [0, 2, 4]);
}

#[test]
fn rolls_when_the_offset_index_is_full() {
    let dir = TempDir::new().unwrap();
    // Three offset index entries fit; with no timestamps the time index stays empty.
    let mut log = open(
        &dir,
        LogConfig {
            segment_index_bytes: 24,
            index_interval_bytes: 0,
            ..config()
        },
    );
    for _ in 0..6 {
        log.append_as_leader(&batch_with(Compression::None, 0, &[-1], 10), 0, 0)
            .unwrap();
    }
    // Batch 1 is never indexed, batches 2-4 are; the index is then full.
    assert_eq!(bases(&log), [0, 4]);
}

#[test]
fn rolls_when_the_time_index_is_full() {
    let dir = TempDir::new().unwrap();
    // Two time index entries fit, one is kept for the closing entry.
    let mut log = open(
        &dir,
        LogConfig {
            segment_index_bytes: 24,
            index_interval_bytes: 0,
            ..config()
        },
    );
    append(&mut log, 5, 1);
    assert_eq!(bases(&log), [0, 2, 4]);
}

#[test]
fn rolls_when_segment_ms_passed_since_the_first_append() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            segment_ms: 100,
            ..config()
        },
    );
    log.append_as_leader(&batch(0, 1, 5, 0), 0, 1_000).unwrap();
    log.append_as_leader(&batch(0, 1, 5, 0), 0, 1_100).unwrap();
    assert_eq!(bases(&log), [0]);
    log.append_as_leader(&batch(0, 1, 5, 0), 0, 1_101).unwrap();
    assert_eq!(bases(&log), [0, 2]);
}

#[test]
fn a_manual_roll_starts_a_segment_at_the_log_end_unless_the_active_one_is_empty() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.roll().unwrap();
    assert_eq!(bases(&log), [0]);
    append(&mut log, 1, 3);
    log.roll().unwrap();
    log.roll().unwrap();
    assert_eq!(bases(&log), [0, 3]);
}

fn index_lengths(dir: &TempDir, base: i64) -> (u64, u64) {
    let len = |suffix| {
        fs::metadata(dir.path().join(file_name(base, suffix)))
            .unwrap()
            .len()
    };
    (len(INDEX_FILE_SUFFIX), len(TIME_INDEX_FILE_SUFFIX))
}

#[test]
fn indexes_are_trimmed_on_roll_and_on_close() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            index_interval_bytes: 0,
            ..config()
        },
    );
    append(&mut log, 4, 2);
    assert_eq!(
        index_lengths(&dir, 0),
        (4096 / 8 * 8, 4096 / 12 * 12),
        "preallocated while active"
    );
    log.roll().unwrap();
    let offsets = log.segments[&0].offset_index().entries() as u64;
    let times = log.segments[&0].time_index().entries() as u64;
    // Batches 2-4 are indexed; the max timestamp is already the last time entry, so closing adds
    // none.
    assert_eq!((offsets, times), (3, 3));
    assert_eq!(
        index_lengths(&dir, 0),
        (
            offsets * OFFSET_INDEX_ENTRY_SIZE as u64,
            times * TIME_INDEX_ENTRY_SIZE as u64
        )
    );
    append(&mut log, 2, 2);
    let offsets = log.segments[&8].offset_index().entries() as u64;
    let times = log.segments[&8].time_index().entries() as u64;
    log.close().unwrap();
    assert_eq!((offsets, times), (1, 1));
    assert_eq!(
        index_lengths(&dir, 8),
        (
            offsets * OFFSET_INDEX_ENTRY_SIZE as u64,
            times * TIME_INDEX_ENTRY_SIZE as u64
        )
    );
}

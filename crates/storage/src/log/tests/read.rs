use ferrolog_record::BatchIter;
use tempfile::TempDir;

use super::*;
use crate::fetch::FetchIsolation::{HighWatermark, LogEnd};

/// Positions and sizes of the batches of the first segment.
fn batch_spans(log: &Log) -> Vec<(u32, u32)> {
    let bytes = std::fs::read(&log.segments()[0].file).unwrap();
    BatchIter::new(&bytes)
        .map(|b| b.unwrap())
        .map(|(p, h)| (p as u32, h.size_in_bytes() as u32))
        .collect()
}

#[test]
fn a_fetch_offset_inside_a_batch_returns_the_whole_batch() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 3, 5);
    let spans = batch_spans(&log);
    let info = log.read(7, 1_000_000, LogEnd, false).unwrap();
    assert_eq!(info.records.position, spans[1].0);
    assert_eq!(info.records.size, spans[1].1 + spans[2].1);
    assert_eq!(info.fetch_offset_metadata.message_offset, 7);
    assert_eq!(
        info.fetch_offset_metadata.relative_position_in_segment,
        spans[1].0
    );
    let batches = log.read_batches(7, 1, LogEnd).unwrap();
    assert_eq!(batches.len(), 1, "at least one batch, whatever maxBytes");
    assert_eq!(batches[0].header.base_offset, 5);
    assert_eq!(batches[0].records.len(), 5);
}

#[test]
fn a_high_watermark_read_stops_before_the_high_watermark() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 3, 5);
    assert_eq!(log.update_high_watermark(10), 10);
    let spans = batch_spans(&log);
    let info = log.read(0, 1_000_000, HighWatermark, false).unwrap();
    assert_eq!(
        (info.records.position, info.records.size),
        (0, spans[0].1 + spans[1].1)
    );
    let at_hw = log.read(10, 1_000_000, HighWatermark, true).unwrap();
    assert_eq!(at_hw.records.size, 0);
    assert_eq!(at_hw.fetch_offset_metadata.message_offset, 10);
    assert_eq!(
        at_hw.fetch_offset_metadata.relative_position_in_segment,
        spans[2].0
    );
    let past_hw = log.read(12, 1_000_000, HighWatermark, true).unwrap();
    assert_eq!(
        (
            past_hw.records.size,
            past_hw.fetch_offset_metadata.message_offset
        ),
        (0, 12)
    );
    assert_eq!(
        past_hw.fetch_offset_metadata.relative_position_in_segment,
        spans[2].0
    );
    assert_eq!(
        log.read(12, 1_000_000, LogEnd, false).unwrap().records.size,
        spans[2].1
    );
}

#[test]
fn the_high_watermark_is_clamped_and_the_lso_follows_it() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 1, 5);
    assert_eq!(
        log.high_watermark(),
        5,
        "a freshly opened log is all committed"
    );
    assert_eq!(log.update_high_watermark(99), 5);
    assert_eq!(log.update_high_watermark(-3), 0);
    assert_eq!(log.last_stable_offset(), 0);
}

#[test]
fn min_one_message_returns_one_batch_larger_than_max_bytes() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 2, 5);
    let first = batch_spans(&log)[0].1;
    let info = log.read(0, 10, LogEnd, true).unwrap();
    assert_eq!(
        (info.records.size, info.first_entry_incomplete),
        (first, false)
    );
    let info = log.read(0, 10, LogEnd, false).unwrap();
    assert_eq!((info.records.size, info.first_entry_incomplete), (10, true));
    let info = log.read(0, 0, LogEnd, false).unwrap();
    assert_eq!((info.records.size, info.first_entry_incomplete), (0, false));
    assert_eq!(
        log.read_slice(&log.read(0, 10, LogEnd, false).unwrap().records)
            .unwrap()
            .len(),
        10
    );
}

#[test]
fn offsets_outside_the_log_are_out_of_range() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 2, 5);
    let err = log.read(11, 100, LogEnd, false).unwrap_err();
    assert_eq!(err.code(), "OFFSET_OUT_OF_RANGE");
    assert!(
        err.to_string()
            .contains("offset 11 is outside the log's [0, 10]"),
        "{err}"
    );
    log.maybe_increment_log_start_offset(3).unwrap();
    assert_eq!(
        log.read(2, 100, LogEnd, false).unwrap_err().code(),
        "OFFSET_OUT_OF_RANGE"
    );
    assert_eq!(log.read(3, 100, LogEnd, false).unwrap().records.position, 0);
    assert_eq!(
        log.read(0, -1, LogEnd, false).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn a_read_at_the_log_end_is_empty_at_the_end_of_the_active_segment() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 2, 5);
    let info = log.read(10, 100, LogEnd, true).unwrap();
    let active = log.segments().pop().unwrap();
    assert_eq!(info.records.size, 0);
    assert_eq!(info.records.file, active.file);
    assert_eq!(
        info.fetch_offset_metadata.relative_position_in_segment,
        active.size
    );
}

#[test]
fn reads_cross_into_later_segments() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 2, 5);
    log.roll().unwrap();
    append(&mut log, 2, 5);
    let segments = log.segments();
    let info = log.read(10, 1_000_000, LogEnd, false).unwrap();
    assert_eq!(
        (info.records.file.clone(), info.records.position),
        (segments[1].file.clone(), 0)
    );
    assert_eq!(info.fetch_offset_metadata.segment_base_offset, 10);
    // From the first segment a read stops at its end, even with room to spare.
    let info = log.read(5, 1_000_000, LogEnd, false).unwrap();
    assert_eq!(info.records.file, segments[0].file);
    let bytes = log.read_slice(&info.records).unwrap();
    assert_eq!(BatchIter::new(&bytes).count(), 1);
    // With the high watermark inside the second segment, that segment's read stops there.
    log.update_high_watermark(15);
    let info = log.read(10, 1_000_000, HighWatermark, false).unwrap();
    assert_eq!(
        BatchIter::new(&log.read_slice(&info.records).unwrap()).count(),
        1
    );
}

#[test]
fn read_batches_crosses_segments_and_keeps_whole_batches_within_max_bytes() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 2, 5);
    log.roll().unwrap();
    append(&mut log, 2, 5);
    let size = batch_spans(&log)[0].1 as i32;
    let bases = |v: Vec<ferrolog_record::DecodedBatch>| {
        v.iter().map(|b| b.header.base_offset).collect::<Vec<_>>()
    };
    assert_eq!(
        bases(log.read_batches(3, 10_000, LogEnd).unwrap()),
        [0, 5, 10, 15]
    );
    assert_eq!(
        bases(log.read_batches(3, 3 * size - 1, LogEnd).unwrap()),
        [0, 5]
    );
    assert_eq!(
        bases(log.read_batches(3, 3 * size, LogEnd).unwrap()),
        [0, 5, 10]
    );
    log.update_high_watermark(10);
    assert_eq!(
        bases(log.read_batches(3, 10_000, HighWatermark).unwrap()),
        [0, 5]
    );
    assert!(log
        .read_batches(10, 10_000, HighWatermark)
        .unwrap()
        .is_empty());
    assert_eq!(
        log.read_batches(21, 10, LogEnd).unwrap_err().code(),
        "OFFSET_OUT_OF_RANGE"
    );
}

/// A log whose first segment (one batch, read into `info`) is sealed and, with
/// retention.bytes 0, deleted by the next `delete_old_segments`.
fn a_read_of_a_deletable_segment(dir: &TempDir) -> (Log, crate::fetch::FetchDataInfo) {
    let mut log = open(
        dir,
        LogConfig {
            retention_bytes: 0,
            ..config()
        },
    );
    append(&mut log, 1, 5);
    log.roll().unwrap();
    let info = log.read(0, 1_000, LogEnd, false).unwrap();
    (log, info)
}

#[test]
fn read_slice_of_a_deleted_segment_fails_with_the_path() {
    let dir = TempDir::new().unwrap();
    let (mut log, info) = a_read_of_a_deletable_segment(&dir);
    assert_eq!(log.delete_old_segments(0).unwrap(), 1);
    let err = log.read_slice(&info.records).unwrap_err();
    assert_eq!(err.code(), "STORAGE_ERROR");
    assert!(
        err.to_string().contains("00000000000000000000.log"),
        "{err}"
    );
}

#[test]
fn open_log_file_shares_the_segments_file_while_it_is_in_the_log() {
    let dir = TempDir::new().unwrap();
    let (mut log, info) = a_read_of_a_deletable_segment(&dir);
    let file = log
        .open_log_file(&info.records.file)
        .expect("the segment is in the log");
    assert_eq!(log.delete_old_segments(0).unwrap(), 1);
    assert!(log.open_log_file(&info.records.file).is_none());
    // The shared handle still reads the deleted segment's bytes.
    let mut bytes = vec![0u8; info.records.size as usize];
    std::os::unix::fs::FileExt::read_exact_at(&*file, &mut bytes, info.records.position as u64)
        .unwrap();
    assert_eq!(BatchIter::new(&bytes).count(), 1);
}

#[test]
fn every_offset_reads_from_the_start_of_its_batch_across_index_intervals() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            index_interval_bytes: 300,
            segment_index_bytes: 1 << 20,
            ..config()
        },
    );
    append(&mut log, 60, 3);
    let spans = batch_spans(&log);
    let file = log.segments()[0].file.clone();
    for offset in 0..log.log_end_offset() {
        let (position, size) = spans[offset as usize / 3];
        let info = log.read(offset, 0, LogEnd, true).unwrap();
        assert_eq!(
            (info.records.position, info.records.size),
            (position, size),
            "offset {offset}"
        );
        assert_eq!(info.records.file, file);
        let span = log.read_span(offset, 0, LogEnd, true).unwrap();
        assert_eq!(span.with_file(log.segment_file(span.segment)), info);
    }
}

#[test]
fn a_high_watermark_read_after_a_truncation_stops_at_the_new_batches() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 4, 5);
    log.update_high_watermark(15);
    let spans = batch_spans(&log);
    let info = log.read(0, 1_000_000, HighWatermark, false).unwrap();
    assert_eq!(info.records.size, spans[3].0);
    // The batch holding the high watermark goes; bigger batches take its offsets.
    log.truncate_to(10).unwrap();
    for _ in 0..2 {
        let ts = 1_000 + 10 * log.log_end_offset();
        log.append_as_leader(&batch(0, 5, 200, ts), 0, 0).unwrap();
    }
    assert_eq!(log.update_high_watermark(15), 15);
    let spans = batch_spans(&log);
    let info = log.read(0, 1_000_000, HighWatermark, false).unwrap();
    assert_eq!(info.records.size, spans[3].0);
    let at_hw = log.read(15, 1_000_000, HighWatermark, false).unwrap();
    assert_eq!(
        at_hw.fetch_offset_metadata.relative_position_in_segment,
        spans[3].0
    );
}

#[test]
fn segment_files_are_the_paths_segments_lists() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 2, 5);
    log.roll().unwrap();
    append(&mut log, 1, 5);
    for segment in log.segments() {
        assert_eq!(log.segment_file(segment.base_offset), segment.file);
    }
    assert_eq!(
        log.segment_file(7),
        dir.path().join("00000000000000000007.log")
    );
}

/// Every offset of the log reads from the start of the batch holding it, checked against the
/// segment files read whole (not through the log).
fn check_every_offset(log: &Log) {
    for offset in log.log_start_offset()..log.log_end_offset() {
        let info = log.read(offset, 0, LogEnd, true).unwrap();
        let bytes = std::fs::read(&info.records.file).unwrap();
        let at = info.records.position as usize;
        let (_, header) = BatchIter::new(&bytes[at..]).next().unwrap().unwrap();
        let last = header.base_offset + header.last_offset_delta as i64;
        assert!(
            (header.base_offset..=last).contains(&offset),
            "offset {offset}: batch [{}, {last}] at {at}",
            header.base_offset
        );
        assert_eq!(info.records.size as usize, header.size_in_bytes());
    }
}

fn mapped(log: &Log) -> Vec<bool> {
    log.segments.values().map(|s| s.is_mapped()).collect()
}

#[test]
fn sealed_segments_are_read_through_maps_that_truncation_drops_first() {
    let dir = TempDir::new().unwrap();
    let size = batch(0, 3, 20, 0).len() as i32;
    let config = LogConfig {
        segment_bytes: 10 * size,
        index_interval_bytes: 2 * size,
        ..config()
    };
    let mut log = open(&dir, config.clone());
    append(&mut log, 35, 3);
    assert_eq!(log.segments().len(), 4);
    check_every_offset(&log);
    assert_eq!(mapped(&log), [true, true, true, false]);

    // Into the middle of a mapped segment: it becomes the active one, cut, unmapped.
    log.truncate_to(45).unwrap();
    assert_eq!(mapped(&log), [true, false]);
    assert_eq!(log.log_end_offset(), 45);
    check_every_offset(&log);
    append(&mut log, 12, 3);
    check_every_offset(&log);
    assert_eq!(mapped(&log), [true, true, false]);

    // Retention deletes a mapped segment; a clean reopen seals all but the last one again.
    log.maybe_increment_log_start_offset(30).unwrap();
    log.delete_old_segments(0).unwrap();
    check_every_offset(&log);
    log.close().unwrap();
    let mut log = open_with(dir.path(), config, 0, 30, true);
    check_every_offset(&log);
    assert_eq!(mapped(&log), [true, false]);

    log.truncate_fully_and_start_at(1_000).unwrap();
    append(&mut log, 25, 3);
    check_every_offset(&log);
}

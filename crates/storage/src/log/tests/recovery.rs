use std::fs::{self, OpenOptions as FileOptions};
use std::io::Write;

use tempfile::TempDir;

use super::*;
use crate::fetch::FetchIsolation;
use crate::leader_epoch::LEADER_EPOCH_CHECKPOINT_FILE;
use crate::segment::{file_name, INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX};
use crate::test_util::batch_in_epoch;

fn seg_path(dir: &TempDir, base: i64, suffix: &str) -> std::path::PathBuf {
    dir.path().join(file_name(base, suffix))
}

fn append_bytes(path: &std::path::Path, bytes: &[u8]) {
    FileOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

/// Three segments of two 2-record batches: [0, 4), [4, 8), [8, 12).
fn three_segments(dir: &TempDir) -> Log {
    let mut log = open(
        dir,
        LogConfig {
            index_interval_bytes: 0,
            ..config()
        },
    );
    for _ in 0..3 {
        append(&mut log, 2, 2);
        log.roll().unwrap();
    }
    log
}

#[test]
fn an_empty_directory_opens_with_one_segment_at_the_log_start_offset() {
    let dir = TempDir::new().unwrap();
    let log = open_with(dir.path(), config(), 0, 42, false);
    assert_eq!(
        (
            log.log_start_offset(),
            log.log_end_offset(),
            log.high_watermark()
        ),
        (42, 42, 42)
    );
    assert_eq!(
        log.segments()[0].file,
        dir.path().join("00000000000000000042.log")
    );
    assert_eq!(log.recovery_report(), &RecoveryReport::default());
}

#[test]
fn a_clean_reopen_keeps_offsets_epochs_and_indexes() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            index_interval_bytes: 0,
            ..config()
        },
    );
    log.append_as_leader(&batch(0, 3, 20, 1_000), 2, 0).unwrap();
    log.append_as_leader(&batch(0, 3, 20, 2_000), 5, 0).unwrap();
    log.roll().unwrap();
    append(&mut log, 2, 2);
    let before = (log.segments(), log.epoch_entries());
    log.close().unwrap();
    let log = open_with(
        dir.path(),
        LogConfig {
            index_interval_bytes: 0,
            ..config()
        },
        0,
        0,
        true,
    );
    assert_eq!((log.segments(), log.epoch_entries()), before);
    assert_eq!(
        (
            log.log_end_offset(),
            log.high_watermark(),
            log.recovery_point()
        ),
        (10, 10, 10)
    );
    assert_eq!(log.recovery_report(), &RecoveryReport::default());
    assert!(
        log.read(4, 1_000, crate::fetch::FetchIsolation::LogEnd, false)
            .unwrap()
            .records
            .position
            > 0
    );
}

#[test]
fn recovery_truncates_a_partial_trailing_batch() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 3, 2);
    let size = log.segments()[0].size;
    drop(log);
    let next = batch(6, 2, 20, 0);
    append_bytes(&seg_path(&dir, 0, LOG_FILE_SUFFIX), &next[..40]);
    let log = open_with(dir.path(), config(), 0, 0, false);
    let report = log.recovery_report();
    assert_eq!(
        (
            report.segments_recovered,
            report.bytes_truncated,
            report.segments_deleted
        ),
        (1, 40, 0)
    );
    let line = &report.messages[0];
    assert!(
        line.contains("00000000000000000000.log") && line.contains(&format!("position {size}")),
        "{line}"
    );
    assert!(line.contains("partial batch"), "{line}");
    assert_eq!(log.log_end_offset(), 6);
    assert_eq!(log.segments()[0].size, size);
}

#[test]
fn recovery_cuts_a_corrupt_middle_batch_and_deletes_later_segments() {
    let dir = TempDir::new().unwrap();
    let log = three_segments(&dir);
    let second = log.segments()[1].clone();
    drop(log);
    // Damage the second batch of the second segment (offsets 6-7).
    let mut bytes = fs::read(&second.file).unwrap();
    let first_size = ferrolog_record::BatchHeader::parse(&bytes)
        .unwrap()
        .size_in_bytes();
    bytes[first_size + 70] ^= 0x55;
    fs::write(&second.file, &bytes).unwrap();
    let log = open_with(dir.path(), config(), 0, 0, false);
    let report = log.recovery_report().clone();
    assert_eq!(
        (report.segments_recovered, report.segments_deleted),
        (2, 2),
        "{report:?}"
    );
    assert_eq!(report.bytes_truncated, (bytes.len() - first_size) as u64);
    assert!(
        report.messages[0].contains(&format!("position {first_size}")),
        "{:?}",
        report.messages
    );
    assert!(report.messages[0].contains("CRC"), "{:?}", report.messages);
    assert_eq!(
        log.segments()
            .iter()
            .map(|s| s.base_offset)
            .collect::<Vec<_>>(),
        [0, 4]
    );
    assert!(
        !seg_path(&dir, 8, LOG_FILE_SUFFIX).exists()
            && !seg_path(&dir, 12, INDEX_FILE_SUFFIX).exists()
    );
    assert_eq!(log.log_end_offset(), 6);
}

#[test]
fn segments_below_the_recovery_point_are_trusted() {
    let dir = TempDir::new().unwrap();
    let log = three_segments(&dir);
    let first = log.segments()[0].clone();
    drop(log);
    let mut bytes = fs::read(&first.file).unwrap();
    bytes[70] ^= 0x55;
    fs::write(&first.file, &bytes).unwrap();
    let log = open_with(dir.path(), config(), 8, 0, false);
    assert_eq!(
        log.recovery_report().segments_recovered,
        2,
        "the segment holding the recovery point and later"
    );
    assert_eq!(log.recovery_report().bytes_truncated, 0);
    assert_eq!((log.log_end_offset(), log.recovery_point()), (12, 8));
}

#[test]
fn a_missing_index_is_rebuilt_after_a_clean_shutdown() {
    let dir = TempDir::new().unwrap();
    let mut log = three_segments(&dir);
    let entries = log.segments[&0].offset_index().entries();
    log.close().unwrap();
    let index = seg_path(&dir, 0, INDEX_FILE_SUFFIX);
    let original = fs::read(&index).unwrap();
    fs::remove_file(&index).unwrap();
    let log = open_with(
        dir.path(),
        LogConfig {
            index_interval_bytes: 0,
            ..config()
        },
        0,
        0,
        true,
    );
    let report = log.recovery_report();
    assert_eq!((report.indexes_rebuilt, report.segments_recovered), (1, 0));
    assert!(
        report.messages[0]
            .contains("00000000000000000000.log: rebuilding the indexes: .index missing"),
        "{:?}",
        report.messages
    );
    assert_eq!(log.segments[&0].offset_index().entries(), entries);
    assert_eq!(fs::read(&index).unwrap(), original);
}

#[test]
fn a_corrupt_index_is_rebuilt_after_a_clean_shutdown() {
    let dir = TempDir::new().unwrap();
    let mut log = three_segments(&dir);
    log.close().unwrap();
    let time_index = seg_path(&dir, 4, TIME_INDEX_FILE_SUFFIX);
    let original = fs::read(&time_index).unwrap();
    append_bytes(&time_index, &[1, 2, 3]);
    let log = open_with(
        dir.path(),
        LogConfig {
            index_interval_bytes: 0,
            ..config()
        },
        0,
        0,
        true,
    );
    assert_eq!(log.recovery_report().indexes_rebuilt, 1);
    assert!(
        log.recovery_report().messages[0].contains("whole number of entries"),
        "{:?}",
        log.recovery_report()
    );
    assert_eq!(fs::read(&time_index).unwrap(), original);
}

#[test]
fn a_preallocated_index_left_by_a_crash_is_rebuilt_by_recovery() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            index_interval_bytes: 0,
            ..config()
        },
    );
    append(&mut log, 4, 2);
    let entries = log.segments[&0].offset_index().entries();
    drop(log);
    let log = open_with(
        dir.path(),
        LogConfig {
            index_interval_bytes: 0,
            ..config()
        },
        0,
        0,
        false,
    );
    assert_eq!(log.segments[&0].offset_index().entries(), entries);
    assert_eq!(log.recovery_report().indexes_rebuilt, 0);
    assert_eq!(log.log_end_offset(), 8);
}

#[test]
fn recovery_restores_leader_epochs_from_the_batches() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.append_as_follower(&batch_in_epoch(0, 2, 3)).unwrap();
    log.append_as_follower(&batch_in_epoch(2, 2, 6)).unwrap();
    log.flush().unwrap();
    drop(log);
    fs::remove_file(dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE)).unwrap();
    let log = open_with(dir.path(), config(), 0, 0, false);
    let entries: Vec<_> = log
        .epoch_entries()
        .iter()
        .map(|e| (e.epoch, e.start_offset))
        .collect();
    assert_eq!(entries, [(3, 0), (6, 2)]);
}

#[test]
fn a_crash_before_the_flush_writes_the_new_epoch_loses_no_entry() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE);
    let mut log = open(&dir, config());
    log.append_as_follower(&batch_in_epoch(0, 2, 3)).unwrap();
    log.flush().unwrap();
    let recovery_point = log.recovery_point();
    log.append_as_follower(&batch_in_epoch(2, 2, 6)).unwrap();
    // The crash: the appended batch reached the page cache, the checkpoint was not rewritten.
    drop(log);
    assert_eq!(fs::read_to_string(&path).unwrap(), "0\n1\n3 0\n");
    let log = open_with(dir.path(), config(), recovery_point, 0, false);
    let entries: Vec<_> = log
        .epoch_entries()
        .iter()
        .map(|e| (e.epoch, e.start_offset))
        .collect();
    assert_eq!(entries, [(3, 0), (6, 2)]);
    // Recovery wrote what it rebuilt.
    assert_eq!(fs::read_to_string(&path).unwrap(), "0\n2\n3 0\n6 2\n");
}

#[test]
fn epochs_past_the_log_end_are_dropped_on_open() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.append_as_follower(&batch_in_epoch(0, 2, 3)).unwrap();
    log.append_as_follower(&batch_in_epoch(2, 2, 6)).unwrap();
    // The checkpoint names both epochs.
    log.flush().unwrap();
    let size = fs::metadata(&log.segments()[0].file).unwrap().len();
    drop(log);
    // The second batch is lost: cut the file to the first.
    let first = batch_in_epoch(0, 2, 3).len() as u64;
    FileOptions::new()
        .write(true)
        .open(seg_path(&dir, 0, LOG_FILE_SUFFIX))
        .unwrap()
        .set_len(first)
        .unwrap();
    assert!(size > first);
    let log = open_with(dir.path(), config(), 0, 0, true);
    assert_eq!(log.log_end_offset(), 2);
    assert_eq!(log.epoch_entries().len(), 1);
}

#[test]
fn a_log_start_offset_checkpoint_beyond_the_log_end_deletes_nothing() {
    for clean in [true, false] {
        let dir = TempDir::new().unwrap();
        let mut log = open(&dir, config());
        append(&mut log, 2, 2);
        log.roll().unwrap();
        append(&mut log, 2, 2);
        log.append_as_follower(&batch_in_epoch(8, 2, 3)).unwrap();
        let bases: Vec<_> = log.segments().iter().map(|s| s.base_offset).collect();
        log.close().unwrap();
        let log = open_with(dir.path(), config(), 0, 50, clean);
        assert_eq!(
            (log.log_start_offset(), log.log_end_offset()),
            (0, 10),
            "clean: {clean}"
        );
        assert_eq!(
            log.segments()
                .iter()
                .map(|s| s.base_offset)
                .collect::<Vec<_>>(),
            bases
        );
        let report = log.recovery_report();
        assert_eq!(report.segments_deleted, 0);
        assert!(
            report
                .messages
                .iter()
                .any(|m| m.contains("log start offset")),
            "{report:?}"
        );
        assert_eq!(log.latest_epoch(), Some(3), "epochs kept");
        assert_eq!(
            log.read_batches(0, 1 << 20, FetchIsolation::LogEnd)
                .unwrap()
                .len(),
            5
        );
    }
}

#[test]
fn a_log_start_offset_checkpoint_within_the_log_is_kept() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 3, 2);
    log.close().unwrap();
    let log = open_with(dir.path(), config(), 0, 3, true);
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (3, 6));
    assert!(log.recovery_report().messages.is_empty());
}

#[test]
fn leftovers_and_orphan_indexes_are_removed() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 1, 2);
    log.close().unwrap();
    for name in [
        "00000000000000000009.index",
        "00000000000000000009.timeindex",
        "00000000000000000003.log.deleted",
        "leader-epoch-checkpoint.tmp",
    ] {
        fs::write(dir.path().join(name), b"x").unwrap();
    }
    fs::write(dir.path().join("partition.metadata"), b"version: 0\n").unwrap();
    let log = open_with(dir.path(), config(), 0, 0, true);
    assert_eq!(
        log.recovery_report().messages.len(),
        4,
        "{:?}",
        log.recovery_report()
    );
    let mut names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "00000000000000000000.index",
            "00000000000000000000.log",
            "00000000000000000000.timeindex",
            // The close's producer snapshot at the LEO.
            "00000000000000000002.snapshot",
            "leader-epoch-checkpoint",
            "partition.metadata"
        ]
    );
}

#[test]
fn open_refuses_bad_options() {
    let dir = TempDir::new().unwrap();
    let bad = |config: LogConfig, rp: i64| {
        Log::open(OpenOptions {
            dir: dir.path().to_path_buf(),
            config,
            recovery_point: rp,
            log_start_offset: 0,
            had_clean_shutdown: false,
        })
        .unwrap_err()
        .code()
    };
    assert_eq!(
        bad(
            LogConfig {
                index_interval_bytes: -1,
                ..config()
            },
            0
        ),
        "INVALID_ARGUMENT"
    );
    assert_eq!(bad(config(), -1), "INVALID_ARGUMENT");
}

#[test]
fn reopening_keeps_trimmed_indexes_of_inactive_segments_trimmed() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 1, 2);
    log.roll().unwrap();
    append(&mut log, 1, 2);
    log.close().unwrap();
    let log = open_with(dir.path(), config(), 0, 0, true);
    let len = |base, suffix| fs::metadata(seg_path(&dir, base, suffix)).unwrap().len();
    assert_eq!(
        (len(0, INDEX_FILE_SUFFIX), len(0, TIME_INDEX_FILE_SUFFIX)),
        (0, 12)
    );
    assert_eq!(
        (len(2, INDEX_FILE_SUFFIX), len(2, TIME_INDEX_FILE_SUFFIX)),
        (4096, 4092),
        "the active one is preallocated"
    );
    drop(log);
}

#[test]
fn a_trusted_last_segment_with_a_partial_tail_is_recovered() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 2, 2);
    log.close().unwrap();
    append_bytes(
        &seg_path(&dir, 0, LOG_FILE_SUFFIX),
        &batch(4, 2, 20, 0)[..30],
    );
    let mut log = open_with(dir.path(), config(), 0, 0, true);
    let report = log.recovery_report().clone();
    assert_eq!(
        (report.segments_recovered, report.bytes_truncated),
        (1, 30),
        "{report:?}"
    );
    assert!(
        report.messages[0].contains("recovering: whole batches end at"),
        "{report:?}"
    );
    append(&mut log, 1, 2);
    assert_eq!(
        log.read_batches(0, i32::MAX, crate::fetch::FetchIsolation::LogEnd)
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn an_unreadable_epoch_checkpoint_is_rebuilt_from_the_batches() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.append_as_follower(&batch_in_epoch(0, 2, 3)).unwrap();
    log.append_as_follower(&batch_in_epoch(2, 2, 6)).unwrap();
    log.close().unwrap();
    let checkpoint = dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE);
    fs::write(&checkpoint, "0\n7\nbogus\n").unwrap();
    let log = open_with(dir.path(), config(), 0, 0, true);
    let entries: Vec<_> = log
        .epoch_entries()
        .iter()
        .map(|e| (e.epoch, e.start_offset))
        .collect();
    assert_eq!(entries, [(3, 0), (6, 2)]);
    assert!(
        log.recovery_report().messages[0].contains("rebuilt from the batch headers"),
        "{:?}",
        log.recovery_report()
    );
    assert_eq!(fs::read_to_string(&checkpoint).unwrap(), "0\n2\n3 0\n6 2\n");
}

#[test]
fn an_empty_log_reopened_after_an_unclean_stop_reports_no_index_problem() {
    let dir = TempDir::new().unwrap();
    let log = open(&dir, config());
    // Dropped without close: the indexes keep their zeroed preallocation, as after a SIGKILL.
    drop(log);
    let mut log = open_with(dir.path(), config(), 0, 0, false);
    let report = log.recovery_report();
    assert_eq!(
        (report.indexes_rebuilt, report.segments_recovered),
        (0, 1),
        "{report:?}"
    );
    assert!(report.messages.is_empty(), "{:?}", report.messages);
    // The log works as a fresh one.
    append(&mut log, 2, 2);
    assert_eq!(log.log_end_offset(), 4);
    log.close().unwrap();
    let log = open_with(dir.path(), config(), 0, 0, true);
    assert_eq!(log.log_end_offset(), 4);
    assert!(log.recovery_report().messages.is_empty());
}

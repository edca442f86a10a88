use tempfile::TempDir;

use super::*;

#[test]
fn flush_moves_the_recovery_point_to_the_log_end() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 2, 3);
    log.roll().unwrap();
    append(&mut log, 1, 3);
    assert_eq!(log.recovery_point(), 0);
    log.flush().unwrap();
    assert_eq!(log.recovery_point(), 9);
}

#[test]
fn a_flush_job_runs_on_another_thread_without_the_log() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 2, 3);
    let job = log.prepare_flush().unwrap();
    assert_eq!(job.log_end_offset(), 6);
    append(&mut log, 1, 3);
    let flushed = std::thread::spawn(move || job.run())
        .join()
        .unwrap()
        .unwrap();
    log.complete_flush(flushed);
    assert_eq!(log.recovery_point(), 6, "only what the job covered");
}

#[test]
fn a_flush_that_began_before_a_truncation_does_not_move_the_recovery_point() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 2, 3);
    let job = log.prepare_flush().unwrap();
    log.truncate_to(3).unwrap();
    append(&mut log, 1, 3);
    log.complete_flush(job.run().unwrap());
    assert_eq!(log.recovery_point(), 0);
}

#[test]
fn the_directory_is_synced_once_for_each_new_segment_even_an_empty_one() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    // The loader created the first segment: the first flush syncs the directory.
    assert!(log.prepare_flush().unwrap().syncs_dir());
    log.flush().unwrap();
    append(&mut log, 2, 3);
    let job = log.prepare_flush().unwrap();
    assert!(!job.syncs_dir(), "no segment created since");
    log.complete_flush(job.run().unwrap());
    log.roll().unwrap();
    append(&mut log, 1, 3);
    assert!(
        log.prepare_flush().unwrap().syncs_dir(),
        "a roll adds a file"
    );
    log.flush().unwrap();
    // Everything deleted, an empty segment at 100: nothing to flush but the directory, whose
    // new entry (and the old ones' removal) would otherwise wait for the next append's flush.
    log.truncate_fully_and_start_at(100).unwrap();
    assert_eq!(log.recovery_point(), log.log_end_offset());
    let job = log.prepare_flush().unwrap();
    assert!(job.syncs_dir());
    log.complete_flush(job.run().unwrap());
    assert!(!log.prepare_flush().unwrap().syncs_dir());
}

#[test]
fn a_roll_hands_out_the_flush_of_the_segments_below_the_new_one() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            segment_bytes: 1024,
            ..config()
        },
    );
    assert!(log.take_roll_flush().is_none(), "no roll yet");
    // flush.messages at its default (never): only the rolls flush.
    for _ in 0..20 {
        append(&mut log, 5, 3);
        let Some(job) = log.take_roll_flush() else {
            continue;
        };
        let active = log.segments().last().unwrap().clone();
        assert!(job.log_end_offset() <= active.base_offset);
        assert!(
            job.files()
                .all(|f| f.file_stem() != active.file.file_stem()),
            "the active segment is not the roll's to flush"
        );
        assert!(
            job.syncs_dir(),
            "the new segment's entry, and the rolled one's"
        );
        let flushed = std::thread::spawn(move || job.run())
            .join()
            .unwrap()
            .unwrap();
        log.complete_flush(flushed);
        assert!(log.take_roll_flush().is_none(), "handed out once");
    }
    let segments = log.segments();
    assert!(segments.len() > 10, "{} segments", segments.len());
    assert_eq!(log.recovery_point(), segments.last().unwrap().base_offset);
    assert!(log.recovery_point() < log.log_end_offset());
}

#[test]
fn the_flush_of_the_last_roll_covers_the_earlier_ones() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    for _ in 0..3 {
        append(&mut log, 2, 3);
        log.roll().unwrap();
    }
    append(&mut log, 1, 3);
    let job = log.take_roll_flush().unwrap();
    assert_eq!(job.log_end_offset(), 18);
    assert_eq!(job.files().count(), 12, "the three rolled segments' files");
    log.complete_flush(job.run().unwrap());
    assert_eq!(log.recovery_point(), 18);
    assert!(log.take_roll_flush().is_none());
    // A full flush still takes the rest.
    log.flush().unwrap();
    assert_eq!(log.recovery_point(), 21);
}

#[test]
fn a_roll_flush_begun_before_a_truncation_does_not_move_the_recovery_point() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    append(&mut log, 2, 3);
    log.roll().unwrap();
    let job = log.take_roll_flush().unwrap();
    log.truncate_to(3).unwrap();
    append(&mut log, 2, 3);
    log.complete_flush(job.run().unwrap());
    assert_eq!(log.recovery_point(), 0);
}

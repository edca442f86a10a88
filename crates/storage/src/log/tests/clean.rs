//! A cleaning round on a live log (log/clean.rs) and its swap and crash recovery (log/swap.rs):
//! the latest value per key stays at its offset; a kill at each step of the swap reopens to a
//! log with every record that should survive and no leftover file.
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use ferrolog_record::decode::decode_batch;
use ferrolog_record::{
    end_txn_marker_batch, BatchBuilder, BatchIter, Compression, EndTransactionMarker,
};
use tempfile::TempDir;

use super::{open_with, Log};
use crate::config::LogConfig;
use crate::log::{AppendOrigin, LogCleanRequest};

const NOW: i64 = 1_700_000_000_000;
const KEYS: i64 = 10;

fn small_segments() -> LogConfig {
    LogConfig {
        segment_bytes: 600,
        segment_index_bytes: 4096,
        ..LogConfig::default()
    }
}

fn keyed(key: i64, value: Option<&str>, producer: Option<(i64, i32)>) -> Vec<u8> {
    let mut b = BatchBuilder::new(Compression::None, None, 0, None);
    if let Some((id, seq)) = producer {
        b = b.producer(id, 0, seq).transactional(true);
    }
    let k = format!("k{key}");
    b.append(NOW, Some(k.as_bytes()), value.map(str::as_bytes), &[])
        .unwrap();
    b.build().unwrap()
}

/// Key `i % KEYS` gets value `v<i>` for i in 0..n; keys 3 and 4 end with a tombstone.
fn fill(log: &mut Log, n: i64) {
    for i in 0..n {
        let value = format!("v{i}");
        log.append_as_leader(&keyed(i % KEYS, Some(&value), None), 0, NOW)
            .unwrap();
    }
    for key in [3, 4] {
        log.append_as_leader(&keyed(key, None, None), 0, NOW)
            .unwrap();
    }
    log.roll().unwrap();
    log.update_high_watermark(log.log_end_offset());
}

fn request(log: &Log) -> LogCleanRequest {
    LogCleanRequest {
        first_dirty_offset: 0,
        first_uncleanable_offset: log.log_end_offset(),
        current_time_ms: NOW,
        delete_retention_ms: 86_400_000,
        dedupe_buffer_size: 1 << 20,
        max_message_bytes: None,
    }
}

type Rec = (i64, Option<String>, Option<String>);

/// Every record of the log's `.log` files, in file order.
fn records(dir: &Path) -> Vec<Rec> {
    let mut logs: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    let mut out = Vec::new();
    for path in logs {
        let bytes = fs::read(&path).unwrap();
        for (pos, header) in BatchIter::new(&bytes).map(|b| b.unwrap()) {
            let batch = decode_batch(&bytes[pos..pos + header.size_in_bytes()]).unwrap();
            if header.is_control() {
                continue;
            }
            for r in &batch.records {
                let s =
                    |b: &Option<Vec<u8>>| b.as_ref().map(|b| String::from_utf8(b.clone()).unwrap());
                out.push((r.offset(header.base_offset), s(&r.key), s(&r.value)));
            }
        }
    }
    out
}

/// The latest (offset, value) per key.
fn latest(records: &[Rec]) -> BTreeMap<String, (i64, Option<String>)> {
    let mut m = BTreeMap::new();
    for (offset, key, value) in records {
        m.insert(key.clone().unwrap(), (*offset, value.clone()));
    }
    m
}

fn assert_sound(dir: &Path, expected: &BTreeMap<String, (i64, Option<String>)>) {
    let names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for name in &names {
        assert!(
            !name.ends_with(".cleaned") && !name.ends_with(".swap") && !name.ends_with(".deleted"),
            "{name} left in {names:?}"
        );
    }
    let recs = records(dir);
    let offsets: Vec<i64> = recs.iter().map(|r| r.0).collect();
    assert!(
        offsets.windows(2).all(|w| w[0] < w[1]),
        "offsets out of order or repeated: {offsets:?}"
    );
    assert_eq!(&latest(&recs), expected);
}

fn reopen(dir: &Path) -> Log {
    open_with(dir, small_segments(), 0, 0, false)
}

#[test]
fn a_round_keeps_the_latest_value_per_key_at_its_offset() {
    let dir = TempDir::new().unwrap();
    let mut log = reopen(dir.path());
    fill(&mut log, 60);
    let before = records(dir.path());
    let expected = latest(&before);
    let segments_before = log.segments().len();
    // Cleaned groups of several segments.
    log.update_config(LogConfig {
        segment_bytes: 4096,
        ..small_segments()
    })
    .unwrap();
    let result = log.clean(request(&log)).unwrap();
    assert!(!result.aborted);
    assert_eq!(result.end_offset, log.log_end_offset());
    assert_eq!(result.records_read, before.len() as u64);
    assert_eq!(result.records_retained, KEYS as u64);
    assert_eq!(result.segments_before as usize, segments_before - 1);
    assert!(result.segments_after < result.segments_before);
    assert_eq!(log.segments().len(), result.segments_after as usize + 1);
    let after = records(dir.path());
    assert_eq!(after.len(), KEYS as usize);
    assert_sound(dir.path(), &expected);
    // Reads through the log see the cleaned segments.
    for (offset, _) in expected.values() {
        let fetched = log
            .read(*offset, 1 << 20, crate::FetchIsolation::LogEnd, true)
            .unwrap();
        let bytes = fs::read(&fetched.records.file).unwrap();
        let slice = &bytes[fetched.records.position as usize..][..fetched.records.size as usize];
        let (_, header) = BatchIter::new(slice).next().unwrap().unwrap();
        assert!(header.base_offset <= *offset && *offset <= header.last_offset());
    }
    log.close().unwrap();
    let log = open_with(dir.path(), small_segments(), log_recovery(&log), 0, true);
    assert_eq!(log.log_end_offset(), before.last().unwrap().0 + 1);
    drop(log);
    assert_sound(dir.path(), &expected);
}

fn log_recovery(log: &Log) -> i64 {
    log.recovery_point()
}

#[test]
fn a_second_round_with_tombstones_past_their_horizon_removes_them() {
    let dir = TempDir::new().unwrap();
    let mut log = reopen(dir.path());
    fill(&mut log, 40);
    log.clean(request(&log)).unwrap();
    let mut later = request(&log);
    later.current_time_ms = NOW + 2 * 86_400_000;
    log.clean(later).unwrap();
    let after = latest(&records(dir.path()));
    assert_eq!(after.len(), KEYS as usize - 2);
    assert!(after.values().all(|(_, v)| v.is_some()));
}

#[test]
fn a_round_with_nothing_dirty_removes_only_tombstones_past_their_horizon() {
    let dir = TempDir::new().unwrap();
    let mut log = reopen(dir.path());
    fill(&mut log, 40);
    let first = log.clean(request(&log)).unwrap();
    assert_eq!(first.latest_delete_horizon_ms, Some(NOW + 86_400_000));
    let mut again = request(&log);
    again.first_dirty_offset = first.end_offset;
    // Before the horizon: nothing to remove, the tombstones are reported again.
    again.current_time_ms = NOW + 1_000;
    let before = log.clean(again.clone()).unwrap();
    assert_eq!(before.end_offset, first.end_offset);
    assert_eq!(before.latest_delete_horizon_ms, Some(NOW + 86_400_000));
    assert_eq!(latest(&records(dir.path())).len(), KEYS as usize);
    // Past it: they go, the values stay at their offsets, nothing is reported.
    again.current_time_ms = NOW + 86_400_000;
    let past = log.clean(again).unwrap();
    assert_eq!(past.end_offset, first.end_offset);
    assert_eq!(past.latest_delete_horizon_ms, None);
    let after = latest(&records(dir.path()));
    assert_eq!(after.len(), KEYS as usize - 2);
    assert!(after.values().all(|(_, v)| v.is_some()));
}

#[test]
fn aborted_records_go_and_the_marker_stays_in_the_cleaned_txnindex() {
    let dir = TempDir::new().unwrap();
    let mut log = reopen(dir.path());
    for i in 0..5 {
        log.append_as_leader(&keyed(i, Some("a"), Some((7, i as i32))), 0, NOW)
            .unwrap();
    }
    let abort = end_txn_marker_batch(0, NOW, -1, 7, 0, &EndTransactionMarker::abort(1)).unwrap();
    log.append_as_leader_from(&abort, 0, NOW, AppendOrigin::Coordinator)
        .unwrap();
    fill(&mut log, 20);
    let txnindexes = |dir: &Path| {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "txnindex"))
            .count()
    };
    assert_eq!(txnindexes(dir.path()), 1);
    let result = log.clean(request(&log)).unwrap();
    assert!(!result.aborted);
    let recs = records(dir.path());
    assert!(
        recs.iter().all(|r| r.0 > 5),
        "aborted records stayed: {recs:?}"
    );
    // The ABORT marker stays (its horizon is new), with its transaction index entry.
    assert_eq!(txnindexes(dir.path()), 1);
    let first = log.segments()[0].base_offset;
    let entries = log
        .segments
        .get(&first)
        .unwrap()
        .txn_index()
        .entries()
        .to_vec();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].producer_id, 7);
    assert_eq!(entries[0].first_offset, 0);
    assert_eq!(entries[0].last_offset, 5);
}

#[test]
fn a_truncation_during_the_round_abandons_the_swap() {
    let dir = TempDir::new().unwrap();
    let mut log = reopen(dir.path());
    fill(&mut log, 60);
    let round = log.begin_clean(request(&log)).unwrap();
    let outcome = round.run();
    log.truncate_to(30).unwrap();
    let expected = latest(&records(dir.path()));
    let result = log.finish_clean(outcome).unwrap();
    assert!(result.aborted);
    assert_sound(dir.path(), &expected);
    assert_eq!(log.log_end_offset(), 30);
}

#[test]
fn retention_and_appends_during_the_round() {
    let dir = TempDir::new().unwrap();
    let mut log = reopen(dir.path());
    fill(&mut log, 60);
    // Appends alone do not stop the swap.
    let round = log.begin_clean(request(&log)).unwrap();
    let outcome = round.run();
    log.append_as_leader(&keyed(1, Some("new"), None), 0, NOW)
        .unwrap();
    let result = log.finish_clean(outcome).unwrap();
    assert!(!result.aborted);
    assert_eq!(latest(&records(dir.path()))["k1"].1.as_deref(), Some("new"));
    // Retention deleting a cleaned segment does.
    fill(&mut log, 30);
    let round = log.begin_clean(request(&log)).unwrap();
    let outcome = round.run();
    log.update_high_watermark(log.log_end_offset());
    let first = log.segments()[1].base_offset;
    log.maybe_increment_log_start_offset(first).unwrap();
    assert!(log.delete_old_segments(NOW).unwrap() > 0);
    let expected = latest(&records(dir.path()));
    let result = log.finish_clean(outcome).unwrap();
    assert!(result.aborted);
    assert_sound(dir.path(), &expected);
}

#[test]
fn close_during_the_round_abandons_it() {
    let dir = TempDir::new().unwrap();
    let mut log = reopen(dir.path());
    fill(&mut log, 60);
    let expected = latest(&records(dir.path()));
    let round = log.begin_clean(request(&log)).unwrap();
    log.close().unwrap();
    let outcome = round.run();
    let result = log.finish_clean(outcome).unwrap();
    assert!(result.aborted);
    assert_sound(dir.path(), &expected);
}

/// The states a kill leaves, made from a finished `run` whose swap has not begun.
enum Kill {
    OnlyCleaned,
    /// The first group's `.log` renamed to `.swap`, its indexes still `.cleaned`.
    SomeSwapSomeCleaned,
    AllSwapOldPresent,
    AllSwapOldGone,
    /// The old segments gone and the `.log` of the first group renamed live already.
    LogLiveIndexesSwap,
}

fn crash_at(kill: Kill) {
    let dir = TempDir::new().unwrap();
    let mut log = reopen(dir.path());
    fill(&mut log, 80);
    let before = records(dir.path());
    let expected = latest(&before);
    let mut req = request(&log);
    // A small segment.bytes for the cleaned groups: several groups.
    let mut config = small_segments();
    config.segment_bytes = 300;
    log.update_config(config).unwrap();
    req.first_dirty_offset = 0;
    let round = log.begin_clean(req).unwrap();
    let old: Vec<i64> = log.segments().iter().map(|s| s.base_offset).collect();
    let active = *old.last().unwrap();
    let outcome = round.run();
    drop(log);
    let names = |suffix: &str| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(suffix))
            .collect();
        v.sort();
        v
    };
    let cleaned = names(".cleaned");
    assert!(cleaned.len() >= 6, "several groups: {cleaned:?}");
    let to_swap = |p: &std::path::PathBuf| {
        let s = p.to_string_lossy().replace(".cleaned", ".swap");
        fs::rename(p, s).unwrap();
    };
    let delete_old = || {
        for base in old.iter().filter(|&&b| b != active) {
            for s in [".log", ".index", ".timeindex", ".txnindex"] {
                let _ = fs::remove_file(dir.path().join(crate::segment::file_name(*base, s)));
            }
        }
    };
    match kill {
        Kill::OnlyCleaned => {}
        Kill::SomeSwapSomeCleaned => {
            let first_log = cleaned
                .iter()
                .find(|p| p.to_string_lossy().ends_with(".log.cleaned"))
                .unwrap();
            to_swap(first_log);
        }
        Kill::AllSwapOldPresent => cleaned.iter().for_each(to_swap),
        Kill::AllSwapOldGone => {
            cleaned.iter().for_each(to_swap);
            delete_old();
        }
        Kill::LogLiveIndexesSwap => {
            cleaned.iter().for_each(to_swap);
            delete_old();
            let log_swap = names(".log.swap")[0].clone();
            fs::rename(&log_swap, log_swap.to_string_lossy().replace(".swap", "")).unwrap();
        }
    }
    drop(outcome);
    let log = reopen(dir.path());
    assert_eq!(log.log_end_offset(), before.last().unwrap().0 + 1);
    let segments = log.segments();
    assert!(segments
        .windows(2)
        .all(|w| w[0].base_offset < w[1].base_offset));
    drop(log);
    assert_sound(dir.path(), &expected);
}

#[test]
fn a_kill_with_only_cleaned_files_reopens_the_old_segments() {
    crash_at(Kill::OnlyCleaned);
}

#[test]
fn a_kill_with_some_swap_and_some_cleaned_files_drops_the_swap() {
    crash_at(Kill::SomeSwapSomeCleaned);
}

#[test]
fn a_kill_with_every_swap_file_and_the_old_segments_completes_the_swap() {
    crash_at(Kill::AllSwapOldPresent);
}

#[test]
fn a_kill_with_every_swap_file_and_no_old_segment_completes_the_swap() {
    crash_at(Kill::AllSwapOldGone);
}

#[test]
fn a_kill_during_the_renames_to_live_names_completes_the_swap() {
    crash_at(Kill::LogLiveIndexesSwap);
}

#[test]
fn groups_respect_segment_bytes_and_index_bytes() {
    use crate::log::clean::group_segments_by_size;
    use crate::log::swap::SnapshotSegment;
    let seg = |base: i64, size: u32| SnapshotSegment {
        base_offset: base,
        log_path: Default::default(),
        size,
        offset_index_bytes: 8,
        time_index_bytes: 12,
    };
    let segments = [seg(0, 100), seg(10, 100), seg(20, 100), seg(30, 50)];
    let config = LogConfig {
        segment_bytes: 250,
        segment_index_bytes: 4096,
        ..LogConfig::default()
    };
    let groups = group_segments_by_size(&segments, &config, 40);
    let bases: Vec<Vec<i64>> = groups
        .iter()
        .map(|g| g.iter().map(|s| s.base_offset).collect())
        .collect();
    assert_eq!(bases, vec![vec![0, 10], vec![20, 30]]);
    let config = LogConfig {
        segment_bytes: 1 << 20,
        segment_index_bytes: 20,
        ..LogConfig::default()
    };
    let groups = group_segments_by_size(&segments, &config, 40);
    assert_eq!(groups.len(), 4);
    // Offsets beyond i32 of the group's base start a new group.
    let far = [seg(0, 10), seg(1, 10), seg(i32::MAX as i64 + 5, 10)];
    let config = LogConfig::default();
    // Segment 1 runs to the next base - 1, past i32 of 0: it cannot join segment 0.
    assert_eq!(
        group_segments_by_size(&far, &config, i32::MAX as i64 + 10).len(),
        3
    );
}

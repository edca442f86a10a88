//! Transactions on the log (log/txn.rs): open transactions and the LSO, `.txnindex` entries,
//! producer snapshots through roll, truncation, close and recovery; and Kafka's own files
//! (__test__/fixtures/kafka) written again byte for byte from Kafka's batches.
use std::fs;
use std::path::Path;

use ferrolog_record::{
    end_txn_marker_batch, BatchBuilder, BatchIter, Compression, EndTransactionMarker,
};
use tempfile::TempDir;

use super::{config, open, open_with};
use crate::config::LogConfig;
use crate::log::AppendOrigin;
use crate::AbortedTransaction;

fn txn_batch(producer_id: i64, epoch: i16, sequence: i32, count: usize) -> Vec<u8> {
    let mut b = BatchBuilder::new(Compression::None, None, 0, None)
        .producer(producer_id, epoch, sequence)
        .transactional(true);
    for i in 0..count {
        b.append(1_000 + i as i64, None, Some(b"v"), &[]).unwrap();
    }
    b.build().unwrap()
}

fn marker(abort: bool, producer_id: i64, epoch: i16) -> Vec<u8> {
    let m = if abort {
        EndTransactionMarker::abort(3)
    } else {
        EndTransactionMarker::commit(3)
    };
    end_txn_marker_batch(0, 2_000, -1, producer_id, epoch, &m).unwrap()
}

fn coordinator_append(log: &mut super::Log, batch: &[u8]) {
    log.append_as_leader_from(batch, 0, 0, AppendOrigin::Coordinator)
        .unwrap();
}

#[test]
fn open_transactions_hold_the_lso_until_their_marker_is_below_the_high_watermark() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.append_as_leader(&txn_batch(7, 0, 0, 3), 0, 0).unwrap(); // 0..2
    log.append_as_leader(&txn_batch(8, 0, 0, 2), 0, 0).unwrap(); // 3..4
    log.update_high_watermark(5);
    assert_eq!(log.first_unstable_offset(), Some(0));
    assert_eq!(log.last_stable_offset(), 0);
    // A client may not append markers.
    assert_eq!(
        log.append_as_leader(&marker(false, 7, 0), 0, 0)
            .unwrap_err()
            .code(),
        "INVALID_RECORD"
    );
    coordinator_append(&mut log, &marker(false, 7, 0)); // 5
    assert_eq!(
        log.last_stable_offset(),
        0,
        "the marker is not replicated yet"
    );
    log.update_high_watermark(6);
    assert_eq!(log.last_stable_offset(), 3);
    coordinator_append(&mut log, &marker(true, 8, 0)); // 6: aborted [3, 6]
    log.update_high_watermark(7);
    assert_eq!(log.first_unstable_offset(), None);
    assert_eq!(log.last_stable_offset(), 7);
    assert_eq!(
        log.collect_aborted_transactions(0, 7).unwrap(),
        [AbortedTransaction {
            producer_id: 8,
            first_offset: 3
        }]
    );
    let entries = log
        .segments
        .values()
        .next()
        .unwrap()
        .txn_index()
        .entries()
        .to_vec();
    assert_eq!(entries.len(), 1);
    assert_eq!(
        (entries[0].last_offset, entries[0].last_stable_offset),
        (6, 7)
    );
    // A marker with no open transaction indexes nothing.
    coordinator_append(&mut log, &marker(true, 8, 0));
    assert_eq!(
        log.segments
            .values()
            .next()
            .unwrap()
            .txn_index()
            .entries()
            .len(),
        1
    );
}

#[test]
fn truncation_and_recovery_rebuild_the_state_and_the_index() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.append_as_leader(&txn_batch(7, 0, 0, 2), 0, 0).unwrap(); // 0..1
    coordinator_append(&mut log, &marker(true, 7, 0)); // 2
    log.roll().unwrap(); // 3.snapshot
    log.append_as_leader(&txn_batch(9, 0, 0, 2), 0, 0).unwrap(); // 3..4, open
    log.update_high_watermark(5);
    assert_eq!(log.last_stable_offset(), 3);
    let txnindex = dir.path().join("00000000000000000000.txnindex");
    let before = fs::read(&txnindex).unwrap();
    assert_eq!(before.len(), 34);
    // Unclean: no close, the txnindex lost; recovery from 0 rebuilds it, the open one stays.
    drop(log);
    fs::remove_file(&txnindex).unwrap();
    let mut log = open_with(dir.path(), config(), 0, 0, false);
    assert_eq!(fs::read(&txnindex).unwrap(), before);
    assert_eq!(log.first_unstable_offset(), Some(3));
    log.truncate_to(3).unwrap();
    assert_eq!(log.first_unstable_offset(), None);
    log.truncate_to(2).unwrap();
    assert!(!txnindex.exists(), "the ABORT at 2 is gone with its entry");
    assert_eq!(log.first_unstable_offset(), Some(0));
    assert!(!dir.path().join("00000000000000000003.snapshot").exists());
}

/// The fixture's batches, in offset order.
fn fixture_batches(dir: &Path) -> Vec<Vec<u8>> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".log"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let bytes = fs::read(dir.join(name)).unwrap();
        for item in BatchIter::new(&bytes) {
            let (position, header) = item.unwrap();
            out.push(bytes[position..position + header.size_in_bytes()].to_vec());
        }
    }
    out
}

#[test]
fn kafkas_batches_as_a_follower_make_kafkas_txnindex_and_snapshots() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../__test__/fixtures/kafka/fixture-0");
    let dir = TempDir::new().unwrap();
    let config = LogConfig {
        segment_bytes: 16384,
        index_interval_bytes: 1024,
        retention_ms: -1,
        ..LogConfig::default()
    };
    let mut log = open_with(dir.path(), config, 0, 0, true);
    for batch in fixture_batches(&fixture) {
        // Kafka rolled at 264 by segment.ms against the batch timestamps (see the TS test).
        if i64::from_be_bytes(batch[..8].try_into().unwrap()) == 264 {
            log.roll().unwrap();
        }
        log.append_as_follower(&batch).unwrap();
    }
    log.close().unwrap();
    for name in [
        "00000000000000000264.txnindex",
        "00000000000000000106.snapshot",
        "00000000000000000213.snapshot",
        "00000000000000000264.snapshot",
        "00000000000000000274.snapshot",
    ] {
        assert_eq!(
            fs::read(dir.path().join(name)).unwrap(),
            fs::read(fixture.join(name)).unwrap(),
            "{name}"
        );
    }
}

/// Kafka's rule for a clean log without snapshots (scan only the last two segments) holds only
/// where no `.snapshot` file exists: when every one is unreadable, they are deleted and the
/// state is rebuilt from the log start, so a producer that wrote only in the first segment of
/// four is still known.
#[test]
fn every_unreadable_snapshot_after_a_clean_close_means_a_scan_from_the_log_start() {
    let dir = TempDir::new().unwrap();
    let mut log = open(&dir, config());
    log.append_as_leader(&txn_batch(7, 0, 0, 2), 0, 0).unwrap(); // 0..1, open
    for producer_id in [8, 9, 10] {
        log.roll().unwrap();
        log.append_as_leader(&txn_batch(producer_id, 0, 0, 1), 0, 0)
            .unwrap();
    }
    let before = log.producer_state_entries().unwrap();
    assert_eq!(before.len(), 4);
    log.close().unwrap();
    drop(log);
    let mut spoiled = 0;
    for entry in fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "snapshot") {
            let mut bytes = fs::read(&path).unwrap();
            let last = bytes.len() - 1;
            bytes[last] ^= 0xff; // the CRC no longer matches
            fs::write(&path, bytes).unwrap();
            spoiled += 1;
        }
    }
    assert_eq!(spoiled, 4, "one per roll and the close's");
    let log = open_with(dir.path(), config(), 0, 0, true);
    assert_eq!(log.producer_state_entries().unwrap(), before);
    assert_eq!(log.first_unstable_offset(), Some(0));
    let left = fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "snapshot")
        })
        .count();
    assert_eq!(left, 0, "the unreadable snapshots are deleted");
}

/// Kafka's `removeStraySnapshots`: a close's snapshot (at no segment's base) is deleted at the
/// next open once it is not the newest above the last segment's base; snapshots at segment
/// bases stay for retention to take with their segments.
#[test]
fn a_past_close_snapshot_is_deleted_at_the_next_open_but_the_newest() {
    let dir = TempDir::new().unwrap();
    let snapshots = || {
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".snapshot"))
            .collect();
        names.sort();
        names
    };
    let mut opened = Vec::new();
    for round in 0..3 {
        let mut log = open_with(dir.path(), config(), 0, 0, round > 0);
        opened.push(snapshots());
        log.append_as_leader(&txn_batch(7 + round, 0, 0, 2), 0, 0)
            .unwrap();
        if round == 1 {
            log.roll().unwrap(); // 4.snapshot, the base of the new segment
        }
        log.close().unwrap(); // at the LEO: 2, (4), 6
    }
    let at = |offsets: &[i64]| -> Vec<String> {
        offsets
            .iter()
            .map(|o| format!("{o:020}.snapshot"))
            .collect()
    };
    assert_eq!(opened, [at(&[]), at(&[2]), at(&[4])]);
    let log = open_with(dir.path(), config(), 0, 0, true);
    assert_eq!(snapshots(), at(&[4, 6]));
    assert_eq!(log.producer_state_entries().unwrap().len(), 3);
}

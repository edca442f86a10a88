//! Appends on a real full disk (a small tmpfs): an append is all or nothing, so no offset is
//! ever given twice and the files hold only acknowledged records; a log opens and serves its
//! records with the disk still full.
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use ferrolog_record::decode::decode_batch;
use ferrolog_record::{BatchBuilder, BatchIter, Compression};

use super::*;
use crate::fetch::FetchIsolation;
use crate::segment::{parse_file_name, LOG_FILE_SUFFIX};
use crate::test_util::{Filler, Tmpfs};

/// One record batch per id, its value naming the id; sizes vary with the id.
fn batch_of(ids: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    for &id in ids {
        let mut b = BatchBuilder::new(Compression::None, None, 0, None);
        let mut value = format!("id={id};").into_bytes();
        value.resize(value.len() + (id as usize * 37) % 400, b'x');
        b.append(1_000 + id as i64, None, Some(&value), &[])
            .unwrap();
        out.extend(b.build().unwrap());
    }
    out
}

fn id_of(value: &[u8]) -> u64 {
    let text = std::str::from_utf8(value).unwrap();
    text[3..text.find(';').unwrap()].parse().unwrap()
}

/// (offset, id) of every record in the `.log` files of `dir`, in file order.
fn records_in_files(dir: &Path) -> Vec<(i64, u64)> {
    let mut logs: Vec<(i64, std::path::PathBuf)> = fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name()?.to_str()?.to_owned();
            Some((parse_file_name(&name, LOG_FILE_SUFFIX)?, path))
        })
        .collect();
    logs.sort();
    let mut out = Vec::new();
    for (_, path) in logs {
        let bytes = fs::read(path).unwrap();
        for item in BatchIter::new(&bytes) {
            let (position, header) = item.unwrap();
            let batch = decode_batch(&bytes[position..position + header.size_in_bytes()]).unwrap();
            for r in batch.records {
                let value = r.value.unwrap();
                out.push((header.base_offset + r.offset_delta as i64, id_of(&value)));
            }
        }
    }
    out
}

/// (offset, id) of every record the log serves from its start to its end.
fn records_served(log: &Log) -> Vec<(i64, u64)> {
    let mut out = Vec::new();
    let mut next = log.log_start_offset();
    while next < log.log_end_offset() {
        let batches = log
            .read_batches(next, 1 << 20, FetchIsolation::LogEnd)
            .unwrap();
        assert!(!batches.is_empty(), "nothing served at {next}");
        for b in batches {
            for r in &b.records {
                out.push((
                    b.header.base_offset + r.offset_delta as i64,
                    id_of(r.value.as_ref().unwrap()),
                ));
            }
            next = b.header.base_offset + b.header.last_offset_delta as i64 + 1;
        }
    }
    out
}

fn expect_exactly(what: &str, found: &[(i64, u64)], acked: &BTreeMap<i64, u64>) {
    let acked: Vec<(i64, u64)> = acked.iter().map(|(&o, &id)| (o, id)).collect();
    if found != acked.as_slice() {
        let first = found
            .iter()
            .zip(&acked)
            .position(|(a, b)| a != b)
            .unwrap_or(found.len().min(acked.len()));
        panic!(
            "{what}: {} records, {} acknowledged; first difference at #{first}: found {:?}, acknowledged {:?}",
            found.len(),
            acked.len(),
            found.get(first),
            acked.get(first)
        );
    }
}

fn disk_full_config() -> LogConfig {
    LogConfig {
        segment_bytes: 24 * 1024,
        segment_index_bytes: 4096,
        index_interval_bytes: 0,
        ..LogConfig::default()
    }
}

struct Producer {
    /// Appends per leader epoch.
    epoch_every: u64,
    next_id: u64,
    acked: BTreeMap<i64, u64>,
    appends: u64,
    failures: u64,
    last_error: Option<String>,
    /// The ids of the last append refused.
    last_failed: Vec<u64>,
}

impl Producer {
    /// A producer that has appended nothing yet, raising its leader epoch every `epoch_every`
    /// appends.
    fn new(epoch_every: u64) -> Producer {
        Producer {
            epoch_every,
            next_id: 0,
            acked: BTreeMap::new(),
            appends: 0,
            failures: 0,
            last_error: None,
            last_failed: Vec::new(),
        }
    }

    /// Appends one, two or three batches at once (in a leader epoch that rises now and then);
    /// returns whether the append was acknowledged, checking that a refused append changed
    /// nothing and an acknowledged one took the offsets after the last acknowledged one.
    fn append(&mut self, log: &mut Log) -> bool {
        let n = 1 + (self.appends % 3);
        let ids: Vec<u64> = (self.next_id..self.next_id + n).collect();
        self.next_id += n;
        self.appends += 1;
        let before = log.log_end_offset();
        let epoch = (self.appends / self.epoch_every) as i32;
        match log.append_as_leader(&batch_of(&ids), epoch, 0) {
            Ok(info) => {
                let expected = self.acked.keys().next_back().map_or(0, |o| o + 1);
                assert_eq!(
                    info.first_offset, expected,
                    "offsets follow the acknowledged ones"
                );
                assert_eq!(info.first_offset, before);
                for (i, id) in ids.into_iter().enumerate() {
                    self.acked.insert(info.first_offset + i as i64, id);
                }
                true
            }
            Err(e) => {
                assert!(
                    matches!(e.code(), "STORAGE_ERROR"),
                    "a full disk is a storage error: {e}"
                );
                assert_eq!(
                    log.log_end_offset(),
                    before,
                    "a refused append leaves the LEO: {e}"
                );
                self.failures += 1;
                self.last_error = Some(e.to_string());
                self.last_failed = ids;
                false
            }
        }
    }
}

#[test]
fn appends_on_a_full_disk_are_all_or_nothing_and_the_log_reopens_full() {
    let disk = Tmpfs::mount(2 * 1024 * 1024);
    let dir = disk.path().join("t-0");
    let mut log = open_with(&dir, disk_full_config(), 0, 0, false);
    let mut filler = Filler::new(&disk.path().join("filler"));
    let mut p = Producer::new(150);
    filler.fill();
    // Give the disk back one page at a time: the appends that fill it again fail at every step
    // of an append by turns (the .log, an index entry, a roll's new files), and the flushes
    // between them at the epoch checkpoint they write (a failed one leaves the recovery point).
    for round in 0..150 {
        filler.free(4096);
        while p.append(&mut log) {}
        let recovery_point = log.recovery_point();
        if log.flush().is_err() {
            assert_eq!(log.recovery_point(), recovery_point);
        }
        if round % 20 == 0 {
            expect_exactly("files", &records_in_files(&dir), &p.acked);
            expect_exactly("reads", &records_served(&log), &p.acked);
        }
    }
    assert!(
        p.failures >= 150 && p.acked.len() > 1000,
        "{} acknowledged",
        p.acked.len()
    );
    assert!(log.segments().len() > 5, "rolls happened");
    expect_exactly("files", &records_in_files(&dir), &p.acked);
    expect_exactly("reads", &records_served(&log), &p.acked);

    // A crash with the disk still full: the log opens, recovers and serves every record.
    let recovery_point = log.recovery_point();
    drop(log);
    filler.fill();
    let mut log = Log::open(OpenOptions {
        dir: dir.clone(),
        config: disk_full_config(),
        recovery_point,
        log_start_offset: 0,
        had_clean_shutdown: false,
    })
    .expect("a log opens on a full disk");
    expect_exactly(
        "reads after a reopen on a full disk",
        &records_served(&log),
        &p.acked,
    );
    expect_exactly(
        "files after a reopen on a full disk",
        &records_in_files(&dir),
        &p.acked,
    );
    // And on a full disk appends fail cleanly.
    for _ in 0..5 {
        p.append(&mut log);
    }
    expect_exactly("files", &records_in_files(&dir), &p.acked);

    // Space again: appends go on after the acknowledged ones, across a clean and a crash reopen.
    drop(filler);
    fs::remove_file(disk.path().join("filler")).unwrap();
    for _ in 0..300 {
        assert!(p.append(&mut log), "{:?}", p.last_error);
    }
    log.close().unwrap();
    let mut log = open_with(&dir, disk_full_config(), 0, 0, true);
    expect_exactly(
        "reads after a clean reopen",
        &records_served(&log),
        &p.acked,
    );
    for _ in 0..50 {
        assert!(p.append(&mut log), "{:?}", p.last_error);
    }
    drop(log);
    let log = open_with(&dir, disk_full_config(), 0, 0, false);
    expect_exactly("reads after a crash", &records_served(&log), &p.acked);
    expect_exactly("files after a crash", &records_in_files(&dir), &p.acked);
    // Every batch is in the epoch the cache says it is.
    let served = log
        .read_batches(0, i32::MAX, FetchIsolation::LogEnd)
        .unwrap();
    for b in served {
        assert_eq!(
            log.epochs.epoch_for_offset(b.header.base_offset),
            Some(b.header.partition_leader_epoch),
            "epoch of the batch at {}",
            b.header.base_offset
        );
    }
}

#[test]
fn a_full_disk_in_one_epoch_never_hands_out_an_offset_twice() {
    // One epoch: the failures are the .log's, the indexes' and the rolls'.
    let disk = Tmpfs::mount(2 * 1024 * 1024);
    let dir = disk.path().join("t-0");
    let mut log = open_with(&dir, disk_full_config(), 0, 0, false);
    let mut filler = Filler::new(&disk.path().join("filler"));
    let mut p = Producer::new(u64::MAX);
    // The epoch is in the cache before the disk fills.
    assert!(p.append(&mut log));
    filler.fill();
    for _ in 0..150 {
        filler.free(4096);
        while p.append(&mut log) {}
        expect_exactly("files", &records_in_files(&dir), &p.acked);
    }
    expect_exactly("reads", &records_served(&log), &p.acked);
    drop(log);
    let log = open_with(&dir, disk_full_config(), 0, 0, false);
    expect_exactly(
        "reads after a crash on a full disk",
        &records_served(&log),
        &p.acked,
    );
}

#[test]
fn an_append_that_cannot_be_undone_takes_the_log_offline_until_reopened() {
    let disk = Tmpfs::mount(1024 * 1024);
    let dir = disk.path().join("t-0");
    let mut log = open_with(&dir, disk_full_config(), 0, 0, false);
    let mut filler = Filler::new(&disk.path().join("filler"));
    let mut p = Producer::new(u64::MAX);
    for _ in 0..20 {
        assert!(p.append(&mut log));
    }
    filler.fill();
    crate::segment::fail_next_rollback();
    while p.append(&mut log) {}
    let e = log
        .append_as_leader(&batch_of(&[999_999]), 0, 0)
        .unwrap_err();
    assert_eq!(e.code(), "LOG_OFFLINE", "{e}");
    assert!(log.offline_reason().is_some());
    let e = log.read(0, 1000, FetchIsolation::LogEnd, true).unwrap_err();
    assert_eq!(e.code(), "LOG_OFFLINE");
    assert_eq!(log.close().unwrap_err().code(), "LOG_OFFLINE");
    // Opening again recovers it: every acknowledged record at its offset. The append that
    // could not be undone may have left whole batches after them, as an unacknowledged write
    // may survive a crash in Kafka; their offsets follow the acknowledged ones.
    drop(filler);
    let log = open_with(&dir, disk_full_config(), 0, 0, false);
    let served = records_served(&log);
    let (acked, rest) = served.split_at(p.acked.len().min(served.len()));
    expect_exactly("reads after reopening", acked, &p.acked);
    let next = p.acked.len() as i64;
    for (i, &(offset, id)) in rest.iter().enumerate() {
        assert_eq!((offset, id), (next + i as i64, p.last_failed[i]));
    }
}

#[test]
fn a_roll_that_a_failed_append_undoes_hands_out_no_flush() {
    let disk = Tmpfs::mount(1024 * 1024);
    let dir = disk.path().join("t-0");
    let config = LogConfig {
        segment_bytes: 6000,
        segment_index_bytes: 4096,
        index_interval_bytes: 0,
        ..LogConfig::default()
    };
    let mut log = open_with(&dir, config, 0, 0, false);
    // ~4.5 KB in the active segment: its .log's second page and both index files' first pages
    // are allocated, so what follows fits there without a new page.
    log.append_as_leader(&crate::test_util::batch(0, 1, 10, 500), 0, 0)
        .unwrap();
    log.append_as_leader(&crate::test_util::batch(0, 9, 450, 1_000), 0, 0)
        .unwrap();
    assert!(log.take_roll_flush().is_none());
    let mut filler = Filler::new(&disk.path().join("filler"));
    filler.fill();
    // Two batches at once: the first fits the active segment's page; the second passes
    // segment.bytes, so the log rolls, and its write to the new segment finds no free page.
    let mut two = crate::test_util::batch(0, 3, 400, 2_000);
    two.extend(crate::test_util::batch(0, 3, 400, 3_000));
    let e = log.append_as_leader(&two, 0, 0).unwrap_err();
    assert_eq!(e.code(), "STORAGE_ERROR", "{e}");
    assert_eq!(log.log_end_offset(), 10);
    assert_eq!(log.segments().len(), 1, "the rolled segment is gone");
    assert!(
        log.take_roll_flush().is_none(),
        "the undone roll must not move the recovery point to its base"
    );
    filler.free(u64::MAX);
    log.append_as_leader(&two, 0, 0).unwrap();
    let flush = log.take_roll_flush().expect("this roll stands");
    assert_eq!(flush.log_end_offset(), 13);
}

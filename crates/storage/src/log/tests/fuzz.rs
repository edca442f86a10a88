//! Seeded random damage: garbage appended to a segment, then an unclean (and a clean) reopen.
//! Opening must never panic, and recovery must keep every batch written before the garbage.
use std::fs::{self, OpenOptions as FileOptions};
use std::io::Write;

use tempfile::TempDir;

use super::*;
use crate::fetch::FetchIsolation;

/// xorshift64*: small, seeded, good enough to pick garbage.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Garbage of a few kinds: random bytes, a damaged copy of a real batch, a truncated batch, a
/// header announcing a huge size, zeros (a preallocated tail).
fn garbage(rng: &mut Rng, next_offset: i64) -> Vec<u8> {
    let real = batch(
        next_offset,
        1 + rng.below(4) as usize,
        rng.below(200) as usize,
        5_000,
    );
    match rng.below(5) {
        0 => {
            let n = 1 + rng.below(300) as usize;
            rng.bytes(n)
        }
        1 => {
            let mut b = real;
            let at = 17 + rng.below(b.len() as u64 - 17) as usize;
            b[at] ^= 1 + rng.below(255) as u8;
            b
        }
        2 => real[..rng.below(real.len() as u64) as usize + 1].to_vec(),
        3 => {
            let mut b = real;
            let len = rng.next() as i32;
            b[8..12].copy_from_slice(&len.to_be_bytes());
            b
        }
        _ => vec![0u8; 1 + rng.below(100) as usize],
    }
}

#[test]
fn recovery_survives_random_garbage_after_the_last_batch() {
    let mut rng = Rng(0x5EED_F00D_CAFE_0001);
    for round in 0..150 {
        let dir = TempDir::new().unwrap();
        let config = LogConfig {
            index_interval_bytes: rng.below(300) as i32,
            segment_bytes: 2_000,
            ..config()
        };
        let mut log = open(&dir, config.clone());
        append(
            &mut log,
            1 + rng.below(12) as usize,
            1 + rng.below(3) as usize,
        );
        let end = log.log_end_offset();
        let active = log.segments().pop().unwrap().file;
        drop(log);
        let junk = garbage(&mut rng, end);
        FileOptions::new()
            .append(true)
            .open(&active)
            .unwrap()
            .write_all(&junk)
            .unwrap();

        let log = open_with(dir.path(), config.clone(), 0, 0, false);
        assert_eq!(
            log.log_end_offset(),
            end,
            "round {round}: {:?}",
            log.recovery_report()
        );
        let batches = log
            .read_batches(0, i32::MAX, FetchIsolation::LogEnd)
            .unwrap();
        let records: usize = log
            .segments()
            .iter()
            .map(|s| s.base_offset)
            .map(|base| {
                log.read_batches(base, i32::MAX, FetchIsolation::LogEnd)
                    .map(|b| b.iter().map(|b| b.records.len()).sum::<usize>())
                    .unwrap_or(0)
            })
            .sum();
        assert!(
            !batches.is_empty() && records as i64 == end,
            "round {round}"
        );
        drop(log);

        // The same damage after a "clean" shutdown is trusted, but must not panic either.
        FileOptions::new()
            .append(true)
            .open(&active)
            .unwrap()
            .write_all(&junk)
            .unwrap();
        if let Ok(log) = Log::open(OpenOptions {
            dir: dir.path().to_path_buf(),
            config: config.clone(),
            recovery_point: 0,
            log_start_offset: 0,
            had_clean_shutdown: true,
        }) {
            let _ = log.read(0, 100_000, FetchIsolation::LogEnd, true);
            let _ = log.fetch_offset_by_timestamp(0);
        }
    }
}

#[test]
fn garbage_indexes_never_panic_and_are_rebuilt() {
    let mut rng = Rng(0xDEC0_DE00_1234_5678);
    for round in 0..100 {
        let dir = TempDir::new().unwrap();
        let config = LogConfig {
            index_interval_bytes: 0,
            ..config()
        };
        let mut log = open(&dir, config.clone());
        append(&mut log, 2 + rng.below(6) as usize, 2);
        let end = log.log_end_offset();
        log.close().unwrap();
        let suffix = if rng.below(2) == 0 {
            ".index"
        } else {
            ".timeindex"
        };
        let n = rng.below(64) as usize;
        fs::write(
            dir.path().join(format!("00000000000000000000{suffix}")),
            rng.bytes(n),
        )
        .unwrap();
        let log = open_with(dir.path(), config, 0, 0, true);
        assert_eq!(log.log_end_offset(), end, "round {round}");
        for offset in 0..end {
            let info = log.read(offset, 1, FetchIsolation::LogEnd, true).unwrap();
            assert!(info.records.size > 0, "round {round}: offset {offset}");
        }
    }
}

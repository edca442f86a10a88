//! The read-path lookup of bench/storage.bench.ts without the binding, with and without the map of
//! sealed segments, in rounds taken in turn (the machine is noisy: only ratios within
//! one run mean anything). Ignored by default:
//!
//! cargo test --release -p ferrolog-storage lookup_bench -- --ignored --nocapture
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::*;
use crate::fetch::FetchIsolation::HighWatermark;
use crate::segment::{set_test_read_mode, TestReadMode};

#[test]
#[ignore]
fn lookup_bench() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            segment_bytes: 16 * 1024 * 1024,
            segment_index_bytes: 10 * 1024 * 1024,
            ..LogConfig::default()
        },
    );
    // 100,000 batches of 10 records of 40 bytes: about 53 MB, 4 segments (as the JS bench).
    let small = crate::test_util::batch(0, 10, 40, 1_700_000_000_000);
    for _ in 0..100_000 {
        log.append_as_leader(&small, 0, 0).unwrap();
    }
    log.update_high_watermark(log.log_end_offset());
    let end = log.log_end_offset();
    let mut seed: i64 = 42;
    let mut offsets = |n: usize| -> Vec<i64> {
        (0..n)
            .map(|_| {
                seed = (seed * 1103515245 + 12345) & 0x7fff_ffff;
                seed % end
            })
            .collect()
    };
    let sets = [("4096 offsets again and again", offsets(4096)), ("1M distinct offsets", offsets(1 << 20))];
    let modes = [
        ("pread", TestReadMode::Pread),
        ("map", TestReadMode::Normal),
    ];
    for (name, set) in &sets {
        let mut rates = vec![Vec::new(); modes.len()];
        for _round in 0..11 {
            for (m, (_, mode)) in modes.iter().enumerate() {
                set_test_read_mode(*mode);
                let start = Instant::now();
                let mut n = 0usize;
                let mut i = 0usize;
                while start.elapsed() < Duration::from_millis(200) {
                    for _ in 0..1024 {
                        let span = log.read_span(set[i], 4096, HighWatermark, true).unwrap();
                        std::hint::black_box(span);
                        i = (i + 1) % set.len();
                    }
                    n += 1024;
                }
                rates[m].push(n as f64 / start.elapsed().as_secs_f64());
            }
        }
        set_test_read_mode(TestReadMode::Normal);
        for (m, (mode, _)) in modes.iter().enumerate() {
            let r = &mut rates[m];
            r.sort_by(|a, b| a.partial_cmp(b).unwrap());
            println!(
                "{name:32} {mode:14} median {:>10.0}/s  (min {:.0}, max {:.0})",
                r[r.len() / 2],
                r[0],
                r[r.len() - 1]
            );
        }
    }
}

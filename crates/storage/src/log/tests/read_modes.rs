//! Sealed segments are read through a map, the active one with pread (segment/mapped.rs): the
//! same reads through both give the same answers, for random offsets over several segments.
use tempfile::TempDir;

use super::*;
use crate::fetch::FetchIsolation::{HighWatermark, LogEnd};
use crate::segment::{set_test_read_mode, TestReadMode};

#[test]
fn mapped_and_pread_reads_answer_alike() {
    let dir = TempDir::new().unwrap();
    let mut log = open(
        &dir,
        LogConfig {
            segment_bytes: 256 * 1024,
            index_interval_bytes: 4096,
            ..LogConfig::default()
        },
    );
    // Batches of 1 to 12 records of 40 bytes over segments of 256 KiB: several sealed segments.
    for i in 0..4_000 {
        let batch = crate::test_util::batch(0, 1 + i % 12, 40, 1_700_000_000_000 + i as i64);
        log.append_as_leader(&batch, 0, 1_700_000_000_000).unwrap();
    }
    log.update_high_watermark(log.log_end_offset() - 7);
    assert!(log.segments.len() > 3, "several sealed segments");
    let end = log.log_end_offset();
    let mut seed: i64 = 42;
    let mut next = || {
        seed = (seed * 1_103_515_245 + 12_345) & 0x7fff_ffff;
        seed
    };
    for _ in 0..20_000 {
        let offset = next() % (end + 3);
        let max_bytes = [0, 1, 100, 4096, 1 << 20][(next() % 5) as usize];
        let isolation = if next() % 2 == 0 {
            HighWatermark
        } else {
            LogEnd
        };
        let min_one = next() % 3 != 0;
        set_test_read_mode(TestReadMode::Pread);
        let by_pread = log
            .read_span(offset, max_bytes, isolation, min_one)
            .map_err(|e| e.to_string());
        set_test_read_mode(TestReadMode::Normal);
        let by_map = log
            .read_span(offset, max_bytes, isolation, min_one)
            .map_err(|e| e.to_string());
        assert_eq!(
            by_map, by_pread,
            "offset {offset}, maxBytes {max_bytes}, {isolation:?}, minOneMessage {min_one}"
        );
    }
    let mapped = log.segments.values().filter(|s| s.is_mapped()).count();
    assert_eq!(
        mapped,
        log.segments.len() - 1,
        "every sealed segment was read through its map"
    );
}

//! Log tests on real files in temp dirs, one file per concern.
use std::path::Path;

use tempfile::TempDir;

use super::{Log, OpenOptions, RecoveryReport};
use crate::config::LogConfig;
use crate::test_util::batch;

mod append;
mod clean;
mod disk_full;
mod flush;
mod fuzz;
mod read;
mod read_modes;
mod recovery;
mod retention;
mod roll;
mod timestamps;
mod txn;

/// Small indexes and the default rest.
fn config() -> LogConfig {
    LogConfig {
        segment_index_bytes: 4096,
        ..LogConfig::default()
    }
}

fn open_with(
    dir: &Path,
    config: LogConfig,
    recovery_point: i64,
    log_start_offset: i64,
    clean: bool,
) -> Log {
    Log::open(OpenOptions {
        dir: dir.to_path_buf(),
        config,
        recovery_point,
        log_start_offset,
        had_clean_shutdown: clean,
    })
    .unwrap()
}

fn open(dir: &TempDir, config: LogConfig) -> Log {
    open_with(dir.path(), config, 0, 0, false)
}

/// Appends `batches` batches of `records` records (values of 20 bytes) as leader in epoch 0,
/// timestamps from `1000 + 10 * offset`, and commits them (HW = LEO) as the replica layer of a
/// single-replica partition would.
fn append(log: &mut Log, batches: usize, records: usize) {
    for _ in 0..batches {
        let ts = 1_000 + 10 * log.log_end_offset();
        log.append_as_leader(&batch(0, records, 20, ts), 0, 0)
            .unwrap();
    }
    log.update_high_watermark(log.log_end_offset());
}

#[test]
fn a_log_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<Log>();
    assert_send::<super::FlushJob>();
}

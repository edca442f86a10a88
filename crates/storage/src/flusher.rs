//! The background flusher: one thread, started on first use, that runs the flush jobs rolls hand
//! out (`Log::take_roll_flush`, log/flush.rs) in the order they were submitted, off the caller's
//! thread and without holding the log across the fsyncs. After a job ran, the log's lock is
//! taken again to move its recovery point (`Log::complete_flush`). Kafka runs the same flush on
//! its scheduler (`UnifiedLog.roll` -> `scheduleOnce("flush-log", ...)`).
//!
//! A job that fails (an fsync error) leaves the recovery point where it was: the segments stay
//! below it, so the next flush (`flush()`, close) fsyncs them again and reports the error. A log
//! dropped before its job ran is not kept alive: the job runs (its files are open) and its result
//! is dropped.
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::thread;

use crate::log::{FlushJob, Log};

/// A log shared between the thread that appends and the flusher.
pub type SharedLog = Arc<Mutex<Log>>;

struct Submitted {
    log: Weak<Mutex<Log>>,
    job: FlushJob,
}

fn sender() -> &'static Mutex<Sender<Submitted>> {
    static SENDER: OnceLock<Mutex<Sender<Submitted>>> = OnceLock::new();
    SENDER.get_or_init(|| {
        let (tx, rx) = channel::<Submitted>();
        thread::Builder::new()
            .name("ferrolog-flusher".into())
            .spawn(move || {
                for Submitted { log, job } in rx {
                    // What earlier jobs made durable since this one was made is not fsynced again.
                    let durable_to = log
                        .upgrade()
                        .map_or(i64::MIN, |l| lock(&l).recovery_point());
                    let Ok(flushed) = job.run_above(durable_to) else {
                        continue;
                    };
                    if let Some(log) = log.upgrade() {
                        lock(&log).complete_flush(flushed);
                    }
                }
            })
            .expect("spawn the ferrolog-flusher thread");
        Mutex::new(tx)
    })
}

/// The log under its lock, also after a panic elsewhere held it (the storage code does not
/// panic on any input; the log stays usable).
pub fn lock(log: &SharedLog) -> std::sync::MutexGuard<'_, Log> {
    log.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// After an append or a roll, with the log locked (`locked` is `shared`'s guard): hands the
/// flush of a roll that just happened to the flusher thread.
pub fn schedule_roll_flush(shared: &SharedLog, locked: &mut Log) {
    if let Some(job) = locked.take_roll_flush() {
        let submitted = Submitted {
            log: Arc::downgrade(shared),
            job,
        };
        // The receiver lives as long as the process: a send cannot fail.
        let _ = lock_sender().send(submitted);
    }
}

fn lock_sender() -> std::sync::MutexGuard<'static, Sender<Submitted>> {
    sender()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use tempfile::TempDir;

    use super::*;
    use crate::config::LogConfig;
    use crate::log::OpenOptions;
    use crate::test_util::batch;

    #[test]
    fn the_flusher_moves_the_recovery_point_to_each_roll_in_the_background() {
        let dir = TempDir::new().unwrap();
        let log = Log::open(OpenOptions {
            dir: dir.path().to_path_buf(),
            config: LogConfig {
                segment_bytes: 2048,
                segment_index_bytes: 4096,
                ..LogConfig::default()
            },
            recovery_point: 0,
            log_start_offset: 0,
            had_clean_shutdown: true,
        })
        .unwrap();
        let shared: SharedLog = Arc::new(Mutex::new(log));
        for _ in 0..100 {
            let mut log = lock(&shared);
            let next = log.log_end_offset();
            log.append_as_leader(&batch(next, 3, 40, 1_000), 0, 0)
                .unwrap();
            schedule_roll_flush(&shared, &mut log);
        }
        let active = lock(&shared).segments().last().unwrap().base_offset;
        assert!(active > 0);
        let deadline = Instant::now() + Duration::from_secs(10);
        while lock(&shared).recovery_point() != active {
            assert!(Instant::now() < deadline, "the flusher never caught up");
            thread::sleep(Duration::from_millis(5));
        }
        let log = lock(&shared);
        assert!(log.recovery_point() < log.log_end_offset());
    }
}

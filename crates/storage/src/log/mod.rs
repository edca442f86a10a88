//! One partition's log (Kafka's `UnifiedLog` over `LocalLog`): an ordered map of segments by
//! base offset, the last one active, plus the offsets around them:
//!
//! ```text
//! logStartOffset <= lastStableOffset <= highWatermark <= LEO;  recoveryPoint <= LEO (offsets below it are fsynced)
//! ```
//!
//! The methods are those of `RawLog` in ts/storage/types.ts, split by concern: opening and
//! recovery (`loader.rs`), appends (`append.rs`), reads and offset lookups (`read.rs`),
//! retention and truncation (`retention.rs`), flushing (`flush.rs`), the producer state and
//! transactions (`txn.rs`), a cleaning round (`clean.rs`) and its segment swap (`swap.rs`).
//! Nothing here prints: what
//! opening did is in [`RecoveryReport`].
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::LogConfig;
use crate::error::{IoContext, Result, StorageError};
use crate::fetch::LogOffsetMetadata;
use crate::leader_epoch::{EpochEntry, LeaderEpochFileCache, UNDEFINED_EPOCH_OFFSET};
use crate::segment::LogSegment;

mod append;
mod clean;
mod flush;
mod loader;
mod read;
mod retention;
mod swap;
#[cfg(test)]
mod tests;
mod txn;

pub use append::{AppendOrigin, LeaderBatches, LeaderChecks, LogAppendInfo};
pub use clean::{CleanOutcome, CleanRound, LogCleanRequest, LogCleanResult};
pub use flush::{FlushJob, FlushedTo};
pub use loader::{OpenOptions, RecoveryReport};

/// One segment as `segments()` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentInfo {
    pub base_offset: i64,
    /// The `.log` file.
    pub file: PathBuf,
    pub size: u32,
}

/// Kafka's `OffsetAndEpoch` as `endOffsetForEpoch` returns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEndOffset {
    pub epoch: i32,
    pub end_offset: i64,
}

#[derive(Debug)]
pub struct Log {
    dir: PathBuf,
    config: LogConfig,
    /// Never empty while open; the last one is the active segment.
    segments: BTreeMap<i64, LogSegment>,
    log_start_offset: i64,
    log_end_offset: i64,
    high_watermark: i64,
    recovery_point: i64,
    epochs: LeaderEpochFileCache,
    /// Producers, open transactions, `.snapshot` files (txn.rs).
    producers: txn::ProducerStateFiles,
    report: RecoveryReport,
    /// Counts truncations, so that a flush begun before one does not move the recovery point.
    truncations: u64,
    /// Segments created (their files added to the directory) since the log was opened, and
    /// how many of those a flush has made durable in the directory with an fsync of it.
    segments_created: u64,
    segments_synced: u64,
    /// The base offset of the segment the last roll started, until `take_roll_flush` hands out
    /// the flush of everything below it (flush.rs).
    roll_flush_upto: Option<i64>,
    /// Where the batch of the last read bound below the LEO starts (read.rs `bound_metadata`).
    bound_metadata: Cell<Option<LogOffsetMetadata>>,
    closed: bool,
    /// Set to stop a cleaning round in progress at its next group (clean.rs).
    cleaning: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Why the log is offline: a failed append could not be undone (append.rs). Every call
    /// then fails with LOG_OFFLINE until the log is opened again.
    offline: Option<String>,
}

impl Log {
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn config(&self) -> &LogConfig {
        &self.config
    }

    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset
    }

    pub fn log_end_offset(&self) -> i64 {
        self.log_end_offset
    }

    pub fn high_watermark(&self) -> i64 {
        self.high_watermark
    }

    pub fn recovery_point(&self) -> i64 {
        self.recovery_point
    }

    /// Sets the high watermark, clamped to [logStartOffset, LEO]; returns the value set.
    pub fn update_high_watermark(&mut self, hw: i64) -> i64 {
        self.high_watermark = hw.clamp(self.log_start_offset, self.log_end_offset);
        self.producers
            .manager
            .on_high_watermark_updated(self.high_watermark);
        self.high_watermark
    }

    pub fn latest_epoch(&self) -> Option<i32> {
        self.epochs.latest_epoch()
    }

    /// Kafka's `endOffsetForEpoch`: the largest epoch <= `epoch` and where it ends.
    pub fn end_offset_for_epoch(&self, epoch: i32) -> Option<EpochEndOffset> {
        let (epoch, end_offset) = self.epochs.end_offset_for(epoch, self.log_end_offset);
        (end_offset != UNDEFINED_EPOCH_OFFSET).then_some(EpochEndOffset { epoch, end_offset })
    }

    pub fn epoch_entries(&self) -> Vec<EpochEntry> {
        self.epochs.entries().to_vec()
    }

    pub fn segments(&self) -> Vec<SegmentInfo> {
        self.segments
            .values()
            .map(|s| SegmentInfo {
                base_offset: s.base_offset(),
                file: s.log_path().to_path_buf(),
                size: s.size(),
            })
            .collect()
    }

    /// What opening did.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.report
    }

    /// Kafka's `UnifiedLog.updateConfig`: the settings apply from the next use on (segment.bytes
    /// and segment.ms to the next roll decision, retention to the next check, max.message.bytes
    /// and message.timestamp.type to the next append, flush.messages to the next flush check).
    /// The index settings of existing segments stay as they were opened; new segments take the
    /// new ones, as in Kafka.
    pub fn update_config(&mut self, config: LogConfig) -> Result<()> {
        self.check_open()?;
        config.validate()?;
        self.config = config;
        Ok(())
    }

    /// Rolls a new segment at the LEO now (a no-op when the active segment is empty).
    pub fn roll(&mut self) -> Result<()> {
        self.check_open()?;
        self.roll_at(self.log_end_offset, now_ms())
    }

    /// Trims the indexes, flushes and closes the files. Later calls fail with LOG_CLOSED;
    /// closing twice is fine. An offline log is closed without touching its files, and says
    /// so (LOG_OFFLINE): it was not closed cleanly.
    pub fn close(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.cancel_cleaning();
        if let Some(why) = &self.offline {
            let e = StorageError::LogOffline(why.clone());
            self.segments.clear();
            self.closed = true;
            return Err(e);
        }
        let active = self.active_mut();
        active.on_become_inactive()?;
        for (file, path) in active.files() {
            flush::sync_all(file.as_ref(), &path)?;
        }
        // Kafka's close: a producer snapshot at the LEO, so the next open reads no batch.
        if let Some(path) = self.producers.take_snapshot(self.log_end_offset) {
            flush::sync_all(None, &path)?;
        }
        self.flush()?;
        self.segments.clear();
        self.closed = true;
        Ok(())
    }

    /// Closes the log (without flushing) and removes its directory.
    pub fn delete(&mut self) -> Result<()> {
        self.cancel_cleaning();
        self.segments.clear();
        self.closed = true;
        match fs::remove_dir_all(&self.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(StorageError::io("delete", &self.dir, e))
            }
            _ => Ok(()),
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Why the log is offline, if it is.
    pub fn offline_reason(&self) -> Option<&str> {
        self.offline.as_deref()
    }

    /// LOG_CLOSED once closed, LOG_OFFLINE while offline: what every change of the log checks.
    pub fn check_open(&self) -> Result<()> {
        if self.closed {
            return Err(StorageError::LogClosed(self.dir.display().to_string()));
        }
        if let Some(why) = &self.offline {
            return Err(StorageError::LogOffline(why.clone()));
        }
        Ok(())
    }

    fn active(&self) -> &LogSegment {
        self.segments
            .values()
            .next_back()
            .expect("an open log has a segment")
    }

    fn active_mut(&mut self) -> &mut LogSegment {
        self.segments
            .values_mut()
            .next_back()
            .expect("an open log has a segment")
    }

    /// The segment with the largest base offset <= `offset`.
    fn floor_segment(&self, offset: i64) -> Option<&LogSegment> {
        self.segments.range(..=offset).next_back().map(|(_, s)| s)
    }

    /// Kafka's `LocalLog.roll`: the active segment becomes inactive (final time index entry,
    /// indexes trimmed) and a new one starts at `base_offset`. If that fails (a full disk) the
    /// active segment stays active as it was. The segments below it are now complete:
    /// `take_roll_flush` hands out their flush (Kafka's `UnifiedLog.roll` schedules
    /// `flushUptoOffsetExclusive(newSegment.baseOffset)`).
    fn roll_at(&mut self, base_offset: i64, now_ms: i64) -> Result<()> {
        let active = self.active_mut();
        if active.is_empty() && active.base_offset() == base_offset {
            return Ok(());
        }
        if base_offset <= active.base_offset() {
            return Err(StorageError::InvalidArgument(format!(
                "cannot roll a segment at {base_offset}: the active segment starts at {}",
                active.base_offset()
            )));
        }
        let mark = active.mark();
        let rolled = active
            .on_become_inactive()
            .and_then(|()| LogSegment::create(&self.dir, base_offset, &self.config, now_ms));
        let segment = match rolled {
            Ok(segment) => segment,
            Err(e) => {
                // The roll's error is the one to report; if this fails too, an append's
                // rollback (or the log going offline) follows.
                let _ = self.active_mut().rollback(&mark);
                return Err(e);
            }
        };
        self.segments.insert(base_offset, segment);
        self.segments_created += 1;
        self.roll_flush_upto = Some(base_offset);
        self.producers.take_snapshot(base_offset);
        Ok(())
    }

    /// Drops the cached position of the read bound: batches were truncated or deleted.
    fn forget_bound_metadata(&mut self) {
        self.bound_metadata.set(None);
    }

    /// Removes the segments at these base offsets and deletes their files, with the producer
    /// snapshot at each base (Kafka's `removeAndMarkSnapshotForDeletion`).
    fn delete_segments(&mut self, bases: &[i64]) -> Result<()> {
        self.forget_bound_metadata();
        for base in bases {
            if let Some(segment) = self.segments.remove(base) {
                segment.delete()?;
            }
            self.producers.delete_snapshot(*base)?;
        }
        Ok(())
    }
}

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

pub(crate) fn create_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).ctx("create log directory", dir)
}

//! Flushing without holding the log across fsync: `prepare_flush` (under the caller's lock)
//! collects the files of the segments that may hold unflushed data and the LEO at that moment;
//! `FlushJob::run` fsyncs them (on a worker thread, no lock); `complete_flush` (under the lock
//! again) moves the recovery point to that LEO, unless the log was truncated in between.
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use super::Log;
use crate::error::{IoContext, Result};
use crate::leader_epoch::sync_dir;

/// The fsyncs of one flush; `Send`, holds no reference to the log.
#[derive(Debug)]
pub struct FlushJob {
    files: Vec<(Arc<File>, PathBuf)>,
    /// The directory, when a segment created since the last flush must be made durable in it.
    dir: Option<PathBuf>,
    flushed_to: FlushedTo,
}

/// What a finished flush made durable, for [`Log::complete_flush`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushedTo {
    pub log_end_offset: i64,
    truncations: u64,
    /// The log's `segments_created` when the flush began: the directory holds them durably
    /// once it ran (when `dir` was set; else they were durable already).
    segments_created: u64,
}

impl FlushJob {
    /// The LEO this flush makes durable.
    pub fn log_end_offset(&self) -> i64 {
        self.flushed_to.log_end_offset
    }

    /// Whether it fsyncs the log's directory (a segment was created since the last flush).
    pub fn syncs_dir(&self) -> bool {
        self.dir.is_some()
    }

    /// fsyncs the files (and the directory if needed).
    pub fn run(self) -> Result<FlushedTo> {
        for (file, path) in &self.files {
            file.sync_data().ctx("fsync", path)?;
        }
        if let Some(dir) = &self.dir {
            sync_dir(dir)?;
        }
        Ok(self.flushed_to)
    }
}

impl Log {
    /// The files of every segment from the one holding the recovery point on (none when the
    /// recovery point is the LEO already), and the directory when a segment was created since
    /// the last flush: also when it holds no data yet (the empty segment retention or
    /// `truncate_fully_and_start_at` leaves, at a recovery point equal to the LEO).
    pub fn prepare_flush(&mut self) -> Result<FlushJob> {
        self.check_open()?;
        let from = self
            .floor_segment(self.recovery_point)
            .map_or(i64::MIN, |s| s.base_offset());
        let mut files = Vec::new();
        if self.recovery_point < self.log_end_offset {
            for segment in self.segments.range(from..).map(|(_, s)| s) {
                files.extend(segment.files());
            }
        }
        Ok(FlushJob {
            files,
            dir: (self.segments_created > self.segments_synced).then(|| self.dir.clone()),
            flushed_to: FlushedTo {
                log_end_offset: self.log_end_offset,
                truncations: self.truncations,
                segments_created: self.segments_created,
            },
        })
    }

    /// Moves the recovery point up to what the flush made durable.
    pub fn complete_flush(&mut self, flushed: FlushedTo) {
        self.segments_synced = self.segments_synced.max(flushed.segments_created);
        if flushed.truncations == self.truncations && flushed.log_end_offset > self.recovery_point {
            self.recovery_point = flushed.log_end_offset.min(self.log_end_offset);
        }
    }

    /// fsyncs every segment with unflushed data and moves the recovery point to the LEO.
    pub fn flush(&mut self) -> Result<()> {
        let job = self.prepare_flush()?;
        let flushed = job.run()?;
        self.complete_flush(flushed);
        Ok(())
    }
}

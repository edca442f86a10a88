//! Flushing without holding the log across fsync: `prepare_flush` (under the caller's lock)
//! collects the files of the segments that may hold unflushed data and the LEO at that moment;
//! `FlushJob::run` fsyncs them (on a worker thread, no lock); `complete_flush` (under the lock
//! again) moves the recovery point to that LEO, unless the log was truncated in between.
//!
//! A roll makes the segments below the new one complete: `take_roll_flush` hands out the job
//! that fsyncs them (and the directory) and moves the recovery point to the new segment's base
//! offset, for the caller to run in the background (Kafka's `UnifiedLog.roll` schedules
//! `flushUptoOffsetExclusive(newSegment.baseOffset)`). So the recovery point follows the rolls
//! even with flush.messages and flush.ms at their defaults (never), and recovery after a crash
//! walks only the active segment (crates/binding runs these jobs on its flusher thread).
//!
//! A flush also writes the leader epochs appended since the checkpoint was last written, after
//! its fsyncs and before the recovery point moves (leader_epoch.rs says why).
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use super::Log;
use crate::error::{IoContext, Result};
use crate::leader_epoch::{sync_dir, CheckpointWrite};

/// The fsyncs of one flush; `Send`, holds no reference to the log.
#[derive(Debug)]
pub struct FlushJob {
    /// Each file with its descriptor where the segment has it open; the others (a sealed
    /// segment's, closed: segment/log_file.rs) are opened by path for their fsync, which applies
    /// to the file whatever descriptor it goes through. One deleted meanwhile is skipped.
    files: Vec<(Option<Arc<File>>, PathBuf)>,
    /// For each file, the offset its segment ends at (the next segment's base offset, or the
    /// LEO then for the last): once the recovery point reaches it, the file is durable already.
    ends: Vec<i64>,
    /// The directory, when a segment created since the last flush must be made durable in it.
    dir: Option<PathBuf>,
    /// The leader epochs appended since the checkpoint was last written, written once the
    /// files are durable (leader_epoch.rs).
    epochs: Option<CheckpointWrite>,
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
    /// The offset below which this flush makes the log durable (the LEO, or for a roll's
    /// flush the new segment's base offset).
    pub fn log_end_offset(&self) -> i64 {
        self.flushed_to.log_end_offset
    }

    /// Whether it fsyncs the log's directory (a segment was created since the last flush).
    pub fn syncs_dir(&self) -> bool {
        self.dir.is_some()
    }

    /// The files it fsyncs.
    pub fn files(&self) -> impl Iterator<Item = &std::path::Path> {
        self.files.iter().map(|(_, path)| path.as_path())
    }

    /// fsyncs the files (and the directory if needed).
    pub fn run(self) -> Result<FlushedTo> {
        self.run_above(i64::MIN)
    }

    /// `run`, skipping the files of segments that end at or below `durable_to` (the log's
    /// recovery point now: an earlier job made them durable). Roll flushes queued behind a burst
    /// of rolls each cover the segments from the recovery point they saw; this keeps the later
    /// ones from fsyncing again what the earlier ones did.
    pub fn run_above(self, durable_to: i64) -> Result<FlushedTo> {
        for ((file, path), &end) in self.files.iter().zip(&self.ends) {
            if end <= durable_to {
                continue;
            }
            sync_data(file.as_ref(), path)?;
        }
        if let Some(dir) = &self.dir {
            sync_dir(dir)?;
        }
        if let Some(epochs) = self.epochs {
            epochs.run()?;
        }
        Ok(self.flushed_to)
    }
}

/// fsyncs the data of `path` through `file`, or through a new descriptor when there is none
/// (nothing to do when the file was deleted meanwhile: it holds nothing to make durable).
pub(crate) fn sync_data(file: Option<&Arc<File>>, path: &std::path::Path) -> Result<()> {
    sync(file, path, File::sync_data)
}

/// `sync_data` with the file's metadata too (`fsync` rather than `fdatasync`).
pub(crate) fn sync_all(file: Option<&Arc<File>>, path: &std::path::Path) -> Result<()> {
    sync(file, path, File::sync_all)
}

fn sync(
    file: Option<&Arc<File>>,
    path: &std::path::Path,
    how: fn(&File) -> std::io::Result<()>,
) -> Result<()> {
    match file {
        Some(file) => how(file).ctx("fsync", path),
        None => match File::open(path) {
            Ok(file) => how(&file).ctx("fsync", path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(crate::error::StorageError::io("fsync", path, e)),
        },
    }
}

impl Log {
    /// The files of every segment from the one holding the recovery point on (none when the
    /// recovery point is the LEO already), and the directory when a segment was created since
    /// the last flush: also when it holds no data yet (the empty segment retention or
    /// `truncate_fully_and_start_at` leaves, at a recovery point equal to the LEO).
    pub fn prepare_flush(&mut self) -> Result<FlushJob> {
        self.check_open()?;
        Ok(self.flush_job_upto(self.log_end_offset))
    }

    /// The flush of the segments below the one the last roll started (`None` if no roll happened
    /// since the last call, the log is closed, or they are flushed already). A later roll's job
    /// covers the earlier ones'.
    pub fn take_roll_flush(&mut self) -> Option<FlushJob> {
        let upto = self.roll_flush_upto.take()?;
        if self.closed || upto <= self.recovery_point {
            return None;
        }
        Some(self.flush_job_upto(upto.min(self.log_end_offset)))
    }

    /// The job that makes offsets below `upto` durable: the segments from the one holding the
    /// recovery point to the last one starting below `upto` (every one from there when `upto`
    /// is the LEO).
    fn flush_job_upto(&self, upto: i64) -> FlushJob {
        let from = self
            .floor_segment(self.recovery_point)
            .map_or(i64::MIN, |s| s.base_offset());
        let mut files = Vec::new();
        let mut ends = Vec::new();
        if self.recovery_point < upto {
            let whole_log = upto >= self.log_end_offset;
            let mut segments = self.segments.range(from..).map(|(_, s)| s).peekable();
            while let Some(segment) = segments.next() {
                if !(whole_log || segment.base_offset() < upto) {
                    break;
                }
                let end = segments
                    .peek()
                    .map_or(self.log_end_offset, |next| next.base_offset());
                for file in segment.files() {
                    files.push(file);
                    ends.push(end);
                }
            }
        }
        FlushJob {
            files,
            ends,
            dir: (self.segments_created > self.segments_synced).then(|| self.dir.clone()),
            epochs: self.epochs.flush_write(upto),
            flushed_to: FlushedTo {
                log_end_offset: upto,
                truncations: self.truncations,
                segments_created: self.segments_created,
            },
        }
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

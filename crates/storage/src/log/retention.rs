//! Retention, the log start offset and truncation (Kafka's `deleteOldSegments`,
//! `maybeIncrementLogStartOffset`, `truncateTo`, `truncateFullyAndStartAt`).
//!
//! Retention deletes whole segments from the oldest on, the active one included, as Kafka's
//! `deletableSegments` does: a segment goes only when its next offset (the next segment's base,
//! or the LEO for the active segment) is at most the high watermark, so the log start offset
//! cannot pass it; an empty active segment never goes, and the log start offset rule needs a next
//! segment, so it never takes the active one. Deleting every segment first rolls a new empty
//! active segment at the LEO. Deleting raises the log start offset to the first remaining
//! segment's base (the LEO when everything went).
//!
//! A segment's `.txnindex` and the `.snapshot` at its base offset go with it. Truncation cuts
//! the `.txnindex` of the segment it cuts (entries whose marker is at or past the offset),
//! deletes the snapshots above the new LEO and reloads the producer state to it (txn.rs).
use super::{now_ms, Log};
use crate::error::{Result, StorageError};
use crate::segment::LogSegment;

impl Log {
    /// Retention by log start offset, size (retention.bytes) and time (retention.ms), in that
    /// order; returns the number of segments deleted.
    pub fn delete_old_segments(&mut self, now_ms: i64) -> Result<usize> {
        self.check_open()?;
        let log_start_offset = self.log_start_offset;
        let mut deleted = self.delete_while(|_, next| {
            Ok(next.is_some_and(|next| next.base_offset() <= log_start_offset))
        })?;
        let retention_bytes = self.config.retention_bytes;
        let total: u64 = self.segments.values().map(|s| s.size() as u64).sum();
        if retention_bytes >= 0 && total >= retention_bytes as u64 {
            let mut excess = total - retention_bytes as u64;
            deleted += self.delete_while(|segment, _| {
                let size = segment.size() as u64;
                let breached = excess >= size;
                if breached {
                    excess -= size;
                }
                Ok(breached)
            })?;
        }
        let retention_ms = self.config.retention_ms;
        if retention_ms >= 0 {
            deleted += self.delete_while(|segment, _| {
                Ok(now_ms - segment.largest_timestamp()? > retention_ms)
            })?;
        }
        Ok(deleted)
    }

    /// Kafka's `deleteOldSegments(predicate)`: deletes segments from the oldest while
    /// `breached(segment, next segment)` holds (no next segment for the active one) and the
    /// segment ends at or below the high watermark. When that is every segment, a new empty
    /// active segment is rolled at the LEO first.
    fn delete_while(
        &mut self,
        mut breached: impl FnMut(&LogSegment, Option<&LogSegment>) -> Result<bool>,
    ) -> Result<usize> {
        let mut doomed = Vec::new();
        let segments: Vec<&LogSegment> = self.segments.values().collect();
        for (i, &segment) in segments.iter().enumerate() {
            let next = segments.get(i + 1).copied();
            let next_offset = next.map_or(self.log_end_offset, LogSegment::base_offset);
            if self.high_watermark < next_offset
                || (next.is_none() && segment.is_empty())
                || !breached(segment, next)?
            {
                break;
            }
            doomed.push(segment.base_offset());
        }
        if doomed.is_empty() {
            return Ok(0);
        }
        if doomed.len() == self.segments.len() {
            // The active segment is not empty, so the LEO is above its base.
            self.roll_at(self.log_end_offset, now_ms())?;
        }
        self.delete_segments(&doomed)?;
        let first_base = *self.segments.keys().next().expect("a segment stays");
        self.raise_log_start_offset(first_base)?;
        Ok(doomed.len())
    }

    /// DeleteRecords: raises the log start offset to `offset` (at most the high watermark).
    /// The segments below it go at the next `delete_old_segments`.
    pub fn maybe_increment_log_start_offset(&mut self, offset: i64) -> Result<()> {
        self.check_open()?;
        if offset > self.high_watermark {
            return Err(StorageError::OffsetOutOfRange(format!(
                "cannot raise the log start offset of {} to {offset}, above the high watermark {}",
                self.dir.display(),
                self.high_watermark
            )));
        }
        self.raise_log_start_offset(offset)
    }

    fn raise_log_start_offset(&mut self, offset: i64) -> Result<()> {
        if offset <= self.log_start_offset {
            return Ok(());
        }
        self.log_start_offset = offset;
        self.high_watermark = self.high_watermark.max(offset);
        self.producers
            .manager
            .on_high_watermark_updated(self.high_watermark);
        self.recovery_point = self.recovery_point.max(offset);
        self.epochs.truncate_from_start(offset)
    }

    /// Drops every offset >= `offset`: later segments are deleted and the floor segment cut at
    /// the batch holding `offset` (the LEO becomes that batch's base, `offset` itself when it
    /// is a batch boundary). No effect at or past the LEO.
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        self.check_open()?;
        if offset < 0 {
            return Err(StorageError::InvalidArgument(format!(
                "cannot truncate to negative offset {offset}"
            )));
        }
        if offset >= self.log_end_offset {
            return Ok(());
        }
        if *self.segments.keys().next().expect("a segment") > offset {
            return self.truncate_fully_and_start_at(offset);
        }
        self.truncations += 1;
        self.forget_bound_metadata();
        let later: Vec<i64> = self.segments.range(offset + 1..).map(|(&b, _)| b).collect();
        self.delete_segments(&later)?;
        let active = self.active_mut();
        active.truncate_to(offset)?;
        let end = active.read_next_offset()?;
        self.log_end_offset = end;
        self.epochs.truncate_from_end(end)?;
        self.log_start_offset = self.log_start_offset.min(end);
        self.high_watermark = self.high_watermark.min(end);
        self.recovery_point = self.recovery_point.min(end);
        // Kafka's truncateAndReload: the producer state as of the new LEO, from a snapshot below.
        self.producers.delete_snapshots_above(end)?;
        self.producers
            .load_to(&self.segments, end, true, None, &mut self.report.messages)?;
        self.producers
            .manager
            .on_high_watermark_updated(self.high_watermark);
        Ok(())
    }

    /// Deletes every segment and starts empty at `offset`: log start = LEO = HW = `offset`.
    pub fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<()> {
        self.check_open()?;
        if offset < 0 {
            return Err(StorageError::InvalidArgument(format!(
                "cannot start a log at negative offset {offset}"
            )));
        }
        self.truncations += 1;
        self.forget_bound_metadata();
        let all: Vec<i64> = self.segments.keys().copied().collect();
        self.delete_segments(&all)?;
        let segment = LogSegment::create(&self.dir, offset, &self.config, now_ms())?;
        self.segments.insert(offset, segment);
        self.segments_created += 1;
        self.epochs.clear()?;
        self.log_start_offset = offset;
        self.log_end_offset = offset;
        self.high_watermark = offset;
        self.recovery_point = offset;
        self.producers.delete_snapshots_above(-1)?;
        self.producers.manager.reset(Vec::new(), offset);
        self.producers.set_last_snap_offset(offset);
        Ok(())
    }
}

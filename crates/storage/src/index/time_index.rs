//! The time index (`<base>.timeindex`, Kafka's `TimeIndex`): sparse entries mapping a timestamp
//! to the offset of the batch that first reached it.
//!
//! ```text
//! entry (12 bytes, big-endian):  timestamp i64  |  relativeOffset u32 (offset - base)
//! ```
//!
//! Timestamps strictly increase, offsets never decrease. As in Kafka, the index counts as full
//! one entry early, keeping a slot for the entry written when the segment becomes inactive. A
//! preallocated file ends at the first entry after the first that is all zero (timestamp 0,
//! relative offset 0).
use std::path::Path;

use super::{be_i64, be_u32, partition_point, IndexFile};
use crate::error::{Result, StorageError};

pub const TIME_INDEX_ENTRY_SIZE: usize = 12;
/// Kafka's `RecordBatch.NO_TIMESTAMP`.
pub const NO_TIMESTAMP: i64 = -1;

/// Kafka's `TimestampOffset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampOffset {
    pub timestamp: i64,
    pub offset: i64,
}

#[derive(Debug)]
pub struct TimeIndex {
    base_offset: i64,
    file: IndexFile,
}

impl TimeIndex {
    /// Opens or creates `path`; a new file is preallocated to `max_index_bytes`.
    pub fn open(path: &Path, base_offset: i64, max_index_bytes: usize) -> Result<TimeIndex> {
        TimeIndex::open_with(path, base_offset, max_index_bytes, true)
    }

    /// `open`, keeping the descriptor only with `keep_open` (an active segment's index).
    pub fn open_with(
        path: &Path,
        base_offset: i64,
        max_index_bytes: usize,
        keep_open: bool,
    ) -> Result<TimeIndex> {
        let file = IndexFile::open(
            path,
            TIME_INDEX_ENTRY_SIZE,
            max_index_bytes,
            |n, e| n > 0 && e.iter().all(|&b| b == 0),
            keep_open,
        )?;
        Ok(TimeIndex { base_offset, file })
    }

    pub fn entries(&self) -> usize {
        self.file.entries()
    }

    pub fn entry(&self, n: usize) -> TimestampOffset {
        let e = self.file.entry(n);
        TimestampOffset {
            timestamp: be_i64(e),
            offset: self.base_offset + be_u32(&e[8..]) as i64,
        }
    }

    /// Full one entry before the file is, as Kafka's `TimeIndex.isFull`.
    pub fn is_full(&self) -> bool {
        self.file.entries() + 1 >= self.file.max_entries()
    }

    /// The last entry, or (NO_TIMESTAMP, base) when there is none.
    pub fn last_entry(&self) -> TimestampOffset {
        match self.entries() {
            0 => TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: self.base_offset,
            },
            n => self.entry(n - 1),
        }
    }

    /// The entry with the largest timestamp <= `target`, else (NO_TIMESTAMP, base): where a scan
    /// for the first record at or after `target` may start.
    pub fn lookup(&self, target: i64) -> TimestampOffset {
        match partition_point(self.entries(), |n| self.entry(n).timestamp <= target) {
            0 => TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: self.base_offset,
            },
            n => self.entry(n - 1),
        }
    }

    /// Kafka's `maybeAppend`: adds (timestamp, offset) if the timestamp is greater than the last
    /// entry's. `skip_full_check` is for the entry written when the segment becomes inactive.
    pub fn maybe_append(
        &mut self,
        timestamp: i64,
        offset: i64,
        skip_full_check: bool,
    ) -> Result<()> {
        let last = self.last_entry();
        if timestamp <= last.timestamp {
            return Ok(());
        }
        if !skip_full_check && self.is_full() {
            return Err(self.refused(timestamp, offset, "the index is full"));
        }
        if self.entries() > 0 && offset < last.offset {
            return Err(self.refused(timestamp, offset, "its offset is below the last entry's"));
        }
        let relative = offset - self.base_offset;
        if !(0..=i32::MAX as i64).contains(&relative) {
            return Err(self.refused(timestamp, offset, "its relative offset does not fit"));
        }
        let mut entry = [0u8; TIME_INDEX_ENTRY_SIZE];
        entry[..8].copy_from_slice(&timestamp.to_be_bytes());
        entry[8..].copy_from_slice(&(relative as u32).to_be_bytes());
        self.file.append(&entry)
    }

    fn refused(&self, timestamp: i64, offset: i64, why: &str) -> StorageError {
        StorageError::InvalidArgument(format!(
            "time index {}: cannot add ({timestamp}, {offset}): {why}",
            self.file.path().display()
        ))
    }

    /// Removes every entry whose offset is >= `offset`.
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        let keep = partition_point(self.entries(), |n| self.entry(n).offset < offset);
        self.file.truncate_to_entries(keep)
    }

    /// Kafka's sanity check, plus order: a whole number of entries, timestamps strictly and
    /// offsets weakly increasing. Returns the reason.
    pub fn sanity_check(&self) -> std::result::Result<(), String> {
        if self.file.misaligned_on_open() {
            return Err("its length is not a whole number of entries".into());
        }
        for n in 1..self.entries() {
            let (p, e) = (self.entry(n - 1), self.entry(n));
            if e.timestamp <= p.timestamp || e.offset < p.offset {
                return Err(format!(
                    "entry {n} ({}, {}) does not increase",
                    e.timestamp, e.offset
                ));
            }
        }
        Ok(())
    }

    pub fn reset(&mut self) -> Result<()> {
        self.file.reset()
    }

    pub fn trim(&mut self) -> Result<()> {
        self.file.trim()
    }

    pub fn resize_to_max(&mut self) -> Result<()> {
        self.file.resize_to_max()
    }

    /// See `IndexFile::try_resize_to_max`.
    pub fn try_resize_to_max(&mut self) -> Option<StorageError> {
        self.file.try_resize_to_max()
    }

    /// Keeps the first `n` entries (a rolled-back append drops the ones it added).
    pub fn truncate_to_entries(&mut self, n: usize) -> Result<()> {
        self.file.truncate_to_entries(n)
    }

    /// Keeps a descriptor open (the segment became active).
    pub fn open_file(&mut self) -> Result<()> {
        self.file.open_file()
    }

    /// Drops the descriptor (the segment is sealed).
    pub fn close_file(&mut self) {
        self.file.close_file()
    }

    pub(crate) fn file(&self) -> &IndexFile {
        &self.file
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    fn index(dir: &TempDir, max_bytes: usize) -> TimeIndex {
        TimeIndex::open(
            &dir.path().join("00000000000000000100.timeindex"),
            100,
            max_bytes,
        )
        .unwrap()
    }

    #[test]
    fn only_growing_timestamps_are_appended() {
        let dir = TempDir::new().unwrap();
        let mut idx = index(&dir, 1200);
        idx.maybe_append(1000, 105, false).unwrap();
        idx.maybe_append(1000, 106, false).unwrap();
        idx.maybe_append(999, 107, false).unwrap();
        idx.maybe_append(2000, 107, false).unwrap();
        assert_eq!(idx.entries(), 2);
        assert_eq!(
            idx.last_entry(),
            TimestampOffset {
                timestamp: 2000,
                offset: 107
            }
        );
    }

    #[test]
    fn an_empty_index_has_no_timestamp_at_the_base() {
        let dir = TempDir::new().unwrap();
        let idx = index(&dir, 1200);
        assert_eq!(
            idx.last_entry(),
            TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: 100
            }
        );
        assert_eq!(
            idx.lookup(5),
            TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: 100
            }
        );
    }

    #[test]
    fn lookup_finds_the_largest_timestamp_at_or_below_the_target() {
        let dir = TempDir::new().unwrap();
        let mut idx = index(&dir, 1200);
        idx.maybe_append(1000, 105, false).unwrap();
        idx.maybe_append(2000, 110, false).unwrap();
        assert_eq!(idx.lookup(999).offset, 100);
        assert_eq!(
            idx.lookup(1500),
            TimestampOffset {
                timestamp: 1000,
                offset: 105
            }
        );
        assert_eq!(idx.lookup(2000).offset, 110);
    }

    #[test]
    fn full_one_entry_early_but_the_closing_entry_still_fits() {
        let dir = TempDir::new().unwrap();
        let mut idx = index(&dir, 24);
        idx.maybe_append(1000, 105, false).unwrap();
        assert!(idx.is_full());
        assert!(idx.maybe_append(2000, 106, false).is_err());
        idx.maybe_append(2000, 106, true).unwrap();
        assert_eq!(idx.entries(), 2);
    }

    #[test]
    fn a_preallocated_index_after_a_crash_ends_at_its_zero_tail() {
        let dir = TempDir::new().unwrap();
        let mut idx = index(&dir, 1200);
        idx.maybe_append(1000, 105, false).unwrap();
        idx.maybe_append(2000, 110, false).unwrap();
        drop(idx);
        let again = index(&dir, 1200);
        assert_eq!(again.entries(), 2);
        assert_eq!(again.sanity_check(), Ok(()));
    }

    #[test]
    fn truncation_drops_entries_at_or_above_the_offset() {
        let dir = TempDir::new().unwrap();
        let mut idx = index(&dir, 1200);
        idx.maybe_append(1000, 105, false).unwrap();
        idx.maybe_append(2000, 110, false).unwrap();
        idx.truncate_to(110).unwrap();
        assert_eq!(idx.entries(), 1);
        idx.trim().unwrap();
        assert_eq!(std::fs::metadata(idx.file().path()).unwrap().len(), 12);
    }
}

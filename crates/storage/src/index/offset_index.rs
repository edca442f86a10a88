//! The offset index (`<base>.index`, Kafka's `OffsetIndex`): sparse entries mapping an offset to
//! the position in the `.log` of the batch holding it.
//!
//! ```text
//! entry (8 bytes, big-endian):  relativeOffset u32 (offset - base)  |  position u32
//! ```
//!
//! Entries are strictly increasing in both fields. The entry for a batch is (its lastOffset, the
//! position where it starts). A preallocated file ends at the first entry after the first whose
//! relative offset is 0 (docs/storage.md): no batch yields relative offset 0 (the first batch
//! of a segment is never indexed, later batches end past the base), so only the zero tail of a
//! file that was never trimmed looks like that.
use std::path::Path;

use super::{be_u32, partition_point, IndexFile};
use crate::error::{Result, StorageError};

pub const OFFSET_INDEX_ENTRY_SIZE: usize = 8;

/// Kafka's `OffsetPosition`: an absolute offset and a position in the segment's `.log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetPosition {
    pub offset: i64,
    pub position: u32,
}

#[derive(Debug)]
pub struct OffsetIndex {
    base_offset: i64,
    file: IndexFile,
}

impl OffsetIndex {
    /// Opens or creates `path`; a new file is preallocated to `max_index_bytes`.
    pub fn open(path: &Path, base_offset: i64, max_index_bytes: usize) -> Result<OffsetIndex> {
        OffsetIndex::open_with(path, base_offset, max_index_bytes, true)
    }

    /// `open`, keeping the descriptor only with `keep_open` (an active segment's index).
    pub fn open_with(
        path: &Path,
        base_offset: i64,
        max_index_bytes: usize,
        keep_open: bool,
    ) -> Result<OffsetIndex> {
        let file = IndexFile::open(
            path,
            OFFSET_INDEX_ENTRY_SIZE,
            max_index_bytes,
            |n, e| n > 0 && be_u32(e) == 0,
            keep_open,
        )?;
        Ok(OffsetIndex { base_offset, file })
    }

    pub fn entries(&self) -> usize {
        self.file.entries()
    }

    pub fn entry(&self, n: usize) -> OffsetPosition {
        let e = self.file.entry(n);
        OffsetPosition {
            offset: self.base_offset + be_u32(e) as i64,
            position: be_u32(&e[4..]),
        }
    }

    pub fn is_full(&self) -> bool {
        self.file.entries() >= self.file.max_entries()
    }

    /// The offset of the last entry, or the base offset when there is none.
    pub fn last_offset(&self) -> i64 {
        match self.entries() {
            0 => self.base_offset,
            n => self.entry(n - 1).offset,
        }
    }

    /// Whether `offset` fits an entry: `offset - base` in [0, i32::MAX] as Kafka requires.
    pub fn can_append_offset(&self, offset: i64) -> bool {
        let relative = offset - self.base_offset;
        (0..=i32::MAX as i64).contains(&relative)
    }

    /// The entry with the largest offset <= `target`, else (base, 0).
    pub fn lookup(&self, target: i64) -> OffsetPosition {
        self.lookup_with_next(target).0
    }

    /// `lookup(target)` and the entry after it (the first with an offset above `target`), if
    /// any: the batch holding `target` starts between the two positions.
    pub fn lookup_with_next(&self, target: i64) -> (OffsetPosition, Option<OffsetPosition>) {
        let n = partition_point(self.entries(), |n| self.entry(n).offset <= target);
        let floor = match n {
            0 => OffsetPosition {
                offset: self.base_offset,
                position: 0,
            },
            n => self.entry(n - 1),
        };
        (floor, (n < self.entries()).then(|| self.entry(n)))
    }

    /// Kafka's `fetchUpperBoundOffset`: the offset of the first entry whose position is at
    /// least `position`, if any.
    pub fn first_at_or_after_position(&self, position: u32) -> Option<i64> {
        let n = partition_point(self.entries(), |n| self.entry(n).position < position);
        (n < self.entries()).then(|| self.entry(n).offset)
    }

    /// Adds an entry; `offset` must be greater than the last entry's and the index not full.
    pub fn append(&mut self, offset: i64, position: u32) -> Result<()> {
        if self.is_full() {
            return Err(self.refused(offset, "the index is full"));
        }
        if self.entries() > 0 && offset <= self.last_offset() {
            return Err(self.refused(offset, "it is not above the last entry"));
        }
        if !self.can_append_offset(offset) || offset == self.base_offset {
            return Err(self.refused(offset, "its relative offset does not fit"));
        }
        let mut entry = [0u8; OFFSET_INDEX_ENTRY_SIZE];
        entry[..4].copy_from_slice(&((offset - self.base_offset) as u32).to_be_bytes());
        entry[4..].copy_from_slice(&position.to_be_bytes());
        self.file.append(&entry)
    }

    fn refused(&self, offset: i64, why: &str) -> StorageError {
        StorageError::InvalidArgument(format!(
            "offset index {}: cannot add offset {offset}: {why}",
            self.file.path().display()
        ))
    }

    /// Removes every entry with offset >= `offset`.
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        let keep = partition_point(self.entries(), |n| self.entry(n).offset < offset);
        self.file.truncate_to_entries(keep)
    }

    /// Kafka's sanity check, plus order: a whole number of entries, offsets and positions
    /// strictly increasing, positions inside a `.log` of `log_size` bytes. Returns the reason.
    pub fn sanity_check(&self, log_size: u32) -> std::result::Result<(), String> {
        if self.file.misaligned_on_open() {
            return Err("its length is not a whole number of entries".into());
        }
        let mut prev: Option<OffsetPosition> = None;
        for n in 0..self.entries() {
            let e = self.entry(n);
            if e.position >= log_size {
                return Err(format!(
                    "entry {n} points at position {} past the log's {log_size} bytes",
                    e.position
                ));
            }
            if let Some(p) = prev {
                if e.offset <= p.offset || e.position <= p.position {
                    return Err(format!(
                        "entry {n} ({}, {}) does not increase",
                        e.offset, e.position
                    ));
                }
            }
            prev = Some(e);
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

    fn index(dir: &TempDir, max_bytes: usize) -> OffsetIndex {
        OffsetIndex::open(
            &dir.path().join("00000000000000000100.index"),
            100,
            max_bytes,
        )
        .unwrap()
    }

    #[test]
    fn a_new_index_is_preallocated_to_whole_entries() {
        let dir = TempDir::new().unwrap();
        let idx = index(&dir, 1000);
        assert_eq!(
            std::fs::metadata(idx.file().path()).unwrap().len(),
            1000 / 8 * 8
        );
        assert_eq!(idx.entries(), 0);
        assert!(!idx.is_full());
    }

    #[test]
    fn lookup_finds_the_largest_entry_at_or_below_the_target() {
        let dir = TempDir::new().unwrap();
        let mut idx = index(&dir, 1000);
        idx.append(110, 500).unwrap();
        idx.append(120, 900).unwrap();
        assert_eq!(
            idx.lookup(99),
            OffsetPosition {
                offset: 100,
                position: 0
            }
        );
        assert_eq!(
            idx.lookup(109),
            OffsetPosition {
                offset: 100,
                position: 0
            }
        );
        assert_eq!(
            idx.lookup(110),
            OffsetPosition {
                offset: 110,
                position: 500
            }
        );
        assert_eq!(
            idx.lookup(119),
            OffsetPosition {
                offset: 110,
                position: 500
            }
        );
        assert_eq!(
            idx.lookup(1000),
            OffsetPosition {
                offset: 120,
                position: 900
            }
        );
    }

    #[test]
    fn appends_must_increase_and_stop_when_full() {
        let dir = TempDir::new().unwrap();
        let mut idx = index(&dir, 16);
        idx.append(110, 500).unwrap();
        assert!(idx.append(110, 600).is_err());
        idx.append(111, 600).unwrap();
        assert!(idx.is_full());
        assert!(idx.append(112, 700).is_err());
    }

    #[test]
    fn trimmed_index_reopens_with_its_entries() {
        let dir = TempDir::new().unwrap();
        let mut idx = index(&dir, 1000);
        idx.append(110, 500).unwrap();
        idx.append(120, 900).unwrap();
        idx.trim().unwrap();
        assert_eq!(std::fs::metadata(idx.file().path()).unwrap().len(), 16);
        let again = index(&dir, 1000);
        assert_eq!(again.entries(), 2);
        assert!(again.is_full());
        assert_eq!(
            again.entry(1),
            OffsetPosition {
                offset: 120,
                position: 900
            }
        );
    }

    #[test]
    fn a_preallocated_index_after_a_crash_ends_at_its_zero_tail() {
        let dir = TempDir::new().unwrap();
        let mut idx = index(&dir, 1000);
        idx.append(110, 500).unwrap();
        drop(idx);
        let again = index(&dir, 1000);
        assert_eq!(again.entries(), 1);
        assert_eq!(again.sanity_check(1000), Ok(()));
    }

    #[test]
    fn an_untouched_preallocated_index_reads_as_its_first_slot_only() {
        // docs/storage.md: a zero entry ends the list only after the first entry.
        let dir = TempDir::new().unwrap();
        drop(index(&dir, 1000));
        let again = index(&dir, 1000);
        assert_eq!(again.entries(), 1);
        assert_eq!(
            again.lookup(500),
            OffsetPosition {
                offset: 100,
                position: 0
            }
        );
    }

    #[test]
    fn truncation_drops_entries_at_or_above_the_offset_and_zeroes_them() {
        let dir = TempDir::new().unwrap();
        let mut idx = index(&dir, 1000);
        idx.append(110, 500).unwrap();
        idx.append(120, 900).unwrap();
        idx.truncate_to(120).unwrap();
        assert_eq!(idx.entries(), 1);
        idx.truncate_to(105).unwrap();
        assert_eq!(idx.entries(), 0);
        idx.trim().unwrap();
        drop(idx);
        assert_eq!(index(&dir, 1000).entries(), 0);
    }

    #[test]
    fn sanity_check_catches_a_misaligned_file_and_wild_positions() {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("00000000000000000100.index");
        std::fs::write(&path, [0, 0, 0, 5, 0, 0, 0, 9, 1]).unwrap();
        let idx = OffsetIndex::open(&path, 100, 1000).unwrap();
        assert!(idx.sanity_check(100).is_err());
        std::fs::write(&path, [0, 0, 0, 5, 0, 0, 0, 90]).unwrap();
        let idx = OffsetIndex::open(&path, 100, 1000).unwrap();
        assert!(idx.sanity_check(50).is_err());
        assert!(idx.sanity_check(100).is_ok());
    }
}

//! The sparse indexes of a segment: [`OffsetIndex`] (`.index`) and [`TimeIndex`] (`.timeindex`);
//! and its transaction index (`.txnindex`, `txn_index.rs`), a list of aborted transactions
//! rather than an `IndexFile`.
//!
//! Both share [`IndexFile`]: a file of fixed-size big-endian entries, preallocated to
//! `segment.index.bytes` rounded down to whole entries while the segment is active and trimmed to
//! exactly its entries on roll and close. Dropped entries are zeroed by cutting the file and
//! growing it back (never by writing zeros), so truncating an index, in a rollback or a
//! recovery, needs no free space: it works on a full disk. The valid entries are also kept in memory, as the same
//! bytes the file holds (8 or 12 bytes an entry, no per-entry overhead): lookups binary-search
//! that copy, appends write the file with `pwrite` at `entries * size` and push to the copy.
//!
//! Only the active segment's indexes hold a descriptor: `close_file` (a segment sealed) drops it,
//! `open_file` (a segment active again) takes one, and the rare writes to a sealed segment's
//! index (a rolled-back roll, a recovery) open the file for that write and close it. Opening a
//! log reads each index once into memory and closes it (ferrolog issue #11: no descriptor per
//! segment file at start).
//!
//! Why not mmap like Kafka: a memory map needs `unsafe` whose soundness depends on no other
//! process truncating or writing the file, and truncating a mapped file turns a stray read into
//! SIGBUS; the in-memory copy costs the same bytes an mmap would keep resident once touched, and
//! a lookup is a binary search over a slice either way.
pub mod offset_index;
pub mod time_index;
pub mod txn_index;

pub use offset_index::{OffsetIndex, OffsetPosition};
pub use time_index::{TimeIndex, TimestampOffset};

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{IoContext, Result, StorageError};

/// Mode of every file a log creates.
pub(crate) const FILE_MODE: u32 = 0o644;
/// How much of an existing index file is read at a time while looking for its end.
const READ_CHUNK: usize = 64 * 1024;

/// A file of fixed-size entries with an in-memory copy of the valid ones.
#[derive(Debug)]
pub(crate) struct IndexFile {
    path: PathBuf,
    /// Open while the segment is active; `None` once sealed (writes then open the file).
    file: Option<Arc<File>>,
    entry_size: usize,
    /// The valid entries, exactly `entries * entry_size` bytes.
    buf: Vec<u8>,
    /// File length / entry size: how many entries fit before the index is full.
    max_entries: usize,
    /// segment.index.bytes: the size the index takes again when its segment becomes active.
    max_index_bytes: usize,
    /// The file length at open was not a whole number of entries.
    misaligned_on_open: bool,
}

impl IndexFile {
    /// Opens or creates the index at `path`. A new file is preallocated to `max_index_bytes`
    /// (rounded down to whole entries); an existing one keeps its length (a trimmed index is
    /// full until `resize_to_max`). For an existing file `is_end(n, entry)` tells which entry is
    /// the first past the valid ones (a preallocated file's zero tail); reading stops there.
    /// The descriptor is kept only with `keep_open` (the segment is active).
    pub fn open(
        path: &Path,
        entry_size: usize,
        max_index_bytes: usize,
        is_end: impl Fn(usize, &[u8]) -> bool,
        keep_open: bool,
    ) -> Result<IndexFile> {
        let existed = path.try_exists().ctx("stat index", path)?;
        let file = open_rw(path)?;
        let len = file.metadata().ctx("stat index", path)?.len() as usize;
        let mut index = IndexFile {
            path: path.to_path_buf(),
            file: Some(file),
            entry_size,
            buf: Vec::new(),
            max_entries: len / entry_size,
            max_index_bytes,
            misaligned_on_open: !len.is_multiple_of(entry_size),
        };
        if existed {
            index.read_entries(len, is_end)?;
        } else {
            index.resize(max_index_bytes)?;
        }
        if !keep_open {
            index.close_file();
        }
        Ok(index)
    }

    fn read_entries(&mut self, len: usize, is_end: impl Fn(usize, &[u8]) -> bool) -> Result<()> {
        let whole = len - len % self.entry_size;
        let file = self.handle()?;
        let mut reader = std::io::BufReader::with_capacity(READ_CHUNK, &*file);
        let mut entry = vec![0u8; self.entry_size];
        for n in 0..whole / self.entry_size {
            reader
                .read_exact(&mut entry)
                .ctx("read index", &self.path)?;
            if is_end(n, &entry) {
                break;
            }
            self.buf.extend_from_slice(&entry);
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The descriptor, while the segment is active.
    pub fn file(&self) -> Option<&Arc<File>> {
        self.file.as_ref()
    }

    /// Keeps a descriptor open for appends (the segment became active).
    pub fn open_file(&mut self) -> Result<()> {
        if self.file.is_none() {
            self.file = Some(open_rw(&self.path)?);
        }
        Ok(())
    }

    /// Drops the descriptor (the segment is sealed; the entries stay in memory).
    pub fn close_file(&mut self) {
        self.file = None;
    }

    /// The open descriptor, or one opened for the caller's write alone (a sealed segment's).
    fn handle(&self) -> Result<Arc<File>> {
        match &self.file {
            Some(file) => Ok(file.clone()),
            None => open_rw(&self.path),
        }
    }

    pub fn entries(&self) -> usize {
        self.buf.len() / self.entry_size
    }

    pub fn entry(&self, n: usize) -> &[u8] {
        &self.buf[n * self.entry_size..(n + 1) * self.entry_size]
    }

    pub fn max_entries(&self) -> usize {
        self.max_entries
    }

    pub fn misaligned_on_open(&self) -> bool {
        self.misaligned_on_open
    }

    /// Writes one entry after the last (the caller checks fullness and ordering). A failed
    /// write (a full disk) may have stored part of the entry: those bytes are zeroed again, so
    /// that no half entry is read back after a restart.
    pub fn append(&mut self, entry: &[u8]) -> Result<()> {
        debug_assert_eq!(entry.len(), self.entry_size);
        if let Err(e) = self.handle()?.write_all_at(entry, self.buf.len() as u64) {
            // The write error is the one to report; if zeroing fails too, the next open's
            // sanity check finds the half entry and rebuilds the index.
            let _ = self.zero_from(self.buf.len());
            return Err(StorageError::io("write index", &self.path, e));
        }
        self.buf.extend_from_slice(entry);
        Ok(())
    }

    /// Keeps the first `n` entries; the dropped ones are zeroed in the file so that a crash
    /// cannot bring them back as entries.
    pub fn truncate_to_entries(&mut self, n: usize) -> Result<()> {
        let keep = n * self.entry_size;
        if keep >= self.buf.len() {
            return Ok(());
        }
        self.zero_from(keep)?;
        self.buf.truncate(keep);
        Ok(())
    }

    /// Zeroes the file from byte `from` on by cutting it there and growing it back to its
    /// length, which needs no free space. If it cannot grow back, it stays cut (an index that
    /// is full sooner: its segment rolls sooner).
    fn zero_from(&mut self, from: usize) -> Result<()> {
        let file = self.handle()?;
        let len = file.metadata().ctx("stat index", &self.path)?.len();
        if from as u64 >= len {
            return Ok(());
        }
        file.set_len(from as u64)
            .ctx("truncate index", &self.path)?;
        self.max_entries = self.max_entries.min(from / self.entry_size);
        if file.set_len(len).is_ok() {
            self.max_entries = len as usize / self.entry_size;
        }
        Ok(())
    }

    /// Sets the file length to `bytes` rounded down to whole entries (never below the entries).
    pub fn resize(&mut self, bytes: usize) -> Result<()> {
        let rounded = (bytes - bytes % self.entry_size).max(self.buf.len());
        let file = self.handle()?;
        if rounded as u64 != file.metadata().ctx("stat index", &self.path)?.len() {
            file.set_len(rounded as u64)
                .ctx("resize index", &self.path)?;
        }
        self.max_entries = rounded / self.entry_size;
        Ok(())
    }

    /// Back to the preallocated size of an active segment.
    pub fn resize_to_max(&mut self) -> Result<()> {
        self.resize(self.max_index_bytes)
    }

    /// `resize_to_max` where preallocating is only an optimisation (opening on a full disk, a
    /// rollback): if the file cannot grow it keeps its length, and the index is full sooner.
    /// Returns the error it did without.
    pub fn try_resize_to_max(&mut self) -> Option<StorageError> {
        self.resize_to_max().err()
    }

    /// Cuts the file to exactly its entries (on roll and close).
    pub fn trim(&mut self) -> Result<()> {
        self.resize(self.buf.len())
    }

    /// Drops every entry (before a rebuild).
    pub fn reset(&mut self) -> Result<()> {
        self.truncate_to_entries(0)
    }
}

/// Opens (or creates, mode FILE_MODE) a segment's file for reading and writing, kept as it
/// is; an error says `what` was being done to `path`.
pub(crate) fn open_read_write(path: &Path, what: &str) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .open(path)
        .ctx(what, path)
}

/// Opens (or creates) an index file for reading and writing.
fn open_rw(path: &Path) -> Result<Arc<File>> {
    Ok(Arc::new(open_read_write(path, "open index")?))
}

/// Binary search: the number of entries `n` for which `below(n)` holds, given that it holds for
/// a prefix of the entries (`partition_point` over entry numbers).
pub(crate) fn partition_point(entries: usize, below: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, entries);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

pub(crate) fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().expect("4 bytes"))
}

pub(crate) fn be_i64(b: &[u8]) -> i64 {
    i64::from_be_bytes(b[..8].try_into().expect("8 bytes"))
}

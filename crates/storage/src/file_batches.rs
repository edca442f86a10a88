//! Walking the record batches of a `.log` file by their headers (Kafka's `FileLogInputStream`):
//! each step parses one batch header and jumps over the batch.
//!
//! Headers are read in chunks: one `pread` of up to [`SCAN_CHUNK`] bytes covers the headers of
//! all the small batches in it, which are then walked in memory (a `pread` costs far more than
//! copying a few KiB out of the page cache). After a batch larger than a chunk only the next
//! header is read, so walking big batches copies no records. A caller that knows where its walk
//! will end (`translateOffset` does, from the next offset index entry) sizes the first read
//! with [`FileBatches::read_ahead`]. The chunk lives in a per-thread scratch buffer, reused.
//!
//! A sealed segment's walk reads its map instead (`FileBatches::mapped`): the same steps over
//! bytes already in memory, no `pread`, no copy of the chunk.
//!
//! A batch whose announced size runs past the end of the file is a partial batch (normal after a
//! crash, or while a slice is being read): the walk stops before it, without an error. A
//! batchLength too small for a header, or a magic other than 2, is an error.
use std::cell::Cell;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use ferrolog_record::batch::{LENGTH_OFFSET, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD};
use ferrolog_record::{BatchHeader, RecordError};

use crate::error::{IoContext, Result, StorageError};

/// The most bytes one read of a walk takes: the headers of an index interval of the default
/// `index.interval.bytes` (4096) plus the batch that ends it fit.
pub const SCAN_CHUNK: usize = 8 * 1024;

thread_local! {
    /// The chunk buffer of the walks on this thread (a walk takes it and gives it back).
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A [`SCAN_CHUNK`]-byte buffer taken from this thread's scratch; back there when dropped. A
/// walk nested in another gets a fresh buffer.
struct ScanBuf(Vec<u8>);

impl ScanBuf {
    fn take() -> ScanBuf {
        let mut buf = SCRATCH.take();
        if buf.len() < SCAN_CHUNK {
            buf = vec![0; SCAN_CHUNK];
        }
        ScanBuf(buf)
    }
}

impl Drop for ScanBuf {
    fn drop(&mut self) {
        SCRATCH.set(std::mem::take(&mut self.0));
    }
}

/// One batch of a `.log` file: its header and where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileBatch {
    pub header: BatchHeader,
    pub position: u32,
}

impl FileBatch {
    /// Bytes the batch takes in the file.
    pub fn size(&self) -> u32 {
        self.header.size_in_bytes() as u32
    }

    /// Where the next batch starts.
    pub fn end(&self) -> u32 {
        self.position + self.size()
    }

    pub fn base_offset(&self) -> i64 {
        self.header.base_offset
    }

    pub fn last_offset(&self) -> i64 {
        last_offset_of(&self.header)
    }
}

/// A batch's lastOffset, saturating: baseOffset is outside the CRC, so a damaged file can hold
/// any value there.
pub(crate) fn last_offset_of(header: &BatchHeader) -> i64 {
    header
        .base_offset
        .saturating_add(header.last_offset_delta as i64)
}

/// The file a walk reads: borrowed, or a shared descriptor the walk holds (a segment's `.log`
/// that its open-file bound may close meanwhile, segment/log_file.rs).
enum WalkFile<'a> {
    Borrowed(&'a File),
    Shared(Arc<File>),
    /// None: the walk reads a map only (`FileBatches::over_map`).
    MapOnly,
}

impl WalkFile<'_> {
    fn get(&self) -> Option<&File> {
        match self {
            WalkFile::Borrowed(file) => Some(file),
            WalkFile::Shared(file) => Some(file),
            WalkFile::MapOnly => None,
        }
    }
}

/// The batches of `file[position..end]`, in order.
pub struct FileBatches<'a> {
    file: WalkFile<'a>,
    /// The file's bytes from 0 to at least `end`, when they are mapped: read here, no `pread`.
    mapped: Option<&'a [u8]>,
    path: &'a Path,
    position: u32,
    end: u32,
    failed: bool,
    /// Holds `file[chunk_start..chunk_start + chunk_len]` once something was read.
    chunk: Option<ScanBuf>,
    chunk_start: u32,
    chunk_len: usize,
    /// Bytes the next read asks for (fewer at the end).
    next_read: usize,
}

impl<'a> FileBatches<'a> {
    pub fn new(file: &'a File, path: &'a Path, position: u32, end: u32) -> FileBatches<'a> {
        FileBatches::walk(WalkFile::Borrowed(file), path, position, end)
    }

    /// A walk that holds its own reference to the file for as long as it runs.
    pub fn shared(file: Arc<File>, path: &'a Path, position: u32, end: u32) -> FileBatches<'a> {
        FileBatches::walk(WalkFile::Shared(file), path, position, end)
    }

    /// A walk of `mapped` alone (the file's bytes from position 0, at least up to `end`): no
    /// descriptor needed.
    pub fn over_map(mapped: &'a [u8], path: &'a Path, position: u32, end: u32) -> FileBatches<'a> {
        assert!(mapped.len() >= end as usize, "a map shorter than the walk");
        let mut walk = FileBatches::walk(WalkFile::MapOnly, path, position, end);
        walk.mapped = Some(mapped);
        walk
    }

    fn walk(file: WalkFile<'a>, path: &'a Path, position: u32, end: u32) -> FileBatches<'a> {
        FileBatches {
            file,
            mapped: None,
            path,
            position,
            end,
            failed: false,
            chunk: None,
            chunk_start: 0,
            chunk_len: 0,
            next_read: SCAN_CHUNK,
        }
    }

    /// Walks `mapped` (the file's bytes from position 0, at least up to the walk's end) instead
    /// of reading the file. The batches are the same.
    pub fn mapped(mut self, mapped: &'a [u8]) -> FileBatches<'a> {
        debug_assert!(mapped.len() >= self.end as usize);
        if mapped.len() >= self.end as usize {
            self.mapped = Some(mapped);
        }
        self
    }

    /// Sizes the first read to `bytes` (at least a header, at most a chunk): for a walk that
    /// will end within `bytes` of its start. Only the amount read changes, never the batches.
    pub fn read_ahead(mut self, bytes: usize) -> FileBatches<'a> {
        self.next_read = bytes.clamp(RECORD_BATCH_OVERHEAD, SCAN_CHUNK);
        self
    }

    /// The (up to) `want` bytes at the walk's position, from the chunk or a new read.
    fn bytes_at_position(&mut self, want: usize) -> Result<&[u8]> {
        if let Some(mapped) = self.mapped {
            let at = self.position as usize;
            return Ok(&mapped[at..at + want]);
        }
        let remaining = (self.end - self.position) as usize;
        let chunk = self.chunk.get_or_insert_with(ScanBuf::take);
        let at = self.position.wrapping_sub(self.chunk_start) as usize;
        if self.position < self.chunk_start || at + want > self.chunk_len {
            let len = self.next_read.max(want).min(remaining);
            let Some(file) = self.file.get() else {
                unreachable!("a walk over a map alone reads the map");
            };
            file.read_exact_at(&mut chunk.0[..len], self.position as u64)
                .ctx("read batch header from", self.path)?;
            self.chunk_start = self.position;
            self.chunk_len = len;
            return Ok(&chunk.0[..want]);
        }
        Ok(&chunk.0[at..at + want])
    }

    fn next_batch(&mut self) -> Result<Option<FileBatch>> {
        let remaining = (self.end - self.position) as usize;
        if remaining < LOG_OVERHEAD {
            return Ok(None);
        }
        let mut buf = [0u8; RECORD_BATCH_OVERHEAD];
        let want = remaining.min(RECORD_BATCH_OVERHEAD);
        buf[..want].copy_from_slice(self.bytes_at_position(want)?);
        let batch_length = i32::from_be_bytes(
            buf[LENGTH_OFFSET..LOG_OVERHEAD]
                .try_into()
                .expect("4 bytes"),
        );
        if (batch_length as i64) < (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i64 {
            return Err(self.corrupt(RecordError::InvalidBatchLength(batch_length)));
        }
        if LOG_OVERHEAD as u64 + batch_length as u64 > remaining as u64 {
            return Ok(None);
        }
        let header = BatchHeader::parse(&buf).map_err(|e| self.corrupt(e))?;
        let batch = FileBatch {
            header,
            position: self.position,
        };
        self.position = batch.end();
        self.next_read = if batch.size() as usize > SCAN_CHUNK {
            RECORD_BATCH_OVERHEAD
        } else {
            SCAN_CHUNK
        };
        Ok(Some(batch))
    }

    fn corrupt(&self, e: RecordError) -> StorageError {
        let code_kept = matches!(e, RecordError::UnsupportedMagic(_));
        if code_kept {
            return StorageError::Record(e);
        }
        StorageError::CorruptRecord(format!(
            "{} at position {}: {e}",
            self.path.display(),
            self.position
        ))
    }
}

impl Iterator for FileBatches<'_> {
    type Item = Result<FileBatch>;

    fn next(&mut self) -> Option<Result<FileBatch>> {
        if self.failed {
            return None;
        }
        match self.next_batch() {
            Ok(batch) => batch.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use tempfile::TempDir;

    use super::*;
    use crate::test_util::batch;

    /// A file of batches of these value sizes back to back (one record each, offsets 0, 1, ...)
    /// and the (position, size) of each.
    fn file_of(dir: &TempDir, value_sizes: &[usize]) -> (File, Vec<(u32, u32)>) {
        let mut bytes = Vec::new();
        let mut spans = Vec::new();
        for (i, &size) in value_sizes.iter().enumerate() {
            let b = batch(i as i64, 1, size, 1_000);
            spans.push((bytes.len() as u32, b.len() as u32));
            bytes.extend_from_slice(&b);
        }
        let path = dir.path().join("batches.log");
        fs::write(&path, &bytes).unwrap();
        (File::open(&path).unwrap(), spans)
    }

    fn walk(file: &File, path: &Path, from: u32, end: u32, read_ahead: usize) -> Vec<(u32, u32)> {
        FileBatches::new(file, path, from, end)
            .read_ahead(read_ahead)
            .map(|b| b.map(|b| (b.position, b.size())).unwrap())
            .collect()
    }

    #[test]
    fn chunked_walks_find_every_batch_whatever_their_sizes_and_the_read_ahead() {
        let dir = TempDir::new().unwrap();
        // Small batches, one larger than a chunk, one that straddles a chunk's end, small again.
        let sizes = [
            10,
            300,
            20,
            SCAN_CHUNK + 500,
            40,
            7_000,
            3_000,
            5,
            5,
            2 * SCAN_CHUNK,
            1,
        ];
        let (file, spans) = file_of(&dir, &sizes);
        let end = spans.last().map(|&(p, s)| p + s).unwrap();
        let path = dir.path().join("batches.log");
        for read_ahead in [0, 61, 100, 4_000, SCAN_CHUNK, usize::MAX] {
            for first in 0..spans.len() {
                assert_eq!(
                    walk(&file, &path, spans[first].0, end, read_ahead),
                    spans[first..],
                    "from batch {first}, read ahead {read_ahead}"
                );
            }
        }
        // The same batches out of the file's bytes in memory (a sealed segment's map).
        let bytes = fs::read(&path).unwrap();
        for first in 0..spans.len() {
            let walked: Vec<(u32, u32)> = FileBatches::new(&file, &path, spans[first].0, end)
                .mapped(&bytes)
                .map(|b| b.map(|b| (b.position, b.size())).unwrap())
                .collect();
            assert_eq!(walked, spans[first..], "from batch {first}, mapped");
        }
    }

    #[test]
    fn a_partial_trailing_batch_ends_the_walk() {
        let dir = TempDir::new().unwrap();
        let (file, spans) = file_of(&dir, &[10, 20, 30]);
        let path = dir.path().join("batches.log");
        let end = spans[2].0 + spans[2].1;
        let bytes = fs::read(&path).unwrap();
        for cut in [1, 12, 61, spans[2].1 - 1] {
            let walk_end = end - spans[2].1 + cut;
            assert_eq!(walk(&file, &path, 0, walk_end, SCAN_CHUNK), spans[..2]);
            let mapped: Vec<(u32, u32)> = FileBatches::new(&file, &path, 0, walk_end)
                .mapped(&bytes[..walk_end as usize])
                .map(|b| b.map(|b| (b.position, b.size())).unwrap())
                .collect();
            assert_eq!(mapped, spans[..2]);
        }
    }

    #[test]
    fn a_damaged_length_is_an_error_at_its_position() {
        let dir = TempDir::new().unwrap();
        let (_, spans) = file_of(&dir, &[10, 20, 30]);
        let path = dir.path().join("batches.log");
        let mut bytes = fs::read(&path).unwrap();
        let at = spans[2].0 as usize + LENGTH_OFFSET;
        bytes[at..at + 4].copy_from_slice(&3i32.to_be_bytes());
        fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        let mut walk = FileBatches::new(&file, &path, 0, bytes.len() as u32);
        assert_eq!(walk.next().unwrap().unwrap().position, 0);
        assert_eq!(walk.next().unwrap().unwrap().position, spans[1].0);
        let err = walk.next().unwrap().unwrap_err();
        assert_eq!(err.code(), "CORRUPT_RECORD");
        assert!(
            err.to_string()
                .contains(&format!("position {}", spans[2].0)),
            "{err}"
        );
        assert!(walk.next().is_none());
    }
}

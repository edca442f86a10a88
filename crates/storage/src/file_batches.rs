//! Walking the record batches of a `.log` file by their headers (Kafka's `FileLogInputStream`):
//! each step reads one batch header with `pread` and jumps over the batch.
//!
//! A batch whose announced size runs past the end of the file is a partial batch (normal after a
//! crash, or while a slice is being read): the walk stops before it, without an error. A
//! batchLength too small for a header, or a magic other than 2, is an error.
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use ferrolog_record::batch::{LENGTH_OFFSET, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD};
use ferrolog_record::{BatchHeader, RecordError};

use crate::error::{IoContext, Result, StorageError};

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

/// The batches of `file[position..end]`, in order.
pub struct FileBatches<'a> {
    file: &'a File,
    path: &'a Path,
    position: u32,
    end: u32,
    failed: bool,
}

impl<'a> FileBatches<'a> {
    pub fn new(file: &'a File, path: &'a Path, position: u32, end: u32) -> FileBatches<'a> {
        FileBatches {
            file,
            path,
            position,
            end,
            failed: false,
        }
    }

    fn next_batch(&mut self) -> Result<Option<FileBatch>> {
        let remaining = (self.end - self.position) as usize;
        if remaining < LOG_OVERHEAD {
            return Ok(None);
        }
        let mut buf = [0u8; RECORD_BATCH_OVERHEAD];
        let want = remaining.min(RECORD_BATCH_OVERHEAD);
        self.file
            .read_exact_at(&mut buf[..want], self.position as u64)
            .ctx("read batch header from", self.path)?;
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

//! Recovery of one segment (Kafka's `LogSegment.recover`): walk the batches from position 0,
//! rebuild both indexes from scratch, and cut the `.log` at the first batch that is partial or
//! bad. A batch is good when its whole header and its announced size are there, its magic is 2,
//! its CRC (and count/lastOffsetDelta) check, its baseOffset is past the previous batch's
//! lastOffset (at least the segment's base for the first), and its lastOffset fits the index's
//! relative offsets.
use std::os::unix::fs::FileExt;

use ferrolog_record::batch::{LENGTH_OFFSET, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD};
use ferrolog_record::BatchHeader;

use super::LogSegment;
use crate::error::{IoContext, Result, StorageError};
use crate::file_batches::last_offset_of;
use crate::index::time_index::NO_TIMESTAMP;
use crate::index::TimestampOffset;

/// What recovering a segment found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Bytes cut off the end of the `.log`.
    pub truncated_bytes: u64,
    /// Where and why the walk stopped before the end: "position P: reason".
    pub problem: Option<String>,
    /// Why the rebuilt indexes hold fewer entries than the `.log` calls for (an entry could
    /// not be written: a full disk). They stay valid, only sparser: lookups walk further.
    pub indexes_incomplete: Option<String>,
}

enum Step {
    End,
    Bad(String),
    Batch(BatchHeader),
}

impl LogSegment {
    /// Rebuilds the indexes and cuts the `.log` after its last good batch. `on_batch` sees each
    /// good batch's header and bytes in order (the log assigns leader epochs from them and
    /// rebuilds the producer state and the `.txnindex`).
    pub fn recover(&mut self, mut on_batch: impl FnMut(&BatchHeader, &[u8])) -> Result<Recovered> {
        // The file may be cut below: no map of it may live past here (segment/mapped.rs). A
        // sealed segment is sealed again after (its descriptors closed: a start recovering many
        // segments holds the files of one at a time).
        let was_sealed = self.sealed;
        self.unseal()?;
        self.offset_index.reset()?;
        self.time_index.reset()?;
        self.resize_indexes_to_max()?;
        self.max_timestamp_so_far = TimestampOffset {
            timestamp: NO_TIMESTAMP,
            offset: self.base_offset,
        };
        let log = self.log.get()?;
        let file_len = log.metadata().ctx("stat segment", &self.log_path)?.len();
        let end = file_len.min(u32::MAX as u64) as u32;
        let mut valid: u32 = 0;
        let mut last_index_entry: u32 = 0;
        let mut next_offset = self.base_offset;
        let mut buf = Vec::new();
        // Index entries stop at the first that cannot be written (a full disk): opening a log
        // must not need free space.
        let mut indexes_incomplete: Option<StorageError> = None;
        let problem = loop {
            match self.check_batch(valid, end, next_offset, &mut buf)? {
                Step::End => break None,
                Step::Bad(reason) => break Some(format!("position {valid}: {reason}")),
                Step::Batch(header) => {
                    let last_offset = last_offset_of(&header);
                    if header.max_timestamp > self.max_timestamp_so_far.timestamp {
                        self.max_timestamp_so_far = TimestampOffset {
                            timestamp: header.max_timestamp,
                            offset: last_offset,
                        };
                    }
                    let room = !self.offset_index.is_full() && !self.time_index.is_full();
                    if valid - last_index_entry
                        > self.index_interval_bytes.min(u32::MAX as u64) as u32
                        && room
                        && indexes_incomplete.is_none()
                    {
                        let max = self.max_timestamp_so_far;
                        let added = self.offset_index.append(last_offset, valid).and_then(|()| {
                            self.time_index
                                .maybe_append(max.timestamp, max.offset, false)
                        });
                        match added {
                            Ok(()) => last_index_entry = valid,
                            Err(e @ StorageError::Io { .. }) => indexes_incomplete = Some(e),
                            Err(e) => return Err(e),
                        }
                    }
                    valid += header.size_in_bytes() as u32;
                    next_offset = last_offset.saturating_add(1);
                    on_batch(&header, &buf);
                }
            }
        };
        if file_len > valid as u64 {
            log.set_len(valid as u64).ctx("truncate", &self.log_path)?;
        }
        self.size = valid;
        if valid == 0 {
            self.rolling_base_ms = None;
        }
        self.offset_index.trim()?;
        let max = self.max_timestamp_so_far;
        if indexes_incomplete.is_none() {
            match self
                .time_index
                .maybe_append(max.timestamp, max.offset, true)
            {
                Ok(()) => {}
                Err(e @ StorageError::Io { .. }) => indexes_incomplete = Some(e),
                Err(e) => return Err(e),
            }
        }
        self.time_index.trim()?;
        if was_sealed {
            self.seal();
        }
        Ok(Recovered {
            truncated_bytes: file_len - valid as u64,
            problem,
            indexes_incomplete: indexes_incomplete.map(|e| e.to_string()),
        })
    }

    /// Reads and checks the batch at `position`; `buf` is reused for its bytes.
    fn check_batch(
        &self,
        position: u32,
        end: u32,
        next_offset: i64,
        buf: &mut Vec<u8>,
    ) -> Result<Step> {
        let remaining = end - position;
        if remaining == 0 {
            return Ok(Step::End);
        }
        if (remaining as usize) < RECORD_BATCH_OVERHEAD {
            return Ok(Step::Bad(format!(
                "partial batch: {remaining} bytes, less than a batch header"
            )));
        }
        let mut length = [0u8; 4];
        let log = self.log.get()?;
        log.read_exact_at(&mut length, position as u64 + LENGTH_OFFSET as u64)
            .ctx("read", &self.log_path)?;
        let batch_length = i32::from_be_bytes(length);
        if (batch_length as i64) < (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i64 {
            return Ok(Step::Bad(format!(
                "batchLength {batch_length} is smaller than a batch header"
            )));
        }
        let size = LOG_OVERHEAD as u64 + batch_length as u64;
        if size > remaining as u64 {
            return Ok(Step::Bad(format!(
                "partial batch: it announces {size} bytes, {remaining} remain"
            )));
        }
        buf.resize(size as usize, 0);
        log.read_exact_at(buf, position as u64)
            .ctx("read", &self.log_path)?;
        let header = match BatchHeader::parse(buf).and_then(|h| h.validate(buf).map(|()| h)) {
            Ok(h) => h,
            Err(e) => return Ok(Step::Bad(e.to_string())),
        };
        if header.base_offset < next_offset {
            return Ok(Step::Bad(format!(
                "baseOffset {} is below {next_offset}, the offset after the previous batch",
                header.base_offset
            )));
        }
        if !self.offset_index.can_append_offset(last_offset_of(&header)) {
            return Ok(Step::Bad(format!(
                "lastOffset {} does not fit a segment based at {}",
                last_offset_of(&header),
                self.base_offset
            )));
        }
        Ok(Step::Batch(header))
    }
}

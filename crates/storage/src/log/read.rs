//! Reads (Kafka's `UnifiedLog.read` -> `LocalLog.read` -> `LogSegment.read`) and offset
//! lookups by timestamp (`fetchOffsetByTimestamp`).
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ferrolog_record::{decode_batch, BatchIter, DecodedBatch};

use super::Log;
use crate::error::{IoContext, Result, StorageError};
use crate::fetch::{FetchDataInfo, FetchIsolation, FetchSpan, FileSlice, LogOffsetMetadata};
use crate::file_batches::last_offset_of;
use crate::segment::{file_name, LogSegment, TimestampAndOffset, LOG_FILE_SUFFIX};

/// ListOffsets' special timestamps.
pub const EARLIEST_TIMESTAMP: i64 = -2;
/// The earliest offset kept locally (tiered storage); without it, the log start offset.
pub const EARLIEST_LOCAL_TIMESTAMP: i64 = -4;
pub const LATEST_TIMESTAMP: i64 = -1;
pub const MAX_TIMESTAMP: i64 = -3;
const NO_TIMESTAMP: i64 = -1;
const NO_EPOCH: i32 = -1;

impl Log {
    /// Reads from `offset` up to the isolation's bound: a slice of one segment file starting
    /// at the batch holding `offset`, at most `max_bytes` long (at least that batch when
    /// `min_one_message`).
    pub fn read(
        &self,
        offset: i64,
        max_bytes: i32,
        isolation: FetchIsolation,
        min_one_message: bool,
    ) -> Result<FetchDataInfo> {
        let span = self.read_span(offset, max_bytes, isolation, min_one_message)?;
        Ok(span.with_file(self.segment_file(span.segment)))
    }

    /// `read` with the slice's segment named by its base offset rather than its file's path.
    pub fn read_span(
        &self,
        offset: i64,
        max_bytes: i32,
        isolation: FetchIsolation,
        min_one_message: bool,
    ) -> Result<FetchSpan> {
        self.check_open()?;
        let max_bytes = u32::try_from(max_bytes).map_err(|_| {
            StorageError::InvalidArgument(format!("maxBytes {max_bytes} is negative"))
        })?;
        self.check_in_range(offset)?;
        let bound = self.bound(isolation);
        if offset >= bound {
            let metadata = if offset == bound {
                self.bound_metadata(bound)?
            } else {
                self.offset_metadata(offset)?
            };
            return Ok(self.empty_read(metadata));
        }
        let bound_metadata = self.bound_metadata(bound)?;
        for (&base, segment) in self
            .segments
            .range(..=offset)
            .next_back()
            .into_iter()
            .chain(self.segments.range(offset + 1..))
        {
            let max_position = if base == bound_metadata.segment_base_offset {
                bound_metadata.relative_position_in_segment
            } else {
                segment.size()
            };
            if let Some(span) = segment.read(offset, max_bytes, max_position, min_one_message)? {
                return Ok(span);
            }
        }
        Ok(self.empty_read(self.end_metadata()))
    }

    /// The `.log` file of the segment at `base_offset`. A segment's path depends only on the
    /// log's directory and its base offset, so it is the same for a segment deleted since.
    pub fn segment_file(&self, base_offset: i64) -> PathBuf {
        match self.segments.get(&base_offset) {
            Some(segment) => segment.log_path().to_path_buf(),
            None => self.dir.join(file_name(base_offset, LOG_FILE_SUFFIX)),
        }
    }

    /// The bytes of a slice `read` returned (fewer if the file was truncated since). A segment
    /// deleted since the read is read by its path while the file is still there.
    pub fn read_slice(&self, slice: &FileSlice) -> Result<Vec<u8>> {
        self.check_open()?;
        if slice.size == 0 {
            return Ok(Vec::new());
        }
        match self.segment_of_file(&slice.file) {
            Some(segment) => segment.read_bytes(slice.position, slice.size),
            None => read_file_range(&slice.file, slice.position, slice.size),
        }
    }

    /// The `.log` file of the segment whose path is `file` (a slice's `file`), shared with the
    /// segment: no new open while the segment holds it (a sealed segment whose descriptor the
    /// open bound closed opens it again). `None` once that segment is no longer in the log, or
    /// when it cannot be opened again (the caller then opens the path and reports that error).
    pub fn open_log_file(&self, file: &Path) -> Option<Arc<File>> {
        self.segment_of_file(file).and_then(|s| s.log_file().ok())
    }

    /// The segment whose `.log` is `file`, while it is in the log.
    fn segment_of_file(&self, file: &Path) -> Option<&LogSegment> {
        self.segments.values().find(|s| s.log_path() == file)
    }

    /// Decoded whole batches from the one holding `offset` up to the isolation's bound, across
    /// segments, while they fit `max_bytes` (the first one always).
    pub fn read_batches(
        &self,
        offset: i64,
        max_bytes: i32,
        isolation: FetchIsolation,
    ) -> Result<Vec<DecodedBatch>> {
        let mut batches = Vec::new();
        let mut next = offset;
        let mut budget = max_bytes as i64;
        while next < self.bound(isolation) || batches.is_empty() {
            let info = self.read(next, budget.max(0) as i32, isolation, batches.is_empty())?;
            if info.records.size == 0 {
                break;
            }
            let bytes = self.read_slice(&info.records)?;
            let before = batches.len();
            for item in BatchIter::new(&bytes) {
                let (position, header) = item?;
                let size = header.size_in_bytes();
                if !batches.is_empty() && size as i64 > budget {
                    return Ok(batches);
                }
                let batch = decode_batch(&bytes[position..position + size])?;
                next = last_offset_of(&batch.header).saturating_add(1);
                budget -= size as i64;
                batches.push(batch);
            }
            if batches.len() == before || budget <= 0 {
                break;
            }
        }
        Ok(batches)
    }

    /// ListOffsets: -2 (and -4) the log start offset, -1 the LEO, -3 the first record with the
    /// greatest timestamp, a timestamp >= 0 the first record at or after it. `None` when there is
    /// none, and for other negative timestamps.
    pub fn fetch_offset_by_timestamp(&self, timestamp: i64) -> Result<Option<TimestampAndOffset>> {
        self.check_open()?;
        match timestamp {
            EARLIEST_TIMESTAMP | EARLIEST_LOCAL_TIMESTAMP => {
                let epoch = self
                    .epochs
                    .earliest_entry()
                    .filter(|e| e.start_offset <= self.log_start_offset)
                    .map_or(NO_EPOCH, |e| e.epoch);
                Ok(Some(TimestampAndOffset {
                    timestamp: NO_TIMESTAMP,
                    offset: self.log_start_offset,
                    leader_epoch: epoch,
                }))
            }
            LATEST_TIMESTAMP => Ok(Some(TimestampAndOffset {
                timestamp: NO_TIMESTAMP,
                offset: self.log_end_offset,
                leader_epoch: self.epochs.latest_epoch().unwrap_or(NO_EPOCH),
            })),
            MAX_TIMESTAMP => {
                let mut best = None;
                for segment in self.segments.values() {
                    if best.is_none_or(|b: &crate::segment::LogSegment| {
                        segment.max_timestamp_so_far().timestamp
                            > b.max_timestamp_so_far().timestamp
                    }) {
                        best = Some(segment);
                    }
                }
                match best {
                    Some(segment) => segment.find_max_timestamp_record(),
                    None => Ok(None),
                }
            }
            t if t >= 0 => {
                for segment in self.segments.values() {
                    if segment.largest_timestamp()? >= t {
                        return segment.find_offset_by_timestamp(t, self.log_start_offset);
                    }
                }
                Ok(None)
            }
            // Other special timestamps (tiered storage) find nothing here.
            _ => Ok(None),
        }
    }

    /// Where reads stop for `isolation`.
    fn bound(&self, isolation: FetchIsolation) -> i64 {
        match isolation {
            FetchIsolation::LogEnd => self.log_end_offset,
            FetchIsolation::HighWatermark => self.high_watermark,
            FetchIsolation::TxnCommitted => self.last_stable_offset(),
        }
    }

    fn check_in_range(&self, offset: i64) -> Result<()> {
        if offset < self.log_start_offset || offset > self.log_end_offset {
            return Err(StorageError::OffsetOutOfRange(format!(
                "offset {offset} is outside the log's [{}, {}] in {}",
                self.log_start_offset,
                self.log_end_offset,
                self.dir.display()
            )));
        }
        Ok(())
    }

    /// The LEO's metadata: the end of the active segment.
    fn end_metadata(&self) -> LogOffsetMetadata {
        let active = self.active();
        LogOffsetMetadata {
            message_offset: self.log_end_offset,
            segment_base_offset: active.base_offset(),
            relative_position_in_segment: active.size(),
        }
    }

    /// Where `offset` (in [logStartOffset, LEO]) is: the start of the batch holding it, else
    /// the end of its floor segment.
    pub(crate) fn offset_metadata(&self, offset: i64) -> Result<LogOffsetMetadata> {
        if offset == self.log_end_offset {
            return Ok(self.end_metadata());
        }
        Ok(match self.batch_start(offset)? {
            Some(metadata) => metadata,
            None => self.floor_end(offset),
        })
    }

    /// `offset_metadata(bound)` for a read's bound. The LEO's is the active segment's size;
    /// another bound's (a high watermark below the LEO) is kept while it stays the bound, as
    /// Kafka keeps the high watermark's `LogOffsetMetadata`: a batch's start only moves when the
    /// batch is truncated or deleted, and those clear it ([`Log::forget_bound_metadata`]).
    fn bound_metadata(&self, bound: i64) -> Result<LogOffsetMetadata> {
        if bound == self.log_end_offset {
            return Ok(self.end_metadata());
        }
        if let Some(cached) = self.bound_metadata.get() {
            if cached.message_offset == bound {
                return Ok(cached);
            }
        }
        match self.batch_start(bound)? {
            Some(metadata) => {
                self.bound_metadata.set(Some(metadata));
                Ok(metadata)
            }
            // Not in a batch: the end of a segment, which appends move; not kept.
            None => Ok(self.floor_end(bound)),
        }
    }

    /// `offset` placed at the end of its floor segment.
    fn floor_end(&self, offset: i64) -> LogOffsetMetadata {
        let floor = self.floor_segment(offset).unwrap_or_else(|| self.active());
        LogOffsetMetadata {
            message_offset: offset,
            segment_base_offset: floor.base_offset(),
            relative_position_in_segment: floor.size(),
        }
    }

    /// The start of the batch holding `offset`, searching from its floor segment on.
    fn batch_start(&self, offset: i64) -> Result<Option<LogOffsetMetadata>> {
        let floor = self.floor_segment(offset).unwrap_or_else(|| self.active());
        for segment in self.segments.range(floor.base_offset()..).map(|(_, s)| s) {
            if let Some(batch) = segment.translate_offset(offset, 0)? {
                return Ok(Some(LogOffsetMetadata {
                    message_offset: offset,
                    segment_base_offset: segment.base_offset(),
                    relative_position_in_segment: batch.position,
                }));
            }
        }
        Ok(None)
    }

    /// An empty read at `metadata`, in its segment's file.
    fn empty_read(&self, metadata: LogOffsetMetadata) -> FetchSpan {
        let segment = if self.segments.contains_key(&metadata.segment_base_offset) {
            metadata.segment_base_offset
        } else {
            self.active().base_offset()
        };
        FetchSpan::empty(metadata, segment)
    }
}

/// Up to `size` bytes of the file at `path` from `position`.
fn read_file_range(path: &Path, position: u32, size: u32) -> Result<Vec<u8>> {
    let mut file = File::open(path).ctx("read", path)?;
    file.seek(SeekFrom::Start(position as u64))
        .ctx("read", path)?;
    let mut buf = Vec::with_capacity(size as usize);
    file.take(size as u64)
        .read_to_end(&mut buf)
        .ctx("read", path)?;
    Ok(buf)
}

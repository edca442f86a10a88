//! What a read returns (Kafka's `FetchDataInfo`, `LogOffsetMetadata`) and its upper bound
//! (`FetchIsolation`). A read returns a range of a segment file, not bytes: the bytes are read,
//! or sent with sendfile, when the response is written.
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::error::StorageError;

/// Kafka's `FetchIsolation`: reads stop at the LEO, the high watermark or the last stable offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchIsolation {
    LogEnd,
    HighWatermark,
    TxnCommitted,
}

impl FetchIsolation {
    pub fn as_str(self) -> &'static str {
        match self {
            FetchIsolation::LogEnd => "LOG_END",
            FetchIsolation::HighWatermark => "HIGH_WATERMARK",
            FetchIsolation::TxnCommitted => "TXN_COMMITTED",
        }
    }
}

impl fmt::Display for FetchIsolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FetchIsolation {
    type Err = StorageError;

    fn from_str(s: &str) -> Result<FetchIsolation, StorageError> {
        match s {
            "LOG_END" => Ok(FetchIsolation::LogEnd),
            "HIGH_WATERMARK" => Ok(FetchIsolation::HighWatermark),
            "TXN_COMMITTED" => Ok(FetchIsolation::TxnCommitted),
            other => Err(StorageError::InvalidArgument(format!(
                "isolation must be LOG_END, HIGH_WATERMARK or TXN_COMMITTED, not {other:?}"
            ))),
        }
    }
}

/// Kafka's `LogOffsetMetadata`: an offset and where its batch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsetMetadata {
    pub message_offset: i64,
    pub segment_base_offset: i64,
    pub relative_position_in_segment: u32,
}

/// A range of a segment's `.log` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSlice {
    pub file: PathBuf,
    pub position: u32,
    pub size: u32,
}

/// Kafka's `FetchDataInfo`; `records.size` is 0 for an empty read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchDataInfo {
    pub fetch_offset_metadata: LogOffsetMetadata,
    pub records: FileSlice,
    pub first_entry_incomplete: bool,
}

/// A `FetchDataInfo` whose slice names its segment by base offset instead of by the `.log`
/// file's path: what `Log::read_span` returns to callers that keep one path per segment
/// (`Log::segment_file`) rather than take a new one per read (the binding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchSpan {
    pub fetch_offset_metadata: LogOffsetMetadata,
    /// The base offset of the segment whose `.log` the slice is in.
    pub segment: i64,
    pub position: u32,
    pub size: u32,
    pub first_entry_incomplete: bool,
}

impl FetchSpan {
    /// A read that found nothing, positioned at `metadata` in the segment at `segment`.
    pub fn empty(metadata: LogOffsetMetadata, segment: i64) -> FetchSpan {
        FetchSpan {
            fetch_offset_metadata: metadata,
            segment,
            position: metadata.relative_position_in_segment,
            size: 0,
            first_entry_incomplete: false,
        }
    }

    /// The `FetchDataInfo`, `file` being the segment's `.log`.
    pub fn with_file(self, file: PathBuf) -> FetchDataInfo {
        FetchDataInfo {
            fetch_offset_metadata: self.fetch_offset_metadata,
            records: FileSlice {
                file,
                position: self.position,
                size: self.size,
            },
            first_entry_incomplete: self.first_entry_incomplete,
        }
    }
}

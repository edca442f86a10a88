//! Errors of the record format. Each has a stable code string that crosses into JavaScript as
//! `err.code` and maps to one Kafka error code (ts/storage/errors.ts holds that one table).
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// Fewer bytes than the structure needs: a partial batch.
    Truncated {
        needed: usize,
        available: usize,
    },
    UnsupportedMagic(i8),
    InvalidBatchLength(i32),
    CrcMismatch {
        stored: u32,
        computed: u32,
    },
    InvalidRecordCount(i32),
    InvalidLastOffsetDelta {
        last_offset_delta: i32,
        records_count: i32,
    },
    /// A record inside the batch does not decode (bad varint, lengths past the end, ...).
    InvalidRecord(String),
    UnknownCompression(u8),
    Compression(String),
    /// Decompression stopped at its bound (`max_output`): a bomb, or records larger than the
    /// reader allows. Damage to whoever reads it back (CORRUPT_RECORD); a leader's check turns
    /// it into [`RecordError::RecordTooLarge`].
    DecompressedTooLarge {
        codec: &'static str,
        max: usize,
    },
    /// A compressed batch a producer sent whose records are larger than the leader accepts
    /// (see [`crate::decode::RecordLimits`]).
    RecordTooLarge(String),
    /// Records of a producer's batch that Kafka's LogValidator refuses one by one (KIP-467:
    /// the answer names them); never empty.
    Violations(Vec<crate::decode::RecordViolation>),
}

impl RecordError {
    /// The code string: `CORRUPT_RECORD` for damage the CRC or sizes reveal, `INVALID_RECORD`
    /// for well-formed bytes with values Kafka refuses.
    pub fn code(&self) -> &'static str {
        match self {
            RecordError::Truncated { .. }
            | RecordError::InvalidBatchLength(_)
            | RecordError::CrcMismatch { .. }
            | RecordError::Compression(_)
            | RecordError::DecompressedTooLarge { .. } => "CORRUPT_RECORD",
            RecordError::RecordTooLarge(_) => "RECORD_TOO_LARGE",
            RecordError::Violations(v) if v.iter().any(|v| v.is_timestamp()) => "INVALID_TIMESTAMP",
            RecordError::Violations(_) => "INVALID_RECORD",
            RecordError::UnsupportedMagic(_) => "UNSUPPORTED_MAGIC",
            RecordError::UnknownCompression(_) => "UNSUPPORTED_COMPRESSION",
            RecordError::InvalidRecordCount(_)
            | RecordError::InvalidLastOffsetDelta { .. }
            | RecordError::InvalidRecord(_) => "INVALID_RECORD",
        }
    }
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Truncated { needed, available } => {
                write!(
                    f,
                    "record batch truncated: needs {needed} bytes, {available} available"
                )
            }
            RecordError::UnsupportedMagic(m) => {
                write!(f, "unsupported record batch magic {m} (only 2)")
            }
            RecordError::InvalidBatchLength(l) => write!(f, "invalid batchLength {l}"),
            RecordError::CrcMismatch { stored, computed } => {
                write!(
                    f,
                    "record batch CRC mismatch: stored {stored:#010x}, computed {computed:#010x}"
                )
            }
            RecordError::InvalidRecordCount(c) => write!(f, "invalid recordsCount {c}"),
            RecordError::InvalidLastOffsetDelta {
                last_offset_delta,
                records_count,
            } => write!(
                f,
                "lastOffsetDelta {last_offset_delta} does not fit recordsCount {records_count}"
            ),
            RecordError::InvalidRecord(why) => write!(f, "invalid record: {why}"),
            RecordError::UnknownCompression(c) => write!(f, "unknown compression codec {c}"),
            RecordError::Compression(why) => write!(f, "compressed records do not decode: {why}"),
            RecordError::DecompressedTooLarge { codec, max } => write!(
                f,
                "compressed records do not decode: {codec}: decompressed size exceeds the limit of {max} bytes"
            ),
            RecordError::RecordTooLarge(why) => write!(f, "{why}"),
            RecordError::Violations(v) => {
                f.write_str(&crate::decode::record_errors_message(v, "(this log)"))
            }
        }
    }
}

impl std::error::Error for RecordError {}

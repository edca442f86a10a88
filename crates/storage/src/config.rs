//! Topic-level log settings (ts/storage/types.ts `LogConfig`), with Kafka's names, types (Kafka's
//! `int` is i32, `long` is i64) and defaults.
use std::fmt;
use std::str::FromStr;

use crate::error::{Result, StorageError};

const DAY_MS: i64 = 24 * 60 * 60 * 1000;
/// JavaScript's `Number.MAX_SAFE_INTEGER`: "never" for flush.messages and flush.ms.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;
/// Kafka's smallest segment.bytes (`LegacyRecord.RECORD_OVERHEAD_V0`).
pub const MIN_SEGMENT_BYTES: i32 = 14;
/// Kafka's smallest segment.index.bytes.
pub const MIN_SEGMENT_INDEX_BYTES: i32 = 4;

/// `message.timestamp.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimestampType {
    #[default]
    CreateTime,
    LogAppendTime,
}

impl TimestampType {
    pub fn as_str(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

impl fmt::Display for TimestampType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TimestampType {
    type Err = StorageError;

    fn from_str(s: &str) -> Result<TimestampType> {
        match s {
            "CreateTime" => Ok(TimestampType::CreateTime),
            "LogAppendTime" => Ok(TimestampType::LogAppendTime),
            other => Err(StorageError::InvalidArgument(format!(
                "message.timestamp.type must be CreateTime or LogAppendTime, not {other:?}"
            ))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// segment.bytes
    pub segment_bytes: i32,
    /// segment.ms
    pub segment_ms: i64,
    /// segment.index.bytes
    pub segment_index_bytes: i32,
    /// index.interval.bytes
    pub index_interval_bytes: i32,
    /// retention.bytes, -1 = unlimited
    pub retention_bytes: i64,
    /// retention.ms, -1 = forever
    pub retention_ms: i64,
    /// flush.messages
    pub flush_messages: i64,
    /// flush.ms
    pub flush_ms: i64,
    /// max.message.bytes
    pub max_message_bytes: i32,
    /// message.timestamp.type
    pub message_timestamp_type: TimestampType,
    /// cleanup.policy includes `compact`: the leader refuses records without a key (Kafka's
    /// LogValidator). Retention and rolls for compaction come as the other settings, already
    /// adjusted by the caller (ts/storage/types.ts `engineLogConfig`).
    pub compact: bool,
}

impl Default for LogConfig {
    fn default() -> LogConfig {
        LogConfig {
            segment_bytes: 1024 * 1024 * 1024,
            segment_ms: 7 * DAY_MS,
            segment_index_bytes: 10 * 1024 * 1024,
            index_interval_bytes: 4096,
            retention_bytes: -1,
            retention_ms: 7 * DAY_MS,
            flush_messages: MAX_SAFE_INTEGER,
            flush_ms: MAX_SAFE_INTEGER,
            max_message_bytes: 1024 * 1024 + 12,
            message_timestamp_type: TimestampType::CreateTime,
            compact: false,
        }
    }
}

impl LogConfig {
    /// Checks the ranges Kafka's `LogConfig` enforces.
    pub fn validate(&self) -> Result<()> {
        fn check(ok: bool, what: &str, value: i64, rule: &str) -> Result<()> {
            if ok {
                Ok(())
            } else {
                Err(StorageError::InvalidArgument(format!(
                    "{what} = {value}: must be {rule}"
                )))
            }
        }
        check(
            self.segment_bytes >= MIN_SEGMENT_BYTES,
            "segment.bytes",
            self.segment_bytes.into(),
            ">= 14",
        )?;
        check(self.segment_ms >= 1, "segment.ms", self.segment_ms, ">= 1")?;
        check(
            self.segment_index_bytes >= MIN_SEGMENT_INDEX_BYTES,
            "segment.index.bytes",
            self.segment_index_bytes.into(),
            ">= 4",
        )?;
        check(
            self.index_interval_bytes >= 0,
            "index.interval.bytes",
            self.index_interval_bytes.into(),
            ">= 0",
        )?;
        check(
            self.retention_bytes >= -1,
            "retention.bytes",
            self.retention_bytes,
            ">= -1",
        )?;
        check(
            self.retention_ms >= -1,
            "retention.ms",
            self.retention_ms,
            ">= -1",
        )?;
        check(
            self.flush_messages >= 1,
            "flush.messages",
            self.flush_messages,
            ">= 1",
        )?;
        check(self.flush_ms >= 0, "flush.ms", self.flush_ms, ">= 0")?;
        check(
            self.max_message_bytes >= 0,
            "max.message.bytes",
            self.max_message_bytes.into(),
            ">= 0",
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_kafkas_and_valid() {
        let c = LogConfig::default();
        assert_eq!(c.segment_bytes, 1 << 30);
        assert_eq!(c.index_interval_bytes, 4096);
        assert_eq!(c.max_message_bytes, 1_048_588);
        c.validate().unwrap();
    }

    #[test]
    fn out_of_range_settings_are_invalid_arguments() {
        let c = LogConfig {
            segment_bytes: 0,
            ..LogConfig::default()
        };
        let e = c.validate().unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT");
        assert!(e.to_string().contains("segment.bytes"));
    }

    #[test]
    fn timestamp_type_parses_kafkas_names() {
        assert_eq!(
            "LogAppendTime".parse::<TimestampType>().unwrap(),
            TimestampType::LogAppendTime
        );
        assert_eq!(
            "bogus".parse::<TimestampType>().unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
    }
}

//! Topic-level log settings (ts/storage/types.ts `LogConfig`), with Kafka's names, types (Kafka's
//! `int` is i32, `long` is i64) and defaults. The defaults and the ranges `validate` checks are
//! generated from the config table (ts/config/topic-configs.ts) into config/generated.rs.
use std::fmt;
use std::str::FromStr;

use crate::error::{Result, StorageError};

mod generated;
pub use generated::*;

/// JavaScript's `Number.MAX_SAFE_INTEGER`: ferrolog's "never" for LONG settings (Kafka's Long.MAX_VALUE).
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

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
    /// message.timestamp.before.max.ms: how far before the leader's clock a CreateTime record's
    /// timestamp may be (Kafka's default i64::MAX: any).
    pub message_timestamp_before_max_ms: i64,
    /// message.timestamp.after.max.ms: how far after it (Kafka 4's default: one hour).
    pub message_timestamp_after_max_ms: i64,
    /// cleanup.policy includes `compact`: the leader refuses records without a key (Kafka's
    /// LogValidator). Retention and rolls for compaction come as the other settings, already
    /// adjusted by the caller (ts/storage/types.ts `engineLogConfig`).
    pub compact: bool,
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
        assert_eq!(c.flush_ms, MAX_SAFE_INTEGER);
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

//! Generated from ts/config/topic-configs.ts by `npm run generate:configs`: do not edit.
//! The defaults (Kafka's) and the smallest values of the log settings the Rust engine
//! reads; __test__/config/generated-files.test.ts fails when this file and the table differ.
use super::{LogConfig, TimestampType};
use crate::error::{Result, StorageError};

/// segment.bytes: The largest size of a segment file; a batch that would pass it starts a new segment.
pub const DEFAULT_SEGMENT_BYTES: i32 = 1073741824;
/// The smallest segment.bytes.
pub const MIN_SEGMENT_BYTES: i32 = 14;
/// segment.ms: The age of the active segment past which the next append starts a new one, so that retention and compaction can act on it.
pub const DEFAULT_SEGMENT_MS: i64 = 604800000;
/// The smallest segment.ms.
pub const MIN_SEGMENT_MS: i64 = 1;
/// segment.index.bytes: The size preallocated for a segment's offset and time indexes; a full index rolls the segment.
pub const DEFAULT_SEGMENT_INDEX_BYTES: i32 = 10485760;
/// The smallest segment.index.bytes.
pub const MIN_SEGMENT_INDEX_BYTES: i32 = 4;
/// index.interval.bytes: How many bytes of batches go between two offset index entries (0: an entry per batch).
pub const DEFAULT_INDEX_INTERVAL_BYTES: i32 = 4096;
/// The smallest index.interval.bytes.
pub const MIN_INDEX_INTERVAL_BYTES: i32 = 0;
/// retention.bytes: The size a partition's log may reach before its oldest segments are deleted (cleanup.policy delete); -1: unlimited.
pub const DEFAULT_RETENTION_BYTES: i64 = -1;
/// The smallest retention.bytes.
pub const MIN_RETENTION_BYTES: i64 = -1;
/// retention.ms: How long a segment is kept after its newest record before it is deleted (cleanup.policy delete); -1: forever.
pub const DEFAULT_RETENTION_MS: i64 = 604800000;
/// The smallest retention.ms.
pub const MIN_RETENTION_MS: i64 = -1;
/// flush.messages: Unflushed records past which the log is fsynced; the default leaves flushing to the operating system.
pub const DEFAULT_FLUSH_MESSAGES: i64 = 9007199254740991;
/// The smallest flush.messages.
pub const MIN_FLUSH_MESSAGES: i64 = 1;
/// flush.ms: The age of the last fsync past which the log is fsynced again; the default leaves flushing to the operating system.
pub const DEFAULT_FLUSH_MS: i64 = 9007199254740991;
/// The smallest flush.ms.
pub const MIN_FLUSH_MS: i64 = 0;
/// max.message.bytes: The largest record batch (as sent, compressed) a Produce may append.
pub const DEFAULT_MAX_MESSAGE_BYTES: i32 = 1048588;
/// The smallest max.message.bytes.
pub const MIN_MAX_MESSAGE_BYTES: i32 = 0;
/// message.timestamp.type: Whether records keep the producer's timestamp (CreateTime) or get the broker's clock at append (LogAppendTime).
pub const DEFAULT_MESSAGE_TIMESTAMP_TYPE: TimestampType = TimestampType::CreateTime;
/// message.timestamp.before.max.ms: How far before the leader's clock a CreateTime record's timestamp may be; older: the batch is refused with INVALID_TIMESTAMP, naming the record (the default: any).
pub const DEFAULT_MESSAGE_TIMESTAMP_BEFORE_MAX_MS: i64 = 9007199254740991;
/// The smallest message.timestamp.before.max.ms.
pub const MIN_MESSAGE_TIMESTAMP_BEFORE_MAX_MS: i64 = 0;
/// message.timestamp.after.max.ms: How far after the leader's clock a CreateTime record's timestamp may be; later: the batch is refused with INVALID_TIMESTAMP, naming the record.
pub const DEFAULT_MESSAGE_TIMESTAMP_AFTER_MAX_MS: i64 = 3600000;
/// The smallest message.timestamp.after.max.ms.
pub const MIN_MESSAGE_TIMESTAMP_AFTER_MAX_MS: i64 = 0;
/// cleanup.policy: delete (retention by time and size), compact (the log cleaner keeps the latest record of each key), both, or neither (empty: kept whole).
pub const DEFAULT_COMPACT: bool = false;

impl Default for LogConfig {
    fn default() -> LogConfig {
        LogConfig {
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            segment_ms: DEFAULT_SEGMENT_MS,
            segment_index_bytes: DEFAULT_SEGMENT_INDEX_BYTES,
            index_interval_bytes: DEFAULT_INDEX_INTERVAL_BYTES,
            retention_bytes: DEFAULT_RETENTION_BYTES,
            retention_ms: DEFAULT_RETENTION_MS,
            flush_messages: DEFAULT_FLUSH_MESSAGES,
            flush_ms: DEFAULT_FLUSH_MS,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            message_timestamp_type: DEFAULT_MESSAGE_TIMESTAMP_TYPE,
            message_timestamp_before_max_ms: DEFAULT_MESSAGE_TIMESTAMP_BEFORE_MAX_MS,
            message_timestamp_after_max_ms: DEFAULT_MESSAGE_TIMESTAMP_AFTER_MAX_MS,
            compact: DEFAULT_COMPACT,
        }
    }
}

impl LogConfig {
    /// Checks the ranges of the config table (Kafka's validators, ts/config/topic-configs.ts).
    pub fn validate(&self) -> Result<()> {
        if self.segment_bytes < MIN_SEGMENT_BYTES {
            return Err(StorageError::InvalidArgument(format!(
                "segment.bytes = {}: must be >= {}",
                self.segment_bytes, MIN_SEGMENT_BYTES
            )));
        }
        if self.segment_ms < MIN_SEGMENT_MS {
            return Err(StorageError::InvalidArgument(format!(
                "segment.ms = {}: must be >= {}",
                self.segment_ms, MIN_SEGMENT_MS
            )));
        }
        if self.segment_index_bytes < MIN_SEGMENT_INDEX_BYTES {
            return Err(StorageError::InvalidArgument(format!(
                "segment.index.bytes = {}: must be >= {}",
                self.segment_index_bytes, MIN_SEGMENT_INDEX_BYTES
            )));
        }
        if self.index_interval_bytes < MIN_INDEX_INTERVAL_BYTES {
            return Err(StorageError::InvalidArgument(format!(
                "index.interval.bytes = {}: must be >= {}",
                self.index_interval_bytes, MIN_INDEX_INTERVAL_BYTES
            )));
        }
        if self.retention_bytes < MIN_RETENTION_BYTES {
            return Err(StorageError::InvalidArgument(format!(
                "retention.bytes = {}: must be >= {}",
                self.retention_bytes, MIN_RETENTION_BYTES
            )));
        }
        if self.retention_ms < MIN_RETENTION_MS {
            return Err(StorageError::InvalidArgument(format!(
                "retention.ms = {}: must be >= {}",
                self.retention_ms, MIN_RETENTION_MS
            )));
        }
        if self.flush_messages < MIN_FLUSH_MESSAGES {
            return Err(StorageError::InvalidArgument(format!(
                "flush.messages = {}: must be >= {}",
                self.flush_messages, MIN_FLUSH_MESSAGES
            )));
        }
        if self.flush_ms < MIN_FLUSH_MS {
            return Err(StorageError::InvalidArgument(format!(
                "flush.ms = {}: must be >= {}",
                self.flush_ms, MIN_FLUSH_MS
            )));
        }
        if self.max_message_bytes < MIN_MAX_MESSAGE_BYTES {
            return Err(StorageError::InvalidArgument(format!(
                "max.message.bytes = {}: must be >= {}",
                self.max_message_bytes, MIN_MAX_MESSAGE_BYTES
            )));
        }
        if self.message_timestamp_before_max_ms < MIN_MESSAGE_TIMESTAMP_BEFORE_MAX_MS {
            return Err(StorageError::InvalidArgument(format!(
                "message.timestamp.before.max.ms = {}: must be >= {}",
                self.message_timestamp_before_max_ms, MIN_MESSAGE_TIMESTAMP_BEFORE_MAX_MS
            )));
        }
        if self.message_timestamp_after_max_ms < MIN_MESSAGE_TIMESTAMP_AFTER_MAX_MS {
            return Err(StorageError::InvalidArgument(format!(
                "message.timestamp.after.max.ms = {}: must be >= {}",
                self.message_timestamp_after_max_ms, MIN_MESSAGE_TIMESTAMP_AFTER_MAX_MS
            )));
        }
        Ok(())
    }
}

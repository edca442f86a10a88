//! Errors of the storage engine. Each has a stable code string (docs/storage.md, "Errors") that
//! crosses into JavaScript as `err.code`; ts/storage/errors.ts is the one table mapping codes to
//! Kafka's numeric error codes.
use std::fmt;
use std::io;
use std::path::Path;

use ferrolog_record::{record_errors_message, RecordError, RecordViolation};

pub type Result<T, E = StorageError> = std::result::Result<T, E>;

#[derive(Debug)]
pub enum StorageError {
    /// A read outside [logStartOffset, LEO], or a log start offset above the HW; the message
    /// says which.
    OffsetOutOfRange(String),
    /// A record batch that does not parse or validate; keeps the record crate's own code.
    Record(RecordError),
    /// Damage the storage layer itself found (batch offsets going backwards, ...).
    CorruptRecord(String),
    /// Well-formed bytes with values Kafka refuses (an empty leader batch, ...).
    InvalidRecord(String),
    RecordTooLarge {
        size: usize,
        max: usize,
    },
    UnexpectedAppendOffset {
        expected: i64,
        found: i64,
    },
    /// An I/O error; `context` names the file and the operation.
    Io {
        context: String,
        source: io::Error,
    },
    LogClosed(String),
    /// A failed append could not be undone (Kafka takes the log directory offline): every
    /// later call on the log fails with this until it is opened again. Says why.
    LogOffline(String),
    InvalidArgument(String),
    /// Records of a producer's batch that Kafka's LogValidator refuses one by one, in the log of
    /// `topic_partition` ("topic-0"): INVALID_TIMESTAMP if a timestamp is among them, else
    /// INVALID_RECORD; the Produce answer names them (KIP-467 `record_errors`) and says
    /// `record_errors_message` (its `error_message`).
    RecordErrors {
        topic_partition: String,
        violations: Vec<RecordViolation>,
    },
}

impl StorageError {
    /// The code string of docs/storage.md's list.
    pub fn code(&self) -> &'static str {
        match self {
            StorageError::OffsetOutOfRange(_) => "OFFSET_OUT_OF_RANGE",
            StorageError::Record(e) => e.code(),
            StorageError::CorruptRecord(_) => "CORRUPT_RECORD",
            StorageError::InvalidRecord(_) => "INVALID_RECORD",
            StorageError::RecordTooLarge { .. } => "RECORD_TOO_LARGE",
            StorageError::UnexpectedAppendOffset { .. } => "UNEXPECTED_APPEND_OFFSET",
            StorageError::Io { .. } => "STORAGE_ERROR",
            StorageError::LogClosed(_) => "LOG_CLOSED",
            StorageError::LogOffline(_) => "LOG_OFFLINE",
            StorageError::InvalidArgument(_) => "INVALID_ARGUMENT",
            StorageError::RecordErrors { violations, .. } => {
                if violations.iter().any(RecordViolation::is_timestamp) {
                    "INVALID_TIMESTAMP"
                } else {
                    "INVALID_RECORD"
                }
            }
        }
    }

    /// The batch index and Kafka's message of each record a `RecordErrors` names (none for
    /// the other errors).
    pub fn record_errors(&self) -> Vec<(i32, String)> {
        match self {
            StorageError::RecordErrors {
                topic_partition,
                violations,
            } => violations
                .iter()
                .map(|v| (v.batch_index, v.message(topic_partition)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// An I/O error while doing `what` on `path`.
    pub fn io(what: &str, path: &Path, source: io::Error) -> StorageError {
        StorageError::Io {
            context: format!("{what} {}", path.display()),
            source,
        }
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::OffsetOutOfRange(why) => write!(f, "offset out of range: {why}"),
            StorageError::Record(e) => e.fmt(f),
            StorageError::CorruptRecord(why) => write!(f, "corrupt record batch: {why}"),
            StorageError::InvalidRecord(why) => write!(f, "invalid record batch: {why}"),
            StorageError::RecordTooLarge { size, max } => {
                write!(
                    f,
                    "record batch of {size} bytes exceeds max.message.bytes {max}"
                )
            }
            StorageError::UnexpectedAppendOffset { expected, found } => {
                write!(f, "unexpected append offset: expected a batch at offset {expected}, found {found}")
            }
            StorageError::Io { context, source } => write!(f, "I/O error: {context}: {source}"),
            StorageError::LogClosed(dir) => write!(f, "log {dir} is closed"),
            StorageError::LogOffline(why) => write!(f, "log offline until reopened: {why}"),
            StorageError::InvalidArgument(why) => write!(f, "invalid argument: {why}"),
            StorageError::RecordErrors {
                topic_partition,
                violations,
            } => f.write_str(&record_errors_message(violations, topic_partition)),
        }
    }
}

impl std::error::Error for StorageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StorageError::Io { source, .. } => Some(source),
            StorageError::Record(e) => Some(e),
            _ => None,
        }
    }
}

impl From<RecordError> for StorageError {
    fn from(e: RecordError) -> StorageError {
        StorageError::Record(e)
    }
}

/// Adds the file and operation to an `io::Result`.
pub(crate) trait IoContext<T> {
    fn ctx(self, what: &str, path: &Path) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn ctx(self, what: &str, path: &Path) -> Result<T> {
        self.map_err(|e| StorageError::io(what, path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_errors_keep_their_code() {
        let e: StorageError = RecordError::UnsupportedMagic(1).into();
        assert_eq!(e.code(), "UNSUPPORTED_MAGIC");
        let e: StorageError = RecordError::CrcMismatch {
            stored: 1,
            computed: 2,
        }
        .into();
        assert_eq!(e.code(), "CORRUPT_RECORD");
    }

    #[test]
    fn io_errors_keep_the_cause_and_the_path() {
        let cause = io::Error::new(io::ErrorKind::PermissionDenied, "denied");
        let e = StorageError::io("open", Path::new("/x/00000000000000000000.log"), cause);
        assert_eq!(e.code(), "STORAGE_ERROR");
        let text = e.to_string();
        assert!(
            text.contains("/x/00000000000000000000.log") && text.contains("denied"),
            "{text}"
        );
        assert!(std::error::Error::source(&e).is_some());
    }
}

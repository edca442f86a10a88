//! Conversions between the storage crate's types and JavaScript values.
use ferrolog_record::{DecodedBatch, RecordError};
use ferrolog_storage::{FetchIsolation, FetchSpan, LogConfig, StorageError, TimestampType};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// A storage error as a JS error whose message is `CODE: message`; ts/storage/native-backend.ts
/// rethrows it as a `StorageError` with that `code`, the same class the TypeScript twin throws.
/// The records a `RecordErrors` names follow the message, each as U+001E (record separator),
/// its batch index, U+001F (unit separator) and Kafka's message for it (neither separator
/// occurs in those messages); native-backend.ts makes them the error's `recordErrors`.
pub fn storage_error(e: &StorageError) -> Error {
    let mut message = e.to_string();
    for (index, why) in e.record_errors() {
        message.push_str(&format!("\u{1e}{index}\u{1f}{why}"));
    }
    coded_error(e.code(), &message)
}

pub fn record_error(e: &RecordError) -> Error {
    coded_error(e.code(), &e.to_string())
}

pub fn invalid_argument(message: &str) -> Error {
    coded_error("INVALID_ARGUMENT", message)
}

pub fn coded_error(code: &str, message: &str) -> Error {
    Error::new(Status::GenericFailure, format!("{code}: {message}"))
}

/// A key, value or header value: bytes or `null` (not `undefined`, as `Option` would give).
pub type Nullable = Either<Buffer, Null>;

pub fn nullable(bytes: Option<Vec<u8>>) -> Nullable {
    match bytes {
        Some(b) => Either::A(Buffer::from(b)),
        None => Either::B(Null),
    }
}

pub fn big(v: i64) -> BigInt {
    BigInt::from(v)
}

/// An int64 argument: a bigint that must fit i64.
pub fn int64(v: &BigInt) -> Result<i64> {
    let (value, lossless) = v.get_i64();
    if lossless {
        Ok(value)
    } else {
        Err(invalid_argument("an offset or timestamp must fit int64"))
    }
}

pub fn isolation(s: &str) -> Result<FetchIsolation> {
    s.parse().map_err(|e: StorageError| storage_error(&e))
}

/// `FetchIsolation` as `readLogInto` takes it (in `io[ReadIo.Args]`): a number, not a string
/// to convert per call.
#[napi]
#[derive(Clone, Copy)]
pub enum ReadIsolation {
    LogEnd,
    HighWatermark,
    TxnCommitted,
}

impl From<ReadIsolation> for FetchIsolation {
    fn from(i: ReadIsolation) -> FetchIsolation {
        match i {
            ReadIsolation::LogEnd => FetchIsolation::LogEnd,
            ReadIsolation::HighWatermark => FetchIsolation::HighWatermark,
            ReadIsolation::TxnCommitted => FetchIsolation::TxnCommitted,
        }
    }
}

/// ts/storage/types.ts `LogConfig`.
#[napi(object)]
pub struct JsLogConfig {
    pub segment_bytes: f64,
    pub segment_ms: f64,
    pub segment_index_bytes: f64,
    pub index_interval_bytes: f64,
    pub retention_bytes: f64,
    pub retention_ms: f64,
    pub flush_messages: f64,
    pub flush_ms: f64,
    pub max_message_bytes: f64,
    pub message_timestamp_type: String,
    /// message.timestamp.before.max.ms; Number.MAX_SAFE_INTEGER or more is Kafka's default,
    /// Long.MAX_VALUE (no bound). Absent: that default.
    pub message_timestamp_before_max_ms: Option<f64>,
    /// message.timestamp.after.max.ms, as before (absent: Kafka's default, one hour).
    pub message_timestamp_after_max_ms: Option<f64>,
    /// cleanup.policy: `delete`, `compact`, both, or none.
    pub cleanup_policy: Option<Vec<String>>,
}

fn int32_setting(name: &str, v: f64) -> Result<i32> {
    if v.fract() == 0.0 && v >= i32::MIN as f64 && v <= i32::MAX as f64 {
        Ok(v as i32)
    } else {
        Err(invalid_argument(&format!("{name} = {v}: must be an int32")))
    }
}

fn int64_setting(name: &str, v: f64) -> Result<i64> {
    if v.fract() == 0.0 && v.abs() <= 9_007_199_254_740_991.0 {
        Ok(v as i64)
    } else {
        Err(invalid_argument(&format!(
            "{name} = {v}: must be a safe integer"
        )))
    }
}

/// A long setting whose JavaScript value stands for Long.MAX_VALUE from
/// Number.MAX_SAFE_INTEGER up (a number cannot hold it).
fn long_setting(name: &str, v: Option<f64>, default: i64) -> Result<i64> {
    match v {
        None => Ok(default),
        Some(v) if v >= 9_007_199_254_740_991.0 => Ok(i64::MAX),
        Some(v) => int64_setting(name, v),
    }
}

impl JsLogConfig {
    pub fn to_config(&self) -> Result<LogConfig> {
        let defaults = LogConfig::default();
        let config = LogConfig {
            segment_bytes: int32_setting("segment.bytes", self.segment_bytes)?,
            segment_ms: int64_setting("segment.ms", self.segment_ms)?,
            segment_index_bytes: int32_setting("segment.index.bytes", self.segment_index_bytes)?,
            index_interval_bytes: int32_setting("index.interval.bytes", self.index_interval_bytes)?,
            retention_bytes: int64_setting("retention.bytes", self.retention_bytes)?,
            retention_ms: int64_setting("retention.ms", self.retention_ms)?,
            flush_messages: int64_setting("flush.messages", self.flush_messages)?,
            flush_ms: int64_setting("flush.ms", self.flush_ms)?,
            max_message_bytes: int32_setting("max.message.bytes", self.max_message_bytes)?,
            message_timestamp_type: self
                .message_timestamp_type
                .parse::<TimestampType>()
                .map_err(|e| storage_error(&e))?,
            message_timestamp_before_max_ms: long_setting(
                "message.timestamp.before.max.ms",
                self.message_timestamp_before_max_ms,
                defaults.message_timestamp_before_max_ms,
            )?,
            message_timestamp_after_max_ms: long_setting(
                "message.timestamp.after.max.ms",
                self.message_timestamp_after_max_ms,
                defaults.message_timestamp_after_max_ms,
            )?,
            compact: self
                .cleanup_policy
                .as_ref()
                .is_some_and(|p| p.iter().any(|p| p == "compact")),
        };
        config.validate().map_err(|e| storage_error(&e))?;
        Ok(config)
    }
}

/// ts/storage/types.ts `LogAppendInfo`.
#[napi(object)]
pub struct JsLogAppendInfo {
    pub first_offset: BigInt,
    pub last_offset: BigInt,
    pub max_timestamp: BigInt,
    pub offset_of_max_timestamp: BigInt,
    pub log_append_time: BigInt,
    pub log_start_offset: BigInt,
    pub record_count: u32,
    pub batch_count: u32,
    pub valid_bytes: u32,
}

impl From<ferrolog_storage::LogAppendInfo> for JsLogAppendInfo {
    fn from(i: ferrolog_storage::LogAppendInfo) -> Self {
        JsLogAppendInfo {
            first_offset: big(i.first_offset),
            last_offset: big(i.last_offset),
            max_timestamp: big(i.max_timestamp),
            offset_of_max_timestamp: big(i.offset_of_max_timestamp),
            log_append_time: big(i.log_append_time),
            log_start_offset: big(i.log_start_offset),
            record_count: i.record_count,
            batch_count: i.batch_count,
            valid_bytes: i.valid_bytes,
        }
    }
}

/// The slots of the BigInt64Array (`readIo()`) `readLogInto` takes its arguments from and
/// writes a `FetchSpan` to; `Length` is the array's length.
#[napi]
pub enum ReadIo {
    Offset = 0,
    MessageOffset = 1,
    SegmentBaseOffset = 2,
    RelativePositionInSegment = 3,
    /// The base offset of the segment whose `.log` the slice is in.
    Segment = 4,
    Position = 5,
    Size = 6,
    /// 1 or 0.
    FirstEntryIncomplete = 7,
    /// The read's other arguments, set through an Int32Array over the same memory (no BigInt
    /// to build per call): the low 32-bit word maxBytes, the high word the `ReadIsolation` in
    /// its low byte, plus `READ_MIN_ONE_MESSAGE` when minOneMessage.
    Args = 8,
    /// The reading `NativeLog`'s `readId`.
    Log = 9,
    Length = 10,
}

/// The minOneMessage flag in the high word of `io[ReadIo.Args]`.
#[napi]
pub const READ_MIN_ONE_MESSAGE: u32 = 0x100;

/// The arguments packed in `io[ReadIo.Args]`: maxBytes, isolation, minOneMessage; else the
/// isolation number that is none.
pub fn read_io_args(
    io: &[i64; ReadIo::Length as usize],
) -> std::result::Result<(i32, FetchIsolation, bool), u32> {
    let args = io[ReadIo::Args as usize];
    let max_bytes = args as u32 as i32;
    let high = (args >> 32) as u32;
    let isolation = match high & 0xff {
        n if n == ReadIsolation::LogEnd as u32 => ReadIsolation::LogEnd,
        n if n == ReadIsolation::HighWatermark as u32 => ReadIsolation::HighWatermark,
        n if n == ReadIsolation::TxnCommitted as u32 => ReadIsolation::TxnCommitted,
        other => return Err(other),
    };
    Ok((
        max_bytes,
        isolation.into(),
        high & READ_MIN_ONE_MESSAGE != 0,
    ))
}

pub fn write_read_io(io: &mut [i64; ReadIo::Length as usize], span: &FetchSpan) {
    let metadata = span.fetch_offset_metadata;
    io[ReadIo::MessageOffset as usize] = metadata.message_offset;
    io[ReadIo::SegmentBaseOffset as usize] = metadata.segment_base_offset;
    io[ReadIo::RelativePositionInSegment as usize] = metadata.relative_position_in_segment as i64;
    io[ReadIo::Segment as usize] = span.segment;
    io[ReadIo::Position as usize] = span.position as i64;
    io[ReadIo::Size as usize] = span.size as i64;
    io[ReadIo::FirstEntryIncomplete as usize] = span.first_entry_incomplete as i64;
}

#[napi(object)]
pub struct JsRecordHeader {
    pub key: String,
    #[napi(ts_type = "Buffer | null")]
    pub value: Nullable,
}

#[napi(object)]
pub struct JsRecord {
    pub offset: BigInt,
    pub timestamp: BigInt,
    #[napi(ts_type = "Buffer | null")]
    pub key: Nullable,
    #[napi(ts_type = "Buffer | null")]
    pub value: Nullable,
    pub headers: Vec<JsRecordHeader>,
}

/// ts/storage/types.ts `RecordBatch`.
#[napi(object)]
pub struct JsRecordBatch {
    pub base_offset: BigInt,
    pub last_offset: BigInt,
    pub partition_leader_epoch: i32,
    pub compression: String,
    pub timestamp_type: String,
    pub is_transactional: bool,
    pub is_control: bool,
    pub base_timestamp: BigInt,
    pub max_timestamp: BigInt,
    pub producer_id: BigInt,
    pub producer_epoch: i32,
    pub base_sequence: i32,
    pub size_in_bytes: u32,
    pub records: Vec<JsRecord>,
}

impl From<DecodedBatch> for JsRecordBatch {
    fn from(b: DecodedBatch) -> Self {
        let h = b.header;
        let compression = ferrolog_record::Compression::from_attributes(h.attributes)
            .map(|c| c.name())
            .unwrap_or("unknown");
        JsRecordBatch {
            base_offset: big(h.base_offset),
            last_offset: big(h.last_offset()),
            partition_leader_epoch: h.partition_leader_epoch,
            compression: compression.to_string(),
            timestamp_type: if h.is_log_append_time() {
                "LogAppendTime"
            } else {
                "CreateTime"
            }
            .to_string(),
            is_transactional: h.is_transactional(),
            is_control: h.is_control(),
            base_timestamp: big(h.base_timestamp),
            max_timestamp: big(h.max_timestamp),
            producer_id: big(h.producer_id),
            producer_epoch: h.producer_epoch as i32,
            base_sequence: h.base_sequence,
            size_in_bytes: h.size_in_bytes() as u32,
            records: b
                .records
                .into_iter()
                .map(|r| JsRecord {
                    offset: big(r.offset(h.base_offset)),
                    // A LogAppendTime batch's records all carry the batch's maxTimestamp.
                    timestamp: big(if h.is_log_append_time() {
                        h.max_timestamp
                    } else {
                        r.timestamp(h.base_timestamp)
                    }),
                    key: nullable(r.key),
                    value: nullable(r.value),
                    headers: r
                        .headers
                        .into_iter()
                        .map(|hd| JsRecordHeader {
                            key: String::from_utf8_lossy(&hd.key).into_owned(),
                            value: nullable(hd.value),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// An aborted transaction a READ_COMMITTED fetch answers.
#[napi(object)]
pub struct JsAbortedTransaction {
    pub producer_id: BigInt,
    pub first_offset: BigInt,
}

impl From<ferrolog_storage::AbortedTransaction> for JsAbortedTransaction {
    fn from(t: ferrolog_storage::AbortedTransaction) -> Self {
        JsAbortedTransaction {
            producer_id: big(t.producer_id),
            first_offset: big(t.first_offset),
        }
    }
}

/// `origin` of a leader append: "CLIENT" (default) or "COORDINATOR".
pub fn append_origin(origin: Option<&str>) -> Result<ferrolog_storage::AppendOrigin> {
    match origin {
        None | Some("CLIENT") => Ok(ferrolog_storage::AppendOrigin::Client),
        Some("COORDINATOR") => Ok(ferrolog_storage::AppendOrigin::Coordinator),
        Some(other) => Err(invalid_argument(&format!(
            "origin must be CLIENT or COORDINATOR, not {other:?}"
        ))),
    }
}

#[napi(object)]
pub struct JsTimestampAndOffset {
    pub timestamp: BigInt,
    pub offset: BigInt,
    pub leader_epoch: i32,
}

#[napi(object)]
pub struct JsEpochEntry {
    pub epoch: i32,
    pub start_offset: BigInt,
}

#[napi(object)]
pub struct JsEpochEndOffset {
    pub epoch: i32,
    pub end_offset: BigInt,
}

#[napi(object)]
pub struct JsSegmentInfo {
    pub base_offset: BigInt,
    pub file: String,
    pub size: u32,
}

#[napi(object)]
pub struct JsRecoveryReport {
    pub segments_recovered: u32,
    pub bytes_truncated: f64,
    pub segments_deleted: u32,
    pub indexes_rebuilt: u32,
    pub messages: Vec<String>,
}

impl From<&ferrolog_storage::RecoveryReport> for JsRecoveryReport {
    fn from(r: &ferrolog_storage::RecoveryReport) -> Self {
        JsRecoveryReport {
            segments_recovered: r.segments_recovered,
            bytes_truncated: r.bytes_truncated as f64,
            segments_deleted: r.segments_deleted,
            indexes_rebuilt: r.indexes_rebuilt,
            messages: r.messages.clone(),
        }
    }
}

#[napi(object)]
pub struct JsOpenLogOptions {
    pub dir: String,
    pub config: JsLogConfig,
    pub recovery_point: BigInt,
    pub log_start_offset: BigInt,
    pub had_clean_shutdown: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `io[ReadIo.Args]` as native-backend.ts sets it: two 32-bit words in platform order.
    fn args(max_bytes: i32, high: u32) -> [i64; ReadIo::Length as usize] {
        let mut io = [0i64; ReadIo::Length as usize];
        let mut bytes = [0u8; 8];
        let (low_word, high_word) = if cfg!(target_endian = "little") {
            (0, 4)
        } else {
            (4, 0)
        };
        bytes[low_word..low_word + 4].copy_from_slice(&max_bytes.to_ne_bytes());
        bytes[high_word..high_word + 4].copy_from_slice(&high.to_ne_bytes());
        io[ReadIo::Args as usize] = i64::from_ne_bytes(bytes);
        io
    }

    #[test]
    fn read_args_unpack_max_bytes_isolation_and_min_one_message() {
        let cases = [
            (
                4096,
                ReadIsolation::HighWatermark as u32 | READ_MIN_ONE_MESSAGE,
                FetchIsolation::HighWatermark,
                true,
            ),
            (
                -1,
                ReadIsolation::LogEnd as u32,
                FetchIsolation::LogEnd,
                false,
            ),
            (
                i32::MAX,
                ReadIsolation::TxnCommitted as u32 | READ_MIN_ONE_MESSAGE,
                FetchIsolation::TxnCommitted,
                true,
            ),
            (
                0,
                ReadIsolation::TxnCommitted as u32,
                FetchIsolation::TxnCommitted,
                false,
            ),
        ];
        for (max_bytes, high, isolation, min_one) in cases {
            assert_eq!(
                read_io_args(&args(max_bytes, high)).unwrap(),
                (max_bytes, isolation, min_one)
            );
        }
        assert!(read_io_args(&args(10, 3)).is_err());
        assert!(read_io_args(&args(10, 0xff | READ_MIN_ONE_MESSAGE)).is_err());
    }
}

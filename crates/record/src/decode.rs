//! Decoding a whole batch: header, CRC, decompression, records.
//!
//! The records of a batch (after the 61-byte header, decompressed when the codec is not none)
//! must hold exactly `recordsCount` records and nothing else, as Kafka's `DefaultRecordBatch`
//! iterators demand ("Incorrect declared batch size, premature EOF reached" / "records still
//! remaining"). A batch whose recordsCount is 0 has no records to read, as in Kafka.
use std::borrow::Cow;

use crate::batch::{validate_batch, BatchHeader, RECORDS_OFFSET, RECORD_BATCH_OVERHEAD};
use crate::compression::{decompress_with, Compression, Progress, DEFAULT_MAX_DECOMPRESSED_SIZE};
use crate::error::RecordError;
use crate::record::{Record, RecordRef};
use crate::varint::read_varint;

/// The most records one uncompressed Produce request can carry: Kafka's default
/// `socket.request.max.bytes` (100 MiB). The records of a compressed batch may not inflate past
/// it (or past max.message.bytes when that is larger).
pub const MAX_APPEND_DECOMPRESSED_SIZE: usize = 100 << 20;

/// What a leader accepts inside a compressed batch, judged while it decompresses so that a bomb
/// is refused after its first block (docs/storage.md "Appends"). Kafka bounds a compressed batch
/// as it is sent (max.message.bytes), not the records inside it: a gzip batch of three 1 MiB
/// records of zeros is 3 KiB on the wire and is accepted, and so it is here. Kafka bounds the
/// inflated records only by what the broker can allocate (4.4's max.decompressed.message.bytes
/// defaults to no limit); ferrolog refuses, with RECORD_TOO_LARGE, records of one batch that
/// inflate past `max_decompressed` (max(max.message.bytes, [`MAX_APPEND_DECOMPRESSED_SIZE`])),
/// far above any batch a producer builds (a Java producer's batch.size is 16 KiB, its
/// max.request.size 1 MiB before compression). A single record announcing more than that is
/// refused from its length varint, before its bytes are inflated.
///
/// RECORD_TOO_LARGE, not CORRUPT_MESSAGE: the bytes are intact, and Kafka's producers treat
/// CORRUPT_MESSAGE as retriable (they would resend the same batch until their delivery timeout)
/// while on RECORD_TOO_LARGE they split a batch of several records, or fail the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordLimits {
    pub max_decompressed: usize,
    /// A compacted log's rule (Kafka's LogValidator): every record of a data batch has a key;
    /// one without is INVALID_RECORD, as the cleaner could not keep "the latest per key" of it.
    pub key_required: bool,
    /// The log's timestamp rules (Kafka's LogValidator.validateTimestamp); None: not checked.
    pub timestamps: Option<TimestampChecks>,
}

/// What Kafka's `LogValidator.validateTimestamp` checks of each record of a producer's batch:
/// on a CreateTime log, a record's timestamp (other than -1) must lie within
/// [now - message.timestamp.before.max.ms, now + message.timestamp.after.max.ms]; a batch a
/// producer marked LogAppendTime is refused (on a CreateTime log only when its timestamp is -1,
/// as Kafka's order of the two tests has it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampChecks {
    /// The log's message.timestamp.type is CreateTime.
    pub create_time: bool,
    pub now_ms: i64,
    /// message.timestamp.before.max.ms
    pub before_max_ms: i64,
    /// message.timestamp.after.max.ms
    pub after_max_ms: i64,
}

/// A record of a producer's batch that Kafka's LogValidator refuses on its own (KIP-467): the
/// batch is refused, and the Produce answer names each such record by its index in the batch
/// (`record_errors`), so that a client fails those and may retry the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordViolation {
    pub batch_index: i32,
    pub kind: ViolationKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViolationKind {
    /// A record without a key on a compacted log (INVALID_RECORD).
    NoKey,
    /// A CreateTime timestamp outside [low, high] (INVALID_TIMESTAMP); `offset` is the record's
    /// offset as the producer sent it (base offset + offsetDelta), as Kafka prints it.
    TimestampOutOfRange {
        timestamp: i64,
        offset: i64,
        low: i64,
        high: i64,
    },
    /// The producer marked the batch LogAppendTime (INVALID_TIMESTAMP).
    LogAppendTimeFromProducer {
        offset: i64,
        timestamp: i64,
        key_bytes: usize,
        value_bytes: usize,
    },
}

impl RecordViolation {
    /// Whether Kafka answers INVALID_TIMESTAMP for it (else INVALID_RECORD).
    pub fn is_timestamp(&self) -> bool {
        !matches!(self.kind, ViolationKind::NoKey)
    }

    /// Kafka's `batchIndexErrorMessage` for it, in the log of `topic_partition` ("topic-0").
    pub fn message(&self, topic_partition: &str) -> String {
        match &self.kind {
            ViolationKind::NoKey => format!(
                "Compacted topic cannot accept message without key in topic partition {topic_partition}"
            ),
            ViolationKind::TimestampOutOfRange { timestamp, offset, low, high } => format!(
                "Timestamp {timestamp} of message with offset {offset} is out of range. The timestamp should be within [{low}, {high}]"
            ),
            ViolationKind::LogAppendTimeFromProducer { offset, timestamp, key_bytes, value_bytes } => format!(
                "Invalid timestamp type in message DefaultRecord(offset={offset}, timestamp={timestamp}, key={key_bytes} bytes, value={value_bytes} bytes). Producer should not set timestamp type to LogAppendTime."
            ),
        }
    }
}

/// Kafka's `processRecordErrors` message for a batch refused for `violations` (the Produce
/// answer's `error_message`).
pub fn record_errors_message(violations: &[RecordViolation], topic_partition: &str) -> String {
    if violations.iter().any(RecordViolation::is_timestamp) {
        return "One or more records have been rejected due to invalid timestamp".to_string();
    }
    let shown: Vec<String> = violations
        .iter()
        .take(3)
        .map(|v| {
            format!(
                "RecordError(batchIndex={}, message='{}')",
                v.batch_index,
                v.message(topic_partition)
            )
        })
        .collect();
    format!(
        "One or more records have been rejected due to {} record errors in total, and only showing the first three errors at most: [{}]",
        violations.len(),
        shown.join(", ")
    )
}

impl RecordLimits {
    /// The limits for a log whose max.message.bytes is `max_message_bytes`.
    pub fn for_max_message_bytes(max_message_bytes: usize) -> RecordLimits {
        RecordLimits {
            max_decompressed: max_message_bytes.max(MAX_APPEND_DECOMPRESSED_SIZE),
            key_required: false,
            timestamps: None,
        }
    }

    /// These limits, with the log's timestamp rules checked.
    pub fn with_timestamps(self, timestamps: TimestampChecks) -> RecordLimits {
        RecordLimits {
            timestamps: Some(timestamps),
            ..self
        }
    }

    /// These limits, with records without a key refused or not (a compacted log's).
    pub fn with_key_required(self, key_required: bool) -> RecordLimits {
        RecordLimits {
            key_required,
            ..self
        }
    }
}

/// A batch with its records decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedBatch {
    pub header: BatchHeader,
    pub records: Vec<Record>,
}

impl DecodedBatch {
    pub fn compression(&self) -> Result<Compression, RecordError> {
        Compression::from_attributes(self.header.attributes)
    }
}

/// Decodes the batch at the start of `buf` (bytes after it are not looked at): header and CRC
/// checked, records decompressed (at most [`DEFAULT_MAX_DECOMPRESSED_SIZE`] bytes) and decoded.
pub fn decode_batch(buf: &[u8]) -> Result<DecodedBatch, RecordError> {
    decode_batch_with_limit(buf, DEFAULT_MAX_DECOMPRESSED_SIZE)
}

/// [`decode_batch`] with a cap of `max_decompressed` bytes on the decompressed records.
pub fn decode_batch_with_limit(
    buf: &[u8],
    max_decompressed: usize,
) -> Result<DecodedBatch, RecordError> {
    let header = validate_batch(buf)?;
    let data = records_data(buf, &header, max_decompressed)?;
    let records = RecordIter::new(&data, header.records_count)
        .map(|r| r.map(|r| r.to_record()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DecodedBatch { header, records })
}

/// The leader's check of a batch a producer sent (Kafka's `LogValidator` for client appends):
/// recordsCount > 0, lastOffsetDelta == recordsCount - 1, every record decodes, record i has
/// offsetDelta i, and the records fill the batch exactly. `buf` starts with the batch; `header`
/// comes from [`validate_batch`] (which checked the CRC). Uncompressed records are walked in
/// place without allocating.
///
/// Kafka itself does not refuse inner offsets other than 0, 1, 2, ...: it rewrites such a batch
/// (uncompressed: offsets are taken from the position; compressed: the batch is rebuilt).
/// ferrolog refuses it instead (docs/storage.md); no known client writes one.
pub fn validate_records(buf: &[u8], header: &BatchHeader) -> Result<(), RecordError> {
    validate_records_with_limit(buf, header, DEFAULT_MAX_DECOMPRESSED_SIZE)
}

/// [`validate_records`] with a cap of `max_decompressed` bytes on the decompressed records.
pub fn validate_records_with_limit(
    buf: &[u8],
    header: &BatchHeader,
    max_decompressed: usize,
) -> Result<(), RecordError> {
    check_record_counts(header)?;
    let data = records_data(buf, header, max_decompressed)?;
    check_inner_offsets(&data, header, None)
}

/// [`validate_records`] for a leader's append: a compressed batch is refused with
/// [`RecordError::RecordTooLarge`] as soon as the output decompressed so far shows it breaks
/// `limits` (more than `max_decompressed` bytes, or a record's length varint announcing more),
/// without inflating the rest.
pub fn validate_records_bounded(
    buf: &[u8],
    header: &BatchHeader,
    limits: &RecordLimits,
) -> Result<(), RecordError> {
    check_record_counts(header)?;
    let mut sizes = RecordSizes {
        limits,
        pos: 0,
        seen: 0,
        count: header.records_count,
    };
    let data = records_data_with(buf, header, limits.max_decompressed, &mut |out| {
        sizes.check(out)
    })
    .map_err(|e| match e {
        RecordError::DecompressedTooLarge { codec, max } => RecordError::RecordTooLarge(format!(
            "{codec} records of the batch decompress to more than {max} bytes"
        )),
        e => e,
    })?;
    check_inner_offsets(&data, header, (!header.is_control()).then_some(limits))
}

/// Hops from record to record of a growing decompressed output by their length varints (the
/// full checks come once all of it is there), refusing a record larger than the batch's limit.
struct RecordSizes<'a> {
    limits: &'a RecordLimits,
    /// Where the next record starts.
    pos: usize,
    seen: i32,
    count: i32,
}

impl RecordSizes<'_> {
    fn check(&mut self, out: &[u8]) -> Result<(), RecordError> {
        while self.seen < self.count && self.pos < out.len() {
            // An incomplete varint waits for more output; a bad one is left to the full checks.
            let Ok((length, length_size)) = read_varint(&out[self.pos..]) else {
                return Ok(());
            };
            if length < 0 {
                self.seen = self.count;
                return Ok(());
            }
            let size = length_size + length as usize;
            if size > self.limits.max_decompressed {
                return Err(RecordError::RecordTooLarge(format!(
                    "record {} of the compressed batch is {size} bytes, more than the records of a batch may inflate to ({} bytes)",
                    self.seen, self.limits.max_decompressed
                )));
            }
            if out.len() - self.pos < size {
                return Ok(());
            }
            self.pos += size;
            self.seen += 1;
        }
        Ok(())
    }
}

fn check_record_counts(header: &BatchHeader) -> Result<(), RecordError> {
    if header.records_count <= 0 {
        return Err(RecordError::InvalidRecordCount(header.records_count));
    }
    if header.last_offset_delta != header.records_count - 1 {
        return Err(RecordError::InvalidLastOffsetDelta {
            last_offset_delta: header.last_offset_delta,
            records_count: header.records_count,
        });
    }
    Ok(())
}

/// Every record decodes, record i has offsetDelta i and they fill `data` exactly; with `checks`
/// (a producer's data batch), every record is also judged by Kafka's LogValidator's per-record
/// rules (a key on a compacted log, the timestamp), all of them, and the batch is refused with
/// [`RecordError::Violations`] naming each record that breaks one.
fn check_inner_offsets(
    data: &[u8],
    header: &BatchHeader,
    checks: Option<&RecordLimits>,
) -> Result<(), RecordError> {
    let mut violations = Vec::new();
    for (i, record) in RecordIter::new(data, header.records_count).enumerate() {
        let record = record?;
        if record.offset_delta as i64 != i as i64 {
            return Err(RecordError::InvalidRecord(format!(
                "record {i} has offsetDelta {} (inner offsets must be 0, 1, 2, ...)",
                record.offset_delta
            )));
        }
        if let Some(limits) = checks {
            if let Some(kind) = violation_of(&record, header, limits) {
                violations.push(RecordViolation {
                    batch_index: i as i32,
                    kind,
                });
            }
        }
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(RecordError::Violations(violations))
    }
}

/// Kafka's `LogValidator.validateRecord` for a v2 record: the key first, then the timestamp.
fn violation_of(
    record: &RecordRef<'_>,
    header: &BatchHeader,
    limits: &RecordLimits,
) -> Option<ViolationKind> {
    if limits.key_required && record.key.is_none() {
        return Some(ViolationKind::NoKey);
    }
    let t = limits.timestamps?;
    let offset = header.base_offset.wrapping_add(record.offset_delta as i64);
    // DefaultRecordBatch: a LogAppendTime batch's records carry its maxTimestamp.
    let timestamp = if header.is_log_append_time() {
        header.max_timestamp
    } else {
        header.base_timestamp.wrapping_add(record.timestamp_delta)
    };
    if t.create_time && timestamp != crate::batch::NO_TIMESTAMP {
        // Java's long arithmetic, as LogValidator.recordHasInvalidTimestamp computes it.
        let diff = t.now_ms.wrapping_sub(timestamp);
        if diff > t.before_max_ms || diff.wrapping_neg() > t.after_max_ms {
            return Some(ViolationKind::TimestampOutOfRange {
                timestamp,
                offset,
                low: t.now_ms.wrapping_sub(t.before_max_ms),
                high: t.now_ms.wrapping_add(t.after_max_ms),
            });
        }
    } else if header.is_log_append_time() {
        return Some(ViolationKind::LogAppendTimeFromProducer {
            offset,
            timestamp,
            key_bytes: record.key.map_or(0, <[u8]>::len),
            value_bytes: record.value.map_or(0, <[u8]>::len),
        });
    }
    None
}

/// The records of the batch at the start of `buf`, decompressed if needed (borrowed when not).
/// Empty when recordsCount is 0. `header` must describe that batch.
pub fn records_data<'a>(
    buf: &'a [u8],
    header: &BatchHeader,
    max_decompressed: usize,
) -> Result<Cow<'a, [u8]>, RecordError> {
    records_data_with(buf, header, max_decompressed, &mut |_| Ok(()))
}

/// [`records_data`], with `progress` called as compressed records decompress (not for
/// uncompressed ones, which are borrowed as they are).
fn records_data_with<'a>(
    buf: &'a [u8],
    header: &BatchHeader,
    max_decompressed: usize,
    progress: Progress,
) -> Result<Cow<'a, [u8]>, RecordError> {
    if (header.batch_length as i64) < (RECORD_BATCH_OVERHEAD - crate::batch::LOG_OVERHEAD) as i64 {
        return Err(RecordError::InvalidBatchLength(header.batch_length));
    }
    let size = header.size_in_bytes();
    if buf.len() < size {
        return Err(RecordError::Truncated {
            needed: size,
            available: buf.len(),
        });
    }
    if header.records_count <= 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    let records = &buf[RECORDS_OFFSET..size];
    match Compression::from_attributes(header.attributes)? {
        Compression::None => Ok(Cow::Borrowed(records)),
        codec => decompress_with(codec, records, max_decompressed, progress).map(Cow::Owned),
    }
}

/// Iterator over the records in `data` (uncompressed records of one batch), checking that there
/// are exactly `count` of them: it yields an error instead of the first missing record, or after
/// the last one if bytes are left over. Stops after the first error.
#[derive(Debug, Clone)]
pub struct RecordIter<'a> {
    data: &'a [u8],
    pos: usize,
    index: i32,
    count: i32,
    done: bool,
}

impl<'a> RecordIter<'a> {
    pub fn new(data: &'a [u8], count: i32) -> RecordIter<'a> {
        RecordIter {
            data,
            pos: 0,
            index: 0,
            count: count.max(0),
            done: false,
        }
    }

    fn fail(&mut self, err: RecordError) -> Option<Result<RecordRef<'a>, RecordError>> {
        self.done = true;
        Some(Err(err))
    }
}

impl<'a> Iterator for RecordIter<'a> {
    type Item = Result<RecordRef<'a>, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.index == self.count {
            self.done = true;
            let left = self.data.len() - self.pos;
            if left != 0 {
                return self.fail(RecordError::InvalidRecord(format!(
                    "{left} bytes remain after the batch's {} records",
                    self.count
                )));
            }
            return None;
        }
        if self.pos == self.data.len() {
            return self.fail(RecordError::InvalidRecord(format!(
                "batch declares {} records but holds {}",
                self.count, self.index
            )));
        }
        match RecordRef::parse(&self.data[self.pos..]) {
            Ok(record) => {
                self.pos += record.size_in_bytes;
                self.index += 1;
                Some(Ok(record))
            }
            Err(e) => self.fail(e),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            return (0, Some(0));
        }
        // Every record takes at least 7 bytes; one more item may be the trailing error.
        let left = (self.count - self.index) as usize;
        (0, Some(left.min((self.data.len() - self.pos) / 7) + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{
        update_crc, ATTRIBUTES_OFFSET, CRC_OFFSET, LAST_OFFSET_DELTA_OFFSET, LENGTH_OFFSET,
        RECORDS_COUNT_OFFSET,
    };
    use crate::builder::BatchBuilder;
    use crate::record::Header;

    fn built(codec: Compression, n: usize) -> Vec<u8> {
        let mut b = BatchBuilder::new(codec, None, 10, None);
        for i in 0..n {
            let value = format!("value-{i}");
            b.append(
                1_000 + i as i64,
                Some(b"key"),
                Some(value.as_bytes()),
                &[Header::new("h", None)],
            )
            .unwrap();
        }
        b.build().unwrap()
    }

    /// A batch with the given header counts around `records` (uncompressed), CRC correct.
    fn raw_batch(attributes: i16, count: i32, last_offset_delta: i32, records: &[u8]) -> Vec<u8> {
        let mut template = built(Compression::None, 1);
        template.truncate(RECORDS_OFFSET);
        template.extend_from_slice(records);
        let len = (template.len() - 12) as i32;
        template[LENGTH_OFFSET..LENGTH_OFFSET + 4].copy_from_slice(&len.to_be_bytes());
        template[ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2]
            .copy_from_slice(&attributes.to_be_bytes());
        template[LAST_OFFSET_DELTA_OFFSET..LAST_OFFSET_DELTA_OFFSET + 4]
            .copy_from_slice(&last_offset_delta.to_be_bytes());
        template[RECORDS_COUNT_OFFSET..RECORDS_COUNT_OFFSET + 4]
            .copy_from_slice(&count.to_be_bytes());
        update_crc(&mut template);
        template
    }

    fn encoded(records: &[Record]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            r.encode(&mut out);
        }
        out
    }

    fn record(offset_delta: i32) -> Record {
        Record {
            offset_delta,
            timestamp_delta: 0,
            attributes: 0,
            key: None,
            value: Some(b"v".to_vec()),
            headers: vec![],
        }
    }

    #[test]
    fn decodes_every_record_of_every_codec() {
        for codec in Compression::ALL {
            let batch = decode_batch(&built(codec, 50)).unwrap();
            assert_eq!(batch.records.len(), 50);
            assert_eq!(batch.records[49].offset(batch.header.base_offset), 59);
            assert_eq!(batch.records[49].value.as_deref(), Some(&b"value-49"[..]));
            validate_records(&built(codec, 50), &batch.header).unwrap();
        }
    }

    #[test]
    fn bytes_after_the_batch_are_not_read() {
        let mut bytes = built(Compression::None, 2);
        bytes.extend_from_slice(&[0xff; 30]);
        assert_eq!(decode_batch(&bytes).unwrap().records.len(), 2);
    }

    #[test]
    fn corrupt_crc_is_refused() {
        let mut bytes = built(Compression::Gzip, 3);
        let last = bytes.len() - 1;
        bytes[last] ^= 0x01;
        assert!(matches!(
            decode_batch(&bytes),
            Err(RecordError::CrcMismatch { .. })
        ));
        let mut bytes = built(Compression::None, 3);
        bytes[CRC_OFFSET] ^= 0x80;
        assert_eq!(decode_batch(&bytes).unwrap_err().code(), "CORRUPT_RECORD");
    }

    #[test]
    fn truncated_batch_is_refused() {
        let bytes = built(Compression::None, 3);
        for cut in [0, 10, 60, 61, bytes.len() - 1] {
            assert!(
                matches!(
                    decode_batch(&bytes[..cut]),
                    Err(RecordError::Truncated { .. })
                ),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn bytes_left_after_the_declared_records_are_invalid() {
        let mut records = encoded(&[record(0)]);
        records.push(0);
        let err = decode_batch(&raw_batch(0, 1, 0, &records)).unwrap_err();
        assert!(
            matches!(err, RecordError::InvalidRecord(ref m) if m.contains("remain after")),
            "{err}"
        );
    }

    #[test]
    fn fewer_records_than_declared_are_invalid() {
        let err = decode_batch(&raw_batch(0, 3, 2, &encoded(&[record(0), record(1)]))).unwrap_err();
        assert!(
            matches!(err, RecordError::InvalidRecord(ref m) if m.contains("declares 3 records but holds 2")),
            "{err}"
        );
    }

    #[test]
    fn record_length_lie_is_invalid() {
        let mut records = encoded(&[record(0), record(1)]);
        records[0] += 2; // the first record claims one byte more than it holds
        let err = decode_batch(&raw_batch(0, 2, 1, &records)).unwrap_err();
        assert_eq!(err.code(), "INVALID_RECORD");
    }

    #[test]
    fn bad_varint_in_a_record_is_invalid() {
        let err =
            decode_batch(&raw_batch(0, 1, 0, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff])).unwrap_err();
        assert!(
            matches!(err, RecordError::InvalidRecord(ref m) if m.contains("varint")),
            "{err}"
        );
    }

    #[test]
    fn unknown_codec_is_unsupported_compression() {
        let err = decode_batch(&raw_batch(5, 1, 0, &encoded(&[record(0)]))).unwrap_err();
        assert_eq!(err, RecordError::UnknownCompression(5));
    }

    #[test]
    fn compressed_garbage_is_a_compression_error() {
        let err = decode_batch(&raw_batch(
            Compression::Lz4.id() as i16,
            1,
            0,
            b"not lz4 at all",
        ))
        .unwrap_err();
        assert!(matches!(err, RecordError::Compression(_)), "{err}");
    }

    #[test]
    fn decompression_bomb_is_refused() {
        let mut b = BatchBuilder::new(Compression::Zstd, None, 0, None);
        let zeros = vec![0u8; 4 << 20];
        b.append(0, None, Some(&zeros), &[]).unwrap();
        let bytes = b.build().unwrap();
        assert!(bytes.len() < 4096, "{} bytes", bytes.len());
        let err = decode_batch_with_limit(&bytes, 1 << 20).unwrap_err();
        assert!(
            matches!(err, RecordError::DecompressedTooLarge { .. }),
            "{err}"
        );
        assert_eq!(err.code(), "CORRUPT_RECORD");
    }

    #[test]
    fn bounded_validation_accepts_records_larger_than_max_message_bytes_in_a_small_batch() {
        // Kafka's max.message.bytes bounds the batch as sent: three 1 MiB records of zeros are
        // a few KiB compressed, and Kafka appends them.
        let max_message_bytes = 1024 * 1024 + 12;
        let limits = RecordLimits::for_max_message_bytes(max_message_bytes);
        let zeros = vec![0u8; 1 << 20];
        for codec in &Compression::ALL[1..] {
            let codec = *codec;
            let mut b = BatchBuilder::new(codec, None, 0, None);
            for _ in 0..3 {
                b.append(0, None, Some(&zeros), &[]).unwrap();
            }
            let bytes = b.build().unwrap();
            assert!(
                bytes.len() < max_message_bytes,
                "{}: {}",
                codec.name(),
                bytes.len()
            );
            let header = crate::batch::validate_batch(&bytes).unwrap();
            validate_records_bounded(&bytes, &header, &limits)
                .unwrap_or_else(|e| panic!("{}: {e}", codec.name()));
        }
    }

    #[test]
    fn bounded_validation_refuses_a_record_announcing_more_than_the_batch_limit_for_every_codec() {
        let limits = RecordLimits {
            max_decompressed: 4 << 20,
            key_required: false,
            timestamps: None,
        };
        let zeros = vec![0u8; 8 << 20];
        for codec in &Compression::ALL[1..] {
            let codec = *codec;
            let mut b = BatchBuilder::new(codec, None, 0, None);
            b.append(0, None, Some(&zeros[..1 << 20]), &[]).unwrap();
            b.append(0, None, Some(&zeros), &[]).unwrap();
            let bytes = b.build().unwrap();
            let header = crate::batch::validate_batch(&bytes).unwrap();
            let err = validate_records_bounded(&bytes, &header, &limits).unwrap_err();
            assert!(
                matches!(err, RecordError::RecordTooLarge(ref m) if m.contains("record 1 ")),
                "{}: {err}",
                codec.name()
            );
            assert_eq!(err.code(), "RECORD_TOO_LARGE");
            // Reading it back is not a leader's check: no record limit there.
            validate_records(&bytes, &header).unwrap();
        }
    }

    #[test]
    fn bounded_validation_refuses_records_that_inflate_past_the_batch_limit() {
        let limits = RecordLimits {
            max_decompressed: 4 << 20,
            key_required: false,
            timestamps: None,
        };
        let value = vec![0u8; 64 << 10];
        let mut b = BatchBuilder::new(Compression::Zstd, None, 0, None);
        for _ in 0..100 {
            b.append(0, None, Some(&value), &[]).unwrap();
        }
        let bytes = b.build().unwrap();
        let header = crate::batch::validate_batch(&bytes).unwrap();
        let err = validate_records_bounded(&bytes, &header, &limits).unwrap_err();
        assert!(
            matches!(err, RecordError::RecordTooLarge(ref m) if m.contains("more than 4194304 bytes")),
            "{err}"
        );
        let roomy = RecordLimits::for_max_message_bytes(1 << 20);
        validate_records_bounded(&bytes, &header, &roomy).unwrap();
    }

    #[test]
    fn bounded_validation_checks_what_validate_records_checks() {
        let limits = RecordLimits::for_max_message_bytes(1 << 20);
        for codec in Compression::ALL {
            let bytes = built(codec, 50);
            let header = crate::batch::validate_batch(&bytes).unwrap();
            validate_records_bounded(&bytes, &header, &limits).unwrap();
        }
        let packed =
            crate::compression::compress(Compression::Lz4, &encoded(&[record(0), record(2)]))
                .unwrap();
        let bytes = raw_batch(Compression::Lz4.id() as i16, 2, 1, &packed);
        let header = crate::batch::validate_batch(&bytes).unwrap();
        assert_eq!(
            validate_records_bounded(&bytes, &header, &limits)
                .unwrap_err()
                .code(),
            "INVALID_RECORD"
        );
        let bytes = raw_batch(Compression::Gzip.id() as i16, 1, 0, b"not gzip");
        let header = crate::batch::validate_batch(&bytes).unwrap();
        assert_eq!(
            validate_records_bounded(&bytes, &header, &limits)
                .unwrap_err()
                .code(),
            "CORRUPT_RECORD"
        );
    }

    /// 100 records for a compacted log, every 10th (index 3, 13, ...) without a key.
    fn ten_keyless_of_a_hundred(codec: Compression) -> Vec<u8> {
        let mut b = BatchBuilder::new(codec, None, 0, None);
        for i in 0..100 {
            let key = (i % 10 != 3).then_some(&b"k"[..]);
            b.append(1_000 + i, key, Some(b"v"), &[]).unwrap();
        }
        b.build().unwrap()
    }

    #[test]
    fn a_compacted_log_names_every_record_without_a_key_as_kafkas_log_validator_does() {
        let limits = RecordLimits::for_max_message_bytes(1 << 20).with_key_required(true);
        for codec in Compression::ALL {
            let bytes = ten_keyless_of_a_hundred(codec);
            let header = crate::batch::validate_batch(&bytes).unwrap();
            let err = validate_records_bounded(&bytes, &header, &limits).unwrap_err();
            assert_eq!(err.code(), "INVALID_RECORD");
            let RecordError::Violations(v) = &err else {
                panic!("{}: {err}", codec.name())
            };
            let indexes: Vec<i32> = v.iter().map(|v| v.batch_index).collect();
            assert_eq!(indexes, (0..10).map(|i| i * 10 + 3).collect::<Vec<_>>());
            assert_eq!(
                v[0].message("t-0"),
                "Compacted topic cannot accept message without key in topic partition t-0"
            );
            let message = record_errors_message(v, "t-0");
            assert!(
                message.starts_with("One or more records have been rejected due to 10 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=3, message='Compacted topic cannot accept message without key in topic partition t-0'), RecordError(batchIndex=13, "),
                "{message}"
            );
            assert!(message.ends_with("RecordError(batchIndex=23, message='Compacted topic cannot accept message without key in topic partition t-0')]"), "{message}");
        }
    }

    fn timestamps(now_ms: i64) -> TimestampChecks {
        TimestampChecks {
            create_time: true,
            now_ms,
            before_max_ms: 1_000,
            after_max_ms: 500,
        }
    }

    #[test]
    fn create_time_timestamps_outside_the_window_are_named_with_kafkas_message() {
        let now = 1_000_000;
        let limits = RecordLimits::for_max_message_bytes(1 << 20).with_timestamps(timestamps(now));
        let mut b = BatchBuilder::new(Compression::Lz4, None, 0, None);
        for ts in [now, now - 1_000, now - 1_001, now + 500, now + 501, -1] {
            b.append(ts, Some(b"k"), Some(b"v"), &[]).unwrap();
        }
        let bytes = b.build().unwrap();
        let header = crate::batch::validate_batch(&bytes).unwrap();
        let err = validate_records_bounded(&bytes, &header, &limits).unwrap_err();
        assert_eq!(err.code(), "INVALID_TIMESTAMP");
        let RecordError::Violations(v) = &err else {
            panic!("{err}")
        };
        assert_eq!(v.iter().map(|v| v.batch_index).collect::<Vec<_>>(), [2, 4]);
        assert_eq!(
            v[0].message("t-0"),
            "Timestamp 998999 of message with offset 2 is out of range. The timestamp should be within [999000, 1000500]"
        );
        assert_eq!(
            record_errors_message(v, "t-0"),
            "One or more records have been rejected due to invalid timestamp"
        );
        // A LogAppendTime log does not judge CreateTime timestamps.
        let lat = RecordLimits::for_max_message_bytes(1 << 20).with_timestamps(TimestampChecks {
            create_time: false,
            ..timestamps(now)
        });
        validate_records_bounded(&bytes, &header, &lat).unwrap();
    }

    #[test]
    fn a_batch_a_producer_marked_log_append_time_is_refused_record_by_record() {
        let now = 1_000_000;
        let mut b = BatchBuilder::new(Compression::None, Some(now), 0, None);
        b.append(now, None, Some(b"value"), &[]).unwrap();
        b.append(now, Some(b"key"), None, &[]).unwrap();
        let bytes = b.build().unwrap();
        let header = crate::batch::validate_batch(&bytes).unwrap();
        // On a LogAppendTime log always; on a CreateTime log its timestamp is judged instead.
        let lat = RecordLimits::for_max_message_bytes(1 << 20).with_timestamps(TimestampChecks {
            create_time: false,
            ..timestamps(now)
        });
        let err = validate_records_bounded(&bytes, &header, &lat).unwrap_err();
        assert_eq!(err.code(), "INVALID_TIMESTAMP");
        let RecordError::Violations(v) = &err else {
            panic!("{err}")
        };
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[1].message("t-0"),
            "Invalid timestamp type in message DefaultRecord(offset=1, timestamp=1000000, key=3 bytes, value=0 bytes). Producer should not set timestamp type to LogAppendTime."
        );
        let create = RecordLimits::for_max_message_bytes(1 << 20).with_timestamps(timestamps(now));
        validate_records_bounded(&bytes, &header, &create).unwrap();
    }

    #[test]
    fn empty_batch_has_no_records_to_read() {
        let batch = decode_batch(&raw_batch(0, 0, 0, &[])).unwrap();
        assert!(batch.records.is_empty());
    }

    #[test]
    fn validate_records_accepts_what_a_producer_writes() {
        let bytes = built(Compression::None, 5);
        let header = crate::batch::validate_batch(&bytes).unwrap();
        validate_records(&bytes, &header).unwrap();
    }

    #[test]
    fn validate_records_refuses_inner_offsets_out_of_order() {
        let bytes = raw_batch(0, 2, 1, &encoded(&[record(0), record(2)]));
        let header = crate::batch::validate_batch(&bytes).unwrap();
        let err = validate_records(&bytes, &header).unwrap_err();
        assert!(
            matches!(err, RecordError::InvalidRecord(ref m) if m.contains("record 1 has offsetDelta 2")),
            "{err}"
        );
        // Decoding alone does not care.
        assert_eq!(decode_batch(&bytes).unwrap().records[1].offset_delta, 2);
    }

    #[test]
    fn validate_records_refuses_an_empty_batch() {
        let bytes = raw_batch(0, 0, 0, &[]);
        let header = crate::batch::validate_batch(&bytes).unwrap();
        assert_eq!(
            validate_records(&bytes, &header),
            Err(RecordError::InvalidRecordCount(0))
        );
    }

    #[test]
    fn validate_records_refuses_last_offset_delta_past_the_count() {
        let bytes = raw_batch(0, 1, 3, &encoded(&[record(0)]));
        let header = crate::batch::validate_batch(&bytes).unwrap();
        assert_eq!(
            validate_records(&bytes, &header),
            Err(RecordError::InvalidLastOffsetDelta {
                last_offset_delta: 3,
                records_count: 1
            })
        );
    }

    #[test]
    fn validate_records_checks_compressed_records_too() {
        let packed =
            crate::compression::compress(Compression::Snappy, &encoded(&[record(1)])).unwrap();
        let bytes = raw_batch(Compression::Snappy.id() as i16, 1, 0, &packed);
        let header = crate::batch::validate_batch(&bytes).unwrap();
        assert_eq!(
            validate_records(&bytes, &header).unwrap_err().code(),
            "INVALID_RECORD"
        );
    }

    #[test]
    fn record_iter_walks_in_place() {
        let data = encoded(&[record(0), record(1), record(2)]);
        let deltas: Vec<i32> = RecordIter::new(&data, 3)
            .map(|r| r.unwrap().offset_delta)
            .collect();
        assert_eq!(deltas, [0, 1, 2]);
        let results: Vec<_> = RecordIter::new(&data, 2).collect();
        assert_eq!(results.len(), 3);
        assert!(results[2].is_err());
    }
}

//! Building one record batch (magic 2), as Kafka's `MemoryRecordsBuilder` does.
//!
//! Records get offsets `baseOffset + 0, 1, 2, ...`. The batch's baseTimestamp is the first
//! record's timestamp (unless fixed with `base_timestamp`) and every record stores its timestamp
//! as a delta from it; maxTimestamp is the greatest record timestamp, or the log append time for
//! a LogAppendTime batch (whose records keep their own timestamps, as in Kafka). The records are
//! compressed as one stream when the codec is not none; then batchLength, lastOffsetDelta and the
//! CRC are filled in. A builder with no records builds to no bytes (Kafka's `MemoryRecords.EMPTY`).
use crate::batch::{
    update_crc, ATTRIBUTES_OFFSET, BASE_OFFSET_OFFSET, BASE_SEQUENCE_OFFSET, BASE_TIMESTAMP_OFFSET,
    CONTROL_FLAG_MASK, LAST_OFFSET_DELTA_OFFSET, LENGTH_OFFSET, LOG_OVERHEAD, MAGIC_OFFSET,
    MAGIC_V2, MAX_TIMESTAMP_OFFSET, NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH, NO_PRODUCER_ID,
    NO_SEQUENCE, NO_TIMESTAMP, PARTITION_LEADER_EPOCH_OFFSET, PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET, RECORDS_COUNT_OFFSET, RECORDS_OFFSET, TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
};
use crate::compression::{compress, Compression};
use crate::control::EndTransactionMarker;
use crate::error::RecordError;
use crate::record::{encode_record, Header};

/// Builds one record batch; see the module documentation.
#[derive(Debug, Clone)]
pub struct BatchBuilder {
    compression: Compression,
    log_append_time: Option<i64>,
    base_offset: i64,
    base_timestamp: Option<i64>,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    is_transactional: bool,
    is_control: bool,
    partition_leader_epoch: i32,
    /// The encoded records, uncompressed.
    records: Vec<u8>,
    count: i32,
    max_timestamp: i64,
}

impl BatchBuilder {
    /// A builder for a batch at `base_offset`. `log_append_time`: `Some(now)` makes it a
    /// LogAppendTime batch whose maxTimestamp is `now`; `None` is CreateTime. `base_timestamp`:
    /// `Some(t)` fixes the batch's baseTimestamp (Kafka does so for a delete horizon); `None`
    /// takes the first record's timestamp. Producer fields start as "none" (-1) and the partition
    /// leader epoch as -1.
    pub fn new(
        compression: Compression,
        log_append_time: Option<i64>,
        base_offset: i64,
        base_timestamp: Option<i64>,
    ) -> BatchBuilder {
        BatchBuilder {
            compression,
            log_append_time,
            base_offset,
            base_timestamp,
            producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_PRODUCER_EPOCH,
            base_sequence: NO_SEQUENCE,
            is_transactional: false,
            is_control: false,
            partition_leader_epoch: NO_PARTITION_LEADER_EPOCH,
            records: Vec::new(),
            count: 0,
            max_timestamp: NO_TIMESTAMP,
        }
    }

    /// Sets the idempotent producer's id, epoch and the sequence number of the first record.
    pub fn producer(
        mut self,
        producer_id: i64,
        producer_epoch: i16,
        base_sequence: i32,
    ) -> BatchBuilder {
        self.producer_id = producer_id;
        self.producer_epoch = producer_epoch;
        self.base_sequence = base_sequence;
        self
    }

    pub fn transactional(mut self, is_transactional: bool) -> BatchBuilder {
        self.is_transactional = is_transactional;
        self
    }

    pub fn partition_leader_epoch(mut self, epoch: i32) -> BatchBuilder {
        self.partition_leader_epoch = epoch;
        self
    }

    pub fn num_records(&self) -> i32 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Size of the batch if built without compression.
    pub fn uncompressed_size(&self) -> usize {
        RECORDS_OFFSET + self.records.len()
    }

    /// Appends a record at the next offset and returns that offset. `timestamp` is the record's
    /// CreateTime (-1 for none; other negative values are refused, as by Kafka).
    pub fn append(
        &mut self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[Header],
    ) -> Result<i64, RecordError> {
        if self.is_control {
            return Err(RecordError::InvalidRecord(
                "only control records can be appended to a control batch".into(),
            ));
        }
        self.append_record(timestamp, key, value, headers)
    }

    fn append_record(
        &mut self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[Header],
    ) -> Result<i64, RecordError> {
        if timestamp < 0 && timestamp != NO_TIMESTAMP {
            return Err(RecordError::InvalidRecord(format!(
                "invalid negative timestamp {timestamp}"
            )));
        }
        if self.count == i32::MAX {
            return Err(RecordError::InvalidRecordCount(self.count));
        }
        let base_timestamp = *self.base_timestamp.get_or_insert(timestamp);
        let offset_delta = self.count;
        encode_record(
            &mut self.records,
            0,
            offset_delta,
            timestamp.wrapping_sub(base_timestamp),
            key,
            value,
            headers,
        );
        self.count += 1;
        self.max_timestamp = self.max_timestamp.max(timestamp);
        Ok(self.base_offset.wrapping_add(offset_delta as i64))
    }

    /// The complete batch: header, (compressed) records, CRC.
    pub fn build(self) -> Result<Vec<u8>, RecordError> {
        if self.count == 0 {
            return Ok(Vec::new());
        }
        self.check_producer_state()?;
        let payload = match self.compression {
            Compression::None => None,
            codec => Some(compress(codec, &self.records)?),
        };
        let payload = payload.as_deref().unwrap_or(&self.records);
        let size = RECORDS_OFFSET + payload.len();
        let batch_length = i32::try_from(size - LOG_OVERHEAD).map_err(|_| {
            RecordError::InvalidRecord(format!("batch of {size} bytes is too large"))
        })?;

        let mut attributes = self.compression.id() as i16;
        if self.log_append_time.is_some() {
            attributes |= TIMESTAMP_TYPE_MASK;
        }
        if self.is_transactional {
            attributes |= TRANSACTIONAL_FLAG_MASK;
        }
        if self.is_control {
            attributes |= CONTROL_FLAG_MASK;
        }
        let max_timestamp = self.log_append_time.unwrap_or(self.max_timestamp);

        let mut out = vec![0u8; RECORDS_OFFSET];
        put(
            &mut out,
            BASE_OFFSET_OFFSET,
            &self.base_offset.to_be_bytes(),
        );
        put(&mut out, LENGTH_OFFSET, &batch_length.to_be_bytes());
        put(
            &mut out,
            PARTITION_LEADER_EPOCH_OFFSET,
            &self.partition_leader_epoch.to_be_bytes(),
        );
        out[MAGIC_OFFSET] = MAGIC_V2 as u8;
        put(&mut out, ATTRIBUTES_OFFSET, &attributes.to_be_bytes());
        put(
            &mut out,
            LAST_OFFSET_DELTA_OFFSET,
            &(self.count - 1).to_be_bytes(),
        );
        put(
            &mut out,
            BASE_TIMESTAMP_OFFSET,
            &self.base_timestamp.unwrap_or(NO_TIMESTAMP).to_be_bytes(),
        );
        put(&mut out, MAX_TIMESTAMP_OFFSET, &max_timestamp.to_be_bytes());
        put(
            &mut out,
            PRODUCER_ID_OFFSET,
            &self.producer_id.to_be_bytes(),
        );
        put(
            &mut out,
            PRODUCER_EPOCH_OFFSET,
            &self.producer_epoch.to_be_bytes(),
        );
        put(
            &mut out,
            BASE_SEQUENCE_OFFSET,
            &self.base_sequence.to_be_bytes(),
        );
        put(&mut out, RECORDS_COUNT_OFFSET, &self.count.to_be_bytes());
        out.extend_from_slice(payload);
        update_crc(&mut out);
        Ok(out)
    }

    /// Kafka's `validateProducerState`.
    fn check_producer_state(&self) -> Result<(), RecordError> {
        if self.is_transactional && self.producer_id == NO_PRODUCER_ID {
            return Err(RecordError::InvalidRecord(
                "transactional records need a producer id".into(),
            ));
        }
        if self.producer_id != NO_PRODUCER_ID {
            if self.producer_epoch == NO_PRODUCER_EPOCH {
                return Err(RecordError::InvalidRecord(
                    "invalid negative producer epoch".into(),
                ));
            }
            if self.base_sequence < 0 && !self.is_control {
                return Err(RecordError::InvalidRecord(
                    "invalid negative sequence number".into(),
                ));
            }
        }
        Ok(())
    }
}

/// A control batch holding one transaction marker (COMMIT or ABORT), as Kafka's
/// `MemoryRecords.withEndTransactionMarker`: uncompressed, CreateTime, transactional, no
/// sequence, one record at `base_offset` with the marker's key and value and no headers.
pub fn end_txn_marker_batch(
    base_offset: i64,
    timestamp: i64,
    partition_leader_epoch: i32,
    producer_id: i64,
    producer_epoch: i16,
    marker: &EndTransactionMarker,
) -> Result<Vec<u8>, RecordError> {
    if producer_id == NO_PRODUCER_ID {
        return Err(RecordError::InvalidRecord(
            "an end transaction marker needs a producer id".into(),
        ));
    }
    let mut builder = BatchBuilder::new(Compression::None, None, base_offset, None)
        .producer(producer_id, producer_epoch, NO_SEQUENCE)
        .transactional(true)
        .partition_leader_epoch(partition_leader_epoch);
    builder.is_control = true;
    builder.append_record(timestamp, Some(&marker.key()), Some(&marker.value()), &[])?;
    builder.build()
}

fn put(out: &mut [u8], at: usize, bytes: &[u8]) {
    out[at..at + bytes.len()].copy_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::validate_batch;
    use crate::decode::decode_batch;
    use crate::record::Record;

    fn three_records(compression: Compression) -> BatchBuilder {
        let mut b = BatchBuilder::new(compression, None, 100, None);
        b.append(1_000, Some(b"a"), Some(b"one"), &[]).unwrap();
        b.append(900, None, Some(b"two"), &[Header::new("h", Some(b"x"))])
            .unwrap();
        b.append(1_200, Some(b"c"), None, &[]).unwrap();
        b
    }

    #[test]
    fn header_fields_follow_the_records() {
        let bytes = three_records(Compression::None).build().unwrap();
        let h = validate_batch(&bytes).unwrap();
        assert_eq!(h.size_in_bytes(), bytes.len());
        assert_eq!(
            (h.base_offset, h.last_offset_delta, h.records_count),
            (100, 2, 3)
        );
        assert_eq!(h.last_offset(), 102);
        // baseTimestamp is the first record's, not the smallest; maxTimestamp the greatest.
        assert_eq!((h.base_timestamp, h.max_timestamp), (1_000, 1_200));
        assert_eq!(h.attributes, 0);
        assert_eq!(
            (h.producer_id, h.producer_epoch, h.base_sequence),
            (-1, -1, -1)
        );
        assert_eq!(h.partition_leader_epoch, -1);
    }

    #[test]
    fn records_carry_deltas_from_the_first_timestamp() {
        let batch = decode_batch(&three_records(Compression::None).build().unwrap()).unwrap();
        let deltas: Vec<_> = batch
            .records
            .iter()
            .map(|r| (r.offset_delta, r.timestamp_delta))
            .collect();
        assert_eq!(deltas, [(0, 0), (1, -100), (2, 200)]);
        assert_eq!(batch.records[1].headers, [Header::new("h", Some(b"x"))]);
    }

    #[test]
    fn append_returns_consecutive_offsets() {
        let mut b = BatchBuilder::new(Compression::None, None, 41, None);
        assert_eq!(b.append(0, None, None, &[]).unwrap(), 41);
        assert_eq!(b.append(0, None, None, &[]).unwrap(), 42);
        assert_eq!(b.num_records(), 2);
    }

    #[test]
    fn every_codec_builds_a_batch_that_decodes_back() {
        let expected = decode_batch(&three_records(Compression::None).build().unwrap())
            .unwrap()
            .records;
        for codec in Compression::ALL {
            let bytes = three_records(codec).build().unwrap();
            let batch = decode_batch(&bytes).unwrap();
            assert_eq!(batch.compression().unwrap(), codec);
            assert_eq!(batch.records, expected, "{}", codec.name());
        }
    }

    #[test]
    fn producer_fields_transactional_flag_and_epoch_are_written() {
        let mut b = BatchBuilder::new(Compression::Lz4, None, 0, None)
            .producer(77, 3, 10)
            .transactional(true)
            .partition_leader_epoch(5);
        b.append(5, None, Some(b"v"), &[]).unwrap();
        let h = validate_batch(&b.build().unwrap()).unwrap();
        assert_eq!(
            (h.producer_id, h.producer_epoch, h.base_sequence),
            (77, 3, 10)
        );
        assert_eq!(h.partition_leader_epoch, 5);
        assert!(h.is_transactional() && !h.is_control());
        assert_eq!(h.attributes, 0x10 | 3);
    }

    #[test]
    fn log_append_time_sets_the_flag_and_max_timestamp() {
        let mut b = BatchBuilder::new(Compression::None, Some(9_999), 0, None);
        b.append(10, None, None, &[]).unwrap();
        b.append(20, None, None, &[]).unwrap();
        let bytes = b.build().unwrap();
        let batch = decode_batch(&bytes).unwrap();
        assert!(batch.header.is_log_append_time());
        assert_eq!(
            (batch.header.base_timestamp, batch.header.max_timestamp),
            (10, 9_999)
        );
        assert_eq!(batch.records[1].timestamp_delta, 10);
    }

    #[test]
    fn fixed_base_timestamp_is_the_reference_for_deltas() {
        let mut b = BatchBuilder::new(Compression::None, None, 0, Some(1_000));
        b.append(1_005, None, None, &[]).unwrap();
        let batch = decode_batch(&b.build().unwrap()).unwrap();
        assert_eq!(batch.header.base_timestamp, 1_000);
        assert_eq!(batch.records[0].timestamp_delta, 5);
    }

    #[test]
    fn records_without_timestamps_keep_minus_one() {
        let mut b = BatchBuilder::new(Compression::None, None, 0, None);
        b.append(-1, None, None, &[]).unwrap();
        let h = validate_batch(&b.build().unwrap()).unwrap();
        assert_eq!((h.base_timestamp, h.max_timestamp), (-1, -1));
    }

    #[test]
    fn empty_builder_builds_no_bytes() {
        assert!(BatchBuilder::new(Compression::Gzip, None, 0, None)
            .build()
            .unwrap()
            .is_empty());
    }

    #[test]
    fn negative_timestamp_is_refused() {
        let mut b = BatchBuilder::new(Compression::None, None, 0, None);
        assert_eq!(
            b.append(-2, None, None, &[]).unwrap_err().code(),
            "INVALID_RECORD"
        );
        assert!(b.is_empty());
    }

    #[test]
    fn inconsistent_producer_state_is_refused() {
        let cases = [
            BatchBuilder::new(Compression::None, None, 0, None).transactional(true),
            BatchBuilder::new(Compression::None, None, 0, None).producer(1, -1, 0),
            BatchBuilder::new(Compression::None, None, 0, None).producer(1, 0, -1),
        ];
        for mut b in cases {
            b.append(0, None, None, &[]).unwrap();
            assert_eq!(b.build().unwrap_err().code(), "INVALID_RECORD");
        }
    }

    #[test]
    fn end_txn_marker_batch_is_a_transactional_control_batch() {
        let marker = EndTransactionMarker::commit(4);
        let bytes = end_txn_marker_batch(500, 1_234, 2, 88, 1, &marker).unwrap();
        let batch = decode_batch(&bytes).unwrap();
        let h = batch.header;
        assert!(h.is_control() && h.is_transactional());
        assert_eq!(h.attributes, 0x30);
        assert_eq!(
            (h.base_offset, h.records_count, h.base_sequence),
            (500, 1, -1)
        );
        assert_eq!(
            (h.producer_id, h.producer_epoch, h.partition_leader_epoch),
            (88, 1, 2)
        );
        assert_eq!((h.base_timestamp, h.max_timestamp), (1_234, 1_234));
        let r: &Record = &batch.records[0];
        let parsed =
            EndTransactionMarker::parse(r.key.as_deref().unwrap(), r.value.as_deref()).unwrap();
        assert_eq!(parsed, marker);
    }

    #[test]
    fn end_txn_marker_needs_a_producer() {
        assert!(end_txn_marker_batch(0, 0, 0, -1, 0, &EndTransactionMarker::abort(0)).is_err());
    }
}

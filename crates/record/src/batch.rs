//! The record batch header (magic 2). All fields big-endian; byte offset(length):
//!
//! ```text
//!  0(8) baseOffset           12(4) partitionLeaderEpoch   16(1) magic = 2
//!  8(4) batchLength          17(4) crc (CRC-32C of bytes 21..end)
//! 21(2) attributes           23(4) lastOffsetDelta        27(8) baseTimestamp
//! 35(8) maxTimestamp         43(8) producerId             51(2) producerEpoch
//! 53(4) baseSequence         57(4) recordsCount           61(..) records
//! ```
//!
//! The size of a batch on disk is `LOG_OVERHEAD + batchLength`. baseOffset and
//! partitionLeaderEpoch are outside the CRC, so a leader rewrites them without recomputing it.
use crate::crc::crc32c;
use crate::error::RecordError;

pub const BASE_OFFSET_OFFSET: usize = 0;
pub const LENGTH_OFFSET: usize = 8;
pub const PARTITION_LEADER_EPOCH_OFFSET: usize = 12;
pub const MAGIC_OFFSET: usize = 16;
pub const CRC_OFFSET: usize = 17;
pub const ATTRIBUTES_OFFSET: usize = 21;
pub const LAST_OFFSET_DELTA_OFFSET: usize = 23;
pub const BASE_TIMESTAMP_OFFSET: usize = 27;
pub const MAX_TIMESTAMP_OFFSET: usize = 35;
pub const PRODUCER_ID_OFFSET: usize = 43;
pub const PRODUCER_EPOCH_OFFSET: usize = 51;
pub const BASE_SEQUENCE_OFFSET: usize = 53;
pub const RECORDS_COUNT_OFFSET: usize = 57;
pub const RECORDS_OFFSET: usize = 61;

/// baseOffset + batchLength: the bytes before `batchLength` counts.
pub const LOG_OVERHEAD: usize = 12;
/// The smallest valid batch: a header with no records.
pub const RECORD_BATCH_OVERHEAD: usize = RECORDS_OFFSET;
pub const MAGIC_V2: i8 = 2;

pub const COMPRESSION_CODEC_MASK: i16 = 0x07;
pub const TIMESTAMP_TYPE_MASK: i16 = 0x08;
pub const TRANSACTIONAL_FLAG_MASK: i16 = 0x10;
pub const CONTROL_FLAG_MASK: i16 = 0x20;
pub const DELETE_HORIZON_FLAG_MASK: i16 = 0x40;

pub const NO_PRODUCER_ID: i64 = -1;
pub const NO_PRODUCER_EPOCH: i16 = -1;
pub const NO_SEQUENCE: i32 = -1;
pub const NO_PARTITION_LEADER_EPOCH: i32 = -1;
pub const NO_TIMESTAMP: i64 = -1;

/// The fixed header of one record batch, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    pub base_offset: i64,
    pub batch_length: i32,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records_count: i32,
}

impl BatchHeader {
    /// Decodes the header at the start of `buf`. Checks only that the bytes are there, a
    /// batchLength that covers a header, then the magic (Kafka's order); `validate` checks the rest.
    pub fn parse(buf: &[u8]) -> Result<BatchHeader, RecordError> {
        if buf.len() < RECORD_BATCH_OVERHEAD {
            return Err(RecordError::Truncated {
                needed: RECORD_BATCH_OVERHEAD,
                available: buf.len(),
            });
        }
        let batch_length = be_i32(buf, LENGTH_OFFSET);
        if (batch_length as i64) < (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i64 {
            return Err(RecordError::InvalidBatchLength(batch_length));
        }
        let magic = buf[MAGIC_OFFSET] as i8;
        if magic != MAGIC_V2 {
            return Err(RecordError::UnsupportedMagic(magic));
        }
        Ok(BatchHeader {
            base_offset: be_i64(buf, BASE_OFFSET_OFFSET),
            batch_length,
            partition_leader_epoch: be_i32(buf, PARTITION_LEADER_EPOCH_OFFSET),
            magic,
            crc: be_i32(buf, CRC_OFFSET) as u32,
            attributes: be_i16(buf, ATTRIBUTES_OFFSET),
            last_offset_delta: be_i32(buf, LAST_OFFSET_DELTA_OFFSET),
            base_timestamp: be_i64(buf, BASE_TIMESTAMP_OFFSET),
            max_timestamp: be_i64(buf, MAX_TIMESTAMP_OFFSET),
            producer_id: be_i64(buf, PRODUCER_ID_OFFSET),
            producer_epoch: be_i16(buf, PRODUCER_EPOCH_OFFSET),
            base_sequence: be_i32(buf, BASE_SEQUENCE_OFFSET),
            records_count: be_i32(buf, RECORDS_COUNT_OFFSET),
        })
    }

    /// Bytes the whole batch occupies on disk.
    pub fn size_in_bytes(&self) -> usize {
        LOG_OVERHEAD + self.batch_length as usize
    }

    pub fn last_offset(&self) -> i64 {
        self.base_offset + self.last_offset_delta as i64
    }

    pub fn compression(&self) -> u8 {
        (self.attributes & COMPRESSION_CODEC_MASK) as u8
    }

    pub fn is_log_append_time(&self) -> bool {
        self.attributes & TIMESTAMP_TYPE_MASK != 0
    }

    pub fn is_transactional(&self) -> bool {
        self.attributes & TRANSACTIONAL_FLAG_MASK != 0
    }

    pub fn is_control(&self) -> bool {
        self.attributes & CONTROL_FLAG_MASK != 0
    }

    /// Checks a whole batch (`buf` holds exactly `size_in_bytes()` bytes or more): the CRC over
    /// bytes 21..end, a non-negative record count and lastOffsetDelta consistent with it.
    /// Records themselves are not decoded here.
    pub fn validate(&self, buf: &[u8]) -> Result<(), RecordError> {
        let size = self.size_in_bytes();
        if buf.len() < size {
            return Err(RecordError::Truncated {
                needed: size,
                available: buf.len(),
            });
        }
        let computed = crc32c(&buf[ATTRIBUTES_OFFSET..size]);
        if computed != self.crc {
            return Err(RecordError::CrcMismatch {
                stored: self.crc,
                computed,
            });
        }
        if self.records_count < 0 {
            return Err(RecordError::InvalidRecordCount(self.records_count));
        }
        if self.last_offset_delta < 0
            || (self.records_count > 0 && self.last_offset_delta < self.records_count - 1)
        {
            return Err(RecordError::InvalidLastOffsetDelta {
                last_offset_delta: self.last_offset_delta,
                records_count: self.records_count,
            });
        }
        Ok(())
    }
}

/// Parses and validates the batch at the start of `buf`, returning its header.
pub fn validate_batch(buf: &[u8]) -> Result<BatchHeader, RecordError> {
    let header = BatchHeader::parse(buf)?;
    header.validate(buf)?;
    Ok(header)
}

/// Rewrites baseOffset in place (outside the CRC).
pub fn set_base_offset(buf: &mut [u8], base_offset: i64) {
    buf[BASE_OFFSET_OFFSET..BASE_OFFSET_OFFSET + 8].copy_from_slice(&base_offset.to_be_bytes());
}

/// Rewrites partitionLeaderEpoch in place (outside the CRC).
pub fn set_partition_leader_epoch(buf: &mut [u8], epoch: i32) {
    buf[PARTITION_LEADER_EPOCH_OFFSET..PARTITION_LEADER_EPOCH_OFFSET + 4]
        .copy_from_slice(&epoch.to_be_bytes());
}

/// Sets the timestamp type (the LogAppendTime bit of the attributes) and maxTimestamp of one
/// whole batch, then recomputes its CRC, as Kafka's `DefaultRecordBatch.setMaxTimestamp`; a
/// batch that already has both is left alone. The leader does this for a topic with
/// `message.timestamp.type=LogAppendTime` (`max_timestamp` = now).
pub fn set_max_timestamp(buf: &mut [u8], log_append_time: bool, max_timestamp: i64) {
    let attributes = be_i16(buf, ATTRIBUTES_OFFSET);
    let new_attributes = if log_append_time {
        attributes | TIMESTAMP_TYPE_MASK
    } else {
        attributes & !TIMESTAMP_TYPE_MASK
    };
    if new_attributes == attributes && be_i64(buf, MAX_TIMESTAMP_OFFSET) == max_timestamp {
        return;
    }
    buf[ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2].copy_from_slice(&new_attributes.to_be_bytes());
    buf[MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8]
        .copy_from_slice(&max_timestamp.to_be_bytes());
    update_crc(buf);
}

/// Recomputes and stores the CRC over bytes 21..end of one whole batch.
pub fn update_crc(buf: &mut [u8]) {
    let crc = crc32c(&buf[ATTRIBUTES_OFFSET..]);
    buf[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
}

pub(crate) fn be_i16(buf: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([buf[at], buf[at + 1]])
}

pub(crate) fn be_i32(buf: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(buf[at..at + 4].try_into().expect("4 bytes"))
}

pub(crate) fn be_i64(buf: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(buf[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::BatchBuilder;
    use crate::compression::Compression;

    fn batch() -> Vec<u8> {
        let mut b = BatchBuilder::new(Compression::None, None, 0, None);
        b.append(1_000, None, Some(b"v"), &[]).unwrap();
        b.build().unwrap()
    }

    #[test]
    fn set_max_timestamp_switches_to_log_append_time_and_keeps_the_crc_valid() {
        let mut bytes = batch();
        set_max_timestamp(&mut bytes, true, 5_000);
        let h = validate_batch(&bytes).unwrap();
        assert!(h.is_log_append_time());
        assert_eq!((h.base_timestamp, h.max_timestamp), (1_000, 5_000));
        set_max_timestamp(&mut bytes, false, 1_000);
        assert_eq!(bytes, batch());
    }

    #[test]
    fn base_offset_and_leader_epoch_are_outside_the_crc() {
        let mut bytes = batch();
        set_base_offset(&mut bytes, 1 << 40);
        set_partition_leader_epoch(&mut bytes, 7);
        let h = validate_batch(&bytes).unwrap();
        assert_eq!((h.base_offset, h.partition_leader_epoch), (1 << 40, 7));
    }
}

//! Searches by timestamp within a segment (Kafka's `LogSegment.findOffsetByTimestamp` and
//! `FileRecords.searchForTimestamp`): the time index gives a starting offset, the offset index a
//! starting position, then batch headers are scanned and the records of a candidate batch
//! decoded. A LogAppendTime batch's records all carry the batch's maxTimestamp, as in Kafka.
use ferrolog_record::batch::NO_PARTITION_LEADER_EPOCH;
use ferrolog_record::{records_data, RecordIter, DEFAULT_MAX_DECOMPRESSED_SIZE};

use super::LogSegment;
use crate::error::Result;
use crate::file_batches::FileBatch;

/// Kafka's `TimestampAndOffset` (ListOffsets). `leader_epoch` is -1 when unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampAndOffset {
    pub timestamp: i64,
    pub offset: i64,
    pub leader_epoch: i32,
}

impl LogSegment {
    /// The first record at or after `starting_offset` whose timestamp is >= `timestamp`.
    pub fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let from = self
            .time_index
            .lookup(timestamp)
            .offset
            .max(starting_offset);
        let position = self.offset_index.lookup(from).position;
        self.search(
            position,
            |batch| batch.header.max_timestamp >= timestamp,
            |ts, offset| ts >= timestamp && offset >= starting_offset,
        )
    }

    /// The first record carrying the segment's max timestamp (ListOffsets MAX_TIMESTAMP).
    pub fn find_max_timestamp_record(&self) -> Result<Option<TimestampAndOffset>> {
        let max = self.max_timestamp_so_far;
        if max.timestamp < 0 {
            return Ok(None);
        }
        let position = self.offset_index.lookup(max.offset).position;
        self.search(
            position,
            |batch| batch.header.max_timestamp >= max.timestamp,
            |ts, _| ts == max.timestamp,
        )
    }

    /// Scans batches from `position`; in those `batch_may_hold` accepts, returns the first record
    /// for which `matches(timestamp, offset)`.
    fn search(
        &self,
        position: u32,
        batch_may_hold: impl Fn(&FileBatch) -> bool,
        matches: impl Fn(i64, i64) -> bool,
    ) -> Result<Option<TimestampAndOffset>> {
        for batch in self.batches_from(position)? {
            let batch = batch?;
            if !batch_may_hold(&batch) {
                continue;
            }
            let h = batch.header;
            let bytes = self.read_bytes(batch.position, batch.size())?;
            let data = records_data(&bytes, &h, DEFAULT_MAX_DECOMPRESSED_SIZE)?;
            for record in RecordIter::new(&data, h.records_count) {
                let record = record?;
                let ts = if h.is_log_append_time() {
                    h.max_timestamp
                } else {
                    h.base_timestamp.saturating_add(record.timestamp_delta)
                };
                let offset = h.base_offset.saturating_add(record.offset_delta as i64);
                if matches(ts, offset) {
                    let leader_epoch = h.partition_leader_epoch.max(NO_PARTITION_LEADER_EPOCH);
                    return Ok(Some(TimestampAndOffset {
                        timestamp: ts,
                        offset,
                        leader_epoch,
                    }));
                }
            }
        }
        Ok(None)
    }
}

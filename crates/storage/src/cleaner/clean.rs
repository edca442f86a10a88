//! Building the offset map over the dirty section and cleaning a group of segments into one
//! `.cleaned` segment (Kafka's `Cleaner.buildOffsetMap` and `Cleaner.cleanSegments` /
//! `cleanInto` with `MemoryRecords.filterTo`).
//!
//! Output files, in the partition directory, each in its live format:
//!
//! ```text
//! <base>.log.cleaned        retained batches (crates/record/src/batch.rs)
//! <base>.index.cleaned      offset index (index/offset_index.rs)
//! <base>.timeindex.cleaned  time index (index/time_index.rs)
//! ```
//!
//! `<base>` is the group's first base offset. They are written by an ordinary [`LogSegment`]
//! in a scratch directory `<base>.cleaning/` and renamed into place once complete and synced;
//! the swap into the live log is the caller's (not here yet). A failed round removes both. The
//! caller groups segments so that the group's offsets fit one segment (relative offsets within
//! i32, Kafka's `groupSegmentsBySize`); an append that does not fit fails the round.
//!
//! Per batch (in offset order, `params.aborted` feeding [`CleanedTransactionMetadata`]):
//! - a batch at or past `first_uncleanable_offset` is copied as it is;
//! - a data batch of an aborted transaction loses all its records; a control batch keeps its
//!   marker until its transaction's batches are gone and then until its delete horizon;
//! - a record is kept when its offset is past the map's latest offset, or it has a key, it is
//!   the key's latest offset in the map, and it has a value or its batch's delete horizon
//!   (`hasDeleteHorizonMs`, attribute 0x40, the horizon in baseTimestamp) is unset or not yet
//!   reached. A record without a key is dropped;
//! - a batch keeping every record, with no tombstone or marker needing a horizon, is copied
//!   byte for byte; otherwise it is rebuilt: same baseOffset, lastOffsetDelta (so the producer's
//!   last sequence survives), partitionLeaderEpoch, producer id/epoch, baseSequence, flags and
//!   codec; baseTimestamp = the delete horizon (`now + delete.retention.ms`, set the first time
//!   the batch keeps a tombstone or a removable marker) or else the first kept record's
//!   timestamp; records re-encoded with their offset deltas (the horizon is Kafka 3.x's
//!   KIP-534 one, in the batch; the round reports the latest horizon of the batches still holding
//!   a tombstone or a removable marker, `CleanerStats::latest_delete_horizon_ms`, so the log
//!   cleaner can clean the log again when it has passed, without new dirty data);
//! - a batch left with no record is dropped, except (written as an empty header, uncompressed,
//!   Kafka's `writeEmptyHeader`) the last batch of an active producer (its last data offset, or
//!   its last marker when it has none) and the batch ending at `upper_bound_offset`.
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use ferrolog_record::batch::{
    ATTRIBUTES_OFFSET, BASE_TIMESTAMP_OFFSET, COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK,
    CRC_OFFSET, DELETE_HORIZON_FLAG_MASK, LAST_OFFSET_DELTA_OFFSET, LENGTH_OFFSET, LOG_OVERHEAD,
    MAGIC_OFFSET, MAGIC_V2, MAX_TIMESTAMP_OFFSET, RECORDS_COUNT_OFFSET, RECORDS_OFFSET,
    TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG_MASK,
};
use ferrolog_record::compression::{compress, Compression};
use ferrolog_record::decode::decode_batch_with_limit;
use ferrolog_record::iter::BatchIter;
use ferrolog_record::{crc::crc32c, BatchHeader, DecodedBatch};

use super::offset_map::{SkimpyOffsetMap, DEFAULT_LOAD_FACTOR};
use super::transaction_metadata::{AbortedTxn, CleanedTransactionMetadata};
use crate::config::LogConfig;
use crate::error::{IoContext, Result, StorageError};
use crate::segment::{
    file_name, LogSegment, INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX,
};

pub const CLEANED_FILE_SUFFIX: &str = ".cleaned";
const SCRATCH_DIR_SUFFIX: &str = ".cleaning";

/// One segment to read: its base offset and `.log` file.
#[derive(Debug, Clone)]
pub struct SourceSegment {
    pub base_offset: i64,
    pub log_path: PathBuf,
}

/// What an active producer last wrote (Kafka's `LastRecord`).
#[derive(Debug, Clone, Copy)]
pub struct LastRecord {
    pub last_data_offset: Option<i64>,
    pub producer_epoch: i16,
}

#[derive(Debug, Clone)]
pub struct CleanParams {
    pub current_time_ms: i64,
    pub delete_retention_ms: i64,
    /// Offsets from here on are not cleaned (active segment, min.compaction.lag.ms, LSO).
    pub first_uncleanable_offset: i64,
    /// The map's latest offset + 1: the batch ending here is kept even if empty.
    pub upper_bound_offset: i64,
    pub aborted: Vec<AbortedTxn>,
    pub last_records_of_active_producers: HashMap<i64, LastRecord>,
    pub max_decompressed_bytes: usize,
}

/// A finished round: the three `.cleaned` files, the stats, and the aborted transactions whose
/// markers stayed (the entries of the cleaned segment's transaction index, to be written by the
/// caller once `.txnindex` exists).
#[derive(Debug)]
pub struct Cleaned {
    pub paths: [PathBuf; 3],
    pub stats: CleanerStats,
    pub retained_aborted: Vec<AbortedTxn>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CleanerStats {
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub records_read: u64,
    pub records_retained: u64,
    /// The latest delete horizon of the kept batches that still hold a tombstone or a removable
    /// marker: once it has passed, another round removes them all (the log cleaner's trigger).
    pub latest_delete_horizon_ms: Option<i64>,
}

impl CleanerStats {
    /// Notes a kept batch whose tombstones or marker go once `horizon` has passed.
    pub fn pending_delete_horizon(&mut self, horizon: i64) {
        self.latest_delete_horizon_ms = Some(
            self.latest_delete_horizon_ms
                .map_or(horizon, |h| h.max(horizon)),
        );
    }
}

fn corrupt(what: String) -> StorageError {
    StorageError::CorruptRecord(what)
}

fn read_log(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).ctx("read segment", path)
}

fn first_control_key(batch: &DecodedBatch) -> Option<Vec<u8>> {
    batch.records.first().and_then(|r| r.key.clone())
}

/// Kafka's `buildOffsetMap`: adds the keys of `[start, end)` in `segments` (in order; the one
/// after each is where it ends, `end` for the last), skipping aborted batches, until the map
/// holds `slots * 0.9` keys. Returns whether it filled up; `map.latest_offset()` is then the
/// last offset mapped, and only `[start, latest_offset]` may be cleaned.
pub fn build_offset_map(
    segments: &[SourceSegment],
    start: i64,
    end: i64,
    map: &mut SkimpyOffsetMap,
    aborted: &[AbortedTxn],
    max_decompressed_bytes: usize,
) -> Result<bool> {
    map.clear();
    let mut txns = CleanedTransactionMetadata::new(aborted);
    let max_desired = map.max_desired_size(DEFAULT_LOAD_FACTOR);
    for (i, segment) in segments.iter().enumerate() {
        let next_start = segments.get(i + 1).map_or(end, |s| s.base_offset).min(end);
        let buf = read_log(&segment.log_path)?;
        for item in BatchIter::new(&buf) {
            let (position, header) = item.map_err(|e| corrupt(e.to_string()))?;
            if header.base_offset >= end {
                break;
            }
            let bytes = &buf[position..position + header.size_in_bytes()];
            let decoded = decode_batch_with_limit(bytes, max_decompressed_bytes)
                .map_err(|e| corrupt(e.to_string()))?;
            if header.is_control() {
                let key = first_control_key(&decoded);
                txns.on_control_batch_read(
                    header.last_offset(),
                    header.producer_id,
                    key.as_deref(),
                );
            } else if !txns.on_batch_read(
                header.last_offset(),
                header.is_transactional(),
                header.producer_id,
            ) {
                for record in &decoded.records {
                    let offset = record.offset(header.base_offset);
                    if let Some(key) = &record.key {
                        if offset >= start {
                            if map.size() < max_desired {
                                map.put(key, offset);
                            } else {
                                return Ok(true);
                            }
                        }
                    }
                }
            }
            if header.last_offset() >= start {
                map.update_latest_offset(header.last_offset());
            }
        }
        map.update_latest_offset(next_start - 1);
    }
    Ok(false)
}

/// The scratch directory and the three `.cleaned` paths of a group starting at `base_offset`.
pub fn cleaned_paths(dir: &Path, base_offset: i64) -> [PathBuf; 3] {
    [LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX].map(|s| {
        dir.join(format!(
            "{}{CLEANED_FILE_SUFFIX}",
            file_name(base_offset, s)
        ))
    })
}

/// Kafka's `cleanSegments`: writes the retained batches of `group` into `<base>.*.cleaned` in
/// `dir` (replacing any left from an earlier try).
pub fn clean_segments(
    dir: &Path,
    group: &[SourceSegment],
    map: &SkimpyOffsetMap,
    params: &CleanParams,
    config: &LogConfig,
) -> Result<Cleaned> {
    let base = group
        .first()
        .ok_or_else(|| StorageError::InvalidArgument("no segment to clean".into()))?
        .base_offset;
    let scratch = dir.join(format!("{}{SCRATCH_DIR_SUFFIX}", file_name(base, "")));
    if scratch.exists() {
        fs::remove_dir_all(&scratch).ctx("remove", &scratch)?;
    }
    fs::create_dir(&scratch).ctx("create", &scratch)?;
    let targets = cleaned_paths(dir, base);
    // As Kafka's cleaner deletes its `.cleaned` segment when a round is aborted, a failed round
    // leaves neither the scratch directory nor a part of the output behind.
    match write_cleaned(&scratch, base, group, map, params, config, &targets) {
        Ok((stats, retained_aborted)) => {
            fs::remove_dir(&scratch).ctx("remove", &scratch)?;
            Ok(Cleaned {
                paths: targets,
                stats,
                retained_aborted,
            })
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&scratch);
            for path in &targets {
                let _ = fs::remove_file(path);
            }
            Err(e)
        }
    }
}

fn write_cleaned(
    scratch: &Path,
    base: i64,
    group: &[SourceSegment],
    map: &SkimpyOffsetMap,
    params: &CleanParams,
    config: &LogConfig,
    targets: &[PathBuf; 3],
) -> Result<(CleanerStats, Vec<AbortedTxn>)> {
    let mut dest = LogSegment::create(scratch, base, config, params.current_time_ms)?;
    let mut txns = CleanedTransactionMetadata::new(&params.aborted);
    let mut stats = CleanerStats::default();
    let mut out = Vec::new();
    for segment in group {
        let buf = read_log(&segment.log_path)?;
        for item in BatchIter::new(&buf) {
            let (position, header) = item.map_err(|e| corrupt(e.to_string()))?;
            let bytes = &buf[position..position + header.size_in_bytes()];
            stats.bytes_read += bytes.len() as u64;
            out.clear();
            let kept = if header.base_offset >= params.first_uncleanable_offset {
                out.extend_from_slice(bytes);
                stats.records_read += header.records_count.max(0) as u64;
                stats.records_retained += header.records_count.max(0) as u64;
                true
            } else {
                filter_batch(bytes, &header, map, params, &mut txns, &mut stats, &mut out)?
            };
            if kept {
                let written = BatchHeader::parse(&out).map_err(|e| corrupt(e.to_string()))?;
                dest.append(&out, &written, params.current_time_ms)?;
                stats.bytes_written += out.len() as u64;
            }
        }
    }
    dest.on_become_inactive()?;
    // `.log`, `.index`, `.timeindex`; the cleaned `.txnindex` is written by the caller from
    // `retained_aborted` (a segment creates its own only when it gets an entry).
    let [log, index, time_index, _txn_index] = dest.files();
    let files = [log, index, time_index];
    drop(dest);
    for (_, path) in files.iter() {
        fs::File::open(path)
            .and_then(|f| f.sync_all())
            .ctx("sync", path)?;
    }
    for ((_, from), to) in files.iter().zip(targets.iter()) {
        fs::rename(from, to).ctx("rename", from)?;
    }
    Ok((stats, txns.retained_aborted().to_vec()))
}

/// `MemoryRecords.filterTo` for one batch with the cleaner's filter; writes what is kept of
/// it to `out` and says whether anything is.
fn filter_batch(
    bytes: &[u8],
    header: &BatchHeader,
    map: &SkimpyOffsetMap,
    params: &CleanParams,
    txns: &mut CleanedTransactionMetadata,
    stats: &mut CleanerStats,
    out: &mut Vec<u8>,
) -> Result<bool> {
    let decoded = decode_batch_with_limit(bytes, params.max_decompressed_bytes)
        .map_err(|e| corrupt(e.to_string()))?;
    let is_control = header.is_control();
    let has_horizon = header.attributes & DELETE_HORIZON_FLAG_MASK != 0;
    let can_discard = if is_control {
        let key = first_control_key(&decoded);
        txns.on_control_batch_read(header.last_offset(), header.producer_id, key.as_deref())
    } else {
        txns.on_batch_read(
            header.last_offset(),
            header.is_transactional(),
            header.producer_id,
        )
    };
    let discard_records = if is_control {
        can_discard && has_horizon && header.base_timestamp <= params.current_time_ms
    } else {
        can_discard
    };
    let last_of_producer = params
        .last_records_of_active_producers
        .get(&header.producer_id)
        .is_some_and(|last| match last.last_data_offset {
            Some(offset) => header.last_offset() == offset,
            None => is_control && header.producer_epoch == last.producer_epoch,
        });
    let retain_empty = (header.producer_id >= 0 && last_of_producer)
        || header.last_offset() + 1 == params.upper_bound_offset;
    let contains_marker_for_empty_txn = can_discard && is_control;

    let log_append_time = header.attributes & TIMESTAMP_TYPE_MASK != 0;
    let mut retained = Vec::new();
    let mut contains_tombstones = false;
    for record in &decoded.records {
        stats.records_read += 1;
        let offset = record.offset(header.base_offset);
        let keep = if discard_records {
            false
        } else if is_control || offset > map.latest_offset() {
            // Markers stay while their batch does; past the map nothing is known to be stale.
            true
        } else if let Some(key) = &record.key {
            let latest = offset >= map.get(key);
            let retain_deletes = !has_horizon || params.current_time_ms < header.base_timestamp;
            latest && (record.value.is_some() || retain_deletes)
        } else {
            false
        };
        if keep {
            if record.value.is_none() {
                contains_tombstones = true;
            }
            retained.push(record);
        }
    }
    stats.records_retained += retained.len() as u64;
    if !retained.is_empty() {
        let removable = contains_tombstones || contains_marker_for_empty_txn;
        let need_horizon = removable && !has_horizon;
        let horizon = if need_horizon {
            Some(params.current_time_ms + params.delete_retention_ms)
        } else if has_horizon {
            Some(header.base_timestamp)
        } else {
            None
        };
        if let (true, Some(h)) = (removable, horizon) {
            stats.pending_delete_horizon(h);
        }
        if retained.len() == decoded.records.len() && !need_horizon {
            out.extend_from_slice(bytes);
            return Ok(true);
        }
        let timestamp_of = |r: &ferrolog_record::Record| {
            if log_append_time {
                header.max_timestamp
            } else {
                r.timestamp(header.base_timestamp)
            }
        };
        let base_timestamp = horizon.unwrap_or_else(|| timestamp_of(retained[0]));
        let mut max_timestamp = i64::MIN;
        let mut records = Vec::new();
        for record in &retained {
            let ts = timestamp_of(record);
            max_timestamp = max_timestamp.max(ts);
            let mut copy = (*record).clone();
            copy.attributes = 0;
            copy.timestamp_delta = ts.wrapping_sub(base_timestamp);
            copy.encode(&mut records);
        }
        if log_append_time {
            max_timestamp = header.max_timestamp;
        }
        let codec =
            Compression::from_attributes(header.attributes).map_err(|e| corrupt(e.to_string()))?;
        let body = compress(codec, &records).map_err(|e| corrupt(e.to_string()))?;
        let mut attributes = header.attributes
            & (COMPRESSION_CODEC_MASK
                | TIMESTAMP_TYPE_MASK
                | TRANSACTIONAL_FLAG_MASK
                | CONTROL_FLAG_MASK);
        if horizon.is_some() {
            attributes |= DELETE_HORIZON_FLAG_MASK;
        }
        write_batch(
            out,
            header,
            attributes,
            base_timestamp,
            max_timestamp,
            retained.len() as i32,
            &body,
        );
        Ok(true)
    } else if retain_empty {
        // writeEmptyHeader: no records, uncompressed, base and max timestamp = maxTimestamp.
        let attributes =
            header.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK);
        write_batch(
            out,
            header,
            attributes,
            header.max_timestamp,
            header.max_timestamp,
            0,
            &[],
        );
        Ok(true)
    } else {
        Ok(false)
    }
}

/// A batch with `header`'s offsets, epochs, producer fields and the given rest; CRC computed.
fn write_batch(
    out: &mut Vec<u8>,
    header: &BatchHeader,
    attributes: i16,
    base_timestamp: i64,
    max_timestamp: i64,
    count: i32,
    body: &[u8],
) {
    let start = out.len();
    out.resize(start + RECORDS_OFFSET, 0);
    out.extend_from_slice(body);
    let b = &mut out[start..];
    let len = b.len();
    b[0..8].copy_from_slice(&header.base_offset.to_be_bytes());
    b[LENGTH_OFFSET..LENGTH_OFFSET + 4]
        .copy_from_slice(&((len - LOG_OVERHEAD) as i32).to_be_bytes());
    b[12..16].copy_from_slice(&header.partition_leader_epoch.to_be_bytes());
    b[MAGIC_OFFSET] = MAGIC_V2 as u8;
    b[ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2].copy_from_slice(&attributes.to_be_bytes());
    b[LAST_OFFSET_DELTA_OFFSET..LAST_OFFSET_DELTA_OFFSET + 4]
        .copy_from_slice(&header.last_offset_delta.to_be_bytes());
    b[BASE_TIMESTAMP_OFFSET..BASE_TIMESTAMP_OFFSET + 8]
        .copy_from_slice(&base_timestamp.to_be_bytes());
    b[MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8].copy_from_slice(&max_timestamp.to_be_bytes());
    b[43..51].copy_from_slice(&header.producer_id.to_be_bytes());
    b[51..53].copy_from_slice(&header.producer_epoch.to_be_bytes());
    b[53..57].copy_from_slice(&header.base_sequence.to_be_bytes());
    b[RECORDS_COUNT_OFFSET..RECORDS_COUNT_OFFSET + 4].copy_from_slice(&count.to_be_bytes());
    let crc = crc32c(&b[ATTRIBUTES_OFFSET..]);
    b[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
}

//! One cleaning round of log compaction inside the log (Kafka's `Cleaner.clean`,
//! `groupSegmentsBySize` and `LocalLog.replaceSegments`); the cleaning itself is the cleaner
//! core's (crate::cleaner). A round has three steps so that the caller can hold the log's lock
//! only for the first and the last:
//!
//! 1. [`Log::begin_clean`] (log held): snapshots the segments below the active one and below
//!    `firstUncleanableOffset`, the aborted transactions of their `.txnindex` files and the
//!    active producers' last records.
//! 2. [`CleanRound::run`] (log not held): builds the offset map over
//!    `[firstDirtyOffset, firstUncleanableOffset)` (with nothing dirty, an empty map ending at
//!    `firstDirtyOffset`: the round then only drops tombstones and markers past their delete
//!    horizon), then cleans the segments from the first one
//!    up to the map's end (`map.latest_offset + 1`; a full map cleans less) in groups (a group's
//!    `.log` within segment.bytes, its indexes within segment.index.bytes, its offsets within
//!    i32 of its base), each into `<base>.{log,index,timeindex,txnindex}.cleaned`, synced.
//! 3. [`Log::finish_clean`] (log held): if the cleaned segments were changed meanwhile (a
//!    truncation, retention, DeleteRecords, close), the `.cleaned` files are deleted and the round
//!    reports `aborted`; otherwise each group is swapped in (swap.rs).
//!
//! Producer snapshots and the leader epoch cache are not changed by cleaning.
use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use ferrolog_record::compression::DEFAULT_MAX_DECOMPRESSED_SIZE;

use super::swap::{cleaned_txn_index_path, remove_cleaned, swap_in, CleanedGroup, SnapshotSegment};
use super::Log;
use crate::cleaner::{
    build_offset_map, clean_segments, AbortedTxn, CleanParams, LastRecord, SkimpyOffsetMap,
    SourceSegment,
};
use crate::config::LogConfig;
use crate::error::{IoContext, Result, StorageError};
use crate::index::txn_index::TransactionIndex;

/// Offset index entry size (index/offset_index.rs) and time index entry size
/// (index/time_index.rs), for the group's index budget.
const OFFSET_INDEX_ENTRY_BYTES: u64 = 8;
const TIME_INDEX_ENTRY_BYTES: u64 = 12;

/// What the log cleaner asks of one round (ts/storage/types.ts `LogCleanRequest`).
#[derive(Debug, Clone)]
pub struct LogCleanRequest {
    pub first_dirty_offset: i64,
    pub first_uncleanable_offset: i64,
    pub current_time_ms: i64,
    pub delete_retention_ms: i64,
    /// The offset map's memory (log.cleaner.dedupe.buffer.size for this round).
    pub dedupe_buffer_size: usize,
    /// The largest batch to decompress; the log's max.message.bytes when unset.
    pub max_message_bytes: Option<i32>,
}

/// What one round did (ts/storage/types.ts `LogCleanResult`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogCleanResult {
    /// The next first dirty offset (the cleaner-offset-checkpoint's value).
    pub end_offset: i64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub records_read: u64,
    pub records_retained: u64,
    pub map_size: u64,
    pub map_memory: u64,
    /// Keys in the map / its slots.
    pub buffer_utilization: f64,
    pub segments_before: u32,
    pub segments_after: u32,
    /// The segments changed while the round ran: nothing was swapped in.
    pub aborted: bool,
    /// The latest delete horizon of the cleaned batches still holding a tombstone or a
    /// removable marker (None: none): a round after it removes them.
    pub latest_delete_horizon_ms: Option<i64>,
}

/// Step 2's input: all it needs, nothing of the log.
#[derive(Debug)]
pub struct CleanRound {
    dir: PathBuf,
    config: LogConfig,
    request: LogCleanRequest,
    first_uncleanable: i64,
    segments: Vec<SnapshotSegment>,
    aborted: Vec<AbortedTxn>,
    active_producers: HashMap<i64, LastRecord>,
    truncations: u64,
    cancel: std::sync::Arc<AtomicBool>,
}

/// Step 2's output, for step 3.
#[derive(Debug)]
pub struct CleanOutcome {
    truncations: u64,
    snapshot: Vec<SnapshotSegment>,
    result: Result<(Vec<CleanedGroup>, LogCleanResult)>,
}

impl Log {
    /// Step 1: the snapshot a round works on.
    pub fn begin_clean(&mut self, request: LogCleanRequest) -> Result<CleanRound> {
        self.check_open()?;
        if request.dedupe_buffer_size == 0 {
            return Err(StorageError::InvalidArgument(
                "the dedupe buffer size must be positive".into(),
            ));
        }
        let active_base = self.active().base_offset();
        let first_uncleanable = request.first_uncleanable_offset.min(active_base);
        let segments: Vec<SnapshotSegment> = self
            .segments
            .range(..first_uncleanable)
            .map(|(_, s)| SnapshotSegment {
                base_offset: s.base_offset(),
                log_path: s.log_path().to_path_buf(),
                size: s.size(),
                offset_index_bytes: s.offset_index().entries() as u64 * OFFSET_INDEX_ENTRY_BYTES,
                time_index_bytes: s.time_index().entries() as u64 * TIME_INDEX_ENTRY_BYTES,
            })
            .collect();
        let mut aborted: Vec<AbortedTxn> = self
            .segments
            .range(..first_uncleanable)
            .flat_map(|(_, s)| s.txn_index().entries().iter().copied())
            .collect();
        aborted.sort_by_key(|t| t.first_offset);
        let active_producers = self
            .producers
            .manager
            .entries()
            .map(|e| {
                let last = LastRecord {
                    last_data_offset: (e.last_offset >= 0).then_some(e.last_offset),
                    producer_epoch: e.producer_epoch,
                };
                (e.producer_id, last)
            })
            .collect();
        self.cleaning.store(false, Ordering::SeqCst);
        Ok(CleanRound {
            dir: self.dir.clone(),
            config: self.config.clone(),
            request,
            first_uncleanable,
            segments,
            aborted,
            active_producers,
            truncations: self.truncations,
            cancel: self.cleaning.clone(),
        })
    }

    /// Step 3: swaps the cleaned groups in, or drops them when the log changed meanwhile.
    pub fn finish_clean(&mut self, outcome: CleanOutcome) -> Result<LogCleanResult> {
        let CleanOutcome {
            truncations,
            snapshot,
            result,
        } = outcome;
        let unchanged = !self.closed
            && self.offline.is_none()
            && self.truncations == truncations
            && snapshot.iter().all(|was| {
                self.segments
                    .get(&was.base_offset)
                    .is_some_and(|s| s.size() == was.size && s.log_path() == was.log_path.as_path())
                    && self.active().base_offset() != was.base_offset
            });
        let (groups, mut stats) = match result {
            Ok(done) => done,
            Err(_) if !unchanged => {
                return Ok(LogCleanResult {
                    aborted: true,
                    ..LogCleanResult::default()
                })
            }
            Err(e) => return Err(e),
        };
        if !unchanged {
            for group in &groups {
                remove_cleaned(&group.files)?;
            }
            stats.aborted = true;
            stats.segments_after = stats.segments_before;
            return Ok(stats);
        }
        let replaced: usize = groups.iter().map(|g| g.replaces.len()).sum();
        swap_in(self, &groups)?;
        if !groups.is_empty() {
            self.forget_bound_metadata();
        }
        stats.segments_after = stats.segments_before - replaced as u32 + groups.len() as u32;
        Ok(stats)
    }

    /// A whole round with the log held throughout (tests, and callers without a lock).
    pub fn clean(&mut self, request: LogCleanRequest) -> Result<LogCleanResult> {
        let round = self.begin_clean(request)?;
        let outcome = round.run();
        self.finish_clean(outcome)
    }

    /// Makes a round in progress stop at its next group (close does this).
    pub(crate) fn cancel_cleaning(&self) {
        self.cleaning.store(true, Ordering::SeqCst);
    }
}

impl CleanRound {
    /// Step 2: the offset map and the `.cleaned` groups. Reads and writes files only.
    pub fn run(self) -> CleanOutcome {
        let result = self.clean_groups();
        CleanOutcome {
            truncations: self.truncations,
            snapshot: self.segments,
            result,
        }
    }

    fn clean_groups(&self) -> Result<(Vec<CleanedGroup>, LogCleanResult)> {
        let request = &self.request;
        let max_message_bytes = request
            .max_message_bytes
            .unwrap_or(self.config.max_message_bytes)
            .max(0) as usize;
        let max_decompressed = max_message_bytes.max(DEFAULT_MAX_DECOMPRESSED_SIZE);
        let mut stats = LogCleanResult {
            end_offset: request.first_dirty_offset,
            segments_before: self.segments.len() as u32,
            segments_after: self.segments.len() as u32,
            ..LogCleanResult::default()
        };
        let first_dirty = request.first_dirty_offset;
        let end = self.first_uncleanable;
        let next_base = |i: usize| {
            self.segments
                .get(i + 1)
                .map_or(end, |s: &SnapshotSegment| s.base_offset)
        };
        let dirty: Vec<SourceSegment> = (0..self.segments.len())
            .filter(|&i| next_base(i) > first_dirty)
            .map(|i| source(&self.segments[i]))
            .collect();
        let mut map = SkimpyOffsetMap::new(request.dedupe_buffer_size);
        if dirty.is_empty() || first_dirty >= end {
            // Nothing dirty: the clean section is cleaned again against an empty map that knows
            // every offset before the first dirty one, which removes only the tombstones and
            // markers whose delete horizon has passed (the log cleaner asks for this round then).
            let clean_end = first_dirty.min(end);
            if self
                .segments
                .first()
                .is_none_or(|s| s.base_offset >= clean_end)
            {
                return Ok((Vec::new(), stats));
            }
            map.update_latest_offset(clean_end - 1);
        } else {
            let map_start = first_dirty.max(dirty[0].base_offset);
            let map_aborted = aborted_overlapping(&self.aborted, dirty[0].base_offset, end);
            build_offset_map(
                &dirty,
                map_start,
                end,
                &mut map,
                &map_aborted,
                max_decompressed,
            )?;
        }
        let upper = map.latest_offset() + 1;
        stats.end_offset = upper;
        stats.map_size = map.size() as u64;
        stats.map_memory = map.memory() as u64;
        stats.buffer_utilization = map.size() as f64 / map.slots().max(1) as f64;
        let cleanable: Vec<SnapshotSegment> = self
            .segments
            .iter()
            .filter(|s| s.base_offset < upper)
            .cloned()
            .collect();
        let mut groups = Vec::new();
        let outcome = (|| {
            for group in group_segments_by_size(&cleanable, &self.config, end) {
                if self.cancel.load(Ordering::SeqCst) {
                    break;
                }
                let group_end = self
                    .segments
                    .iter()
                    .find(|s| s.base_offset > group.last().expect("a group").base_offset)
                    .map_or(end, |s| s.base_offset);
                let params = CleanParams {
                    current_time_ms: request.current_time_ms,
                    delete_retention_ms: request.delete_retention_ms,
                    first_uncleanable_offset: end,
                    upper_bound_offset: upper,
                    aborted: aborted_overlapping(&self.aborted, group[0].base_offset, group_end),
                    last_records_of_active_producers: self.active_producers.clone(),
                    max_decompressed_bytes: max_decompressed,
                };
                let sources: Vec<SourceSegment> = group.iter().map(source).collect();
                let cleaned = clean_segments(&self.dir, &sources, &map, &params, &self.config)?;
                let mut files = cleaned.paths.to_vec();
                groups.push(CleanedGroup {
                    base_offset: group[0].base_offset,
                    replaces: group.clone(),
                    files: files.clone(),
                });
                if !cleaned.retained_aborted.is_empty() {
                    let path = cleaned_txn_index_path(&self.dir, group[0].base_offset);
                    TransactionIndex::empty(path.clone()).reset(cleaned.retained_aborted)?;
                    fs::File::open(&path)
                        .and_then(|f| f.sync_all())
                        .ctx("sync", &path)?;
                    files.push(path);
                    groups.last_mut().expect("pushed").files = files;
                }
                stats.bytes_read += cleaned.stats.bytes_read;
                stats.bytes_written += cleaned.stats.bytes_written;
                stats.records_read += cleaned.stats.records_read;
                stats.records_retained += cleaned.stats.records_retained;
                if let Some(h) = cleaned.stats.latest_delete_horizon_ms {
                    stats.latest_delete_horizon_ms =
                        Some(stats.latest_delete_horizon_ms.map_or(h, |was| was.max(h)));
                }
            }
            Ok(())
        })();
        if let Err(e) = outcome {
            for group in &groups {
                let _ = remove_cleaned(&group.files);
            }
            return Err(e);
        }
        Ok((groups, stats))
    }
}

fn source(s: &SnapshotSegment) -> SourceSegment {
    SourceSegment {
        base_offset: s.base_offset,
        log_path: s.log_path.clone(),
    }
}

/// Kafka's `collectAbortedTransactions(start, upper)`: the entries overlapping `[start, upper)`.
fn aborted_overlapping(all: &[AbortedTxn], start: i64, upper: i64) -> Vec<AbortedTxn> {
    all.iter()
        .filter(|t| t.last_offset >= start && t.first_offset < upper)
        .copied()
        .collect()
}

/// Kafka's `groupSegmentsBySize`: consecutive segments while the group's `.log` stays within
/// segment.bytes, each index within segment.index.bytes, and the offsets up to the next
/// segment's base (or `first_uncleanable`) within i32 of the group's base.
pub(crate) fn group_segments_by_size(
    segments: &[SnapshotSegment],
    config: &LogConfig,
    first_uncleanable: i64,
) -> Vec<Vec<SnapshotSegment>> {
    let max_size = config.segment_bytes as u64;
    let max_index = config.segment_index_bytes as u64;
    let mut groups = Vec::new();
    let mut i = 0;
    while i < segments.len() {
        let first = &segments[i];
        let mut group = vec![first.clone()];
        let (mut log, mut index, mut time) = (
            first.size as u64,
            first.offset_index_bytes,
            first.time_index_bytes,
        );
        i += 1;
        while let Some(next) = segments.get(i) {
            let last_offset = segments
                .get(i + 1)
                .map_or(first_uncleanable, |s| s.base_offset)
                - 1;
            let fits = log + next.size as u64 <= max_size
                && index + next.offset_index_bytes <= max_index
                && time + next.time_index_bytes <= max_index
                && (next.size == 0 || last_offset - first.base_offset <= i32::MAX as i64);
            if !fits {
                break;
            }
            log += next.size as u64;
            index += next.offset_index_bytes;
            time += next.time_index_bytes;
            group.push(next.clone());
            i += 1;
        }
        groups.push(group);
    }
    groups
}

//! `cleanLog`: one cleaning round of the log cleaner's core over given segment files
//! (forwards to `ferrolog_storage::cleaner`; the TypeScript twin is ts/storage/js/cleaner/).
//! `cleanLog` is synchronous (tests and benches of the core); `NativeLog.clean`, a round on the
//! live log with its segment swap, runs as [`LogCleanTask`] on a worker thread.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use napi::bindgen_prelude::*;
use napi_derive::napi;

use ferrolog_storage::cleaner::{
    build_offset_map, clean_segments, AbortedTxn, CleanParams, LastRecord, SkimpyOffsetMap,
    SourceSegment,
};
use ferrolog_storage::{CleanOutcome, CleanRound, LogCleanRequest, LogConfig};
use napi::Env;

use crate::convert::{big, int64, storage_error};
use crate::log::{lock, SharedLog};

#[napi(object)]
pub struct CleanerSegment {
    pub base_offset: BigInt,
    pub log_path: String,
}

#[napi(object)]
pub struct CleanerAbortedTxn {
    pub producer_id: BigInt,
    pub first_offset: BigInt,
    pub last_offset: BigInt,
    pub last_stable_offset: BigInt,
}

#[napi(object)]
pub struct CleanerActiveProducer {
    pub producer_id: BigInt,
    pub last_data_offset: Option<BigInt>,
    pub producer_epoch: i32,
}

#[napi(object)]
pub struct CleanLogRequest {
    pub dir: String,
    pub segments: Vec<CleanerSegment>,
    pub first_dirty_offset: BigInt,
    pub first_uncleanable_offset: BigInt,
    pub current_time_ms: BigInt,
    pub delete_retention_ms: BigInt,
    pub dedupe_buffer_size: u32,
    pub index_interval_bytes: u32,
    pub segment_index_bytes: u32,
    pub max_decompressed_bytes: u32,
    pub aborted: Vec<CleanerAbortedTxn>,
    pub active_producers: Vec<CleanerActiveProducer>,
}

#[napi(object)]
pub struct CleanLogResult {
    pub paths: Vec<String>,
    pub map_full: bool,
    pub map_size: u32,
    pub map_memory: u32,
    pub latest_offset: BigInt,
    pub bytes_read: f64,
    pub bytes_written: f64,
    pub records_read: f64,
    pub records_retained: f64,
    /// The aborted transactions whose ABORT markers stayed: the cleaned `.txnindex` entries.
    pub retained_aborted: Vec<CleanerAbortedTxn>,
}

/// Builds the offset map over `[firstDirtyOffset, firstUncleanableOffset)` of `segments`, then
/// cleans them all (as one group) up to what the map covers into `<base>.*.cleaned` in `dir`.
#[napi]
pub fn clean_log(request: CleanLogRequest) -> Result<CleanLogResult> {
    let segments = request
        .segments
        .iter()
        .map(|s| {
            Ok(SourceSegment {
                base_offset: int64(&s.base_offset)?,
                log_path: PathBuf::from(&s.log_path),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let aborted = request
        .aborted
        .iter()
        .map(|t| {
            Ok(AbortedTxn {
                producer_id: int64(&t.producer_id)?,
                first_offset: int64(&t.first_offset)?,
                last_offset: int64(&t.last_offset)?,
                last_stable_offset: int64(&t.last_stable_offset)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut active = HashMap::new();
    for p in &request.active_producers {
        let last_data_offset = p.last_data_offset.as_ref().map(int64).transpose()?;
        active.insert(
            int64(&p.producer_id)?,
            LastRecord {
                last_data_offset,
                producer_epoch: p.producer_epoch as i16,
            },
        );
    }
    let first_uncleanable = int64(&request.first_uncleanable_offset)?;
    let max_decompressed = request.max_decompressed_bytes as usize;
    let mut map = SkimpyOffsetMap::new(request.dedupe_buffer_size as usize);
    let full = build_offset_map(
        &segments,
        int64(&request.first_dirty_offset)?,
        first_uncleanable,
        &mut map,
        &aborted,
        max_decompressed,
    )
    .map_err(|e| storage_error(&e))?;
    let params = CleanParams {
        current_time_ms: int64(&request.current_time_ms)?,
        delete_retention_ms: int64(&request.delete_retention_ms)?,
        first_uncleanable_offset: first_uncleanable,
        upper_bound_offset: map.latest_offset() + 1,
        aborted,
        last_records_of_active_producers: active,
        max_decompressed_bytes: max_decompressed,
    };
    let config = LogConfig {
        index_interval_bytes: request.index_interval_bytes as i32,
        segment_index_bytes: request.segment_index_bytes as i32,
        ..LogConfig::default()
    };
    let cleaned = clean_segments(Path::new(&request.dir), &segments, &map, &params, &config)
        .map_err(|e| storage_error(&e))?;
    let stats = cleaned.stats;
    Ok(CleanLogResult {
        paths: cleaned
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        map_full: full,
        map_size: map.size() as u32,
        map_memory: map.memory() as u32,
        latest_offset: big(map.latest_offset()),
        bytes_read: stats.bytes_read as f64,
        bytes_written: stats.bytes_written as f64,
        records_read: stats.records_read as f64,
        records_retained: stats.records_retained as f64,
        retained_aborted: cleaned
            .retained_aborted
            .iter()
            .map(|t| CleanerAbortedTxn {
                producer_id: big(t.producer_id),
                first_offset: big(t.first_offset),
                last_offset: big(t.last_offset),
                last_stable_offset: big(t.last_stable_offset),
            })
            .collect(),
    })
}

/// `RawLog.clean`'s request (ts/storage/types.ts `LogCleanRequest`).
#[napi(object)]
pub struct NativeLogCleanRequest {
    pub first_dirty_offset: BigInt,
    pub first_uncleanable_offset: BigInt,
    pub current_time_ms: BigInt,
    pub delete_retention_ms: BigInt,
    pub dedupe_buffer_size: u32,
    pub max_message_bytes: Option<i32>,
}

impl NativeLogCleanRequest {
    pub(crate) fn to_request(&self) -> Result<LogCleanRequest> {
        Ok(LogCleanRequest {
            first_dirty_offset: int64(&self.first_dirty_offset)?,
            first_uncleanable_offset: int64(&self.first_uncleanable_offset)?,
            current_time_ms: int64(&self.current_time_ms)?,
            delete_retention_ms: int64(&self.delete_retention_ms)?,
            dedupe_buffer_size: self.dedupe_buffer_size as usize,
            max_message_bytes: self.max_message_bytes,
        })
    }
}

/// `RawLog.clean`'s result (ts/storage/types.ts `LogCleanResult`).
#[napi(object)]
pub struct NativeLogCleanResult {
    pub end_offset: BigInt,
    pub bytes_read: f64,
    pub bytes_written: f64,
    pub records_read: f64,
    pub records_retained: f64,
    pub map_size: f64,
    pub map_memory: f64,
    pub buffer_utilization: f64,
    pub segments_before: u32,
    pub segments_after: u32,
    pub aborted: bool,
    /// The latest delete horizon of the cleaned batches still holding a tombstone or marker.
    pub latest_delete_horizon_ms: Option<BigInt>,
}

/// One cleaning round: the snapshot of the segments taken when `clean` is called (on the JS
/// thread, so every call made after it, a truncation say, comes after the snapshot), the offset map
/// and the `.cleaned` groups on a worker thread without the log (ferrolog_storage's
/// log/clean.rs), and the swap in `resolve`, on the JS thread, so that a read and the
/// `fileRecords` of its slice, which JS makes in one go, never straddle the swap of the segment
/// they name (the path stays, the file changes). The swap is renames, deletes and two directory
/// fsyncs.
pub struct LogCleanTask {
    pub(crate) log: SharedLog,
    pub(crate) round: Option<CleanRound>,
}

impl Task for LogCleanTask {
    type Output = CleanOutcome;
    type JsValue = NativeLogCleanResult;

    fn compute(&mut self) -> Result<CleanOutcome> {
        let round = self
            .round
            .take()
            .ok_or_else(|| Error::from_reason("a cleaning round ran twice"))?;
        Ok(round.run())
    }

    fn resolve(&mut self, _env: Env, outcome: CleanOutcome) -> Result<NativeLogCleanResult> {
        let r = lock(&self.log)
            .finish_clean(outcome)
            .map_err(|e| storage_error(&e))?;
        Ok(NativeLogCleanResult {
            end_offset: big(r.end_offset),
            bytes_read: r.bytes_read as f64,
            bytes_written: r.bytes_written as f64,
            records_read: r.records_read as f64,
            records_retained: r.records_retained as f64,
            map_size: r.map_size as f64,
            map_memory: r.map_memory as f64,
            buffer_utilization: r.buffer_utilization,
            segments_before: r.segments_before,
            segments_after: r.segments_after,
            aborted: r.aborted,
            latest_delete_horizon_ms: r.latest_delete_horizon_ms.map(big),
        })
    }
}

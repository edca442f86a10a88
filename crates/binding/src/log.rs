//! `NativeLog`: one partition's `ferrolog_storage::Log`, shared between the JS thread (sync
//! methods: appends and reads, which do no fsync), libuv's worker threads (the async
//! methods in tasks.rs: open, flush, truncation, retention, close, and the leader's appends of
//! compressed batches) and the storage crate's flusher thread (the flush a roll hands out, after
//! an append or `roll`).
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use ferrolog_storage::flusher::schedule_roll_flush;
use ferrolog_storage::producer_state::snapshot::encode_snapshot;
use ferrolog_storage::{FileSlice, Log};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::convert::*;
use crate::tasks::{AppendAsLeaderTask, LogTask, LogTaskKind, OpenLogTask};
use crate::transfer::FileRecords;

pub type SharedLog = Arc<Mutex<Log>>;

pub fn lock(log: &SharedLog) -> MutexGuard<'_, Log> {
    // A panic while holding the lock would leave the Log in an unknown state; the storage crate
    // does not panic on any input, so poisoning is not expected: keep serving rather than abort.
    log.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[napi]
pub struct NativeLog {
    pub(crate) inner: SharedLog,
    dir: String,
    /// The log's id for `readLogInto` on the thread that made it (read_io.rs).
    read_id: u32,
}

impl NativeLog {
    /// Made on the JS thread (an `AsyncTask`'s resolve), which is where reads run.
    pub(crate) fn new(log: Log) -> NativeLog {
        let dir = log.dir().to_string_lossy().into_owned();
        let inner = Arc::new(Mutex::new(log));
        let read_id = crate::read_io::register(&inner);
        NativeLog {
            inner,
            dir,
            read_id,
        }
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        lock(&self.inner)
    }
}

/// Opens (and if needed recovers) a log on a worker thread.
#[napi(ts_return_type = "Promise<NativeLog>")]
pub fn open_log(options: JsOpenLogOptions) -> Result<AsyncTask<OpenLogTask>> {
    let options = ferrolog_storage::OpenOptions {
        dir: options.dir.into(),
        config: options.config.to_config()?,
        recovery_point: int64(&options.recovery_point)?,
        log_start_offset: int64(&options.log_start_offset)?,
        had_clean_shutdown: options.had_clean_shutdown,
    };
    Ok(AsyncTask::new(OpenLogTask {
        options: Some(options),
    }))
}

#[napi]
impl NativeLog {
    #[napi(getter)]
    pub fn dir(&self) -> String {
        self.dir.clone()
    }

    /// The id `readLogInto` knows this log by (in `io[ReadIo.Log]`), on this thread.
    #[napi(getter)]
    pub fn read_id(&self) -> u32 {
        self.read_id
    }

    #[napi]
    pub fn log_start_offset(&self) -> BigInt {
        big(self.log().log_start_offset())
    }

    #[napi]
    pub fn log_end_offset(&self) -> BigInt {
        big(self.log().log_end_offset())
    }

    #[napi]
    pub fn high_watermark(&self) -> BigInt {
        big(self.log().high_watermark())
    }

    #[napi]
    pub fn last_stable_offset(&self) -> BigInt {
        big(self.log().last_stable_offset())
    }

    #[napi]
    pub fn recovery_point(&self) -> BigInt {
        big(self.log().recovery_point())
    }

    #[napi]
    pub fn update_high_watermark(&self, hw: BigInt) -> Result<BigInt> {
        Ok(big(self.log().update_high_watermark(int64(&hw)?)))
    }

    /// New settings for the log from now on (`Log::update_config`).
    #[napi]
    pub fn update_config(&self, config: JsLogConfig) -> Result<()> {
        let config = config.to_config()?;
        self.log()
            .update_config(config)
            .map_err(|e| storage_error(&e))
    }

    /// `origin`: "CLIENT" (default) or "COORDINATOR" (may append transaction markers).
    #[napi]
    pub fn append_as_leader(
        &self,
        batches: &[u8],
        leader_epoch: i32,
        now_ms: f64,
        origin: Option<String>,
    ) -> Result<JsLogAppendInfo> {
        let origin = append_origin(origin.as_deref())?;
        let mut log = self.log();
        let info = log.append_as_leader_from(batches, leader_epoch, now_ms as i64, origin);
        schedule_roll_flush(&self.inner, &mut log);
        info.map(Into::into).map_err(|e| storage_error(&e))
    }

    /// `appendAsLeader` on a worker thread: the checks (which inflate compressed batches) run
    /// without holding the log, the write holds it (tasks.rs `AppendAsLeaderTask`). Appends to
    /// one log are not ordered among themselves: the caller waits for one before the next.
    #[napi(ts_return_type = "Promise<JsLogAppendInfo>")]
    pub fn append_as_leader_async(
        &self,
        batches: &[u8],
        leader_epoch: i32,
        now_ms: f64,
        origin: Option<String>,
    ) -> Result<AsyncTask<AppendAsLeaderTask>> {
        Ok(AsyncTask::new(AppendAsLeaderTask {
            log: self.inner.clone(),
            batches: Some(batches.to_vec()),
            leader_epoch,
            now_ms: now_ms as i64,
            origin: append_origin(origin.as_deref())?,
        }))
    }

    /// Kafka's `firstUnstableOffset` (`Log::first_unstable_offset`).
    #[napi]
    pub fn first_unstable_offset(&self) -> Option<BigInt> {
        self.log().first_unstable_offset().map(big)
    }

    /// The producer state at the log end (`Log::producer_state_entries`) as the bytes of a
    /// `.snapshot` file: one buffer rather than an object of four BigInts per producer, which
    /// napi makes about ten times slower to hand over for many producers.
    #[napi]
    pub fn producer_state_snapshot(&self) -> Result<Buffer> {
        let entries = self
            .log()
            .producer_state_entries()
            .map_err(|e| storage_error(&e))?;
        Ok(encode_snapshot(entries.iter()).into())
    }

    /// Kafka's `removeExpiredProducers` (`Log::remove_expired_producers`); how many were removed.
    #[napi]
    pub fn remove_expired_producers(&self, now_ms: BigInt, expiration_ms: BigInt) -> Result<u32> {
        let removed = self
            .log()
            .remove_expired_producers(int64(&now_ms)?, int64(&expiration_ms)?)
            .map_err(|e| storage_error(&e))?;
        Ok(u32::try_from(removed).unwrap_or(u32::MAX))
    }

    /// Kafka's `collectAbortedTransactions(startOffset, upperBoundOffset)`.
    #[napi]
    pub fn collect_aborted_transactions(
        &self,
        start_offset: BigInt,
        upper_bound_offset: BigInt,
    ) -> Result<Vec<JsAbortedTransaction>> {
        let found = self
            .log()
            .collect_aborted_transactions(int64(&start_offset)?, int64(&upper_bound_offset)?)
            .map_err(|e| storage_error(&e))?;
        Ok(found.into_iter().map(Into::into).collect())
    }

    /// The aborted transactions of a READ_COMMITTED read (`Log::aborted_transactions_of`): the
    /// read's offset, its segment's base offset, and its slice's position and size.
    #[napi]
    pub fn aborted_transactions_of(
        &self,
        offset: BigInt,
        segment_base_offset: BigInt,
        position: u32,
        size: u32,
    ) -> Result<Vec<JsAbortedTransaction>> {
        let segment = int64(&segment_base_offset)?;
        let span = ferrolog_storage::FetchSpan {
            fetch_offset_metadata: ferrolog_storage::LogOffsetMetadata {
                message_offset: int64(&offset)?,
                segment_base_offset: segment,
                relative_position_in_segment: position,
            },
            segment,
            position,
            size,
            first_entry_incomplete: false,
        };
        let found = self
            .log()
            .aborted_transactions_of(&span)
            .map_err(|e| storage_error(&e))?;
        Ok(found.into_iter().map(Into::into).collect())
    }

    #[napi]
    pub fn append_as_follower(&self, batches: &[u8]) -> Result<JsLogAppendInfo> {
        let mut log = self.log();
        let info = log.append_as_follower(batches);
        schedule_roll_flush(&self.inner, &mut log);
        info.map(Into::into).map_err(|e| storage_error(&e))
    }

    /// The `.log` file of the segment at `baseOffset` (a function of the directory and the base
    /// offset: the same for the life of the log).
    #[napi]
    pub fn segment_file(&self, base_offset: BigInt) -> Result<String> {
        Ok(self
            .log()
            .segment_file(int64(&base_offset)?)
            .to_string_lossy()
            .into_owned())
    }

    #[napi]
    pub fn read_slice(&self, file: String, position: u32, size: u32) -> Result<Buffer> {
        let slice = FileSlice {
            file: file.into(),
            position,
            size,
        };
        self.log()
            .read_slice(&slice)
            .map(Buffer::from)
            .map_err(|e| storage_error(&e))
    }

    /// The segment's open .log file for a slice `read` returned (no new open; the same Arc<File>), or opened by path if the segment was deleted since.
    #[napi]
    pub fn file_records(&self, file: String, position: u32, size: u32) -> Result<FileRecords> {
        match self.log().open_log_file(Path::new(&file)) {
            Some(open) => Ok(FileRecords::new(open, position, size)),
            None => FileRecords::open(file, position, size),
        }
    }

    #[napi]
    pub fn read_batches(
        &self,
        offset: BigInt,
        max_bytes: i32,
        isolation: String,
    ) -> Result<Vec<JsRecordBatch>> {
        let isolation = crate::convert::isolation(&isolation)?;
        let offset = int64(&offset)?;
        let batches = self
            .log()
            .read_batches(offset, max_bytes, isolation)
            .map_err(|e| storage_error(&e))?;
        Ok(batches.into_iter().map(Into::into).collect())
    }

    #[napi]
    pub fn fetch_offset_by_timestamp(
        &self,
        timestamp: BigInt,
    ) -> Result<Option<JsTimestampAndOffset>> {
        let found = self
            .log()
            .fetch_offset_by_timestamp(int64(&timestamp)?)
            .map_err(|e| storage_error(&e))?;
        Ok(found.map(|t| JsTimestampAndOffset {
            timestamp: big(t.timestamp),
            offset: big(t.offset),
            leader_epoch: t.leader_epoch,
        }))
    }

    #[napi]
    pub fn latest_epoch(&self) -> Option<i32> {
        self.log().latest_epoch()
    }

    #[napi]
    pub fn end_offset_for_epoch(&self, epoch: i32) -> Option<JsEpochEndOffset> {
        self.log()
            .end_offset_for_epoch(epoch)
            .map(|e| JsEpochEndOffset {
                epoch: e.epoch,
                end_offset: big(e.end_offset),
            })
    }

    #[napi]
    pub fn epoch_entries(&self) -> Vec<JsEpochEntry> {
        self.log()
            .epoch_entries()
            .into_iter()
            .map(|e| JsEpochEntry {
                epoch: e.epoch,
                start_offset: big(e.start_offset),
            })
            .collect()
    }

    #[napi]
    pub fn maybe_increment_log_start_offset(&self, offset: BigInt) -> Result<()> {
        self.log()
            .maybe_increment_log_start_offset(int64(&offset)?)
            .map_err(|e| storage_error(&e))
    }

    #[napi]
    pub fn roll(&self) -> Result<()> {
        let mut log = self.log();
        let rolled = log.roll();
        schedule_roll_flush(&self.inner, &mut log);
        rolled.map_err(|e| storage_error(&e))
    }

    #[napi]
    pub fn segments(&self) -> Vec<JsSegmentInfo> {
        self.log()
            .segments()
            .into_iter()
            .map(|s| JsSegmentInfo {
                base_offset: big(s.base_offset),
                file: s.file.to_string_lossy().into_owned(),
                size: s.size,
            })
            .collect()
    }

    #[napi]
    pub fn recovery_report(&self) -> JsRecoveryReport {
        self.log().recovery_report().into()
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn truncate_to(&self, offset: BigInt) -> Result<AsyncTask<LogTask>> {
        Ok(self.task(LogTaskKind::TruncateTo(int64(&offset)?)))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn truncate_fully_and_start_at(&self, offset: BigInt) -> Result<AsyncTask<LogTask>> {
        Ok(self.task(LogTaskKind::TruncateFullyAndStartAt(int64(&offset)?)))
    }

    /// Retention; resolves to the number of segments deleted.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn delete_old_segments(&self, now_ms: f64) -> AsyncTask<LogTask> {
        self.task(LogTaskKind::DeleteOldSegments(now_ms as i64))
    }

    /// fsyncs without holding the log: appends and reads go on while the disk works.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn flush(&self) -> AsyncTask<LogTask> {
        self.task(LogTaskKind::Flush)
    }

    /// One cleaning round of log compaction with its segment swap, off the JS thread.
    #[napi(ts_return_type = "Promise<NativeLogCleanResult>")]
    pub fn clean(
        &self,
        request: crate::cleaner::NativeLogCleanRequest,
    ) -> Result<AsyncTask<crate::cleaner::LogCleanTask>> {
        let round = self
            .log()
            .begin_clean(request.to_request()?)
            .map_err(|e| storage_error(&e))?;
        Ok(AsyncTask::new(crate::cleaner::LogCleanTask {
            log: self.inner.clone(),
            round: Some(round),
        }))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<LogTask> {
        self.task(LogTaskKind::Close)
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn delete(&self) -> AsyncTask<LogTask> {
        self.task(LogTaskKind::Delete)
    }
}

impl Drop for NativeLog {
    fn drop(&mut self) {
        crate::read_io::unregister(self.read_id, &self.inner);
    }
}

impl NativeLog {
    fn task(&self, kind: LogTaskKind) -> AsyncTask<LogTask> {
        AsyncTask::new(LogTask {
            log: self.inner.clone(),
            kind,
        })
    }
}

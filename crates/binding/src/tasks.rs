//! The work that may block on the disk, run on libuv's worker threads (napi `AsyncTask`), never
//! on the JS thread: opening with recovery, fsync, truncation, retention, close, and the
//! leader's appends of compressed batches (whose checks inflate them).
use ferrolog_storage::{
    AppendOrigin, LeaderBatches, Log, LogAppendInfo, OpenOptions, StorageError,
};
use napi::bindgen_prelude::*;
use napi::Env;

use crate::convert::{storage_error, JsLogAppendInfo};
use crate::log::{lock, NativeLog, SharedLog};
use ferrolog_storage::flusher::schedule_roll_flush;

pub struct OpenLogTask {
    pub(crate) options: Option<OpenOptions>,
}

impl Task for OpenLogTask {
    type Output = Log;
    type JsValue = NativeLog;

    fn compute(&mut self) -> Result<Log> {
        let options = self
            .options
            .take()
            .ok_or_else(|| Error::from_reason("openLog ran twice"))?;
        Log::open(options).map_err(|e| storage_error(&e))
    }

    fn resolve(&mut self, _env: Env, log: Log) -> Result<NativeLog> {
        Ok(NativeLog::new(log))
    }
}

pub enum LogTaskKind {
    TruncateTo(i64),
    TruncateFullyAndStartAt(i64),
    DeleteOldSegments(i64),
    Flush,
    Close,
    Delete,
}

pub struct LogTask {
    pub(crate) log: SharedLog,
    pub(crate) kind: LogTaskKind,
}

impl Task for LogTask {
    /// Segments deleted, for DeleteOldSegments; 0 otherwise.
    type Output = u32;
    type JsValue = Option<u32>;

    fn compute(&mut self) -> Result<u32> {
        let result: std::result::Result<u32, StorageError> = match self.kind {
            LogTaskKind::TruncateTo(offset) => lock(&self.log).truncate_to(offset).map(|_| 0),
            LogTaskKind::TruncateFullyAndStartAt(offset) => lock(&self.log)
                .truncate_fully_and_start_at(offset)
                .map(|_| 0),
            LogTaskKind::DeleteOldSegments(now) => {
                lock(&self.log).delete_old_segments(now).map(|n| n as u32)
            }
            LogTaskKind::Flush => {
                let job = lock(&self.log).prepare_flush();
                job.and_then(|job| job.run()).map(|flushed| {
                    lock(&self.log).complete_flush(flushed);
                    0
                })
            }
            LogTaskKind::Close => lock(&self.log).close().map(|_| 0),
            LogTaskKind::Delete => lock(&self.log).delete().map(|_| 0),
        };
        result.map_err(|e| storage_error(&e))
    }

    fn resolve(&mut self, _env: Env, output: u32) -> Result<Option<u32>> {
        Ok(match self.kind {
            LogTaskKind::DeleteOldSegments(_) => Some(output),
            _ => None,
        })
    }
}

/// `appendAsLeaderAsync`: the leader's checks (`LeaderBatches::check`, which inflates compressed
/// batches) run on the worker without holding the log, so the JS thread and its reads of the
/// log go on meanwhile; the log is held only to write. If the config changed between the two
/// (AlterConfigs: max.message.bytes, cleanup.policy), the checks run again against the new one.
pub struct AppendAsLeaderTask {
    pub(crate) log: SharedLog,
    pub(crate) batches: Option<Vec<u8>>,
    pub(crate) leader_epoch: i32,
    pub(crate) now_ms: i64,
    pub(crate) origin: AppendOrigin,
}

impl AppendAsLeaderTask {
    fn append(&mut self) -> std::result::Result<LogAppendInfo, StorageError> {
        let mut batches = self
            .batches
            .take()
            .ok_or_else(|| StorageError::InvalidArgument("appendAsLeaderAsync ran twice".into()))?;
        loop {
            let checks = {
                let log = lock(&self.log);
                log.check_open()?;
                log.leader_checks()
            };
            let checked =
                LeaderBatches::check_from(batches, checks.clone(), self.origin, self.now_ms)?;
            let mut log = lock(&self.log);
            if log.leader_checks() == checks {
                let info = log.append_checked_as_leader(checked, self.leader_epoch, self.now_ms);
                // A roll in this append hands out its flush, as after a sync append.
                schedule_roll_flush(&self.log, &mut log);
                return info;
            }
            batches = checked.into_bytes();
        }
    }
}

impl Task for AppendAsLeaderTask {
    type Output = LogAppendInfo;
    type JsValue = JsLogAppendInfo;

    fn compute(&mut self) -> Result<LogAppendInfo> {
        self.append().map_err(|e| storage_error(&e))
    }

    fn resolve(&mut self, _env: Env, info: LogAppendInfo) -> Result<JsLogAppendInfo> {
        Ok(info.into())
    }
}

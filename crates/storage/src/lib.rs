//! Kafka-format partition logs: segments with their offset and time indexes, recovery,
//! retention, the leader epoch cache (docs/storage.md is the behaviour). Pure Rust; the napi
//! binding (crates/binding) forwards `RawLog` of ts/storage/types.ts to [`Log`] method for
//! method.
pub mod cleaner;
pub mod config;
pub mod dir_lock;
pub mod error;
pub mod fd_limit;
pub mod fetch;
pub mod file_batches;
pub(crate) mod files;
pub mod flusher;
pub mod index;
pub mod leader_epoch;
pub mod log;
pub mod producer_state;
pub mod segment;
#[cfg(test)]
pub(crate) mod test_util;

pub use config::{LogConfig, TimestampType};
pub use dir_lock::DirLock;
pub use error::{Result, StorageError};
/// Re-exported so the binding needs no direct dependency on the record crate for these.
pub use ferrolog_record::{DecodedBatch, Header, Record};
pub use fetch::{FetchDataInfo, FetchIsolation, FetchSpan, FileSlice, LogOffsetMetadata};
pub use index::txn_index::{AbortedTransaction, AbortedTxn};
pub use leader_epoch::EpochEntry;
pub use log::{
    AppendOrigin, CleanOutcome, CleanRound, EpochEndOffset, FlushJob, FlushedTo, LeaderBatches,
    LeaderChecks, Log, LogAppendInfo, LogCleanRequest, LogCleanResult, OpenOptions, RecoveryReport,
    SegmentInfo,
};
pub use segment::log_file::{
    max_open_segments, open_sealed_segments, set_max_open_segments, DEFAULT_MAX_OPEN_SEGMENTS,
};
pub use segment::TimestampAndOffset;

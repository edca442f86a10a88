//! The napi-rs binding: classes and functions that convert arguments and forward to
//! `ferrolog-storage`, `ferrolog-record` and `ferrolog-transfer`. No logic lives here.
//!
//! Errors cross as JS errors whose message starts with the storage error's code
//! (`OFFSET_OUT_OF_RANGE: ...`); ts/storage/native-backend.ts rethrows them as `StorageError`s.

// `cargo test --workspace` builds this crate without napi's registration, where the exported
// items look unused.
#![cfg_attr(test, allow(dead_code))]

mod cleaner;
mod convert;
mod dir_lock;
mod fetched;
mod log;
mod read_io;
mod tasks;
mod transfer;

use napi::bindgen_prelude::*;
use napi_derive::napi;

pub use crate::dir_lock::DataDirLock;
pub use crate::log::NativeLog;
pub use crate::transfer::{FileRecords, TransferEngine};

/// CRC-32C (Castagnoli) of a buffer, as record batch v2 uses it.
#[napi(js_name = "crc32c")]
pub fn crc32c(data: &[u8]) -> u32 {
    ferrolog_record::crc::crc32c(data)
}

/// Validates every batch of a buffer of whole batches (header, sizes, CRC-32C, count) and
/// returns how many there were.
#[napi]
pub fn validate_batches(data: &[u8]) -> Result<u32> {
    ferrolog_record::validate_batches(data)
        .map(|n| n as u32)
        .map_err(|e| convert::record_error(&e))
}

/// Compresses `data` with a Kafka codec (`gzip`, `snappy`, `lz4`, `zstd`, or `none`), framed as
/// Kafka's Java client frames it.
#[napi]
pub fn compress(codec: String, data: &[u8]) -> Result<Buffer> {
    let codec = ferrolog_record::Compression::ALL
        .into_iter()
        .find(|c| c.name() == codec)
        .ok_or_else(|| {
            convert::invalid_argument(&format!("unknown compression codec {codec:?}"))
        })?;
    ferrolog_record::compress(codec, data)
        .map(Buffer::from)
        .map_err(|e| convert::record_error(&e))
}

/// The open-file limits (soft, hard; `Infinity` for unlimited).
#[napi(object)]
pub struct JsFileLimit {
    pub soft: f64,
    pub hard: f64,
}

fn file_limit(limit: ferrolog_storage::fd_limit::FileLimit) -> JsFileLimit {
    let n = |v: u64| {
        if v == u64::MAX {
            f64::INFINITY
        } else {
            v as f64
        }
    };
    JsFileLimit {
        soft: n(limit.soft),
        hard: n(limit.hard),
    }
}

/// Raises the soft open-file limit to the hard one, as the JVM does at start; the limits after.
#[napi]
pub fn raise_open_file_limit() -> Result<JsFileLimit> {
    ferrolog_storage::fd_limit::raise_open_file_limit()
        .map(file_limit)
        .map_err(|e| convert::storage_error(&e))
}

/// The open-file limits now.
#[napi]
pub fn open_file_limit() -> Result<JsFileLimit> {
    ferrolog_storage::fd_limit::open_file_limit()
        .map(file_limit)
        .map_err(|e| convert::storage_error(&e))
}

/// Sets the bound on sealed segments whose `.log` the native engine keeps open at once, in this process (at least 1; crates/storage/src/segment/log_file.rs). Over a lowered bound, the least recently read are closed at once; reads in flight keep their descriptors.
#[napi]
pub fn set_max_open_segments(max: u32) {
    ferrolog_storage::set_max_open_segments(max as usize)
}

/// How many sealed segments of the native engine hold their `.log` open now.
#[napi]
pub fn open_sealed_segments() -> u32 {
    ferrolog_storage::open_sealed_segments() as u32
}

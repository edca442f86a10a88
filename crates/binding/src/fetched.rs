//! The consumer's record decoding (ferrolog_record::fetch_index) for JavaScript: the tables come
//! back as Buffers, read by ts/client/fetched-records.ts, which makes record objects lazily.
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::convert;

/// What `indexFetchedRecords` returns; the layout is ferrolog_record::fetch_index's.
#[napi(object)]
pub struct JsFetchedRecordsIndex {
    pub batches: Buffer,
    pub records: Buffer,
    pub headers: Buffer,
    /// Decompressed records of the compressed batches.
    pub arena: Buffer,
    /// Where the whole batches walked end in the records bytes.
    pub end: u32,
    /// The code and message of the error that ended the walk early (a corrupt batch), if any.
    pub error_code: Option<String>,
    pub error_message: Option<String>,
}

/// Checks, decompresses and indexes the whole batches of a Fetch response's records from
/// `fromOffset` on; the records of one compressed batch may inflate to at most
/// `maxDecompressedBytes` (default: the record crate's DEFAULT_MAX_DECOMPRESSED_SIZE). A batch
/// past it ends the walk with the code RECORD_TOO_LARGE (not a corrupt batch: the reader's own
/// bound).
#[napi]
pub fn index_fetched_records(
    records: &[u8],
    from_offset: BigInt,
    max_decompressed_bytes: Option<f64>,
) -> Result<JsFetchedRecordsIndex> {
    let from = convert::int64(&from_offset)?;
    let max = match max_decompressed_bytes {
        None => ferrolog_record::DEFAULT_MAX_DECOMPRESSED_SIZE,
        Some(v) if v.is_finite() && v >= 0.0 && v.fract() == 0.0 => {
            v.min(usize::MAX as f64) as usize
        }
        Some(v) => {
            return Err(convert::invalid_argument(&format!(
                "maxDecompressedBytes must be a whole number >= 0, not {v}"
            )))
        }
    };
    let idx = ferrolog_record::fetch_index::index_fetched_records_with_limit(records, from, max);
    let (error_code, error_message) = match &idx.error {
        None => (None, None),
        Some(e @ ferrolog_record::RecordError::DecompressedTooLarge { .. }) => {
            (Some("RECORD_TOO_LARGE".to_string()), Some(e.to_string()))
        }
        Some(e) => (Some(e.code().to_string()), Some(e.to_string())),
    };
    Ok(JsFetchedRecordsIndex {
        batches: idx.batches.into(),
        records: idx.records.into(),
        headers: idx.headers.into(),
        arena: idx.arena.into(),
        end: idx.end as u32,
        error_code,
        error_message,
    })
}

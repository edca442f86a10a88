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
/// `fromOffset` on.
#[napi]
pub fn index_fetched_records(records: &[u8], from_offset: BigInt) -> Result<JsFetchedRecordsIndex> {
    let from = convert::int64(&from_offset)?;
    let idx = ferrolog_record::fetch_index::index_fetched_records(records, from);
    let (error_code, error_message) = match &idx.error {
        None => (None, None),
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

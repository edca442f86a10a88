//! The napi-rs binding: classes and functions that convert arguments and forward to
//! `ferrolog-storage` and `ferrolog-record`. No logic lives here.
use napi_derive::napi;

/// CRC-32C (Castagnoli) of a buffer, as record batch v2 uses it.
#[napi]
pub fn crc32c(data: &[u8]) -> u32 {
    ferrolog_record::crc::crc32c(data)
}

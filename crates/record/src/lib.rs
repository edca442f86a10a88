//! Kafka's record batch format, magic 2 (docs/record-format.md): the batch header and its
//! CRC-32C ([`batch`]), records ([`record`], [`varint`]), compression ([`compression`]),
//! decoding and the leader's validation ([`decode`]), walking batches in a buffer ([`iter`]),
//! building batches ([`builder`]) and control records ([`control`]).
pub mod batch;
pub mod builder;
pub mod compression;
pub mod control;
pub mod crc;
pub mod decode;
pub mod error;
pub mod fetch_index;
pub mod iter;
pub mod record;
pub mod varint;

pub use batch::{validate_batch, BatchHeader};
pub use builder::{end_txn_marker_batch, BatchBuilder};
pub use compression::{
    compress, decompress, decompress_with, Compression, DEFAULT_MAX_DECOMPRESSED_SIZE,
};
pub use control::{ControlRecordType, EndTransactionMarker};
pub use decode::{
    decode_batch, decode_batch_with_limit, record_errors_message, records_data, validate_records,
    validate_records_bounded, validate_records_with_limit, DecodedBatch, RecordIter, RecordLimits,
    RecordViolation, TimestampChecks, ViolationKind, MAX_APPEND_DECOMPRESSED_SIZE,
};
pub use error::RecordError;
pub use iter::{validate_batches, BatchIter};
pub use record::{Header, Record, RecordRef};

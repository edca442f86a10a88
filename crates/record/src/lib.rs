//! Kafka's record batch format, magic 2 (see SPEC.md section 1).
pub mod batch;
pub mod crc;
pub mod error;

pub use batch::{validate_batch, BatchHeader};
pub use error::RecordError;

//! Log compaction's cleaning core (Kafka's `LogCleaner` / `Cleaner` / `SkimpyOffsetMap`), not
//! yet wired into the live log: [`offset_map`] holds the latest offset per key within a fixed
//! memory budget, [`clean::build_offset_map`] fills it over the dirty section, and
//! [`clean::clean_segments`] rewrites a group of segments into `<base>.*.cleaned` files.
//! [`transaction_metadata`] follows aborted transactions and markers along the way. The
//! TypeScript twin (ts/storage/js/cleaner/) writes the same bytes.
pub mod clean;
pub mod offset_map;
#[cfg(test)]
mod tests;
pub mod transaction_metadata;

pub use clean::{
    build_offset_map, clean_segments, cleaned_paths, CleanParams, Cleaned, CleanerStats,
    LastRecord, SourceSegment, CLEANED_FILE_SUFFIX,
};
pub use offset_map::SkimpyOffsetMap;
pub use transaction_metadata::{AbortedTxn, CleanedTransactionMetadata};

//! The consumer's decoding of a Fetch response's records: every whole batch from a fetch offset
//! on is checked (header, CRC-32C), decompressed and its records parsed, and what a reader needs
//! is written to flat little-endian tables that point into the response's bytes (or into one
//! arena of decompressed bytes), so that the JavaScript side creates a record object, and slices
//! its key and value, only for the records the application reads.
//!
//! Tables (all little-endian, fixed-size entries):
//!
//! ```text
//! batches  40 bytes each: baseOffset i64, lastOffset i64, producerId i64, attributes i16,
//!          (2 unused), firstRecord u32, recordCount u32, inArena u8, (3 unused)
//! records  40 bytes each: offset i64, timestamp i64, keyPos i32, keyLen i32 (-1: null),
//!          valuePos i32, valueLen i32 (-1: null), firstHeader u32, headerCount u32
//! headers  16 bytes each: keyPos i32, keyLen i32, valuePos i32, valueLen i32 (-1: null)
//! ```
//!
//! Positions are into the response's records bytes, or into `arena` when the batch's `inArena`
//! is 1 (a compressed batch). A record's timestamp is the batch's maxTimestamp when the batch has
//! LogAppendTime, as Kafka's consumer reports it. Batches whose last offset is below the fetch
//! offset are skipped without decoding. A partial batch at the end (the broker cuts at
//! max.partition.fetch.bytes) ends the walk: `end` is where the whole batches end. A batch that
//! does not check or decode ends the walk too, with the error kept in `error`: the batches before
//! it are usable, as Kafka's consumer returns the records before a corrupt batch.
use crate::batch::{
    validate_batch, LENGTH_OFFSET, LOG_OVERHEAD, MAGIC_OFFSET, RECORD_BATCH_OVERHEAD,
};
use crate::compression::DEFAULT_MAX_DECOMPRESSED_SIZE;
use crate::decode::{records_data, RecordIter};
use crate::error::RecordError;
use std::borrow::Cow;

pub const BATCH_ENTRY_SIZE: usize = 40;
pub const RECORD_ENTRY_SIZE: usize = 40;
pub const HEADER_ENTRY_SIZE: usize = 16;
const TIMESTAMP_TYPE_MASK: i16 = 0x08;

/// The tables of one response's records; see the module's documentation.
#[derive(Debug, Default)]
pub struct FetchedRecordsIndex {
    pub batches: Vec<u8>,
    pub records: Vec<u8>,
    pub headers: Vec<u8>,
    pub arena: Vec<u8>,
    /// Where the whole batches walked end.
    pub end: usize,
    /// Why the walk stopped before the end of the whole batches, if it did.
    pub error: Option<RecordError>,
}

fn pos_len(slice: Option<&[u8]>, base: *const u8) -> (i32, i32) {
    match slice {
        None => (0, -1),
        Some(s) => ((s.as_ptr() as usize - base as usize) as i32, s.len() as i32),
    }
}

/// Indexes the whole batches of `buf` whose records reach `from_offset` or later.
pub fn index_fetched_records(buf: &[u8], from_offset: i64) -> FetchedRecordsIndex {
    index_fetched_records_with_limit(buf, from_offset, DEFAULT_MAX_DECOMPRESSED_SIZE)
}

/// [`index_fetched_records`] with the records of a compressed batch decompressing to at most
/// `max_decompressed` bytes: a batch past it ends the walk with
/// [`RecordError::DecompressedTooLarge`] (the batches before it are indexed), without inflating
/// the rest of it, so that a reader bounds what one batch may cost it.
pub fn index_fetched_records_with_limit(
    buf: &[u8],
    from_offset: i64,
    max_decompressed: usize,
) -> FetchedRecordsIndex {
    let mut out = FetchedRecordsIndex::default();
    let mut pos = 0usize;
    let mut record_count = 0u32;
    let mut header_count = 0u32;
    loop {
        let remaining = buf.len() - pos;
        // Kafka's FileLogInputStream: size and magic must be there, then the whole batch.
        if remaining <= MAGIC_OFFSET {
            break;
        }
        let batch_length = i32::from_be_bytes(
            buf[pos + LENGTH_OFFSET..pos + LENGTH_OFFSET + 4]
                .try_into()
                .unwrap(),
        );
        if batch_length < (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i32 {
            out.error = Some(RecordError::InvalidBatchLength(batch_length));
            break;
        }
        let size = LOG_OVERHEAD + batch_length as usize;
        if size > remaining {
            break;
        }
        let bytes = &buf[pos..pos + size];
        let header = match validate_batch(bytes) {
            Ok(h) => h,
            Err(e) => {
                out.error = Some(e);
                break;
            }
        };
        let last_offset = header.base_offset + header.last_offset_delta as i64;
        if last_offset < from_offset {
            pos += size;
            out.end = pos;
            continue;
        }
        let data = match records_data(bytes, &header, max_decompressed) {
            Ok(d) => d,
            Err(e) => {
                out.error = Some(e);
                break;
            }
        };
        let (in_arena, base, data_ref): (bool, *const u8, &[u8]) = match &data {
            Cow::Borrowed(d) => (false, buf.as_ptr(), d),
            Cow::Owned(d) => (true, d.as_ptr(), d.as_slice()),
        };
        let arena_start = out.arena.len() as i64;
        let first_record = record_count;
        let mut records =
            Vec::with_capacity(header.records_count.max(0) as usize * RECORD_ENTRY_SIZE);
        let mut headers = Vec::new();
        let mut count = 0u32;
        let log_append_time = header.attributes & TIMESTAMP_TYPE_MASK != 0;
        let mut failed = None;
        for r in RecordIter::new(data_ref, header.records_count) {
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            };
            let shift = |(p, l): (i32, i32)| {
                if l < 0 || !in_arena {
                    (p, l)
                } else {
                    ((p as i64 + arena_start) as i32, l)
                }
            };
            let (kp, kl) = shift(pos_len(r.key, base));
            let (vp, vl) = shift(pos_len(r.value, base));
            let timestamp = if log_append_time {
                header.max_timestamp
            } else {
                header.base_timestamp + r.timestamp_delta
            };
            records.extend_from_slice(&(header.base_offset + r.offset_delta as i64).to_le_bytes());
            records.extend_from_slice(&timestamp.to_le_bytes());
            for v in [kp, kl, vp, vl] {
                records.extend_from_slice(&v.to_le_bytes());
            }
            records.extend_from_slice(&header_count.to_le_bytes());
            records.extend_from_slice(&(r.header_count() as u32).to_le_bytes());
            for (k, v) in r.headers() {
                let (hkp, hkl) = shift(pos_len(Some(k), base));
                let (hvp, hvl) = shift(pos_len(v, base));
                for x in [hkp, hkl, hvp, hvl] {
                    headers.extend_from_slice(&x.to_le_bytes());
                }
                header_count += 1;
            }
            count += 1;
        }
        if let Some(e) = failed {
            out.error = Some(e);
            break;
        }
        if in_arena {
            out.arena.extend_from_slice(data_ref);
        }
        out.records.extend_from_slice(&records);
        out.headers.extend_from_slice(&headers);
        record_count += count;
        out.batches
            .extend_from_slice(&header.base_offset.to_le_bytes());
        out.batches.extend_from_slice(&last_offset.to_le_bytes());
        out.batches
            .extend_from_slice(&header.producer_id.to_le_bytes());
        out.batches
            .extend_from_slice(&header.attributes.to_le_bytes());
        out.batches.extend_from_slice(&[0, 0]);
        out.batches.extend_from_slice(&first_record.to_le_bytes());
        out.batches.extend_from_slice(&count.to_le_bytes());
        out.batches.extend_from_slice(&[in_arena as u8, 0, 0, 0]);
        pos += size;
        out.end = pos;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::BatchBuilder;
    use crate::compression::Compression;
    use crate::record::Header;

    fn batch(base: i64, n: usize, compression: Compression) -> Vec<u8> {
        let mut b = BatchBuilder::new(compression, None, base, Some(1000));
        for i in 0..n {
            let value = format!("v{}", base as usize + i);
            let headers = if i == 0 {
                vec![Header::new(b"h".to_vec(), Some(b"x"))]
            } else {
                vec![]
            };
            b.append(
                1000 + i as i64,
                Some(b"k"),
                Some(value.as_bytes()),
                &headers,
            )
            .unwrap();
        }
        b.build().unwrap()
    }

    fn i64_at(b: &[u8], at: usize) -> i64 {
        i64::from_le_bytes(b[at..at + 8].try_into().unwrap())
    }
    fn i32_at(b: &[u8], at: usize) -> i32 {
        i32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn indexes_plain_and_compressed_batches_into_source_and_arena() {
        let mut buf = batch(0, 3, Compression::None);
        buf.extend(batch(3, 2, Compression::Lz4));
        let idx = index_fetched_records(&buf, 0);
        assert!(idx.error.is_none());
        assert_eq!(idx.end, buf.len());
        assert_eq!(idx.batches.len(), 2 * BATCH_ENTRY_SIZE);
        assert_eq!(idx.records.len(), 5 * RECORD_ENTRY_SIZE);
        for i in 0..5 {
            let e = &idx.records[i * RECORD_ENTRY_SIZE..];
            assert_eq!(i64_at(e, 0), i as i64);
            let (vp, vl) = (i32_at(e, 24) as usize, i32_at(e, 28) as usize);
            let source = if i < 3 { &buf[..] } else { &idx.arena[..] };
            assert_eq!(&source[vp..vp + vl], format!("v{i}").as_bytes());
        }
        assert_eq!(idx.headers.len(), 2 * HEADER_ENTRY_SIZE);
    }

    #[test]
    fn partial_trailing_batch_is_ignored() {
        let mut buf = batch(0, 3, Compression::None);
        let whole = buf.len();
        buf.extend(&batch(3, 3, Compression::None)[..40]);
        let idx = index_fetched_records(&buf, 0);
        assert!(idx.error.is_none());
        assert_eq!(idx.end, whole);
        assert_eq!(idx.records.len(), 3 * RECORD_ENTRY_SIZE);
    }

    #[test]
    fn batches_before_the_fetch_offset_are_skipped_and_a_corrupt_batch_ends_the_walk() {
        let mut buf = batch(0, 3, Compression::None);
        buf.extend(batch(3, 3, Compression::None));
        let second = buf.len();
        buf.extend(batch(6, 3, Compression::None));
        let idx = index_fetched_records(&buf, 3);
        assert_eq!(idx.batches.len(), 2 * BATCH_ENTRY_SIZE);
        assert_eq!(i64_at(&idx.records, 0), 3);
        let last = buf.len() - 1;
        buf[last] ^= 0xff;
        let idx = index_fetched_records(&buf, 0);
        assert!(matches!(idx.error, Some(RecordError::CrcMismatch { .. })));
        assert_eq!(idx.end, second);
    }
}

//! Test batches built with ferrolog-record's `BatchBuilder`.
use ferrolog_record::{BatchBuilder, Compression};

/// An uncompressed CreateTime batch at `base_offset` of `count` records with values of
/// `value_size` bytes, timestamps `timestamp`, `timestamp + 1`, ...
pub fn batch(base_offset: i64, count: usize, value_size: usize, timestamp: i64) -> Vec<u8> {
    batch_with(
        Compression::None,
        base_offset,
        &(0..count as i64).map(|i| timestamp + i).collect::<Vec<_>>(),
        value_size,
    )
}

/// A batch with one record per timestamp.
pub fn batch_with(
    compression: Compression,
    base_offset: i64,
    timestamps: &[i64],
    value_size: usize,
) -> Vec<u8> {
    let mut b = BatchBuilder::new(compression, None, base_offset, None);
    for (i, &ts) in timestamps.iter().enumerate() {
        let value = vec![b'a' + (i % 26) as u8; value_size];
        b.append(ts, Some(format!("k{i}").as_bytes()), Some(&value), &[])
            .unwrap();
    }
    b.build().unwrap()
}

/// A batch with its partition leader epoch set (as a leader would have stamped it).
pub fn batch_in_epoch(base_offset: i64, count: usize, epoch: i32) -> Vec<u8> {
    let mut b =
        BatchBuilder::new(Compression::None, None, base_offset, None).partition_leader_epoch(epoch);
    for i in 0..count {
        b.append(1_000 + i as i64, None, Some(b"v"), &[]).unwrap();
    }
    b.build().unwrap()
}

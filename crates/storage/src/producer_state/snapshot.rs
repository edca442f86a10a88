//! Producer state snapshot files `<offset>.snapshot` (Kafka's `ProducerStateManager`
//! writeSnapshot / readSnapshot, ProducerSnapshot version 1). The TypeScript twin is
//! ts/storage/js/producer-snapshot.ts.
//!
//! ```text
//! version i16 (1) | crc u32 | count i32 | count x entry
//! entry (46 bytes) = producerId i64 | producerEpoch i16 | lastSequence i32 | lastOffset i64 |
//!                    offsetDelta i32 | timestamp i64 | coordinatorEpoch i32 |
//!                    currentTxnFirstOffset i64
//! ```
//!
//! Big-endian; crc is CRC-32C of every byte after it. The state as it was at `offset` (every
//! batch below it applied); entries in producer id order. lastSequence / lastOffset /
//! offsetDelta describe the producer's last data batch (-1 / -1 / 0 once its epoch changed after
//! it), timestamp is its last batch's max timestamp (a marker's too), currentTxnFirstOffset -1
//! when no transaction is open.
use ferrolog_record::crc::crc32c;

use super::ProducerStateEntry;

pub const PRODUCER_SNAPSHOT_VERSION: i16 = 1;
pub const PRODUCER_SNAPSHOT_FILE_SUFFIX: &str = ".snapshot";
const CRC_OFFSET: usize = 2;
const COUNT_OFFSET: usize = 6;
const ENTRIES_OFFSET: usize = 10;
pub const PRODUCER_SNAPSHOT_ENTRY_SIZE: usize = 46;

fn i64_at(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

pub fn encode_snapshot<'a>(
    entries: impl ExactSizeIterator<Item = &'a ProducerStateEntry>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(ENTRIES_OFFSET + entries.len() * PRODUCER_SNAPSHOT_ENTRY_SIZE);
    out.extend_from_slice(&PRODUCER_SNAPSHOT_VERSION.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(entries.len() as i32).to_be_bytes());
    for e in entries {
        out.extend_from_slice(&e.producer_id.to_be_bytes());
        out.extend_from_slice(&e.producer_epoch.to_be_bytes());
        out.extend_from_slice(&e.last_sequence.to_be_bytes());
        out.extend_from_slice(&e.last_offset.to_be_bytes());
        out.extend_from_slice(&e.offset_delta.to_be_bytes());
        out.extend_from_slice(&e.timestamp.to_be_bytes());
        out.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
        out.extend_from_slice(&e.current_txn_first_offset.to_be_bytes());
    }
    let crc = crc32c(&out[COUNT_OFFSET..]);
    out[CRC_OFFSET..COUNT_OFFSET].copy_from_slice(&crc.to_be_bytes());
    out
}

/// The entries of a snapshot file's bytes; Err(why) when they are not a valid snapshot.
pub fn decode_snapshot(buf: &[u8]) -> Result<Vec<ProducerStateEntry>, String> {
    if buf.len() < ENTRIES_OFFSET {
        return Err(format!("snapshot of {} bytes is too short", buf.len()));
    }
    let version = i16::from_be_bytes([buf[0], buf[1]]);
    if version != PRODUCER_SNAPSHOT_VERSION {
        return Err(format!("unknown snapshot version {version}"));
    }
    let stored = u32::from_be_bytes(buf[CRC_OFFSET..COUNT_OFFSET].try_into().expect("4 bytes"));
    let computed = crc32c(&buf[COUNT_OFFSET..]);
    if stored != computed {
        return Err(format!(
            "snapshot CRC mismatch (stored {stored}, computed {computed})"
        ));
    }
    let count = i32_at(buf, COUNT_OFFSET);
    if count < 0 || ENTRIES_OFFSET + count as usize * PRODUCER_SNAPSHOT_ENTRY_SIZE != buf.len() {
        return Err(format!(
            "snapshot of {} bytes does not hold {count} entries",
            buf.len()
        ));
    }
    Ok(buf[ENTRIES_OFFSET..]
        .chunks_exact(PRODUCER_SNAPSHOT_ENTRY_SIZE)
        .map(|e| ProducerStateEntry {
            producer_id: i64_at(e, 0),
            producer_epoch: i16::from_be_bytes([e[8], e[9]]),
            last_sequence: i32_at(e, 10),
            last_offset: i64_at(e, 14),
            offset_delta: i32_at(e, 22),
            timestamp: i64_at(e, 26),
            coordinator_epoch: i32_at(e, 34),
            current_txn_first_offset: i64_at(e, 38),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kafkas_snapshots_and_writes_them_back_byte_for_byte() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../__test__/fixtures/kafka/fixture-0");
        for name in [
            "00000000000000000106.snapshot",
            "00000000000000000264.snapshot",
            "00000000000000000274.snapshot",
        ] {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            let entries = decode_snapshot(&bytes).unwrap();
            assert_eq!(encode_snapshot(entries.iter()), bytes, "{name}");
        }
        let at264 =
            decode_snapshot(&std::fs::read(dir.join("00000000000000000264.snapshot")).unwrap())
                .unwrap();
        let p5 = at264.iter().find(|e| e.producer_id == 5).unwrap();
        assert_eq!(
            (
                p5.current_txn_first_offset,
                p5.last_offset,
                p5.last_sequence
            ),
            (260, 263, 3)
        );
    }

    #[test]
    fn a_damaged_snapshot_is_refused() {
        let mut bytes = encode_snapshot([].iter());
        bytes[7] ^= 1;
        assert!(decode_snapshot(&bytes).is_err());
    }
}

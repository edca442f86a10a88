//! The cleaner's map of the latest offset per key (Kafka's `SkimpyOffsetMap`).
//!
//! Memory is fixed when the map is made and never grows: `memory` bytes (the share of
//! `log.cleaner.dedupe.buffer.size` of one cleaner thread) are cut into `memory / 24` slots of
//!
//! ```text
//! 0(16) MD5 digest of the key     16(8) offset, big-endian
//! ```
//!
//! A key is found by its digest only, never stored itself, so a million keys cost 24 MB
//! whatever their length (two keys with the same MD5 would count as one, as in Kafka). Open
//! addressing: attempt `i` probes the slot named by the 4 digest bytes at `min(i, 12)`, plus
//! `max(0, i - 12)`, modulo the slots; an all-zero slot is empty. The map is full at
//! `slots * load_factor` entries (`log.cleaner.io.buffer.load.factor`, 0.9): the builder stops
//! adding keys there, and `latest_offset` says how far the dirty section was mapped.
use md5::{Digest, Md5};

pub const HASH_SIZE: usize = 16;
pub const ENTRY_SIZE: usize = HASH_SIZE + 8;
/// Kafka's `log.cleaner.io.buffer.load.factor` default.
pub const DEFAULT_LOAD_FACTOR: f64 = 0.9;

#[derive(Debug)]
pub struct SkimpyOffsetMap {
    bytes: Vec<u8>,
    slots: usize,
    entries: usize,
    latest_offset: i64,
}

impl SkimpyOffsetMap {
    /// A map of `memory / 24` slots (at least one), using exactly that many * 24 bytes.
    pub fn new(memory: usize) -> SkimpyOffsetMap {
        let slots = (memory / ENTRY_SIZE).max(1);
        SkimpyOffsetMap {
            bytes: vec![0; slots * ENTRY_SIZE],
            slots,
            entries: 0,
            latest_offset: -1,
        }
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Distinct keys held.
    pub fn size(&self) -> usize {
        self.entries
    }

    /// Bytes of the slot array (the map's whole memory).
    pub fn memory(&self) -> usize {
        self.bytes.len()
    }

    /// The most entries the builder puts in before it calls the map full.
    pub fn max_desired_size(&self, load_factor: f64) -> usize {
        (self.slots as f64 * load_factor) as usize
    }

    /// The last offset the map covers (-1 when nothing was mapped).
    pub fn latest_offset(&self) -> i64 {
        self.latest_offset
    }

    pub fn update_latest_offset(&mut self, offset: i64) {
        self.latest_offset = offset;
    }

    pub fn clear(&mut self) {
        self.bytes.fill(0);
        self.entries = 0;
        self.latest_offset = -1;
    }

    fn digest(key: &[u8]) -> [u8; HASH_SIZE] {
        Md5::digest(key).into()
    }

    fn position_of(&self, hash: &[u8; HASH_SIZE], attempt: usize) -> usize {
        let at = attempt.min(HASH_SIZE - 4);
        let probe = i32::from_be_bytes(hash[at..at + 4].try_into().unwrap())
            .wrapping_add(attempt.saturating_sub(HASH_SIZE - 4) as i32);
        ((probe & 0x7fff_ffff) as usize % self.slots) * ENTRY_SIZE
    }

    fn is_empty_at(&self, position: usize) -> bool {
        self.bytes[position..position + ENTRY_SIZE]
            .iter()
            .all(|&b| b == 0)
    }

    /// Records `offset` as the latest offset of `key` and moves `latest_offset` to it.
    /// Panics if every slot is taken (the builder stops at the load factor long before).
    pub fn put(&mut self, key: &[u8], offset: i64) {
        assert!(self.entries < self.slots, "offset map is full");
        let hash = Self::digest(key);
        let mut attempt = 0;
        loop {
            let position = self.position_of(&hash, attempt);
            if self.is_empty_at(position) {
                self.bytes[position..position + HASH_SIZE].copy_from_slice(&hash);
                self.bytes[position + HASH_SIZE..position + ENTRY_SIZE]
                    .copy_from_slice(&offset.to_be_bytes());
                self.entries += 1;
                break;
            }
            if self.bytes[position..position + HASH_SIZE] == hash {
                self.bytes[position + HASH_SIZE..position + ENTRY_SIZE]
                    .copy_from_slice(&offset.to_be_bytes());
                break;
            }
            attempt += 1;
        }
        self.latest_offset = offset;
    }

    /// The latest offset of `key`, or -1 if it is not in the map.
    pub fn get(&self, key: &[u8]) -> i64 {
        let hash = Self::digest(key);
        for attempt in 0..=self.slots + HASH_SIZE {
            let position = self.position_of(&hash, attempt);
            if self.is_empty_at(position) {
                return -1;
            }
            if self.bytes[position..position + HASH_SIZE] == hash {
                let at = position + HASH_SIZE;
                return i64::from_be_bytes(self.bytes[at..at + 8].try_into().unwrap());
            }
        }
        -1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latest_put_wins_and_absent_keys_are_minus_one() {
        let mut map = SkimpyOffsetMap::new(24 * 100);
        map.put(b"a", 1);
        map.put(b"b", 2);
        map.put(b"a", 7);
        assert_eq!(map.get(b"a"), 7);
        assert_eq!(map.get(b"b"), 2);
        assert_eq!(map.get(b"c"), -1);
        assert_eq!(map.size(), 2);
        assert_eq!(map.latest_offset(), 7);
    }

    #[test]
    fn memory_is_fixed_at_24_bytes_a_slot() {
        let map = SkimpyOffsetMap::new(1_000_000);
        assert_eq!(map.slots(), 41_666);
        assert_eq!(map.memory(), 41_666 * 24);
        assert_eq!(map.max_desired_size(DEFAULT_LOAD_FACTOR), 37_499);
    }

    #[test]
    fn a_nearly_full_map_still_finds_every_key() {
        let mut map = SkimpyOffsetMap::new(24 * 64);
        for i in 0..64 {
            map.put(format!("k{i}").as_bytes(), i);
        }
        assert_eq!(map.size(), 64);
        for i in 0..64 {
            assert_eq!(map.get(format!("k{i}").as_bytes()), i);
        }
        map.clear();
        assert_eq!(map.size(), 0);
        assert_eq!(map.get(b"k1"), -1);
    }
}

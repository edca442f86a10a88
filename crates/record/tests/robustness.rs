//! Decoding never panics: random bytes and mutated valid batches (every codec) go through
//! decode_batch, validate_records and BatchIter, with a seeded PRNG so failures reproduce.
//! `FERROLOG_FUZZ_SCALE=50 cargo test --release --test robustness` runs 50 times as many.
use ferrolog_record::batch::{update_crc, ATTRIBUTES_OFFSET};
use ferrolog_record::{
    decode_batch_with_limit, validate_batch, validate_records_with_limit, BatchBuilder, BatchIter,
    Compression, Header, RecordError,
};
use std::collections::BTreeSet;

/// xorshift64*: small, seeded, good enough to shake bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const LIMIT: usize = 1 << 20;

/// `n` rounds, times `FERROLOG_FUZZ_SCALE` (default 1) for a longer run by hand.
fn rounds(n: usize) -> usize {
    n * std::env::var("FERROLOG_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

fn sample_batch(codec: Compression, rng: &mut Rng) -> Vec<u8> {
    let mut b = BatchBuilder::new(codec, None, rng.below(1000) as i64, None);
    for i in 0..1 + rng.below(20) {
        let value: Vec<u8> = (0..rng.below(200)).map(|j| b"abcab"[(i + j) % 5]).collect();
        let headers = if i % 3 == 0 {
            vec![Header::new("trace", Some(b"x"))]
        } else {
            vec![]
        };
        b.append(
            1_700_000_000_000 + i as i64,
            Some(b"key"),
            Some(&value),
            &headers,
        )
        .unwrap();
    }
    b.build().unwrap()
}

/// Everything a reader might do with the bytes; only that it returns matters. Gives the
/// decode_batch error, if any, as a short name.
fn exercise(bytes: &[u8]) -> Option<&'static str> {
    let decoded = decode_batch_with_limit(bytes, LIMIT);
    if let Ok(header) = ferrolog_record::BatchHeader::parse(bytes) {
        let _ = validate_records_with_limit(bytes, &header, LIMIT);
    }
    for item in BatchIter::new(bytes).verify_crc() {
        let _ = item;
    }
    decoded.err().map(|e| match e {
        RecordError::Truncated { .. } => "truncated",
        RecordError::CrcMismatch { .. } => "crc",
        RecordError::InvalidRecord(_) => "record",
        RecordError::Compression(_) => "compression",
        _ => "other",
    })
}

fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
    match rng.below(5) {
        0 => {
            let at = rng.below(bytes.len());
            bytes[at] ^= 1 << rng.below(8);
        }
        1 => {
            let at = rng.below(bytes.len());
            bytes[at] = rng.next() as u8;
        }
        2 => bytes.truncate(rng.below(bytes.len() + 1)),
        3 => {
            let at = rng.below(bytes.len() + 1);
            bytes.insert(at, rng.next() as u8);
        }
        _ => {
            let at = rng.below(bytes.len());
            bytes.remove(at);
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..rounds(20_000) {
        let len = rng.below(200);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if bytes.len() > 17 && rng.below(2) == 0 {
            // Make it look like a batch header so the deeper paths run.
            bytes[16] = 2;
            let batch_length = (bytes.len() - 12) as i32;
            bytes[8..12].copy_from_slice(&batch_length.to_be_bytes());
            if bytes.len() >= 61 {
                update_crc(&mut bytes);
            }
        }
        let _ = exercise(&bytes);
    }
}

#[test]
fn mutated_batches_of_every_codec_never_panic() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let mut seen = BTreeSet::new();
    for round in 0..rounds(4_000) {
        let codec = Compression::ALL[round % Compression::ALL.len()];
        let mut bytes = sample_batch(codec, &mut rng);
        assert_eq!(exercise(&bytes), None);
        for _ in 0..1 + rng.below(4) {
            if !bytes.is_empty() {
                mutate(&mut rng, &mut bytes);
            }
        }
        // Half the time fix the CRC (and batchLength) so the damage reaches the records.
        if rng.below(2) == 0 && bytes.len() >= 61 {
            let batch_length = (bytes.len() - 12) as i32;
            bytes[8..12].copy_from_slice(&batch_length.to_be_bytes());
            update_crc(&mut bytes);
        }
        seen.extend(exercise(&bytes));
    }
    // The mutations reached every layer, not only the header checks.
    for kind in ["truncated", "crc", "record", "compression"] {
        assert!(seen.contains(kind), "no {kind} error in {seen:?}");
    }
}

#[test]
fn mutated_compressed_payloads_never_panic() {
    // Damage only the compressed records, keep the header and CRC right: the codecs' decoders
    // see every kind of broken stream.
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    for round in 0..rounds(4_000) {
        let codec = Compression::ALL[1 + round % 4];
        let mut bytes = sample_batch(codec, &mut rng);
        for _ in 0..1 + rng.below(3) {
            let at = 61 + rng.below(bytes.len() - 61);
            bytes[at] = rng.next() as u8;
        }
        update_crc(&mut bytes);
        assert_eq!(
            validate_batch(&bytes).unwrap().attributes,
            bytes[ATTRIBUTES_OFFSET + 1] as i16
        );
        let _ = exercise(&bytes);
    }
}

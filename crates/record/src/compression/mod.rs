//! Compression of a batch's records, bytes-compatible with Kafka's Java client both ways. The
//! codec id sits in bits 0-2 of the batch attributes; everything after the 61-byte header is
//! compressed as one stream:
//!
//! | id | codec  | stream as Kafka writes it                                         | module     |
//! |----|--------|-------------------------------------------------------------------|------------|
//! | 0  | none   | the records                                                       |            |
//! | 1  | gzip   | a gzip member (`GZIPOutputStream`)                                | [`gzip`]   |
//! | 2  | snappy | xerial snappy-java framing (`SnappyOutputStream`)                 | [`snappy`] |
//! | 3  | lz4    | an LZ4 frame, 64 KiB independent blocks (`Lz4BlockOutputStream`)  | [`lz4`]    |
//! | 4  | zstd   | a zstd frame (zstd-jni `ZstdOutputStream`), level 3               | [`zstd`]   |
//!
//! Decompression is bounded: `max_output` caps the bytes it may produce, so a small batch that
//! inflates to gigabytes (a decompression bomb) fails with [`RecordError::DecompressedTooLarge`] instead
//! of exhausting memory. It is also incremental: [`decompress_with`] hands the output produced so
//! far to a [`Progress`] callback after every block (lz4, snappy) or every [`STEP`] bytes (gzip,
//! zstd), so a caller that can judge a prefix (a leader's record checks) stops a bomb after its
//! first block instead of inflating all of it.
pub mod gzip;
pub mod lz4;
pub mod snappy;
pub mod zstd;

use std::io::Read;

use crate::batch::COMPRESSION_CODEC_MASK;
use crate::error::RecordError;

/// Default cap on the decompressed size of one batch's records (256 MiB).
pub const DEFAULT_MAX_DECOMPRESSED_SIZE: usize = 256 << 20;
/// How much gzip and zstd output is produced between two [`Progress`] calls.
pub const STEP: usize = 128 << 10;

/// Called with the whole output so far after each step of a decompression; an error stops it.
pub type Progress<'a> = &'a mut dyn FnMut(&[u8]) -> Result<(), RecordError>;

/// A batch's compression codec (Kafka's `CompressionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Compression {
    None = 0,
    Gzip = 1,
    Snappy = 2,
    Lz4 = 3,
    Zstd = 4,
}

impl Compression {
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// The codec with Kafka's id `id`; 5-7 (and above) are [`RecordError::UnknownCompression`].
    pub fn from_id(id: u8) -> Result<Compression, RecordError> {
        match id {
            0 => Ok(Compression::None),
            1 => Ok(Compression::Gzip),
            2 => Ok(Compression::Snappy),
            3 => Ok(Compression::Lz4),
            4 => Ok(Compression::Zstd),
            other => Err(RecordError::UnknownCompression(other)),
        }
    }

    /// The codec named by bits 0-2 of a batch's attributes.
    pub fn from_attributes(attributes: i16) -> Result<Compression, RecordError> {
        Compression::from_id((attributes & COMPRESSION_CODEC_MASK) as u8)
    }

    pub fn id(self) -> u8 {
        self as u8
    }

    /// Kafka's name: `none`, `gzip`, `snappy`, `lz4`, `zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

/// Compresses `data` as Kafka's Java client does for `codec`.
pub fn compress(codec: Compression, data: &[u8]) -> Result<Vec<u8>, RecordError> {
    match codec {
        Compression::None => Ok(data.to_vec()),
        Compression::Gzip => gzip::compress(data),
        Compression::Snappy => Ok(snappy::compress(data)),
        Compression::Lz4 => Ok(lz4::compress(data)),
        Compression::Zstd => self::zstd::compress(data),
    }
}

/// Decompresses `data` written with `codec`, refusing to produce more than `max_output` bytes.
pub fn decompress(
    codec: Compression,
    data: &[u8],
    max_output: usize,
) -> Result<Vec<u8>, RecordError> {
    decompress_with(codec, data, max_output, &mut |_| Ok(()))
}

/// [`decompress`], calling `progress` with the output so far after every step; the first error
/// it returns ends the decompression with that error.
pub fn decompress_with(
    codec: Compression,
    data: &[u8],
    max_output: usize,
    progress: Progress,
) -> Result<Vec<u8>, RecordError> {
    match codec {
        Compression::None => {
            check_size(codec, data.len(), max_output)?;
            progress(data)?;
            Ok(data.to_vec())
        }
        Compression::Gzip => gzip::decompress(data, max_output, progress),
        Compression::Snappy => snappy::decompress(data, max_output, progress),
        Compression::Lz4 => lz4::decompress(data, max_output, progress),
        Compression::Zstd => self::zstd::decompress(data, max_output, progress),
    }
}

/// Fails when `size` bytes of output would pass `max_output`.
pub(crate) fn check_size(
    codec: Compression,
    size: usize,
    max_output: usize,
) -> Result<(), RecordError> {
    if size > max_output {
        return Err(RecordError::DecompressedTooLarge {
            codec: codec.name(),
            max: max_output,
        });
    }
    Ok(())
}

/// Reads `reader` to its end into `out`, [`STEP`] bytes at a time with `progress` after each,
/// failing once `out` would hold more than `max_output`.
pub(crate) fn read_bounded(
    codec: Compression,
    reader: impl Read,
    out: &mut Vec<u8>,
    max_output: usize,
    progress: Progress,
) -> Result<(), RecordError> {
    let budget = max_output.saturating_sub(out.len()) as u64;
    let mut reader = reader.take(budget.saturating_add(1));
    loop {
        let start = out.len();
        let n = (&mut reader)
            .take(STEP as u64)
            .read_to_end(out)
            .map_err(|e| corrupt(codec, e))?;
        check_size(codec, out.len(), max_output)?;
        if n == 0 {
            return Ok(());
        }
        debug_assert!(out.len() > start);
        progress(out)?;
    }
}

pub(crate) fn corrupt(codec: Compression, why: impl std::fmt::Display) -> RecordError {
    RecordError::Compression(format!("{}: {why}", codec.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records-like input: repetitive with some noise, larger than one block of every codec.
    pub(crate) fn sample(len: usize) -> Vec<u8> {
        let mut x: u32 = 0x1234_5678;
        (0..len)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                if i % 7 == 0 {
                    x as u8
                } else {
                    b"kafka-record-"[i % 13]
                }
            })
            .collect()
    }

    #[test]
    fn every_codec_round_trips() {
        for codec in Compression::ALL {
            for len in [0, 1, 100, 70_000, 300_000] {
                let data = sample(len);
                let packed = compress(codec, &data).unwrap();
                let back = decompress(codec, &packed, DEFAULT_MAX_DECOMPRESSED_SIZE).unwrap();
                assert_eq!(back, data, "{} with {len} bytes", codec.name());
            }
        }
    }

    #[test]
    fn every_codec_refuses_output_past_the_limit() {
        let data = vec![0u8; 1 << 20];
        for codec in Compression::ALL {
            let packed = compress(codec, &data).unwrap();
            let err = decompress(codec, &packed, (1 << 20) - 1).unwrap_err();
            assert!(
                matches!(err, RecordError::DecompressedTooLarge { max, .. } if max == (1 << 20) - 1),
                "{}: {err}",
                codec.name()
            );
            assert_eq!(decompress(codec, &packed, 1 << 20).unwrap().len(), 1 << 20);
        }
    }

    #[test]
    fn progress_sees_a_bomb_after_its_first_steps() {
        let data = vec![0u8; 64 << 20];
        for codec in Compression::ALL {
            let packed = compress(codec, &data).unwrap();
            let mut calls = 0;
            let mut largest = 0;
            let err = decompress_with(codec, &packed, usize::MAX, &mut |out| {
                calls += 1;
                largest = out.len();
                if out.len() >= 1 << 20 {
                    return Err(RecordError::InvalidRecord("enough".into()));
                }
                Ok(())
            })
            .unwrap_err();
            assert_eq!(
                err,
                RecordError::InvalidRecord("enough".into()),
                "{}",
                codec.name()
            );
            assert!(
                largest < 2 << 20 || codec == Compression::None,
                "{}: {largest} bytes",
                codec.name()
            );
            assert!(calls >= 1);
        }
    }

    #[test]
    fn garbage_is_a_compression_error_for_every_codec() {
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let err = decompress(codec, b"definitely not compressed", 1 << 20).unwrap_err();
            assert!(
                matches!(err, RecordError::Compression(_)),
                "{}: {err}",
                codec.name()
            );
            assert_eq!(err.code(), "CORRUPT_RECORD");
        }
    }

    #[test]
    fn codec_ids_follow_kafka() {
        for codec in Compression::ALL {
            assert_eq!(Compression::from_id(codec.id()).unwrap(), codec);
            assert_eq!(
                Compression::from_attributes(0x18 | codec.id() as i16).unwrap(),
                codec
            );
        }
        for id in 5..=7 {
            assert_eq!(
                Compression::from_id(id),
                Err(RecordError::UnknownCompression(id))
            );
            assert_eq!(
                Compression::from_attributes(id as i16).unwrap_err().code(),
                "UNSUPPORTED_COMPRESSION"
            );
        }
    }
}

//! zstd (codec 4): standard zstd frames, as zstd-jni's `ZstdOutputStream` writes them for Kafka
//! (level 3, Kafka's default) and `ZstdInputStream` reads them (frames back to back are one
//! stream; skippable frames are skipped). The decoder's window is capped at 2^27 bytes (zstd's
//! default limit, as in zstd-jni), and its output by `max_output`.
use ::zstd::stream::read::Decoder;

use super::{corrupt, read_bounded, Compression, Progress};
use crate::error::RecordError;

const CODEC: Compression = Compression::Zstd;
/// Kafka's default `compression.zstd.level`.
pub const DEFAULT_LEVEL: i32 = 3;

pub fn compress(data: &[u8]) -> Result<Vec<u8>, RecordError> {
    ::zstd::bulk::compress(data, DEFAULT_LEVEL).map_err(|e| corrupt(CODEC, e))
}

pub fn decompress(
    data: &[u8],
    max_output: usize,
    progress: Progress,
) -> Result<Vec<u8>, RecordError> {
    let decoder = Decoder::with_buffer(data).map_err(|e| corrupt(CODEC, e))?;
    let mut out = Vec::new();
    read_bounded(CODEC, decoder, &mut out, max_output, progress)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_zstd_frame() {
        let packed = compress(b"hello").unwrap();
        assert_eq!(&packed[..4], &[0x28, 0xb5, 0x2f, 0xfd]);
    }

    #[test]
    fn frames_back_to_back_read_as_one_stream() {
        let mut packed = compress(b"hello ").unwrap();
        packed.extend(compress(b"world").unwrap());
        assert_eq!(
            decompress(&packed, 100, &mut |_| Ok(())).unwrap(),
            b"hello world"
        );
    }

    #[test]
    fn truncated_frame_fails() {
        let packed = compress(&super::super::tests::sample(10_000)).unwrap();
        for cut in [1, 4, 10, packed.len() / 2, packed.len() - 1] {
            assert!(
                matches!(
                    decompress(&packed[..cut], 1 << 20, &mut |_| Ok(())),
                    Err(RecordError::Compression(_))
                ),
                "cut at {cut}"
            );
        }
    }
}

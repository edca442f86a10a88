//! snappy (codec 2) in the framing of xerial snappy-java's `SnappyOutputStream`, which Kafka
//! uses (not Google's snappy framing format):
//!
//! ```text
//! header  16 bytes: 0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00, version i32 BE = 1, compatible i32 BE = 1
//! chunks  each: length i32 BE, then one raw snappy block of that length
//! ```
//!
//! Kafka writes 32 KiB of input per chunk. Reading follows `SnappyInputStream`: input that is
//! shorter than 16 bytes or does not start with the magic is one raw snappy block (what
//! `Snappy.compress` writes); a chunk length equal to the first four magic bytes starts another
//! stream's header (concatenated streams), and a header there with the wrong magic ends the
//! stream; 1 to 3 trailing bytes after the last chunk are ignored; a negative or overlong chunk
//! length fails.
use snap::raw::{decompress_len, Decoder, Encoder};

use super::{check_size, corrupt, Compression, Progress};
use crate::error::RecordError;

const CODEC: Compression = Compression::Snappy;
pub const MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0x00];
pub const HEADER_SIZE: usize = 16;
const VERSION: i32 = 1;
const MINIMUM_COMPATIBLE_VERSION: i32 = 1;
/// Uncompressed bytes per chunk, as Kafka's default snappy block size.
pub const BLOCK_SIZE: usize = 32 * 1024;

pub fn compress(data: &[u8]) -> Vec<u8> {
    let mut encoder = Encoder::new();
    let mut out = Vec::with_capacity(HEADER_SIZE + data.len() / 2 + 64);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_be_bytes());
    out.extend_from_slice(&MINIMUM_COMPATIBLE_VERSION.to_be_bytes());
    for chunk in data.chunks(BLOCK_SIZE) {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        let block = encoder
            .compress_vec(chunk)
            .expect("a 32 KiB chunk is within snappy's limits");
        out.extend_from_slice(&block);
        let len = (out.len() - start - 4) as i32;
        out[start..start + 4].copy_from_slice(&len.to_be_bytes());
    }
    out
}

pub fn decompress(
    data: &[u8],
    max_output: usize,
    progress: Progress,
) -> Result<Vec<u8>, RecordError> {
    if data.is_empty() {
        return Err(corrupt(CODEC, "cannot decompress an empty stream"));
    }
    let mut decoder = Decoder::new();
    let mut out = Vec::new();
    if data.len() < HEADER_SIZE || data[..MAGIC.len()] != MAGIC {
        append_block(&mut decoder, data, &mut out, max_output)?;
        progress(&out)?;
        return Ok(out);
    }
    let mut pos = HEADER_SIZE;
    while data.len() - pos >= 4 {
        let len_bytes: [u8; 4] = data[pos..pos + 4].try_into().expect("4 bytes");
        pos += 4;
        if len_bytes == MAGIC[..4] {
            // Another SnappyOutputStream's output appended to this one.
            if data.len() - pos < HEADER_SIZE - 4 {
                return Err(corrupt(
                    CODEC,
                    "insufficient header size in a concatenated block",
                ));
            }
            let header = &data[pos - 4..pos - 4 + HEADER_SIZE];
            if header[..MAGIC.len()] != MAGIC {
                return Ok(out);
            }
            let version = i32::from_be_bytes(header[8..12].try_into().expect("4 bytes"));
            if version < MINIMUM_COMPATIBLE_VERSION {
                return Err(corrupt(
                    CODEC,
                    format!("incompatible stream version {version}"),
                ));
            }
            pos += HEADER_SIZE - 4;
            continue;
        }
        let len = i32::from_be_bytes(len_bytes);
        if len < 0 {
            return Err(corrupt(CODEC, format!("negative chunk size {len}")));
        }
        let len = len as usize;
        if len > data.len() - pos {
            return Err(corrupt(
                CODEC,
                format!("chunk of {len} bytes but {} remain", data.len() - pos),
            ));
        }
        append_block(&mut decoder, &data[pos..pos + len], &mut out, max_output)?;
        progress(&out)?;
        pos += len;
    }
    Ok(out)
}

/// Decompresses one raw snappy block onto the end of `out`, checking its announced size against
/// the budget before allocating.
fn append_block(
    decoder: &mut Decoder,
    block: &[u8],
    out: &mut Vec<u8>,
    max_output: usize,
) -> Result<(), RecordError> {
    let len = decompress_len(block).map_err(|e| corrupt(CODEC, e))?;
    check_size(CODEC, out.len().saturating_add(len), max_output)?;
    let start = out.len();
    out.resize(start + len, 0);
    let written = decoder
        .decompress(block, &mut out[start..])
        .map_err(|e| corrupt(CODEC, e))?;
    if written != len {
        return Err(corrupt(
            CODEC,
            format!("block announced {len} bytes but held {written}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decompress(data: &[u8], max_output: usize) -> Result<Vec<u8>, RecordError> {
        super::decompress(data, max_output, &mut |_| Ok(()))
    }

    #[test]
    fn writes_the_xerial_header_then_length_prefixed_chunks() {
        let packed = compress(b"hello hello hello");
        assert_eq!(&packed[..8], &MAGIC);
        assert_eq!(&packed[8..16], &[0, 0, 0, 1, 0, 0, 0, 1]);
        let chunk_len = i32::from_be_bytes(packed[16..20].try_into().unwrap()) as usize;
        assert_eq!(packed.len(), 20 + chunk_len);
        assert_eq!(
            snap::raw::Decoder::new()
                .decompress_vec(&packed[20..])
                .unwrap(),
            b"hello hello hello"
        );
    }

    #[test]
    fn chunks_hold_32_kib_of_input() {
        let data = vec![7u8; BLOCK_SIZE * 2 + 1];
        let packed = compress(&data);
        let mut pos = HEADER_SIZE;
        let mut chunks = 0;
        while pos < packed.len() {
            let len = i32::from_be_bytes(packed[pos..pos + 4].try_into().unwrap()) as usize;
            pos += 4 + len;
            chunks += 1;
        }
        assert_eq!(chunks, 3);
        assert_eq!(decompress(&packed, data.len()).unwrap(), data);
    }

    #[test]
    fn raw_snappy_without_the_header_is_read_too() {
        let raw = snap::raw::Encoder::new()
            .compress_vec(b"raw block, as Snappy.compress writes")
            .unwrap();
        assert_eq!(
            decompress(&raw, 100).unwrap(),
            b"raw block, as Snappy.compress writes"
        );
    }

    #[test]
    fn concatenated_streams_read_as_one() {
        let mut packed = compress(b"hello ");
        packed.extend(compress(b"world"));
        assert_eq!(decompress(&packed, 100).unwrap(), b"hello world");
    }

    #[test]
    fn one_to_three_trailing_bytes_are_ignored() {
        let mut packed = compress(b"hello");
        packed.extend_from_slice(&[1, 2, 3]);
        assert_eq!(decompress(&packed, 100).unwrap(), b"hello");
    }

    #[test]
    fn chunk_longer_than_the_input_fails() {
        let packed = compress(b"hello hello");
        assert!(matches!(
            decompress(&packed[..packed.len() - 1], 100),
            Err(RecordError::Compression(_))
        ));
    }

    #[test]
    fn negative_chunk_length_fails() {
        let mut packed = compress(b"hello");
        packed[16] = 0xff;
        assert!(
            matches!(decompress(&packed, 100), Err(RecordError::Compression(ref m)) if m.contains("negative"))
        );
    }

    #[test]
    fn announced_size_is_checked_before_allocating() {
        // A raw block announcing 2^31 bytes: refused from its preamble alone.
        let bomb = [0x80, 0x80, 0x80, 0x80, 0x08, 0x00];
        let err = decompress(&bomb, 1 << 20).unwrap_err();
        assert!(
            matches!(err, RecordError::DecompressedTooLarge { .. }),
            "{err}"
        );
    }
}

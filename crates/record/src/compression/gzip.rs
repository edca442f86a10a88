//! gzip (codec 1), as Java's `GZIPOutputStream` / `GZIPInputStream` (Kafka's
//! `GzipOutputStream`, `KafkaGZIPInputStream`) write and read it.
//!
//! Writing: one gzip member (RFC 1952) at zlib's default level 6, header without a name or
//! mtime. Reading: members back to back are concatenated; after a member, bytes that do not start
//! another member (`1f 8b 08`) are ignored as Java ignores trailing garbage. A bad first header,
//! a damaged deflate stream, or a CRC-32/ISIZE trailer mismatch fail.
use std::io::Write;

use flate2::bufread::GzDecoder;
use flate2::write::GzEncoder;

use super::{corrupt, read_bounded, Compression, Progress};
use crate::error::RecordError;

const CODEC: Compression = Compression::Gzip;
/// ID1, ID2 and CM (deflate): how every gzip member starts.
const MEMBER_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

pub fn compress(data: &[u8]) -> Result<Vec<u8>, RecordError> {
    let mut encoder = GzEncoder::new(
        Vec::with_capacity(data.len() / 2 + 64),
        flate2::Compression::default(),
    );
    encoder.write_all(data).map_err(|e| corrupt(CODEC, e))?;
    encoder.finish().map_err(|e| corrupt(CODEC, e))
}

pub fn decompress(
    data: &[u8],
    max_output: usize,
    progress: Progress,
) -> Result<Vec<u8>, RecordError> {
    if data.is_empty() {
        return Err(corrupt(CODEC, "empty input"));
    }
    let mut out = Vec::new();
    let mut rest = data;
    loop {
        let mut member = GzDecoder::new(rest);
        read_bounded(CODEC, &mut member, &mut out, max_output, progress)?;
        // The bufread decoder consumed exactly this member (header, deflate data, trailer).
        rest = member.into_inner();
        if !rest.starts_with(&MEMBER_MAGIC) {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_standard_gzip_member() {
        let packed = compress(b"hello").unwrap();
        assert_eq!(&packed[..4], &[0x1f, 0x8b, 0x08, 0x00]);
        assert_eq!(&packed[packed.len() - 4..], &5u32.to_le_bytes()); // ISIZE
    }

    #[test]
    fn concatenated_members_read_as_one_stream() {
        let mut packed = compress(b"hello ").unwrap();
        packed.extend(compress(b"world").unwrap());
        assert_eq!(
            decompress(&packed, 100, &mut |_| Ok(())).unwrap(),
            b"hello world"
        );
    }

    #[test]
    fn trailing_garbage_after_a_member_is_ignored_like_java() {
        let mut packed = compress(b"hello").unwrap();
        packed.extend_from_slice(b"garbage");
        assert_eq!(decompress(&packed, 100, &mut |_| Ok(())).unwrap(), b"hello");
    }

    #[test]
    fn damaged_trailer_fails() {
        let mut packed = compress(b"hello").unwrap();
        let crc_at = packed.len() - 8;
        packed[crc_at] ^= 0xff;
        assert!(matches!(
            decompress(&packed, 100, &mut |_| Ok(())),
            Err(RecordError::Compression(_))
        ));
    }

    #[test]
    fn truncated_member_fails() {
        let packed = compress(&super::super::tests::sample(10_000)).unwrap();
        for cut in [1, 5, 10, packed.len() / 2, packed.len() - 1] {
            assert!(
                matches!(
                    decompress(&packed[..cut], 1 << 20, &mut |_| Ok(())),
                    Err(RecordError::Compression(_))
                ),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn empty_input_fails() {
        assert!(matches!(
            decompress(&[], 100, &mut |_| Ok(())),
            Err(RecordError::Compression(_))
        ));
    }
}

//! lz4 (codec 3): one LZ4 frame (lz4 frame format 1.6), as Kafka's `Lz4BlockOutputStream` and
//! `Lz4BlockInputStream` write and read it. Little-endian:
//!
//! ```text
//! magic      u32 0x184D2204
//! FLG        u8  version 01 (bits 6-7), block independence (bit 5), block checksum (bit 4),
//!                content size (bit 3), content checksum (bit 2), bits 0-1 reserved = 0
//! BD         u8  block max size in bits 4-6: 4 = 64 KiB, 5 = 256 KiB, 6 = 1 MiB, 7 = 4 MiB
//! [content size u64, when FLG bit 3]
//! HC         u8  (xxh32(FLG..end of descriptor, seed 0) >> 8) & 0xff
//! blocks     each: size u32 (bit 31 set = stored uncompressed), data, [xxh32 of data]
//! end mark   u32 0, then [xxh32 of the whole content, when FLG bit 2]
//! ```
//!
//! Kafka writes FLG 0x60 and BD 0x40 (independent 64 KiB blocks, no checksums) with a correct HC:
//! the broken HC of old clients (computed over the magic too) only concerns magic 0/1 batches, so
//! v2 batches always have the standard one, and it is checked here. Reading accepts what Kafka
//! accepts: dependent blocks, reserved bits or an unknown version fail; one frame is read and
//! bytes after it are ignored.
use xxhash_rust::xxh32::xxh32;

use super::{check_size, corrupt, Compression, Progress};
use crate::error::RecordError;

const CODEC: Compression = Compression::Lz4;
pub const MAGIC: u32 = 0x184D_2204;
/// Kafka's FLG: version 01, independent blocks, nothing else.
const FLG_KAFKA: u8 = 0x60;
/// Kafka's BD: 64 KiB blocks.
const BD_64KB: u8 = 0x40;
const BLOCK_SIZE_64KB: usize = 64 * 1024;
const UNCOMPRESSED_FLAG: u32 = 0x8000_0000;

const FLG_VERSION_MASK: u8 = 0xc0;
const FLG_VERSION_01: u8 = 0x40;
const FLG_BLOCK_INDEPENDENCE: u8 = 0x20;
const FLG_BLOCK_CHECKSUM: u8 = 0x10;
const FLG_CONTENT_SIZE: u8 = 0x08;
const FLG_CONTENT_CHECKSUM: u8 = 0x04;
const FLG_RESERVED: u8 = 0x03;

pub fn compress(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.extend_from_slice(&[FLG_KAFKA, BD_64KB, header_checksum(&[FLG_KAFKA, BD_64KB])]);
    for block in data.chunks(BLOCK_SIZE_64KB) {
        let packed = lz4_flex::block::compress(block);
        if packed.len() >= block.len() {
            out.extend_from_slice(&(block.len() as u32 | UNCOMPRESSED_FLAG).to_le_bytes());
            out.extend_from_slice(block);
        } else {
            out.extend_from_slice(&(packed.len() as u32).to_le_bytes());
            out.extend_from_slice(&packed);
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out
}

pub fn decompress(
    data: &[u8],
    max_output: usize,
    progress: Progress,
) -> Result<Vec<u8>, RecordError> {
    let mut input = Input { data, pos: 0 };
    if data.len() < 6 {
        return Err(premature_end());
    }
    if input.u32()? != MAGIC {
        return Err(corrupt(CODEC, "not an LZ4 frame (bad magic)"));
    }
    let descriptor_start = input.pos;
    let flg = input.byte()?;
    let bd = input.byte()?;
    if flg & FLG_RESERVED != 0 {
        return Err(corrupt(CODEC, "reserved FLG bits must be 0"));
    }
    if flg & FLG_BLOCK_INDEPENDENCE == 0 {
        return Err(corrupt(CODEC, "dependent block stream is unsupported"));
    }
    if flg & FLG_VERSION_MASK != FLG_VERSION_01 {
        return Err(corrupt(
            CODEC,
            format!("frame version {} is unsupported", flg >> 6),
        ));
    }
    if bd & 0x8f != 0 {
        return Err(corrupt(CODEC, "reserved BD bits must be 0"));
    }
    let size_code = (bd >> 4) & 0x07;
    if !(4..=7).contains(&size_code) {
        return Err(corrupt(
            CODEC,
            format!("block size code {size_code} must be between 4 and 7"),
        ));
    }
    let max_block = 1usize << (2 * size_code as usize + 8);
    if flg & FLG_CONTENT_SIZE != 0 {
        input.take(8)?;
    }
    let descriptor = &data[descriptor_start..input.pos];
    if input.byte()? != header_checksum(descriptor) {
        return Err(corrupt(CODEC, "frame descriptor checksum mismatch"));
    }

    let mut out = Vec::new();
    let mut scratch = Vec::new();
    loop {
        let word = input.u32()?;
        let stored = word & UNCOMPRESSED_FLAG != 0;
        let size = (word & !UNCOMPRESSED_FLAG) as usize;
        if size == 0 {
            break;
        }
        if size > max_block {
            return Err(corrupt(
                CODEC,
                format!("block size {size} exceeds the frame's maximum {max_block}"),
            ));
        }
        let block = input.take(size)?;
        if flg & FLG_BLOCK_CHECKSUM != 0 && input.u32()? != xxh32(block, 0) {
            return Err(corrupt(CODEC, "block checksum mismatch"));
        }
        if stored {
            check_size(CODEC, out.len() + size, max_output)?;
            out.extend_from_slice(block);
        } else {
            scratch.resize(max_block, 0);
            let n = lz4_flex::block::decompress_into(block, &mut scratch)
                .map_err(|e| corrupt(CODEC, e))?;
            check_size(CODEC, out.len() + n, max_output)?;
            out.extend_from_slice(&scratch[..n]);
        }
        progress(&out)?;
    }
    if flg & FLG_CONTENT_CHECKSUM != 0 && input.u32()? != xxh32(&out, 0) {
        return Err(corrupt(CODEC, "content checksum mismatch"));
    }
    Ok(out)
}

/// The HC byte: the second byte of xxh32 over the frame descriptor.
fn header_checksum(descriptor: &[u8]) -> u8 {
    (xxh32(descriptor, 0) >> 8) as u8
}

fn premature_end() -> RecordError {
    corrupt(CODEC, "stream ended prematurely")
}

struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], RecordError> {
        if n > self.data.len() - self.pos {
            return Err(premature_end());
        }
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn byte(&mut self) -> Result<u8, RecordError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, RecordError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(flg: u8, bd: u8, body: &[u8]) -> Vec<u8> {
        let mut f = MAGIC.to_le_bytes().to_vec();
        f.extend_from_slice(&[flg, bd, header_checksum(&[flg, bd])]);
        f.extend_from_slice(body);
        f
    }

    #[test]
    fn writes_kafkas_frame_header() {
        let packed = compress(b"");
        // magic, FLG 0x60, BD 0x40, HC 0x82 (the standard checksum), end mark
        assert_eq!(
            packed,
            [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82, 0, 0, 0, 0]
        );
    }

    #[test]
    fn incompressible_blocks_are_stored() {
        let packed = compress(b"abcdefgh");
        let word = u32::from_le_bytes(packed[7..11].try_into().unwrap());
        assert_eq!(word, 8 | UNCOMPRESSED_FLAG);
        assert_eq!(&packed[11..19], b"abcdefgh");
        assert_eq!(
            decompress(&packed, 100, &mut |_| Ok(())).unwrap(),
            b"abcdefgh"
        );
    }

    #[test]
    fn block_and_content_checksums_are_verified() {
        let data = b"checksummed checksummed checksummed";
        let mut body = (data.len() as u32 | UNCOMPRESSED_FLAG)
            .to_le_bytes()
            .to_vec();
        body.extend_from_slice(data);
        body.extend_from_slice(&xxh32(data, 0).to_le_bytes());
        body.extend_from_slice(&0u32.to_le_bytes());
        body.extend_from_slice(&xxh32(data, 0).to_le_bytes());
        let good = frame(0x74, 0x40, &body);
        assert_eq!(decompress(&good, 100, &mut |_| Ok(())).unwrap(), data);

        let mut bad_block = good.clone();
        bad_block[7 + 4 + data.len()] ^= 1;
        assert!(
            matches!(decompress(&bad_block, 100, &mut |_| Ok(())), Err(RecordError::Compression(ref m)) if m.contains("block checksum"))
        );
        let mut bad_content = good.clone();
        let last = bad_content.len() - 1;
        bad_content[last] ^= 1;
        assert!(
            matches!(decompress(&bad_content, 100, &mut |_| Ok(())), Err(RecordError::Compression(ref m)) if m.contains("content checksum"))
        );
    }

    #[test]
    fn content_size_field_is_skipped_and_covered_by_the_header_checksum() {
        let mut f = MAGIC.to_le_bytes().to_vec();
        let descriptor = [0x68, 0x40, 5, 0, 0, 0, 0, 0, 0, 0];
        f.extend_from_slice(&descriptor);
        f.push(header_checksum(&descriptor));
        f.extend_from_slice(&(5 | UNCOMPRESSED_FLAG).to_le_bytes());
        f.extend_from_slice(b"hello");
        f.extend_from_slice(&0u32.to_le_bytes());
        assert_eq!(decompress(&f, 100, &mut |_| Ok(())).unwrap(), b"hello");
    }

    #[test]
    fn wrong_header_checksum_fails() {
        // The broken checksum of magic 0/1 clients (over magic, FLG and BD) is not accepted for v2.
        let mut f = compress(b"hello");
        f[6] = (xxh32(&f[..6], 0) >> 8) as u8;
        assert!(
            matches!(decompress(&f, 100, &mut |_| Ok(())), Err(RecordError::Compression(ref m)) if m.contains("descriptor checksum"))
        );
    }

    #[test]
    fn dependent_blocks_and_bad_descriptors_fail() {
        for (flg, bd) in [
            (0x40, 0x40),
            (0x61, 0x40),
            (0xa0, 0x40),
            (0x60, 0x30),
            (0x60, 0x41),
            (0x60, 0xc0),
        ] {
            let f = frame(flg, bd, &0u32.to_le_bytes());
            assert!(
                matches!(
                    decompress(&f, 100, &mut |_| Ok(())),
                    Err(RecordError::Compression(_))
                ),
                "FLG {flg:#x} BD {bd:#x}"
            );
        }
    }

    #[test]
    fn missing_end_mark_fails_and_bytes_after_the_frame_are_ignored() {
        let packed = compress(b"hello hello hello");
        assert!(
            matches!(decompress(&packed[..packed.len() - 4], 100, &mut |_| Ok(())), Err(RecordError::Compression(ref m)) if m.contains("prematurely"))
        );
        let mut extra = packed.clone();
        extra.extend_from_slice(b"junk");
        assert_eq!(
            decompress(&extra, 100, &mut |_| Ok(())).unwrap(),
            b"hello hello hello"
        );
    }

    #[test]
    fn block_larger_than_the_frame_maximum_fails() {
        let f = frame(
            0x60,
            0x40,
            &((BLOCK_SIZE_64KB as u32 + 1) | UNCOMPRESSED_FLAG).to_le_bytes(),
        );
        assert!(
            matches!(decompress(&f, 1 << 20, &mut |_| Ok(())), Err(RecordError::Compression(ref m)) if m.contains("exceeds"))
        );
    }
}

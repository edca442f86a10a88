//! Walking the batches laid back to back in a buffer (a segment file, a fetch response, a
//! produce request), as Kafka's `FileLogInputStream.nextBatch` does:
//!
//! - fewer than 17 bytes left (baseOffset, batchLength, partitionLeaderEpoch, magic), or fewer
//!   than the batch announces: a partial trailing batch. Iteration ends without an error and
//!   [`BatchIter::whole_bytes`] tells where the whole batches end.
//! - batchLength below the 49 bytes of a header with no records, or a magic other than 2: an
//!   error for that batch, and the iteration ends.
//!
//! Only headers are read; with [`BatchIter::verify_crc`] each batch's CRC (and its count and
//! lastOffsetDelta) is checked too, as recovery needs.
use crate::batch::{
    be_i32, BatchHeader, LENGTH_OFFSET, LOG_OVERHEAD, MAGIC_OFFSET, MAGIC_V2, RECORD_BATCH_OVERHEAD,
};
use crate::error::RecordError;

/// Bytes up to and including the magic: what must be there to tell a batch's size and format.
pub const HEADER_SIZE_UP_TO_MAGIC: usize = MAGIC_OFFSET + 1;

/// Iterator over the batches in a buffer, yielding each batch's position and header.
#[derive(Debug, Clone)]
pub struct BatchIter<'a> {
    buf: &'a [u8],
    pos: usize,
    verify_crc: bool,
    done: bool,
}

impl<'a> BatchIter<'a> {
    pub fn new(buf: &'a [u8]) -> BatchIter<'a> {
        BatchIter {
            buf,
            pos: 0,
            verify_crc: false,
            done: false,
        }
    }

    /// Also check each batch's CRC, record count and lastOffsetDelta ([`BatchHeader::validate`]).
    pub fn verify_crc(mut self) -> BatchIter<'a> {
        self.verify_crc = true;
        self
    }

    /// Bytes from the start of the buffer to the end of the last batch yielded whole: after the
    /// iteration, where a recovering reader would truncate. Stays at the start of a bad batch.
    pub fn whole_bytes(&self) -> usize {
        self.pos
    }

    /// Whether bytes remain after the whole batches (a partial batch, or a bad one).
    pub fn has_remainder(&self) -> bool {
        self.pos < self.buf.len()
    }

    fn fail(&mut self, err: RecordError) -> Option<Result<(usize, BatchHeader), RecordError>> {
        self.done = true;
        Some(Err(err))
    }
}

/// Validates every batch of a buffer that must hold whole batches only (a produce request, a
/// fetched chunk): header, size, CRC, count. Returns how many batches there were; a partial
/// trailing batch is an error here.
pub fn validate_batches(buf: &[u8]) -> Result<usize, RecordError> {
    let mut iter = BatchIter::new(buf).verify_crc();
    let mut count = 0;
    for item in iter.by_ref() {
        item?;
        count += 1;
    }
    if iter.has_remainder() {
        let available = buf.len() - iter.whole_bytes();
        return Err(RecordError::Truncated {
            needed: available.max(RECORD_BATCH_OVERHEAD) + 1,
            available,
        });
    }
    Ok(count)
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<(usize, BatchHeader), RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = &self.buf[self.pos..];
        if rest.len() < HEADER_SIZE_UP_TO_MAGIC {
            self.done = true;
            return None;
        }
        let batch_length = be_i32(rest, LENGTH_OFFSET);
        if (batch_length as i64) < (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i64 {
            return self.fail(RecordError::InvalidBatchLength(batch_length));
        }
        let size = LOG_OVERHEAD + batch_length as usize;
        if rest.len() < size {
            self.done = true;
            return None;
        }
        let magic = rest[MAGIC_OFFSET] as i8;
        if magic != MAGIC_V2 {
            return self.fail(RecordError::UnsupportedMagic(magic));
        }
        let header = match BatchHeader::parse(rest) {
            Ok(h) => h,
            Err(e) => return self.fail(e),
        };
        if self.verify_crc {
            if let Err(e) = header.validate(&rest[..size]) {
                return self.fail(e);
            }
        }
        let at = self.pos;
        self.pos += size;
        Some(Ok((at, header)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::BatchBuilder;
    use crate::compression::Compression;

    fn batch(base_offset: i64, n: usize) -> Vec<u8> {
        let mut b = BatchBuilder::new(Compression::None, None, base_offset, None);
        for _ in 0..n {
            b.append(0, None, Some(b"value"), &[]).unwrap();
        }
        b.build().unwrap()
    }

    fn log() -> (Vec<u8>, [usize; 3]) {
        let (a, b, c) = (batch(0, 1), batch(1, 3), batch(4, 2));
        let positions = [0, a.len(), a.len() + b.len()];
        ([a, b, c].concat(), positions)
    }

    #[test]
    fn yields_every_batch_with_its_position() {
        let (buf, positions) = log();
        let mut it = BatchIter::new(&buf);
        let got: Vec<(usize, i64)> = it
            .by_ref()
            .map(|r| r.map(|(pos, h)| (pos, h.base_offset)).unwrap())
            .collect();
        assert_eq!(
            got,
            [(positions[0], 0), (positions[1], 1), (positions[2], 4)]
        );
        assert_eq!(it.whole_bytes(), buf.len());
        assert!(!it.has_remainder());
    }

    #[test]
    fn partial_trailing_batch_is_ignored() {
        let (buf, positions) = log();
        for cut in [
            positions[2] + 1,
            positions[2] + 16,
            positions[2] + 17,
            positions[2] + 61,
            buf.len() - 1,
        ] {
            let mut it = BatchIter::new(&buf[..cut]);
            assert_eq!(it.by_ref().filter(|r| r.is_ok()).count(), 2, "cut at {cut}");
            assert_eq!(it.whole_bytes(), positions[2], "cut at {cut}");
            assert!(it.has_remainder());
        }
    }

    #[test]
    fn empty_buffer_yields_nothing() {
        assert_eq!(BatchIter::new(&[]).count(), 0);
    }

    #[test]
    fn batch_length_below_the_header_is_an_error() {
        let (mut buf, positions) = log();
        buf[positions[1] + LENGTH_OFFSET..positions[1] + LENGTH_OFFSET + 4]
            .copy_from_slice(&48i32.to_be_bytes());
        let mut it = BatchIter::new(&buf);
        assert!(it.next().unwrap().is_ok());
        assert_eq!(it.next().unwrap(), Err(RecordError::InvalidBatchLength(48)));
        assert!(it.next().is_none());
        assert_eq!(it.whole_bytes(), positions[1]);
    }

    #[test]
    fn other_magic_is_an_error() {
        let (mut buf, positions) = log();
        buf[positions[2] + MAGIC_OFFSET] = 1;
        let results: Vec<_> = BatchIter::new(&buf).collect();
        assert_eq!(results.len(), 3);
        assert_eq!(results[2], Err(RecordError::UnsupportedMagic(1)));
    }

    #[test]
    fn crc_is_checked_only_when_asked() {
        let (mut buf, positions) = log();
        let last = buf.len() - 1;
        buf[last] ^= 0xff;
        assert!(BatchIter::new(&buf).all(|r| r.is_ok()));
        let mut it = BatchIter::new(&buf).verify_crc();
        let results: Vec<_> = it.by_ref().collect();
        assert!(matches!(results[2], Err(RecordError::CrcMismatch { .. })));
        assert_eq!(it.whole_bytes(), positions[2]);
    }
}

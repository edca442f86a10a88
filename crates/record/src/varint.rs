//! Variable-length integers as Kafka's `ByteUtils` writes them: 7 bits a byte, least significant
//! group first, the high bit set on every byte but the last. Signed values are zig-zag encoded
//! first (`(n << 1) ^ (n >> 31)`), so small negative numbers stay short: -1 is the single byte 0x01.
//!
//! An `i32` takes at most [`MAX_VARINT_LEN`] bytes and an `i64` at most [`MAX_VARLONG_LEN`].
//! Decoding accepts exactly what Kafka's `ByteUtils.readVarint`/`readVarlong` accept: a value
//! whose last allowed byte still has the continuation bit set is refused, and the bits of that
//! last byte that do not fit the type are ignored, as Java's shifts ignore them.
use crate::error::RecordError;

pub const MAX_VARINT_LEN: usize = 5;
pub const MAX_VARLONG_LEN: usize = 10;

/// Zig-zag varint of `value`, appended to `out`.
pub fn write_varint(out: &mut Vec<u8>, value: i32) {
    write_unsigned_varint(out, ((value << 1) ^ (value >> 31)) as u32);
}

/// Zig-zag varlong of `value`, appended to `out`.
pub fn write_varlong(out: &mut Vec<u8>, value: i64) {
    let mut v = ((value << 1) ^ (value >> 63)) as u64;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Unsigned varint (no zig-zag), as the flexible protocol versions use for lengths.
pub fn write_unsigned_varint(out: &mut Vec<u8>, value: u32) {
    let mut v = value;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes [`write_varint`] writes for `value`.
pub fn size_of_varint(value: i32) -> usize {
    size_of_unsigned_varint(((value << 1) ^ (value >> 31)) as u32)
}

/// Bytes [`write_varlong`] writes for `value`.
pub fn size_of_varlong(value: i64) -> usize {
    let v = ((value << 1) ^ (value >> 63)) as u64;
    // One byte per started group of 7 significant bits; 0 still takes one byte.
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Bytes [`write_unsigned_varint`] writes for `value`.
pub fn size_of_unsigned_varint(value: u32) -> usize {
    let bits = 32 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Decodes a zig-zag varint at the start of `buf`: the value and the bytes it took.
pub fn read_varint(buf: &[u8]) -> Result<(i32, usize), RecordError> {
    let (raw, len) = read_unsigned_varint(buf)?;
    Ok((((raw >> 1) as i32) ^ -((raw & 1) as i32), len))
}

/// Decodes a zig-zag varlong at the start of `buf`: the value and the bytes it took.
pub fn read_varlong(buf: &[u8]) -> Result<(i64, usize), RecordError> {
    let mut raw: u64 = 0;
    for (i, &b) in buf.iter().take(MAX_VARLONG_LEN).enumerate() {
        raw |= ((b & 0x7f) as u64).wrapping_shl(7 * i as u32);
        if b & 0x80 == 0 {
            return Ok((((raw >> 1) as i64) ^ -((raw & 1) as i64), i + 1));
        }
    }
    Err(varint_error(buf.len() < MAX_VARLONG_LEN, "varlong"))
}

/// Decodes an unsigned varint (no zig-zag) at the start of `buf`: the value and the bytes it took.
pub fn read_unsigned_varint(buf: &[u8]) -> Result<(u32, usize), RecordError> {
    let mut raw: u32 = 0;
    for (i, &b) in buf.iter().take(MAX_VARINT_LEN).enumerate() {
        // In the fifth byte only the low 4 bits fit; like Java's `b << 28` we drop the rest.
        raw |= ((b & 0x7f) as u32).wrapping_shl(7 * i as u32);
        if b & 0x80 == 0 {
            return Ok((raw, i + 1));
        }
    }
    Err(varint_error(buf.len() < MAX_VARINT_LEN, "varint"))
}

fn varint_error(truncated: bool, what: &str) -> RecordError {
    if truncated {
        RecordError::InvalidRecord(format!("{what} truncated"))
    } else {
        RecordError::InvalidRecord(format!("{what} too long"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint_bytes(v: i32) -> Vec<u8> {
        let mut out = Vec::new();
        write_varint(&mut out, v);
        out
    }

    fn varlong_bytes(v: i64) -> Vec<u8> {
        let mut out = Vec::new();
        write_varlong(&mut out, v);
        out
    }

    #[test]
    fn small_values_zig_zag_into_one_byte() {
        assert_eq!(varint_bytes(0), [0x00]);
        assert_eq!(varint_bytes(-1), [0x01]);
        assert_eq!(varint_bytes(1), [0x02]);
        assert_eq!(varint_bytes(-2), [0x03]);
        assert_eq!(varint_bytes(63), [0x7e]);
        assert_eq!(varint_bytes(-64), [0x7f]);
        assert_eq!(varint_bytes(64), [0x80, 0x01]);
        assert_eq!(varint_bytes(300), [0xd8, 0x04]);
    }

    #[test]
    fn extremes_take_the_maximum_length() {
        assert_eq!(varint_bytes(i32::MAX), [0xfe, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(varint_bytes(i32::MIN), [0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(varlong_bytes(i64::MAX).len(), MAX_VARLONG_LEN);
        assert_eq!(
            varlong_bytes(i64::MIN),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
    }

    #[test]
    fn varint_round_trips_and_sizes_agree() {
        let samples = [
            0,
            1,
            -1,
            63,
            -64,
            64,
            -65,
            8191,
            8192,
            -8193,
            1 << 20,
            i32::MAX,
            i32::MIN,
            i32::MAX - 1,
            i32::MIN + 1,
        ];
        for v in samples {
            let bytes = varint_bytes(v);
            assert_eq!(bytes.len(), size_of_varint(v), "size of {v}");
            assert_eq!(read_varint(&bytes).unwrap(), (v, bytes.len()), "value {v}");
        }
    }

    #[test]
    fn varlong_round_trips_and_sizes_agree() {
        let samples = [
            0i64,
            1,
            -1,
            1 << 35,
            -(1 << 35),
            1_700_000_000_000,
            i64::MAX,
            i64::MIN,
            i32::MAX as i64 + 1,
        ];
        for v in samples {
            let bytes = varlong_bytes(v);
            assert_eq!(bytes.len(), size_of_varlong(v), "size of {v}");
            assert_eq!(read_varlong(&bytes).unwrap(), (v, bytes.len()), "value {v}");
        }
    }

    #[test]
    fn unsigned_varint_round_trips() {
        for v in [0u32, 127, 128, 16383, 16384, u32::MAX] {
            let mut bytes = Vec::new();
            write_unsigned_varint(&mut bytes, v);
            assert_eq!(bytes.len(), size_of_unsigned_varint(v));
            assert_eq!(read_unsigned_varint(&bytes).unwrap(), (v, bytes.len()));
        }
    }

    #[test]
    fn decoding_reads_only_its_own_bytes() {
        assert_eq!(read_varint(&[0x02, 0xff, 0xff]).unwrap(), (1, 1));
        assert_eq!(read_varlong(&[0xd8, 0x04, 0x00]).unwrap(), (300, 2));
    }

    #[test]
    fn truncated_varint_is_invalid_record() {
        for input in [&[][..], &[0x80], &[0xff, 0xff, 0xff, 0xff]] {
            let err = read_varint(input).unwrap_err();
            assert_eq!(err.code(), "INVALID_RECORD");
            assert!(err.to_string().contains("truncated"), "{err}");
        }
        assert!(read_varlong(&[0x80; 9])
            .unwrap_err()
            .to_string()
            .contains("truncated"));
    }

    #[test]
    fn overlong_varint_is_invalid_record() {
        let err = read_varint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]).unwrap_err();
        assert!(
            matches!(err, RecordError::InvalidRecord(ref m) if m.contains("too long")),
            "{err}"
        );
        let err = read_varlong(&[0x80; 11]).unwrap_err();
        assert!(
            matches!(err, RecordError::InvalidRecord(ref m) if m.contains("too long")),
            "{err}"
        );
    }

    #[test]
    fn excess_bits_in_the_last_byte_are_ignored_as_kafka_does() {
        // Java's `b << 28` drops bits 4..6 of the fifth byte; Kafka accepts such a varint.
        assert_eq!(
            read_unsigned_varint(&[0xff, 0xff, 0xff, 0xff, 0x7f]).unwrap(),
            (u32::MAX, 5)
        );
        // For a varlong only bit 0 of the tenth byte survives `b << 63`.
        let (v, len) =
            read_varlong(&[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]).unwrap();
        assert_eq!((v, len), (i64::MAX, 10));
    }
}

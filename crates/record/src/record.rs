//! One record inside a batch (Kafka's `DefaultRecord`). Layout, varints zig-zag encoded:
//!
//! ```text
//! length            varint   bytes after this field
//! attributes        int8     unused, 0
//! timestampDelta    varlong  timestamp - batch baseTimestamp
//! offsetDelta       varint   offset - batch baseOffset
//! keyLength         varint   -1 = null key
//! key               bytes
//! valueLength       varint   -1 = null value
//! value             bytes
//! headerCount       varint
//! headers           per header: keyLength varint, key (UTF-8), valueLength varint (-1 = null), value
//! ```
//!
//! Decoding follows `DefaultRecord.readFrom`: the content must fill exactly `length` bytes, the
//! header count must not be negative nor exceed the bytes left, a header key may not be null, and
//! a negative key or value length other than -1 reads as null (Kafka treats every negative length
//! as null). Nothing here panics on any input.
use crate::error::RecordError;
use crate::varint::{
    read_varint, read_varlong, size_of_varint, size_of_varlong, write_varint, write_varlong,
};

/// A record header. Kafka's header keys are strings; `key` holds their UTF-8 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Header {
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

impl Header {
    pub fn new(key: impl Into<Vec<u8>>, value: Option<&[u8]>) -> Header {
        Header {
            key: key.into(),
            value: value.map(<[u8]>::to_vec),
        }
    }
}

/// One decoded record, with its offset and timestamp relative to the batch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Record {
    pub offset_delta: i32,
    pub timestamp_delta: i64,
    pub attributes: i8,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<Header>,
}

impl Record {
    /// The record's offset in a batch whose baseOffset is `base_offset`.
    pub fn offset(&self, base_offset: i64) -> i64 {
        base_offset.wrapping_add(self.offset_delta as i64)
    }

    /// The record's timestamp in a batch whose baseTimestamp is `base_timestamp` (CreateTime).
    /// With LogAppendTime Kafka reports the batch's maxTimestamp for every record instead.
    pub fn timestamp(&self, base_timestamp: i64) -> i64 {
        base_timestamp.wrapping_add(self.timestamp_delta)
    }

    /// Decodes the record at the start of `buf`; returns it and the bytes it took.
    pub fn decode(buf: &[u8]) -> Result<(Record, usize), RecordError> {
        let view = RecordRef::parse(buf)?;
        Ok((view.to_record(), view.size_in_bytes))
    }

    /// Appends the encoded record to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_record(
            out,
            self.attributes,
            self.offset_delta,
            self.timestamp_delta,
            self.key.as_deref(),
            self.value.as_deref(),
            &self.headers,
        );
    }

    /// Bytes [`Record::encode`] writes, the length varint included.
    pub fn size_in_bytes(&self) -> usize {
        let body = body_size(
            self.offset_delta,
            self.timestamp_delta,
            self.key.as_deref(),
            self.value.as_deref(),
            &self.headers,
        );
        size_of_varint(body as i32) + body
    }
}

/// A record decoded in place: key, value and headers borrow from the buffer. Parsing validates
/// the whole record (headers included) without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// Bytes the record takes, the length varint included.
    pub size_in_bytes: usize,
    pub attributes: i8,
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    header_count: usize,
    headers: &'a [u8],
}

impl<'a> RecordRef<'a> {
    /// Parses and validates the record at the start of `buf`.
    pub fn parse(buf: &'a [u8]) -> Result<RecordRef<'a>, RecordError> {
        let (length, length_size) = read_varint(buf)?;
        let rest = &buf[length_size..];
        if length < 0 || length as usize > rest.len() {
            return Err(RecordError::InvalidRecord(format!(
                "record length {length} but {} bytes remain",
                rest.len()
            )));
        }
        let body = &rest[..length as usize];
        let mut r = Reader { buf: body, pos: 0 };
        let attributes = r.byte()? as i8;
        let timestamp_delta = r.varlong()?;
        let offset_delta = r.varint()?;
        let key = r.nullable_bytes()?;
        let value = r.nullable_bytes()?;
        let header_count = r.varint()?;
        if header_count < 0 {
            return Err(RecordError::InvalidRecord(format!(
                "negative header count {header_count}"
            )));
        }
        let header_count = header_count as usize;
        if header_count > r.remaining() {
            return Err(RecordError::InvalidRecord(format!(
                "header count {header_count} exceeds the {} bytes left in the record",
                r.remaining()
            )));
        }
        let headers_start = r.pos;
        for _ in 0..header_count {
            r.header()?;
        }
        let headers = &body[headers_start..r.pos];
        if r.pos != body.len() {
            return Err(RecordError::InvalidRecord(format!(
                "record length {length} but its content takes {} bytes",
                r.pos
            )));
        }
        Ok(RecordRef {
            size_in_bytes: length_size + body.len(),
            attributes,
            timestamp_delta,
            offset_delta,
            key,
            value,
            header_count,
            headers,
        })
    }

    pub fn header_count(&self) -> usize {
        self.header_count
    }

    /// The headers as (key, value) pairs borrowed from the buffer.
    pub fn headers(&self) -> HeaderRefs<'a> {
        HeaderRefs {
            reader: Reader {
                buf: self.headers,
                pos: 0,
            },
            left: self.header_count,
        }
    }

    pub fn to_record(&self) -> Record {
        Record {
            offset_delta: self.offset_delta,
            timestamp_delta: self.timestamp_delta,
            attributes: self.attributes,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            headers: self
                .headers()
                .map(|(k, v)| Header {
                    key: k.to_vec(),
                    value: v.map(<[u8]>::to_vec),
                })
                .collect(),
        }
    }
}

/// Iterator over the headers of a [`RecordRef`] (already validated by `parse`).
#[derive(Debug, Clone)]
pub struct HeaderRefs<'a> {
    reader: Reader<'a>,
    left: usize,
}

impl<'a> Iterator for HeaderRefs<'a> {
    type Item = (&'a [u8], Option<&'a [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // `parse` checked these bytes; an error here cannot happen, and ends the iteration.
        self.reader.header().ok().or_else(|| {
            self.left = 0;
            None
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// Appends one encoded record to `out`.
pub(crate) fn encode_record(
    out: &mut Vec<u8>,
    attributes: i8,
    offset_delta: i32,
    timestamp_delta: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[Header],
) {
    let body = body_size(offset_delta, timestamp_delta, key, value, headers);
    out.reserve(size_of_varint(body as i32) + body);
    write_varint(out, body as i32);
    out.push(attributes as u8);
    write_varlong(out, timestamp_delta);
    write_varint(out, offset_delta);
    write_nullable_bytes(out, key);
    write_nullable_bytes(out, value);
    write_varint(out, headers.len() as i32);
    for h in headers {
        write_nullable_bytes(out, Some(&h.key));
        write_nullable_bytes(out, h.value.as_deref());
    }
}

/// Size of a record's body (all but the length varint), as `DefaultRecord.sizeOfBodyInBytes`.
pub(crate) fn body_size(
    offset_delta: i32,
    timestamp_delta: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[Header],
) -> usize {
    1 + size_of_varlong(timestamp_delta)
        + size_of_varint(offset_delta)
        + nullable_size(key)
        + nullable_size(value)
        + size_of_varint(headers.len() as i32)
        + headers
            .iter()
            .map(|h| nullable_size(Some(&h.key)) + nullable_size(h.value.as_deref()))
            .sum::<usize>()
}

fn nullable_size(bytes: Option<&[u8]>) -> usize {
    match bytes {
        None => 1,
        Some(b) => size_of_varint(b.len() as i32) + b.len(),
    }
}

fn write_nullable_bytes(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        None => write_varint(out, -1),
        Some(b) => {
            write_varint(out, b.len() as i32);
            out.extend_from_slice(b);
        }
    }
}

/// A bounds-checked cursor over one record's body.
#[derive(Debug, Clone)]
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn byte(&mut self) -> Result<u8, RecordError> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| past_end("attributes"))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<i32, RecordError> {
        let (v, n) = read_varint(&self.buf[self.pos..])?;
        self.pos += n;
        Ok(v)
    }

    fn varlong(&mut self) -> Result<i64, RecordError> {
        let (v, n) = read_varlong(&self.buf[self.pos..])?;
        self.pos += n;
        Ok(v)
    }

    fn nullable_bytes(&mut self) -> Result<Option<&'a [u8]>, RecordError> {
        let len = self.varint()?;
        if len < 0 {
            return Ok(None);
        }
        self.bytes(len as usize).map(Some)
    }

    fn bytes(&mut self, len: usize) -> Result<&'a [u8], RecordError> {
        if len > self.remaining() {
            return Err(past_end("a length"));
        }
        let b = &self.buf[self.pos..self.pos + len];
        self.pos += len;
        Ok(b)
    }

    fn header(&mut self) -> Result<(&'a [u8], Option<&'a [u8]>), RecordError> {
        let key_len = self.varint()?;
        if key_len < 0 {
            return Err(RecordError::InvalidRecord(format!(
                "negative header key length {key_len}"
            )));
        }
        let key = self.bytes(key_len as usize)?;
        let value = self.nullable_bytes()?;
        Ok((key, value))
    }
}

fn past_end(what: &str) -> RecordError {
    RecordError::InvalidRecord(format!("record content runs past its length ({what})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Record {
        Record {
            offset_delta: 3,
            timestamp_delta: -5,
            attributes: 0,
            key: Some(b"key".to_vec()),
            value: None,
            headers: vec![Header::new("h1", Some(b"v1")), Header::new("h2", None)],
        }
    }

    fn encoded(r: &Record) -> Vec<u8> {
        let mut out = Vec::new();
        r.encode(&mut out);
        out
    }

    #[test]
    fn encode_then_decode_round_trips() {
        let r = sample();
        let bytes = encoded(&r);
        assert_eq!(bytes.len(), r.size_in_bytes());
        assert_eq!(Record::decode(&bytes).unwrap(), (r, bytes.len()));
    }

    #[test]
    fn null_and_empty_key_value_differ() {
        let mut r = sample();
        r.key = Some(Vec::new());
        r.value = None;
        r.headers.clear();
        let bytes = encoded(&r);
        let (back, _) = Record::decode(&bytes).unwrap();
        assert_eq!(back.key, Some(Vec::new()));
        assert_eq!(back.value, None);
    }

    #[test]
    fn minimal_record_is_seven_bytes() {
        let r = Record {
            offset_delta: 0,
            timestamp_delta: 0,
            attributes: 0,
            key: None,
            value: None,
            headers: vec![],
        };
        assert_eq!(encoded(&r), [0x0c, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00]);
    }

    #[test]
    fn offset_and_timestamp_are_relative_to_the_batch() {
        let r = sample();
        assert_eq!(r.offset(100), 103);
        assert_eq!(r.timestamp(1_000), 995);
    }

    #[test]
    fn decode_reports_only_its_own_bytes() {
        let r = sample();
        let mut bytes = encoded(&r);
        let len = bytes.len();
        bytes.extend_from_slice(&[0xde, 0xad]);
        assert_eq!(Record::decode(&bytes).unwrap().1, len);
    }

    #[test]
    fn record_ref_borrows_headers() {
        let bytes = encoded(&sample());
        let view = RecordRef::parse(&bytes).unwrap();
        assert_eq!(view.header_count(), 2);
        let headers: Vec<_> = view.headers().collect();
        assert_eq!(
            headers,
            vec![(&b"h1"[..], Some(&b"v1"[..])), (&b"h2"[..], None)]
        );
    }

    #[test]
    fn length_longer_than_content_is_invalid() {
        let mut bytes = encoded(&sample());
        bytes[0] += 2; // claims one more byte (zig-zag: +2 is +1)
        bytes.push(0);
        let err = Record::decode(&bytes).unwrap_err();
        assert!(
            matches!(err, RecordError::InvalidRecord(ref m) if m.contains("content takes")),
            "{err}"
        );
    }

    #[test]
    fn length_shorter_than_content_is_invalid() {
        let mut bytes = encoded(&sample());
        bytes[0] -= 2;
        assert_eq!(Record::decode(&bytes).unwrap_err().code(), "INVALID_RECORD");
    }

    #[test]
    fn length_past_the_buffer_is_invalid() {
        let bytes = encoded(&sample());
        let err = Record::decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(
            matches!(err, RecordError::InvalidRecord(ref m) if m.contains("remain")),
            "{err}"
        );
    }

    #[test]
    fn negative_length_is_invalid() {
        assert_eq!(
            Record::decode(&[0x01, 0, 0, 0, 1, 1, 0])
                .unwrap_err()
                .code(),
            "INVALID_RECORD"
        );
    }

    #[test]
    fn negative_header_count_is_invalid() {
        // body: attributes, ts 0, offset 0, key null, value null, headerCount -1
        let err = Record::decode(&[0x0c, 0, 0, 0, 1, 1, 1]).unwrap_err();
        assert!(
            matches!(err, RecordError::InvalidRecord(ref m) if m.contains("negative header count")),
            "{err}"
        );
    }

    #[test]
    fn header_count_beyond_the_record_is_invalid() {
        let err = Record::decode(&[0x0c, 0, 0, 0, 1, 1, 0x7e]).unwrap_err();
        assert!(
            matches!(err, RecordError::InvalidRecord(ref m) if m.contains("exceeds")),
            "{err}"
        );
    }

    #[test]
    fn null_header_key_is_invalid() {
        // one header whose key length is -1
        let err = Record::decode(&[0x0e, 0, 0, 0, 1, 1, 2, 1]).unwrap_err();
        assert!(
            matches!(err, RecordError::InvalidRecord(ref m) if m.contains("header key")),
            "{err}"
        );
    }

    #[test]
    fn negative_key_length_below_minus_one_reads_as_null_like_kafka() {
        // key length -2 (0x03): Kafka's Utils.readBytes returns null for any negative size.
        let (r, n) = Record::decode(&[0x0c, 0, 0, 0, 0x03, 1, 0]).unwrap();
        assert_eq!((r.key, n), (None, 7));
    }

    #[test]
    fn bad_varint_inside_record_is_invalid() {
        let err = Record::decode(&[0x0c, 0, 0xff, 0xff, 0xff, 0xff, 0xff]).unwrap_err();
        assert_eq!(err.code(), "INVALID_RECORD");
        assert_eq!(Record::decode(&[]).unwrap_err().code(), "INVALID_RECORD");
    }
}

//! Byte-exact layout: a batch written out by hand from the v2 format description
//! (docs/record-format.md, Kafka's `DefaultRecordBatch` / `DefaultRecord`) must be what the builder writes,
//! and must decode to what was put in.
use ferrolog_record::{decode_batch, validate_batch, BatchBuilder, Compression, Header, Record};

/// CRC-32C, bit by bit (reflected polynomial 0x82F63B78): independent of the crate's table code.
fn crc32c_bitwise(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// One record, key "k", value "v", header "hk" = "hv", at offset 5, timestamp 1700000000000.
fn hand_written_batch() -> Vec<u8> {
    let record: &[u8] = &[
        0x1c, // length 14 (zig-zag)
        0x00, // attributes
        0x00, // timestampDelta 0
        0x00, // offsetDelta 0
        0x02, b'k', // key length 1, "k"
        0x02, b'v', // value length 1, "v"
        0x02, // 1 header
        0x04, b'h', b'k', // header key length 2, "hk"
        0x04, b'h', b'v', // header value length 2, "hv"
    ];
    assert_eq!(record.len(), 15);
    let ts = 1_700_000_000_000i64.to_be_bytes();
    let mut b = Vec::new();
    b.extend_from_slice(&5i64.to_be_bytes()); // baseOffset
    b.extend_from_slice(&64i32.to_be_bytes()); // batchLength = 76 - 12
    b.extend_from_slice(&(-1i32).to_be_bytes()); // partitionLeaderEpoch
    b.push(2); // magic
    b.extend_from_slice(&[0; 4]); // crc, filled below
    b.extend_from_slice(&0i16.to_be_bytes()); // attributes: none, CreateTime
    b.extend_from_slice(&0i32.to_be_bytes()); // lastOffsetDelta
    b.extend_from_slice(&ts); // baseTimestamp
    b.extend_from_slice(&ts); // maxTimestamp
    b.extend_from_slice(&(-1i64).to_be_bytes()); // producerId
    b.extend_from_slice(&(-1i16).to_be_bytes()); // producerEpoch
    b.extend_from_slice(&(-1i32).to_be_bytes()); // baseSequence
    b.extend_from_slice(&1i32.to_be_bytes()); // recordsCount
    b.extend_from_slice(record);
    assert_eq!(b.len(), 76);
    let crc = crc32c_bitwise(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

#[test]
fn builder_writes_the_hand_written_bytes_exactly() {
    let mut builder = BatchBuilder::new(Compression::None, None, 5, None);
    builder
        .append(
            1_700_000_000_000,
            Some(b"k"),
            Some(b"v"),
            &[Header::new("hk", Some(b"hv"))],
        )
        .unwrap();
    assert_eq!(builder.build().unwrap(), hand_written_batch());
}

#[test]
fn hand_written_bytes_decode_to_what_was_written() {
    let bytes = hand_written_batch();
    let header = validate_batch(&bytes).unwrap();
    assert_eq!(header.size_in_bytes(), 76);
    assert_eq!(header.crc, crc32c_bitwise(&bytes[21..]));
    let batch = decode_batch(&bytes).unwrap();
    assert_eq!(
        batch.records,
        [Record {
            offset_delta: 0,
            timestamp_delta: 0,
            attributes: 0,
            key: Some(b"k".to_vec()),
            value: Some(b"v".to_vec()),
            headers: vec![Header::new("hk", Some(b"hv"))],
        }]
    );
    assert_eq!(batch.records[0].offset(header.base_offset), 5);
    assert_eq!(
        batch.records[0].timestamp(header.base_timestamp),
        1_700_000_000_000
    );
}

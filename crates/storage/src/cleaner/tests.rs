//! The cleaning rules on batches built here, read back record by record.
use std::collections::HashMap;
use std::fs;
use std::path::Path;

use ferrolog_record::builder::{end_txn_marker_batch, BatchBuilder};
use ferrolog_record::compression::Compression;
use ferrolog_record::control::EndTransactionMarker;
use ferrolog_record::decode::decode_batch;
use ferrolog_record::iter::BatchIter;
use ferrolog_record::DecodedBatch;

use super::*;
use crate::config::LogConfig;
use crate::index::OffsetIndex;

const T0: i64 = 1_700_000_000_000;
const DAY: i64 = 86_400_000;

type Rec<'a> = (Option<&'a str>, Option<&'a str>);

fn batch(
    base: i64,
    codec: Compression,
    records: &[Rec],
    producer: Option<(i64, i16, i32, bool)>,
) -> Vec<u8> {
    let mut b = BatchBuilder::new(codec, None, base, None);
    if let Some((id, epoch, seq, txn)) = producer {
        b = b.producer(id, epoch, seq).transactional(txn);
    }
    for (i, (k, v)) in records.iter().enumerate() {
        b.append(
            T0 + base + i as i64,
            k.map(str::as_bytes),
            v.map(str::as_bytes),
            &[],
        )
        .unwrap();
    }
    b.build().unwrap()
}

fn segment(dir: &Path, base: i64, batches: &[Vec<u8>]) -> SourceSegment {
    let log_path = dir.join(crate::segment::file_name(base, ".log"));
    fs::write(&log_path, batches.concat()).unwrap();
    SourceSegment {
        base_offset: base,
        log_path,
    }
}

fn params(now: i64, first_uncleanable: i64, upper: i64, aborted: Vec<AbortedTxn>) -> CleanParams {
    CleanParams {
        current_time_ms: now,
        delete_retention_ms: DAY,
        first_uncleanable_offset: first_uncleanable,
        upper_bound_offset: upper,
        aborted,
        last_records_of_active_producers: HashMap::new(),
        max_decompressed_bytes: 1 << 24,
    }
}

fn batches_of(path: &Path) -> Vec<DecodedBatch> {
    let buf = fs::read(path).unwrap();
    BatchIter::new(&buf)
        .map(|item| {
            let (pos, h) = item.unwrap();
            decode_batch(&buf[pos..pos + h.size_in_bytes()]).unwrap()
        })
        .collect()
}

fn survivors(path: &Path) -> Vec<(Option<String>, Option<String>, i64)> {
    let text = |b: &Option<Vec<u8>>| b.as_ref().map(|b| String::from_utf8(b.clone()).unwrap());
    batches_of(path)
        .iter()
        .filter(|b| !b.header.is_control())
        .flat_map(|b| {
            b.records
                .iter()
                .map(|r| (text(&r.key), text(&r.value), r.offset(b.header.base_offset)))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn s(k: &str, v: Option<&str>, o: i64) -> (Option<String>, Option<String>, i64) {
    (Some(k.into()), v.map(Into::into), o)
}

fn clean(
    dir: &Path,
    segs: &[SourceSegment],
    end: i64,
    p: impl FnOnce(i64) -> CleanParams,
) -> ([std::path::PathBuf; 3], i64) {
    let mut map = SkimpyOffsetMap::new(1 << 16);
    build_offset_map(segs, 0, end, &mut map, &[], 1 << 24).unwrap();
    let params = p(map.latest_offset() + 1);
    let cleaned = clean_segments(dir, segs, &map, &params, &LogConfig::default()).unwrap();
    (cleaned.paths, map.latest_offset())
}

#[test]
fn latest_record_per_key_survives_with_its_offset_and_keyless_records_go() {
    let dir = tempfile::tempdir().unwrap();
    let segs = [
        segment(
            dir.path(),
            0,
            &[
                batch(
                    0,
                    Compression::None,
                    &[
                        (Some("a"), Some("1")),
                        (Some("b"), Some("1")),
                        (None, Some("x")),
                    ],
                    None,
                ),
                batch(
                    3,
                    Compression::Gzip,
                    &[(Some("a"), Some("2")), (Some("c"), Some("1"))],
                    None,
                ),
            ],
        ),
        segment(
            dir.path(),
            5,
            &[batch(5, Compression::Lz4, &[(Some("b"), Some("2"))], None)],
        ),
    ];
    let (paths, latest) = clean(dir.path(), &segs, 6, |upper| params(T0, 6, upper, vec![]));
    assert_eq!(latest, 5);
    assert_eq!(
        survivors(&paths[0]),
        vec![
            s("a", Some("2"), 3),
            s("c", Some("1"), 4),
            s("b", Some("2"), 5)
        ]
    );
    // Untouched batches are the original bytes; the gzip batch lost nothing and is one of them.
    let out = fs::read(&paths[0]).unwrap();
    assert!(out.ends_with(&batch(5, Compression::Lz4, &[(Some("b"), Some("2"))], None)));
    let index = OffsetIndex::open(&paths[1], 0, 1 << 20);
    assert!(index.is_ok());
    assert!(!dir.path().join("00000000000000000000.cleaning").exists());
}

#[test]
fn a_tombstone_gets_a_horizon_then_goes_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let segs = [segment(
        dir.path(),
        0,
        &[
            batch(
                0,
                Compression::None,
                &[(Some("a"), Some("1")), (Some("b"), None)],
                None,
            ),
            batch(2, Compression::None, &[(Some("c"), Some("1"))], None),
        ],
    )];
    let (paths, _) = clean(dir.path(), &segs, 3, |upper| params(T0, 3, upper, vec![]));
    let first = batches_of(&paths[0]);
    assert_eq!(first[0].header.base_timestamp, T0 + DAY);
    assert_ne!(first[0].header.attributes & 0x40, 0);
    assert_eq!(
        survivors(&paths[0]),
        vec![s("a", Some("1"), 0), s("b", None, 1), s("c", Some("1"), 2)]
    );

    let again = tempfile::tempdir().unwrap();
    let segs = [SourceSegment {
        base_offset: 0,
        log_path: again.path().join("00000000000000000000.log"),
    }];
    fs::copy(&paths[0], &segs[0].log_path).unwrap();
    let (paths, _) = clean(again.path(), &segs, 3, |upper| {
        params(T0 + DAY - 1, 3, upper, vec![])
    });
    assert_eq!(
        survivors(&paths[0]).len(),
        3,
        "the horizon is not reached yet"
    );
    let (paths, _) = clean(again.path(), &segs, 3, |upper| {
        params(T0 + DAY, 3, upper, vec![])
    });
    assert_eq!(
        survivors(&paths[0]),
        vec![s("a", Some("1"), 0), s("c", Some("1"), 2)]
    );
    assert_eq!(
        batches_of(&paths[0])[0].header.last_offset(),
        1,
        "the last offset is kept"
    );
}

#[test]
fn aborted_records_go_and_their_marker_waits_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let abort = end_txn_marker_batch(2, T0, 0, 9, 0, &EndTransactionMarker::abort(0)).unwrap();
    let segs = [segment(
        dir.path(),
        0,
        &[
            batch(
                0,
                Compression::None,
                &[(Some("a"), Some("t")), (Some("b"), Some("t"))],
                Some((9, 0, 0, true)),
            ),
            abort,
            batch(3, Compression::None, &[(Some("c"), Some("1"))], None),
        ],
    )];
    let aborted = vec![AbortedTxn {
        producer_id: 9,
        first_offset: 0,
        last_offset: 2,
        last_stable_offset: 0,
    }];
    let mut map = SkimpyOffsetMap::new(1 << 16);
    build_offset_map(&segs, 0, 4, &mut map, &aborted, 1 << 24).unwrap();
    assert_eq!(map.get(b"a"), -1, "aborted keys are not mapped");
    let cleaned = clean_segments(
        dir.path(),
        &segs,
        &map,
        &params(T0, 4, 4, aborted.clone()),
        &LogConfig::default(),
    )
    .unwrap();
    assert_eq!(
        cleaned.retained_aborted, aborted,
        "its .txnindex entry stays with the marker"
    );
    let out = batches_of(&cleaned.paths[0]);
    assert_eq!(
        out.iter()
            .map(|b| (b.header.base_offset, b.header.is_control()))
            .collect::<Vec<_>>(),
        vec![(2, true), (3, false)]
    );
    assert_eq!(
        out[0].header.attributes & 0x40,
        0,
        "the marker waits, no horizon yet"
    );
}

#[test]
fn an_active_producers_last_batch_stays_as_an_empty_batch() {
    let dir = tempfile::tempdir().unwrap();
    let segs = [segment(
        dir.path(),
        0,
        &[
            batch(
                0,
                Compression::Zstd,
                &[(Some("a"), Some("1")), (Some("b"), Some("1"))],
                Some((5, 3, 40, false)),
            ),
            batch(
                2,
                Compression::None,
                &[(Some("a"), Some("2")), (Some("b"), Some("2"))],
                None,
            ),
            batch(4, Compression::None, &[(Some("c"), Some("1"))], None),
        ],
    )];
    let (paths, _) = clean(dir.path(), &segs, 5, |upper| {
        let mut p = params(T0, 5, upper, vec![]);
        p.last_records_of_active_producers.insert(
            5,
            LastRecord {
                last_data_offset: Some(1),
                producer_epoch: 3,
            },
        );
        p
    });
    let out = batches_of(&paths[0]);
    let h = out[0].header;
    assert_eq!(
        (
            h.base_offset,
            h.last_offset(),
            h.records_count,
            h.producer_id,
            h.producer_epoch,
            h.base_sequence
        ),
        (0, 1, 0, 5, 3, 40)
    );
    assert_eq!(h.compression(), 0, "an empty batch is written uncompressed");
    assert_eq!(out.len(), 3);
}

#[test]
fn a_full_map_limits_the_cleaning_to_what_it_covers() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<String> = (0..40).map(|i| format!("key-{}", i % 20)).collect();
    let batches: Vec<Vec<u8>> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| batch(i as i64, Compression::None, &[(Some(k), Some("v"))], None))
        .collect();
    let segs = [segment(dir.path(), 0, &batches)];
    let mut map = SkimpyOffsetMap::new(24 * 10);
    let full = build_offset_map(&segs, 0, 40, &mut map, &[], 1 << 24).unwrap();
    assert!(full);
    assert_eq!((map.size(), map.latest_offset()), (9, 8));
    let p = params(T0, 40, map.latest_offset() + 1, vec![]);
    let cleaned = clean_segments(dir.path(), &segs, &map, &p, &LogConfig::default()).unwrap();
    // Keys 0..8 were each written once before offset 9: all 40 records are kept.
    assert_eq!(survivors(&cleaned.paths[0]).len(), 40);
    assert_eq!(cleaned.stats.records_retained, 40);
}

#[test]
fn batches_past_the_first_uncleanable_offset_are_copied_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let tail = batch(
        2,
        Compression::None,
        &[(Some("a"), Some("3")), (Some("a"), None)],
        None,
    );
    let segs = [segment(
        dir.path(),
        0,
        &[
            batch(
                0,
                Compression::None,
                &[(Some("a"), Some("1")), (Some("a"), Some("2"))],
                None,
            ),
            tail.clone(),
        ],
    )];
    let (paths, latest) = clean(dir.path(), &segs, 2, |upper| params(T0, 2, upper, vec![]));
    assert_eq!(latest, 1);
    assert!(fs::read(&paths[0]).unwrap().ends_with(&tail));
    assert_eq!(
        survivors(&paths[0]),
        vec![s("a", Some("2"), 1), s("a", Some("3"), 2), s("a", None, 3)]
    );
}

#[test]
fn a_failed_round_leaves_no_scratch_directory_and_no_cleaned_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut damaged = batch(1, Compression::None, &[(Some("b"), Some("1"))], None);
    let last = damaged.len() - 1;
    damaged[last] ^= 0xff;
    let segs = [segment(
        dir.path(),
        0,
        &[
            batch(0, Compression::None, &[(Some("a"), Some("1"))], None),
            damaged,
        ],
    )];
    let map = SkimpyOffsetMap::new(1 << 10);
    let err = clean_segments(
        dir.path(),
        &segs,
        &map,
        &params(T0, 2, 2, vec![]),
        &LogConfig::default(),
    );
    assert!(err.is_err());
    let left: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left, vec!["00000000000000000000.log".to_string()]);
}

use std::fs;

use ferrolog_record::{BatchHeader, Compression};
use tempfile::TempDir;

use super::*;
use crate::index::offset_index::OFFSET_INDEX_ENTRY_SIZE;
use crate::index::time_index::TIME_INDEX_ENTRY_SIZE;
use crate::index::OffsetPosition;
use crate::test_util::{batch, batch_with};

const BASE: i64 = 100;

fn config(index_interval_bytes: i32) -> LogConfig {
    LogConfig {
        index_interval_bytes,
        segment_index_bytes: 1200,
        ..LogConfig::default()
    }
}

fn segment(dir: &TempDir, config: &LogConfig) -> LogSegment {
    LogSegment::create(dir.path(), BASE, config, 0).unwrap()
}

/// Appends `count` batches of 2 records each (offsets BASE, BASE+2, ...), timestamps 1000,
/// 1010, ...; returns their (position, size).
fn fill(seg: &mut LogSegment, count: usize) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for i in 0..count {
        let bytes = batch(BASE + 2 * i as i64, 2, 20, 1_000 + 10 * i as i64);
        let header = BatchHeader::parse(&bytes).unwrap();
        out.push((seg.size(), bytes.len() as u32));
        seg.append(&bytes, &header, 0).unwrap();
    }
    out
}

fn offset_entries(seg: &LogSegment) -> Vec<OffsetPosition> {
    (0..seg.offset_index().entries())
        .map(|n| seg.offset_index().entry(n))
        .collect()
}

fn time_entries(seg: &LogSegment) -> Vec<TimestampOffset> {
    (0..seg.time_index().entries())
        .map(|n| seg.time_index().entry(n))
        .collect()
}

#[test]
fn file_names_are_20_digit_base_offsets() {
    assert_eq!(file_name(0, LOG_FILE_SUFFIX), "00000000000000000000.log");
    assert_eq!(
        file_name(1234, TIME_INDEX_FILE_SUFFIX),
        "00000000000000001234.timeindex"
    );
    assert_eq!(
        parse_file_name("00000000000000001234.index", INDEX_FILE_SUFFIX),
        Some(1234)
    );
    assert_eq!(
        parse_file_name("0000000000000001234.index", INDEX_FILE_SUFFIX),
        None
    );
    assert_eq!(
        parse_file_name("0000000000000000123x.log", LOG_FILE_SUFFIX),
        None
    );
    let dir = TempDir::new().unwrap();
    let seg = segment(&dir, &config(4096));
    assert_eq!(seg.log_path(), dir.path().join("00000000000000000100.log"));
    assert!(dir.path().join("00000000000000000100.index").exists());
    assert!(dir.path().join("00000000000000000100.timeindex").exists());
}

#[test]
fn index_entries_follow_the_interval_rule_check_then_add() {
    let dir = TempDir::new().unwrap();
    // Every batch has the same size S; with an interval of exactly S, an entry is due when the
    // bytes appended *before* a batch exceed S: at the 3rd batch (2S before it), then the 5th.
    let size = batch(BASE, 2, 20, 1_000).len() as i32;
    let mut seg = segment(&dir, &config(size));
    let batches = fill(&mut seg, 6);
    assert_eq!(
        offset_entries(&seg),
        [
            OffsetPosition {
                offset: BASE + 5,
                position: batches[2].0
            },
            OffsetPosition {
                offset: BASE + 9,
                position: batches[4].0
            },
        ]
    );
    // A time index entry goes with each offset entry: the max timestamp so far (the batch's own
    // max here, timestamps grow) and the lastOffset of the batch that reached it.
    assert_eq!(
        time_entries(&seg),
        [
            TimestampOffset {
                timestamp: 1_021,
                offset: BASE + 5
            },
            TimestampOffset {
                timestamp: 1_041,
                offset: BASE + 9
            },
        ]
    );
}

#[test]
fn an_interval_of_zero_indexes_every_batch_but_the_first() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    let batches = fill(&mut seg, 3);
    let positions: Vec<u32> = offset_entries(&seg).iter().map(|e| e.position).collect();
    assert_eq!(positions, [batches[1].0, batches[2].0]);
}

#[test]
fn becoming_inactive_adds_the_max_timestamp_and_trims_the_indexes() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(4096));
    fill(&mut seg, 3);
    assert_eq!(
        (seg.offset_index().entries(), seg.time_index().entries()),
        (0, 0)
    );
    seg.on_become_inactive().unwrap();
    assert_eq!(
        time_entries(&seg),
        [TimestampOffset {
            timestamp: 1_021,
            offset: BASE + 5
        }]
    );
    let len = |suffix| {
        fs::metadata(dir.path().join(file_name(BASE, suffix)))
            .unwrap()
            .len() as usize
    };
    assert_eq!(
        len(INDEX_FILE_SUFFIX),
        seg.offset_index().entries() * OFFSET_INDEX_ENTRY_SIZE
    );
    assert_eq!(
        len(TIME_INDEX_FILE_SUFFIX),
        seg.time_index().entries() * TIME_INDEX_ENTRY_SIZE
    );
}

#[test]
fn translate_offset_finds_the_batch_holding_an_offset() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    let batches = fill(&mut seg, 4);
    let found = seg.translate_offset(BASE + 5, 0).unwrap().unwrap();
    assert_eq!(
        (
            found.position,
            found.size(),
            found.base_offset(),
            found.last_offset()
        ),
        (batches[2].0, batches[2].1, BASE + 4, BASE + 5)
    );
    assert_eq!(
        seg.translate_offset(BASE + 4, 0).unwrap().unwrap().position,
        batches[2].0
    );
    assert_eq!(seg.translate_offset(0, 0).unwrap().unwrap().position, 0);
    assert!(seg.translate_offset(BASE + 8, 0).unwrap().is_none());
}

#[test]
fn read_starts_at_the_batch_and_honours_sizes() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(4096));
    let batches = fill(&mut seg, 3);
    let (pos1, size1) = batches[1];
    let info = seg
        .read(BASE + 3, 10_000, seg.size(), false)
        .unwrap()
        .unwrap();
    assert_eq!((info.position, info.size), (pos1, seg.size() - pos1));
    assert_eq!(info.segment, BASE);
    assert_eq!(info.fetch_offset_metadata.message_offset, BASE + 3);
    assert_eq!(
        info.fetch_offset_metadata.relative_position_in_segment,
        pos1
    );
    // Too small a limit: a partial batch, flagged, unless minOneMessage.
    let info = seg.read(BASE + 2, 10, seg.size(), false).unwrap().unwrap();
    assert_eq!((info.size, info.first_entry_incomplete), (10, true));
    let info = seg.read(BASE + 2, 10, seg.size(), true).unwrap().unwrap();
    assert_eq!((info.size, info.first_entry_incomplete), (size1, false));
    // maxPosition stops the slice.
    let info = seg.read(BASE, 10_000, pos1, false).unwrap().unwrap();
    assert_eq!(info.size, pos1);
    assert!(seg
        .read(BASE + 6, 10_000, seg.size(), false)
        .unwrap()
        .is_none());
}

#[test]
fn read_next_offset_is_after_the_last_batch() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    assert_eq!(seg.read_next_offset().unwrap(), BASE);
    fill(&mut seg, 3);
    assert_eq!(seg.read_next_offset().unwrap(), BASE + 6);
}

#[test]
fn recovery_rebuilds_the_same_indexes() {
    let dir = TempDir::new().unwrap();
    let cfg = config(0);
    let mut seg = segment(&dir, &cfg);
    fill(&mut seg, 5);
    let (offsets, times) = (offset_entries(&seg), time_entries(&seg));
    seg.offset_index.reset().unwrap();
    seg.time_index.reset().unwrap();
    let mut seen = Vec::new();
    let recovered = seg.recover(|h, _| seen.push(h.base_offset)).unwrap();
    assert_eq!(
        recovered,
        Recovered {
            truncated_bytes: 0,
            problem: None,
            indexes_incomplete: None
        }
    );
    assert_eq!(seen, [BASE, BASE + 2, BASE + 4, BASE + 6, BASE + 8]);
    assert_eq!(offset_entries(&seg), offsets);
    // The closing time index entry is already there (timestamps grow batch by batch).
    assert_eq!(time_entries(&seg), times);
}

#[test]
fn recovery_cuts_a_partial_trailing_batch() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    let batches = fill(&mut seg, 3);
    let whole = seg.size();
    let next = batch(BASE + 6, 2, 20, 2_000);
    seg.log
        .get()
        .unwrap()
        .write_all_at(&next[..next.len() - 5], whole as u64)
        .unwrap();
    let recovered = seg.recover(|_, _| {}).unwrap();
    assert_eq!(recovered.truncated_bytes, next.len() as u64 - 5);
    assert!(recovered
        .problem
        .unwrap()
        .starts_with(&format!("position {whole}: partial batch")));
    assert_eq!(fs::metadata(seg.log_path()).unwrap().len(), whole as u64);
    assert_eq!(seg.size(), batches[2].0 + batches[2].1);
    assert_eq!(seg.read_next_offset().unwrap(), BASE + 6);
}

#[test]
fn recovery_cuts_at_a_corrupt_batch_in_the_middle() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    let batches = fill(&mut seg, 4);
    let (pos2, _) = batches[2];
    seg.log
        .get()
        .unwrap()
        .write_all_at(&[0xFF], pos2 as u64 + 70)
        .unwrap();
    let recovered = seg.recover(|_, _| {}).unwrap();
    assert_eq!(
        recovered.truncated_bytes,
        (batches[2].1 + batches[3].1) as u64
    );
    assert!(
        recovered.problem.unwrap().contains("CRC"),
        "the reason names the CRC"
    );
    assert_eq!(seg.size(), pos2);
    assert!(offset_entries(&seg).iter().all(|e| e.position < pos2));
}

#[test]
fn recovery_cuts_at_offsets_going_backwards() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    fill(&mut seg, 2);
    let size = seg.size();
    let stale = batch(BASE + 1, 2, 20, 3_000);
    seg.log
        .get()
        .unwrap()
        .write_all_at(&stale, size as u64)
        .unwrap();
    let recovered = seg.recover(|_, _| {}).unwrap();
    assert!(recovered
        .problem
        .unwrap()
        .contains("baseOffset 101 is below 104"));
    assert_eq!(seg.size(), size);
}

#[test]
fn truncate_to_drops_the_batch_holding_the_offset_and_after() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    let batches = fill(&mut seg, 4);
    let cut = seg.truncate_to(BASE + 5).unwrap();
    assert_eq!(cut, batches[2].1 + batches[3].1);
    assert_eq!(seg.size(), batches[2].0);
    assert_eq!(seg.read_next_offset().unwrap(), BASE + 4);
    assert!(offset_entries(&seg).iter().all(|e| e.offset < BASE + 5));
    assert_eq!(
        seg.max_timestamp_so_far(),
        TimestampOffset {
            timestamp: 1_011,
            offset: BASE + 3
        }
    );
    // The segment takes appends again where it was cut.
    let bytes = batch(BASE + 4, 2, 20, 5_000);
    seg.append(&bytes, &BatchHeader::parse(&bytes).unwrap(), 0)
        .unwrap();
    assert_eq!(seg.read_next_offset().unwrap(), BASE + 6);
}

#[test]
fn should_roll_on_size_age_and_relative_offset() {
    let dir = TempDir::new().unwrap();
    let cfg = LogConfig {
        segment_bytes: 200,
        segment_ms: 1_000,
        ..config(4096)
    };
    let mut seg = segment(&dir, &cfg);
    assert!(
        !seg.should_roll(&cfg, 500, BASE, 0),
        "an empty segment takes any batch"
    );
    let bytes = batch(BASE, 1, 10, 0);
    seg.append(&bytes, &BatchHeader::parse(&bytes).unwrap(), 5_000)
        .unwrap();
    assert!(seg.should_roll(&cfg, 200, BASE + 1, 5_000));
    assert!(!seg.should_roll(&cfg, 10, BASE + 1, 6_000));
    assert!(seg.should_roll(&cfg, 10, BASE + 1, 6_001));
    assert!(seg.should_roll(&cfg, 10, BASE + i32::MAX as i64 + 1, 5_000));
}

#[test]
fn find_offset_by_timestamp_scans_records_within_the_batch() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    for (i, ts) in [[100, 300, 200], [400, 350, 500]].iter().enumerate() {
        let bytes = batch_with(Compression::Gzip, BASE + 3 * i as i64, ts, 5);
        seg.append(&bytes, &BatchHeader::parse(&bytes).unwrap(), 0)
            .unwrap();
    }
    let found = |ts| {
        seg.find_offset_by_timestamp(ts, BASE)
            .unwrap()
            .map(|t| (t.offset, t.timestamp))
    };
    assert_eq!(found(0), Some((BASE, 100)));
    assert_eq!(found(150), Some((BASE + 1, 300)));
    assert_eq!(found(301), Some((BASE + 3, 400)));
    assert_eq!(found(450), Some((BASE + 5, 500)));
    assert_eq!(found(501), None);
    assert_eq!(
        seg.find_offset_by_timestamp(0, BASE + 2)
            .unwrap()
            .unwrap()
            .offset,
        BASE + 2
    );
    let max = seg.find_max_timestamp_record().unwrap().unwrap();
    assert_eq!(
        (max.offset, max.timestamp, max.leader_epoch),
        (BASE + 5, 500, -1)
    );
}

#[test]
fn only_a_sealed_segment_is_walked_through_a_map() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    let batches = fill(&mut seg, 4);
    let active = seg.translate_offset(BASE + 5, 0).unwrap().unwrap();
    assert!(!seg.is_mapped(), "the active segment keeps pread");
    seg.on_become_inactive().unwrap();
    let sealed = seg.translate_offset(BASE + 5, 0).unwrap().unwrap();
    assert!(seg.is_mapped());
    assert_eq!(sealed, active);
    for (n, &(position, _)) in batches.iter().enumerate() {
        let offset = BASE + 2 * n as i64 + 1;
        let found = seg.translate_offset(offset, 0).unwrap().unwrap();
        assert_eq!(found.position, position, "offset {offset}");
        assert_eq!(found.last_offset(), offset);
    }
    assert!(seg.translate_offset(BASE + 8, 0).unwrap().is_none());
}

#[test]
fn truncating_a_mapped_segment_drops_the_map_first() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    // Batches of about 3 KB: the cut below removes whole pages of the map.
    let mut batches = Vec::new();
    for i in 0..6 {
        let bytes = batch(BASE + 2 * i, 2, 1_500, 1_000);
        batches.push((seg.size(), bytes.len() as u32));
        seg.append(&bytes, &BatchHeader::parse(&bytes).unwrap(), 0)
            .unwrap();
    }
    assert!(seg.size() > 4 * 4096);
    seg.on_become_inactive().unwrap();
    // Read near the end through the map, so the pages about to be cut are mapped and touched.
    assert_eq!(
        seg.translate_offset(BASE + 11, 0)
            .unwrap()
            .unwrap()
            .position,
        batches[5].0
    );
    assert!(seg.is_mapped());
    seg.truncate_to(BASE + 4).unwrap();
    assert!(!seg.is_mapped());
    assert_eq!(
        fs::metadata(seg.log_path()).unwrap().len(),
        batches[2].0 as u64
    );
    // Reading the cut range again: no fault, and the answers of the shorter file.
    assert!(seg.translate_offset(BASE + 11, 0).unwrap().is_none());
    assert!(seg.translate_offset(BASE + 4, 0).unwrap().is_none());
    assert_eq!(
        seg.translate_offset(BASE + 3, 0).unwrap().unwrap().position,
        batches[1].0
    );
    // Active again: appends, then sealed again and mapped at the new size.
    let bytes = batch(BASE + 4, 2, 300, 5_000);
    seg.append(&bytes, &BatchHeader::parse(&bytes).unwrap(), 0)
        .unwrap();
    assert!(!seg.is_mapped());
    seg.on_become_inactive().unwrap();
    let found = seg.translate_offset(BASE + 5, 0).unwrap().unwrap();
    assert!(seg.is_mapped());
    assert_eq!(
        (found.position, found.size()),
        (batches[2].0, bytes.len() as u32)
    );
}

#[test]
fn cutting_the_log_or_recovering_a_mapped_segment_drops_the_map_first() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    let batches = fill(&mut seg, 5);
    seg.on_become_inactive().unwrap();
    seg.translate_offset(BASE + 9, 0).unwrap().unwrap();
    assert!(seg.is_mapped());
    assert_eq!(
        seg.truncate_log(batches[3].0).unwrap(),
        batches[3].1 + batches[4].1
    );
    assert!(!seg.is_mapped());
    assert!(seg.translate_offset(BASE + 9, 0).unwrap().is_none());

    seg.on_become_inactive().unwrap();
    seg.translate_offset(BASE + 5, 0).unwrap().unwrap();
    assert!(seg.is_mapped());
    // A partial batch after the end (as a crash leaves one): recovery cuts it.
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(seg.log_path())
        .unwrap();
    std::io::Write::write_all(&mut file, &batch(BASE + 6, 2, 20, 0)[..30]).unwrap();
    let recovered = seg.recover(|_, _| {}).unwrap();
    assert_eq!(recovered.truncated_bytes, 30);
    assert!(!seg.is_mapped());
    assert_eq!(
        seg.translate_offset(BASE + 5, 0).unwrap().unwrap().position,
        batches[2].0
    );
    assert!(seg.translate_offset(BASE + 6, 0).unwrap().is_none());
}

#[test]
fn a_mapped_segment_deleted_under_its_map_is_still_read_until_dropped() {
    let dir = TempDir::new().unwrap();
    let mut seg = segment(&dir, &config(0));
    let batches = fill(&mut seg, 3);
    seg.on_become_inactive().unwrap();
    seg.translate_offset(BASE, 0).unwrap().unwrap();
    assert!(seg.is_mapped());
    // Unlinked (as retention does while a reader may still hold the segment): the inode stays.
    fs::remove_file(seg.log_path()).unwrap();
    assert_eq!(
        seg.translate_offset(BASE + 5, 0).unwrap().unwrap().position,
        batches[2].0
    );
    seg.delete().unwrap();
}

#[test]
fn a_sealed_segment_holds_no_index_descriptor_and_opens_its_log_on_first_read() {
    let dir = TempDir::new().unwrap();
    let config = config(100);
    let mut seg = segment(&dir, &config);
    let spans = fill(&mut seg, 6);
    assert!(
        seg.log_is_open() && seg.indexes_are_open(),
        "the active segment's files"
    );
    seg.on_become_inactive().unwrap();
    assert!(!seg.indexes_are_open(), "sealed: no index descriptor");
    let entries = offset_entries(&seg);
    assert!(!entries.is_empty());
    drop(seg);

    // Opened as the loader opens it: nothing held until a read.
    let seg = LogSegment::open(dir.path(), BASE, &config, 0).unwrap();
    assert!(!seg.log_is_open() && !seg.indexes_are_open());
    assert_eq!(offset_entries(&seg), entries, "the entries are in memory");
    let found = seg.translate_offset(BASE + 6, 0).unwrap().unwrap();
    assert_eq!(found.position, spans[3].0);
    assert!(seg.log_is_open());
    // Closed by the open bound under a holder: the holder's descriptor still reads, and the
    // segment opens the file again for its next read.
    let held = seg.log_file().unwrap();
    seg.log.close();
    assert!(!seg.log_is_open());
    let mut first = [0u8; 8];
    held.read_exact_at(&mut first, 0).unwrap();
    assert_eq!(i64::from_be_bytes(first), BASE);
    assert_eq!(
        seg.read_bytes(spans[1].0, spans[1].1).unwrap(),
        held_bytes(&held, spans[1])
    );
    assert!(seg.log_is_open());
}

fn held_bytes(file: &File, (position, size): (u32, u32)) -> Vec<u8> {
    let mut out = vec![0u8; size as usize];
    file.read_exact_at(&mut out, position as u64).unwrap();
    out
}

//! ferrolog issue #11: opening logs needs descriptors per partition, not per segment file, and
//! reads stay correct under the bound on open sealed segments. One test in its own process
//! (an integration test binary), so that the descriptors counted in /proc/self/fd are its own.
use std::os::unix::fs::FileExt;
use std::path::Path;

use ferrolog_record::{BatchBuilder, Compression};
use ferrolog_storage::{
    open_sealed_segments, set_max_open_segments, FetchIsolation, Log, LogConfig, OpenOptions,
    DEFAULT_MAX_OPEN_SEGMENTS,
};

const PARTITIONS: usize = 20;
const SEGMENTS_PER_PARTITION: i64 = 100;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn value(partition: usize, offset: i64) -> Vec<u8> {
    format!("partition {partition} offset {offset}").into_bytes()
}

fn batch(partition: usize, offset: i64) -> Vec<u8> {
    let mut b = BatchBuilder::new(Compression::None, None, 0, None);
    b.append(
        1_000 + offset,
        Some(b"k"),
        Some(&value(partition, offset)),
        &[],
    )
    .unwrap();
    b.build().unwrap()
}

fn open(dir: &Path, clean: bool) -> Log {
    Log::open(OpenOptions {
        dir: dir.to_path_buf(),
        // Every batch is larger than half a segment: one batch a segment.
        config: LogConfig {
            segment_bytes: 100,
            segment_index_bytes: 4096,
            ..LogConfig::default()
        },
        recovery_point: 0,
        log_start_offset: 0,
        had_clean_shutdown: clean,
    })
    .unwrap()
}

/// The value of the one record at `offset`, read through `read` and `read_slice`.
fn read_value(log: &Log, offset: i64) -> Vec<u8> {
    let batches = log
        .read_batches(offset, 1 << 20, FetchIsolation::LogEnd)
        .unwrap();
    let first = &batches[0];
    assert_eq!(first.header.base_offset, offset);
    first.records[0].value.clone().unwrap()
}

#[test]
fn opening_logs_of_thousands_of_segments_holds_descriptors_per_partition_not_per_file() {
    let root = tempfile::TempDir::new().unwrap();
    let dirs: Vec<_> = (0..PARTITIONS)
        .map(|p| root.path().join(format!("t-{p}")))
        .collect();
    for (p, dir) in dirs.iter().enumerate() {
        let mut log = open(dir, false);
        for offset in 0..SEGMENTS_PER_PARTITION {
            log.append_as_leader(&batch(p, offset), 0, 0).unwrap();
        }
        assert_eq!(log.segments().len() as i64, SEGMENTS_PER_PARTITION);
        log.close().unwrap();
    }

    let before = open_fds();
    let mut logs: Vec<Log> = dirs.iter().map(|d| open(d, true)).collect();
    let after_open = open_fds();
    // The active segment's three files a partition; nothing for the 1,980 sealed segments.
    eprintln!(
        "{} segments in {PARTITIONS} logs: {before} descriptors before open, {after_open} after",
        PARTITIONS as i64 * SEGMENTS_PER_PARTITION
    );
    assert!(
        after_open - before <= 3 * PARTITIONS,
        "opening {PARTITIONS} logs took {} descriptors",
        after_open - before
    );
    assert_eq!(open_sealed_segments(), 0);

    // Every segment read back, under a bound of 50 open sealed segments.
    let bound = 50;
    set_max_open_segments(bound);
    let mut most = 0;
    for (p, log) in logs.iter().enumerate() {
        for offset in 0..SEGMENTS_PER_PARTITION {
            assert_eq!(read_value(log, offset), value(p, offset));
            most = most.max(open_fds());
        }
    }
    eprintln!("reading every segment under a bound of {bound}: at most {most} descriptors");
    assert!(open_sealed_segments() <= bound);
    assert!(
        most - before <= 3 * PARTITIONS + bound + 2,
        "reads held {} descriptors",
        most - before
    );

    // A read in flight (what a zero-copy transfer holds: the segment's Arc<File>) keeps its
    // descriptor while the bound closes the segment's own, and the segment reads again after.
    let info = logs[0]
        .read(0, 1 << 20, FetchIsolation::LogEnd, false)
        .unwrap();
    let held = logs[0].open_log_file(&info.records.file).unwrap();
    for (p, log) in logs.iter().enumerate().skip(1) {
        for offset in 0..SEGMENTS_PER_PARTITION - 1 {
            assert_eq!(read_value(log, offset), value(p, offset));
        }
    }
    let mut bytes = vec![0u8; info.records.size as usize];
    held.read_exact_at(&mut bytes, info.records.position as u64)
        .unwrap();
    assert_eq!(bytes, logs[0].read_slice(&info.records).unwrap());
    assert_eq!(read_value(&logs[0], 0), value(0, 0));
    drop(held);

    // Appends and rolls go on; closing releases everything.
    for (p, log) in logs.iter_mut().enumerate() {
        let next = log.log_end_offset();
        log.append_as_leader(&batch(p, next), 0, 0).unwrap();
        assert_eq!(read_value(log, next), value(p, next));
    }
    for log in &mut logs {
        log.close().unwrap();
    }
    drop(logs);
    assert_eq!(open_sealed_segments(), 0);
    assert!(open_fds() <= before);
    set_max_open_segments(DEFAULT_MAX_OPEN_SEGMENTS);
}

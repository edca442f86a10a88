//! Opening a log (Kafka's `LogLoader`): load the segments of the directory, recover those that
//! may hold unflushed data after an unclean shutdown, rebuild indexes that are missing or fail
//! their sanity check, and set the offsets.
//!
//! - Unclean shutdown: every segment from the one holding the recovery point on is recovered
//!   (segment/recover.rs). At the first damaged segment the `.log` is cut and every later
//!   segment deleted.
//! - Clean shutdown: segments are trusted; an index that is missing or fails its sanity check
//!   is rebuilt from the `.log`.
//! - A cleaning round's leftovers: `.cleaned` files deleted, `.swap` files completed or
//!   deleted (swap.rs).
//! - Leftovers: `*.deleted`, `*.cleaned` and `leader-epoch-checkpoint.tmp` files are removed, as
//!   are `.index`/`.timeindex` files without a `.log`.
//! - Transactions: a recovered segment's `.txnindex` is rebuilt, the producer state brought to
//!   its base first (txn.rs: from the newest snapshot at or below it); after the segments, the
//!   producer state is brought to the LEO and snapshots above the LEO are deleted. A `.txnindex`
//!   that is not whole entries makes its segment recovered.
//! - No segment: one empty segment at the log start offset.
//! - A log start offset checkpoint beyond the LEO is not believed: the log start offset is the
//!   first segment's base and nothing is deleted (Kafka's loader deletes every segment then;
//!   we keep data a checkpoint contradicts, as Kafka never lets the log start offset pass the
//!   high watermark while running). A line in the report says so.
//! - A full disk: opening needs no free space. Index truncation cuts files instead of writing
//!   zeros; index entries that recovery cannot write are left out (the index is sparser, still
//!   valid); an index that cannot be preallocated keeps its length (its segment rolls sooner);
//!   an epoch checkpoint that cannot be rewritten is rewritten before the next append. Each
//!   such fallback is a line in the report.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use ferrolog_record::BatchHeader;

use super::txn::ProducerStateFiles;
use super::{create_dir, now_ms, Log};
use crate::config::LogConfig;
use crate::error::{IoContext, Result, StorageError};
use crate::index::txn_index::AbortedTxn;
use crate::leader_epoch::{LeaderEpochFileCache, LEADER_EPOCH_CHECKPOINT_FILE};
use crate::producer_state::snapshot::PRODUCER_SNAPSHOT_FILE_SUFFIX;
use crate::segment::{
    file_name, parse_file_name, remove_if_present, LogSegment, INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX,
};

/// How the LogManager opens a log (ts/storage/types.ts `OpenLogOptions`).
#[derive(Debug, Clone)]
pub struct OpenOptions {
    pub dir: PathBuf,
    pub config: LogConfig,
    /// Offsets below this were flushed before the last stop.
    pub recovery_point: i64,
    pub log_start_offset: i64,
    /// A clean-shutdown marker was found: skip recovery (indexes are still sanity-checked).
    pub had_clean_shutdown: bool,
}

/// What opening did (ts/storage/types.ts `RecoveryReport`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Segments walked by recovery.
    pub segments_recovered: u32,
    /// Bytes cut off the end of the log (a partial or corrupt tail).
    pub bytes_truncated: u64,
    /// Later segments deleted after damage.
    pub segments_deleted: u32,
    /// Indexes found missing or corrupt and rebuilt.
    pub indexes_rebuilt: u32,
    /// One line per action: the file, the position, the reason.
    pub messages: Vec<String>,
}

/// Suffixes of files a crash may leave behind that are removed on open.
const LEFTOVER_SUFFIXES: [&str; 2] = [".deleted", ".cleaned"];

impl Log {
    pub fn open(options: OpenOptions) -> Result<Log> {
        let OpenOptions {
            dir,
            config,
            recovery_point,
            log_start_offset,
            had_clean_shutdown,
        } = options;
        config.validate()?;
        if recovery_point < 0 || log_start_offset < 0 {
            return Err(StorageError::InvalidArgument(format!(
                "recovery point {recovery_point} and log start offset {log_start_offset} must not be negative"
            )));
        }
        create_dir(&dir)?;
        let now = now_ms();
        let mut report = RecoveryReport::default();
        let (mut epochs, unreadable_epochs) = LeaderEpochFileCache::load(&dir)?;
        if let Some(why) = &unreadable_epochs {
            report.messages.push(format!(
                "{}: unreadable ({why}): rebuilt from the batch headers",
                epochs.path().display()
            ));
        }
        super::swap::recover_swaps(&dir, &mut report.messages)?;
        let (bases, snapshots) = scan_dir(&dir, &mut report)?;
        // Kafka's rule for a clean log without snapshots: no producer state before its last two
        // segments (txn.rs). Only where no snapshot file exists at all: unreadable ones (deleted
        // when read) mean a scan from the log start, as Kafka's `loadFromSnapshot` falls back.
        let without_snapshot_from = (had_clean_shutdown && snapshots.is_empty() && bases.len() > 2)
            .then(|| bases[bases.len() - 2]);
        let mut producers = ProducerStateFiles::new(&dir, snapshots, log_start_offset);
        let mut segments = BTreeMap::new();
        let mut missing_indexes = BTreeMap::new();
        for &base in &bases {
            missing_indexes.insert(base, missing_index_files(&dir, base));
            segments.insert(base, LogSegment::open(&dir, base, &config, now)?);
        }
        let recover_from = (!had_clean_shutdown).then(|| {
            segments
                .range(..=recovery_point)
                .next_back()
                .map_or(i64::MIN, |(&b, _)| b)
        });
        let mut loader = Loader {
            segments,
            missing_indexes,
            epochs: &mut epochs,
            report: &mut report,
            producers: &mut producers,
            without_snapshot_from,
        };
        loader.check_segments(&bases, recover_from)?;
        let Loader { mut segments, .. } = loader;
        if unreadable_epochs.is_some() {
            let rebuilt = rebuild_epochs(&segments, &mut epochs);
            tolerate_write(rebuilt, &mut report, epochs.path())?;
        }

        // Segments made here are new files in the directory: the first flush syncs it.
        let mut segments_created = 0;
        if segments.is_empty() {
            segments.insert(
                log_start_offset,
                LogSegment::create(&dir, log_start_offset, &config, now)?,
            );
            segments_created += 1;
        }
        let log_end_offset = next_offset(
            &mut segments,
            &mut epochs,
            &mut report,
            &mut producers,
            without_snapshot_from,
        )?;
        let segment_bases: BTreeSet<i64> = segments.keys().copied().collect();
        producers.remove_stray_snapshots(&segment_bases)?;
        producers.load_to(
            &segments,
            log_end_offset,
            false,
            without_snapshot_from,
            &mut report.messages,
        )?;
        producers.delete_snapshots_above(log_end_offset)?;
        let first_base = *segments.keys().next().expect("a segment");
        let log_start_offset = if log_start_offset > log_end_offset && !bases.is_empty() {
            // The checkpoint says more than the data: it is not trusted with the data's fate.
            report.messages.push(format!(
                "{}: the log start offset checkpoint says {log_start_offset}, beyond the log end offset {log_end_offset}: ignored, the log starts at {first_base}",
                dir.display()
            ));
            first_base
        } else {
            log_start_offset.max(first_base)
        };
        let mut newest_first = segments.values_mut().rev();
        let active = newest_first.next().expect("a segment");
        if let Some(e) = active.try_resize_indexes_to_max()? {
            report.messages.push(format!(
                "{}: indexes not preallocated ({e}): the segment rolls when they fill",
                active.log_path().display()
            ));
        }
        // The others are sealed: never appended to again unless truncation makes one active.
        newest_first.for_each(LogSegment::seal);
        let truncated = epochs.truncate_from_end(log_end_offset);
        tolerate_write(truncated, &mut report, epochs.path())?;
        let truncated = epochs.truncate_from_start(log_start_offset);
        tolerate_write(truncated, &mut report, epochs.path())?;
        let recovery_point = if had_clean_shutdown {
            log_end_offset
        } else {
            recovery_point.min(log_end_offset)
        };
        Ok(Log {
            dir,
            config,
            segments,
            log_start_offset,
            log_end_offset,
            high_watermark: log_end_offset,
            recovery_point,
            epochs,
            producers,
            report,
            truncations: 0,
            segments_created,
            segments_synced: 0,
            roll_flush_upto: None,
            bound_metadata: Default::default(),
            closed: false,
            cleaning: Default::default(),
            offline: None,
        })
    }
}

struct Loader<'a> {
    segments: BTreeMap<i64, LogSegment>,
    /// Index files that did not exist before the segments were opened.
    missing_indexes: BTreeMap<i64, Vec<&'static str>>,
    epochs: &'a mut LeaderEpochFileCache,
    report: &'a mut RecoveryReport,
    producers: &'a mut ProducerStateFiles,
    without_snapshot_from: Option<i64>,
}

impl Loader<'_> {
    /// Recovers or sanity-checks each segment in order; stops at the first damaged one.
    fn check_segments(&mut self, bases: &[i64], recover_from: Option<i64>) -> Result<()> {
        for (n, &base) in bases.iter().enumerate() {
            let segment = self.segments.get(&base).expect("loaded");
            if segment.is_empty() {
                // No data for an index to describe: whatever the index files hold (the zeroed
                // preallocation an unclean stop leaves, say) is simply made anew; not a problem
                // worth a report line.
                let must_recover = recover_from.is_some_and(|from| base >= from);
                if must_recover {
                    self.report.segments_recovered += 1;
                }
                if must_recover || segment.sanity_check().is_err() {
                    let segment = self.segments.get_mut(&base).expect("loaded");
                    segment.recover(|_, _| {})?;
                    segment.txn_index_mut().reset(Vec::new())?;
                }
                continue;
            }
            let index_problem = index_problem(segment, &self.missing_indexes[&base]);
            if let Some(why) = &index_problem {
                self.report.indexes_rebuilt += 1;
                self.report.messages.push(format!(
                    "{}: rebuilding the indexes: {why}",
                    segment.log_path().display()
                ));
            }
            let must_recover = recover_from.is_some_and(|from| base >= from);
            if !must_recover && index_problem.is_none() {
                continue;
            }
            if must_recover {
                self.report.segments_recovered += 1;
            }
            self.producers.load_to(
                &self.segments,
                base,
                false,
                self.without_snapshot_from,
                &mut self.report.messages,
            )?;
            let segment = self.segments.get_mut(&base).expect("loaded");
            if recover_segment(segment, self.epochs, self.report, self.producers)? {
                self.delete_after(&bases[n + 1..])?;
                break;
            }
        }
        Ok(())
    }

    fn delete_after(&mut self, later: &[i64]) -> Result<()> {
        for base in later {
            if let Some(segment) = self.segments.remove(base) {
                self.report.segments_deleted += 1;
                self.report.messages.push(format!(
                    "{}: deleted: an earlier segment of the log was damaged",
                    segment.log_path().display()
                ));
                segment.delete()?;
            }
        }
        Ok(())
    }
}

/// The index files of `base` that do not exist.
fn missing_index_files(dir: &Path, base: i64) -> Vec<&'static str> {
    [INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX]
        .into_iter()
        .filter(|suffix| !dir.join(file_name(base, suffix)).exists())
        .collect()
}

/// Why the indexes of a segment holding data need a rebuild, if they do.
fn index_problem(segment: &LogSegment, missing: &[&str]) -> Option<String> {
    if !missing.is_empty() {
        return Some(format!("{} missing", missing.join(" and ")));
    }
    segment.sanity_check().err()
}

/// Recovers one segment, assigning leader epochs from its batches and rebuilding its
/// `.txnindex` (the producer state is at its base). Returns whether it was cut.
fn recover_segment(
    segment: &mut LogSegment,
    epochs: &mut LeaderEpochFileCache,
    report: &mut RecoveryReport,
    producers: &mut ProducerStateFiles,
) -> Result<bool> {
    let mut assign_error = None;
    let mut aborted = Vec::new();
    let manager = &mut producers.manager;
    let recovered = segment.recover(|header: &BatchHeader, bytes: &[u8]| {
        if let Some(done) = manager.apply(header, bytes) {
            if done.is_aborted {
                aborted.push(AbortedTxn {
                    producer_id: done.producer_id,
                    first_offset: done.first_offset,
                    last_offset: done.last_offset,
                    last_stable_offset: manager.last_stable_offset_after(&done),
                });
            }
        }
        let epoch = header.partition_leader_epoch;
        if epoch >= 0 && epochs.latest_epoch().is_none_or(|latest| epoch > latest) {
            // The cache takes the entry even when the checkpoint cannot be rewritten.
            if let Err(e) = epochs.assign(epoch, header.base_offset) {
                assign_error.get_or_insert(e);
            }
        }
    })?;
    if let Some(e) = assign_error {
        tolerate_write(Err(e), report, epochs.path())?;
    }
    segment.txn_index_mut().reset(aborted)?;
    if let Some(why) = &recovered.indexes_incomplete {
        report.messages.push(format!(
            "{}: indexes rebuilt without their later entries ({why}): lookups walk further",
            segment.log_path().display()
        ));
    }
    if recovered.truncated_bytes == 0 {
        return Ok(false);
    }
    report.bytes_truncated += recovered.truncated_bytes;
    report.messages.push(format!(
        "{}: truncated {} bytes at {}",
        segment.log_path().display(),
        recovered.truncated_bytes,
        recovered.problem.as_deref().unwrap_or("the end")
    ));
    Ok(true)
}

/// The LEO: after the last batch of the last segment. A trusted last segment must end on a
/// batch boundary for appends to follow it; if it does not, it is recovered.
fn next_offset(
    segments: &mut BTreeMap<i64, LogSegment>,
    epochs: &mut LeaderEpochFileCache,
    report: &mut RecoveryReport,
    producers: &mut ProducerStateFiles,
    without_snapshot_from: Option<i64>,
) -> Result<i64> {
    let last = segments.values().next_back().expect("a segment");
    let (next, end) = last.scan_tail()?;
    if end == last.size() {
        return Ok(next);
    }
    let base = last.base_offset();
    producers.load_to(
        segments,
        base,
        false,
        without_snapshot_from,
        &mut report.messages,
    )?;
    let last = segments.values_mut().next_back().expect("a segment");
    report.segments_recovered += 1;
    report.messages.push(format!(
        "{}: recovering: whole batches end at {end} of {} bytes",
        last.log_path().display(),
        last.size()
    ));
    recover_segment(last, epochs, report, producers)?;
    Ok(last.scan_tail()?.0)
}

/// A rewrite of the epoch checkpoint that failed with an I/O error (a full disk) does not stop
/// the open: the cache knows the file is behind and the next append rewrites it first.
fn tolerate_write(result: Result<()>, report: &mut RecoveryReport, path: &Path) -> Result<()> {
    match result {
        Err(e @ StorageError::Io { .. }) => {
            report.messages.push(format!(
                "{}: not rewritten ({e}): rewritten before the next append",
                path.display()
            ));
            Ok(())
        }
        other => other,
    }
}

/// Rebuilds the epoch cache from every batch header (its checkpoint did not parse).
fn rebuild_epochs(
    segments: &BTreeMap<i64, LogSegment>,
    epochs: &mut LeaderEpochFileCache,
) -> Result<()> {
    epochs.clear()?;
    for segment in segments.values() {
        for batch in segment.batches_from(0)?.map_while(|b| b.ok()) {
            let epoch = batch.header.partition_leader_epoch;
            if epoch >= 0 && epochs.latest_epoch().is_none_or(|latest| epoch > latest) {
                epochs.assign(epoch, batch.base_offset())?;
            }
        }
    }
    Ok(())
}

/// The base offsets of the `.log` files in `dir`, sorted, and the offsets of the producer
/// snapshots; removes leftovers and orphan indexes.
fn scan_dir(dir: &Path, report: &mut RecoveryReport) -> Result<(Vec<i64>, BTreeSet<i64>)> {
    let mut logs = Vec::new();
    let mut snapshots = BTreeSet::new();
    let mut indexes = Vec::new();
    for entry in fs::read_dir(dir).ctx("list", dir)? {
        let path = entry.ctx("list", dir)?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        let tmp_checkpoint = name == format!("{LEADER_EPOCH_CHECKPOINT_FILE}.tmp");
        if tmp_checkpoint || LEFTOVER_SUFFIXES.iter().any(|s| name.ends_with(s)) {
            report
                .messages
                .push(format!("{}: removed a leftover file", path.display()));
            remove_if_present(&path)?;
        } else if let Some(base) = parse_file_name(&name, LOG_FILE_SUFFIX) {
            logs.push(base);
        } else if let Some(offset) = parse_file_name(&name, PRODUCER_SNAPSHOT_FILE_SUFFIX) {
            snapshots.insert(offset);
        } else if let Some(base) = parse_file_name(&name, INDEX_FILE_SUFFIX)
            .or_else(|| parse_file_name(&name, TIME_INDEX_FILE_SUFFIX))
            .or_else(|| parse_file_name(&name, TXN_INDEX_FILE_SUFFIX))
        {
            indexes.push((base, path));
        }
    }
    logs.sort_unstable();
    for (base, path) in indexes {
        if logs.binary_search(&base).is_err() {
            report.messages.push(format!(
                "{}: removed an index without its .log",
                path.display()
            ));
            remove_if_present(&path)?;
        }
    }
    Ok((logs, snapshots))
}

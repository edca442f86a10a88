//! Swapping cleaned segments into the log, and finishing or undoing a swap a crash interrupted
//! (Kafka's `LocalLog.replaceSegments` and `LogLoader`'s `.cleaned`/`.swap` handling).
//!
//! Files of a cleaned group at base offset `B` (`<B>` is the 20-digit file name):
//!
//! ```text
//! <B>.log.cleaned <B>.index.cleaned <B>.timeindex.cleaned [<B>.txnindex.cleaned]   written, synced
//!    -> renamed, group by group in base order, each file in that order, to *.swap; dir synced
//!    -> old segments' files deleted (open readers keep their descriptors), then *.swap renamed
//!       to the live names, group by group; dir synced
//! ```
//!
//! Recovery on open, before the segments are loaded:
//! - `<B>.cleaning/` scratch directories and every `*.cleaned` file are deleted;
//! - `*.swap` files at or above the lowest `.cleaned` base offset belong to a swap that had not
//!   finished its renames to `.swap` (groups rename in base order): deleted, the old segments
//!   stay;
//! - the other `*.swap` files complete their swap: the live segments whose base offset lies in
//!   `[B, next offset of <B>.log.swap)` are deleted, then the `.swap` files take the live names
//!   (a group without `<B>.log.swap` had renamed its `.log` already and only renames the rest).
//!   Its indexes were synced before the first rename; they are sanity-checked (and rebuilt when
//!   bad) as any segment's are.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use ferrolog_record::iter::BatchIter;

use super::{now_ms, Log};
use crate::cleaner::CLEANED_FILE_SUFFIX;
use crate::error::{IoContext, Result};
use crate::leader_epoch::sync_dir;
use crate::segment::{
    file_name, parse_file_name, remove_if_present, LogSegment, INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX,
};

// What a cleaning round (clean.rs) hands to the swap is defined here, so that clean.rs uses the
// swap and not the other way round.

/// A segment as the round saw it when it began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SnapshotSegment {
    pub base_offset: i64,
    pub log_path: PathBuf,
    pub size: u32,
    pub offset_index_bytes: u64,
    pub time_index_bytes: u64,
}

/// One cleaned group: the segments it replaces and its `.cleaned` files.
#[derive(Debug)]
pub(crate) struct CleanedGroup {
    pub base_offset: i64,
    pub replaces: Vec<SnapshotSegment>,
    /// `.log`, `.index`, `.timeindex` and, when it has entries, `.txnindex`, all `.cleaned`.
    pub files: Vec<PathBuf>,
}

pub const SWAP_FILE_SUFFIX: &str = ".swap";
const SCRATCH_DIR_SUFFIX: &str = ".cleaning";
const SEGMENT_SUFFIXES: [&str; 4] = [
    LOG_FILE_SUFFIX,
    INDEX_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
];

pub(crate) fn cleaned_txn_index_path(dir: &Path, base: i64) -> PathBuf {
    dir.join(format!(
        "{}{CLEANED_FILE_SUFFIX}",
        file_name(base, TXN_INDEX_FILE_SUFFIX)
    ))
}

pub(crate) fn remove_cleaned(files: &[PathBuf]) -> Result<()> {
    for path in files {
        remove_if_present(path)?;
    }
    Ok(())
}

/// `x.cleaned` -> `x.swap`, `x.swap` -> `x`.
fn with_suffix(path: &Path, from: &str, to: &str) -> PathBuf {
    let name = path.to_string_lossy();
    PathBuf::from(format!("{}{to}", name.strip_suffix(from).unwrap_or(&name)))
}

/// Kafka's `replaceSegments` for every group, in base order.
pub(crate) fn swap_in(log: &mut Log, groups: &[CleanedGroup]) -> Result<()> {
    if groups.is_empty() {
        return Ok(());
    }
    let mut swapped: Vec<PathBuf> = Vec::new();
    let renamed = (|| {
        for group in groups {
            for path in &group.files {
                let to = with_suffix(path, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX);
                fs::rename(path, &to).ctx("rename", path)?;
                swapped.push(to);
            }
        }
        sync_dir(&log.dir)
    })();
    if let Err(e) = renamed {
        // Nothing old is touched yet: the log stays as it was.
        let _ = remove_cleaned(&swapped);
        for group in groups {
            let _ = remove_cleaned(&group.files);
        }
        return Err(e);
    }
    // From here a failure leaves the segment list and the directory apart: the log goes
    // offline and the next open finishes the swap from the `.swap` files.
    let replaced = (|| {
        for group in groups {
            for old in &group.replaces {
                if let Some(segment) = log.segments.remove(&old.base_offset) {
                    segment.delete()?;
                }
            }
            for path in &group.files {
                let swap = with_suffix(path, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX);
                let live = with_suffix(path, CLEANED_FILE_SUFFIX, "");
                fs::rename(&swap, &live).ctx("rename", &swap)?;
            }
            let segment = LogSegment::open(&log.dir, group.base_offset, &log.config, now_ms())?;
            log.segments.insert(group.base_offset, segment);
        }
        sync_dir(&log.dir)
    })();
    if let Err(e) = &replaced {
        log.offline = Some(format!("swapping cleaned segments in failed: {e}"));
    }
    replaced
}

/// Splits `<B><suffix><tail>` into `B` and `suffix` for the segment suffixes.
fn parse_with_tail(name: &str, tail: &str) -> Option<(i64, &'static str)> {
    let stem = name.strip_suffix(tail)?;
    SEGMENT_SUFFIXES
        .iter()
        .find_map(|s| parse_file_name(stem, s).map(|base| (base, *s)))
}

/// The offset after the last whole batch of a `.log` file (its base when it has none).
fn next_offset_of(path: &Path, base: i64) -> Result<i64> {
    let bytes = fs::read(path).ctx("read", path)?;
    let mut next = base;
    for (_, header) in BatchIter::new(&bytes).map_while(|b| b.ok()) {
        next = header.last_offset() + 1;
    }
    Ok(next)
}

/// The recovery of `.cleaned`, `.swap` and scratch leftovers, before the segments are loaded.
pub(crate) fn recover_swaps(dir: &Path, messages: &mut Vec<String>) -> Result<()> {
    let mut cleaned_bases = BTreeSet::new();
    let mut swaps: BTreeMap<i64, Vec<(&'static str, PathBuf)>> = BTreeMap::new();
    let mut live_logs = BTreeSet::new();
    let mut changed = false;
    for entry in fs::read_dir(dir).ctx("list", dir)? {
        let path = entry.ctx("list", dir)?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        let scratch = name.strip_suffix(SCRATCH_DIR_SUFFIX);
        if scratch.is_some_and(|stem| stem.parse::<i64>().is_ok()) {
            fs::remove_dir_all(&path).ctx("remove", &path)?;
            messages.push(format!(
                "{}: removed an unfinished cleaning",
                path.display()
            ));
            changed = true;
        } else if let Some((base, _)) = parse_with_tail(&name, CLEANED_FILE_SUFFIX) {
            cleaned_bases.insert(base);
            remove_if_present(&path)?;
            messages.push(format!(
                "{}: removed an unfinished cleaning",
                path.display()
            ));
            changed = true;
        } else if let Some((base, suffix)) = parse_with_tail(&name, SWAP_FILE_SUFFIX) {
            swaps.entry(base).or_default().push((suffix, path));
        } else if let Some(base) = parse_file_name(&name, LOG_FILE_SUFFIX) {
            live_logs.insert(base);
        }
    }
    let lowest_cleaned = cleaned_bases.first().copied().unwrap_or(i64::MAX);
    for (base, files) in swaps {
        changed = true;
        if base >= lowest_cleaned {
            for (_, path) in &files {
                remove_if_present(path)?;
                messages.push(format!(
                    "{}: removed: its swap had not finished (a .cleaned file at or below it)",
                    path.display()
                ));
            }
            continue;
        }
        if let Some((_, log_swap)) = files.iter().find(|(s, _)| *s == LOG_FILE_SUFFIX) {
            let next = next_offset_of(log_swap, base)?.max(base + 1);
            let overlapping: Vec<i64> = live_logs.range(base..next).copied().collect();
            for old in overlapping {
                for suffix in SEGMENT_SUFFIXES {
                    remove_if_present(&dir.join(file_name(old, suffix)))?;
                }
                live_logs.remove(&old);
                messages.push(format!(
                    "{}: deleted: replaced by the cleaned segment at {base}",
                    dir.join(file_name(old, LOG_FILE_SUFFIX)).display()
                ));
            }
            live_logs.insert(base);
        }
        for (suffix, path) in &files {
            let live = dir.join(file_name(base, suffix));
            fs::rename(path, &live).ctx("rename", path)?;
        }
        messages.push(format!(
            "{}: swapped in a cleaned segment",
            dir.join(file_name(base, LOG_FILE_SUFFIX)).display()
        ));
    }
    if changed {
        sync_dir(dir)?;
    }
    Ok(())
}

//! The log's side of transactions (docs/storage.md "Transactions"): the producer state
//! (producer_state/mod.rs) kept by appends and rebuilt from snapshots and batch headers, the
//! `.snapshot` files (producer_state/snapshot.rs), and the aborted transactions of reads
//! (Kafka's `UnifiedLog.collectAbortedTransactions`). The TypeScript twin is
//! ts/storage/js/log-producer-state.ts.
//!
//! Snapshots are written at each roll (at the new segment's base offset) and on close (at the
//! LEO) when something was applied since the last one (Kafka's `takeSnapshot`); a write that
//! fails leaves no snapshot (a torn one fails its CRC and is deleted when read), which only
//! makes the next load scan further. They are not fsynced at roll (Kafka does that in the
//! background; the CRC makes a torn one harmless), on close they are. A snapshot goes with the
//! segment whose base offset it carries (retention, DeleteRecords); truncation deletes those
//! above the new LEO.
//!
//! Loading the state to an offset (`load_to`): continue from where it is when that is not past
//! the offset; else start from the newest readable snapshot at or below it (unreadable ones are
//! deleted), else from the first segment, and apply the batch headers up to it (a control
//! batch's marker record is read too). Without a snapshot: after a clean shutdown, Kafka's rule:
//! the state is taken as empty before the second-to-last segment and only the last two are
//! scanned (a clean close writes a snapshot at the LEO, so a clean log without any was written
//! before snapshots existed: by Kafka before 0.11, by ferrolog before transactions, with no
//! transaction in it); after an unclean stop the whole log's headers are scanned, from the first
//! segment (snapshots deleted by hand or lost: a correct LSO over a fast open). Once the
//! segments are recovered, stray snapshots (at no segment's base) are deleted but the newest
//! above the last segment's base (Kafka's `removeStraySnapshots`). "Without a
//! snapshot" means no `.snapshot` file at all, as Kafka's `latestSnapshotOffset` before loading:
//! where every one is unreadable, the state is rebuilt from the first segment even after a
//! clean shutdown (Kafka's `loadFromSnapshot` falls back to the log start).
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use ferrolog_record::batch::RECORD_BATCH_OVERHEAD;
use ferrolog_record::BatchHeader;

use super::Log;
use crate::error::Result;
use crate::fetch::FetchSpan;
use crate::index::txn_index::{AbortedTransaction, AbortedTxn};
use crate::producer_state::snapshot::{
    decode_snapshot, encode_snapshot, PRODUCER_SNAPSHOT_FILE_SUFFIX,
};
use crate::producer_state::{ProducerStateEntry, ProducerStateManager};
use crate::segment::{file_name, remove_if_present, LogSegment};

/// Bytes of a control batch enough to read its marker: the header and a marker record.
const CONTROL_PREFIX_BYTES: u32 = RECORD_BATCH_OVERHEAD as u32 + 40;

/// The producer state of a log with its snapshot files.
#[derive(Debug)]
pub(crate) struct ProducerStateFiles {
    pub(crate) manager: ProducerStateManager,
    dir: PathBuf,
    /// Offsets of the `.snapshot` files.
    snapshots: BTreeSet<i64>,
    /// The offset of the last snapshot written or loaded (Kafka's lastSnapOffset).
    last_snap_offset: i64,
    /// Whether the state was loaded at all (the loader loads it lazily).
    loaded: bool,
}

pub(crate) fn snapshot_path(dir: &Path, offset: i64) -> PathBuf {
    dir.join(file_name(offset, PRODUCER_SNAPSHOT_FILE_SUFFIX))
}

impl ProducerStateFiles {
    pub(crate) fn new(dir: &Path, snapshots: BTreeSet<i64>, log_start_offset: i64) -> Self {
        ProducerStateFiles {
            manager: ProducerStateManager::default(),
            dir: dir.to_path_buf(),
            snapshots,
            last_snap_offset: log_start_offset,
            loaded: false,
        }
    }

    pub(crate) fn last_snap_offset(&self) -> i64 {
        self.last_snap_offset
    }

    pub(crate) fn set_last_snap_offset(&mut self, offset: i64) {
        self.last_snap_offset = offset;
    }

    /// Brings the state to `offset` (see the module comment); `fresh` starts over.
    pub(crate) fn load_to(
        &mut self,
        segments: &BTreeMap<i64, LogSegment>,
        offset: i64,
        fresh: bool,
        without_snapshot_from: Option<i64>,
        messages: &mut Vec<String>,
    ) -> Result<()> {
        if fresh || !self.loaded || self.manager.map_end_offset > offset {
            let mut from = without_snapshot_from
                .or_else(|| segments.keys().next().copied())
                .unwrap_or(offset)
                .min(offset);
            self.manager.reset(Vec::new(), from);
            let candidates: Vec<i64> = self.snapshots.range(..=offset).rev().copied().collect();
            for at in candidates {
                let path = snapshot_path(&self.dir, at);
                let read = fs::read(&path).map_err(|e| e.to_string());
                match read.and_then(|bytes| decode_snapshot(&bytes)) {
                    Ok(entries) => {
                        self.manager.reset(entries, at);
                        from = at;
                        break;
                    }
                    Err(why) => {
                        messages.push(format!("{}: unreadable ({why}): deleted", path.display()));
                        self.delete_snapshot(at)?;
                    }
                }
            }
            self.manager.map_end_offset = from;
            self.last_snap_offset = self
                .snapshots
                .range(..=offset)
                .next_back()
                .copied()
                .unwrap_or(from);
            self.loaded = true;
        }
        if self.manager.map_end_offset < offset {
            let from = self.manager.map_end_offset;
            self.replay(segments, from, offset)?;
        }
        Ok(())
    }

    /// Applies the batches of [from, to) from the segments' headers (and markers).
    fn replay(&mut self, segments: &BTreeMap<i64, LogSegment>, from: i64, to: i64) -> Result<()> {
        let first = segments
            .range(..=from)
            .next_back()
            .map_or(i64::MIN, |(&b, _)| b);
        for (&base, segment) in segments.range(first..) {
            if base >= to {
                break;
            }
            let position = if base < from {
                match segment.translate_offset(from, 0)? {
                    Some(batch) => batch.position,
                    None => continue,
                }
            } else {
                0
            };
            for batch in segment.batches_from(position)? {
                let batch = batch?;
                if batch.base_offset() >= to {
                    break;
                }
                if batch.header.is_control() {
                    let bytes = segment
                        .read_bytes(batch.position, batch.size().min(CONTROL_PREFIX_BYTES))?;
                    self.manager.apply(&batch.header, &bytes);
                } else {
                    self.manager.apply(&batch.header, &[]);
                }
            }
        }
        self.manager.map_end_offset = to;
        Ok(())
    }

    /// Applies one batch appended to `segment` (`bytes` whole): an aborted transaction its
    /// marker completes goes to the segment's `.txnindex`, with the LSO Kafka records.
    pub(crate) fn apply_appended(
        &mut self,
        segment: &mut LogSegment,
        header: &BatchHeader,
        bytes: &[u8],
        high_watermark: i64,
    ) -> Result<()> {
        let Some(completed) = self.manager.apply(header, bytes) else {
            return Ok(());
        };
        if completed.is_aborted {
            segment.txn_index_mut().append(AbortedTxn {
                producer_id: completed.producer_id,
                first_offset: completed.first_offset,
                last_offset: completed.last_offset,
                last_stable_offset: self.manager.last_stable_offset_after(&completed),
            })?;
        }
        self.manager.complete_txn(completed, high_watermark);
        Ok(())
    }

    /// Kafka's `takeSnapshot`: the state at `offset` (its map end) to `<offset>.snapshot`, when
    /// anything was applied since the last one. Returns the file written.
    pub(crate) fn take_snapshot(&mut self, offset: i64) -> Option<PathBuf> {
        if offset <= self.last_snap_offset {
            return None;
        }
        let path = snapshot_path(&self.dir, offset);
        if fs::write(&path, encode_snapshot(self.manager.entries())).is_err() {
            // No snapshot: the next load scans further (module comment).
            let _ = remove_if_present(&path);
            return None;
        }
        self.snapshots.insert(offset);
        self.last_snap_offset = offset;
        Some(path)
    }

    pub(crate) fn delete_snapshot(&mut self, offset: i64) -> Result<()> {
        if self.snapshots.remove(&offset) {
            remove_if_present(&snapshot_path(&self.dir, offset))?;
        }
        Ok(())
    }

    /// Kafka's `removeStraySnapshots`, at load: a snapshot at no segment's base offset (a
    /// close's, at the LEO of its time) is deleted, unless it is the newest such one and above
    /// the last segment's base (the last close's, which spares the next open a scan). Without
    /// this, every clean restart left one snapshot that no segment's deletion would ever take.
    pub(crate) fn remove_stray_snapshots(&mut self, segment_bases: &BTreeSet<i64>) -> Result<()> {
        let strays: Vec<i64> = self
            .snapshots
            .iter()
            .copied()
            .filter(|at| !segment_bases.contains(at))
            .collect();
        let newest = strays.last().copied();
        let last_base = segment_bases.iter().next_back().copied();
        for at in strays {
            if Some(at) != newest || last_base.is_none_or(|base| at < base) {
                self.delete_snapshot(at)?;
            }
        }
        Ok(())
    }

    /// Deletes the snapshots above `offset` (truncation, load).
    pub(crate) fn delete_snapshots_above(&mut self, offset: i64) -> Result<()> {
        let above: Vec<i64> = self
            .snapshots
            .range(offset.saturating_add(1)..)
            .copied()
            .collect();
        for at in above {
            self.delete_snapshot(at)?;
        }
        if self.last_snap_offset > offset {
            self.last_snap_offset = self.snapshots.iter().next_back().copied().unwrap_or(offset);
        }
        Ok(())
    }
}

/// Kafka's `collectAbortedTransactions(startOffset, upperBoundOffset)`: the aborted
/// transactions overlapping [start, upper_bound), from the `.txnindex` of the segment holding
/// `start` on, until one says the search is complete.
pub(crate) fn collect_aborted_transactions(
    segments: &BTreeMap<i64, LogSegment>,
    start: i64,
    upper_bound: i64,
) -> Vec<AbortedTransaction> {
    let mut out = Vec::new();
    let first = segments
        .range(..=start)
        .next_back()
        .map_or(i64::MIN, |(&b, _)| b);
    for segment in segments.range(first..).map(|(_, s)| s) {
        if segment
            .txn_index()
            .collect_aborted_txns(start, upper_bound, &mut out)
        {
            break;
        }
    }
    out
}

impl Log {
    /// The producer state at the log end, in producer id order (Kafka's `activeProducers`):
    /// what a snapshot taken now would hold.
    pub fn producer_state_entries(&self) -> Result<Vec<ProducerStateEntry>> {
        self.check_open()?;
        Ok(self.producers.manager.entries().copied().collect())
    }

    /// Kafka's `UnifiedLog.removeExpiredProducers` (producer.id.expiration.ms): forgets the idle
    /// producers with no open transaction; returns how many.
    pub fn remove_expired_producers(&mut self, now_ms: i64, expiration_ms: i64) -> Result<usize> {
        self.check_open()?;
        Ok(self
            .producers
            .manager
            .remove_expired_producers(now_ms, expiration_ms))
    }

    /// Kafka's `firstUnstableOffset`: the first offset of the oldest open transaction (or of a
    /// completed one whose marker the high watermark has not passed), at least the log start
    /// offset.
    pub fn first_unstable_offset(&self) -> Option<i64> {
        self.producers
            .manager
            .first_unstable_offset()
            .map(|first| first.max(self.log_start_offset))
    }

    /// Kafka's `lastStableOffset`: the first unstable offset when it is below the high
    /// watermark, else the high watermark.
    pub fn last_stable_offset(&self) -> i64 {
        match self.first_unstable_offset() {
            Some(first) if first < self.high_watermark => first,
            _ => self.high_watermark,
        }
    }

    pub fn collect_aborted_transactions(
        &self,
        start: i64,
        upper_bound: i64,
    ) -> Result<Vec<AbortedTransaction>> {
        self.check_open()?;
        Ok(collect_aborted_transactions(
            &self.segments,
            start,
            upper_bound,
        ))
    }

    /// Kafka's `LocalLog.addAbortedTransactions` for a read: the aborted transactions from the
    /// read's offset to the offset index entry at or past the end of its slice (else the next
    /// segment's base, or the LEO); none for an empty read.
    pub fn aborted_transactions_of(&self, span: &FetchSpan) -> Result<Vec<AbortedTransaction>> {
        self.check_open()?;
        if span.size == 0 {
            return Ok(Vec::new());
        }
        let upper_bound = self
            .segments
            .get(&span.segment)
            .and_then(|s| s.fetch_upper_bound_offset(span.position.saturating_add(span.size)))
            .or_else(|| {
                self.segments
                    .range(span.segment + 1..)
                    .next()
                    .map(|(&b, _)| b)
            })
            .unwrap_or(self.log_end_offset);
        Ok(collect_aborted_transactions(
            &self.segments,
            span.fetch_offset_metadata.message_offset,
            upper_bound,
        ))
    }
}

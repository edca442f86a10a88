//! The log's producer state (Kafka's `ProducerStateManager`, `ProducerAppendInfo`,
//! `CompletedTxn`), as far as the log needs it: each producer's last batch, epoch, coordinator
//! epoch and open transaction, which make the last stable offset, the `.txnindex` entries and
//! the `.snapshot` files (`snapshot.rs`). The TypeScript twin is
//! ts/storage/js/producer-state-manager.ts (docs/storage.md "Transactions").
//!
//! Every batch with a producer id (>= 0) is applied in offset order, on every append (leader
//! or follower) and when the state is rebuilt from the log:
//!
//! - a data batch: a new epoch forgets the producer's last batch; the batch becomes the last
//!   one (lastSequence, lastOffset, offsetDelta = lastOffset - baseOffset, timestamp =
//!   maxTimestamp); a transactional batch of a producer with no open transaction opens one at
//!   its base offset;
//! - a COMMIT or ABORT marker: the producer's open transaction, if any, completes (a
//!   [`CompletedTxn`]); the epoch becomes the marker's (forgetting the last batch if it
//!   changed), the coordinator epoch and timestamp the marker's, no transaction is open. A
//!   marker with no open transaction completes nothing (Kafka: no index entry, no effect on the
//!   LSO). Other control batches change nothing.
//!
//! Epochs are not checked here (fencing is the produce path's and the coordinator's). A
//! completed transaction stays unstable until the high watermark passes its marker (Kafka's
//! `unreplicatedTxns`).
//!
//! Idle producers expire (Kafka's `removeExpiredProducers`, producer.id.expiration.ms): one
//! with no open transaction whose last batch's timestamp is `expiration_ms` or more before now
//! is forgotten; the next snapshot no longer holds it. The broker asks for it every
//! producer.id.expiration.check.interval.ms.
use std::collections::{BTreeMap, HashMap};

use ferrolog_record::batch::RECORD_BATCH_OVERHEAD;
use ferrolog_record::varint::{read_varint, read_varlong};
use ferrolog_record::{BatchHeader, ControlRecordType, EndTransactionMarker};

use crate::file_batches::last_offset_of;

pub mod snapshot;

/// Kafka's `ProducerStateEntry` as the log keeps it (the last batch only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerStateEntry {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub last_sequence: i32,
    pub last_offset: i64,
    pub offset_delta: i32,
    pub timestamp: i64,
    pub coordinator_epoch: i32,
    pub current_txn_first_offset: i64,
}

impl ProducerStateEntry {
    fn empty(producer_id: i64) -> ProducerStateEntry {
        ProducerStateEntry {
            producer_id,
            producer_epoch: -1,
            last_sequence: -1,
            last_offset: -1,
            offset_delta: 0,
            timestamp: -1,
            coordinator_epoch: -1,
            current_txn_first_offset: -1,
        }
    }
}

/// Kafka's `CompletedTxn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub is_aborted: bool,
}

/// The marker of a control batch whose bytes (at least the header and its first record) are
/// `batch`: None when it is no end transaction marker (another control type, compressed, empty,
/// unreadable).
pub fn end_txn_marker_of(header: &BatchHeader, batch: &[u8]) -> Option<EndTransactionMarker> {
    if !header.is_control() || header.compression() != 0 || header.records_count < 1 {
        return None;
    }
    let end = batch.len().min(header.size_in_bytes());
    let mut at = RECORD_BATCH_OVERHEAD;
    let next_varint = |at: &mut usize| -> Option<i32> {
        let (v, n) = read_varint(batch.get(*at..end)?).ok()?;
        *at += n;
        Some(v)
    };
    next_varint(&mut at)?; // record length
    at += 1; // attributes
    let (_, n) = read_varlong(batch.get(at..end)?).ok()?; // timestamp delta
    at += n;
    next_varint(&mut at)?; // offset delta
    let key_len = usize::try_from(next_varint(&mut at)?).ok()?;
    let key = batch.get(at..at.checked_add(key_len)?.min(end))?;
    if key.len() != key_len {
        return None;
    }
    at += key_len;
    let value_len = next_varint(&mut at)?;
    let value = usize::try_from(value_len)
        .ok()
        .and_then(|len| batch.get(at..(at + len).min(end)));
    let marker = EndTransactionMarker::parse(key, value).ok()?;
    matches!(
        marker.control_type,
        ControlRecordType::Commit | ControlRecordType::Abort
    )
    .then_some(marker)
}

/// What `mark` keeps to undo an append's changes.
#[derive(Debug, Default)]
struct Journal {
    /// Each producer changed since the mark, as it was then (None: unknown then).
    before: HashMap<i64, Option<ProducerStateEntry>>,
    unreplicated: usize,
}

#[derive(Debug, Default)]
pub struct ProducerStateManager {
    producers: BTreeMap<i64, ProducerStateEntry>,
    /// Open transactions: producer id -> first offset (Kafka's `ongoingTxns`).
    ongoing: HashMap<i64, i64>,
    /// Completed transactions whose marker the high watermark has not passed yet.
    unreplicated: Vec<CompletedTxn>,
    journal: Option<Journal>,
    /// Offsets below this are applied (Kafka's mapEndOffset).
    pub map_end_offset: i64,
}

impl ProducerStateManager {
    /// Starts over from `entries` (a snapshot's) at `offset`.
    pub fn reset(&mut self, entries: Vec<ProducerStateEntry>, offset: i64) {
        self.ongoing = entries
            .iter()
            .filter(|e| e.current_txn_first_offset >= 0)
            .map(|e| (e.producer_id, e.current_txn_first_offset))
            .collect();
        self.producers = entries.into_iter().map(|e| (e.producer_id, e)).collect();
        self.unreplicated.clear();
        self.journal = None;
        self.map_end_offset = offset;
    }

    /// The entries in producer id order (the snapshot's order).
    pub fn entries(&self) -> impl ExactSizeIterator<Item = &ProducerStateEntry> {
        self.producers.values()
    }

    /// Starts recording changes so that `rollback` can undo them.
    pub fn mark(&mut self) {
        self.journal = Some(Journal {
            before: HashMap::new(),
            unreplicated: self.unreplicated.len(),
        });
    }

    /// Ends the recording: the changes stay.
    pub fn commit(&mut self) {
        self.journal = None;
    }

    /// Undoes every change since `mark`.
    pub fn rollback(&mut self) {
        let Some(journal) = self.journal.take() else {
            return;
        };
        for (id, before) in journal.before {
            self.ongoing.remove(&id);
            match before {
                None => {
                    self.producers.remove(&id);
                }
                Some(e) => {
                    if e.current_txn_first_offset >= 0 {
                        self.ongoing.insert(id, e.current_txn_first_offset);
                    }
                    self.producers.insert(id, e);
                }
            }
        }
        self.unreplicated.truncate(journal.unreplicated);
    }

    /// Applies one batch (Kafka's `ProducerAppendInfo.append`); `batch` holds at least its
    /// header and, for a control batch, its first record. Returns the transaction a marker
    /// completed, which the caller indexes (if aborted) and passes to `complete_txn`.
    pub fn apply(&mut self, header: &BatchHeader, batch: &[u8]) -> Option<CompletedTxn> {
        let last_offset = last_offset_of(header);
        self.map_end_offset = self.map_end_offset.max(last_offset + 1);
        let id = header.producer_id;
        if id < 0 {
            return None;
        }
        let marker = end_txn_marker_of(header, batch);
        if header.is_control() && marker.is_none() {
            return None;
        }
        let current = self.producers.get(&id).copied();
        if let Some(journal) = &mut self.journal {
            journal.before.entry(id).or_insert(current);
        }
        let mut e = current.unwrap_or_else(|| ProducerStateEntry::empty(id));
        if e.producer_epoch != header.producer_epoch {
            e.producer_epoch = header.producer_epoch;
            e.last_sequence = -1;
            e.last_offset = -1;
            e.offset_delta = 0;
        }
        e.timestamp = header.max_timestamp;
        let mut completed = None;
        if let Some(marker) = marker {
            if e.current_txn_first_offset >= 0 {
                completed = Some(CompletedTxn {
                    producer_id: id,
                    first_offset: e.current_txn_first_offset,
                    last_offset,
                    is_aborted: marker.control_type == ControlRecordType::Abort,
                });
            }
            e.current_txn_first_offset = -1;
            e.coordinator_epoch = marker.coordinator_epoch;
        } else {
            let offset_delta = (last_offset - header.base_offset) as i32;
            e.last_sequence = last_sequence_of(header.base_sequence, offset_delta);
            e.last_offset = last_offset;
            e.offset_delta = offset_delta;
            if header.is_transactional() && e.current_txn_first_offset < 0 {
                e.current_txn_first_offset = header.base_offset;
            }
        }
        if e.current_txn_first_offset >= 0 {
            self.ongoing.insert(id, e.current_txn_first_offset);
        } else {
            self.ongoing.remove(&id);
        }
        self.producers.insert(id, e);
        completed
    }

    /// Kafka's `removeExpiredProducers`: forgets the producers with no open transaction whose
    /// last timestamp is `expiration_ms` or more before `now_ms`; returns how many.
    pub fn remove_expired_producers(&mut self, now_ms: i64, expiration_ms: i64) -> usize {
        let before = self.producers.len();
        self.producers.retain(|_, e| {
            e.current_txn_first_offset >= 0 || now_ms.saturating_sub(e.timestamp) < expiration_ms
        });
        before - self.producers.len()
    }

    /// Kafka's `lastStableOffset(completedTxn)`: the LSO once `txn` completes, as its index
    /// entry records it: the first offset of the oldest open transaction of another producer,
    /// else the marker's offset + 1.
    pub fn last_stable_offset_after(&self, txn: &CompletedTxn) -> i64 {
        self.ongoing
            .iter()
            .filter(|(&id, _)| id != txn.producer_id)
            .map(|(_, &first)| first)
            .min()
            .unwrap_or(txn.last_offset + 1)
    }

    /// Kafka's `completeTxn`: unstable until the high watermark passes its marker.
    pub fn complete_txn(&mut self, txn: CompletedTxn, high_watermark: i64) {
        if txn.last_offset >= high_watermark {
            self.unreplicated.push(txn);
        }
    }

    /// Kafka's `onHighWatermarkUpdated`.
    pub fn on_high_watermark_updated(&mut self, high_watermark: i64) {
        self.unreplicated
            .retain(|t| t.last_offset >= high_watermark);
    }

    /// The smallest first offset of the open and the not yet replicated transactions.
    pub fn first_unstable_offset(&self) -> Option<i64> {
        self.ongoing
            .values()
            .copied()
            .chain(self.unreplicated.iter().map(|t| t.first_offset))
            .min()
    }
}

/// Kafka's `DefaultRecordBatch.incrementSequence`: sequences wrap at i32::MAX to 0.
fn last_sequence_of(base_sequence: i32, delta: i32) -> i32 {
    if base_sequence < 0 {
        return -1;
    }
    if base_sequence > i32::MAX - delta {
        delta - (i32::MAX - base_sequence) - 1
    } else {
        base_sequence + delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(producer_id: i64, timestamp: i64, txn: i64) -> ProducerStateEntry {
        ProducerStateEntry {
            timestamp,
            current_txn_first_offset: txn,
            last_offset: 1,
            last_sequence: 0,
            producer_epoch: 0,
            ..ProducerStateEntry::empty(producer_id)
        }
    }

    #[test]
    fn idle_producers_expire_unless_a_transaction_is_open() {
        let mut psm = ProducerStateManager::default();
        psm.reset(
            vec![entry(1, 1_000, -1), entry(2, 1_000, 5), entry(3, 9_500, -1)],
            10,
        );
        assert_eq!(psm.remove_expired_producers(10_000, 9_000), 1);
        let ids: Vec<i64> = psm.entries().map(|e| e.producer_id).collect();
        assert_eq!(ids, vec![2, 3]);
        assert_eq!(psm.first_unstable_offset(), Some(5));
        assert_eq!(psm.remove_expired_producers(10_000, 9_001), 0);
    }
}

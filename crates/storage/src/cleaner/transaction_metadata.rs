//! What the cleaner tracks of transactions while it walks batches in offset order (Kafka's
//! `CleanedTransactionMetadata`). The aborted transactions of the range come in from the
//! transaction index (index/txn_index.rs's `AbortedTxn`), taken in first offset order.
//!
//! - A data batch of a transactional producer whose aborted transaction has begun (its first
//!   offset reached) is aborted: the map skips it, the cleaner drops its records.
//! - An ABORT marker may go once no batch of its transaction was seen in this pass (they are
//!   gone already); COMMIT likewise once no batch of its transaction was seen. A marker that may
//!   go still waits for its batch's delete horizon (the cleaner's rule, as for tombstones).
//! - An empty control batch was cleaned before: it may go.
use std::collections::{HashMap, HashSet, VecDeque};

use ferrolog_record::control::ControlRecordType;

pub use crate::index::txn_index::AbortedTxn;

#[derive(Debug, Default)]
pub struct CleanedTransactionMetadata {
    pending: VecDeque<AbortedTxn>,
    /// producer id -> (its transaction, last offset of an aborted batch seen in this pass).
    ongoing_aborted: HashMap<i64, (AbortedTxn, Option<i64>)>,
    ongoing_committed: HashSet<i64>,
    /// Aborted transactions whose ABORT marker stays: the cleaned segment's transaction index.
    retained: Vec<AbortedTxn>,
}

impl CleanedTransactionMetadata {
    pub fn new(aborted: &[AbortedTxn]) -> CleanedTransactionMetadata {
        let mut sorted = aborted.to_vec();
        sorted.sort_by_key(|t| t.first_offset);
        CleanedTransactionMetadata {
            pending: sorted.into(),
            ..Default::default()
        }
    }

    fn consume_aborted_up_to(&mut self, offset: i64) {
        while self
            .pending
            .front()
            .is_some_and(|t| t.first_offset <= offset)
        {
            let txn = self.pending.pop_front().unwrap();
            self.ongoing_aborted
                .entry(txn.producer_id)
                .or_insert((txn, None));
        }
    }

    /// The aborted transactions whose markers were kept, in marker order (Kafka appends them to
    /// the cleaned segment's `.txnindex`).
    pub fn retained_aborted(&self) -> &[AbortedTxn] {
        &self.retained
    }

    /// A data batch was read; true if it belongs to an aborted transaction.
    pub fn on_batch_read(
        &mut self,
        last_offset: i64,
        is_transactional: bool,
        producer_id: i64,
    ) -> bool {
        self.consume_aborted_up_to(last_offset);
        if !is_transactional {
            return false;
        }
        if let Some((_, seen)) = self.ongoing_aborted.get_mut(&producer_id) {
            *seen = Some(last_offset);
            true
        } else {
            self.ongoing_committed.insert(producer_id);
            false
        }
    }

    /// A control batch was read (`first_key`: the key of its first record, None when empty);
    /// true if the marker may be discarded.
    pub fn on_control_batch_read(
        &mut self,
        last_offset: i64,
        producer_id: i64,
        first_key: Option<&[u8]>,
    ) -> bool {
        self.consume_aborted_up_to(last_offset);
        let Some(key) = first_key else {
            return true;
        };
        match ControlRecordType::parse_key(key) {
            // Kept while a batch of its transaction was seen in this pass; its entry then goes
            // to the cleaned transaction index.
            Ok(ControlRecordType::Abort) => match self.ongoing_aborted.remove(&producer_id) {
                Some((txn, Some(_))) => {
                    self.retained.push(txn);
                    false
                }
                _ => true,
            },
            Ok(ControlRecordType::Commit) => !self.ongoing_committed.remove(&producer_id),
            _ => false,
        }
    }
}

//! A segment's `<base>.txnindex` (Kafka's `TransactionIndex`): the aborted transactions whose
//! ABORT marker was appended to the segment, in append order. The TypeScript twin is
//! ts/storage/js/transaction-index.ts.
//!
//! ```text
//! entry (34 bytes, big-endian; Kafka's AbortedTxn):
//!   version i16 (0) | producerId i64 | firstOffset i64 | lastOffset i64 | lastStableOffset i64
//! ```
//!
//! firstOffset is the transaction's first offset, lastOffset its ABORT marker's offset,
//! lastStableOffset the LSO right after the marker (the first offset of the oldest transaction of
//! another producer still open, else lastOffset + 1): a search below an upper bound stops at the
//! first entry whose lastStableOffset reaches it.
//!
//! The file exists only once an entry is appended, as in Kafka, and goes when its last entry
//! does. Entries live in memory (one per aborted transaction); an append writes its 34 bytes at
//! the end of the file (the segment's flush syncs it), truncation rewrites the file. A file whose
//! length is not a whole number of entries has a torn last entry: the loader recovers the segment.
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::{IoContext, Result};
use crate::files::remove_if_present;
use crate::index::FILE_MODE;

pub const ABORTED_TXN_SIZE: usize = 34;
pub const ABORTED_TXN_VERSION: i16 = 0;

/// Kafka's `AbortedTxn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

/// What a READ_COMMITTED fetch answers for one aborted transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTransaction {
    pub producer_id: i64,
    pub first_offset: i64,
}

impl AbortedTxn {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&ABORTED_TXN_VERSION.to_be_bytes());
        out.extend_from_slice(&self.producer_id.to_be_bytes());
        out.extend_from_slice(&self.first_offset.to_be_bytes());
        out.extend_from_slice(&self.last_offset.to_be_bytes());
        out.extend_from_slice(&self.last_stable_offset.to_be_bytes());
    }
}

fn i64_at(buf: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(buf[at..at + 8].try_into().expect("8 bytes"))
}

#[derive(Debug)]
pub struct TransactionIndex {
    path: PathBuf,
    entries: Vec<AbortedTxn>,
}

impl TransactionIndex {
    /// The index at `path` with no entries (the file is made by the first append).
    pub fn empty(path: PathBuf) -> TransactionIndex {
        TransactionIndex {
            path,
            entries: Vec::new(),
        }
    }

    /// Reads the index at `path` (none if missing); Err(why) when its bytes are not whole entries.
    pub fn load(path: PathBuf) -> Result<std::result::Result<TransactionIndex, String>> {
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(crate::error::StorageError::io("read", &path, e)),
        };
        Ok(Self::parse(&bytes).map(|entries| TransactionIndex { path, entries }))
    }

    /// The entries of a file's bytes; Err(why) if they are not whole entries of version 0.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Vec<AbortedTxn>, String> {
        if !bytes.len().is_multiple_of(ABORTED_TXN_SIZE) {
            return Err(format!(
                "{} bytes are not whole {ABORTED_TXN_SIZE}-byte entries",
                bytes.len()
            ));
        }
        bytes
            .chunks_exact(ABORTED_TXN_SIZE)
            .map(|e| {
                let version = i16::from_be_bytes([e[0], e[1]]);
                if version != ABORTED_TXN_VERSION {
                    return Err(format!("unknown entry version {version}"));
                }
                Ok(AbortedTxn {
                    producer_id: i64_at(e, 2),
                    first_offset: i64_at(e, 10),
                    last_offset: i64_at(e, 18),
                    last_stable_offset: i64_at(e, 26),
                })
            })
            .collect()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn entries(&self) -> &[AbortedTxn] {
        &self.entries
    }

    /// Appends an entry at the end of the file (creating it).
    pub fn append(&mut self, txn: AbortedTxn) -> Result<()> {
        let mut bytes = Vec::with_capacity(ABORTED_TXN_SIZE);
        txn.encode(&mut bytes);
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(FILE_MODE)
            .open(&self.path)
            .and_then(|mut f| f.write_all(&bytes))
            .ctx("append to", &self.path)?;
        self.entries.push(txn);
        Ok(())
    }

    /// Keeps the first `keep` entries (undoing a failed append).
    pub fn truncate_to_entries(&mut self, keep: usize) -> Result<()> {
        if keep >= self.entries.len() {
            return Ok(());
        }
        self.entries.truncate(keep);
        self.rewrite()
    }

    /// Kafka's `truncateTo`: drops the entries whose lastOffset >= `offset`.
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        match self.entries.iter().position(|e| e.last_offset >= offset) {
            Some(keep) => self.truncate_to_entries(keep),
            None => Ok(()),
        }
    }

    /// Replaces every entry (recovery's rebuild); an empty index has no file.
    pub fn reset(&mut self, entries: Vec<AbortedTxn>) -> Result<()> {
        self.entries = entries;
        self.rewrite()
    }

    /// Kafka's `collectAbortedTxns`: the entries overlapping [fetch_offset, upper_bound_offset),
    /// and whether the search is complete (an entry's lastStableOffset reached the bound).
    pub fn collect_aborted_txns(
        &self,
        fetch_offset: i64,
        upper_bound_offset: i64,
        out: &mut Vec<AbortedTransaction>,
    ) -> bool {
        for e in &self.entries {
            if e.last_offset >= fetch_offset && e.first_offset < upper_bound_offset {
                out.push(AbortedTransaction {
                    producer_id: e.producer_id,
                    first_offset: e.first_offset,
                });
            }
            if e.last_stable_offset >= upper_bound_offset {
                return true;
            }
        }
        false
    }

    fn rewrite(&self) -> Result<()> {
        if self.entries.is_empty() {
            return remove_if_present(&self.path);
        }
        let mut bytes = Vec::with_capacity(self.entries.len() * ABORTED_TXN_SIZE);
        for e in &self.entries {
            e.encode(&mut bytes);
        }
        fs::write(&self.path, bytes).ctx("write", &self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kafkas_txnindex_and_writes_it_back() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../__test__/fixtures/kafka/fixture-0/00000000000000000264.txnindex");
        let bytes = fs::read(&fixture).unwrap();
        let entries = TransactionIndex::parse(&bytes).unwrap();
        assert_eq!(
            entries,
            vec![AbortedTxn {
                producer_id: 5,
                first_offset: 265,
                last_offset: 268,
                last_stable_offset: 269
            }]
        );
        let dir = tempfile::tempdir().unwrap();
        let mut index = TransactionIndex::empty(dir.path().join("x.txnindex"));
        index.append(entries[0]).unwrap();
        assert_eq!(fs::read(index.path()).unwrap(), bytes);
        let mut found = Vec::new();
        assert!(index.collect_aborted_txns(266, 269, &mut found));
        assert_eq!(found.len(), 1);
        index.truncate_to(268).unwrap();
        assert!(!index.path().exists());
    }

    #[test]
    fn a_torn_entry_is_refused() {
        assert!(TransactionIndex::parse(&[0u8; 35]).is_err());
    }
}

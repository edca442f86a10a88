//! One segment of a log (Kafka's `LogSegment`): the files of one base offset in a partition
//! directory.
//!
//! ```text
//! <base>.log        record batches back to back (crates/record/src/batch.rs has the header)
//! <base>.index      offset index, 8-byte entries (index/offset_index.rs)
//! <base>.timeindex  time index, 12-byte entries (index/time_index.rs)
//! <base>.txnindex   aborted transactions, 34-byte entries (index/txn_index.rs), made by the first
//! ```
//!
//! `<base>` is the base offset as 20 decimal digits, zero padded. Batches are appended with
//! `pwrite` at the end and read with `pread`, so readers and a flush (which holds an
//! `Arc<File>`, not the segment) never move a shared file position. A sealed segment's `.log`
//! is also mapped read-only, lazily, for the header walk of `translate_offset` (`mapped.rs`
//! holds the invariant that makes that safe: whatever may cut the file drops the map first).
//! Recovery is in `recover.rs`, the timestamp searches in `timestamp.rs`.
//!
//! Descriptors (ferrolog issue #11): only the active segment holds its three files open. A
//! sealed segment holds no index descriptor (its entries are in memory, index/mod.rs) and opens
//! its `.log` on the first read, under a process-wide bound on open sealed segments
//! (`log_file.rs`). Opening a log opens every segment sealed, reading its indexes once and
//! closing them; the loader then makes the last one active.
use std::cell::OnceCell;
use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use ferrolog_record::batch::RECORD_BATCH_OVERHEAD;
use ferrolog_record::BatchHeader;

use crate::config::LogConfig;
use crate::error::{IoContext, Result, StorageError};
use crate::fetch::{FetchSpan, LogOffsetMetadata};
use crate::file_batches::{last_offset_of, FileBatch, FileBatches, SCAN_CHUNK};
pub(crate) use crate::files::remove_if_present;
use crate::index::txn_index::TransactionIndex;
use crate::index::{open_read_write, OffsetIndex, TimeIndex, TimestampOffset};
use log_file::LogFile;
use mapped::MappedLog;

pub mod log_file;
mod mapped;
mod recover;
#[cfg(test)]
mod tests;
mod timestamp;

pub use recover::Recovered;
pub use timestamp::TimestampAndOffset;

pub const LOG_FILE_SUFFIX: &str = ".log";
pub const INDEX_FILE_SUFFIX: &str = ".index";
pub const TIME_INDEX_FILE_SUFFIX: &str = ".timeindex";
pub const TXN_INDEX_FILE_SUFFIX: &str = ".txnindex";
/// Digits of the base offset in a segment's file names.
pub const FILE_NAME_DIGITS: usize = 20;

/// `<base offset as 20 digits><suffix>`.
pub fn file_name(base_offset: i64, suffix: &str) -> String {
    format!("{base_offset:0width$}{suffix}", width = FILE_NAME_DIGITS)
}

/// The base offset in a file name of 20 digits and `suffix`, if it is one.
pub fn parse_file_name(name: &str, suffix: &str) -> Option<i64> {
    let digits = name.strip_suffix(suffix)?;
    if digits.len() != FILE_NAME_DIGITS || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A segment's state before an append (`LogSegment::mark`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SegmentMark {
    size: u32,
    offset_entries: usize,
    time_entries: usize,
    bytes_since_last_index_entry: u64,
    max_timestamp_so_far: TimestampOffset,
    rolling_base_ms: Option<i64>,
    sealed: bool,
    txn_entries: usize,
}

#[derive(Debug)]
pub struct LogSegment {
    base_offset: i64,
    log_path: PathBuf,
    /// The `.log`: open while active, opened by reads while sealed (`log_file.rs`).
    log: LogFile,
    /// Bytes of whole batches in the `.log`.
    size: u32,
    offset_index: OffsetIndex,
    time_index: TimeIndex,
    /// The aborted transactions whose marker is in this segment.
    txn_index: TransactionIndex,
    /// Why the `.txnindex` found at open is unreadable (a torn entry): the loader recovers.
    txn_index_problem: Option<String>,
    index_interval_bytes: u64,
    bytes_since_last_index_entry: u64,
    /// The greatest batch maxTimestamp and the lastOffset of the batch that reached it.
    max_timestamp_so_far: TimestampOffset,
    /// When the segment got its first batch (or was opened holding some): segment.ms counts
    /// from here.
    rolling_base_ms: Option<i64>,
    /// No longer the active segment: its `.log` neither grows nor shrinks until `unseal`.
    sealed: bool,
    /// A sealed segment's `.log`, mapped by the first walk that wants it (`None` inside when
    /// it could not be mapped). Emptied by `unseal`, before anything changes the file.
    mapped: OnceCell<Option<MappedLog>>,
}

impl LogSegment {
    /// Opens the files of `base_offset` in `dir`, creating missing ones, as a SEALED segment
    /// holding no descriptor: the indexes are read into memory and closed, the `.log` is opened
    /// by its first read (`unseal` makes it the active one). The `.log` is trusted to its full
    /// length; `recover` checks it.
    pub fn open(
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        now_ms: i64,
    ) -> Result<LogSegment> {
        LogSegment::open_files(dir, base_offset, config, now_ms, false)
    }

    fn open_files(
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        now_ms: i64,
        active: bool,
    ) -> Result<LogSegment> {
        let log_path = dir.join(file_name(base_offset, LOG_FILE_SUFFIX));
        let log = LogFile::closed(&log_path);
        let len = if active {
            log.pin()?;
            log.get()?.metadata().ctx("stat segment", &log_path)?.len()
        } else {
            match fs::metadata(&log_path) {
                Ok(m) => m.len(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    open_read_write(&log_path, "create segment")?;
                    0
                }
                Err(e) => return Err(StorageError::io("stat segment", &log_path, e)),
            }
        };
        let size = u32::try_from(len).map_err(|_| {
            StorageError::CorruptRecord(format!(
                "{} is {len} bytes, more than a segment can hold",
                log_path.display()
            ))
        })?;
        let max_index_bytes = config.segment_index_bytes as usize;
        let offset_index = OffsetIndex::open_with(
            &dir.join(file_name(base_offset, INDEX_FILE_SUFFIX)),
            base_offset,
            max_index_bytes,
            active,
        )?;
        let time_index = TimeIndex::open_with(
            &dir.join(file_name(base_offset, TIME_INDEX_FILE_SUFFIX)),
            base_offset,
            max_index_bytes,
            active,
        )?;
        let max_timestamp_so_far = time_index.last_entry();
        let txn_path = dir.join(file_name(base_offset, TXN_INDEX_FILE_SUFFIX));
        let (txn_index, txn_index_problem) = match TransactionIndex::load(txn_path.clone())? {
            Ok(index) => (index, None),
            Err(why) => (TransactionIndex::empty(txn_path), Some(why)),
        };
        Ok(LogSegment {
            base_offset,
            log_path,
            log,
            size,
            offset_index,
            time_index,
            txn_index,
            txn_index_problem,
            index_interval_bytes: config.index_interval_bytes as u64,
            bytes_since_last_index_entry: 0,
            max_timestamp_so_far,
            rolling_base_ms: (size > 0).then_some(now_ms),
            sealed: !active,
            mapped: OnceCell::new(),
        })
    }

    /// A new empty segment at `base_offset`; stale files of that base are removed first. If it
    /// cannot be made (a full disk), the files it created are removed again.
    pub fn create(
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        now_ms: i64,
    ) -> Result<LogSegment> {
        let paths = [
            LOG_FILE_SUFFIX,
            INDEX_FILE_SUFFIX,
            TIME_INDEX_FILE_SUFFIX,
            TXN_INDEX_FILE_SUFFIX,
        ]
        .map(|suffix| dir.join(file_name(base_offset, suffix)));
        for path in &paths {
            remove_if_present(path)?;
        }
        LogSegment::open_files(dir, base_offset, config, now_ms, true).inspect_err(|_| {
            for path in &paths {
                // The creation error is the one to report; a file left here is an empty
                // segment or an orphan index, which the loader handles.
                let _ = remove_if_present(path);
            }
        })
    }

    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The `.log` file, shared (opened now if the segment is sealed and its descriptor closed):
    /// a holder keeps it readable after the segment is deleted or its descriptor closed.
    pub fn log_file(&self) -> Result<Arc<File>> {
        self.log.get()
    }

    pub(crate) fn offset_index(&self) -> &OffsetIndex {
        &self.offset_index
    }

    pub(crate) fn time_index(&self) -> &TimeIndex {
        &self.time_index
    }

    pub fn txn_index(&self) -> &TransactionIndex {
        &self.txn_index
    }

    pub fn txn_index_mut(&mut self) -> &mut TransactionIndex {
        self.txn_index_problem = None;
        &mut self.txn_index
    }

    /// Kafka's `fetchUpperBoundOffset`: the offset of the first offset index entry at or past
    /// `position`, if any.
    pub fn fetch_upper_bound_offset(&self, position: u32) -> Option<i64> {
        self.offset_index.first_at_or_after_position(position)
    }

    pub fn max_timestamp_so_far(&self) -> TimestampOffset {
        self.max_timestamp_so_far
    }

    /// The segment's largest timestamp for retention: the greatest batch maxTimestamp, or the
    /// `.log`'s modification time when it has none.
    pub fn largest_timestamp(&self) -> Result<i64> {
        if self.max_timestamp_so_far.timestamp >= 0 {
            return Ok(self.max_timestamp_so_far.timestamp);
        }
        let modified = self
            .log
            .get()?
            .metadata()
            .and_then(|m| m.modified())
            .ctx("stat segment", &self.log_path)?;
        Ok(modified
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64))
    }

    /// Kafka's `shouldRoll`, for one batch of `batch_size` bytes ending at `last_offset`.
    pub fn should_roll(
        &self,
        config: &LogConfig,
        batch_size: u32,
        last_offset: i64,
        now_ms: i64,
    ) -> bool {
        let full =
            self.size > 0 && self.size as u64 + batch_size as u64 > config.segment_bytes as u64;
        let aged = self.size > 0
            && self
                .rolling_base_ms
                .is_some_and(|t| now_ms - t > config.segment_ms);
        full || aged
            || self.offset_index.is_full()
            || self.time_index.is_full()
            || !self.offset_index.can_append_offset(last_offset)
    }

    /// Appends one whole batch (`header` parsed from `batch`) at the end of the `.log` and adds
    /// index entries by the `index.interval.bytes` rule: check the bytes appended before this
    /// batch, then count this batch.
    pub fn append(&mut self, batch: &[u8], header: &BatchHeader, now_ms: i64) -> Result<()> {
        // Only the active segment takes appends; a sealed one would be active again already.
        self.unseal()?;
        let position = self.size;
        let last_offset = last_offset_of(header);
        if !self.offset_index.can_append_offset(last_offset)
            || header.base_offset < self.base_offset
        {
            return Err(StorageError::InvalidArgument(format!(
                "batch [{}, {last_offset}] does not fit segment {}",
                header.base_offset,
                self.log_path.display()
            )));
        }
        let new_size = u32::try_from(position as u64 + batch.len() as u64).map_err(|_| {
            StorageError::InvalidArgument(format!("{} would pass 4 GiB", self.log_path.display()))
        })?;
        let log = self.log.get()?;
        if let Err(e) = log.write_all_at(batch, position as u64) {
            // Leave no partial batch behind; the write error is the one to report.
            let _ = log.set_len(position as u64);
            return Err(StorageError::io("append to", &self.log_path, e));
        }
        if position == 0 {
            self.rolling_base_ms = Some(now_ms);
        }
        self.size = new_size;
        self.track_batch(header, position)?;
        self.bytes_since_last_index_entry += batch.len() as u64;
        Ok(())
    }

    /// The max timestamp and index part of an append (shared with recovery).
    fn track_batch(&mut self, header: &BatchHeader, position: u32) -> Result<()> {
        if header.max_timestamp > self.max_timestamp_so_far.timestamp {
            self.max_timestamp_so_far = TimestampOffset {
                timestamp: header.max_timestamp,
                offset: last_offset_of(header),
            };
        }
        if self.bytes_since_last_index_entry > self.index_interval_bytes {
            self.offset_index.append(last_offset_of(header), position)?;
            let max = self.max_timestamp_so_far;
            self.time_index
                .maybe_append(max.timestamp, max.offset, false)?;
            self.bytes_since_last_index_entry = 0;
        }
        Ok(())
    }

    /// What an append may change, to undo it with `rollback`.
    pub(crate) fn mark(&self) -> SegmentMark {
        SegmentMark {
            size: self.size,
            offset_entries: self.offset_index.entries(),
            time_entries: self.time_index.entries(),
            bytes_since_last_index_entry: self.bytes_since_last_index_entry,
            max_timestamp_so_far: self.max_timestamp_so_far,
            rolling_base_ms: self.rolling_base_ms,
            sealed: self.sealed,
            txn_entries: self.txn_index.entries().len(),
        }
    }

    /// Undoes the appends (and a roll's `on_become_inactive`) since `mark`: the `.log` cut
    /// back to its size then, the index entries added since dropped, an active segment's
    /// indexes preallocated again. Needs no free space.
    pub(crate) fn rollback(&mut self, mark: &SegmentMark) -> Result<()> {
        #[cfg(test)]
        if FAIL_NEXT_ROLLBACK.take() {
            return Err(StorageError::io(
                "roll back",
                &self.log_path,
                std::io::Error::other("a failure the test asked for"),
            ));
        }
        self.truncate_log(mark.size)?;
        self.offset_index.truncate_to_entries(mark.offset_entries)?;
        self.time_index.truncate_to_entries(mark.time_entries)?;
        self.txn_index.truncate_to_entries(mark.txn_entries)?;
        if !mark.sealed {
            // A roll trimmed them; if they cannot grow back they are full, and the next
            // append rolls again.
            self.offset_index.try_resize_to_max();
            self.time_index.try_resize_to_max();
        }
        self.bytes_since_last_index_entry = mark.bytes_since_last_index_entry;
        self.max_timestamp_so_far = mark.max_timestamp_so_far;
        self.rolling_base_ms = mark.rolling_base_ms;
        if mark.sealed {
            self.seal();
        }
        Ok(())
    }

    /// The batches from `position` to the end of the whole batches (the walk holds the `.log`
    /// open while it runs).
    pub fn batches_from(&self, position: u32) -> Result<FileBatches<'_>> {
        Ok(FileBatches::shared(
            self.log.get()?,
            &self.log_path,
            position.min(self.size),
            self.size,
        ))
    }

    /// Seals the segment: it is no longer the active one, so its `.log` may be mapped, its
    /// index descriptors are closed and its `.log` descriptor falls under the open bound.
    pub(crate) fn seal(&mut self) {
        self.sealed = true;
        self.offset_index.close_file();
        self.time_index.close_file();
        self.log.unpin();
    }

    /// Drops the map and unseals, opening the files for writing: to be called before anything
    /// that may change the `.log`'s length (see `mapped.rs`).
    fn unseal(&mut self) -> Result<()> {
        self.sealed = false;
        self.mapped.take();
        self.log.pin()?;
        self.offset_index.open_file()?;
        self.time_index.open_file()
    }

    /// Whether the segment holds its `.log` descriptor now (tests of the open bound).
    #[cfg(test)]
    pub(crate) fn log_is_open(&self) -> bool {
        self.log.if_open().is_some()
    }

    /// Whether its indexes hold a descriptor now.
    #[cfg(test)]
    pub(crate) fn indexes_are_open(&self) -> bool {
        self.offset_index.file().file().is_some() || self.time_index.file().file().is_some()
    }

    /// A sealed segment's `.log` bytes `[0, size)`, mapped on first use; `None` for the active
    /// segment, or when mapping is off or failed.
    fn mapped_log(&self) -> Option<&[u8]> {
        if !self.sealed || !mapping_enabled() {
            return None;
        }
        self.mapped
            .get_or_init(|| MappedLog::map(&*self.log.get().ok()?, self.size))
            .as_ref()
            .and_then(|m| m.bytes().get(..self.size as usize))
    }

    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        self.mapped.get().is_some_and(|m| m.is_some())
    }

    /// Kafka's `translateOffset`: the first batch whose lastOffset >= `offset`, scanning from
    /// the index entry at or below it (or from `starting_position` if that is further).
    pub fn translate_offset(
        &self,
        offset: i64,
        starting_position: u32,
    ) -> Result<Option<FileBatch>> {
        let (floor, next) = self.offset_index.lookup_with_next(offset);
        let from = floor.position.max(starting_position);
        // The next entry's batch ends above `offset`: the walk stops at its header or before,
        // so one read up to there usually does (the rest of the walk reads on if not).
        let read_ahead = next.map_or(SCAN_CHUNK, |next| {
            next.position.saturating_sub(from) as usize + RECORD_BATCH_OVERHEAD
        });
        let batches = match self.mapped_log() {
            // A sealed segment: its headers straight from the map, no pread and no descriptor
            // (the map holds the file; the open bound may have closed the segment's descriptor).
            // (Prefetching the range up to `read_ahead`, every line or one line a page,
            // measured no faster: docs/storage.md.)
            Some(bytes) => {
                FileBatches::over_map(bytes, &self.log_path, from.min(self.size), self.size)
            }
            None => self.batches_from(from)?.read_ahead(read_ahead),
        };
        for batch in batches {
            let batch = batch?;
            if batch.last_offset() >= offset {
                return Ok(Some(batch));
            }
        }
        Ok(None)
    }

    /// Kafka's `LogSegment.read`: a slice from the batch holding `start_offset`, of at most
    /// `max_size` bytes (at least that batch when `min_one_message`), ending by `max_position`.
    /// `None` when no batch here reaches `start_offset`.
    pub fn read(
        &self,
        start_offset: i64,
        max_size: u32,
        max_position: u32,
        min_one_message: bool,
    ) -> Result<Option<FetchSpan>> {
        let Some(first) = self.translate_offset(start_offset, 0)? else {
            return Ok(None);
        };
        let metadata = LogOffsetMetadata {
            message_offset: start_offset,
            segment_base_offset: self.base_offset,
            relative_position_in_segment: first.position,
        };
        let adjusted_max_size = if min_one_message {
            max_size.max(first.size())
        } else {
            max_size
        };
        if adjusted_max_size == 0 {
            return Ok(Some(FetchSpan::empty(metadata, self.base_offset)));
        }
        let size = max_position
            .saturating_sub(first.position)
            .min(adjusted_max_size);
        Ok(Some(FetchSpan {
            fetch_offset_metadata: metadata,
            segment: self.base_offset,
            position: first.position,
            size,
            first_entry_incomplete: adjusted_max_size < first.size(),
        }))
    }

    /// Up to `size` bytes of the `.log` from `position` (fewer if the file is shorter now).
    pub fn read_bytes(&self, position: u32, size: u32) -> Result<Vec<u8>> {
        let end = (position as u64 + size as u64).min(self.size as u64);
        let mut buf = vec![0u8; end.saturating_sub(position as u64) as usize];
        self.log
            .get()?
            .read_exact_at(&mut buf, position as u64)
            .ctx("read", &self.log_path)?;
        Ok(buf)
    }

    /// Walks the batches from the last offset index entry: the offset after the last whole
    /// batch (the base offset if none) and the position where the whole batches end. A damaged
    /// header ends the walk like a partial batch; failing to open the file is an error.
    pub fn scan_tail(&self) -> Result<(i64, u32)> {
        let from = self
            .offset_index
            .lookup(self.offset_index.last_offset())
            .position;
        let (mut next, mut end) = (self.base_offset, from.min(self.size));
        for batch in self.batches_from(from)?.map_while(|b| b.ok()) {
            next = batch.last_offset().saturating_add(1);
            end = batch.end();
        }
        Ok((next, end))
    }

    /// The offset after the last batch, or the base offset when empty (Kafka's `readNextOffset`).
    pub fn read_next_offset(&self) -> Result<i64> {
        let from = self
            .offset_index
            .lookup(self.offset_index.last_offset())
            .position;
        let mut next = self.base_offset;
        for batch in self.batches_from(from)? {
            next = batch?.last_offset().saturating_add(1);
        }
        Ok(next)
    }

    /// Kafka's `onBecomeInactiveSegment` (and its close): a last time index entry for the max
    /// timestamp, both indexes cut to their entries.
    pub fn on_become_inactive(&mut self) -> Result<()> {
        let max = self.max_timestamp_so_far;
        self.time_index
            .maybe_append(max.timestamp, max.offset, true)?;
        self.offset_index.trim()?;
        self.time_index.trim()?;
        self.seal();
        Ok(())
    }

    /// Gives the indexes their preallocated size again (the segment became the active one).
    pub fn resize_indexes_to_max(&mut self) -> Result<()> {
        self.unseal()?;
        self.offset_index.resize_to_max()?;
        self.time_index.resize_to_max()
    }

    /// `resize_indexes_to_max` where preallocating is only an optimisation (opening): an index
    /// that cannot grow keeps its length. Returns the first error done without; failing to
    /// open the files for writing is an error.
    pub fn try_resize_indexes_to_max(&mut self) -> Result<Option<StorageError>> {
        self.unseal()?;
        let offset = self.offset_index.try_resize_to_max();
        let time = self.time_index.try_resize_to_max();
        Ok(offset.or(time))
    }

    /// Kafka's `LogSegment.truncateTo`: drops the batch holding `offset` and everything after;
    /// returns the bytes cut. The indexes get their preallocated size again.
    pub fn truncate_to(&mut self, offset: i64) -> Result<u32> {
        let mapping = self.translate_offset(offset, 0)?;
        self.unseal()?;
        self.offset_index.truncate_to(offset)?;
        self.time_index.truncate_to(offset)?;
        self.txn_index.truncate_to(offset)?;
        self.resize_indexes_to_max()?;
        let cut = match mapping {
            Some(batch) => self.truncate_log(batch.position)?,
            None => 0,
        };
        if self.size == 0 {
            self.rolling_base_ms = None;
        }
        self.bytes_since_last_index_entry = 0;
        if self.max_timestamp_so_far.timestamp >= 0 {
            self.max_timestamp_so_far = self.read_largest_timestamp()?;
        }
        Ok(cut)
    }

    /// Cuts the `.log` at `position`; returns the bytes cut.
    pub(crate) fn truncate_log(&mut self, position: u32) -> Result<u32> {
        self.unseal()?;
        let log = self.log.get()?;
        let len = log.metadata().ctx("stat segment", &self.log_path)?.len();
        if len > position as u64 {
            log.set_len(position as u64)
                .ctx("truncate", &self.log_path)?;
        }
        let cut = self.size.saturating_sub(position);
        self.size = self.size.min(position);
        Ok(cut)
    }

    /// The max timestamp from the last time index entry on (Kafka's `readLargestTimestamp`).
    fn read_largest_timestamp(&self) -> Result<TimestampOffset> {
        let last = self.time_index.last_entry();
        let mut max = last;
        for batch in self.batches_from(self.offset_index.lookup(last.offset).position)? {
            let batch = batch?;
            if batch.header.max_timestamp > max.timestamp {
                max = TimestampOffset {
                    timestamp: batch.header.max_timestamp,
                    offset: batch.last_offset(),
                };
            }
        }
        Ok(max)
    }

    /// The clean-shutdown check of the indexes; the reason when one fails.
    pub fn sanity_check(&self) -> std::result::Result<(), String> {
        self.offset_index
            .sanity_check(self.size)
            .map_err(|why| format!("offset index: {why}"))?;
        self.time_index
            .sanity_check()
            .map_err(|why| format!("time index: {why}"))?;
        match &self.txn_index_problem {
            Some(why) => Err(format!("transaction index: {why}")),
            None => Ok(()),
        }
    }

    /// The files a flush must fsync: `.log`, `.index`, `.timeindex`, with the active segment's
    /// descriptors. A sealed segment's are fsynced by path (fsync applies to the file, and a new
    /// descriptor still reports a writeback error no one has seen): a flush queued behind a
    /// burst of rolls holds no descriptor of the segments it covers.
    /// The segment's files (the `.txnindex` may not exist), with the descriptors it holds.
    pub fn files(&self) -> [(Option<Arc<File>>, PathBuf); 4] {
        let log = if self.sealed {
            None
        } else {
            self.log.if_open()
        };
        [
            (log, self.log_path.clone()),
            (
                self.offset_index.file().file().cloned(),
                self.offset_index.file().path().to_path_buf(),
            ),
            (
                self.time_index.file().file().cloned(),
                self.time_index.file().path().to_path_buf(),
            ),
            (None, self.txn_index.path().to_path_buf()),
        ]
    }

    /// Deletes the segment's files.
    pub fn delete(self) -> Result<()> {
        for path in [
            self.log_path.clone(),
            self.offset_index.file().path().to_path_buf(),
            self.time_index.file().path().to_path_buf(),
            self.txn_index.path().to_path_buf(),
        ] {
            remove_if_present(&path)?;
        }
        Ok(())
    }
}

/// Whether sealed segments are mapped: yes unless `FERROLOG_NO_MMAP` is set to something other
/// than `0` (a switch for measuring, and for platforms where maps misbehave).
fn mapping_enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    #[cfg(test)]
    if test_read_mode() == TestReadMode::Pread {
        return false;
    }
    *ENABLED.get_or_init(|| std::env::var_os("FERROLOG_NO_MMAP").is_none_or(|v| v == "0"))
}

/// How tests on this thread make sealed segments read (to compare both ways in one process).
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TestReadMode {
    Normal,
    Pread,
}

#[cfg(test)]
thread_local! {
    static TEST_READ_MODE: std::cell::Cell<TestReadMode> =
        const { std::cell::Cell::new(TestReadMode::Normal) };
}

#[cfg(test)]
pub(crate) fn set_test_read_mode(mode: TestReadMode) {
    TEST_READ_MODE.set(mode);
}

#[cfg(test)]
fn test_read_mode() -> TestReadMode {
    TEST_READ_MODE.get()
}

#[cfg(test)]
thread_local! {
    static FAIL_NEXT_ROLLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes the next `rollback` on this thread fail (the one failure a real full disk cannot
/// cause: undoing an append needs no space).
#[cfg(test)]
pub(crate) fn fail_next_rollback() {
    FAIL_NEXT_ROLLBACK.set(true);
}

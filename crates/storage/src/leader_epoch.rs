//! The leader epoch cache (Kafka's `LeaderEpochFileCache`): for each leader epoch, the first
//! offset written in it. Persisted as `leader-epoch-checkpoint` in the partition directory:
//!
//! ```text
//! 0                      version
//! 2                      number of entries
//! 0 0                    "<epoch> <startOffset>", epochs and offsets increasing
//! 3 1250
//! ```
//!
//! A rewrite goes to `leader-epoch-checkpoint.tmp`, fsync, rename over the file, fsync the
//! directory ([`CheckpointWrite`]). Truncations and the loader's changes rewrite it at once. The
//! epochs that appends assign (`assign_deferred`) are only remembered: the log's next flush writes
//! them (log/flush.rs), on the thread that runs the flush, after the segments' fsyncs and before
//! the recovery point moves, keeping only the entries that start below the offset the flush made
//! durable. So the file never names an epoch start that a crash can take from the log, and an
//! entry it lacks starts at or above the recovery point, where recovery reads every batch and
//! assigns its epoch again (log/loader.rs). Kafka writes the file in `assign` on its request
//! threads; ferrolog appends on the event loop, where two fsyncs per partition becoming writable
//! cost seconds for a large topic. A file that does not parse is rebuilt from the batches by the
//! loader.
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{IoContext, Result, StorageError};
use crate::index::FILE_MODE;

pub const LEADER_EPOCH_CHECKPOINT_FILE: &str = "leader-epoch-checkpoint";
const TMP_SUFFIX: &str = ".tmp";
const CHECKPOINT_VERSION: i32 = 0;
/// Kafka's `UNDEFINED_EPOCH` and `UNDEFINED_EPOCH_OFFSET`.
pub const UNDEFINED_EPOCH: i32 = -1;
pub const UNDEFINED_EPOCH_OFFSET: i64 = -1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEntry {
    pub epoch: i32,
    pub start_offset: i64,
}

#[derive(Debug)]
pub struct LeaderEpochFileCache {
    path: PathBuf,
    /// Epochs and start offsets strictly increasing.
    entries: Vec<EpochEntry>,
    /// Counts the changes to `entries`: the version they are at.
    version: u64,
    /// What the file holds, shared with the writes in flight on other threads. Its lock also
    /// keeps two writes of the file from running at once.
    on_disk: Arc<Mutex<OnDisk>>,
}

/// The version of the entries the file was last written from, and whether it holds all of them
/// (not when a flush wrote the entries below its offset only, a rewrite failed after its rename,
/// or the file did not parse). The file is behind unless it holds all of the current version.
#[derive(Debug, Clone, Copy)]
struct OnDisk {
    version: u64,
    whole: bool,
}

/// One rewrite of the checkpoint, runnable on any thread without the cache (`Send`). A write
/// whose version is older than the one the file holds by then does nothing: a later change was
/// written first.
#[derive(Debug)]
pub struct CheckpointWrite {
    path: PathBuf,
    entries: Vec<EpochEntry>,
    /// The cache's version they were taken from, and whether they are all of it (not for a
    /// flush's prefix).
    version: u64,
    whole: bool,
    on_disk: Arc<Mutex<OnDisk>>,
}

impl LeaderEpochFileCache {
    /// Loads `dir/leader-epoch-checkpoint` (none yet, or an empty file: an empty cache, as in
    /// Kafka). A malformed file gives an empty cache and the reason: the loader then rebuilds the
    /// epochs from the batches and reports it.
    pub fn load(dir: &Path) -> Result<(LeaderEpochFileCache, Option<String>)> {
        let path = dir.join(LEADER_EPOCH_CHECKPOINT_FILE);
        let mut cache = LeaderEpochFileCache {
            path,
            entries: Vec::new(),
            version: 0,
            on_disk: Arc::new(Mutex::new(OnDisk {
                version: 0,
                whole: true,
            })),
        };
        let text = match fs::read_to_string(&cache.path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((cache, None)),
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                cache.set_on_disk(false);
                return Ok((cache, Some(e.to_string())));
            }
            Err(e) => return Err(StorageError::io("read", &cache.path, e)),
        };
        match parse_checkpoint(&text) {
            Ok(entries) => {
                for &entry in &entries {
                    cache.insert(entry);
                }
                // What was read is what the file holds, whatever `insert` bumped.
                cache.set_on_disk(true);
                Ok((cache, None))
            }
            Err(why) => {
                cache.set_on_disk(false);
                Ok((cache, Some(why)))
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn entries(&self) -> &[EpochEntry] {
        &self.entries
    }

    pub fn latest_epoch(&self) -> Option<i32> {
        self.entries.last().map(|e| e.epoch)
    }

    pub fn earliest_entry(&self) -> Option<EpochEntry> {
        self.entries.first().copied()
    }

    /// Records that `epoch` starts at `start_offset`, dropping entries it contradicts (an epoch
    /// >= it or a start offset >= its); writes the file if anything changed.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) -> Result<bool> {
        if epoch < 0 || start_offset < 0 {
            return Err(StorageError::InvalidArgument(format!(
                "leader epoch entry ({epoch}, {start_offset}) has a negative field"
            )));
        }
        let changed = self.insert(EpochEntry {
            epoch,
            start_offset,
        });
        if changed {
            self.write()?;
        }
        Ok(changed)
    }

    /// `assign` without the write: the change waits for [`Self::flush_write`] (see the module
    /// comment). Returns whether anything changed.
    pub fn assign_deferred(&mut self, epoch: i32, start_offset: i64) -> bool {
        epoch >= 0
            && start_offset >= 0
            && self.insert(EpochEntry {
                epoch,
                start_offset,
            })
    }

    fn insert(&mut self, entry: EpochEntry) -> bool {
        let needed = self
            .entries
            .last()
            .is_none_or(|last| entry.epoch != last.epoch || entry.start_offset < last.start_offset);
        if needed {
            self.entries
                .retain(|e| e.epoch < entry.epoch && e.start_offset < entry.start_offset);
            self.entries.push(entry);
            self.version += 1;
        }
        needed
    }

    /// Removes the entries starting at or after `end_offset` (the log was truncated there).
    pub fn truncate_from_end(&mut self, end_offset: i64) -> Result<()> {
        if end_offset >= 0
            && self
                .entries
                .last()
                .is_some_and(|e| e.start_offset >= end_offset)
        {
            self.entries.retain(|e| e.start_offset < end_offset);
            self.version += 1;
            self.write()?;
        }
        Ok(())
    }

    /// The log now starts at `start_offset`: entries starting at or before it are replaced by
    /// one for the last of them, moved to `start_offset`.
    pub fn truncate_from_start(&mut self, start_offset: i64) -> Result<()> {
        let removed = self
            .entries
            .partition_point(|e| e.start_offset <= start_offset);
        if removed == 0 {
            return Ok(());
        }
        let epoch = self.entries[removed - 1].epoch;
        self.entries.drain(..removed);
        self.entries.insert(
            0,
            EpochEntry {
                epoch,
                start_offset,
            },
        );
        self.version += 1;
        self.write()
    }

    /// Drops every entry.
    pub fn clear(&mut self) -> Result<()> {
        if !self.entries.is_empty() {
            self.entries.clear();
            self.version += 1;
            self.write()?;
        }
        Ok(())
    }

    /// Kafka's `endOffsetFor`: the largest epoch <= `requested` and the offset where the epoch
    /// after it starts (the LEO for the latest epoch); (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    /// when unknown.
    pub fn end_offset_for(&self, requested: i32, log_end_offset: i64) -> (i32, i64) {
        if requested == UNDEFINED_EPOCH {
            return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        }
        if self.latest_epoch() == Some(requested) {
            return (requested, log_end_offset);
        }
        let higher = self.entries.partition_point(|e| e.epoch <= requested);
        let Some(next) = self.entries.get(higher) else {
            return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        };
        match higher.checked_sub(1).map(|i| self.entries[i]) {
            // Older than any known epoch: the start of the first epoch after it.
            None => (requested, next.start_offset),
            Some(floor) => (floor.epoch, next.start_offset),
        }
    }

    /// The epoch of the entry with the largest start offset <= `offset`.
    pub fn epoch_for_offset(&self, offset: i64) -> Option<i32> {
        let n = self.entries.partition_point(|e| e.start_offset <= offset);
        n.checked_sub(1).map(|i| self.entries[i].epoch)
    }

    /// Whether the file may not say what the cache says (a change not written yet, or a
    /// rewrite that failed).
    pub fn is_behind(&self) -> bool {
        let on_disk = *lock(&self.on_disk);
        !(on_disk.whole && on_disk.version == self.version)
    }

    /// Rewrites the file if it is behind.
    pub fn write_if_behind(&mut self) -> Result<()> {
        if self.is_behind() {
            self.write()?;
        }
        Ok(())
    }

    /// The write a flush that made the log durable below `durable_to` runs after its fsyncs
    /// (`None` when the file is up to date): the entries starting below it.
    pub fn flush_write(&self, durable_to: i64) -> Option<CheckpointWrite> {
        if !self.is_behind() {
            return None;
        }
        let below = self
            .entries
            .partition_point(|e| e.start_offset < durable_to);
        Some(CheckpointWrite {
            path: self.path.clone(),
            entries: self.entries[..below].to_vec(),
            version: self.version,
            whole: below == self.entries.len(),
            on_disk: Arc::clone(&self.on_disk),
        })
    }

    /// Puts back `entries` (taken before an append that failed). The file is written by the
    /// next flush if it then differs (a flush inside the failed append may have written them).
    pub fn restore(&mut self, entries: Vec<EpochEntry>) {
        if entries != self.entries {
            self.entries = entries;
            self.version += 1;
        }
    }

    fn set_on_disk(&self, whole: bool) {
        *lock(&self.on_disk) = OnDisk {
            version: self.version,
            whole,
        };
    }

    fn write(&mut self) -> Result<()> {
        CheckpointWrite {
            path: self.path.clone(),
            entries: self.entries.clone(),
            version: self.version,
            whole: true,
            on_disk: Arc::clone(&self.on_disk),
        }
        .run()
    }
}

fn lock(on_disk: &Mutex<OnDisk>) -> std::sync::MutexGuard<'_, OnDisk> {
    on_disk
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl CheckpointWrite {
    /// Writes the file, unless it was written from a later version already (or from this one,
    /// whole).
    pub fn run(self) -> Result<()> {
        let mut on_disk = lock(&self.on_disk);
        if on_disk.version > self.version || (on_disk.version == self.version && on_disk.whole) {
            return Ok(());
        }
        let mut renamed = false;
        let written = self.write_file(&mut renamed);
        if written.is_ok() || renamed {
            *on_disk = OnDisk {
                version: self.version,
                whole: self.whole && written.is_ok(),
            };
        }
        written
    }

    fn write_file(&self, renamed: &mut bool) -> Result<()> {
        let tmp = self
            .path
            .with_file_name(format!("{LEADER_EPOCH_CHECKPOINT_FILE}{TMP_SUFFIX}"));
        let mut text = format!("{CHECKPOINT_VERSION}\n{}\n", self.entries.len());
        for e in &self.entries {
            text.push_str(&format!("{} {}\n", e.epoch, e.start_offset));
        }
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(FILE_MODE)
            .open(&tmp)
            .ctx("create", &tmp)?;
        let written = file
            .write_all(text.as_bytes())
            .ctx("write", &tmp)
            .and_then(|()| file.sync_all().ctx("fsync", &tmp));
        if let Err(e) = written {
            // Give its space back (a full disk); the write error is the one to report.
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        fs::rename(&tmp, &self.path).ctx("rename into place", &self.path)?;
        *renamed = true;
        sync_dir(self.path.parent().unwrap_or(Path::new(".")))
    }
}

/// fsyncs a directory so that a rename or a new file in it survives a crash.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .ctx("fsync directory", dir)
}

fn parse_checkpoint(text: &str) -> std::result::Result<Vec<EpochEntry>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut lines = text.lines();
    let version = lines.next().ok_or("the version line is missing")?;
    if version.trim().parse::<i32>() != Ok(CHECKPOINT_VERSION) {
        return Err(format!("unsupported version line {version:?}"));
    }
    let count_line = lines.next().ok_or("the entry count is missing")?;
    let count: usize = count_line
        .trim()
        .parse()
        .map_err(|_| format!("bad entry count {count_line:?}"))?;
    let mut entries = Vec::with_capacity(count.min(1024));
    for (n, line) in lines.by_ref().take(count).enumerate() {
        let mut fields = line.split_whitespace();
        let entry = match (fields.next(), fields.next(), fields.next()) {
            (Some(epoch), Some(offset), None) => epoch.parse().ok().zip(offset.parse().ok()),
            _ => None,
        };
        let (epoch, start_offset) =
            entry.ok_or_else(|| format!("malformed entry {} {line:?}", n + 1))?;
        entries.push(EpochEntry {
            epoch,
            start_offset,
        });
    }
    if entries.len() != count {
        return Err(format!(
            "{count} entries announced, {} found",
            entries.len()
        ));
    }
    if lines.any(|l| !l.trim().is_empty()) {
        return Err(format!("more than the {count} entries announced"));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    fn entries(cache: &LeaderEpochFileCache) -> Vec<(i32, i64)> {
        cache
            .entries()
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect()
    }

    #[test]
    fn checkpoint_round_trips_in_kafkas_text_format() {
        let dir = TempDir::new().unwrap();
        let mut cache = LeaderEpochFileCache::load(dir.path()).unwrap().0;
        cache.assign(0, 0).unwrap();
        cache.assign(3, 1250).unwrap();
        let text = fs::read_to_string(dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE)).unwrap();
        assert_eq!(text, "0\n2\n0 0\n3 1250\n");
        assert!(!dir.path().join("leader-epoch-checkpoint.tmp").exists());
        let again = LeaderEpochFileCache::load(dir.path()).unwrap().0;
        assert_eq!(entries(&again), [(0, 0), (3, 1250)]);
        assert_eq!(again.latest_epoch(), Some(3));
    }

    #[test]
    fn assigning_the_latest_epoch_again_changes_nothing() {
        let dir = TempDir::new().unwrap();
        let mut cache = LeaderEpochFileCache::load(dir.path()).unwrap().0;
        assert!(cache.assign(1, 10).unwrap());
        assert!(!cache.assign(1, 20).unwrap());
        assert_eq!(entries(&cache), [(1, 10)]);
    }

    #[test]
    fn a_contradicting_entry_replaces_later_ones() {
        let dir = TempDir::new().unwrap();
        let mut cache = LeaderEpochFileCache::load(dir.path()).unwrap().0;
        cache.assign(1, 10).unwrap();
        cache.assign(2, 20).unwrap();
        cache.assign(3, 15).unwrap();
        assert_eq!(entries(&cache), [(1, 10), (3, 15)]);
    }

    #[test]
    fn truncation_from_the_end_drops_epochs_starting_at_or_after_it() {
        let dir = TempDir::new().unwrap();
        let mut cache = LeaderEpochFileCache::load(dir.path()).unwrap().0;
        cache.assign(1, 10).unwrap();
        cache.assign(2, 20).unwrap();
        cache.assign(4, 30).unwrap();
        cache.truncate_from_end(20).unwrap();
        assert_eq!(entries(&cache), [(1, 10)]);
        assert_eq!(
            entries(&LeaderEpochFileCache::load(dir.path()).unwrap().0),
            [(1, 10)]
        );
    }

    #[test]
    fn truncation_from_the_start_moves_the_first_epoch() {
        let dir = TempDir::new().unwrap();
        let mut cache = LeaderEpochFileCache::load(dir.path()).unwrap().0;
        cache.assign(1, 10).unwrap();
        cache.assign(2, 20).unwrap();
        cache.assign(4, 30).unwrap();
        cache.truncate_from_start(25).unwrap();
        assert_eq!(entries(&cache), [(2, 25), (4, 30)]);
        cache.truncate_from_start(5).unwrap();
        assert_eq!(entries(&cache), [(2, 25), (4, 30)]);
    }

    #[test]
    fn end_offset_for_follows_kafka() {
        let dir = TempDir::new().unwrap();
        let mut cache = LeaderEpochFileCache::load(dir.path()).unwrap().0;
        cache.assign(2, 10).unwrap();
        cache.assign(4, 20).unwrap();
        cache.assign(6, 30).unwrap();
        assert_eq!(cache.end_offset_for(6, 42), (6, 42));
        assert_eq!(cache.end_offset_for(4, 42), (4, 30));
        assert_eq!(cache.end_offset_for(5, 42), (4, 30));
        assert_eq!(cache.end_offset_for(1, 42), (1, 10));
        assert_eq!(
            cache.end_offset_for(7, 42),
            (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        );
        assert_eq!(
            cache.end_offset_for(UNDEFINED_EPOCH, 42),
            (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        );
        assert_eq!(cache.epoch_for_offset(25), Some(4));
        assert_eq!(cache.epoch_for_offset(5), None);
    }

    #[test]
    fn deferred_epochs_wait_for_a_flush_write_of_the_entries_below_its_offset() {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE);
        let mut cache = LeaderEpochFileCache::load(dir.path()).unwrap().0;
        assert!(cache.assign_deferred(1, 0));
        assert!(cache.assign_deferred(2, 10));
        assert!(!cache.assign_deferred(2, 15));
        assert!(!path.exists());
        assert!(cache.is_behind());
        cache.flush_write(10).unwrap().run().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "0\n1\n1 0\n");
        assert!(cache.is_behind(), "part of the entries only");
        cache.flush_write(20).unwrap().run().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "0\n2\n1 0\n2 10\n");
        assert!(!cache.is_behind());
        assert!(cache.flush_write(20).is_none());
    }

    #[test]
    fn a_flush_write_taken_before_a_truncation_does_not_undo_it() {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE);
        let mut cache = LeaderEpochFileCache::load(dir.path()).unwrap().0;
        cache.assign_deferred(1, 0);
        cache.assign_deferred(2, 10);
        let stale = cache.flush_write(20).unwrap();
        cache.truncate_from_end(10).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "0\n1\n1 0\n");
        stale.run().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "0\n1\n1 0\n");
        assert!(!cache.is_behind());
    }

    #[test]
    fn a_malformed_checkpoint_loads_empty_with_the_reason() {
        let dir = TempDir::new().unwrap();
        fs::write(
            dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE),
            "0\n2\n1 10\n",
        )
        .unwrap();
        let (cache, problem) = LeaderEpochFileCache::load(dir.path()).unwrap();
        assert!(cache.entries().is_empty());
        assert_eq!(problem.as_deref(), Some("2 entries announced, 1 found"));
        fs::write(dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE), "").unwrap();
        assert_eq!(
            LeaderEpochFileCache::load(dir.path()).unwrap().1,
            None,
            "an empty file is an empty cache"
        );
    }
}

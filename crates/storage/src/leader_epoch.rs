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
//! Every change rewrites the file: to `leader-epoch-checkpoint.tmp`, fsync, rename over the
//! file, fsync the directory. When a rewrite fails (a full disk) the cache remembers that the
//! file is behind, and the log writes it before its next append (`write_if_behind`). A file that does not parse is rebuilt from the batches by the
//! loader (log/loader.rs).
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

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
    /// What the file holds: the entries last written or read, `None` when unknown (a rewrite
    /// failed after its rename, or the file did not parse). The file is behind when this is
    /// not `entries`.
    on_disk: Option<Vec<EpochEntry>>,
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
            on_disk: Some(Vec::new()),
        };
        let text = match fs::read_to_string(&cache.path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((cache, None)),
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                cache.on_disk = None;
                return Ok((cache, Some(e.to_string())));
            }
            Err(e) => return Err(StorageError::io("read", &cache.path, e)),
        };
        match parse_checkpoint(&text) {
            Ok(entries) => {
                for &entry in &entries {
                    cache.insert(entry);
                }
                cache.on_disk = Some(entries);
                Ok((cache, None))
            }
            Err(why) => {
                cache.on_disk = None;
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

    fn insert(&mut self, entry: EpochEntry) -> bool {
        let needed = self
            .entries
            .last()
            .is_none_or(|last| entry.epoch != last.epoch || entry.start_offset < last.start_offset);
        if needed {
            self.entries
                .retain(|e| e.epoch < entry.epoch && e.start_offset < entry.start_offset);
            self.entries.push(entry);
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
        self.write()
    }

    /// Drops every entry.
    pub fn clear(&mut self) -> Result<()> {
        if !self.entries.is_empty() {
            self.entries.clear();
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

    /// Whether the file may not say what the cache says (a rewrite failed).
    pub fn is_behind(&self) -> bool {
        self.on_disk.as_ref() != Some(&self.entries)
    }

    /// Rewrites the file if it is behind.
    pub fn write_if_behind(&mut self) -> Result<()> {
        if self.is_behind() {
            self.write()?;
        }
        Ok(())
    }

    /// Puts back `entries` (taken before an append that failed), rewriting the file unless it
    /// holds them already (a rewrite that failed before its rename left it as it was).
    pub fn restore(&mut self, entries: Vec<EpochEntry>) -> Result<()> {
        self.entries = entries;
        self.write_if_behind()
    }

    fn write(&mut self) -> Result<()> {
        let mut renamed = false;
        let written = self.write_file(&mut renamed);
        if written.is_ok() {
            self.on_disk = Some(self.entries.clone());
        } else if renamed {
            self.on_disk = None;
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

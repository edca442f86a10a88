//! A segment's `.log` descriptor, opened only while it is needed (ferrolog issue #11: a start
//! must never need one open descriptor per partition file at once).
//!
//! The ACTIVE segment's `.log` is pinned: opened read-write when the segment becomes active and
//! kept open while it is (appends, truncation). A SEALED segment's `.log` is opened read-only by
//! the first read that wants it and may be closed again by the process-wide bound on open
//! sealed segments ([`set_max_open_segments`], default [`DEFAULT_MAX_OPEN_SEGMENTS`]): the
//! least recently read one is closed when one more is opened past the bound. So opening a log
//! of N sealed segments opens one descriptor (its active `.log`; the indexes hold none, see
//! index/mod.rs), whatever N is, and reading every segment of every log holds at most the bound.
//!
//! Closing never pulls a file from under a reader: a read takes an `Arc<File>` clone
//! ([`LogFile::get`]) and the bound only drops the segment's own clone, so a walk, a `pread`, a
//! map (which holds the inode itself) or a zero-copy transfer in flight (a `FileRecords` holds
//! the `Arc<File>` until its `sendfile` is done) keeps its descriptor until it lets go; the next
//! read of the segment opens the file again. Descriptors borrowed that way are not counted by
//! the bound; the bound counts what the segments themselves hold.
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use crate::error::{IoContext, Result};
use crate::index::open_read_write;

/// The default bound on sealed segments whose `.log` is open at once, per engine per process:
/// a thousand descriptors fit Debian's default soft limit (1024) with the broker's sockets once
/// the soft limit is raised to the hard one, and a thousand recently read segments cover the
/// tail reads of a thousand partitions with no reopen.
pub const DEFAULT_MAX_OPEN_SEGMENTS: usize = 1000;

static MAX_OPEN: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_OPEN_SEGMENTS);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Sets the bound on sealed segments with an open `.log` (at least 1); segments over a lowered
/// bound are closed at once.
pub fn set_max_open_segments(max: usize) {
    MAX_OPEN.store(max.max(1), Ordering::Relaxed);
    let victims = lru().shrink();
    close_all(victims);
}

pub fn max_open_segments() -> usize {
    MAX_OPEN.load(Ordering::Relaxed)
}

/// How many sealed segments hold their `.log` open now (in the bound's accounting).
pub fn open_sealed_segments() -> usize {
    lru().by_id.len()
}

/// The shared state of one `.log`; [`LogFile`] is its owner's handle.
#[derive(Debug)]
struct Inner {
    id: u64,
    path: PathBuf,
    slot: Mutex<Slot>,
}

#[derive(Debug, Default)]
struct Slot {
    file: Option<Arc<File>>,
    /// The file is open read-write (the segment is or was active).
    writable: bool,
    /// The segment is active: its file stays open and is not in the bound.
    pinned: bool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        lru().remove(self.id);
    }
}

#[derive(Debug)]
pub(crate) struct LogFile {
    inner: Arc<Inner>,
}

impl LogFile {
    /// A handle with nothing open (a sealed segment, opened by its first read).
    pub(crate) fn closed(path: &Path) -> LogFile {
        LogFile {
            inner: Arc::new(Inner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                path: path.to_path_buf(),
                slot: Mutex::new(Slot::default()),
            }),
        }
    }

    fn slot(&self) -> MutexGuard<'_, Slot> {
        lock(&self.inner.slot)
    }

    /// The open file: the pinned one, the sealed one still open, or a new read-only open (which
    /// may close the least recently read other sealed segment).
    pub(crate) fn get(&self) -> Result<Arc<File>> {
        let mut slot = self.slot();
        if let Some(file) = &slot.file {
            let file = file.clone();
            let pinned = slot.pinned;
            drop(slot);
            if !pinned {
                self.touch();
            }
            return Ok(file);
        }
        let file = Arc::new(File::open(&self.inner.path).ctx("open segment", &self.inner.path)?);
        slot.file = Some(file.clone());
        slot.writable = false;
        let pinned = slot.pinned;
        drop(slot);
        if !pinned {
            self.touch();
        }
        Ok(file)
    }

    /// The file if it is open now, without opening it (a flush fsyncs a closed one by path).
    pub(crate) fn if_open(&self) -> Option<Arc<File>> {
        self.slot().file.clone()
    }

    /// Opens the file read-write (created if missing) and keeps it open: the segment is active.
    pub(crate) fn pin(&self) -> Result<()> {
        let mut slot = self.slot();
        if slot.file.is_none() || !slot.writable {
            slot.file = Some(Arc::new(open_read_write(&self.inner.path, "open segment")?));
            slot.writable = true;
        }
        let was_pinned = std::mem::replace(&mut slot.pinned, true);
        drop(slot);
        if !was_pinned {
            lru().remove(self.inner.id);
        }
        Ok(())
    }

    /// The segment is sealed: its file, open or not, falls under the bound.
    pub(crate) fn unpin(&self) {
        let mut slot = self.slot();
        if !std::mem::replace(&mut slot.pinned, false) {
            return;
        }
        let open = slot.file.is_some();
        drop(slot);
        if open {
            self.touch();
        }
    }

    /// Closes the segment's own descriptor now (holders of a clone keep theirs).
    #[cfg(test)]
    pub(crate) fn close(&self) {
        self.slot().file = None;
        lru().remove(self.inner.id);
    }

    fn touch(&self) {
        let victims = lru().touch(self.inner.id, Arc::downgrade(&self.inner));
        close_all(victims);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Closes the victims the bound picked (outside the bound's lock: a victim's `Inner` may be
/// dropped here, and its drop takes that lock). A victim pinned since, or read again since (it
/// is back in the bound), keeps its file.
fn close_all(victims: Vec<Weak<Inner>>) {
    for victim in victims {
        let Some(inner) = victim.upgrade() else {
            continue;
        };
        let mut slot = lock(&inner.slot);
        if !slot.pinned && !lru().contains(inner.id) {
            slot.file = None;
        }
    }
}

/// Least recently used order of the sealed segments with an open `.log`.
#[derive(Debug, Default)]
struct Lru {
    tick: u64,
    /// id -> (last use, the segment).
    by_id: HashMap<u64, (u64, Weak<Inner>)>,
    /// last use -> id.
    order: BTreeMap<u64, u64>,
}

impl Lru {
    fn touch(&mut self, id: u64, inner: Weak<Inner>) -> Vec<Weak<Inner>> {
        self.tick += 1;
        if let Some((old, _)) = self.by_id.insert(id, (self.tick, inner)) {
            self.order.remove(&old);
        }
        self.order.insert(self.tick, id);
        self.shrink()
    }

    fn shrink(&mut self) -> Vec<Weak<Inner>> {
        let max = max_open_segments();
        let mut victims = Vec::new();
        while self.by_id.len() > max {
            let Some((_, id)) = self.order.pop_first() else {
                break;
            };
            if let Some((_, inner)) = self.by_id.remove(&id) {
                victims.push(inner);
            }
        }
        victims
    }

    fn remove(&mut self, id: u64) {
        if let Some((tick, _)) = self.by_id.remove(&id) {
            self.order.remove(&tick);
        }
    }

    fn contains(&self, id: u64) -> bool {
        self.by_id.contains_key(&id)
    }
}

fn lru() -> MutexGuard<'static, Lru> {
    static LRU: OnceLock<Mutex<Lru>> = OnceLock::new();
    lock(LRU.get_or_init(|| Mutex::new(Lru::default())))
}

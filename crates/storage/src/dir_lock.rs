//! `<dir>/.lock`: one process per data directory, as Kafka's `FileLock` on each log dir's
//! `.lock`. The lock is the operating system's exclusive file lock (`flock(LOCK_EX | LOCK_NB)`
//! on Linux, through std's `File::try_lock`), held on the open file for as long as the
//! [`DirLock`] lives; the kernel drops it when the process dies, however it dies (kill -9, a
//! crash as PID 1 in a container), so a restart never finds a stale lock.
//!
//! `flock` locks belong to the open file description, not the process: a second open of the
//! same file in the same process is refused too, so two brokers in one process cannot share a
//! directory either.
//!
//! Contents: the holder's pid and a newline (`1234\n`), written after the lock is taken and only
//! to name the holder in the refusal; the lock, not the pid, decides (on a full disk the file may
//! stay empty: the lock holds all the same). The file is never deleted
//! (deleting a lock file while another process may have it open lets two processes each lock a
//! different inode); on release its contents are cleared.
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{IoContext, Result};

/// The lock file's name in the data directory.
pub const LOCK_FILE: &str = ".lock";

/// The held lock of a directory; dropping it (or [`DirLock::release`]) unlocks.
#[derive(Debug)]
pub struct DirLock {
    file: File,
    path: PathBuf,
}

impl DirLock {
    /// Takes `<dir>/.lock` (creating it) without waiting: `Ok(None)` if another open file holds
    /// it (another process, or another `DirLock` of this one).
    pub fn try_acquire(dir: &Path) -> Result<Option<DirLock>> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .ctx("open", &path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Ok(None),
            Err(TryLockError::Error(e)) => return Err(e).ctx("lock", &path),
        }
        let mut lock = DirLock { file, path };
        // The pid only names the holder in a refusal: a full disk (ENOSPC) must not keep the
        // broker from starting and serving reads, so a failed write leaves the file empty.
        if lock.file.set_len(0).is_ok()
            && lock
                .file
                .write_all(format!("{}\n", std::process::id()).as_bytes())
                .is_err()
        {
            let _ = lock.file.set_len(0);
        }
        Ok(Some(lock))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Clears the pid and unlocks (closing the file unlocks even if clearing fails).
    pub fn release(self) -> Result<()> {
        let cleared = self.file.set_len(0).ctx("truncate", &self.path);
        drop(self.file);
        cleared
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_second_lock_of_the_same_dir_is_refused_even_in_the_same_process() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::try_acquire(dir.path()).unwrap().unwrap();
        assert!(DirLock::try_acquire(dir.path()).unwrap().is_none());
        first.release().unwrap();
        let again = DirLock::try_acquire(dir.path()).unwrap();
        assert!(again.is_some());
    }

    #[test]
    fn a_lock_file_left_behind_naming_any_pid_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(LOCK_FILE), "1\n").unwrap();
        let lock = DirLock::try_acquire(dir.path()).unwrap().unwrap();
        let text = fs::read_to_string(lock.path()).unwrap();
        assert_eq!(text, format!("{}\n", std::process::id()));
    }

    #[test]
    fn release_clears_the_pid_and_keeps_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let lock = DirLock::try_acquire(dir.path()).unwrap().unwrap();
        let path = lock.path().to_path_buf();
        lock.release().unwrap();
        assert_eq!(fs::read_to_string(path).unwrap(), "");
    }

    #[test]
    fn a_missing_directory_is_an_io_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = DirLock::try_acquire(&dir.path().join("absent")).unwrap_err();
        assert_eq!(err.code(), "STORAGE_ERROR");
        assert!(err.to_string().contains(".lock"), "{err}");
    }
}

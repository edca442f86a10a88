//! `DataDirLock`: forwards to `ferrolog_storage::DirLock` (flock on `<dataDir>/.lock`, held
//! while this object is open; ts/server/lock-file.ts keeps it for the broker's life).
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::convert::storage_error;

/// An exclusive OS lock (flock) on `<dir>/.lock`, held until `release` or the process ends.
#[napi]
pub struct DataDirLock {
    lock: Option<ferrolog_storage::DirLock>,
}

#[napi]
impl DataDirLock {
    /// Takes the lock without waiting; `null` if another open file holds it (another process, or another `DataDirLock` of this one). Throws "STORAGE_ERROR: ..." if the file cannot be opened or written.
    #[napi]
    pub fn try_acquire(dir: String) -> Result<Option<DataDirLock>> {
        ferrolog_storage::DirLock::try_acquire(dir.as_ref())
            .map(|held| held.map(|lock| DataDirLock { lock: Some(lock) }))
            .map_err(|e| storage_error(&e))
    }

    /// Clears the pid in the file and unlocks (idempotent).
    #[napi]
    pub fn release(&mut self) -> Result<()> {
        match self.lock.take() {
            Some(lock) => lock.release().map_err(|e| storage_error(&e)),
            None => Ok(()),
        }
    }
}

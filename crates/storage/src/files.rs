//! File helpers shared by the segment, index and log modules (below all of them, so that none
//! has to reach into another for them).
use std::fs;
use std::path::Path;

use crate::error::{Result, StorageError};

/// Deletes `path`; a file that is not there is not an error (Kafka's `Files.deleteIfExists`).
pub(crate) fn remove_if_present(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(StorageError::io("delete", path, e))
        }
        _ => Ok(()),
    }
}

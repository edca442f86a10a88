//! The process's open-file limit (RLIMIT_NOFILE). The active segment of every open log keeps its
//! `.log`, `.index` and `.timeindex` open, and sealed segments open their `.log` on reads under
//! a bound (segment/log_file.rs), so a broker needs about three descriptors a partition plus the
//! bound and its sockets (the broker keeps its default bound within a quarter of the limit), and
//! Debian's default soft limit (1024) is a few hundred partitions. The JVM raises its soft limit
//! to the hard one when it starts (HotSpot's `MaxFDLimit`, on by default), which is what Kafka
//! brokers run with; Node does not, so the broker asks for the same here at start
//! (`raise_open_file_limit`). Past the hard limit only the operator can go (`ulimit -Hn`,
//! systemd's `LimitNOFILE`).
use std::io;

use crate::error::{Result, StorageError};

/// Soft and hard limits; `u64::MAX` is unlimited (RLIM_INFINITY).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimit {
    pub soft: u64,
    pub hard: u64,
}

// rlim_t is u64 here but not on every target the crate builds for: the casts stay.
#[allow(clippy::unnecessary_cast)]
fn get() -> Result<FileLimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct we own; no other memory is touched.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(StorageError::Io {
            context: "getrlimit RLIMIT_NOFILE".into(),
            source: io::Error::last_os_error(),
        });
    }
    Ok(FileLimit {
        soft: limit.rlim_cur as u64,
        hard: limit.rlim_max as u64,
    })
}

/// The limits now.
pub fn open_file_limit() -> Result<FileLimit> {
    get()
}

/// Raises the soft limit to the hard one (a no-op when they are equal); returns the limits after.
pub fn raise_open_file_limit() -> Result<FileLimit> {
    let now = get()?;
    if now.soft >= now.hard {
        return Ok(now);
    }
    let limit = libc::rlimit {
        rlim_cur: now.hard as libc::rlim_t,
        rlim_max: now.hard as libc::rlim_t,
    };
    // SAFETY: setrlimit reads the rlimit we pass; raising the soft limit up to the hard one is
    // always permitted.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(StorageError::Io {
            context: "setrlimit RLIMIT_NOFILE".into(),
            source: io::Error::last_os_error(),
        });
    }
    get()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_rises_to_the_hard_one() {
        let before = open_file_limit().unwrap();
        let after = raise_open_file_limit().unwrap();
        assert_eq!(after.hard, before.hard);
        assert_eq!(after.soft, after.hard);
        assert_eq!(raise_open_file_limit().unwrap(), after);
    }
}

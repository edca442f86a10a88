//! A read-only memory map of a SEALED segment's `.log`, for the header walk of
//! `translateOffset`: reading headers out of the map costs no system call and no copy, where the
//! `pread` path costs one call of a few KiB per lookup. The active segment is never mapped (it
//! grows by `pwrite`, and is cut by truncation); it keeps `pread`.
//!
//! # Safety: the invariant that keeps the map from faulting
//!
//! Touching a page of a `MAP_SHARED` file map that lies past the file's current end raises
//! SIGBUS, which kills the process. A map is therefore only ever made, and only ever read,
//! while nothing can shorten the file underneath it:
//!
//! 1. A map covers `[0, size)` of a segment that is sealed (`on_become_inactive` ran: a roll,
//!    a close, or the loader sealing every segment but the last), made lazily by the first read
//!    that wants it, and only when the file is at least `size` long at that moment (fstat).
//! 2. Every `LogSegment` method that changes the `.log`'s length, or may come before one that
//!    does, drops the map first and unseals: `append`, `resize_indexes_to_max` (the segment is
//!    becoming active again: truncation, recovery), `truncate_to`, `truncate_log`, `recover`.
//!    Those take `&mut LogSegment`, so no read through the map (which borrows the segment) can
//!    run at the same time; in the binding all of them run under the log's mutex, the same one
//!    reads hold.
//! 3. Deleting a segment unlinks its files: a map of an unlinked file stays valid (the inode
//!    lives until the last map and descriptor go), so deletion needs nothing, and the map is
//!    unmapped when the segment is dropped.
//! 4. Nothing in ferrolog writes into a sealed segment's bytes, so the `&[u8]` handed out never
//!    changes while borrowed.
//!
//! What this cannot guard against, as with Kafka's own maps of its index files: ANOTHER PROCESS
//! truncating a sealed segment's file while this one has it mapped. A log directory belongs to
//! one process (the broker holds `<dataDir>/.lock`); tools must not cut segment files of a log
//! that is open.
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most segment maps alive at once in the process. Each map is one entry of the kernel's
/// per-process limit (`vm.max_map_count`, 65530 by default), which V8's heap and every library
/// also draw on: past this many, sealed segments are read with `pread` as the active one is.
pub(crate) const MAX_LIVE_MAPS: usize = 8192;
static LIVE_MAPS: AtomicUsize = AtomicUsize::new(0);

/// A read-only map of the first `len` bytes of a file; unmapped on drop.
#[derive(Debug)]
pub(crate) struct MappedLog {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the map is read-only memory owned by this value; it can be read from any thread and
// is unmapped exactly once, by whichever thread drops it.
unsafe impl Send for MappedLog {}
// SAFETY: shared access only reads.
unsafe impl Sync for MappedLog {}

impl MappedLog {
    /// Maps the first `len` bytes of `file`, or `None` when the file is shorter than that now,
    /// `len` is 0, [`MAX_LIVE_MAPS`] maps are alive, or the map fails (the caller reads with
    /// `pread` instead).
    pub(crate) fn map(file: &File, len: u32) -> Option<MappedLog> {
        if len == 0 {
            return None;
        }
        let file_len = file.metadata().ok()?.len();
        if file_len < len as u64 {
            return None;
        }
        if LIVE_MAPS.fetch_add(1, Ordering::Relaxed) >= MAX_LIVE_MAPS {
            LIVE_MAPS.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        // SAFETY: a new read-only map of a descriptor we hold, at an address the kernel picks,
        // so no existing memory is replaced.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        match NonNull::new(ptr.cast::<u8>()) {
            Some(ptr) if ptr.as_ptr() != libc::MAP_FAILED.cast() => Some(MappedLog {
                ptr,
                len: len as usize,
            }),
            _ => {
                LIVE_MAPS.fetch_sub(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// The mapped bytes. See the module's invariant for why reading them cannot fault.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for as long as `self` lives; the segment keeps
        // the file at least that long and unchanged while the map exists (module invariant).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for MappedLog {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the range `map` created; no borrow of `bytes()` outlives `self`.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
        LIVE_MAPS.fetch_sub(1, Ordering::Relaxed);
    }
}

//! Test batches built with ferrolog-record's `BatchBuilder`.
use ferrolog_record::{BatchBuilder, Compression};

/// An uncompressed CreateTime batch at `base_offset` of `count` records with values of
/// `value_size` bytes, timestamps `timestamp`, `timestamp + 1`, ...
pub fn batch(base_offset: i64, count: usize, value_size: usize, timestamp: i64) -> Vec<u8> {
    batch_with(
        Compression::None,
        base_offset,
        &(0..count as i64).map(|i| timestamp + i).collect::<Vec<_>>(),
        value_size,
    )
}

/// A batch with one record per timestamp.
pub fn batch_with(
    compression: Compression,
    base_offset: i64,
    timestamps: &[i64],
    value_size: usize,
) -> Vec<u8> {
    let mut b = BatchBuilder::new(compression, None, base_offset, None);
    for (i, &ts) in timestamps.iter().enumerate() {
        let value = vec![b'a' + (i % 26) as u8; value_size];
        b.append(ts, Some(format!("k{i}").as_bytes()), Some(&value), &[])
            .unwrap();
    }
    b.build().unwrap()
}

/// A batch with its partition leader epoch set (as a leader would have stamped it).
pub fn batch_in_epoch(base_offset: i64, count: usize, epoch: i32) -> Vec<u8> {
    let mut b =
        BatchBuilder::new(Compression::None, None, base_offset, None).partition_leader_epoch(epoch);
    for i in 0..count {
        b.append(1_000 + i as i64, None, Some(b"v"), &[]).unwrap();
    }
    b.build().unwrap()
}

/// A tmpfs of `bytes` mounted on a fresh temporary directory for one test (tests run as root),
/// unmounted when dropped: a real disk that fills up.
///
/// Mounted and unmounted with the mount(2) and umount2(2) system calls, never by running
/// `mount`/`umount`: the tests of this crate run on parallel threads of one process, and a child
/// process starts with a copy of the whole process's descriptor table, which it keeps until its
/// exec closes them (O_CLOEXEC). A test that closed and unlinked its filler while another test's
/// `umount` child sat between fork and exec (milliseconds on a loaded machine) found the filler's
/// pages still charged to its tmpfs, and its next append failed with ENOSPC (issue 24, item 6).
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

fn c_path(path: &std::path::Path) -> std::ffi::CString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap()
}

impl Tmpfs {
    pub fn mount(bytes: u64) -> Tmpfs {
        let dir = tempfile::TempDir::new().unwrap();
        let target = c_path(dir.path());
        let data = std::ffi::CString::new(format!("size={bytes}")).unwrap();
        // SAFETY: every pointer is a NUL-terminated string that outlives the call.
        let rc = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                data.as_ptr().cast(),
            )
        };
        assert_eq!(
            rc,
            0,
            "mount -t tmpfs on {}: {}",
            dir.path().display(),
            std::io::Error::last_os_error()
        );
        Tmpfs { dir }
    }

    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let target = c_path(self.dir.path());
        // SAFETY: a NUL-terminated path that outlives the call. Detached (as `umount -l`): a
        // file a failed test left open does not keep the directory from being removed.
        unsafe {
            libc::umount2(target.as_ptr(), libc::MNT_DETACH);
        }
    }
}

/// A file grown until the disk it is on is full, and shrunk to give space back.
pub struct Filler {
    file: std::fs::File,
    len: u64,
}

impl Filler {
    pub fn new(path: &std::path::Path) -> Filler {
        Filler {
            file: std::fs::File::create(path).unwrap(),
            len: 0,
        }
    }

    /// Writes until ENOSPC: the disk then has no free page.
    pub fn fill(&mut self) {
        use std::os::unix::fs::FileExt;
        let chunk = vec![0xffu8; 64 * 1024];
        let mut size = chunk.len();
        while size > 0 {
            match self.file.write_at(&chunk[..size], self.len) {
                Ok(0) => size /= 2,
                Ok(n) => self.len += n as u64,
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => size /= 2,
                Err(e) => panic!("fill: {e}"),
            }
        }
    }

    /// Gives `bytes` back to the disk.
    pub fn free(&mut self, bytes: u64) {
        self.len = self.len.saturating_sub(bytes);
        self.file.set_len(self.len).unwrap();
    }
}

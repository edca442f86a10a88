//! Thin wrappers over the system calls the engine makes (Linux): each returns `io::Result` and
//! owns what it opens (`OwnedFd` closes on drop).
use std::io::{self, IoSlice};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// How the engine tells two sockets apart: the socket inode (sockfs device and inode number),
/// the same for every fd of one socket and never shared by two live sockets.
pub type SocketKey = (u64, u64);

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn check_size(r: libc::ssize_t) -> io::Result<usize> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// A new fd of the same socket (close-on-exec), so the caller's fd number can be closed and
/// reused without the job writing somewhere else.
pub fn dup(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC reads no memory; a bad fd gives EBADF.
    let new = check(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) })?;
    // SAFETY: `new` is a fresh fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// The socket's identity; an error if `fd` is not an open socket.
pub fn socket_key(fd: RawFd) -> io::Result<SocketKey> {
    // SAFETY: fstat writes only into `st`, which is large enough.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    check(unsafe { libc::fstat(fd, &mut st) })?;
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(io::Error::from_raw_os_error(libc::ENOTSOCK));
    }
    Ok((st.st_dev as u64, st.st_ino as u64))
}

pub fn is_nonblocking(fd: RawFd) -> io::Result<bool> {
    // SAFETY: F_GETFL reads no memory.
    let flags = check(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    Ok(flags & libc::O_NONBLOCK != 0)
}

/// Writes the slices with one sendmsg: MSG_NOSIGNAL (a closed peer is EPIPE, not SIGPIPE), and
/// MSG_MORE when file data follows so the bytes and the file's first pages share a packet.
pub fn send_slices(fd: RawFd, slices: &[IoSlice<'_>], more: bool) -> io::Result<usize> {
    // SAFETY: a zeroed msghdr is valid (no name, no control data).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    // IoSlice is ABI-compatible with iovec; sendmsg only reads through the pointer.
    msg.msg_iov = slices.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = slices.len() as _;
    let flags = libc::MSG_NOSIGNAL | if more { libc::MSG_MORE } else { 0 };
    // SAFETY: `msg` points at `slices`, which outlive the call.
    check_size(unsafe { libc::sendmsg(fd, &msg, flags) })
}

/// One sendfile(2) from `file` at `offset` (the file's own position is not used or moved, so
/// several jobs may share the file).
pub fn sendfile(socket: RawFd, file: RawFd, offset: u64, count: usize) -> io::Result<usize> {
    let mut off = offset as libc::off_t;
    // SAFETY: `off` is a valid off_t the call may update.
    check_size(unsafe { libc::sendfile(socket, file, &mut off, count) })
}

/// Whether the socket takes more bytes now (poll, no wait). An error or hang-up counts as
/// writable: the next send reports it.
pub fn is_writable(fd: RawFd) -> bool {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one pollfd, valid for the call.
    let n = unsafe { libc::poll(&mut poll, 1, 0) };
    n != 0
}

/// Whether every page of `len` bytes of the file from `offset` is in the page cache, by
/// cachestat(2) (Linux 6.5; no pages are read or mapped). False if the call fails (an older
/// kernel, a seccomp filter).
pub fn is_cached(fd: RawFd, offset: u64, len: u64) -> bool {
    #[repr(C)]
    struct CachestatRange {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct Cachestat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    // The same number on every architecture (it came after the tables were unified).
    const SYS_CACHESTAT: libc::c_long = 451;
    const PAGE: u64 = 4096;
    let range = CachestatRange { off: offset, len };
    let mut stat = Cachestat::default();
    // SAFETY: the kernel reads `range` and writes `stat`, both valid for the call.
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            fd,
            &range as *const CachestatRange,
            &mut stat as *mut Cachestat,
            0,
        )
    };
    // nr_cache counts pages of the page-aligned span; a larger page size only makes it smaller.
    let pages = (offset + len).div_ceil(PAGE) - offset / PAGE;
    r == 0 && stat.nr_cache >= pages
}

/// Blocks every signal in the calling thread (the process's other threads take them): sendfile
/// has no MSG_NOSIGNAL, and a SIGPIPE with the default action would kill the process (Node
/// ignores SIGPIPE, other hosts may not); and no handler of the host's runs on this thread.
pub fn block_signals() -> io::Result<()> {
    // SAFETY: the sigset is initialised by sigfillset before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        match libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) {
            0 => Ok(()),
            errno => Err(io::Error::from_raw_os_error(errno)),
        }
    }
}

/// An epoll instance; each registration carries a `u64` token.
pub struct Epoll(OwnedFd);

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: no memory involved.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: a fresh fd that nothing else owns.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn add(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut event = libc::epoll_event { events, u64: token };
        // SAFETY: `event` is valid for the call.
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) })?;
        Ok(())
    }

    /// Must come before the fd is closed: a registration lives as long as the socket, not the
    /// fd, and the caller's fd keeps the socket alive.
    pub fn delete(&self, fd: RawFd) -> io::Result<()> {
        let mut event = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: `event` is valid for the call (ignored by EPOLL_CTL_DEL).
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, &mut event) })?;
        Ok(())
    }

    /// Waits up to `timeout_ms` (-1: forever); an interrupted wait returns no events.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        // SAFETY: the kernel writes at most `events.len()` entries into `events`.
        let n = unsafe {
            libc::epoll_wait(
                self.0.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as i32,
                timeout_ms,
            )
        };
        match check(n) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(0),
            other => other.map(|n| n as usize),
        }
    }
}

/// An eventfd that wakes the engine thread from `epoll_wait`.
pub struct Waker(OwnedFd);

impl Waker {
    pub fn new() -> io::Result<Waker> {
        // SAFETY: no memory involved.
        let fd = check(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })?;
        // SAFETY: a fresh fd that nothing else owns.
        Ok(Waker(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from `one`. It can only fail if the counter would overflow,
        // and then the thread has a wake-up pending anyway.
        unsafe { libc::write(self.0.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    /// Resets the counter (level-triggered: the fd stays readable until drained).
    pub fn drain(&self) {
        let mut count: u64 = 0;
        // SAFETY: reads 8 bytes into `count`; EAGAIN when already drained is fine.
        unsafe { libc::read(self.0.as_raw_fd(), (&mut count as *mut u64).cast(), 8) };
    }
}

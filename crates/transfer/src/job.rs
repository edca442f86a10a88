//! One job: the parts to write to one socket, and how far it has got. `advance` writes as
//! much as the socket takes within a byte budget and says why it stopped.
use std::fs::File;
use std::io::{self, IoSlice};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use crate::error::TransferError;
use crate::sys::{self, SocketKey};

/// Slices passed to one sendmsg (Linux's IOV_MAX is 1024).
const MAX_SLICES: usize = 64;
/// Linux moves at most this much per sendfile call.
const MAX_SENDFILE: u64 = 0x7fff_f000;

/// A piece of a job, written in order.
#[derive(Debug, Clone)]
pub enum Part {
    /// Bytes in memory (a response header, a batch built in memory).
    Bytes(Vec<u8>),
    /// `len` bytes of `file` from `offset`, sent with sendfile. The Arc keeps the file open for
    /// the job even if it is unlinked (retention) meanwhile.
    File {
        file: Arc<File>,
        offset: u64,
        len: u64,
    },
}

impl Part {
    pub fn len(&self) -> u64 {
        match self {
            Part::Bytes(bytes) => bytes.len() as u64,
            Part::File { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Why `advance` returned.
#[derive(Debug)]
pub enum Step {
    /// Every part was written.
    Finished,
    /// The socket's buffer is full (EAGAIN): wait for it to be writable.
    Blocked,
    /// The turn's budget is spent: let other ready jobs have theirs.
    Yielded,
    Failed(TransferError),
}

pub struct Job {
    pub id: u64,
    /// Our own fd of the socket until the engine thread takes it for the socket's queue (or
    /// closes it, if the queue has one already).
    pub socket: Option<OwnedFd>,
    pub key: SocketKey,
    parts: Vec<Part>,
    /// The part being written and how much of it is already sent.
    index: usize,
    sent_in_part: u64,
    pub bytes_sent: u64,
    /// Waiting for EPOLLOUT after EAGAIN.
    pub blocked: bool,
}

impl Job {
    /// A job not yet accepted: id 0 and no fd of its own until the engine takes it.
    pub fn new(key: SocketKey, parts: Vec<Part>) -> Job {
        Job {
            id: 0,
            socket: None,
            key,
            parts,
            index: 0,
            sent_in_part: 0,
            bytes_sent: 0,
            blocked: false,
        }
    }

    /// Every file range of the job is in the page cache (writing it reads nothing from disk).
    /// False where the kernel cannot tell (no cachestat(2), before Linux 6.5).
    pub fn is_cached(&self) -> bool {
        self.parts.iter().all(|part| match part {
            Part::Bytes(_) => true,
            Part::File { file, offset, len } => {
                *len == 0 || sys::is_cached(file.as_raw_fd(), *offset, *len)
            }
        })
    }

    /// Writes to `socket` until the parts are done, the socket would block, an error, or
    /// `budget` bytes were sent in this turn.
    pub fn advance(&mut self, socket: RawFd, budget: u64) -> Step {
        let mut budget = budget.max(1);
        loop {
            while self.index < self.parts.len() && self.sent_in_part >= self.parts[self.index].len()
            {
                self.index += 1;
                self.sent_in_part = 0;
            }
            if self.index == self.parts.len() {
                return Step::Finished;
            }
            if budget == 0 {
                return Step::Yielded;
            }
            let written = match &self.parts[self.index] {
                Part::Bytes(_) => self.send_bytes(socket),
                Part::File { file, offset, len } => {
                    let count = (len - self.sent_in_part).min(budget).min(MAX_SENDFILE);
                    let at = offset + self.sent_in_part;
                    match sys::sendfile(socket, file.as_raw_fd(), at, count as usize) {
                        Ok(0) => {
                            return Step::Failed(TransferError::ShortFile {
                                offset: *offset,
                                len: *len,
                                sent: self.sent_in_part,
                            })
                        }
                        // Short: the socket's buffer filled up (or the file ended). Calling
                        // again only to hear EAGAIN would read the next pages of the file into
                        // the kernel's splice pipe and drop them; a poll is cheaper, and when it
                        // says full it has armed the next EPOLLOUT edge as EAGAIN would.
                        Ok(n) if (n as u64) < count => {
                            self.consume(n as u64);
                            budget = budget.saturating_sub(n as u64);
                            if !sys::is_writable(socket) {
                                return Step::Blocked;
                            }
                            continue;
                        }
                        other => other.map_err(|e| (e, "sendfile")),
                    }
                }
            };
            match written {
                Ok(n) => {
                    self.consume(n as u64);
                    budget = budget.saturating_sub(n as u64);
                }
                Err((e, _)) if e.kind() == io::ErrorKind::WouldBlock => return Step::Blocked,
                Err((e, _)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err((e, context)) => {
                    let errno = e.raw_os_error().unwrap_or(libc::EIO);
                    return Step::Failed(TransferError::from_send_errno(errno, context));
                }
            }
        }
    }

    /// One sendmsg of the current bytes part's rest and the bytes parts right after it.
    fn send_bytes(&self, socket: RawFd) -> Result<usize, (io::Error, &'static str)> {
        let mut slices = Vec::with_capacity(4);
        let mut next = self.index;
        while next < self.parts.len() && slices.len() < MAX_SLICES {
            let Part::Bytes(bytes) = &self.parts[next] else {
                break;
            };
            let skip = if next == self.index {
                self.sent_in_part as usize
            } else {
                0
            };
            if bytes.len() > skip {
                slices.push(IoSlice::new(&bytes[skip..]));
            }
            next += 1;
        }
        let more = self.parts[next..].iter().any(|p| !p.is_empty());
        sys::send_slices(socket, &slices, more).map_err(|e| (e, "sendmsg"))
    }

    /// Moves past `n` sent bytes, across parts.
    fn consume(&mut self, mut n: u64) {
        self.bytes_sent += n;
        while n > 0 && self.index < self.parts.len() {
            let rest = self.parts[self.index].len() - self.sent_in_part;
            if n >= rest {
                n -= rest;
                self.index += 1;
                self.sent_in_part = 0;
            } else {
                self.sent_in_part += n;
                n = 0;
            }
        }
    }
}

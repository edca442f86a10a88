//! `TransferEngine`: the handle callers hold. It validates and dups the socket, hands the job
//! to the engine thread through a locked inbox and an eventfd, and stops the thread on
//! `shutdown` or drop.
use std::collections::{HashMap, HashSet};
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle, ThreadId};

use crate::error::TransferError;
use crate::job::{Job, Part, Step};
use crate::sys::{self, SocketKey, Waker};
use crate::worker::Worker;

/// Default bytes one job may send per turn before other ready jobs get theirs.
pub const DEFAULT_CHUNK_BYTES: u64 = 1 << 20;

/// Default size up to which a job is written at once on the caller's thread (see
/// `TransferOptions::inline_bytes`).
pub const DEFAULT_INLINE_BYTES: u64 = 64 << 10;

#[derive(Debug, Clone)]
pub struct TransferOptions {
    /// At most this many bytes per sendfile call per turn (fairness between jobs).
    pub chunk_bytes: u64,
    /// A job of at most this many bytes, for a socket with no job queued, whose file ranges
    /// are all in the page cache, is first written on the caller's thread with the same
    /// non-blocking calls (nothing can block: the socket is non-blocking and no page has to
    /// be read from disk). Most such jobs (small Fetch responses) end there, without waking
    /// the engine thread; what the socket does not take goes to the thread. 0: never.
    pub inline_bytes: u64,
}

impl Default for TransferOptions {
    fn default() -> Self {
        TransferOptions {
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            inline_bytes: DEFAULT_INLINE_BYTES,
        }
    }
}

/// What `submit` did with a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    /// Written whole at once on the caller's thread; no completion follows.
    Sent(u64),
    /// Queued as this job; its completion comes through `on_complete`.
    Queued(u64),
}

/// How a job ended; delivered once per accepted job, on the engine thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub job: u64,
    pub bytes_sent: u64,
    pub result: Result<(), TransferError>,
}

/// What the caller's threads and the engine thread share.
pub(crate) struct Shared {
    inbox: Mutex<Inbox>,
    pub(crate) waker: Waker,
}

#[derive(Default)]
pub(crate) struct Inbox {
    next_id: u64,
    pub(crate) submitted: Vec<Job>,
    pub(crate) cancelled: Vec<u64>,
    /// Jobs accepted and not yet ended. Whoever removes an id decides its outcome: `cancel`
    /// (then the completion says CANCELLED) or the engine thread as it completes the job.
    pub(crate) live: HashSet<u64>,
    /// Per socket, its jobs submitted and not yet finished by the engine thread (cancelled ones
    /// included until the thread has ended them).
    pub(crate) per_socket: HashMap<SocketKey, u32>,
    /// Sockets a caller's thread is writing to right now (`inline_bytes`), and the jobs
    /// submitted for them meanwhile, in order: they join the queue after what is left of the
    /// inline job, if anything.
    pub(crate) inline: HashSet<SocketKey>,
    pub(crate) held: Vec<Job>,
    /// The engine thread is in (or about to enter) a wait with no timeout: a submission that it
    /// could start at once must wake it. A job for a socket that already has jobs need not: it
    /// starts when the one before it ends, and the thread wakes for that by itself.
    pub(crate) sleeping: bool,
    pub(crate) closed: bool,
}

impl Inbox {
    /// Accepts a job (held if its socket is being written inline): gives it an id, counts it.
    pub(crate) fn add(&mut self, mut job: Job) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        job.id = id;
        self.live.insert(id);
        *self.per_socket.entry(job.key).or_insert(0) += 1;
        if self.inline.contains(&job.key) {
            self.held.push(job);
        } else {
            self.submitted.push(job);
        }
        id
    }
}

impl Shared {
    pub(crate) fn inbox(&self) -> MutexGuard<'_, Inbox> {
        // Nothing panics while holding the lock; keep going on poisoning rather than abort.
        self.inbox
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

pub struct TransferEngine {
    shared: Arc<Shared>,
    inline_bytes: u64,
    thread: Mutex<Option<JoinHandle<()>>>,
    thread_id: ThreadId,
}

impl TransferEngine {
    /// Starts the engine thread. `on_complete` runs on that thread, once per accepted job.
    pub fn new(
        options: TransferOptions,
        on_complete: impl Fn(Completion) + Send + 'static,
    ) -> Result<TransferEngine, TransferError> {
        let io = |context: &str| {
            let context = context.to_string();
            move |e: std::io::Error| TransferError::Io {
                errno: e.raw_os_error().unwrap_or(libc::EIO),
                context,
            }
        };
        let shared = Arc::new(Shared {
            inbox: Mutex::new(Inbox {
                next_id: 1,
                ..Inbox::default()
            }),
            waker: Waker::new().map_err(io("eventfd"))?,
        });
        let inline_bytes = options.inline_bytes;
        let worker = Worker::new(shared.clone(), options.chunk_bytes.max(1), on_complete)
            .map_err(io("epoll"))?;
        let thread = thread::Builder::new()
            .name("ferrolog-transfer".into())
            .spawn(move || worker.run())
            .map_err(io("spawn the transfer thread"))?;
        let thread_id = thread.thread().id();
        Ok(TransferEngine {
            shared,
            inline_bytes,
            thread: Mutex::new(Some(thread)),
            thread_id,
        })
    }

    /// Writes `parts` in order to the socket: at once on this thread when the job is small and
    /// cached (see `TransferOptions::inline_bytes`), else (or for the rest) as a job of the
    /// engine thread. The socket must be non-blocking; a queued job has its own dup of it, so
    /// the caller may close its fd at any time. An inline write that fails returns the error.
    pub fn submit(&self, socket_fd: RawFd, parts: Vec<Part>) -> Result<Submitted, TransferError> {
        let invalid = |what: &str, e: std::io::Error| {
            TransferError::InvalidArgument(format!("socket fd {socket_fd}: {what}: {e}"))
        };
        if socket_fd < 0 {
            return Err(TransferError::InvalidArgument(format!(
                "socket fd {socket_fd} is negative"
            )));
        }
        let key = sys::socket_key(socket_fd).map_err(|e| invalid("not a socket", e))?;
        if !sys::is_nonblocking(socket_fd).map_err(|e| invalid("fcntl", e))? {
            return Err(TransferError::InvalidArgument(format!(
                "socket fd {socket_fd} is in blocking mode: the engine thread must never block on one socket"
            )));
        }
        let size: u64 = parts.iter().map(Part::len).sum();
        let mut job = Job::new(key, parts);
        if self.inline_bytes > 0
            && size <= self.inline_bytes
            && job.is_cached()
            && self.reserve(key)?
        {
            match job.advance(socket_fd, u64::MAX) {
                Step::Finished => {
                    self.release(key, None)?;
                    return Ok(Submitted::Sent(job.bytes_sent));
                }
                Step::Failed(e) => {
                    self.release(key, None)?;
                    return Err(e);
                }
                Step::Blocked | Step::Yielded => {
                    let socket = match sys::dup(socket_fd) {
                        Ok(socket) => socket,
                        Err(e) => {
                            self.release(key, None)?;
                            return Err(invalid("dup", e));
                        }
                    };
                    job.socket = Some(socket);
                    return self.release(key, Some(job)).map(Submitted::Queued);
                }
            }
        }
        job.socket = Some(sys::dup(socket_fd).map_err(|e| invalid("dup", e))?);
        let (id, wake) = {
            let mut inbox = self.shared.inbox();
            if inbox.closed {
                return Err(TransferError::EngineClosed);
            }
            let id = inbox.add(job);
            let first = inbox.per_socket[&key] == 1;
            // A job held behind an inline write starts when that write is handed over.
            let wake = inbox.sleeping && first && !inbox.inline.contains(&key);
            if wake {
                inbox.sleeping = false;
            }
            (id, wake)
        };
        if wake {
            self.shared.waker.wake();
        }
        Ok(Submitted::Queued(id))
    }

    /// Claims the socket for an inline write: false if it has jobs queued (or another thread
    /// is writing to it inline).
    fn reserve(&self, key: SocketKey) -> Result<bool, TransferError> {
        let mut inbox = self.shared.inbox();
        if inbox.closed {
            return Err(TransferError::EngineClosed);
        }
        if inbox.per_socket.contains_key(&key) || inbox.inline.contains(&key) {
            return Ok(false);
        }
        inbox.inline.insert(key);
        Ok(true)
    }

    /// Ends an inline write: queues what is left of it (`rest`; its id is returned, 0 if none)
    /// and then the jobs held behind it.
    fn release(&self, key: SocketKey, rest: Option<Job>) -> Result<u64, TransferError> {
        let (id, wake) = {
            let mut inbox = self.shared.inbox();
            inbox.inline.remove(&key);
            if inbox.closed {
                // The thread has ended the held jobs; nothing would run the rest.
                return match rest {
                    Some(_) => Err(TransferError::EngineClosed),
                    None => Ok(0),
                };
            }
            let id = rest.map_or(0, |job| inbox.add(job));
            let (mine, others): (Vec<Job>, Vec<Job>) = std::mem::take(&mut inbox.held)
                .into_iter()
                .partition(|job| job.key == key);
            inbox.held = others;
            let queued = id != 0 || !mine.is_empty();
            inbox.submitted.extend(mine);
            let wake = queued && inbox.sleeping;
            if wake {
                inbox.sleeping = false;
            }
            (id, wake)
        };
        if wake {
            self.shared.waker.wake();
        }
        Ok(id)
    }

    /// Ends the job with `Cancelled` (its completion still comes, and its socket's later jobs
    /// still run). False if the job already ended (or never existed).
    pub fn cancel(&self, job: u64) -> bool {
        let mut inbox = self.shared.inbox();
        if !inbox.live.remove(&job) {
            return false;
        }
        inbox.cancelled.push(job);
        drop(inbox);
        self.shared.waker.wake();
        true
    }

    /// Stops the thread: pending jobs end with `EngineClosed`, later submissions are refused.
    /// Joins the thread (unless called from `on_complete`, on the thread itself). Idempotent.
    pub fn shutdown(&self) {
        self.shared.inbox().closed = true;
        self.shared.waker.wake();
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread {
            if thread::current().id() != self.thread_id {
                // The thread only ends by returning; a panic in `on_complete` is its own report.
                let _ = thread.join();
            }
        }
    }
}

impl Drop for TransferEngine {
    fn drop(&mut self) {
        self.shutdown();
    }
}

//! `TransferEngine`: the handle callers hold. It validates and dups the socket, hands the job
//! to the engine thread through a locked inbox and an eventfd, and stops the thread on
//! `shutdown` or drop.
use std::collections::{HashMap, HashSet};
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle, ThreadId};

use crate::error::TransferError;
use crate::job::{Job, Part};
use crate::sys::{self, SocketKey, Waker};
use crate::worker::Worker;

/// Default bytes one job may send per turn before other ready jobs get theirs.
pub const DEFAULT_CHUNK_BYTES: u64 = 1 << 20;

#[derive(Debug, Clone)]
pub struct TransferOptions {
    /// At most this many bytes per sendfile call per turn (fairness between jobs).
    pub chunk_bytes: u64,
}

impl Default for TransferOptions {
    fn default() -> Self {
        TransferOptions {
            chunk_bytes: DEFAULT_CHUNK_BYTES,
        }
    }
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
    /// The engine thread is in (or about to enter) a wait with no timeout: a submission that it
    /// could start at once must wake it. A job for a socket that already has jobs need not: it
    /// starts when the one before it ends, and the thread wakes for that by itself.
    pub(crate) sleeping: bool,
    pub(crate) closed: bool,
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
        let worker = Worker::new(shared.clone(), options.chunk_bytes.max(1), on_complete)
            .map_err(io("epoll"))?;
        let thread = thread::Builder::new()
            .name("ferrolog-transfer".into())
            .spawn(move || worker.run())
            .map_err(io("spawn the transfer thread"))?;
        let thread_id = thread.thread().id();
        Ok(TransferEngine {
            shared,
            thread: Mutex::new(Some(thread)),
            thread_id,
        })
    }

    /// Queues a job writing `parts` in order to the socket; returns its id. The socket must be
    /// non-blocking; it is dup'ed here, so the caller may close its fd at any time.
    pub fn submit(&self, socket_fd: RawFd, parts: Vec<Part>) -> Result<u64, TransferError> {
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
        let socket = sys::dup(socket_fd).map_err(|e| invalid("dup", e))?;
        let (id, wake) = {
            let mut inbox = self.shared.inbox();
            if inbox.closed {
                return Err(TransferError::EngineClosed);
            }
            let id = inbox.next_id;
            inbox.next_id += 1;
            inbox.live.insert(id);
            inbox.submitted.push(Job::new(id, socket, key, parts));
            let first = {
                let jobs = inbox.per_socket.entry(key).or_insert(0);
                *jobs += 1;
                *jobs == 1
            };
            let wake = inbox.sleeping && first;
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

//! The engine thread: an epoll loop over the active job of each socket, a FIFO of jobs per
//! socket, and a round-robin ready queue in which each job gets `chunk_bytes` per turn.
//!
//! A socket's queue owns one fd of the socket (the first job's dup; later jobs' dups are closed
//! as they arrive) and at most one epoll registration of it, made on the first EAGAIN and kept
//! until the queue is empty, so back-to-back jobs on one socket pay neither again.
use std::collections::{HashMap, VecDeque};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;

use crate::engine::{Completion, Shared};
use crate::error::TransferError;
use crate::job::{Job, Step};
use crate::sys::{self, Epoll, SocketKey};

/// The eventfd's epoll token; socket tokens start at 1.
const WAKER_TOKEN: u64 = 0;
const MAX_EVENTS: usize = 64;

/// One socket's jobs, in submission order; the front one is the active job.
struct SocketQueue {
    fd: OwnedFd,
    /// Its epoll token, unique for the engine's life.
    token: u64,
    registered: bool,
    jobs: VecDeque<u64>,
}

pub(crate) struct Worker<F> {
    shared: Arc<Shared>,
    epoll: Epoll,
    chunk_bytes: u64,
    on_complete: F,
    jobs: HashMap<u64, Job>,
    queues: HashMap<SocketKey, SocketQueue>,
    /// Which socket an epoll token stands for.
    tokens: HashMap<u64, SocketKey>,
    next_token: u64,
    /// Active jobs believed writable, in turn order. May hold ids of jobs ended since.
    ready: VecDeque<u64>,
    /// Jobs ended since the last wait, reported together just before it (see `report`).
    ended: Vec<Completion>,
}

impl<F: Fn(Completion)> Worker<F> {
    pub(crate) fn new(
        shared: Arc<Shared>,
        chunk_bytes: u64,
        on_complete: F,
    ) -> std::io::Result<Self> {
        let epoll = Epoll::new()?;
        epoll.add(shared.waker.fd(), libc::EPOLLIN as u32, WAKER_TOKEN)?;
        Ok(Worker {
            shared,
            epoll,
            chunk_bytes,
            on_complete,
            jobs: HashMap::new(),
            queues: HashMap::new(),
            tokens: HashMap::new(),
            next_token: WAKER_TOKEN + 1,
            ready: VecDeque::new(),
            ended: Vec::new(),
        })
    }

    pub(crate) fn run(mut self) {
        // Cannot fail with a valid set; if it did, a signal could only cost an extra wait.
        let _ = sys::block_signals();
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS];
        loop {
            let (submitted, cancelled, closed) = {
                let mut inbox = self.shared.inbox();
                let mut submitted = std::mem::take(&mut inbox.submitted);
                if inbox.closed {
                    // Jobs held behind an inline write end here too (`release` queues no more).
                    submitted.append(&mut inbox.held);
                }
                let mut cancelled = std::mem::take(&mut inbox.cancelled);
                // A job cancelled before this thread took it (one held behind an inline write
                // may have had its cancel come and go already): ended before it sends a byte.
                cancelled.extend(
                    submitted
                        .iter()
                        .map(|job| job.id)
                        .filter(|id| !inbox.live.contains(id)),
                );
                (submitted, cancelled, inbox.closed)
            };
            for job in submitted {
                self.enqueue(job);
            }
            for id in cancelled {
                if self.jobs.contains_key(&id) {
                    self.finish(id, Err(TransferError::Cancelled));
                }
            }
            if closed {
                let mut ids: Vec<u64> = self.jobs.keys().copied().collect();
                ids.sort_unstable();
                for id in ids {
                    self.finish(id, Err(TransferError::EngineClosed));
                }
                self.report();
                return;
            }
            self.report();
            let timeout = if self.ready.is_empty() && self.may_sleep() {
                -1
            } else {
                0
            };
            let n = match self.epoll.wait(&mut events, timeout) {
                Ok(n) => n,
                // EBADF/EINVAL cannot happen on our own epoll fd; avoid spinning if it did.
                Err(_) => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    0
                }
            };
            if timeout < 0 {
                self.shared.inbox().sleeping = false;
            }
            for event in &events[..n] {
                let token = event.u64;
                if token == WAKER_TOKEN {
                    self.shared.waker.drain();
                } else if let Some(id) = self.active_job(token) {
                    if let Some(job) = self.jobs.get_mut(&id) {
                        if job.blocked {
                            job.blocked = false;
                            self.ready.push_back(id);
                        }
                    }
                }
            }
            self.run_turns();
        }
    }

    /// Called with nothing ready, just before a wait with no timeout: true (and from then on a
    /// submission must wake the thread) unless the inbox got work since it was taken. Decided
    /// here, under the lock, and not when the inbox is taken: work taken then (a cancel of a job
    /// already ended, say) can leave nothing ready, and a thread that slept believing itself
    /// awake would leave later submissions in the inbox.
    fn may_sleep(&self) -> bool {
        let mut inbox = self.shared.inbox();
        let idle = inbox.submitted.is_empty() && inbox.cancelled.is_empty() && !inbox.closed;
        inbox.sleeping = idle;
        idle
    }

    /// Delivers the completions gathered since the last wait. They wait for this point (the
    /// thread is about to sleep, or to start another round of turns) so that the caller's thread
    /// is woken once for the jobs that ended in one round rather than once per job, and is not
    /// woken while this thread still has sending to do on the same CPU.
    fn report(&mut self) {
        for completion in self.ended.drain(..) {
            (self.on_complete)(completion);
        }
    }

    /// The active job of the socket an epoll token stands for.
    fn active_job(&self, token: u64) -> Option<u64> {
        let key = self.tokens.get(&token)?;
        self.queues.get(key)?.jobs.front().copied()
    }

    /// One turn for each job ready when the round starts.
    fn run_turns(&mut self) {
        for _ in 0..self.ready.len() {
            let Some(id) = self.ready.pop_front() else {
                break;
            };
            let Some(job) = self.jobs.get_mut(&id) else {
                continue;
            };
            let Some(queue) = self.queues.get_mut(&job.key) else {
                continue;
            };
            // The turn's budget only matters when another job waits for its turn.
            let budget = if self.ready.is_empty() {
                u64::MAX
            } else {
                self.chunk_bytes
            };
            match job.advance(queue.fd.as_raw_fd(), budget) {
                Step::Finished => self.finish(id, Ok(())),
                Step::Failed(e) => self.finish(id, Err(e)),
                Step::Yielded => self.ready.push_back(id),
                Step::Blocked => {
                    job.blocked = true;
                    if !queue.registered {
                        let key = job.key;
                        self.register(key);
                    }
                    // Registered: edge-triggered, the EAGAIN armed the next EPOLLOUT edge.
                }
            }
        }
    }

    /// Registers a socket for EPOLLOUT edges, on its first EAGAIN: most sockets (responses
    /// smaller than the socket's buffer) never meet one and never pay the epoll_ctl calls.
    /// Adding reports the socket's state at once, so a socket that became writable between the
    /// EAGAIN and the add still gets its event.
    fn register(&mut self, key: SocketKey) {
        let Some(queue) = self.queues.get_mut(&key) else {
            return;
        };
        let events = (libc::EPOLLOUT | libc::EPOLLET) as u32;
        match self.epoll.add(queue.fd.as_raw_fd(), events, queue.token) {
            Ok(()) => queue.registered = true,
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                if let Some(&id) = queue.jobs.front() {
                    self.finish(
                        id,
                        Err(TransferError::Io {
                            errno,
                            context: "epoll_ctl".into(),
                        }),
                    );
                }
            }
        }
    }

    fn enqueue(&mut self, mut job: Job) {
        let (id, key) = (job.id, job.key);
        let socket = job.socket.take();
        self.jobs.insert(id, job);
        match self.queues.get_mut(&key) {
            // The queue has an fd of this socket already; the job's own dup closes here.
            Some(queue) => queue.jobs.push_back(id),
            None => {
                let Some(fd) = socket else {
                    // Cannot happen (every submitted job carries its dup); end it, don't panic.
                    self.finish(
                        id,
                        Err(TransferError::InvalidArgument("no socket fd".into())),
                    );
                    return;
                };
                let token = self.next_token;
                self.next_token += 1;
                self.tokens.insert(token, key);
                self.queues.insert(
                    key,
                    SocketQueue {
                        fd,
                        token,
                        registered: false,
                        jobs: VecDeque::from([id]),
                    },
                );
                self.ready.push_back(id);
            }
        }
    }

    /// Ends a job: queues its completion (see `report`), starts its socket's next job if this was the active one, and
    /// unregisters and closes the socket's fd when no job is left for it.
    fn finish(&mut self, id: u64, result: Result<(), TransferError>) {
        let Some(job) = self.jobs.remove(&id) else {
            return;
        };
        let (key, bytes_sent) = (job.key, job.bytes_sent);
        drop(job);
        let result = {
            let mut inbox = self.shared.inbox();
            if let Some(n) = inbox.per_socket.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    inbox.per_socket.remove(&key);
                }
            }
            if inbox.live.remove(&id) {
                result
            } else {
                Err(TransferError::Cancelled)
            }
        };
        self.ended.push(Completion {
            job: id,
            bytes_sent,
            result,
        });
        let Some(queue) = self.queues.get_mut(&key) else {
            return;
        };
        let was_active = queue.jobs.front() == Some(&id);
        if was_active {
            queue.jobs.pop_front();
        } else {
            // A job cancelled while others were ahead of it (rare): an O(n) removal.
            queue.jobs.retain(|&queued| queued != id);
        }
        match queue.jobs.front().copied() {
            None => {
                if queue.registered {
                    let _ = self.epoll.delete(queue.fd.as_raw_fd());
                }
                self.tokens.remove(&queue.token);
                self.queues.remove(&key);
            }
            Some(next) if was_active => self.ready.push_back(next),
            Some(_) => {}
        }
    }
}

//! The engine thread: an epoll loop over the active job of each socket, a FIFO of jobs per
//! socket, and a round-robin ready queue in which each job gets `chunk_bytes` per turn.
use std::collections::{HashMap, VecDeque};
use std::os::fd::AsRawFd;
use std::sync::Arc;

use crate::engine::{Completion, Shared};
use crate::error::TransferError;
use crate::job::{Job, Step};
use crate::sys::{self, Epoll, SocketKey};

/// The eventfd's epoll token; job ids start at 1.
const WAKER_TOKEN: u64 = 0;
const MAX_EVENTS: usize = 64;

pub(crate) struct Worker<F> {
    shared: Arc<Shared>,
    epoll: Epoll,
    chunk_bytes: u64,
    on_complete: F,
    jobs: HashMap<u64, Job>,
    /// Per socket, its jobs in submission order; the front one is the active job.
    queues: HashMap<SocketKey, VecDeque<u64>>,
    /// Active jobs believed writable, in turn order. May hold ids of jobs ended since.
    ready: VecDeque<u64>,
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
            ready: VecDeque::new(),
        })
    }

    pub(crate) fn run(mut self) {
        // If this fails the process keeps its SIGPIPE disposition; Node ignores SIGPIPE anyway.
        let _ = sys::block_sigpipe();
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS];
        loop {
            let (submitted, cancelled, closed) = {
                let mut inbox = self.shared.inbox();
                (
                    std::mem::take(&mut inbox.submitted),
                    std::mem::take(&mut inbox.cancelled),
                    inbox.closed,
                )
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
                return;
            }
            let timeout = if self.ready.is_empty() { -1 } else { 0 };
            let n = match self.epoll.wait(&mut events, timeout) {
                Ok(n) => n,
                // EBADF/EINVAL cannot happen on our own epoll fd; avoid spinning if it did.
                Err(_) => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    0
                }
            };
            for event in &events[..n] {
                let token = event.u64;
                if token == WAKER_TOKEN {
                    self.shared.waker.drain();
                } else if let Some(job) = self.jobs.get_mut(&token) {
                    if job.blocked {
                        job.blocked = false;
                        self.ready.push_back(token);
                    }
                }
            }
            self.run_turns();
        }
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
            match job.advance(self.chunk_bytes) {
                Step::Finished => self.finish(id, Ok(())),
                Step::Failed(e) => self.finish(id, Err(e)),
                Step::Yielded => self.ready.push_back(id),
                Step::Blocked => {
                    job.blocked = true;
                    if !job.registered {
                        self.register(id);
                    }
                    // Registered: edge-triggered, the EAGAIN armed the next EPOLLOUT edge.
                }
            }
        }
    }

    /// Registers a job's socket for EPOLLOUT edges, on its first EAGAIN: most jobs (responses
    /// smaller than the socket's buffer) end without one and never pay the two epoll_ctl calls.
    /// Adding reports the socket's state at once, so a socket that became writable between the
    /// EAGAIN and the add still gets its event.
    fn register(&mut self, id: u64) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let events = (libc::EPOLLOUT | libc::EPOLLET) as u32;
        match self.epoll.add(job.socket.as_raw_fd(), events, id) {
            Ok(()) => job.registered = true,
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
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

    fn enqueue(&mut self, job: Job) {
        let (id, key) = (job.id, job.key);
        self.jobs.insert(id, job);
        let queue = self.queues.entry(key).or_default();
        queue.push_back(id);
        if queue.len() == 1 {
            self.activate(id);
        }
    }

    /// Makes a job its socket's active job: given a turn (registered with epoll only if it
    /// meets a full socket buffer, see `register`).
    fn activate(&mut self, id: u64) {
        if self.jobs.contains_key(&id) {
            self.ready.push_back(id);
        }
    }

    /// Ends a job: unregisters and closes its socket fd, reports it, and starts the socket's
    /// next job if this was the active one.
    fn finish(&mut self, id: u64, result: Result<(), TransferError>) {
        let Some(job) = self.jobs.remove(&id) else {
            return;
        };
        if job.registered {
            let _ = self.epoll.delete(job.socket.as_raw_fd());
        }
        let (key, bytes_sent) = (job.key, job.bytes_sent);
        drop(job);
        let result = if self.shared.inbox().live.remove(&id) {
            result
        } else {
            Err(TransferError::Cancelled)
        };
        (self.on_complete)(Completion {
            job: id,
            bytes_sent,
            result,
        });

        let Some(queue) = self.queues.get_mut(&key) else {
            return;
        };
        let was_active = queue.front() == Some(&id);
        queue.retain(|&queued| queued != id);
        match queue.front().copied() {
            None => {
                self.queues.remove(&key);
            }
            Some(next) if was_active => self.activate(next),
            Some(_) => {}
        }
    }
}

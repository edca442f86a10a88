//! ferrolog's zero-copy transfer engine: writes byte strings and ranges of log segment files to
//! non-blocking sockets (a Node `net.Socket`'s fd) with sendmsg and sendfile(2).
//!
//! # Design
//!
//! - **One thread of its own.** `TransferEngine::new` spawns one thread that runs an epoll
//!   loop (Linux). Nothing runs on libuv's small shared thread pool, and the caller's thread
//!   never blocks: `submit` only validates, dups the fd and pushes the job into a locked inbox.
//!   It writes the eventfd that wakes the thread only when the thread sleeps and the job's
//!   socket has no job before it (a job queued behind another starts when that one ends, and the
//!   thread is awake then anyway). Completions are delivered by calling `on_complete` on the
//!   engine thread, exactly once per accepted job, gathered over a round of turns and delivered
//!   just before the thread waits again: the caller's thread is woken once per round, not per
//!   job, and not while this thread still has sending to do.
//! - **Inline writes.** A job of at most `inline_bytes` (default 64 KiB) for a socket with no
//!   job queued, whose file ranges are all in the page cache (cachestat(2)), is written by
//!   `submit` itself, on the caller's thread, with the same non-blocking calls: the socket
//!   cannot block it and no page has to come from disk, so the caller's thread does not wait
//!   (a page evicted between the check and the send would be read from disk on that thread:
//!   a narrow race, at most `inline_bytes`). `submit` then says `Sent` and no completion follows. What the socket does not take
//!   becomes a job of the engine thread (`Queued`), and jobs submitted for that socket from
//!   other threads meanwhile are held and queued after it. Small Fetch responses, the common
//!   case, so cost no thread hand-off (two wake-ups that are most of a small fetch's latency
//!   through the engine); large ones, and any that would read from disk, go to the thread.
//! - **Writing.** A job's parts are written in order. Consecutive byte parts go out in one
//!   `sendmsg` (gather) with `MSG_NOSIGNAL`, plus `MSG_MORE` when file data follows so a small
//!   header is not sent as a packet of its own. File parts go out with `sendfile` at an explicit
//!   offset (the file position is never used, so jobs can share a file), looping on partial
//!   sends. A return of 0 before the range ends means the file was truncated: `ShortFile`.
//! - **Waiting.** The socket is non-blocking. On EAGAIN the job is marked blocked and, on its
//!   socket's first EAGAIN, the socket is registered edge-triggered for EPOLLOUT (sockets that
//!   never fill their buffer, most, never touch epoll); the EAGAIN guarantees the next writable
//!   edge, which puts the socket's active job back in the ready queue. The registration stays
//!   while the socket has jobs queued. A sendfile that sends less than asked is followed by a
//!   poll of the socket rather than another sendfile: a full socket is then blocked at once
//!   (the poll arms the edge as EAGAIN would), without reading the next pages into the splice
//!   pipe only to drop them.
//! - **Fairness.** Ready jobs take turns round-robin; a turn sends at most `chunk_bytes`
//!   (default 1 MiB) while another job waits for its turn, so one large transfer cannot starve
//!   the others (alone, a job sends until done or blocked).
//! - **Ordering.** Jobs of one socket (identified by the socket's inode, whatever fd number
//!   the caller passed) form a FIFO: only the front job is active, the next starts when it ends,
//!   however it ends (success, error, cancel).
//! - **fd lifetime.** The socket fd is dup'ed at submit, so the caller may close its fd and the
//!   number may be reused without the job writing elsewhere. A socket's queue keeps the dup of
//!   its first job (later jobs' dups are closed on arrival) and removes it from epoll and closes
//!   it when its last job ends, before that job's completion is delivered: once a socket's jobs
//!   have all ended, the engine holds nothing of it. A file part holds an
//!   `Arc<File>`, so a segment deleted by retention meanwhile is still read to the end.
//! - **Errors** are per job (`TransferError`, each with a `code()`): EPIPE/ECONNRESET are
//!   `PeerClosed`, a cancelled job `Cancelled`, other errnos `Io`. sendfile has no
//!   MSG_NOSIGNAL, so the engine thread blocks SIGPIPE (Node ignores it anyway).
//! - **Cancel and shutdown.** `cancel` removes the job from the set of live jobs under the
//!   inbox lock and returns true, or returns false if the engine thread already took it out to
//!   complete it: the caller's answer and the completion always agree. `shutdown` (also on
//!   drop) refuses new jobs, ends pending ones with `EngineClosed`, and joins the thread.
mod engine;
mod error;
mod job;
mod sys;
mod worker;

#[cfg(test)]
mod tests;

pub use crate::engine::{
    Completion, Submitted, TransferEngine, TransferOptions, DEFAULT_CHUNK_BYTES,
    DEFAULT_INLINE_BYTES,
};
pub use crate::error::TransferError;
pub use crate::job::Part;

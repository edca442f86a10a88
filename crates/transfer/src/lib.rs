//! ferrolog's zero-copy transfer engine: writes byte strings and ranges of log segment files to
//! non-blocking sockets (a Node `net.Socket`'s fd) with sendmsg and sendfile(2).
//!
//! # Design
//!
//! - **One thread of its own.** `TransferEngine::new` spawns one thread that runs an epoll
//!   loop (Linux). Nothing runs on libuv's small shared thread pool, and the caller's thread
//!   never blocks: `submit` only validates, dups the fd, pushes the job into a locked inbox and
//!   writes an eventfd that wakes the thread. Completions are delivered by calling
//!   `on_complete` on the engine thread, exactly once per accepted job.
//! - **Writing.** A job's parts are written in order. Consecutive byte parts go out in one
//!   `sendmsg` (gather) with `MSG_NOSIGNAL`, plus `MSG_MORE` when file data follows so a small
//!   header is not sent as a packet of its own. File parts go out with `sendfile` at an explicit
//!   offset (the file position is never used, so jobs can share a file), looping on partial
//!   sends. A return of 0 before the range ends means the file was truncated: `ShortFile`.
//! - **Waiting.** The socket is non-blocking. On EAGAIN the job is marked blocked and, on its
//!   first EAGAIN, registered edge-triggered for EPOLLOUT (a job that never fills the socket's
//!   buffer, most responses, never touches epoll); the EAGAIN guarantees the next writable
//!   edge, which puts it back in the ready queue.
//! - **Fairness.** Ready jobs take turns round-robin; a turn sends at most `chunk_bytes`
//!   (default 1 MiB), so one large transfer cannot starve the others.
//! - **Ordering.** Jobs of one socket (identified by the socket's inode, whatever fd number
//!   the caller passed) form a FIFO: only the front job is active, the next starts when it ends,
//!   however it ends (success, error, cancel).
//! - **fd lifetime.** The socket fd is dup'ed at submit, so the caller may close its fd and the
//!   number may be reused without the job writing elsewhere; the dup is removed from epoll and
//!   closed when the job ends, before its completion is delivered. A file part holds an
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

pub use crate::engine::{Completion, TransferEngine, TransferOptions, DEFAULT_CHUNK_BYTES};
pub use crate::error::TransferError;
pub use crate::job::Part;

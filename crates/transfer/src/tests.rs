//! The engine over real sockets (Unix socket pairs and loopback TCP) and real temp files.
use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::{Completion, Part, Submitted, TransferEngine, TransferError, TransferOptions};

const MIB: usize = 1 << 20;
const WAIT: Duration = Duration::from_secs(60);

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i * 31 + seed as usize) % 251) as u8)
        .collect()
}

fn temp_file(content: &[u8]) -> Arc<File> {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(content).unwrap();
    Arc::new(file)
}

/// An engine that never writes inline: every job goes through its thread.
fn engine(chunk_bytes: u64) -> (TransferEngine, Receiver<Completion>) {
    engine_with(TransferOptions {
        chunk_bytes,
        inline_bytes: 0,
    })
}

fn engine_with(options: TransferOptions) -> (TransferEngine, Receiver<Completion>) {
    let (tx, rx) = channel();
    let engine = TransferEngine::new(options, move |c| {
        let _ = tx.send(c);
    })
    .unwrap();
    (engine, rx)
}

/// The id of a job the engine thread runs (the test engines never write inline).
fn queued(submitted: Submitted) -> u64 {
    match submitted {
        Submitted::Queued(id) => id,
        Submitted::Sent(n) => panic!("written inline ({n} bytes), a queued job was expected"),
    }
}

/// Submits a job that must be queued (not written inline) and returns its id.
fn submit_queued(engine: &TransferEngine, socket: &impl AsRawFd, parts: Vec<Part>) -> u64 {
    queued(engine.submit(socket.as_raw_fd(), parts).unwrap())
}

/// A non-blocking sending end and a thread reading the other end to EOF.
fn unix_pair(read_delay: Duration) -> (UnixStream, JoinHandle<Vec<u8>>) {
    let (sender, mut receiver) = UnixStream::pair().unwrap();
    sender.set_nonblocking(true).unwrap();
    let reader = thread::spawn(move || {
        thread::sleep(read_delay);
        let mut out = Vec::new();
        receiver.read_to_end(&mut out).unwrap();
        out
    });
    (sender, reader)
}

fn file_part(file: &Arc<File>, offset: u64, len: u64) -> Part {
    Part::File {
        file: file.clone(),
        offset,
        len,
    }
}

#[test]
fn bytes_file_bytes_arrive_exactly_over_tcp() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let sender = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut receiver, _) = listener.accept().unwrap();
    sender.set_nonblocking(true).unwrap();
    let reader = thread::spawn(move || {
        let mut out = Vec::new();
        receiver.read_to_end(&mut out).unwrap();
        out
    });
    let content = pattern(3 * MIB + 17, 1);
    let file = temp_file(&content);
    let (engine, rx) = engine(1 << 20);
    let parts = vec![
        Part::Bytes(b"head".to_vec()),
        Part::Bytes(b"er:".to_vec()),
        file_part(&file, 5, 2 * MIB as u64),
        Part::Bytes(b"trailer".to_vec()),
    ];
    let id = submit_queued(&engine, &sender, parts);
    let done = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(
        done,
        Completion {
            job: id,
            bytes_sent: 7 + 2 * MIB as u64 + 7,
            result: Ok(())
        }
    );
    drop(sender);
    let mut expected = b"header:".to_vec();
    expected.extend_from_slice(&content[5..5 + 2 * MIB]);
    expected.extend_from_slice(b"trailer");
    assert!(reader.join().unwrap() == expected);
}

#[test]
fn a_large_file_through_a_slow_reader_arrives_exactly() {
    let content = pattern(64 * MIB, 7);
    let file = temp_file(&content);
    let (sender, mut receiver) = UnixStream::pair().unwrap();
    sender.set_nonblocking(true).unwrap();
    let reader = thread::spawn(move || {
        let mut out = Vec::with_capacity(64 * MIB);
        let mut buf = vec![0u8; 64 * 1024];
        let mut reads = 0;
        loop {
            let n = receiver.read(&mut buf).unwrap();
            if n == 0 {
                return out;
            }
            out.extend_from_slice(&buf[..n]);
            reads += 1;
            if reads % 64 == 0 {
                thread::sleep(Duration::from_millis(2));
            }
        }
    });
    let (engine, rx) = engine(1 << 20);
    let id = submit_queued(
        &engine,
        &sender,
        vec![file_part(&file, 0, content.len() as u64)],
    );
    let done = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(
        (done.job, done.bytes_sent, done.result),
        (id, content.len() as u64, Ok(()))
    );
    drop(sender);
    assert!(reader.join().unwrap() == content);
}

#[test]
fn peer_closing_mid_transfer_ends_the_job_with_peer_closed() {
    let file = temp_file(&pattern(32 * MIB, 3));
    let (sender, mut receiver) = UnixStream::pair().unwrap();
    sender.set_nonblocking(true).unwrap();
    let (engine, rx) = engine(1 << 20);
    let id = submit_queued(&engine, &sender, vec![file_part(&file, 0, 32 * MIB as u64)]);
    let mut buf = vec![0u8; MIB];
    receiver.read_exact(&mut buf).unwrap();
    drop(receiver);
    let done = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(done.job, id);
    assert!(
        matches!(done.result, Err(TransferError::PeerClosed(_))),
        "{:?}",
        done.result
    );
    assert_eq!(done.result.unwrap_err().code(), "PEER_CLOSED");
    assert!(done.bytes_sent >= MIB as u64 && done.bytes_sent < 32 * MIB as u64);

    // The engine goes on serving other sockets.
    let (other, reader) = unix_pair(Duration::ZERO);
    submit_queued(&engine, &other, vec![Part::Bytes(b"still here".to_vec())]);
    assert_eq!(rx.recv_timeout(WAIT).unwrap().result, Ok(()));
    drop(other);
    assert_eq!(reader.join().unwrap(), b"still here");
}

#[test]
fn a_file_shorter_than_the_range_is_short_file() {
    let file = temp_file(&pattern(100, 0));
    let (sender, reader) = unix_pair(Duration::ZERO);
    let (engine, rx) = engine(1 << 20);
    submit_queued(&engine, &sender, vec![file_part(&file, 40, 200)]);
    let done = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(
        done.result,
        Err(TransferError::ShortFile {
            offset: 40,
            len: 200,
            sent: 60
        })
    );
    assert_eq!(done.result.as_ref().unwrap_err().code(), "SHORT_FILE");
    assert_eq!(done.bytes_sent, 60);
    drop(sender);
    assert_eq!(reader.join().unwrap(), pattern(100, 0)[40..].to_vec());
}

#[test]
fn cancel_ends_the_job_and_the_sockets_next_job_still_runs() {
    let file = temp_file(&pattern(16 * MIB, 9));
    let (sender, mut receiver) = UnixStream::pair().unwrap();
    sender.set_nonblocking(true).unwrap();
    let (engine, rx) = engine(1 << 20);
    let big = submit_queued(&engine, &sender, vec![file_part(&file, 0, 16 * MIB as u64)]);
    let next = submit_queued(&engine, &sender, vec![Part::Bytes(b"tail".to_vec())]);
    thread::sleep(Duration::from_millis(50)); // the first job fills the socket buffer and waits
    assert!(engine.cancel(big));
    assert!(!engine.cancel(big));
    let done = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(
        (done.job, done.result.clone()),
        (big, Err(TransferError::Cancelled))
    );
    assert!(done.bytes_sent < 16 * MIB as u64);
    let reader = thread::spawn(move || {
        let mut out = Vec::new();
        receiver.read_to_end(&mut out).unwrap();
        out
    });
    let second = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(
        (second.job, second.bytes_sent, second.result),
        (next, 4, Ok(()))
    );
    assert!(!engine.cancel(next));
    drop(sender);
    let received = reader.join().unwrap();
    assert_eq!(received.len() as u64, done.bytes_sent + 4);
    assert!(received.ends_with(b"tail"));
}

#[test]
fn jobs_on_one_socket_run_in_submission_order() {
    let content = pattern(4 * MIB, 5);
    let file = temp_file(&content);
    let (sender, reader) = unix_pair(Duration::from_millis(20));
    let (engine, rx) = engine(64 * 1024);
    // A second fd of the same socket must queue behind the first, too.
    let same_socket = sender.try_clone().unwrap();
    let first = submit_queued(
        &engine,
        &sender,
        vec![file_part(&file, 0, content.len() as u64)],
    );
    let second = submit_queued(&engine, &same_socket, vec![Part::Bytes(b"second".to_vec())]);
    let third = submit_queued(&engine, &sender, vec![file_part(&file, 0, 10)]);
    let order: Vec<u64> = (0..3).map(|_| rx.recv_timeout(WAIT).unwrap().job).collect();
    assert_eq!(order, vec![first, second, third]);
    drop((sender, same_socket));
    let mut expected = content.clone();
    expected.extend_from_slice(b"second");
    expected.extend_from_slice(&content[..10]);
    assert!(reader.join().unwrap() == expected);
}

#[test]
fn many_sockets_are_served_concurrently() {
    let content = pattern(8 * MIB, 11);
    let file = temp_file(&content);
    let (engine, rx) = engine(256 * 1024);
    let mut pairs = Vec::new();
    for i in 0..16u64 {
        let (sender, reader) = unix_pair(Duration::from_millis(5));
        let offset = i * 100_000;
        let parts = vec![
            Part::Bytes(i.to_be_bytes().to_vec()),
            file_part(&file, offset, 2 * MIB as u64),
        ];
        let id = submit_queued(&engine, &sender, parts);
        pairs.push((id, i, offset, sender, reader));
    }
    let mut done: Vec<Completion> = (0..16).map(|_| rx.recv_timeout(WAIT).unwrap()).collect();
    done.sort_by_key(|c| c.job);
    for ((id, i, offset, sender, reader), completion) in pairs.into_iter().zip(done) {
        assert_eq!((completion.job, completion.result), (id, Ok(())));
        drop(sender);
        let mut expected = i.to_be_bytes().to_vec();
        expected.extend_from_slice(&content[offset as usize..offset as usize + 2 * MIB]);
        assert!(reader.join().unwrap() == expected, "socket {i}");
    }
}

#[test]
fn shutdown_ends_pending_jobs_with_engine_closed() {
    let file = temp_file(&pattern(8 * MIB, 2));
    let (sender, _receiver) = UnixStream::pair().unwrap(); // never read: the job stays pending
    sender.set_nonblocking(true).unwrap();
    let (engine, rx) = engine(1 << 20);
    let a = submit_queued(&engine, &sender, vec![file_part(&file, 0, 8 * MIB as u64)]);
    let b = submit_queued(&engine, &sender, vec![Part::Bytes(b"queued".to_vec())]);
    thread::sleep(Duration::from_millis(20));
    engine.shutdown();
    let ends: Vec<(u64, Result<(), TransferError>)> =
        rx.try_iter().map(|c| (c.job, c.result)).collect();
    assert_eq!(
        ends,
        vec![
            (a, Err(TransferError::EngineClosed)),
            (b, Err(TransferError::EngineClosed))
        ]
    );
    assert_eq!(
        engine.submit(sender.as_raw_fd(), vec![]),
        Err(TransferError::EngineClosed)
    );
    assert!(!engine.cancel(a));
    engine.shutdown();
}

#[test]
fn the_socket_fd_may_be_closed_after_submit() {
    let content = pattern(2 * MIB, 4);
    let file = temp_file(&content);
    let (sender, reader) = unix_pair(Duration::from_millis(20));
    let (engine, rx) = engine(1 << 20);
    submit_queued(
        &engine,
        &sender,
        vec![file_part(&file, 0, content.len() as u64)],
    );
    drop(sender); // the engine's own dup keeps the socket open until the job ends
    assert_eq!(rx.recv_timeout(WAIT).unwrap().result, Ok(()));
    assert!(reader.join().unwrap() == content);
}

#[test]
fn bad_sockets_are_refused() {
    let (engine, _rx) = engine(1 << 20);
    let file = tempfile::tempfile().unwrap();
    let code = |fd| engine.submit(fd, vec![]).map(queued).unwrap_err().code();
    assert_eq!(code(-1), "INVALID_ARGUMENT");
    assert_eq!(code(file.as_raw_fd()), "INVALID_ARGUMENT");
    let (blocking, _other) = UnixStream::pair().unwrap();
    assert_eq!(code(blocking.as_raw_fd()), "INVALID_ARGUMENT");
}

#[test]
fn an_empty_job_completes() {
    let (sender, _receiver) = UnixStream::pair().unwrap();
    sender.set_nonblocking(true).unwrap();
    let (engine, rx) = engine(1 << 20);
    let id = submit_queued(&engine, &sender, vec![Part::Bytes(Vec::new())]);
    assert_eq!(
        rx.recv_timeout(WAIT).unwrap(),
        Completion {
            job: id,
            bytes_sent: 0,
            result: Ok(())
        }
    );
}

#[test]
fn jobs_queued_behind_a_blocked_job_all_run_in_order_and_then_release_the_socket() {
    // A socket's jobs share one fd and one epoll registration while any is queued, and a job
    // submitted for a socket that already has one does not wake the engine: it must still
    // start when the one before it ends. Half the jobs are submitted as completions arrive,
    // while the active job waits for a slow reader.
    let content = pattern(8 * MIB, 13);
    let file = temp_file(&content);
    let (sender, reader) = unix_pair(Duration::from_millis(30));
    let (engine, rx) = engine(1 << 20);
    let job_bytes = 256 * 1024;
    let jobs = 48usize;
    let part = |k: usize| {
        let offset = ((k * 7 * job_bytes) % (content.len() - job_bytes)) as u64;
        vec![
            Part::Bytes((k as u32).to_be_bytes().to_vec()),
            file_part(&file, offset, job_bytes as u64),
        ]
    };
    let mut ids = Vec::new();
    for k in 0..jobs / 2 {
        ids.push(submit_queued(&engine, &sender, part(k)));
    }
    let mut order = Vec::new();
    while order.len() < jobs {
        let done = rx.recv_timeout(WAIT).unwrap();
        assert_eq!(done.result, Ok(()));
        assert_eq!(done.bytes_sent, 4 + job_bytes as u64);
        order.push(done.job);
        if ids.len() < jobs {
            ids.push(submit_queued(&engine, &sender, part(ids.len())));
        }
    }
    assert_eq!(order, ids);
    // Every job has ended: the engine holds no fd of the socket, so dropping ours is EOF.
    drop(sender);
    let mut expected = Vec::new();
    for k in 0..jobs {
        let offset = (k * 7 * job_bytes) % (content.len() - job_bytes);
        expected.extend_from_slice(&(k as u32).to_be_bytes());
        expected.extend_from_slice(&content[offset..offset + job_bytes]);
    }
    assert!(reader.join().unwrap() == expected);
}

#[test]
fn a_socket_whose_jobs_all_ended_takes_new_jobs_again() {
    // The queue (its fd and registration) goes when its last job ends and is made anew.
    let content = pattern(4 * MIB, 17);
    let file = temp_file(&content);
    let (sender, reader) = unix_pair(Duration::from_millis(20));
    let (engine, rx) = engine(1 << 20);
    for round in 0..5u64 {
        let id = submit_queued(
            &engine,
            &sender,
            vec![file_part(&file, round * 1000, 2 * MIB as u64)],
        );
        let done = rx.recv_timeout(WAIT).unwrap();
        assert_eq!((done.job, done.result), (id, Ok(())));
    }
    drop(sender);
    let mut expected = Vec::new();
    for round in 0..5usize {
        expected.extend_from_slice(&content[round * 1000..round * 1000 + 2 * MIB]);
    }
    assert!(reader.join().unwrap() == expected);
}

/// An engine with the default options: small cached jobs are written on the caller's thread.
fn inline_engine() -> (TransferEngine, Receiver<Completion>) {
    engine_with(TransferOptions::default())
}

#[test]
fn a_small_cached_job_for_an_idle_socket_is_written_at_once() {
    let content = pattern(40_000, 21);
    let file = temp_file(&content); // just written: in the page cache
    let (sender, reader) = unix_pair(Duration::ZERO);
    let (engine, rx) = inline_engine();
    let parts = vec![
        Part::Bytes(b"head".to_vec()),
        file_part(&file, 100, 20_000),
        Part::Bytes(b"tail".to_vec()),
    ];
    assert_eq!(
        engine.submit(sender.as_raw_fd(), parts).unwrap(),
        Submitted::Sent(20_008)
    );
    // No completion for it: the caller had the answer at once.
    assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
    drop(sender);
    let mut expected = b"head".to_vec();
    expected.extend_from_slice(&content[100..20_100]);
    expected.extend_from_slice(b"tail");
    assert!(reader.join().unwrap() == expected);
}

#[test]
fn an_inline_write_that_meets_a_full_socket_hands_the_rest_to_the_engine() {
    let content = pattern(60_000, 22);
    let file = temp_file(&content);
    let (sender, mut receiver) = UnixStream::pair().unwrap();
    sender.set_nonblocking(true).unwrap();
    // Fill the socket's buffer so the inline write gets (almost) nothing in.
    let mut filler = 0usize;
    let block = [7u8; 4096];
    loop {
        match (&sender).write(&block) {
            Ok(n) => filler += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("{e}"),
        }
    }
    let (engine, rx) = inline_engine();
    let id = queued(
        engine
            .submit(
                sender.as_raw_fd(),
                vec![Part::Bytes(b"x".to_vec()), file_part(&file, 0, 60_000)],
            )
            .unwrap(),
    );
    // A small job behind it is queued too (the socket has a job), and keeps its place.
    let next = queued(
        engine
            .submit(sender.as_raw_fd(), vec![Part::Bytes(b"next".to_vec())])
            .unwrap(),
    );
    let reader = thread::spawn(move || {
        let mut out = Vec::new();
        receiver.read_to_end(&mut out).unwrap();
        out
    });
    let first = rx.recv_timeout(WAIT).unwrap();
    assert_eq!((first.job, first.result), (id, Ok(())));
    // bytes_sent counts the whole job, the part written inline included.
    assert_eq!(first.bytes_sent, 60_001);
    assert_eq!(rx.recv_timeout(WAIT).unwrap().job, next);
    drop(sender);
    let received = reader.join().unwrap();
    assert_eq!(received.len(), filler + 60_005);
    assert!(received[..filler].iter().all(|&b| b == 7));
    assert_eq!(received[filler], b'x');
    assert!(received[filler + 1..filler + 60_001] == content[..]);
    assert!(received.ends_with(b"next"));
}

#[test]
fn a_job_whose_pages_are_not_cached_goes_to_the_engine_thread() {
    // A file on disk, its pages dropped from the page cache: writing it inline could wait
    // for the disk on the caller's thread.
    let content = pattern(32 * 1024, 23);
    // Under the workspace's target/ (on disk), not the temp dir (which may be tmpfs).
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/tmp");
    std::fs::create_dir_all(dir).unwrap();
    let mut file = tempfile::tempfile_in(dir).unwrap();
    file.write_all(&content).unwrap();
    file.sync_all().unwrap();
    // SAFETY: advice only; no memory involved.
    let advised = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(advised, 0);
    let file = Arc::new(file);
    assert!(!crate::sys::is_cached(
        file.as_raw_fd(),
        0,
        content.len() as u64
    ));
    let (sender, reader) = unix_pair(Duration::ZERO);
    let (engine, rx) = inline_engine();
    let id = queued(
        engine
            .submit(
                sender.as_raw_fd(),
                vec![file_part(&file, 0, content.len() as u64)],
            )
            .unwrap(),
    );
    let done = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(
        (done.job, done.bytes_sent, done.result),
        (id, content.len() as u64, Ok(()))
    );
    // Read once by the engine: cached now, so the next one is written at once.
    assert!(crate::sys::is_cached(
        file.as_raw_fd(),
        0,
        content.len() as u64
    ));
    assert_eq!(
        engine
            .submit(sender.as_raw_fd(), vec![file_part(&file, 0, 10)])
            .unwrap(),
        Submitted::Sent(10)
    );
    drop(sender);
    let mut expected = content.clone();
    expected.extend_from_slice(&content[..10]);
    assert!(reader.join().unwrap() == expected);
}

#[test]
fn an_inline_write_to_a_closed_peer_is_peer_closed() {
    let file = temp_file(&pattern(1000, 24));
    let (sender, receiver) = UnixStream::pair().unwrap();
    sender.set_nonblocking(true).unwrap();
    drop(receiver);
    let (engine, rx) = inline_engine();
    let err = engine
        .submit(sender.as_raw_fd(), vec![file_part(&file, 0, 1000)])
        .unwrap_err();
    assert!(matches!(err, TransferError::PeerClosed(_)), "{err:?}");
    assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
    // The socket is not left reserved: the next job is tried (and fails) the same way.
    let again = engine.submit(sender.as_raw_fd(), vec![Part::Bytes(b"x".to_vec())]);
    assert!(
        matches!(again, Err(TransferError::PeerClosed(_))),
        "{again:?}"
    );
}

#[test]
fn threads_submitting_to_one_socket_never_interleave_a_jobs_bytes() {
    // Which path a job takes depends on timing; five rounds make every one of them likely.
    for _ in 0..5 {
        threads_submitting_to_one_socket_round();
    }
}

fn threads_submitting_to_one_socket_round() {
    // Four threads submit small jobs (written inline when the socket is idle, held behind an
    // inline write of another thread, or queued behind the engine's job) to one socket read
    // slowly at first: every job's bytes must arrive contiguous, each thread's in its order.
    let content = pattern(64 * 1024, 25);
    let file = temp_file(&content);
    let (sender, reader) = unix_pair(Duration::ZERO);
    let (engine, rx) = inline_engine();
    let engine = Arc::new(engine);
    let per_thread = 400u32;
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let (engine, file) = (engine.clone(), file.clone());
            let fd = sender.as_raw_fd();
            thread::spawn(move || {
                let mut queued = 0;
                for seq in 0..per_thread {
                    let len = 1000 + (seq as u64 * 37 + t as u64 * 11) % 3000;
                    let mut header = Vec::new();
                    header.extend_from_slice(&t.to_be_bytes());
                    header.extend_from_slice(&seq.to_be_bytes());
                    header.extend_from_slice(&(len as u32).to_be_bytes());
                    let parts = vec![Part::Bytes(header), file_part(&file, seq as u64 * 100, len)];
                    match engine.submit(fd, parts).unwrap() {
                        Submitted::Sent(n) => assert_eq!(n, 12 + len),
                        Submitted::Queued(_) => queued += 1,
                    }
                }
                queued
            })
        })
        .collect();
    let queued: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    for _ in 0..queued {
        assert_eq!(rx.recv_timeout(WAIT).unwrap().result, Ok(()));
    }
    drop(sender);
    let received = reader.join().unwrap();
    let mut next = [0u32; 4];
    let mut at = 0;
    while at < received.len() {
        let word = |i: usize| u32::from_be_bytes(received[at + i..at + i + 4].try_into().unwrap());
        let (t, seq, len) = (word(0) as usize, word(4), word(8) as usize);
        assert!(t < 4, "a job's header expected at byte {at}");
        assert_eq!(seq, next[t], "thread {t}'s jobs out of order at byte {at}");
        next[t] += 1;
        let body = &received[at + 12..at + 12 + len];
        let from = seq as usize * 100;
        assert!(body == &content[from..from + len], "job {t}/{seq} damaged");
        at += 12 + len;
    }
    assert_eq!(next, [per_thread; 4]);
}

#[test]
fn a_cancel_racing_the_failure_of_its_job_never_leaves_the_engine_deaf() {
    // A blocked job whose peer goes away is cancelled at the same time: the thread may take a
    // cancel for a job it has just ended, with nothing left to run. It must still be woken by
    // the next submission (it used to sleep believing itself awake, and the next socket's job
    // waited in the inbox until something else woke the thread).
    let file = temp_file(&pattern(4 * MIB, 26));
    let (engine, rx) = engine(1 << 20);
    let engine = Arc::new(engine);
    for round in 0..300 {
        let (sender, receiver) = UnixStream::pair().unwrap();
        sender.set_nonblocking(true).unwrap();
        let big = submit_queued(&engine, &sender, vec![file_part(&file, 0, 4 * MIB as u64)]);
        // Let it fill the buffer and block, sometimes.
        if round % 2 == 0 {
            thread::sleep(Duration::from_micros(200));
        }
        drop(receiver);
        engine.cancel(big);
        let done = rx.recv_timeout(WAIT).unwrap();
        assert_eq!(done.job, big);
        // A fresh socket's job must run now, with no other wake-up to rescue it.
        let (next, reader) = unix_pair(Duration::ZERO);
        let id = submit_queued(&engine, &next, vec![Part::Bytes(b"after".to_vec())]);
        let after = rx
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("round {round}: the engine did not start the next job"));
        assert_eq!((after.job, after.result), (id, Ok(())));
        drop(next);
        assert_eq!(reader.join().unwrap(), b"after");
        drop(sender);
    }
}

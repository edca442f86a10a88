//! The transfer engine driven from Rust, with no JavaScript around it: what the engine itself
//! costs per byte next to `sendfile_loop`.
//!
//!     cargo run --release -p ferrolog-transfer --example engine_loop -- <file> <host:port> <slice_bytes> <total_bytes> [in_flight] [slices_per_job]
//!
//! Connects, submits jobs of `slices_per_job` ranges of `slice_bytes` until `total_bytes` are
//! sent, keeping `in_flight` jobs queued, and prints `{"bytes":N,"cpuSeconds":X,"wallSeconds":Y}`.
use std::fs::File;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::process::exit;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

use ferrolog_transfer::{Part, Submitted, TransferEngine, TransferOptions};

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes only into `usage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: engine_loop <file> <host:port> <slice_bytes> <total_bytes> [in_flight] [slices_per_job]");
        exit(2);
    }
    let number = |s: &str| {
        s.parse::<u64>()
            .unwrap_or_else(|_| panic!("not a number: {s}"))
    };
    let (slice, total) = (number(&args[2]), number(&args[3]));
    let in_flight = args.get(4).map(|s| number(s)).unwrap_or(1).max(1);
    let per_job = args.get(5).map(|s| number(s)).unwrap_or(1).max(1);
    let file = Arc::new(File::open(&args[0]).unwrap_or_else(|e| panic!("open {}: {e}", args[0])));
    let file_len = file.metadata().expect("stat").len();
    let socket =
        TcpStream::connect(&args[1]).unwrap_or_else(|e| panic!("connect {}: {e}", args[1]));
    socket.set_nonblocking(true).expect("nonblocking");

    let (tx, rx) = mpsc::channel();
    let engine = TransferEngine::new(TransferOptions::default(), move |c| {
        let _ = tx.send(c);
    })
    .expect("engine");
    let (cpu_start, wall_start) = (cpu_seconds(), Instant::now());
    let (mut queued, mut sent, mut position, mut pending) = (0u64, 0u64, 0u64, 0u64);
    while sent < total {
        while pending < in_flight && queued < total {
            let parts = (0..per_job)
                .map(|_| {
                    let part = Part::File {
                        file: file.clone(),
                        offset: position,
                        len: slice,
                    };
                    position = (position + slice) % (file_len - file_len % slice).max(slice);
                    part
                })
                .collect();
            queued += slice * per_job;
            match engine.submit(socket.as_raw_fd(), parts).expect("submit") {
                Submitted::Sent(n) => sent += n,
                Submitted::Queued(_) => pending += 1,
            }
        }
        if pending == 0 {
            continue;
        }
        let c = rx.recv().expect("completion");
        c.result.expect("job failed");
        sent += c.bytes_sent;
        pending -= 1;
    }
    let (cpu, wall) = (
        cpu_seconds() - cpu_start,
        wall_start.elapsed().as_secs_f64(),
    );
    println!("{{\"bytes\":{sent},\"cpuSeconds\":{cpu:.6},\"wallSeconds\":{wall:.6}}}");
}

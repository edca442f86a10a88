//! The transfer engine driven from Rust, with no JavaScript around it: what the engine itself
//! costs per byte next to `sendfile_loop`.
//!
//!     cargo run --release -p ferrolog-transfer --example engine_loop -- <file> <host:port> <slice_bytes> <total_bytes> [in_flight] [slices_per_job]
//!
//! Connects, submits jobs of `slices_per_job` ranges of `slice_bytes` until `total_bytes` are
//! sent, keeping `in_flight` jobs queued, and prints `{"bytes":N,"cpuSeconds":X,"wallSeconds":Y}`.
mod common;

use std::fs::File;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::sync::Arc;

use ferrolog_transfer::{Part, Submitted, TransferEngine, TransferOptions};

const USAGE: &str =
    "engine_loop <file> <host:port> <slice_bytes> <total_bytes> [in_flight] [slices_per_job]";

fn main() {
    let args = common::args(4, USAGE);
    let number = |arg: &String| common::number(arg, USAGE);
    let (slice, total) = (number(&args[2]), number(&args[3]));
    let in_flight = args.get(4).map(number).unwrap_or(1).max(1);
    let per_job = args.get(5).map(number).unwrap_or(1).max(1);
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
    let meter = common::Meter::start();
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
    meter.report(sent);
}

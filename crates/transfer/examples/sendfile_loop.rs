//! The benchmark's baseline: the minimal blocking sendfile loop, with no engine around it.
//!
//!     cargo run --release -p ferrolog-transfer --example sendfile_loop -- <file> <host:port> <slice_bytes> <total_bytes>
//!
//! Connects, sends the file `slice_bytes` at a time from its start, around again at its end,
//! with blocking sendfile(2) until `total_bytes` are sent (walking the file as the other cases
//! do: sending one slice again and again keeps its page-cache entries in the CPU's caches, which
//! made this loop look 1.5x cheaper than anything that reads a 256 MiB file), and prints `{"bytes":N,"cpuSeconds":X,"wallSeconds":Y}` (CPU
//! time of this process, user + system, from getrusage).
mod common;

use std::fs::File;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

const USAGE: &str = "sendfile_loop <file> <host:port> <slice_bytes> <total_bytes>";

fn main() {
    let args = common::args(4, USAGE);
    let (slice, total) = (
        common::number(&args[2], USAGE),
        common::number(&args[3], USAGE),
    );
    assert!(slice > 0, "slice_bytes must be positive");
    let file = File::open(&args[0]).unwrap_or_else(|e| panic!("open {}: {e}", args[0]));
    let slices = file.metadata().map_or(0, |m| m.len()) / slice;
    assert!(slices > 0, "{} is shorter than {slice} bytes", args[0]);
    let socket =
        TcpStream::connect(&args[1]).unwrap_or_else(|e| panic!("connect {}: {e}", args[1]));

    let meter = common::Meter::start();
    let (mut sent, mut next) = (0u64, 0u64);
    while sent < total {
        let start = (next % slices * slice) as libc::off_t;
        next += 1;
        let mut offset = start;
        let end = start + slice.min(total - sent) as libc::off_t;
        while offset < end {
            // SAFETY: `offset` is a valid off_t the call updates.
            let n = unsafe {
                libc::sendfile(
                    socket.as_raw_fd(),
                    file.as_raw_fd(),
                    &mut offset,
                    (end - offset) as usize,
                )
            };
            match n {
                n if n > 0 => sent += n as u64,
                0 => panic!("{} is shorter than {slice} bytes", args[0]),
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        panic!("sendfile: {e}");
                    }
                }
            }
        }
    }
    meter.report(sent);
}

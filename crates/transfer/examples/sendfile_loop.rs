//! The benchmark's baseline: the minimal blocking sendfile loop, with no engine around it.
//!
//!     cargo run --release -p ferrolog-transfer --example sendfile_loop -- <file> <host:port> <slice_bytes> <total_bytes>
//!
//! Connects, sends the file's first `slice_bytes` again and again with blocking sendfile(2)
//! until `total_bytes` are sent, and prints `{"bytes":N,"cpuSeconds":X,"wallSeconds":Y}` (CPU
//! time of this process, user + system, from getrusage).
use std::fs::File;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::process::exit;
use std::time::Instant;

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes only into `usage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 4 {
        eprintln!("usage: sendfile_loop <file> <host:port> <slice_bytes> <total_bytes>");
        exit(2);
    }
    let number = |s: &str| {
        s.parse::<u64>()
            .unwrap_or_else(|_| panic!("not a byte count: {s}"))
    };
    let (slice, total) = (number(&args[2]), number(&args[3]));
    assert!(slice > 0, "slice_bytes must be positive");
    let file = File::open(&args[0]).unwrap_or_else(|e| panic!("open {}: {e}", args[0]));
    let socket =
        TcpStream::connect(&args[1]).unwrap_or_else(|e| panic!("connect {}: {e}", args[1]));

    let (cpu_start, wall_start) = (cpu_seconds(), Instant::now());
    let mut sent: u64 = 0;
    while sent < total {
        let mut offset: libc::off_t = 0;
        let end = slice.min(total - sent) as libc::off_t;
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
    let (cpu, wall) = (
        cpu_seconds() - cpu_start,
        wall_start.elapsed().as_secs_f64(),
    );
    println!("{{\"bytes\":{sent},\"cpuSeconds\":{cpu:.6},\"wallSeconds\":{wall:.6}}}");
}

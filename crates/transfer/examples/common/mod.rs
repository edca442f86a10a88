//! What the benchmark examples share: their arguments and how they report.
use std::time::Instant;

/// CPU time of this process so far (user + system, every thread), from getrusage.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes only into `usage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// A byte count (or count) argument; exits with the usage line if it is not one.
pub fn number(arg: &str, usage: &str) -> u64 {
    arg.parse::<u64>().unwrap_or_else(|_| {
        eprintln!("not a number: {arg}\nusage: {usage}");
        std::process::exit(2)
    })
}

/// The arguments, at least `required` of them, or the usage line and exit 2.
pub fn args(required: usize, usage: &str) -> Vec<String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < required {
        eprintln!("usage: {usage}");
        std::process::exit(2);
    }
    args
}

/// Measures from its creation; `report` prints the one JSON line the bench reads.
pub struct Meter {
    cpu: f64,
    wall: Instant,
}

impl Meter {
    pub fn start() -> Meter {
        Meter {
            cpu: cpu_seconds(),
            wall: Instant::now(),
        }
    }

    pub fn report(&self, bytes: u64) {
        let (cpu, wall) = (cpu_seconds() - self.cpu, self.wall.elapsed().as_secs_f64());
        println!("{{\"bytes\":{bytes},\"cpuSeconds\":{cpu:.6},\"wallSeconds\":{wall:.6}}}");
    }
}

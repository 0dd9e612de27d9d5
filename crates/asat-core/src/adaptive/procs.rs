//! What every other process of the machine did since the previous reading, from
//! `/proc/[pid]/stat`: the CPUs it kept busy and its threads, for the equal share
//! ([`fair`](super::fair)).
//!
//! One reading lists `/proc` and reads each process's `stat` (a few microseconds each: about a
//! millisecond per thousand processes, once a reading: 200 ms apart by default, 100 ms for a
//! program of tasks). A process is known across readings by its pid and start time, so a pid reused
//! in between counts as a new process, judged over its life
//! ([`busy_cpus`](super::claims::busy_cpus)). Processes outside the caller's PID namespace (other
//! containers) are not listed: the share then counts fewer claimants, and the rule's other readings
//! (the wait, the free CPUs) still see the load they add.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::Read;
use std::time::Instant;

use super::fair::Process;

/// The CPU time, threads and start time of one `/proc/[pid]/stat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stat {
    /// User and system time, in clock ticks.
    pub(crate) ticks: u64,
    pub(crate) threads: usize,
    /// When the process started, in clock ticks since boot.
    pub(crate) start: u64,
}

/// The fields of a `stat` line that [`Stat`] keeps (`None` when it is malformed, and for a
/// process that has ended: a zombie, state `Z`, whose parent has not yet reaped it, or `X`).
/// The command name, in parentheses, may itself hold spaces and parentheses: the fields are
/// counted from the last `)`.
pub(crate) fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    // fields from the 3rd (state) on: utime is the 14th, stime the 15th, num_threads the
    // 20th, starttime the 22nd
    let f: Vec<&str> = rest.split_whitespace().take(20).collect();
    if matches!(f.first(), Some(&("Z" | "X"))) {
        return None;
    }
    let num = |i: usize| f.get(i - 3)?.parse::<u64>().ok();
    Some(Stat {
        ticks: num(14)?.saturating_add(num(15)?),
        threads: usize::try_from(num(20)?).ok()?,
        start: num(22)?,
    })
}

/// Readings of the other processes (see the module docs).
#[derive(Debug)]
pub(crate) struct Procs {
    me: u32,
    tick: f64,
    last: Option<(Instant, HashMap<u32, Stat>)>,
}

impl Procs {
    /// Readings of every process but the caller's.
    pub(crate) fn new() -> Self {
        Self {
            me: std::process::id(),
            tick: crate::sys::clock::tick_seconds(),
            last: None,
        }
    }

    /// Whether a reading was taken, to which the next one can be compared.
    pub(crate) fn has_read(&self) -> bool {
        self.last.is_some()
    }

    /// Every other process's pid, CPUs and threads since the previous call, a process that
    /// started since over its life ([`busy_cpus`](super::claims::busy_cpus)); `None` on the
    /// first call, or when `/proc` cannot be listed.
    pub(crate) fn sample(&mut self, now: Instant) -> Option<Vec<(u32, Process)>> {
        let stats = self.read()?;
        let boot = crate::sys::clock::since_boot();
        let (at, before) = self.last.replace((now, stats))?;
        let wall = now.saturating_duration_since(at).as_secs_f64();
        if wall <= 0.0 {
            return None;
        }
        let stats = &self.last.as_ref()?.1;
        Some(
            stats
                .iter()
                .map(|(pid, s)| {
                    let was = before
                        .get(pid)
                        .filter(|b| b.start == s.start)
                        .map_or(0, |b| b.ticks);
                    let ran = s.ticks.saturating_sub(was) as f64 * self.tick;
                    let age = boot.map_or(wall, |b| b - s.start as f64 * self.tick);
                    let cpus = super::claims::busy_cpus(ran, wall, age);
                    (
                        *pid,
                        Process {
                            cpus,
                            threads: s.threads,
                        },
                    )
                })
                .collect(),
        )
    }

    fn read(&self) -> Option<HashMap<u32, Stat>> {
        let mut stats = HashMap::new();
        let (mut path, mut buf) = (String::new(), [0u8; 1024]);
        for e in std::fs::read_dir("/proc").ok()?.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if pid == self.me {
                continue;
            }
            path.clear();
            _ = write!(path, "/proc/{pid}/stat");
            // One read of a small buffer: the fields kept come well within a `stat` line's
            // first kilobyte. A process that ended meanwhile has no file: it used no CPU since.
            let Ok(n) = File::open(&path).and_then(|mut f| f.read(&mut buf)) else {
                continue;
            };
            let text = String::from_utf8_lossy(&buf[..n]);
            if let Some(s) = parse_stat(&text) {
                stats.insert(pid, s);
            }
        }
        Some(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_stat_line_is_read_from_the_last_parenthesis() {
        let line = "4242 (a (b) c) R 1 4242 4242 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 7 0 \
                    98765 1000000 200 18446744073709551615";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                ticks: 175,
                threads: 7,
                start: 98765
            })
        );
        assert_eq!(parse_stat("4242 (x) R 1 2"), None);
        let zombie = "4243 (sleep) Z 7196 7194 6001 0 -1 4227084 77 0 0 0 3 1 0 0 20 0 1 0 \
                      3002134 0 0 18446744073709551615";
        assert_eq!(
            parse_stat(zombie),
            None,
            "ended: its parent has not reaped it yet"
        );
        assert!(parse_stat(&zombie.replace(" Z ", " S ")).is_some());
        assert_eq!(parse_stat("no parenthesis"), None);
        assert_eq!(parse_stat(""), None);
    }

    #[test]
    fn a_busy_multithreaded_process_is_seen_with_its_cpus_and_threads() {
        // This test's own process, read as another would read it: two threads spin while a
        // third reads twice.
        let mut procs = Procs::new();
        procs.me = 0;
        let t0 = Instant::now();
        assert_eq!(procs.sample(t0), None, "nothing to compare yet");
        let stop = std::sync::atomic::AtomicBool::new(false);
        let seen = std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                });
            }
            std::thread::sleep(Duration::from_millis(300));
            let seen = procs.sample(Instant::now());
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            seen
        });
        let seen = seen.expect("/proc can be read");
        let me = seen
            .iter()
            .find(|(pid, _)| *pid == std::process::id())
            .map(|p| p.1)
            .expect("this process is listed");
        // Even a loaded machine gives two spinning threads some CPU over 300 ms.
        assert!(me.threads >= 3 && me.cpus > 0.05, "{me:?}");
        assert!(seen.iter().all(|p| p.1.cpus.is_finite() && p.1.cpus >= 0.0));
    }
}

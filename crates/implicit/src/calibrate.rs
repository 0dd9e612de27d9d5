//! Calibration: what blocking and waking a thread costs on this machine.
//!
//! The paper's rules are written in units of the context-switch cost `cs`: spin at least
//! `S = 2 cs`, and stop spinning through load imbalances larger than `V = 10 cs`. This module
//! measures `cs` once per process, at first use, with a futex ping-pong between two threads
//! pinned to two different CPUs (each side blocks in `futex_wait` at once and is woken by the
//! other: half the median round trip is one block-and-wake across CPUs, what a barrier waiter
//! that blocked pays to be woken by a partner on another CPU), and the release latency (half the
//! median round trip of the same ping-pong with both sides spinning: what a spinning waiter
//! needs to see a release). If the calling thread is pinned to one CPU, the first two online
//! CPUs are used; with a single usable CPU the measurement is a same-CPU switch.
//!
//! The result is cached for the process. `ASAT_CONTEXT_SWITCH_US` (microseconds, a number
//! greater than 0 and at most 100000) overrides the measured context-switch cost, and each
//! strategy's [`Config`](crate::Config) can be given both values explicitly.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use asat_core::{CpuSet, FutexWord};

use crate::Error;

/// The environment variable that overrides the measured context-switch cost, in microseconds.
pub const CONTEXT_SWITCH_ENV: &str = "ASAT_CONTEXT_SWITCH_US";

const ENV_ALLOWED: &str = "must be a number of microseconds greater than 0 and at most 100000";

/// Bounds applied to a measured context-switch cost.
const CS_MIN: Duration = Duration::from_nanos(500);
const CS_MAX: Duration = Duration::from_millis(10);

/// Where a calibration's context-switch cost came from.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Measured with the futex ping-pong.
    Measured,
    /// Read from [`CONTEXT_SWITCH_ENV`].
    Env,
}

/// The machine's costs that the spin rules are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Calibration {
    /// Blocking a thread and waking it from another CPU: half a blocking ping-pong's round
    /// trip.
    pub context_switch: Duration,
    /// How long a spinning waiter takes to see a release: half a spinning ping-pong's round
    /// trip.
    pub release_latency: Duration,
    /// Where `context_switch` came from.
    pub source: Source,
}

static CACHED: OnceLock<Calibration> = OnceLock::new();

/// The process's calibration: measured at the first call (about 10-50 ms), then cached.
///
/// A valid [`CONTEXT_SWITCH_ENV`] replaces the measured context-switch cost. A malformed one is
/// ignored here (use [`try_calibration`] to see the error).
pub fn calibration() -> Calibration {
    *CACHED.get_or_init(|| {
        let mut c = measure();
        if let Ok(Some(cs)) = env_context_switch() {
            c.context_switch = cs;
            c.release_latency = c.release_latency.min(cs);
            c.source = Source::Env;
        }
        c
    })
}

/// Like [`calibration`], but a malformed [`CONTEXT_SWITCH_ENV`] is an error.
///
/// ```
/// let c = asat_implicit::calibrate::try_calibration()?;
/// assert!(c.context_switch > std::time::Duration::ZERO);
/// # Ok::<(), asat_implicit::Error>(())
/// ```
pub fn try_calibration() -> Result<Calibration, Error> {
    env_context_switch()?;
    Ok(calibration())
}

/// The context-switch cost given by [`CONTEXT_SWITCH_ENV`], if it is set.
pub fn env_context_switch() -> Result<Option<Duration>, Error> {
    match std::env::var(CONTEXT_SWITCH_ENV) {
        Ok(v) => parse_us(&v)
            .map(Some)
            .ok_or_else(|| Error::env(CONTEXT_SWITCH_ENV, &v, ENV_ALLOWED)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(Error::env(CONTEXT_SWITCH_ENV, "<not unicode>", ENV_ALLOWED))
        }
    }
}

/// Parses a positive number of microseconds, at most 100000.
pub(crate) fn parse_us(v: &str) -> Option<Duration> {
    let us: f64 = v.trim().parse().ok()?;
    (us > 0.0 && us <= 100_000.0).then(|| Duration::from_nanos((us * 1e3).round() as u64))
}

/// Measures afresh (not cached; about 10-50 ms, bounded by 0.5 s on a loaded machine).
pub fn measure() -> Calibration {
    let cs = ping_pong(false, 200, Duration::from_millis(300))
        .map(|rtt| rtt / 2)
        .unwrap_or(Duration::from_micros(30))
        .clamp(CS_MIN, CS_MAX);
    let release = ping_pong(true, 2000, Duration::from_millis(200))
        .map(|rtt| rtt / 2)
        .unwrap_or(Duration::from_micros(1))
        .clamp(Duration::from_nanos(50), cs);
    Calibration {
        context_switch: cs,
        release_latency: release,
        source: Source::Measured,
    }
}

/// The median round trip of a ping-pong between this thread and a helper, each waiting for the
/// other's word to move; blocking at once (`spin == false`, the notifier wakes with a futex) or
/// spinning (no system call on either side; after 1 ms a waiter yields its CPU between looks, so
/// that a machine with one free CPU still finishes). `None` when not a
/// single round trip finished (the helper could not start).
fn ping_pong(spin: bool, rounds: usize, budget: Duration) -> Option<Duration> {
    let mut cpus: Vec<usize> = CpuSet::of_current_thread()
        .map(|s| s.iter().collect())
        .unwrap_or_default();
    if cpus.len() < 2 {
        // The calling thread may be pinned to one CPU: try the machine's (a pin the kernel
        // refuses leaves that thread where it is).
        cpus = (0..crate::sys::online_cpus()).collect();
    }
    let pins = if cpus.len() >= 2 {
        Some((cpus[0], cpus[1]))
    } else {
        None
    };
    // Both sides run on helper threads, so the caller's own affinity is left alone.
    std::thread::Builder::new()
        .name("asat-calibrate".into())
        .spawn(move || {
            if let Some((a, _)) = pins {
                // Best effort: a pin the kernel refuses leaves the thread where it is.
                let _ = CpuSet::from_iter([a]).bind_current_thread();
            }
            ping_pong_on(spin, rounds, budget, pins.map(|p| p.1))
        })
        .ok()?
        .join()
        .ok()
        .flatten()
}

fn ping_pong_on(
    spin: bool,
    rounds: usize,
    budget: Duration,
    helper_cpu: Option<usize>,
) -> Option<Duration> {
    let ping = Arc::new(FutexWord::new(0));
    let pong = Arc::new(FutexWord::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let helper = {
        let (ping, pong, stop) = (Arc::clone(&ping), Arc::clone(&pong), Arc::clone(&stop));
        std::thread::Builder::new()
            .name("asat-calibrate".into())
            .spawn(move || {
                if let Some(cpu) = helper_cpu {
                    let _ = CpuSet::from_iter([cpu]).bind_current_thread();
                }
                let mut seen = 0;
                loop {
                    wait_change(&ping, seen, spin);
                    seen = ping.load(Ordering::Acquire);
                    if stop.load(Ordering::Acquire) {
                        break;
                    }
                    pong.fetch_add(1, Ordering::Release);
                    if !spin {
                        pong.wake_one();
                    }
                }
            })
            .ok()?
    };
    let warmup = rounds / 10;
    let mut rtts = Vec::with_capacity(rounds);
    let started = Instant::now();
    let mut seen = 0;
    for i in 0..rounds + warmup {
        let t = Instant::now();
        ping.fetch_add(1, Ordering::Release);
        if !spin {
            ping.wake_one();
        }
        wait_change(&pong, seen, spin);
        seen = pong.load(Ordering::Acquire);
        if i >= warmup {
            rtts.push(t.elapsed());
        }
        if started.elapsed() > budget {
            break;
        }
    }
    stop.store(true, Ordering::Release);
    ping.fetch_add(1, Ordering::Release);
    if !spin {
        ping.wake_one();
    }
    let _ = helper.join();
    if rtts.is_empty() {
        return None;
    }
    rtts.sort_unstable();
    Some(rtts[rtts.len() / 2])
}

fn wait_change(w: &FutexWord, seen: u32, spin: bool) {
    if spin {
        let t = Instant::now();
        let mut n = 0u32;
        while w.load(Ordering::Acquire) == seen {
            std::hint::spin_loop();
            n = n.wrapping_add(1);
            if n % 64 == 0 && t.elapsed() > Duration::from_millis(1) {
                std::thread::yield_now();
            }
        }
    } else {
        while w.load(Ordering::Acquire) == seen {
            w.sleep(seen);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_us_bounds() {
        assert_eq!(parse_us("30"), Some(Duration::from_micros(30)));
        assert_eq!(parse_us(" 2.5 "), Some(Duration::from_nanos(2500)));
        assert_eq!(parse_us("0"), None);
        assert_eq!(parse_us("-3"), None);
        assert_eq!(parse_us("abc"), None);
        assert_eq!(parse_us("100001"), None);
    }

    #[test]
    fn measurement_is_positive_and_bounded() {
        let c = measure();
        assert!(c.context_switch >= CS_MIN && c.context_switch <= CS_MAX);
        assert!(c.release_latency <= c.context_switch);
        assert!(c.release_latency > Duration::ZERO);
        // cached: the same value twice
        assert_eq!(calibration(), calibration());
    }
}

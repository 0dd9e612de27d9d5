//! [`Builder`]: configuration of a [`Runtime`], from code and from the environment.
//!
//! Environment variables give defaults for options the program did not set (as
//! `OMP_NUM_THREADS` does for OpenMP); a setter called in code wins. A variable that is set to a
//! bad value is an error from [`Builder::build`] either way, so a typo never goes unnoticed.
//!
//! | variable | meaning | values |
//! |---|---|---|
//! | `ASAT_MAX_THREADS` | [`Builder::max_threads`] | 1 ..= 4096 |
//! | `RAYON_NUM_THREADS` | [`Builder::max_threads`] when `ASAT_MAX_THREADS` is not set (as rayon's pools read it, so that a program moved from rayon keeps its scripts) | 0 (the CPUs) ..= 4096 |
//! | `ASAT_POLICY` | [`Builder::policy`] | see [`parse_policy`](crate::parse_policy) |
//! | `ASAT_WAIT` | [`Builder::wait`] | see [`parse_wait`] |
//! | `ASAT_SOLO_SLICE` | [`Builder::solo_slice`] | `off`, or a time from `100us` to `100ms` |
//!
//! Policies read their own variables (ASAT: `ASAT_EVAL_TIME`, ...) when built from
//! `ASAT_POLICY`.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::env::{env_var, parse_duration};
use crate::error::MAX_THREADS_LIMIT;
use crate::runtime::hooks::Hooks;
use crate::{Error, Fixed, Policy, Runtime, RuntimeInfo, SpinThenPark, WaitStrategy};

impl Runtime {
    /// A [`Builder`] with default settings (overridden by the `ASAT_*` environment variables).
    pub fn builder() -> Builder {
        Builder::new()
    }
}

/// Builds a [`Runtime`]. Setters consume and return the builder and never fail; values are
/// checked by [`build`](Builder::build).
///
/// ```
/// use asat_core::{Runtime, Single};
/// let rt = Runtime::builder().max_threads(4).policy(Single).build().unwrap();
/// assert_eq!(rt.max_threads(), 4);
/// let err = Runtime::builder().max_threads(0).build().unwrap_err();
/// assert_eq!(err.to_string(), "max_threads 0: must be between 1 and 4096");
/// ```
#[derive(Default)]
pub struct Builder {
    max_threads: Option<usize>,
    policy: Option<Arc<dyn Policy>>,
    wait: Option<Arc<dyn WaitStrategy>>,
    timing: bool,
    solo_slice: Option<Option<Duration>>,
    hooks: Hooks,
}

/// The time slice a thread running a team of one asks for unless told otherwise
/// ([`Builder::solo_slice`]): the longest the kernel grants.
pub const DEFAULT_SOLO_SLICE: Duration = Duration::from_millis(100);

/// The slices [`Builder::solo_slice`] accepts: the range the kernel grants.
pub const SOLO_SLICE_RANGE: std::ops::RangeInclusive<Duration> =
    Duration::from_micros(100)..=Duration::from_millis(100);

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("max_threads", &self.max_threads)
            .field("policy", &self.policy)
            .field("wait", &self.wait)
            .field("timing", &self.timing)
            .field("solo_slice", &self.solo_slice)
            .finish_non_exhaustive()
    }
}

impl Builder {
    /// A builder with nothing set: `max_threads` defaults to the CPUs this process may use, the
    /// policy to [`Fixed::all`], the wait strategy to the policy's or [`SpinThenPark`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The most threads a team may have, the thread that starts a region included.
    pub fn max_threads(mut self, n: usize) -> Self {
        self.max_threads = Some(n);
        self
    }

    /// The scheduling policy.
    pub fn policy(self, policy: impl Policy + 'static) -> Self {
        self.shared_policy(Arc::new(policy))
    }

    /// The scheduling policy, shared (keep a clone to read the policy's own statistics).
    pub fn shared_policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// How threads wait at joins, barriers and while idle. Unset: `ASAT_WAIT`, else the
    /// policy's own strategy, else [`SpinThenPark`] (50 µs).
    pub fn wait(self, wait: impl WaitStrategy + 'static) -> Self {
        self.shared_wait(Arc::new(wait))
    }

    /// How threads wait, shared.
    pub fn shared_wait(mut self, wait: Arc<dyn WaitStrategy>) -> Self {
        self.wait = Some(wait);
        self
    }

    /// Gather per-member join times for every region (costs one clock read per member per
    /// region); they feed [`Runtime::stats`] and [`RegionReport::timing`](crate::RegionReport).
    pub fn timing(mut self, on: bool) -> Self {
        self.timing = on;
        self
    }

    /// The time slice a thread asks the kernel for while it runs regions with a team of one
    /// (`None`: never ask). Unset: `ASAT_SOLO_SLICE`, else [`DEFAULT_SOLO_SLICE`] (100 ms).
    /// Must be in [`SOLO_SLICE_RANGE`] (100 µs to 100 ms).
    ///
    /// When the policy gives a region a team of one (ASAT on a crowded machine, or
    /// [`Single`](crate::Single)), the thread that starts it asks for this slice for the length of the
    /// region, once its previous such region lasted at least a millisecond (asking and giving
    /// back cost four system calls), and asks for the kernel's default slice again when the
    /// region ends; threads it creates meanwhile start with the default slice. A team of one
    /// waits for no partner, so a longer turn on a shared CPU costs it nothing and saves it
    /// the cache refills and switches of short turns. Only threads of the normal and batch
    /// policies, of nice 0 or more, that have not asked for a slice of their own are changed,
    /// and only on Linux 6.12 or later (older kernels ignore the request). The protocol is in
    /// asat-core's `src/runtime/solo.rs`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = asat_core::Runtime::builder().solo_slice(Some(Duration::from_millis(20))).build();
    /// assert!(rt.is_ok());
    /// let err = asat_core::Runtime::builder().solo_slice(Some(Duration::from_secs(1))).build();
    /// assert_eq!(
    ///     err.unwrap_err().to_string(),
    ///     "solo_slice 1s: must be between 100µs and 100ms (the slices the kernel grants), \
    ///      or None to leave time slices alone"
    /// );
    /// ```
    pub fn solo_slice(mut self, slice: Option<Duration>) -> Self {
        self.solo_slice = Some(slice);
        self
    }

    /// Names worker threads (`index` starts at 1). Default: `asat-worker-{index}`. Also names
    /// the threads that run [spawned](Runtime::spawn) jobs, by their slot (`0..max_threads`;
    /// default `asat-spawn-{slot}`). A runtime with named threads runs the closures of
    /// rayon's calls made from other threads on its own ([`Runtime::hands_calls_over`]).
    pub fn thread_name(mut self, f: impl Fn(usize) -> String + Send + Sync + 'static) -> Self {
        self.hooks.name = Some(Arc::new(f));
        self
    }

    /// Runs `f(index)` on each worker thread when it starts, and `f(slot)` on each thread that
    /// runs [spawned](Runtime::spawn) jobs (`slot < max_threads`: a worker and a spawn thread
    /// may be given the same number). As with [`thread_name`](Builder::thread_name), rayon's
    /// calls then run their closures on the runtime's threads ([`Runtime::hands_calls_over`]).
    pub fn on_thread_start(mut self, f: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.hooks.on_start = Some(Arc::new(f));
        self
    }

    /// Runs `f(index)` on each worker thread before it exits, and `f(slot)` on each spawn
    /// thread (as [`on_thread_start`](Builder::on_thread_start)).
    pub fn on_thread_stop(mut self, f: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.hooks.on_stop = Some(Arc::new(f));
        self
    }

    /// Stack size of worker threads and spawn threads, in bytes.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.hooks.stack_size = Some(bytes);
        self
    }

    /// Called with the payload of a panic of a [spawned](Runtime::spawn) job, on the thread
    /// that ran the job (rayon's `panic_handler`). Without one, the panic is reported by the
    /// panic hook, as any thread's is, counted in
    /// [`RuntimeStats::spawn_panics`](crate::RuntimeStats) and otherwise ignored: the runtime
    /// and its other jobs go on (rayon aborts the process instead). A panic of the handler
    /// itself is reported the same way and ignored. Panics of parallel calls and regions are
    /// not handled here: they are re-raised by the call, as always.
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let (tx, rx) = mpsc::channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// let rt = asat_core::Runtime::builder()
    ///     .panic_handler(move |p| {
    ///         let msg = p.downcast_ref::<&str>().copied().unwrap_or("?");
    ///         tx.lock().unwrap().send(msg.to_owned()).unwrap();
    ///     })
    ///     .build()?;
    /// rt.spawn(|| panic!("oops"));
    /// assert_eq!(rx.recv_timeout(std::time::Duration::from_secs(60)).unwrap(), "oops");
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn panic_handler(
        mut self,
        f: impl Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    ) -> Self {
        self.hooks.panic_handler = Some(Arc::new(f));
        self
    }

    /// Checks the configuration and builds the runtime. No worker starts before the first
    /// region.
    pub fn build(self) -> Result<Runtime, Error> {
        self.build_with_env(env_var)
    }

    /// The `max_threads` that `build` would use: the one set, else `ASAT_MAX_THREADS`, else
    /// `RAYON_NUM_THREADS` (0: not set), else the CPU budget (not checked against the limits).
    pub(crate) fn resolved_max_threads(&self) -> Result<usize, Error> {
        self.max_threads_with_env(&env_var)
    }

    fn max_threads_with_env(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<usize, Error> {
        let env_max = match env("ASAT_MAX_THREADS") {
            Some(v) => Some(parse_max_threads(&v)?),
            None => env("RAYON_NUM_THREADS")
                .map(|v| parse_rayon_threads(&v))
                .transpose()?
                .flatten(),
        };
        Ok(self
            .max_threads
            .or(env_max)
            .unwrap_or_else(crate::sys::affinity::cpu_budget))
    }

    /// The runtime of the default configuration, ignoring the environment.
    pub(crate) fn build_defaults(self) -> Runtime {
        let cpus = crate::sys::affinity::cpu_budget().clamp(1, MAX_THREADS_LIMIT);
        self.max_threads(cpus)
            .build_with_env(|_| None)
            .expect("the default configuration (fixed policy, CPUs within the limit) is valid")
    }

    pub(crate) fn build_with_env(
        self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Runtime, Error> {
        let max_threads = self.max_threads_with_env(&env)?;
        let env_policy = env("ASAT_POLICY")
            .map(|v| crate::registry::parse_policy_with_env(&v, &env))
            .transpose()?;
        let env_wait = env("ASAT_WAIT").map(|v| parse_wait(&v)).transpose()?;
        let env_solo = env("ASAT_SOLO_SLICE")
            .map(|v| parse_solo_slice(&v))
            .transpose()?;
        if max_threads == 0 || max_threads > MAX_THREADS_LIMIT {
            return Err(Error::max_threads(max_threads));
        }
        let solo_slice = self
            .solo_slice
            .or(env_solo)
            .unwrap_or(Some(DEFAULT_SOLO_SLICE));
        if let Some(d) = solo_slice.filter(|d| !SOLO_SLICE_RANGE.contains(d)) {
            return Err(Error::solo_slice(d));
        }
        let policy = self
            .policy
            .or(env_policy)
            .unwrap_or_else(|| Arc::new(Fixed::all()));
        policy.attach(&RuntimeInfo { max_threads })?;
        let wait = self
            .wait
            .or(env_wait)
            .or_else(|| policy.wait_strategy())
            .unwrap_or_else(|| Arc::new(SpinThenPark::default()));
        let hooks = Hooks {
            solo_slice,
            ..self.hooks
        };
        Ok(Runtime::from_parts(
            max_threads,
            policy,
            wait,
            self.timing,
            hooks,
        ))
    }
}

fn parse_max_threads(v: &str) -> Result<usize, Error> {
    let allowed = format!("must be a whole number between 1 and {MAX_THREADS_LIMIT}");
    match v.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS_LIMIT).contains(&n) => Ok(n),
        _ => Err(Error::env("ASAT_MAX_THREADS", v, allowed)),
    }
}

/// `RAYON_NUM_THREADS` as rayon reads it: a pool's size, or 0 for the CPUs (`None`).
fn parse_rayon_threads(v: &str) -> Result<Option<usize>, Error> {
    let allowed =
        format!("must be a whole number between 0 (as many as the CPUs) and {MAX_THREADS_LIMIT}");
    match v.trim().parse::<usize>() {
        Ok(0) => Ok(None),
        Ok(n) if n <= MAX_THREADS_LIMIT => Ok(Some(n)),
        _ => Err(Error::env("RAYON_NUM_THREADS", v, allowed)),
    }
}

/// Parses a wait strategy as `ASAT_WAIT` takes it (OpenMP's `OMP_WAIT_POLICY`, with the spin
/// time stated): `park` (block at once: OpenMP's `passive`), or `spin:<time>` (spin for up to
/// `<time>`, then block: [`SpinThenPark`]; `spin:50us` is the default strategy), a time being
/// seconds (`0.001`) or a number with a unit (`100ms`, `50us`). `spin:` takes at most 10 s:
/// a longer spin is a busy CPU lost to every other program.
pub fn parse_wait(v: &str) -> Result<Arc<dyn WaitStrategy>, Error> {
    const ALLOWED: &str = "must be park or spin:<time>, the time in seconds (0.001) or with a \
         unit (100ms, 50us), at most 10s";
    let t = v.trim().to_ascii_lowercase();
    if t == "park" {
        return Ok(Arc::new(SpinThenPark::new(std::time::Duration::ZERO)));
    }
    match t.strip_prefix("spin:").and_then(parse_duration) {
        Some(d) if d <= std::time::Duration::from_secs(10) => Ok(Arc::new(SpinThenPark::new(d))),
        _ => Err(Error::env("ASAT_WAIT", v, ALLOWED)),
    }
}

/// Parses `ASAT_SOLO_SLICE`: `off`, or a time in [`SOLO_SLICE_RANGE`] as [`parse_wait`]
/// writes times (`100ms`, `0.02`, `500us`).
pub fn parse_solo_slice(v: &str) -> Result<Option<Duration>, Error> {
    const ALLOWED: &str = "must be off or a time from 100us to 100ms, in seconds (0.02) or \
         with a unit (20ms, 500us)";
    let t = v.trim().to_ascii_lowercase();
    if t == "off" {
        return Ok(None);
    }
    match parse_duration(&t) {
        Some(d) if SOLO_SLICE_RANGE.contains(&d) => Ok(Some(d)),
        _ => Err(Error::env("ASAT_SOLO_SLICE", v, ALLOWED)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn env_sets_defaults_and_code_wins() {
        let rt = Builder::new()
            .build_with_env(env_of(&[
                ("ASAT_MAX_THREADS", "3"),
                ("ASAT_POLICY", "single"),
            ]))
            .unwrap();
        assert_eq!(rt.max_threads(), 3);
        assert_eq!(rt.policy().name(), "single");
        let rt = Builder::new()
            .max_threads(2)
            .policy(Fixed::new(2))
            .build_with_env(env_of(&[
                ("ASAT_MAX_THREADS", "3"),
                ("ASAT_POLICY", "single"),
            ]))
            .unwrap();
        assert_eq!(rt.max_threads(), 2);
        assert_eq!(rt.policy().name(), "fixed");
    }

    #[test]
    fn rayon_num_threads_sizes_a_pool_unless_asat_max_threads_is_set() {
        let size = |pairs: &[(&str, &str)]| {
            Builder::new()
                .build_with_env(env_of(pairs))
                .map(|rt| rt.max_threads())
        };
        assert_eq!(size(&[("RAYON_NUM_THREADS", "3")]).unwrap(), 3);
        assert_eq!(
            size(&[("RAYON_NUM_THREADS", "3"), ("ASAT_MAX_THREADS", "2")]).unwrap(),
            2
        );
        assert_eq!(
            size(&[("RAYON_NUM_THREADS", "0")]).unwrap(),
            size(&[]).unwrap(),
            "0 is the CPUs, as in rayon"
        );
        let rt = Builder::new()
            .max_threads(2)
            .build_with_env(env_of(&[("RAYON_NUM_THREADS", "3")]))
            .unwrap();
        assert_eq!(rt.max_threads(), 2, "code wins");
        let e = size(&[("RAYON_NUM_THREADS", "many")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "environment variable RAYON_NUM_THREADS=\"many\" is invalid: must be a whole number \
             between 0 (as many as the CPUs) and 4096"
        );
        assert!(size(&[("RAYON_NUM_THREADS", "5000")]).is_err());
    }

    #[test]
    fn bad_env_values_are_clear_errors() {
        let e = Builder::new()
            .build_with_env(env_of(&[("ASAT_MAX_THREADS", "zero")]))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "environment variable ASAT_MAX_THREADS=\"zero\" is invalid: must be a whole number between 1 and 4096"
        );
        let e = Builder::new()
            .build_with_env(env_of(&[("ASAT_MAX_THREADS", "0")]))
            .unwrap_err();
        assert!(e.to_string().contains("between 1 and 4096"), "{e}");
        let e = Builder::new()
            .build_with_env(env_of(&[("ASAT_POLICY", "rayon")]))
            .unwrap_err();
        assert!(
            e.to_string().contains("must be one of fixed, fixed:N"),
            "{e}"
        );
        let e = Builder::new()
            .build_with_env(env_of(&[("ASAT_POLICY", "fixed:0")]))
            .unwrap_err();
        assert!(e.to_string().contains("ASAT_POLICY"), "{e}");
    }

    /// The spin limit of `rt`'s wait strategy at a join.
    fn spin_of(rt: &Runtime) -> std::time::Duration {
        let info = crate::WaitInfo {
            site: crate::WaitSite::Join,
            member: 0,
            team_size: 2,
        };
        rt.wait_strategy().spin_limit(&info)
    }

    #[test]
    fn wait_env_sets_the_strategy_and_code_wins() {
        use std::time::Duration;
        let rt = |env: &[(&str, &str)]| Builder::new().build_with_env(env_of(env));
        assert_eq!(spin_of(&rt(&[]).unwrap()), SpinThenPark::DEFAULT_SPIN);
        assert_eq!(
            spin_of(&rt(&[("ASAT_WAIT", "park")]).unwrap()),
            Duration::ZERO
        );
        let spin = |v: &str| spin_of(&rt(&[("ASAT_WAIT", v)]).unwrap());
        assert_eq!(spin("spin:2ms"), Duration::from_millis(2));
        assert_eq!(spin(" Spin:0.5 "), Duration::from_millis(500));
        assert_eq!(spin("spin:10s"), Duration::from_secs(10));
        let code = Builder::new()
            .wait(SpinThenPark::new(Duration::from_micros(7)))
            .build_with_env(env_of(&[("ASAT_WAIT", "park")]))
            .unwrap();
        assert_eq!(spin_of(&code), Duration::from_micros(7));
        for bad in [
            "spin",
            "spin:",
            "spin:0",
            "spin:11s",
            "spin:-1ms",
            "active",
            "",
        ] {
            let e = rt(&[("ASAT_WAIT", bad)]).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "environment variable ASAT_WAIT={bad:?} is invalid: must be park or \
                     spin:<time>, the time in seconds (0.001) or with a unit (100ms, 50us), at \
                     most 10s"
                )
            );
        }
    }

    #[test]
    fn solo_slice_from_env_and_code() {
        use std::time::Duration;
        let rt = |b: Builder, env: &[(&str, &str)]| b.build_with_env(env_of(env));
        let slice = |env: &[(&str, &str)]| rt(Builder::new(), env).unwrap().solo_slice();
        assert_eq!(slice(&[]), Some(DEFAULT_SOLO_SLICE));
        assert_eq!(slice(&[("ASAT_SOLO_SLICE", "OFF ")]), None);
        assert_eq!(
            slice(&[("ASAT_SOLO_SLICE", "20ms")]),
            Some(Duration::from_millis(20))
        );
        assert_eq!(
            slice(&[("ASAT_SOLO_SLICE", "0.0001")]),
            Some(Duration::from_micros(100))
        );
        let code = Builder::new().solo_slice(None);
        assert_eq!(
            rt(code, &[("ASAT_SOLO_SLICE", "5ms")])
                .unwrap()
                .solo_slice(),
            None
        );
        for bad in ["0", "99us", "101ms", "1s", "on", "", "-5ms"] {
            let e = rt(Builder::new(), &[("ASAT_SOLO_SLICE", bad)]).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "environment variable ASAT_SOLO_SLICE={bad:?} is invalid: must be off or a \
                     time from 100us to 100ms, in seconds (0.02) or with a unit (20ms, 500us)"
                )
            );
        }
        for bad in [
            Duration::ZERO,
            Duration::from_micros(99),
            Duration::from_millis(101),
        ] {
            let e = rt(Builder::new().solo_slice(Some(bad)), &[]).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(&format!("solo_slice {bad:?}: must be")),
                "{e}"
            );
        }
    }

    #[test]
    fn fixed_policy_env_sizes() {
        let rt = Builder::new()
            .max_threads(4)
            .build_with_env(env_of(&[("ASAT_POLICY", "fixed:3")]))
            .unwrap();
        assert_eq!(rt.policy().name(), "fixed");
        let e = Builder::new()
            .max_threads(2)
            .build_with_env(env_of(&[("ASAT_POLICY", "fixed:3")]))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "policy fixed asks for a team of 3 threads, but max_threads is 2: the team size must be between 1 and max_threads"
        );
    }

    #[test]
    fn max_threads_bounds() {
        let e = Builder::new()
            .max_threads(0)
            .build_with_env(env_of(&[]))
            .unwrap_err();
        assert_eq!(e.to_string(), "max_threads 0: must be between 1 and 4096");
        assert!(Builder::new()
            .max_threads(5000)
            .build_with_env(env_of(&[]))
            .is_err());
    }
}

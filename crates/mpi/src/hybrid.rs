//! [`Hybrid`]: the start-up of a hybrid MPI + asat program.
//!
//! [`HybridBuilder::build`] checks its settings (before MPI is touched, so a bad setting is
//! an error and never a half-started MPI), then:
//!
//! 1. initialises MPI with `MPI_Init_thread` at the requested threading level, **funneled**
//!    by default. asat runs a region's member 0 on the thread that starts the region and
//!    starts worker threads for the others, so the process is multi-threaded (single is
//!    refused), but when MPI is called outside regions, or only by the thread that started
//!    them, every MPI call comes from the thread that initialised MPI: that is funneled.
//!    Request serialized or multiple to call MPI from workers; a library that provides less
//!    than requested is an error.
//! 2. finds the ranks that share this node: `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)` of
//!    the world ([`Hybrid::node_comm`]);
//! 3. gathers the node-local ranks' CPU affinity masks on that communicator and computes this
//!    rank's [`NodeShare`] (the rules are in the [`node`](crate::node) module: the mask mpirun bound the rank
//!    to, else an even split of the CPUs the ranks share); with [`pin`](HybridBuilder::pin),
//!    binds the calling thread to its share, so that worker threads started later inherit it;
//! 4. builds the [`Waiter`] for MPI waits from the strategy's name.
//!
//! [`Hybrid::runtime_builder`] then gives an asat-core [`Builder`] whose `max_threads` is the
//! share's thread count (or `ASAT_MAX_THREADS`, when it is set lower), so that the ranks of a
//! job never oversubscribe their node by themselves; any policy works within it (ASAT sizes
//! its teams below it, for example).
//!
//! MPI is finalised when the [`Hybrid`] is dropped; it cannot be initialised again in the same
//! process.
//!
//! | variable | meaning | values |
//! |---|---|---|
//! | `ASAT_MPI_THREADING` | [`HybridBuilder::threading`] | `funneled` (default), `serialized`, `multiple` |
//! | `ASAT_MPI_WAIT` | [`HybridBuilder::strategy`] | asat-implicit's names: `block`, `spin`, `fixed`, `fixed:<us>`, `oracle:<us>`, `local` (default), `global` |
//! | `ASAT_MPI_SLEEP_CAP_US` | [`HybridBuilder::sleep_cap`] | microseconds, 1 ..= 1000000 (default 1000) |
//! | `ASAT_MPI_YIELD_US` | [`HybridBuilder::yield_time`] | microseconds, 0 ..= 1000000 (default 1000) |
//! | `ASAT_MPI_PIN` | [`HybridBuilder::pin`] | `0` / `1` (default 0) |

use std::time::Duration;

use asat_core::{Builder, CpuSet, Runtime};
use asat_implicit::{AnyStrategy, Config};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives};

use crate::error::{threading_name, MAX_SLEEP_CAP, MIN_SLEEP_CAP};
use crate::node::ShareKind;
use crate::wait::{DEFAULT_SLEEP_CAP, DEFAULT_YIELD_TIME};
use crate::{Error, NodeShare, Threading, Waiter};

/// The strategy a [`Hybrid`] waits with when none is set: `local`. Not `global`, whose
/// barriers are all-reduces that carry the arrival times: at steps of a few microseconds that
/// cost 20-50% against `MPI_Ibarrier` with three jobs on a 2-CPU machine (`local` was 1.00-1.11x
/// the best strategy there, `global` 1.21-1.52x; measured 2026-11-24).
pub const DEFAULT_STRATEGY: &str = "local";

/// Words of a [`CpuSet`] as the ranks exchange it, and one more for the quota.
const MASK_WORDS: usize = CpuSet::CAPACITY / 64;

/// Builds a [`Hybrid`]. Setters consume and return the builder and never fail; values are
/// checked by [`build`](HybridBuilder::build), which also reads the `ASAT_MPI_*` variables
/// for what was not set.
#[derive(Debug, Default)]
pub struct HybridBuilder {
    threading: Option<Threading>,
    strategy: Option<String>,
    sleep_cap: Option<Duration>,
    yield_time: Option<Duration>,
    pin: Option<bool>,
    config: Option<Config>,
}

impl HybridBuilder {
    /// The threading level to initialise MPI with (default funneled; single is an error).
    pub fn threading(mut self, level: Threading) -> Self {
        self.threading = Some(level);
        self
    }

    /// The wait strategy of [`Hybrid::waiter`], by asat-implicit's name (default `local`).
    pub fn strategy(mut self, name: &str) -> Self {
        self.strategy = Some(name.to_owned());
        self
    }

    /// The longest nap of the waiter's block phase (default 1 ms; 1 µs ..= 1 s).
    pub fn sleep_cap(mut self, cap: Duration) -> Self {
        self.sleep_cap = Some(cap);
        self
    }

    /// How long the waiter's block phase yields the CPU between tests before its first nap
    /// (default 1 ms; 0 ..= 1 s; 0: it naps at once).
    pub fn yield_time(mut self, t: Duration) -> Self {
        self.yield_time = Some(t);
        self
    }

    /// Bind the calling thread to this rank's share of the node (default false: placement is
    /// left to the kernel and to the runtime's policy). Threads started afterwards, the
    /// runtime's workers included, inherit the binding.
    pub fn pin(mut self, on: bool) -> Self {
        self.pin = Some(on);
        self
    }

    /// The costs the strategy is built from (default: asat-implicit's calibration).
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// Checks the settings, then initialises MPI and finds this rank's share of its node.
    ///
    /// Collective: every rank of the job must call it.
    pub fn build(self) -> Result<Hybrid, Error> {
        self.build_with_env(env_var)
    }

    fn settings(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, Error> {
        let threading = match (self.threading, env("ASAT_MPI_THREADING")) {
            (Some(t), _) => t,
            (None, Some(v)) => parse_threading(&v)?,
            (None, None) => Threading::Funneled,
        };
        if threading == Threading::Single {
            return Err(Error::threading_single());
        }
        let sleep_cap = match (self.sleep_cap, env("ASAT_MPI_SLEEP_CAP_US")) {
            (Some(d), _) => d,
            (None, Some(v)) => parse_sleep_cap(&v)?,
            (None, None) => DEFAULT_SLEEP_CAP,
        };
        if !(MIN_SLEEP_CAP..=MAX_SLEEP_CAP).contains(&sleep_cap) {
            return Err(Error::sleep_cap(sleep_cap));
        }
        let yield_time = match (self.yield_time, env("ASAT_MPI_YIELD_US")) {
            (Some(d), _) => d,
            (None, Some(v)) => parse_yield_time(&v)?,
            (None, None) => DEFAULT_YIELD_TIME,
        };
        let pin = match (self.pin, env("ASAT_MPI_PIN")) {
            (Some(p), _) => p,
            (None, Some(v)) => match v.trim() {
                "0" => false,
                "1" => true,
                _ => return Err(Error::env("ASAT_MPI_PIN", &v, "must be 0 or 1")),
            },
            (None, None) => false,
        };
        let name = match (&self.strategy, env("ASAT_MPI_WAIT")) {
            (Some(n), _) => n.clone(),
            (None, Some(v)) => {
                check_strategy_name(&v)
                    .map_err(|allowed| Error::env("ASAT_MPI_WAIT", &v, allowed))?;
                v
            }
            (None, None) => DEFAULT_STRATEGY.to_owned(),
        };
        let config = match self.config {
            Some(c) => c,
            None => Config::builder().build().map_err(Error::strategy)?,
        };
        let strategy = AnyStrategy::by_name(&name, &config).map_err(Error::strategy)?;
        Ok(Settings {
            threading,
            waiter: Waiter::with_sleep_cap(strategy, sleep_cap)?.with_yield_time(yield_time)?,
            pin,
        })
    }

    fn build_with_env(self, env: impl Fn(&str) -> Option<String>) -> Result<Hybrid, Error> {
        let settings = self.settings(&env)?;
        let Some((universe, provided)) = mpi::initialize_with_threading(settings.threading) else {
            return Err(Error::already_initialized(mpi::is_finalized()));
        };
        if provided < settings.threading {
            return Err(Error::threading_not_provided(settings.threading, provided));
        }
        let world = universe.world();
        let node = world.split_shared(world.rank());
        let share = node_share(&node);
        if settings.pin && share.kind != ShareKind::Bound {
            share
                .cpus
                .bind_current_thread()
                .map_err(|e| Error::pin(share.cpus.to_string(), e))?;
        }
        Ok(Hybrid {
            world,
            node,
            share,
            threading: provided,
            waiter: settings.waiter,
            _universe: universe,
        })
    }
}

struct Settings {
    threading: Threading,
    waiter: Waiter,
    pin: bool,
}

/// Exchanges the node-local ranks' masks and quotas on `node` and computes this rank's share.
fn node_share(node: &SimpleCommunicator) -> NodeShare {
    let mask = CpuSet::of_current_thread().unwrap_or_default();
    let parallelism = std::thread::available_parallelism().map_or(0, |n| n.get());
    // the quota is known when it is what limits available_parallelism
    let quota = if parallelism > 0 && parallelism < mask.len() {
        parallelism as u64
    } else {
        0
    };
    let mut send = [0u64; MASK_WORDS + 1];
    for cpu in mask.iter() {
        send[cpu / 64] |= 1 << (cpu % 64);
    }
    send[MASK_WORDS] = quota;
    let n = usize::try_from(node.size()).unwrap_or(1).max(1);
    let mut recv = vec![0u64; (MASK_WORDS + 1) * n];
    node.all_gather_into(&send[..], &mut recv[..]);
    let mut masks = Vec::with_capacity(n);
    let mut node_quota: Option<usize> = None;
    for rank in recv.chunks_exact(MASK_WORDS + 1) {
        let m: CpuSet = (0..CpuSet::CAPACITY)
            .filter(|&c| rank[c / 64] & (1 << (c % 64)) != 0)
            .collect();
        masks.push(m);
        if rank[MASK_WORDS] > 0 {
            let q = usize::try_from(rank[MASK_WORDS]).unwrap_or(usize::MAX);
            node_quota = Some(node_quota.map_or(q, |o| o.min(q)));
        }
    }
    let me = usize::try_from(node.rank()).unwrap_or(0);
    NodeShare::compute(&masks, node_quota, me)
}

/// An MPI program's start-up, with its rank's share of the node and its MPI waiter.
///
/// ```no_run
/// use asat_core::Schedule;
/// use asat_mpi::mpi::collective::SystemOperation;
/// use asat_mpi::mpi::traits::*;
/// use asat_mpi::Hybrid;
///
/// let hybrid = Hybrid::builder().strategy("global").build()?;
/// let rt = hybrid.runtime_builder().build()?; // at most this rank's share of threads
/// let world = hybrid.world();
/// let part = rt.parallel_reduce(0..1_000_000, Schedule::Static, || 0.0,
///     |acc, r| acc + r.map(|i| i as f64).sum::<f64>(), |a, b| a + b);
/// let mut total = 0.0f64; // every rank's parts, summed: waited for two-phase
/// hybrid.waiter().all_reduce_into(world, &part, &mut total, SystemOperation::sum())?;
/// hybrid.waiter().barrier(world)?;
/// println!("rank {} of {}: {total} ({:?})", world.rank(), world.size(), hybrid.share());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Hybrid {
    world: SimpleCommunicator,
    node: SimpleCommunicator,
    share: NodeShare,
    threading: Threading,
    waiter: Waiter,
    // dropped last: finalises MPI
    _universe: Universe,
}

impl std::fmt::Debug for Hybrid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hybrid")
            .field("world_rank", &self.world.rank())
            .field("world_size", &self.world.size())
            .field("share", &self.share)
            .field("threading", &self.threading)
            .field("waiter", &self.waiter)
            .finish_non_exhaustive()
    }
}

impl Hybrid {
    /// A builder with nothing set.
    pub fn builder() -> HybridBuilder {
        HybridBuilder::default()
    }

    /// `MPI_COMM_WORLD`.
    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// The ranks of the job on this node (ranked by their world rank).
    pub fn node_comm(&self) -> &SimpleCommunicator {
        &self.node
    }

    /// This rank's share of its node.
    pub fn share(&self) -> &NodeShare {
        &self.share
    }

    /// The threading level MPI provides (at least the one requested).
    pub fn threading(&self) -> Threading {
        self.threading
    }

    /// The waiter for MPI requests and barriers, with the configured strategy.
    pub fn waiter(&self) -> &Waiter {
        &self.waiter
    }

    /// The most threads this rank's runtime should run: the share's thread count, or
    /// `ASAT_MAX_THREADS` when it is a valid lower number.
    pub fn max_threads(&self) -> usize {
        bound(self.share.threads, env_var("ASAT_MAX_THREADS"))
    }

    /// An asat-core runtime builder whose `max_threads` is [`max_threads`](Hybrid::max_threads);
    /// set the policy and the rest as usual (setting `max_threads` again overrides the bound).
    pub fn runtime_builder(&self) -> Builder {
        Runtime::builder().max_threads(self.max_threads())
    }
}

/// The value of the environment variable `name`; one that is not UTF-8 is read lossily (its
/// bad bytes become U+FFFD), so that it is reported as invalid, naming what is allowed, as
/// asat-core does, rather than taken for unset.
fn env_var(name: &str) -> Option<String> {
    lossy(std::env::var_os(name))
}

fn lossy(v: Option<std::ffi::OsString>) -> Option<String> {
    v.map(|v| v.to_string_lossy().into_owned())
}

/// The share's thread count, lowered by a valid `ASAT_MAX_THREADS` (a bad one is left to
/// asat-core's builder, whose `build` reports it).
fn bound(threads: usize, env: Option<String>) -> usize {
    match env.and_then(|v| v.trim().parse::<usize>().ok()) {
        Some(n) if n >= 1 => threads.min(n),
        _ => threads,
    }
}

fn parse_threading(v: &str) -> Result<Threading, Error> {
    let allowed = "must be funneled, serialized or multiple";
    match v.trim().to_ascii_lowercase().as_str() {
        "funneled" => Ok(Threading::Funneled),
        "serialized" => Ok(Threading::Serialized),
        "multiple" => Ok(Threading::Multiple),
        "single" => Err(Error::env(
            "ASAT_MPI_THREADING",
            v,
            format!(
                "{allowed} (asat starts worker threads; {} is not enough)",
                threading_name(Threading::Single)
            ),
        )),
        _ => Err(Error::env("ASAT_MPI_THREADING", v, allowed)),
    }
}

fn parse_sleep_cap(v: &str) -> Result<Duration, Error> {
    let allowed = "must be a whole number of microseconds between 1 and 1000000";
    match v.trim().parse::<u64>() {
        Ok(us) if (1..=1_000_000).contains(&us) => Ok(Duration::from_micros(us)),
        _ => Err(Error::env("ASAT_MPI_SLEEP_CAP_US", v, allowed)),
    }
}

fn parse_yield_time(v: &str) -> Result<Duration, Error> {
    let allowed = "must be a whole number of microseconds between 0 and 1000000";
    match v.trim().parse::<u64>() {
        Ok(us) if us <= 1_000_000 => Ok(Duration::from_micros(us)),
        _ => Err(Error::env("ASAT_MPI_YIELD_US", v, allowed)),
    }
}

/// Whether asat-implicit knows the strategy name; else what is allowed.
fn check_strategy_name(name: &str) -> Result<(), String> {
    // a fixed cost: the name is checked without measuring the calibration
    let config = Config::builder()
        .context_switch(Duration::from_micros(10))
        .release_latency(Duration::ZERO)
        .build()
        .map_err(|e| e.to_string())?;
    AnyStrategy::by_name(name, &config)
        .map(|_| ())
        .map_err(|_| {
            format!(
                "must be one of {}",
                asat_implicit::STRATEGY_NAMES.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn cfg() -> Config {
        Config::builder()
            .context_switch(Duration::from_micros(20))
            .release_latency(Duration::from_micros(1))
            .build()
            .unwrap()
    }

    fn err(b: HybridBuilder, pairs: &[(&str, &str)]) -> String {
        match b.config(cfg()).settings(&env(pairs)) {
            Ok(_) => panic!("settings {pairs:?} were accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_value_that_is_not_utf8_is_reported_not_taken_for_unset() {
        use std::os::unix::ffi::OsStringExt;
        let bad = lossy(Some(std::ffi::OsString::from_vec(b"fun\xffneled".to_vec())));
        assert_eq!(bad.as_deref(), Some("fun\u{fffd}neled"));
        let bad = bad.unwrap();
        let e = err(Hybrid::builder(), &[("ASAT_MPI_THREADING", &bad)]);
        assert!(
            e.contains("ASAT_MPI_THREADING") && e.contains("must be funneled"),
            "{e}"
        );
        assert_eq!(lossy(None), None);
    }

    #[test]
    fn bad_settings_name_what_is_allowed() {
        let b = Hybrid::builder;
        assert_eq!(
            err(b().threading(Threading::Single), &[]),
            "threading level single: asat starts worker threads, so MPI must be initialised \
             funneled, serialized or multiple"
        );
        assert_eq!(
            err(b(), &[("ASAT_MPI_THREADING", "fast")]),
            "environment variable ASAT_MPI_THREADING=\"fast\" is invalid: must be funneled, \
             serialized or multiple"
        );
        assert!(err(b(), &[("ASAT_MPI_THREADING", "single")]).contains("is not enough"));
        assert_eq!(
            err(b().sleep_cap(Duration::from_secs(5)), &[]),
            "sleep cap 5s: must be between 1µs and 1s"
        );
        assert_eq!(
            err(b(), &[("ASAT_MPI_SLEEP_CAP_US", "0")]),
            "environment variable ASAT_MPI_SLEEP_CAP_US=\"0\" is invalid: must be a whole \
             number of microseconds between 1 and 1000000"
        );
        assert_eq!(
            err(b().yield_time(Duration::from_secs(2)), &[]),
            "yield time 2s: must be at most 1s (0: no yielding)"
        );
        assert_eq!(
            err(b(), &[("ASAT_MPI_YIELD_US", "-1")]),
            "environment variable ASAT_MPI_YIELD_US=\"-1\" is invalid: must be a whole \
             number of microseconds between 0 and 1000000"
        );
        assert_eq!(
            err(b().strategy("gang"), &[]),
            "MPI wait strategy: unknown wait strategy \"gang\": must be one of block, spin, \
             fixed, fixed:<us>, oracle:<us>, local, global"
        );
        assert_eq!(
            err(b(), &[("ASAT_MPI_WAIT", "sometimes")]),
            "environment variable ASAT_MPI_WAIT=\"sometimes\" is invalid: must be one of \
             block, spin, fixed, fixed:<us>, oracle:<us>, local, global"
        );
        assert_eq!(
            err(b(), &[("ASAT_MPI_PIN", "yes")]),
            "environment variable ASAT_MPI_PIN=\"yes\" is invalid: must be 0 or 1"
        );
    }

    #[test]
    fn code_wins_over_environment_and_defaults_apply() {
        let s = Hybrid::builder().config(cfg()).settings(&env(&[])).unwrap();
        assert_eq!(s.threading, Threading::Funneled);
        assert_eq!(asat_implicit::TwoPhase::name(s.waiter.strategy()), "local");
        assert_eq!(s.waiter.sleep_cap(), DEFAULT_SLEEP_CAP);
        assert_eq!(s.waiter.yield_time(), DEFAULT_YIELD_TIME);
        assert!(!s.pin);
        let vars = [
            ("ASAT_MPI_THREADING", "Multiple"),
            ("ASAT_MPI_WAIT", "block"),
            ("ASAT_MPI_SLEEP_CAP_US", "250"),
            ("ASAT_MPI_YIELD_US", "0"),
            ("ASAT_MPI_PIN", "1"),
        ];
        let s = Hybrid::builder()
            .config(cfg())
            .settings(&env(&vars))
            .unwrap();
        assert_eq!(s.threading, Threading::Multiple);
        assert_eq!(asat_implicit::TwoPhase::name(s.waiter.strategy()), "block");
        assert_eq!(s.waiter.sleep_cap(), Duration::from_micros(250));
        assert_eq!(s.waiter.yield_time(), Duration::ZERO);
        assert!(s.pin);
        let s = Hybrid::builder()
            .config(cfg())
            .threading(Threading::Serialized)
            .strategy("fixed:30")
            .pin(false)
            .settings(&env(&vars))
            .unwrap();
        assert_eq!(s.threading, Threading::Serialized);
        assert_eq!(asat_implicit::TwoPhase::name(s.waiter.strategy()), "fixed");
        assert!(!s.pin);
    }

    #[test]
    fn asat_max_threads_only_lowers_the_share() {
        assert_eq!(bound(4, None), 4);
        assert_eq!(bound(4, Some("2".into())), 2);
        assert_eq!(bound(4, Some("8".into())), 4);
        assert_eq!(bound(4, Some("x".into())), 4);
        assert_eq!(bound(4, Some("0".into())), 4);
    }
}

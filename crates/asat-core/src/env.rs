//! Settings from the environment: the process's variables, read as a test can stand in for
//! them, and times as the `ASAT_*` variables write them. Names nothing else of the crate, so
//! that the builder, the registry and the policies can all read settings.

/// The process's environment, as an [`Env`](crate::Env) reads it: a variable's value; one
/// that is not UTF-8 comes back with its bad bytes replaced, so that it fails to parse (a
/// clear error) instead of passing for unset.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

/// What a time in an `ASAT_*` variable may be.
pub(crate) const DURATION_ALLOWED: &str = "must be a positive time from 1ns to 1000000s, in \
     seconds (0.1) or with a unit (100ms, 500us)";

/// Parses `0.1`, `0.1s`, `100ms`, `500us`: a time of at least 1 ns and below 10^6 s.
pub(crate) fn parse_duration(v: &str) -> Option<std::time::Duration> {
    let t = v.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    let x: f64 = num.trim().parse().ok()?;
    let secs = x * scale;
    // At least a nanosecond: a value that rounds to zero is as wrong as 0.
    (1e-9..1e6)
        .contains(&secs)
        .then(|| std::time::Duration::from_secs_f64(secs))
}

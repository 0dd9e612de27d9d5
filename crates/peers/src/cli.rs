//! Argument checks the examples' and the lab's programs share (their errors say what is allowed).

use std::time::Duration;

/// A number of `unit` above 0 and at most `max`, for a clap value parser.
pub fn number_up_to(s: &str, max: f64, unit: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= max => Ok(v),
        _ => Err(format!(
            "must be a number of {unit} above 0 and at most {max}"
        )),
    }
}

/// Seconds, above 0 and at most a day (`--timeout`, `--max-seconds`).
pub fn seconds_up_to_a_day(s: &str) -> Result<f64, String> {
    number_up_to(s, 86_400.0, "seconds")
}

/// Removes repeated entries of a list option, keeping the first of each.
pub fn dedup_in_order<T: PartialEq>(v: &mut Vec<T>) {
    let mut kept: Vec<T> = Vec::with_capacity(v.len());
    for x in v.drain(..) {
        if !kept.contains(&x) {
            kept.push(x);
        }
    }
    *v = kept;
}

/// A `--grains-us` entry of the Figure-13 experiments: `fine`, `medium`, `coarse` (0.5, 5
/// and 250 context switches of `cs`) or microseconds (1 ..= 10 000 000); its label and
/// nanoseconds.
pub fn parse_grain(s: &str, cs: Duration) -> Result<(String, u64), String> {
    let cs = cs.as_nanos() as u64;
    match s.trim() {
        "fine" => Ok(("fine".into(), cs / 2)),
        "medium" => Ok(("medium".into(), 5 * cs)),
        "coarse" => Ok(("coarse".into(), 250 * cs)),
        t => match t.parse::<f64>() {
            Ok(us) if (1.0..=10_000_000.0).contains(&us) => Ok((t.into(), (us * 1e3) as u64)),
            _ => Err(format!(
                "grain {t:?}: must be fine, medium, coarse or microseconds between 1 and 10000000"
            )),
        },
    }
}

/// An `--imbalance` entry of the Figure-13 experiments: `low` (0.25), `high` (1.5) or a factor
/// of the grain (0 ..= 2); its label and factor.
pub fn parse_imbalance(s: &str) -> Result<(String, f64), String> {
    match s.trim() {
        "low" => Ok(("low".into(), 0.25)),
        "high" => Ok(("high".into(), 1.5)),
        t => match t.parse::<f64>() {
            Ok(f) if (0.0..=2.0).contains(&f) => Ok((t.into(), f)),
            _ => Err(format!(
                "imbalance {t:?}: must be low, high or a factor of the grain between 0 and 2"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_messages() {
        assert_eq!(seconds_up_to_a_day("1.5"), Ok(1.5));
        for bad in ["0", "-1", "nan", "inf", "86401", "x"] {
            assert_eq!(
                seconds_up_to_a_day(bad),
                Err("must be a number of seconds above 0 and at most 86400".into())
            );
        }
        let mut v = vec![3, 1, 3, 2, 1];
        dedup_in_order(&mut v);
        assert_eq!(v, vec![3, 1, 2]);
    }
}

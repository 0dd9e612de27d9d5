//! Argument checks the example binaries share (their errors say what is allowed).

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

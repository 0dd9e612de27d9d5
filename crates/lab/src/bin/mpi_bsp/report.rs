//! The target line that ends each cell of the table: how the better of asat-mpi's adaptive
//! strategies did against Open MPI's own waits and against the best strategy.

use asat_lab::bsp::Row;

/// The target line of one cell: the better of asat-mpi's adaptive strategies (`local`,
/// `global`) against `mpi` and against the best strategy; `None` without `mpi` or either.
pub fn target_line(cell_rows: &[Row]) -> Option<String> {
    let get = |s: &str| cell_rows.iter().find(|r| r.cell.strategy == s);
    let mpi = get("mpi")?;
    let adaptive = ["local", "global"]
        .iter()
        .filter_map(|s| get(s))
        .min_by(|a, b| a.completion_s.total_cmp(&b.completion_s))?;
    Some(format!(
        "  target: {} is {:.2}x faster than mpi (>= 2), {:.3}x the best (<= 1.1)",
        adaptive.cell.strategy,
        mpi.completion_s / adaptive.completion_s,
        adaptive.slowdown
    ))
}

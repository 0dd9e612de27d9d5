//! A rayon pool and an asat pool of the same size, for the examples that run one workload on
//! both (`tree_sum`, `par_sort`; each includes this file with `#[path]`).

/// The pools of `threads` threads each, or what went wrong with either.
pub fn two_pools(threads: usize) -> Result<(rayon::ThreadPool, asat::ThreadPool), String> {
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| format!("rayon pool of {threads}: {e}"))?;
    let asat = asat::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| format!("asat pool of {threads}: {e}"))?;
    Ok((rayon, asat))
}

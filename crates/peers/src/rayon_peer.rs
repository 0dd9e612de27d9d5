//! The rayon peer: the same kernel with `par_chunks_mut`, one chunk per thread, like
//! [`Schedule::Static`](https://docs.rs/asat-core), in the two ways a program can drive it:
//! [`jacobi`] runs the whole sweep loop inside `pool.install` (the loop's thread is a pool
//! thread, so each sweep is a `join` that the idle pool thread may or may not steal: rayon's best
//! case), [`jacobi_per_call`] starts each sweep from the program's own thread (a main loop calling
//! `par_chunks_mut`, as most rayon programs do with the global pool).

use rayon::prelude::*;

/// A rayon pool of `threads`.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
}

/// The Jacobi sweeps on `pool`, the whole loop inside `pool.install`; the result ends in `a`.
pub fn jacobi(pool: &rayon::ThreadPool, a: &mut Vec<f64>, b: &mut Vec<f64>, sweeps: usize) {
    let n = a.len();
    let chunk = (n - 2).div_ceil(pool.current_num_threads()).max(1);
    pool.install(|| {
        for _ in 0..sweeps {
            let src = &a[..];
            b[1..n - 1]
                .par_chunks_mut(chunk)
                .enumerate()
                .for_each(|(k, out)| crate::kernel::sweep_chunk(src, out, 1 + k * chunk));
            std::mem::swap(a, b);
        }
    });
}

/// The Jacobi sweeps on `pool`, each sweep's parallel loop started from the calling thread, which
/// is not a pool thread (as a program's main loop calling `par_chunks_mut` does): every sweep goes
/// through rayon's cross-thread entry (`install` from outside the pool: the job is injected, a
/// pool thread runs it, the caller blocks until it is done). The result ends in `a`.
pub fn jacobi_per_call(
    pool: &rayon::ThreadPool,
    a: &mut Vec<f64>,
    b: &mut Vec<f64>,
    sweeps: usize,
) {
    let n = a.len();
    let chunk = (n - 2).div_ceil(pool.current_num_threads()).max(1);
    for _ in 0..sweeps {
        let src = &a[..];
        pool.install(|| {
            b[1..n - 1]
                .par_chunks_mut(chunk)
                .enumerate()
                .for_each(|(k, out)| crate::kernel::sweep_chunk(src, out, 1 + k * chunk));
        });
        std::mem::swap(a, b);
    }
}

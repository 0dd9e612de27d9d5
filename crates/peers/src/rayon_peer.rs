//! The rayon peer: the same kernel with `par_chunks_mut`, one chunk per thread, like
//! [`Schedule::Static`](https://docs.rs/asat-core).

use rayon::prelude::*;

/// A rayon pool of `threads`.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
}

/// The Jacobi sweeps on `pool`; the result ends in `a`.
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

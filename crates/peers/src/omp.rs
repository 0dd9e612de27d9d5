//! The C OpenMP (libgomp) peers.

use std::os::raw::{c_int, c_long};

extern "C" {
    fn asat_peer_jacobi_serial(a: *mut f64, b: *mut f64, n: c_long, sweeps: c_long) -> c_int;
    fn asat_peer_jacobi_omp(a: *mut f64, b: *mut f64, n: c_long, sweeps: c_long) -> c_int;
    fn asat_peer_omp_for(chunks: c_long, reps: c_long, dynamic: c_int);
    fn asat_peer_omp_region_barrier(reps: c_long);
    fn asat_peer_omp_barriers(reps: c_long);
    fn asat_peer_omp_set_threads(n: c_int);
    fn asat_peer_omp_max_threads() -> c_int;
}

fn jacobi(
    f: unsafe extern "C" fn(*mut f64, *mut f64, c_long, c_long) -> c_int,
    a: &mut Vec<f64>,
    b: &mut Vec<f64>,
    sweeps: usize,
) {
    assert_eq!(a.len(), b.len());
    assert!(a.len() >= 3);
    // SAFETY: both buffers hold `a.len()` elements, the C code touches indices 0..n of each,
    // and neither is aliased during the call.
    let which = unsafe {
        f(
            a.as_mut_ptr(),
            b.as_mut_ptr(),
            a.len() as c_long,
            sweeps as c_long,
        )
    };
    if which == 1 {
        std::mem::swap(a, b);
    }
}

/// The Jacobi sweeps in C on one thread; the result ends in `a`.
pub fn jacobi_serial(a: &mut Vec<f64>, b: &mut Vec<f64>, sweeps: usize) {
    jacobi(asat_peer_jacobi_serial, a, b, sweeps);
}

/// The Jacobi sweeps in C with an `omp parallel for schedule(static)` per sweep; the result
/// ends in `a`.
pub fn jacobi_omp(a: &mut Vec<f64>, b: &mut Vec<f64>, sweeps: usize) {
    jacobi(asat_peer_jacobi_omp, a, b, sweeps);
}

/// `reps` `omp parallel for` regions over `chunks` trivial iterations, `schedule(static)` or
/// `schedule(dynamic, 1)`.
pub fn parallel_for(chunks: usize, reps: usize, dynamic: bool) {
    // SAFETY: plain C function taking integers.
    unsafe { asat_peer_omp_for(chunks as c_long, reps as c_long, c_int::from(dynamic)) }
}

/// `reps` `omp parallel` regions with one barrier each.
pub fn region_barrier(reps: usize) {
    // SAFETY: plain C function taking an integer.
    unsafe { asat_peer_omp_region_barrier(reps as c_long) }
}

/// One `omp parallel` region in which every thread passes `reps` `omp barrier`s (the
/// barrier's latency, with the region's start amortized over `reps`).
pub fn barriers(reps: usize) {
    // SAFETY: plain C function taking an integer.
    unsafe { asat_peer_omp_barriers(reps as c_long) }
}

/// `omp_set_num_threads`.
pub fn set_threads(n: usize) {
    // SAFETY: plain C function taking an integer.
    unsafe { asat_peer_omp_set_threads(n as c_int) }
}

/// `omp_get_max_threads`.
pub fn max_threads() -> usize {
    // SAFETY: plain C function without arguments.
    unsafe { asat_peer_omp_max_threads() as usize }
}

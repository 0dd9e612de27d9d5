//! The 1-D Jacobi kernel of the ASAT paper's experiment, in Rust.

/// One Jacobi sweep over the chunk `out` of the output buffer, which starts at index `first`
/// of the arrays: `out[j] = (a[first+j-1] + a[first+j] + a[first+j+1]) / 3`.
///
/// `first >= 1` and `first + out.len() + 1 <= a.len()`.
#[inline]
pub fn sweep_chunk(a: &[f64], out: &mut [f64], first: usize) {
    let n = out.len();
    let l = &a[first - 1..first - 1 + n];
    let c = &a[first..first + n];
    let r = &a[first + 1..first + 1 + n];
    for j in 0..n {
        out[j] = (l[j] + c[j] + r[j]) / 3.0;
    }
}

/// Two buffers of `n` elements with the same initial contents.
pub fn buffers(n: usize) -> (Vec<f64>, Vec<f64>) {
    let a: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64).collect();
    (a.clone(), a)
}

/// `sweeps` double-buffered sweeps on the calling thread; returns the result buffer.
pub fn serial(a: &mut Vec<f64>, b: &mut Vec<f64>, sweeps: usize) {
    let n = a.len();
    for _ in 0..sweeps {
        sweep_chunk(a, &mut b[1..n - 1], 1);
        std::mem::swap(a, b);
    }
}

/// A checksum to compare results across implementations.
pub fn checksum(v: &[f64]) -> f64 {
    v.iter().sum()
}

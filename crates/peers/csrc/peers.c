/* C OpenMP peers of asat, built with gcc -fopenmp (see build.rs). */
#include <omp.h>

/* One Jacobi sweep over a[0..n) into b[1..n-1): b[i] = (a[i-1] + a[i] + a[i+1]) / 3. */
static inline void sweep_range(const double *a, double *b, long lo, long hi) {
    for (long i = lo; i < hi; i++)
        b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
}

/* `sweeps` double-buffered sweeps on one thread. Returns the buffer holding the result
   (0 = a, 1 = b). */
int asat_peer_jacobi_serial(double *a, double *b, long n, long sweeps) {
    for (long s = 0; s < sweeps; s++) {
        sweep_range(a, b, 1, n - 1);
        double *t = a; a = b; b = t;
    }
    return (int)(sweeps & 1);
}

/* The same with one `omp parallel for schedule(static)` region per sweep. */
int asat_peer_jacobi_omp(double *a, double *b, long n, long sweeps) {
    for (long s = 0; s < sweeps; s++) {
#pragma omp parallel for schedule(static)
        for (long i = 1; i < n - 1; i++)
            b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
        double *t = a; a = b; b = t;
    }
    return (int)(sweeps & 1);
}

/* Keeps an iteration from being optimized away without writing memory: a store to a shared
   variable would move its cache line between the CPUs at every iteration, a cost the Rust
   peers (`black_box`) do not pay. */
#define KEEP(x) __asm__ volatile("" : : "r"(x))

/* `reps` regions, each a parallel for over `chunks` trivially small iterations, with
   schedule(static) (equal contiguous chunks) or schedule(dynamic, 1). */
void asat_peer_omp_for(long chunks, long reps, int dynamic) {
    if (dynamic) {
        for (long r = 0; r < reps; r++) {
#pragma omp parallel for schedule(dynamic, 1)
            for (long i = 0; i < chunks; i++)
                KEEP(i);
        }
    } else {
        for (long r = 0; r < reps; r++) {
#pragma omp parallel for schedule(static)
            for (long i = 0; i < chunks; i++)
                KEEP(i);
        }
    }
}

/* `reps` SPMD regions with one barrier each. */
void asat_peer_omp_region_barrier(long reps) {
    for (long r = 0; r < reps; r++) {
#pragma omp parallel
        {
#pragma omp barrier
        }
    }
}

void asat_peer_omp_set_threads(int n) { omp_set_num_threads(n); }
int asat_peer_omp_max_threads(void) { return omp_get_max_threads(); }

/* One SPMD region in which every thread passes `reps` barriers: the barrier's own latency, the
   region's start amortized over `reps`. */
void asat_peer_omp_barriers(long reps) {
#pragma omp parallel
    {
        for (long r = 0; r < reps; r++) {
#pragma omp barrier
        }
    }
}

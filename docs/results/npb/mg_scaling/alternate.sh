#!/usr/bin/env bash
# MG class B alone at one and two threads, alternated: NPB-OMP (g++ -fopenmp) and NPB-RAYON on
# asat (ASAT_POLICY=fixed), plus NPB-RUST serial and NPB-RAYON on rayon at one thread. Each
# round runs every cell once; run under `flock /tmp/asat-bench.lock`.
# usage: alternate.sh NPB_RUST NPB_CPP OUT ROUNDS   (OUT: an `npb --build-only --kernels mg` folder)
set -euo pipefail
rust=$1 cpp=$2 out=$3 rounds=${4:-5}
npb=${NPB:-./target/release/examples/npb}
for r in $(seq "$rounds"); do
  for t in 1 2; do
    impls=omp,asat-fixed
    [ "$t" = 1 ] && impls=serial,rayon,omp,asat-fixed
    echo "# round $r, $t thread(s)"
    "$npb" --npb-rust "$rust" --npb-cpp "$cpp" --no-build --kernels mg --impls "$impls" \
      --threads "$t" --copies 1 --reps 1 --timeout 60 --out "$out" 2>&1 |
      grep -A1 ' run mg ' | grep -v '^--' | paste - - |
      sed -E 's/npb \[ *[0-9.]+ s\] run mg class B, impl //; s/npb \[ *[0-9.]+ s\]//'
  done
done

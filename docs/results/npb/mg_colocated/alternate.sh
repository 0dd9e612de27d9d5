#!/usr/bin/env bash
# MG class B as 2 and 3 copies at once, alternated: NPB-RUST serial, NPB-RAYON on asat with
# ASAT_POLICY=asat at two threads a copy, and NPB-RAYON on asat at one thread a copy (the floor
# a team of one can reach). Each round runs every cell once; run under
# `flock /tmp/asat-bench.lock`.
# usage: alternate.sh NPB_RUST NPB_CPP OUT ROUNDS   (OUT: an `npb --build-only --kernels mg` folder)
set -euo pipefail
rust=$1 cpp=$2 out=$3 rounds=${4:-5}
npb=${NPB:-./target/release/examples/npb}
for r in $(seq "$rounds"); do
  for t in 2 1; do
    impls=serial,asat
    [ "$t" = 1 ] && impls=asat-fixed
    echo "# round $r, $t thread(s) a copy"
    "$npb" --npb-rust "$rust" --npb-cpp "$cpp" --no-build --kernels mg --impls "$impls" \
      --threads "$t" --copies 2,3 --reps 1 --timeout 60 --out "$out" 2>&1 |
      grep -A1 ' run mg ' | grep -v '^--' | paste - - |
      sed -E 's/npb \[ *[0-9.]+ s\] run mg class B, impl //; s/npb \[ *[0-9.]+ s\]//'
  done
done

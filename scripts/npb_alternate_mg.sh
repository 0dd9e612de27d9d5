#!/usr/bin/env bash
# Runs NPB's MG class B cells alternately, a repetition each per round (run under flock /tmp/asat-bench.lock).
# usage: npb_alternate_mg.sh NPB_RUST NPB_CPP OUT ROUNDS COPIES CELL...
#   OUT:    an `npb --build-only --kernels mg` folder
#   COPIES: copies run at once, as `npb --copies` takes them (e.g. 1, or 2,3)
#   CELL:   THREADS:IMPLS, e.g. 1:serial,rayon,omp,asat-fixed (threads per copy, then `npb --impls`)
# docs/results/npb/mg_scaling.txt:    npb_alternate_mg.sh ... 5 1 1:serial,rayon,omp,asat-fixed 2:omp,asat-fixed
# docs/results/npb/mg_colocated.txt:  npb_alternate_mg.sh ... 5 2,3 2:serial,asat 1:asat-fixed
set -euo pipefail
if (($# < 6)); then
  echo "usage: $0 NPB_RUST NPB_CPP OUT ROUNDS COPIES THREADS:IMPLS... (see the comment at its top)" >&2
  exit 2
fi
rust=$1 cpp=$2 out=$3 rounds=$4 copies=$5
shift 5
npb=${NPB:-./target/release/npb}
for r in $(seq "$rounds"); do
  for cell in "$@"; do
    t=${cell%%:*} impls=${cell#*:}
    echo "# round $r, $t thread(s) a copy"
    "$npb" --npb-rust "$rust" --npb-cpp "$cpp" --no-build --kernels mg --impls "$impls" \
      --threads "$t" --copies "$copies" --reps 1 --timeout 60 --out "$out" 2>&1 |
      grep -A1 ' run mg ' | grep -v '^--' | paste - - |
      sed -E 's/npb \[ *[0-9.]+ s\] run mg class B, impl //; s/npb \[ *[0-9.]+ s\]//'
  done
done

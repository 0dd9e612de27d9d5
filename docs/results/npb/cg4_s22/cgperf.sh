#!/bin/bash
T=/tmp/npb_s22/build/target
run() { # label bin env...
  label=$1; shift
  out=$(perf stat -x, -e task-clock,context-switches,cpu-migrations /tmp/run4.sh "$@" 2>&1)
  wall=$(echo "$out" | grep " s, verified")
  tc=$(echo "$out" | grep task-clock | cut -d, -f1)
  cs=$(echo "$out" | grep context-switches | cut -d, -f1)
  mig=$(echo "$out" | grep cpu-migrations | cut -d, -f1)
  printf "%-12s %s  cpu %.2f s  cs %s  mig %s\n" "$label" "$wall" "$(echo "$tc/1000" | bc -l)" "$cs" "$mig"
}
for round in 1 2 3; do
  run serial $T/npb-rust-A/release/cg
  run rayon $T/npb-rayon-A/release/cg RAY_NUM_THREADS=2
  run fixed $T/npb-asat-A/release/cg ASAT_POLICY=fixed RAY_NUM_THREADS=2
  run single $T/npb-asat-A/release/cg ASAT_POLICY=single RAY_NUM_THREADS=2
  run asat $T/npb-asat-A/release/cg ASAT_POLICY=asat RAY_NUM_THREADS=2
done

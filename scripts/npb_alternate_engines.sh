#!/usr/bin/env bash
# One NPB-RAYON kernel built on two asat engines, alternating, 1 and 2 copies at once, policies
# fixed and asat, 2 threads: prints "round policy copies engine wall_s ok" per run (ok: the
# copies' "successful" verification lines). Each engine's binaries come from
#   npb --npb-rust NPB-Rust --kernels K --impls asat-fixed,asat --build-only --out DIR
# run from a checkout of that engine (`git worktree add`), so DIR/build/target holds them.
# Usage: npb_alternate_engines.sh KERNEL CLASS ROUNDS OLD_DIR NEW_DIR
set -eu
if [ $# -ne 5 ]; then
  echo "usage: $0 KERNEL CLASS ROUNDS OLD_DIR NEW_DIR (the --out folders of two npb --build-only runs)" >&2
  exit 2
fi
K=$1 C=$2 R=$3
OLD=$4/build/target/npb-asat-$C/release/$K
NEW=$5/build/target/npb-asat-$C/release/$K
for b in "$OLD" "$NEW"; do [ -x "$b" ] || { echo "no binary $b" >&2; exit 1; }; done
out=$(mktemp -d)
for r in $(seq "$R"); do for pol in fixed asat; do for cp in 1 2; do
  if [ $((r % 2)) = 1 ]; then order="NEW OLD"; else order="OLD NEW"; fi
  for e in $order; do
    bin=${!e}
    s=$(date +%s.%N)
    flock /tmp/asat-bench.lock bash -c "for i in \$(seq $cp); do RAY_NUM_THREADS=2 ASAT_POLICY=$pol $bin > $out/\$i 2>&1 & done; wait"
    t=$(echo "$(date +%s.%N) - $s" | bc)
    echo "$r $pol $cp $e $t ok $(cat "$out"/* | grep -ci successful)"
    rm -f "$out"/*
  done
done; done; done
rmdir "$out"

#!/usr/bin/env bash
# The many-core NPB checks, built here and run on a lent machine without a toolchain:
#   - CG's timed section (NPB's own `Time in seconds`, npb.csv's npb_s) on asat against
#     NPB-RAYON on rayon, one copy of N threads;
#   - 4 copies of N threads at once, asat (ASAT) against asat-fixed: the time to the last copy
#     (max_s) of CG, FT, IS, MG (class B) and EP (class A).
#
#   bash scripts/device_npb.sh pack NPB-Rust [PACK]     here: builds into PACK (default
#       out/device), keeps only the binaries and the shared libraries they load (a few tens
#       of MB);
#   bash scripts/device_npb.sh run THREADS DEST [PACK]  there: runs the checks from PACK,
#       writes DEST/cg.csv, DEST/copies_b.csv, DEST/copies_ep.csv and DEST/log.txt.
#
# With the device tool: `run` with carry ["out/device"] and the command
# `bash scripts/device_npb.sh run 16 $OUT` (about 5 minutes at 16 threads). CLASS (B) and
# EP_CLASS (A) set the classes, the same for both steps: rehearse here with
# `CLASS=S EP_CLASS=S`, `pack` and then `run 2 /tmp/x`.
set -euo pipefail
class=${CLASS:-B} ep_class=${EP_CLASS:-A}
usage() {
  echo "usage: $0 pack NPB-Rust [PACK] | run THREADS DEST [PACK]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
root=$(cd "$(dirname "$0")/.." && pwd)

pack() {
  local npb_rust=$1 pack=${2:-$root/out/device}
  [ -d "$npb_rust/NPB-RAYON" ] || {
    echo "$npb_rust: not a checkout of NPB-Rust (git clone https://github.com/GMAP/NPB-Rust)" >&2
    exit 1
  }
  (cd "$root" && cargo build --release -p asat-lab --bin npb)
  local npb=$root/target/release/npb
  "$npb" --npb-rust "$npb_rust" --impls rayon,asat-fixed,asat --kernels cg,ft,is,mg \
    --class "$class" --build-only --out "$pack/b"
  "$npb" --npb-rust "$npb_rust" --impls asat-fixed,asat --kernels ep --class "$ep_class" \
    --build-only --out "$pack/a"
  # Only the kernels' binaries: the cargo target folders hold hundreds of MB besides.
  local slim
  slim=$(mktemp -d)
  for d in "$pack"/a "$pack"/b; do
    for bin in "$d"/build/target/*/release/{cg,ep,ft,is,mg}; do
      [ -f "$bin" ] || continue
      local rel=${bin#"$pack"/}
      mkdir -p "$slim/$(dirname "$rel")"
      cp "$bin" "$slim/$rel"
    done
  done
  mkdir -p "$slim/bin" "$slim/lib"
  cp "$npb" "$slim/bin/"
  # The shared libraries asat's binaries load beyond the C library (hwloc and udev), which a
  # machine without the development packages may lack.
  ldd "$npb" "$slim/b/build/target/npb-asat-$class/release/cg" | awk '/=> \//{print $3}' | sort -u |
    grep -E 'libhwloc|libudev' | xargs -r -I{} cp -L {} "$slim/lib/"
  rm -rf "$pack"
  mv "$slim" "$pack"
  du -sh "$pack"
}

run() {
  local threads=$1 dest=$2 pack=${3:-$root/out/device}
  [ -x "$pack/bin/npb" ] || { echo "$pack: no pack (run '$0 pack NPB-Rust' first)" >&2; exit 1; }
  mkdir -p "$dest"
  export LD_LIBRARY_PATH=$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local npb=$pack/bin/npb log=$dest/log.txt
  nproc >"$log"
  "$npb" --no-build --impls rayon,asat-fixed,asat --kernels cg --class "$class" --copies 1 \
    --threads "$threads" --reps 3 --timeout 120 --out "$pack/b" 2>&1 | tee -a "$log"
  cp "$pack/b/npb.csv" "$dest/cg.csv"
  "$npb" --no-build --impls asat-fixed,asat --kernels cg,ft,is,mg --class "$class" --copies 4 \
    --threads "$threads" --reps 2 --timeout 120 --out "$pack/b" 2>&1 | tee -a "$log"
  cp "$pack/b/npb.csv" "$dest/copies_b.csv"
  "$npb" --no-build --impls asat-fixed,asat --kernels ep --class "$ep_class" --copies 4 \
    --threads "$threads" --reps 2 --timeout 120 --out "$pack/a" 2>&1 | tee -a "$log"
  cp "$pack/a/npb.csv" "$dest/copies_ep.csv"
}

case $1 in
  pack) [ $# -ge 2 ] || usage; pack "$2" "${3:-}" ;;
  run) [ $# -ge 3 ] || usage; run "$2" "$3" "${4:-}" ;;
  *) usage ;;
esac

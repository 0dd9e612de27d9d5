#!/usr/bin/env bash
# Installs what the workspace needs on a fresh Debian/Ubuntu machine, when missing:
# gcc with libgomp (the C OpenMP peer), pkg-config, and hwloc + udev headers (asat-pools links
# libhwloc through hwlocality). Sourced by scripts/demo and scripts/test.
set -euo pipefail

need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if command -v gcc >/dev/null 2>&1 &&
    ! printf '#include <omp.h>\nint main(void){return omp_get_max_threads()<1;}\n' |
        gcc -fopenmp -x c -o /dev/null - >/dev/null 2>&1; then
    need+=(gcc libgomp1)
fi
if ! pkg-config --exists 'hwloc >= 2.0' 2>/dev/null; then
    need+=(libhwloc-dev)
fi
if ! pkg-config --exists libudev 2>/dev/null; then
    need+=(libudev-dev)
fi
if ((${#need[@]})); then
    echo "setup: installing ${need[*]}" >&2
    if [ "$(id -u)" = 0 ]; then sudo=(); else sudo=(sudo); fi
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo not found; install a Rust toolchain (rustup) first" >&2
    exit 1
fi

#!/usr/bin/env bash
# Installs what the workspace needs on a fresh Debian/Ubuntu machine, when missing:
# gcc with libgomp (the C OpenMP peer), pkg-config, hwloc + udev headers (asat-pools links
# libhwloc through hwlocality), and Open MPI with libclang (asat-mpi builds on rsmpi, whose
# bindings bindgen generates with libclang; its tests run mpirun). Sourced by scripts/demo and
# scripts/test.
set -euo pipefail

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo not found; install a Rust toolchain first (https://rustup.rs), then rerun" >&2
    exit 1
fi

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
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
if ! pkg-config --exists ompi-c 2>/dev/null; then
    need+=(libopenmpi-dev)
fi
if [ -z "${LIBCLANG_PATH:-}" ] &&
    ! compgen -G '/usr/lib/llvm-*/lib/libclang.so' >/dev/null &&
    ! compgen -G '/usr/lib/*/libclang.so' >/dev/null &&
    ! compgen -G '/usr/lib64/libclang.so' >/dev/null; then
    need+=(libclang-dev)
fi
if ((${#need[@]})); then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "setup: apt-get not found (not Debian/Ubuntu?): install by hand gcc with OpenMP" \
            "(libgomp), pkg-config, the development files of hwloc >= 2.0 and libudev, Open MPI" \
            "(mpirun and its development files) and libclang (Debian/Ubuntu names: ${need[*]})," \
            "then rerun" >&2
        exit 1
    fi
    if [ "$(id -u)" = 0 ]; then
        sudo=()
    elif command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "setup: missing ${need[*]}, and not root with no sudo to install them: run as" \
            "root 'apt-get install ${need[*]}', then rerun" >&2
        exit 1
    fi
    echo "setup: installing ${need[*]}" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

#!/usr/bin/env bash
# ompdsm.sh - set up, build, and run ompdsm on a Debian 12 machine.
#   ./ompdsm.sh demo   install what is missing, build, run the main job
#   ./ompdsm.sh test   install what is missing, build, run the whole suite
#   ./ompdsm.sh deps | build     just those steps
# Needs root (or sudo) only when packages are missing.
set -euo pipefail
cd "$(dirname "$0")"
BUILD=${BUILD:-build}

PKGS=(clang-19 llvm-19 llvm-19-dev llvm-19-tools libclang-19-dev libclang-rt-19-dev libpapi-dev libibverbs-dev rdma-core
      libpmix-dev openmpi-bin libcmocka-dev meson ninja-build pkg-config gcc g++
      python3 python3-matplotlib procps cppcheck clang-tidy gdb libomp-19-dev
      slurmd slurmctld slurm-client munge libssl-dev)

deps() {
    local missing=()
    for p in "${PKGS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
            missing+=("$p")
    done
    if ((${#missing[@]})); then
        echo "ompdsm.sh: installing ${missing[*]}" >&2
        local sudo=""
        [ "$(id -u)" = 0 ] || sudo=sudo
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends "${missing[@]}" >/dev/null
    fi
    # Many DSM pages with mixed protections need many memory maps.
    if [ "$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)" -lt 1048576 ] &&
       [ "$(id -u)" = 0 ]; then
        sysctl -q -w vm.max_map_count=1048576 2>/dev/null || true
    fi
}

build() {
    if [ ! -f "$BUILD/build.ninja" ]; then
        local opts=(--buildtype=debugoptimized)
        # CI (CI=true, as CI services set it) builds warning-free or not at
        # all; elsewhere a newer compiler's new warning must not stop a build.
        [ "${CI:-}" = true ] && opts+=(-Dwerror=true)
        meson setup "$BUILD" "${opts[@]}" >/dev/null
    fi
    ninja -C "$BUILD" >/dev/null
}

demo() {
    DEMO_WORK=$(mktemp -d)
    trap 'rm -rf "$DEMO_WORK"' EXIT
    local work=$DEMO_WORK
    echo "== ompcc: compiling bench/kernels/cg.c (NPB-style CG, class S)"
    "$BUILD/ompcc" -O2 -DCLASS=S bench/kernels/cg.c -o "$work/cg" -lm
    echo "== ompdsmrun -np 4 ./cg   (4 local nodes, statistics on stderr)"
    OMPDSM_STATS=1 "$BUILD/ompdsmrun" -np 4 "$work/cg"
}

runtests() {
    meson test -C "$BUILD" --print-errorlogs --num-processes 2 "$@"
}

case "${1:-}" in
deps) deps ;;
build) deps; build ;;
demo) deps; build; demo ;;
test) shift; deps; build; runtests "$@" ;;
*) echo "usage: $0 demo|test|build|deps" >&2; exit 2 ;;
esac

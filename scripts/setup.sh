#!/usr/bin/env bash
# Installs what kforge needs and is missing (Debian 12 / Ubuntu 24.04 packages), then
# configures and builds. Safe to run again: each step is skipped when already done.
# Checks look for the files themselves, not for package names, so a machine that has
# the tools some other way (a pip cmake, say) is left alone.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KF_BUILD_DIR:-$root/build}"

missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need_file() {
  local pkg="$1"; shift
  for f in "$@"; do [ -e "$f" ] && return 0; done
  missing+=("$pkg")
}
need_cmd cmake cmake
# Ninja: the faster of the two build tools CMake drives here, and its "[57/180]" progress.
need_cmd ninja ninja-build
need_cmd g++ g++
need_cmd mpirun openmpi-bin
need_cmd nm binutils
need_cmd bwrap bubblewrap
# The tests render a sweep report in headless Chromium; `./kforge` itself needs no browser.
[ "${KF_SETUP_TESTS:-}" = 1 ] && need_cmd chromium chromium
# ... start a one-node Slurm cluster (slurmctld, slurmd, munged) for `sweep --slurm`, and
# check every source against .clang-format (scripts/check_format.sh, ctest's `format`).
if [ "${KF_SETUP_TESTS:-}" = 1 ]; then
  need_file slurm-wlm /usr/sbin/slurmctld
  need_file munge /usr/sbin/munged
  need_cmd clang-format clang-format
  # The PKB driver's own tests (sandbox/pkb/*_test.py: ctest's pkb_driver, pkb_ranks, pkb_serve, ...).
  need_cmd python3 python3
  # The planted bugs are patches of a problem's files (problems/*/bugs/*.patch).
  need_cmd patch patch
fi
need_file libopenmpi-dev /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h /usr/include/x86_64-linux-gnu/openmpi/mpi.h /usr/include/openmpi/mpi.h /usr/include/mpi.h
need_file nlohmann-json3-dev /usr/include/nlohmann/json.hpp
need_file libfmt-dev /usr/include/fmt/core.h
need_file doctest-dev /usr/include/doctest/doctest.h
need_file libseccomp-dev /usr/include/seccomp.h
need_file libcli11-dev /usr/include/CLI/CLI.hpp
need_file libcurl4-openssl-dev /usr/include/x86_64-linux-gnu/curl/curl.h /usr/include/curl/curl.h
need_file libssl-dev /usr/include/openssl/evp.h
# kforge solve's live view: display widths and line breaks, the kernel's colours.
need_file libunistring-dev /usr/include/uniwidth.h
need_file libsource-highlight-dev /usr/include/srchilite/sourcehighlight.h
need_cmd pkg-config pkg-config
need_cmd less less  # the pager of the kernel view (tests/interactive_live_test.cpp)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "kforge setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
    echo "kforge setup: could not install ${missing[*]}; install them by hand and run this again" >&2
    exit 1
  fi
fi

nvcc="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
if [ ! -x "$nvcc" ]; then
  echo "kforge setup: no CUDA toolkit at /usr/local/cuda (nvcc); install CUDA 13 and run this again" >&2
  exit 1
fi

# KF_DEBUG=1 builds with debug info (-O2 -g, CMake's RelWithDebInfo); KF_DEBUG=0 goes back
# to the default, Release (no -g, which cost 30-40% of each compile: cmake/build_speed.cmake).
# Unset, an existing build keeps the type it has.
cmake_args=()
case "${KF_DEBUG:-}" in
  1) cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  0) cmake_args=(-DCMAKE_BUILD_TYPE=Release) ;;
esac
cached_type() { sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt"; }
if [ ! -f "$build/CMakeCache.txt" ] ||
  { [ "${#cmake_args[@]}" -gt 0 ] && [ "${cmake_args[0]#*=}" != "$(cached_type)" ]; }; then
  gen=()
  [ -f "$build/CMakeCache.txt" ] || ! command -v ninja >/dev/null 2>&1 || gen=(-G Ninja)
  echo "kforge setup: configuring the build in $build (cmake)" >&2
  cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_CUDA_COMPILER="$nvcc" "${cmake_args[@]}" >/dev/null
fi

# ./kforge builds what `kforge solve` and `eval` run (kforge, and through its dependencies
# kforge-rank, kforge-runner, kforge-confine); ./kforge-test builds everything.
targets=(--target kforge)
what="kforge"
if [ "${KF_SETUP_TESTS:-}" = 1 ]; then
  targets=()
  what="kforge and its tests"
fi
# shellcheck source=scripts/build_progress.sh
. "$root/scripts/build_progress.sh"
log="$build/build.log"
if ! kf_build "$what" "$log" "$build" -j "$(nproc)" "${targets[@]}"; then
  # A parallel build can run out of memory on a small machine: once more, one job at a time.
  echo "kforge setup: the build failed; once more with one job at a time" >&2
  if ! kf_build "$what" "$log" "$build" -j 1 "${targets[@]}"; then
    kf_build_errors "$log"
    exit 1
  fi
fi

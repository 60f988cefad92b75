#!/usr/bin/env bash
# The two README commands in one script:
#   bash tools/bootstrap.sh quickstart   install what is missing, build, run scenarios/quickstart.lua
#   bash tools/bootstrap.sh test         install what is missing, build, run every test
#                                        (a normal build, an ASan+UBSan build, and the
#                                        threaded tests under ThreadSanitizer)
# Debian 12 packages only. Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-quickstart}
jobs=$(nproc 2>/dev/null || echo 2)

packages=(build-essential cmake pkg-config libgsl-dev liblua5.4-dev lua5.4 libcsv-dev
          libjansson-dev libcmocka-dev gnuplot-nox luarocks time python3
          libopenmpi-dev openmpi-bin # MPI is optional (mpirun -n K epochcast sweep); CI tests the split
          # the Python binding (python/, docs/python.md) and its tests: cffi, pytest, DataFrames,
          # plots, and `pip install --no-build-isolation ./python` into a venv, offline
          python3-cffi python3-pytest python3-pandas python3-matplotlib python3-venv
          python3-setuptools python3-wheel)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "bootstrap: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() { # build DIR [cmake options...]
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

# build/ with the library laid out by a profile of its own workload (CMakeLists.txt, EC_PGO):
# an instrumented build in build-pgo/ runs tools/pgo_train.sh (a second), then build/ is
# compiled with the counts.  1.06-1.21x the predictions per second (bench/results/speed.md);
# the same predictions to the bit.  EC_PGO=OFF in the environment builds without.
build_main() {
  # GCC only (CMake's compiler: $CC, else cc); another compiler builds without a profile
  if [ "${EC_PGO:-ON}" = OFF ] || ! "${CC:-cc}" --version 2>/dev/null | grep -q 'Free Software Foundation'; then
    build build -DEC_PGO=OFF
    return
  fi
  local profile=$PWD/build-pgo/profile
  # (no epochcast-mpi: the training runs epochcast, which never links MPI)
  build build-pgo -DEC_PGO=GENERATE -DEC_PGO_DIR="$profile" -DEC_BUILD_TESTS=OFF -DEC_BUILD_BENCH=OFF -DEC_MPI=OFF
  rm -rf "$profile" # counts of an earlier training would add up
  bash tools/pgo_train.sh build-pgo
  # objects compiled with an older profile would not be rebuilt for a new one
  [ -f build/CMakeCache.txt ] && cmake --build build --target clean >/dev/null
  build build -DEC_PGO=USE -DEC_PGO_DIR="$profile"
}

install_missing
case "$mode" in
  quickstart)
    build_main
    ./build/epochcast run scenarios/quickstart.lua
    ;;
  test)
    build_main
    (cd build && ctest --output-on-failure -j "$jobs")
    # the layers of core/src and the largest file and function (also the ctest lint_layers)
    python3 tools/check_layers.py --objects build/core/CMakeFiles/epochcast_objects.dir/src/*/*.c.o
    echo "bootstrap: sanitizer build (ASan + UBSan)"
    build build-asan -DEC_SANITIZE=ON
    (cd build-asan && ctest --output-on-failure -j "$jobs")
    # the tests that run threads (sweep.c's ring, optimize.c's shared queue, contexts on
    # several threads), built alone: a data race fails them
    echo "bootstrap: thread sanitizer build (the threaded tests)"
    cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEC_TSAN=ON -DEC_BUILD_LUA=OFF \
          -DEC_BUILD_BENCH=OFF >/dev/null
    cmake --build build-tsan -j "$jobs" --target test_sweep test_optimize test_threads test_alloc_threads
    (cd build-tsan && ctest --output-on-failure -j "$jobs" -R '^test_(sweep|optimize|threads|alloc_threads)$')
    ;;
  *)
    echo "usage: bash tools/bootstrap.sh [quickstart|test]" >&2; exit 2 ;;
esac

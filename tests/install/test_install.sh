#!/usr/bin/env bash
# The install and the ways to embed epochcast, each against what a user would do.
#   bash tests/install/test_install.sh CHECK BUILD_DIR SOURCE_DIR WORK_DIR CC LUA
# CHECK is one of:
#   prefix          cmake --install BUILD_DIR to WORK_DIR/staged, then move it to WORK_DIR/prefix
#                   (an installed tree must not point back to where it was installed), check the
#                   files, the SONAME, that libepochcast.so exports only ec_* symbols, that
#                   epochcast does not link MPI, and the manual epochcast(1)
#   pkgconfig       build examples/predict.c with `pkg-config --cflags --libs epochcast`, and
#                   with `--static` against libepochcast.a
#   find_package    build examples/ with find_package(epochcast), shared and static
#   lua             stock lua5.4 and the installed CLI run examples/predict.lua and an installed
#                   scenario
# examples/predict.c calls GSL itself (gsl_set_error_handler_off(), as epochcast.h asks of every
# host), so each way of linking it checks that GSL comes with epochcast's link flags.
#   add_subdirectory, fetchcontent
#                   examples/ as a scratch consumer that builds epochcast from SOURCE_DIR
#   deb             cpack -G DEB, dpkg-deb -c and -I (epochcast without MPI, with scenarios/ and
#                   epochcast(1); epochcast-mpi apart), and the unpacked packages run the example
#   luarocks        luarocks make of the rockspec into a scratch tree (exit 77 = skipped when
#                   luarocks is not installed)
# pkgconfig, find_package and lua need prefix to have run (ctest fixture ec_installed).
# Every program runs with EPOCHCAST_MODELS unset: it must find the installed models/ itself.
set -euo pipefail
check=$1 build=$2 src=$3 work=$4 cc=$5 lua=$6
unset EPOCHCAST_MODELS
prefix=$work/prefix

fail() { echo "FAIL: $*" >&2; exit 1; }
# run CMD...: its output on stdout, the command and its output in the log
run() { echo "+ $*" >&2; "$@"; }
# expect_line TEXT PATTERN: TEXT has a line matching the extended regex PATTERN
expect_line() { grep -Eq -- "$2" <<<"$1" || fail "no line matching '$2' in:"$'\n'"$1"; }
real() { (cd "$1" && pwd -P); }
step_re='step [0-9]+\.[0-9] ms \(p10 [0-9]+\.[0-9], p90 [0-9]+\.[0-9]\), [0-9]+\.[0-9] samples/s'

need_prefix() { [ -f "$prefix/include/epochcast.h" ] || fail "no install in $prefix (run install_prefix first)"; }
# the example's output names the models/ folder it loaded; it must be the installed one
expect_installed_models() { expect_line "$1" "models: $(real "$prefix")/share/epochcast/models\$"; }

case "$check" in
prefix)
  rm -rf "$work/staged" "$prefix"
  run cmake --install "$build" --prefix "$work/staged" >/dev/null
  mv "$work/staged" "$prefix"
  for f in include/epochcast.h lib/libepochcast.a lib/libepochcast.so lib/pkgconfig/epochcast.pc \
           lib/cmake/epochcast/epochcastConfig.cmake lib/cmake/epochcast/epochcastConfigVersion.cmake \
           lib/cmake/epochcast/epochcastTargets.cmake lib/cmake/epochcast/epochcastDeps.cmake \
           bin/epochcast lib/lua/5.4/epochcast.so share/epochcast/models/gpus.csv \
           share/epochcast/models/constants.csv share/doc/epochcast/README.md \
           share/epochcast/scenarios/quickstart.lua share/epochcast/scenarios/lib/audit.lua \
           share/man/man1/epochcast.1.gz; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
  done
  # MPI is optional: the CLI and the library never link it (epochcast-mpi does, when built).
  for f in bin/epochcast lib/libepochcast.so lib/lua/5.4/epochcast.so; do
    if ldd "$prefix/$f" | grep -Ei 'libmpi|openmpi|libpmix'; then fail "$f links MPI"; fi
  done
  # ... and started by mpirun as one of several processes it stops and names epochcast-mpi
  # (rather than run the whole command in each)
  if out=$(OMPI_COMM_WORLD_SIZE=2 "$prefix/bin/epochcast" gpus 2>&1); then fail "epochcast ran as 1 of 2 MPI processes"; fi
  expect_line "$out" 'built without MPI.*run epochcast-mpi'
  # The manual: every command has its section, and troff reads it without a warning.
  man=$(gzip -dc "$prefix/share/man/man1/epochcast.1.gz")
  for c in predict sweep plan optimize validate run; do
    expect_line "$man" "^\.SS \"epochcast $c\"\$"
  done
  if command -v groff >/dev/null; then
    warn=$(groff -man -Tutf8 -ww -z <<<"$man" 2>&1)
    [ -z "$warn" ] || fail "groff warns on epochcast.1: $warn"
    expect_line "$(groff -man -Tutf8 -P-cbou <<<"$man" 2>/dev/null)" '^ +epochcast predict$'
  fi
  soname=$(objdump -p "$prefix/lib/libepochcast.so" | awk '$1 == "SONAME" {print $2}')
  [[ $soname =~ ^libepochcast\.so\.[0-9]+$ ]] || fail "SONAME '$soname' is not libepochcast.so.N"
  [ -e "$prefix/lib/$soname" ] || fail "no $soname in lib/"
  # The public API only: every exported function is ec_*, nothing internal (eci_*).
  leaked=$(nm -D --defined-only "$prefix/lib/libepochcast.so" | awk '$2 ~ /[TDBR]/ && $3 !~ /^ec_/ {print $3}')
  [ -z "$leaked" ] || fail "libepochcast.so exports non-API symbols: $leaked"
  expect_line "$(nm -D --defined-only "$prefix/lib/libepochcast.so")" ' T ec_predict$'
  # Moved after install: nothing may point at the staging folder.
  if grep -rlF "$work/staged" "$prefix" >/dev/null; then
    fail "installed files name the install folder: $(grep -rlF "$work/staged" "$prefix")"
  fi
  echo "installed and moved to $prefix: SONAME $soname, API-only exports"
  ;;
pkgconfig)
  need_prefix
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  cflags=$(run pkg-config --cflags epochcast)
  libs=$(run pkg-config --libs epochcast)
  libdir=$(pkg-config --variable=libdir epochcast)
  [ "$(real "$libdir")" = "$(real "$prefix/lib")" ] || fail "pkg-config libdir $libdir is not $prefix/lib"
  static_libs=$(run pkg-config --static --libs epochcast)
  expect_line "$static_libs" ' -lcsv( |$)'  # Libs.private
  # GSL is public (the host calls it): in Requires, so in --libs without --static
  expect_line "$(pkg-config --print-requires epochcast)" '^gsl( |$)'
  expect_line "$libs" ' -lgsl( |$)'
  # shellcheck disable=SC2086
  run "$cc" -std=c11 -Wall -Wextra -Werror "$src/examples/predict.c" $cflags $libs \
    -Wl,-rpath,"$libdir" -o "$work/predict_pkgconfig"
  out=$(run "$work/predict_pkgconfig")
  echo "$out"
  expect_installed_models "$out"
  expect_line "$out" "$step_re"
  expect_line "$(ldd "$work/predict_pkgconfig")" 'libepochcast\.so\.[0-9]+ => '
  # Static: libepochcast.a (named, as the .so beside it would win) with --static's flags
  # (-fno-lto: an LTO build's fat objects link as plain code, not through a second LTO)
  # shellcheck disable=SC2086
  run "$cc" -std=c11 -Wall -Wextra -Werror -fno-lto "$src/examples/predict.c" $cflags \
    ${static_libs//-lepochcast/-l:libepochcast.a} -o "$work/predict_pkgconfig_static"
  out=$(run "$work/predict_pkgconfig_static")
  echo "$out"
  expect_line "$out" "$step_re"
  if grep -q libepochcast <<<"$(ldd "$work/predict_pkgconfig_static")"; then
    fail "the --static build links libepochcast.so"
  fi
  ;;
find_package)
  need_prefix
  for kind in shared static; do
    b=$work/find_package_$kind
    rm -rf "$b"
    static=OFF; [ $kind = static ] && static=ON
    run cmake -S "$src/examples" -B "$b" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
      -DEPOCHCAST_STATIC=$static >/dev/null
    run cmake --build "$b" >/dev/null
    out=$(run "$b/predict")
    echo "$out"
    expect_line "$out" "$step_re"
    if [ $kind = shared ]; then
      expect_installed_models "$out"
    elif grep -q libepochcast <<<"$(ldd "$b/predict")"; then
      fail "static build links libepochcast.so"
    fi
  done
  ;;
lua)
  need_prefix
  export LUA_CPATH="$prefix/lib/lua/5.4/?.so"
  dir=$(cd "$work" && run "$lua" -e 'io.write(require("epochcast").models_dir())')
  [ "$dir" = "$(real "$prefix")/share/epochcast/models" ] || fail "the Lua module reads $dir"
  out=$(cd "$work" && run "$lua" "$src/examples/predict.lua")
  echo "$out"; expect_line "$out" "$step_re"
  out=$(cd "$work" && LUA_CPATH= run "$prefix/bin/epochcast" --version)
  echo "$out"; expect_installed_models "$out"
  out=$(cd "$work" && LUA_CPATH= run "$prefix/bin/epochcast" run "$src/examples/predict.lua")
  echo "$out"; expect_line "$out" "$step_re"
  # an installed scenario runs in place (its lib/ beside it), writing into the current folder
  rm -f "$work/quickstart.csv"
  out=$(cd "$work" && LUA_CPATH='' run "$prefix/bin/epochcast" run "$prefix/share/epochcast/scenarios/quickstart.lua")
  echo "$out" | tail -3
  [ -s "$work/quickstart.csv" ] || fail "the installed quickstart.lua wrote no quickstart.csv in $work"
  ;;
add_subdirectory|fetchcontent)
  b=$work/$check
  rm -rf "$b"
  if [ "$check" = add_subdirectory ]; then
    opts=(-DEPOCHCAST_SOURCE_DIR="$src")
  else # FetchContent_Declare(GIT_REPOSITORY ...), with the download replaced by this tree
    opts=(-DEPOCHCAST_FETCH=ON -DFETCHCONTENT_SOURCE_DIR_EPOCHCAST="$src")
  fi
  run cmake -S "$src/examples" -B "$b" -DCMAKE_C_COMPILER="$cc" "${opts[@]}" >/dev/null
  run cmake --build "$b" -j 2 >/dev/null
  out=$(run "$b/predict")
  echo "$out"
  expect_line "$out" "$step_re"
  expect_line "$out" "models: $(real "$src")/models\$"   # the build tree reads its source tree
  # A subproject builds the library only: no tests, benches, Lua module or CLI.
  found=$(find "$b" -name 'test_*' -type f -perm -u+x -o -name 'bench_*' -type f -perm -u+x -o \
          -name 'epochcast' -type f -perm -u+x | head -3)
  [ -z "$found" ] || fail "the subproject built more than the library: $found"
  ;;
deb)
  command -v dpkg-deb >/dev/null || { echo "dpkg-deb not found: skipped"; exit 77; }
  d=$work/deb
  rm -rf "$d"
  (cd "$build" && run cpack -G DEB -B "$d" >/dev/null)
  runtime=$(ls "$d"/epochcast_*.deb) dev=$(ls "$d"/epochcast-dev_*.deb)
  list=$(dpkg-deb -c "$runtime")
  for f in 'usr/bin/epochcast$' 'usr/lib/libepochcast\.so\.[0-9]+ ' usr/lib/lua/5.4/epochcast.so \
           usr/share/epochcast/models/gpus.csv usr/share/epochcast/scenarios/quickstart.lua \
           usr/share/epochcast/scenarios/lib/audit.lua usr/share/man/man1/epochcast.1.gz \
           usr/share/doc/epochcast/docs/cli.md; do
    expect_line "$list" "\./$f"
  done
  list=$(dpkg-deb -c "$dev")
  for f in usr/include/epochcast.h usr/lib/libepochcast.a usr/lib/pkgconfig/epochcast.pc \
           usr/lib/cmake/epochcast/epochcastConfig.cmake; do
    expect_line "$list" "\./$f"
  done
  run dpkg-deb -I "$runtime"
  # MPI is optional: the epochcast package neither ships nor needs it (epochcast-mpi does)
  depends=$(dpkg-deb -f "$runtime" Depends)
  if grep -Ei 'mpi|pmix' <<<"$depends"; then fail "the epochcast package depends on MPI: $depends"; fi
  expect_line "$depends" 'libgsl'
  if grep -E 'epochcast-mpi' <<<"$(dpkg-deb -c "$runtime")"; then fail "the epochcast package ships epochcast-mpi"; fi
  expect_line "$(dpkg-deb -f "$dev" Depends)" 'epochcast \(= '   # epochcast-dev needs epochcast
  expect_line "$(dpkg-deb -f "$dev" Depends)" 'libgsl-dev'
  # the packaged manual: man's index reads its NAME line
  if command -v lexgrog >/dev/null; then
    dpkg-deb --fsys-tarfile "$runtime" | tar -xOf - ./usr/share/man/man1/epochcast.1.gz >"$d/epochcast.1.gz"
    expect_line "$(run lexgrog "$d/epochcast.1.gz")" '"epochcast - predict '
  fi
  mpideb=$(ls "$d"/epochcast-mpi_*.deb 2>/dev/null || true)
  if [ -n "$mpideb" ]; then # built where CMake found MPI
    expect_line "$(dpkg-deb -c "$mpideb")" '\./usr/bin/epochcast-mpi$'
    expect_line "$(dpkg-deb -f "$mpideb" Depends)" 'epochcast \(= '
  fi
  # Unpacked anywhere, the packages work: the example against their .pc, the CLI on its models.
  root=$d/root
  dpkg-deb -x "$runtime" "$root"; dpkg-deb -x "$dev" "$root"
  export PKG_CONFIG_PATH=$root/usr/lib/pkgconfig
  # shellcheck disable=SC2046
  run "$cc" -std=c11 "$src/examples/predict.c" $(pkg-config --cflags --libs epochcast) \
    -Wl,-rpath,"$root/usr/lib" -o "$d/predict"
  out=$(run "$d/predict"); echo "$out"
  expect_line "$out" "models: $(real "$root")/usr/share/epochcast/models\$"
  out=$(run "$root/usr/bin/epochcast" --version); echo "$out"
  expect_line "$out" "models: $(real "$root")/usr/share/epochcast/models\$"
  ;;
luarocks)
  command -v luarocks >/dev/null || { echo "luarocks not found: skipped"; exit 77; }
  r=$work/luarocks
  rm -rf "$r"; mkdir -p "$r/src"
  # luarocks make builds inside the source folder (build.luarocks/): a copy of what the rock needs
  cp -r "$src"/CMakeLists.txt "$src"/cmake "$src"/core "$src"/lua "$src"/models "$src"/docs \
        "$src"/examples "$src"/README.md "$src"/epochcast-scm-1.rockspec "$r/src/"
  export CMAKE_BUILD_PARALLEL_LEVEL=2
  (cd "$r/src" && run luarocks make --lua-version 5.4 --tree "$r/tree" epochcast-scm-1.rockspec >/dev/null)
  export LUA_CPATH="$r/tree/lib/lua/5.4/?.so"
  out=$(cd "$work" && run "$lua" "$src/examples/predict.lua"); echo "$out"
  expect_line "$out" "$step_re"
  dir=$(cd "$work" && "$lua" -e 'io.write(require("epochcast").models_dir())')
  case "$dir" in "$(real "$r/tree")"/*) ;; *) fail "the rock's module reads $dir, outside its tree" ;; esac
  out=$(cd "$work" && LUA_CPATH= run "$r/tree/bin/epochcast" run "$src/examples/predict.lua"); echo "$out"
  expect_line "$out" "$step_re"
  ;;
*)
  fail "unknown check '$check'" ;;
esac
echo "ok: $check"

#!/usr/bin/env bash
# The install and the ways to embed epochcast, each against what a user would do.
#   bash tests/install/test_install.sh CHECK BUILD_DIR SOURCE_DIR WORK_DIR CC LUA
# CHECK is one of:
#   prefix          cmake --install BUILD_DIR to WORK_DIR/staged, then move it to WORK_DIR/prefix
#                   (an installed tree must not point back to where it was installed), check the
#                   files, the SONAME and that libepochcast.so exports only ec_* symbols
#   pkgconfig       build examples/predict.c with `pkg-config --cflags --libs epochcast`
#   find_package    build examples/ with find_package(epochcast), shared and static
#   lua             stock lua5.4 and the installed CLI run examples/predict.lua
#   add_subdirectory, fetchcontent
#                   examples/ as a scratch consumer that builds epochcast from SOURCE_DIR
#   deb             cpack -G DEB, dpkg-deb -c, and the unpacked packages run the example
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
step_re='step [0-9]+\.[0-9] ms, [0-9]+\.[0-9] samples/s'

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
           share/epochcast/models/constants.csv share/doc/epochcast/README.md; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
  done
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
  expect_line "$(pkg-config --static --libs epochcast)" ' -lcsv( |$)'  # Libs.private
  # shellcheck disable=SC2086
  run "$cc" -std=c11 -Wall -Wextra -Werror "$src/examples/predict.c" $cflags $libs \
    -Wl,-rpath,"$libdir" -o "$work/predict_pkgconfig"
  out=$(run "$work/predict_pkgconfig")
  echo "$out"
  expect_installed_models "$out"
  expect_line "$out" "$step_re"
  expect_line "$(ldd "$work/predict_pkgconfig")" 'libepochcast\.so\.[0-9]+ => '
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
  list=$(dpkg-deb -c "$runtime"; dpkg-deb -c "$dev")
  for f in usr/bin/epochcast 'usr/lib/libepochcast\.so\.[0-9]+ ' usr/lib/lua/5.4/epochcast.so \
           usr/share/epochcast/models/gpus.csv usr/include/epochcast.h usr/lib/libepochcast.a \
           usr/lib/pkgconfig/epochcast.pc usr/lib/cmake/epochcast/epochcastConfig.cmake; do
    expect_line "$list" "\./$f"
  done
  expect_line "$(dpkg-deb -f "$dev" Depends)" 'epochcast \(= '   # epochcast-dev needs epochcast
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

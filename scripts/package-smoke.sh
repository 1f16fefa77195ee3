#!/usr/bin/env bash
# Packaging smoke test: stage an install (scripts/install.sh), move it elsewhere (the package must
# be relocatable), then consume it the ways users do:
#   1. examples-c/ as a standalone CMake project: find_package(dnnplan 0.1 CONFIG REQUIRED),
#      build, CTest (the C and C++ examples, one through dnnplan.hpp), and check the examples
#      record NEEDED libdnnplan.so.<ABI>;
#   2. a C compile with `pkg-config --cflags --libs dnnplan`, then run it;
#   3. an integrator that loads it at run time: ffi-tests/t_dlopen_integrator.c built against the
#      installed header with no link to the library, dlopening it by its SONAME from lib/ (and
#      the installed library marked NODELETE);
#   4. the version rules of dnnplanConfigVersion.cmake: which find_package versions accept it;
#   5. the staged CLI: `bin/dnnplan env`.
#
# usage: scripts/package-smoke.sh [--no-build]   (--no-build: stage an existing release build)
# Needs cmake, pkg-config and a C/C++ compiler. Exits non-zero on the first failure.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
for tool in cmake pkg-config "${CC:-cc}" "${CXX:-c++}"; do
  command -v "$tool" >/dev/null 2>&1 || { echo "package-smoke: '$tool' is not installed" >&2; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/dnnplan-package-smoke.XXXXXX")"
trap 'rm -rf "$work"' EXIT
step() { printf '\n== package-smoke: %s\n' "$*"; }

step "stage the install"
scripts/install.sh "$@" "$work/staged"
version="$(sed -n 's/^version *= *"\([0-9][0-9.]*\)".*/\1/p' Cargo.toml | head -n 1)"
IFS=. read -r major minor _patch <<<"$version"
if [ "$major" = 0 ]; then abi="0.$minor"; else abi="$major"; fi

# Relocation: nothing may refer to the staging path.
mv "$work/staged" "$work/prefix"
prefix="$work/prefix"
ls -l "$prefix/lib" "$prefix/include" "$prefix/lib/cmake/dnnplan" "$prefix/lib/pkgconfig"
[ "$(readlink "$prefix/lib/libdnnplan.so")" = "libdnnplan.so.$abi" ]
[ "$(readlink "$prefix/lib/libdnnplan.so.$abi")" = "libdnnplan.so.$version" ]

step "build and test examples-c with find_package (CMAKE_PREFIX_PATH=$prefix)"
cmake -S examples-c -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "$work/build" --parallel 2
(cd "$work/build" && ctest --output-on-failure)
for exe in "$work/build/dnnplan_info" "$work/build/dnnplan_errors_cpp" "$work/build/dnnplan_plan"; do
  if ! readelf -d "$exe" | grep "NEEDED.*\[libdnnplan.so.$abi\]" >/dev/null; then
    echo "package-smoke: $exe does not record NEEDED libdnnplan.so.$abi" >&2
    readelf -d "$exe" >&2
    exit 1
  fi
done

step "compile with pkg-config"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$(pkg-config --modversion dnnplan)" = "$version" ]
libdir="$(pkg-config --variable=libdir dnnplan)"
# shellcheck disable=SC2046 # word splitting of the flags is intended
"${CC:-cc}" -std=c99 -Wall -Wextra -Werror examples-c/dnnplan_info.c -o "$work/info_pkgconfig" \
  $(pkg-config --cflags --libs dnnplan) -Wl,-rpath,"$libdir"
"$work/info_pkgconfig"

step "dlopen the installed library by its SONAME (an integrator that loads it at run time)"
if ! readelf -d "$prefix/lib/libdnnplan.so.$version" | grep "FLAGS_1.*NODELETE" >/dev/null; then
  echo "package-smoke: the installed library is not marked NODELETE (-z nodelete)" >&2
  exit 1
fi
"${CC:-cc}" -std=c99 -Wall -Wextra -Werror -I "$prefix/include" ffi-tests/t_dlopen_integrator.c \
  -o "$work/dlopen_integrator" -ldl -pthread
if readelf -d "$work/dlopen_integrator" | grep "NEEDED.*libdnnplan" >/dev/null; then
  echo "package-smoke: the dlopen integrator links libdnnplan" >&2
  exit 1
fi
LD_LIBRARY_PATH="$prefix/lib" DNNP_TEST_LIBRARY="libdnnplan.so.$abi" "$work/dlopen_integrator"

step "find_package version rules (package $version)"
mkdir -p "$work/version-check"
cat >"$work/version-check/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(dnnplan_version_check LANGUAGES C)
find_package(dnnplan ${REQUEST} CONFIG QUIET)
if(dnnplan_FOUND)
  message(STATUS "RESULT=found")
else()
  message(STATUS "RESULT=rejected")
endif()
CMAKE
expect_version() { # request expected
  local out
  rm -rf "$work/version-check/build"
  out="$(cmake -S "$work/version-check" -B "$work/version-check/build" \
          -DCMAKE_PREFIX_PATH="$prefix" -DREQUEST="$1" 2>&1)" || { echo "$out" >&2; exit 1; }
  if ! grep -q "RESULT=$2" <<<"$out"; then
    echo "package-smoke: find_package(dnnplan $1) should be $2" >&2
    echo "$out" >&2
    exit 1
  fi
  echo "find_package(dnnplan ${1:-<any>}): $2"
}
next_minor=$((minor + 1))
expect_version "" found
expect_version "$major.$minor" found
expect_version "$version" found
expect_version "$major.$next_minor" rejected
expect_version "$major.$minor.$((_patch + 1))" rejected
expect_version "$((major + 1)).0" rejected
if [ "$major" = 0 ] && [ "$minor" -gt 0 ]; then
  expect_version "0.$((minor - 1))" rejected
fi

step "staged CLI"
"$prefix/bin/dnnplan" env

printf '\npackage-smoke: OK (dnnplan %s, ABI %s)\n' "$version" "$abi"

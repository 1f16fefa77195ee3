#!/usr/bin/env bash
# Stage a dnnplan install into PREFIX (one command): builds the release library and CLI, then
#
#   PREFIX/lib/libdnnplan.so.X.Y.Z                  the library (SONAME libdnnplan.so.<ABI>)
#   PREFIX/lib/libdnnplan.so.<ABI> -> libdnnplan.so.X.Y.Z
#   PREFIX/lib/libdnnplan.so       -> libdnnplan.so.<ABI>     (link-time name)
#   PREFIX/include/dnnplan.h, dnnplan.hpp         (and every other header under include/)
#   PREFIX/lib/cmake/dnnplan/dnnplanConfig.cmake, dnnplanConfigVersion.cmake
#   PREFIX/lib/pkgconfig/dnnplan.pc
#   PREFIX/bin/dnnplan
#
# <ABI> is "0.<minor>" while the major version is 0, else "<major>". The staged tree is
# relocatable (CMake and pkg-config files compute the prefix from their own location).
#
# usage: scripts/install.sh [--no-build] PREFIX
#   --no-build   stage an existing release build instead of running `cargo build --release`
set -euo pipefail

usage() { echo "usage: $0 [--no-build] PREFIX" >&2; exit 2; }
build=1
prefix=""
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    -h|--help) usage ;;
    -*) echo "$0: unknown option $arg" >&2; usage ;;
    *) [ -z "$prefix" ] || usage; prefix="$arg" ;;
  esac
done
[ -n "$prefix" ] || usage

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

# Version from Cargo.toml's [package] section (the first `version =` line).
version="$(sed -n 's/^version *= *"\([0-9][0-9.]*\)".*/\1/p' Cargo.toml | head -n 1)"
IFS=. read -r major minor patch <<<"$version"
[ -n "${patch:-}" ] || { echo "$0: cannot read the version from Cargo.toml" >&2; exit 1; }
if [ "$major" = 0 ]; then abi="0.$minor"; else abi="$major"; fi

if [ "$build" = 1 ]; then
  cargo build --release --lib --bin dnnplan
fi
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
lib="$target_dir/release/libdnnplan.so"
cli="$target_dir/release/dnnplan"
for f in "$lib" "$cli"; do
  [ -f "$f" ] || { echo "$0: $f not found (run without --no-build)" >&2; exit 1; }
done
if command -v readelf >/dev/null 2>&1; then
  soname="$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
  if [ "$soname" != "libdnnplan.so.$abi" ]; then
    echo "$0: $lib has SONAME '$soname', expected libdnnplan.so.$abi" >&2
    exit 1
  fi
fi

mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
install -d "$prefix/lib/cmake/dnnplan" "$prefix/lib/pkgconfig" "$prefix/include" "$prefix/bin"
install -m 0755 "$lib" "$prefix/lib/libdnnplan.so.$version"
ln -sfn "libdnnplan.so.$version" "$prefix/lib/libdnnplan.so.$abi"
ln -sfn "libdnnplan.so.$abi" "$prefix/lib/libdnnplan.so"
# Every header under include/ (dnnplan.h, the C++ layer dnnplan.hpp, and any header they include,
# e.g. dlpack/dlpack.h).
(cd include && find . \( -name '*.h' -o -name '*.hpp' \) -print0 | while IFS= read -r -d '' h; do
  install -D -m 0644 "$h" "$prefix/include/$h"
done)
install -m 0755 "$cli" "$prefix/bin/dnnplan"

substitute() {
  sed -e "s/@VERSION@/$version/g" -e "s/@SOVERSION@/$abi/g" \
      -e "s/@VERSION_MAJOR@/$major/g" -e "s/@VERSION_MINOR@/$minor/g" \
      -e "s/@VERSION_PATCH@/$patch/g" "$1" >"$2"
  if grep -n '@[A-Z_]*@' "$2" >&2; then
    echo "$0: unsubstituted placeholder in $2" >&2
    exit 1
  fi
  chmod 0644 "$2"
}
substitute cmake/dnnplanConfig.cmake.in "$prefix/lib/cmake/dnnplan/dnnplanConfig.cmake"
substitute cmake/dnnplanConfigVersion.cmake.in "$prefix/lib/cmake/dnnplan/dnnplanConfigVersion.cmake"
substitute cmake/dnnplan.pc.in "$prefix/lib/pkgconfig/dnnplan.pc"

echo "dnnplan $version (ABI $abi) staged in $prefix"

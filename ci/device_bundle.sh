#!/usr/bin/env bash
# ci/device_bundle.sh: packs an existing build for a GPU host that has no
# package registry and no development headers (the lent H200 machines).
#
#   here:   ci/bootstrap.sh && ci/device_bundle.sh      -> .dev/bundle.tar.gz
#   there:  source ci/device_env.sh                      (unpacks, sets paths)
#
# The bundle holds build/ without object files, its executables stripped,
# and every shared library they need that is not glibc's or CUDA's
# (Criterion and its dependencies, MPFR, SQLite, zlib), so the binaries built
# on Debian 12 run on a newer distribution.  CTest files name absolute paths,
# so the build must be made in the checkout that device_env.sh will recreate
# there (BITGATE_BUNDLE_ROOT, default this checkout's path).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BITGATE_BUILD_DIR:-build}"
[ -x "$build_dir/bitgate" ] || { echo "device_bundle: no $build_dir/bitgate; run ci/bootstrap.sh" >&2; exit 3; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build" "$stage/lib" .dev
# Everything but compiler intermediates; the CTest files and executables stay.
tar -C "$build_dir" --exclude='*.o' --exclude='*.a' --exclude='*.d' -cf - . | tar -C "$stage/build" -xf -
find "$stage/build" -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && strip "$1"' _ {} \;

# Shared libraries outside glibc and the CUDA toolkit (same path on both machines).
find "$build_dir" -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && ldd "$1"' _ {} \; |
  awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*|libresolv)\.so|/usr/local/cuda' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done

echo "$PWD" >"$stage/ROOT"
tar -C "$stage" -czf .dev/bundle.tar.gz ROOT build lib
echo "device_bundle: .dev/bundle.tar.gz $(du -h .dev/bundle.tar.gz | cut -f1) ($(ls "$stage/lib" | wc -l) libraries)"

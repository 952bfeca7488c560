#!/usr/bin/env bash
# ci/kernel_tree.sh: a kernel tree (README "Environment", BITGATE_KERNEL_TREE)
# made from a patch, so that a kernel-only change can be timed and gated
# beside the embedded kernels by one binary (ci/device_ab.sh).
#
#   ci/kernel_tree.sh docs/wip/narrow-scores-bounds.patch .dev/trees/bounds
#
# Copies device/kernels and oracle/numerics into DIR and applies the patch's
# hunks for those two folders there; hunks elsewhere (docs, README) are left
# out.  A hunk in a header the host compiles too (an ABI or the numerics)
# makes bitgate refuse the tree: such a change needs its own build.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: ci/kernel_tree.sh PATCH DIR" >&2; exit 2; }
command -v patch >/dev/null || { echo "kernel_tree: needs patch (apt-get install patch)" >&2; exit 3; }
patch=$(realpath "$1") dir=$2
[ -f "$patch" ] || { echo "kernel_tree: no patch '$1'" >&2; exit 2; }
rm -rf "$dir"
mkdir -p "$dir/device" "$dir/oracle"
cp -r device/kernels "$dir/device/"
cp -r oracle/numerics "$dir/oracle/"
# Only the two folders' file sections, applied outside any git checkout's reach
# (git apply inside a checkout's subfolder would skip every path above it).
kept=$(mktemp)
trap 'rm -f "$kept"' EXIT
awk '/^diff --git / {keep = ($3 ~ /^a\/(device\/kernels|oracle\/numerics)\//)} keep' "$patch" >"$kept"
[ -s "$kept" ] || { echo "kernel_tree: '$1' changes nothing under device/kernels or oracle/numerics" >&2; exit 1; }
patch -s -p1 -d "$dir" --no-backup-if-mismatch <"$kept"
echo "kernel_tree: $dir ($(grep '^diff --git ' "$kept" | sed 's|.* b/||' | paste -sd' '))"

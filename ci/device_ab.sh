#!/usr/bin/env bash
# ci/device_ab.sh: kernel trees against the embedded kernels, in one device
# call: their speed side by side, then their bytes.
#
# Run on the GPU host after `source ci/device_env.sh`, with trees made here
# by ci/kernel_tree.sh and carried (e.g. under .dev/trees):
#
#   ci/device_ab.sh .dev/trees/bounds [TREE...]
#
#   1. ROUNDS rounds (default 2), each `bench --variant fast --runs 30
#      --filter FILTER` with the embedded kernels and then with each tree,
#      into one database; then `bench --compare` over it (A: the embedded
#      kernels, B, C...: the trees, in order; medians, ranges, ratios).
#   2. For each tree, the gate's and the nightly's GATE_FILTER cases
#      (default 'csa*'), fast variant, 16 workers under MPS: a tree whose
#      bytes differ anywhere fails here.
#
# Environment: ROUNDS, FILTER (default 'csa*B=1'), GATE_FILTER, and OUT (the
# device call's folder; default ./ab-logs).  Logs go under $OUT/ab, packed
# into $OUT/ab.tgz after every step, so a call cut short still brings back
# what finished; $OUT/ab/summary.txt has one line a step with its exit status.
set -u
out=${OUT:-$PWD/ab-logs}
logs=$out/ab
rounds=${ROUNDS:-2} filter=${FILTER:-csa*B=1} gate_filter=${GATE_FILTER:-csa*}
[ $# -ge 1 ] || { echo "usage: ci/device_ab.sh TREE..." >&2; exit 2; }
for tree in "$@"; do
  [ -d "$tree/device/kernels" ] || { echo "device_ab: '$tree' is not a kernel tree (ci/kernel_tree.sh)" >&2; exit 2; }
done
mkdir -p "$logs"
source "$(dirname "$0")/device_mps.sh" # mps_start, mps_stop

# step NAME LIMIT TREE COMMAND...: the command with the tree ('-': the embedded kernels), its limit and its log.
step() {
  local name=$1 limit=$2 tree=$3 t0 rc
  shift 3
  t0=$(date +%s)
  if [ "$tree" = - ]; then timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  else BITGATE_KERNEL_TREE=$(realpath "$tree") timeout "$limit" "$@" >"$logs/$name.log" 2>&1; fi
  rc=$?
  echo "$name rc=$rc $(($(date +%s) - t0)) s" | tee -a "$logs/summary.txt"
  tar -C "$out" -czf "$out/ab.tgz" ab
}

for round in $(seq 1 "$rounds"); do
  step "bench_embedded_$round" 90 - build/bitgate bench --variant fast --runs 30 --filter "$filter" --db "$logs/ab.db"
  i=0
  for tree in "$@"; do
    i=$((i + 1))
    step "bench_tree${i}_$round" 90 "$tree" build/bitgate bench --variant fast --runs 30 --filter "$filter" \
      --db "$logs/ab.db"
  done
done
step compare 30 - build/bitgate bench --compare --db "$logs/ab.db"

mps_start "$logs/summary.txt"
i=0
for tree in "$@"; do
  i=$((i + 1))
  for suite in gate nightly; do
    step "${suite}_tree$i" 240 "$tree" build/bitgate run --suite "$suite" --filter "$gate_filter" --variant fast \
      --jobs 16 --db "/tmp/bitgate-ab-$suite-tree$i.db"
  done
done
mps_stop
rm -f "$logs"/*.db-shm "$logs"/*.db-wal
tar -C "$out" -czf "$out/ab.tgz" ab
cat "$logs/summary.txt"

#!/usr/bin/env bash
# ci/device_ab.sh: kernel trees, or other builds of bitgate, against this
# build and its embedded kernels, in one device call: their speed side by
# side, then their bytes.
#
# Run on the GPU host after `source ci/device_env.sh`, with the candidates
# made here and carried (e.g. under .dev/):
#
#   ci/device_ab.sh CANDIDATE...
#
# A candidate is a kernel tree (a directory, made by ci/kernel_tree.sh; this
# build runs it through BITGATE_KERNEL_TREE) or a bitgate executable built
# from another commit (`strip -o .dev/bitgate_x build/bitgate` there), for a
# change a tree cannot carry: the launch ABI, a numerics header, the host's
# launch plan.  Commit such a change before building it: `bench --compare`
# tells builds apart by git revision and kernel hash.
#
#   1. ROUNDS rounds (default 2), each `bench --variant fast --runs 30
#      --filter FILTER` with this build and then with each candidate, into
#      one database; then `bench --compare` over it (A: this build, B, C...:
#      the candidates, in order; medians, ranges, ratios).
#   2. For each candidate, the gate's and the nightly's GATE_FILTER cases
#      (default 'csa*'), fast variant, 16 workers under MPS: a candidate
#      whose bytes differ anywhere fails here.
#   3. For each kernel tree in PLANTED (space-separated; made with a bug
#      planted on purpose, e.g. a test forced off), the gate's GATE_FILTER
#      cases the same way, which must find mismatches (exit 1): summary.txt
#      says "caught", "NOT CAUGHT" or "unclear" for each.  A planted bug
#      the gate passes means the gate's cases do not reach the code a
#      candidate changed.
#
# Environment: ROUNDS, FILTER (default 'csa*B=1'), GATE_FILTER, PLANTED,
# and OUT (the device call's folder; default ./ab-logs).  Logs go to a work
# folder (the candidate's number in each name: bench_cand1_1.log,
# gate_cand1.log...) with the bench database, packed into $OUT/ab.tgz after
# every step, so a call cut short still brings back what finished;
# $OUT/ab-summary.txt has one line a step with its exit status
# (ci/device_logs.sh: the device tool brings back at most 8 files).
set -u
rounds=${ROUNDS:-2} filter=${FILTER:-csa*B=1} gate_filter=${GATE_FILTER:-csa*}
[ $# -ge 1 ] || { echo "usage: ci/device_ab.sh CANDIDATE... (kernel trees or bitgate executables)" >&2; exit 2; }
for cand in "$@"; do
  if [ -d "$cand" ]; then
    [ -d "$cand/device/kernels" ] || { echo "device_ab: '$cand' is not a kernel tree (ci/kernel_tree.sh)" >&2; exit 2; }
  elif [ ! -f "$cand" ] || [ ! -x "$cand" ]; then
    echo "device_ab: '$cand' is neither a kernel tree nor an executable" >&2
    exit 2
  fi
done
for tree in ${PLANTED:-}; do
  [ -d "$tree/device/kernels" ] || { echo "device_ab: planted '$tree' is not a kernel tree (ci/kernel_tree.sh)" >&2; exit 2; }
done
source "$(dirname "$0")/device_logs.sh" # logs_open, logs_file, logs_step, logs_pack
logs_open ab "${OUT:-$PWD/ab-logs}"
source "$(dirname "$0")/device_mps.sh" # mps_start, mps_stop

# step NAME LIMIT CANDIDATE ARGS...: `bitgate ARGS` as the candidate runs it
# ('-': this build), with its limit and its log; returns bitgate's exit status.
step() {
  local log limit=$2 cand=$3 t0 rc
  log=$(logs_file "$1")
  shift 3
  t0=$(date +%s)
  if [ "$cand" = - ]; then timeout "$limit" build/bitgate "$@" >"$log" 2>&1
  elif [ -d "$cand" ]; then
    BITGATE_KERNEL_TREE=$(realpath "$cand") timeout "$limit" build/bitgate "$@" >"$log" 2>&1
  else timeout "$limit" "$(realpath "$cand")" "$@" >"$log" 2>&1; fi
  rc=$?
  logs_step "$log" "$rc" "$t0"
  return "$rc"
}

for round in $(seq 1 "$rounds"); do
  step "bench_embedded_$round" 90 - bench --variant fast --runs 30 --filter "$filter" --db "$logs/ab.db"
  i=0
  for cand in "$@"; do
    i=$((i + 1))
    step "bench_cand${i}_$round" 90 "$cand" bench --variant fast --runs 30 --filter "$filter" --db "$logs/ab.db"
  done
done
step compare 30 - bench --compare --db "$logs/ab.db"

mps_start "$logs/summary.txt"
i=0
for cand in "$@"; do
  i=$((i + 1))
  for suite in gate nightly; do
    step "${suite}_cand$i" 240 "$cand" run --suite "$suite" --filter "$gate_filter" --variant fast --jobs 16 \
      --db "/tmp/bitgate-ab-$suite-cand$i.db"
  done
done
i=0
for tree in ${PLANTED:-}; do
  i=$((i + 1))
  step "gate_planted$i" 240 "$tree" run --suite gate --filter "$gate_filter" --variant fast --jobs 16 \
    --db "/tmp/bitgate-ab-gate-planted$i.db"
  rc=$?
  case $rc in
    0) verdict="NOT CAUGHT, the gate passed" ;;
    1) verdict="caught, the gate found mismatches" ;;
    *) verdict="unclear, the gate exited $rc (not mismatches: a timeout, a crash or a setup error): read gate_planted$i.log" ;;
  esac
  echo "planted$i ($tree): $verdict" | tee -a "$logs/summary.txt"
done
mps_stop
logs_pack
cat "$logs/summary.txt"

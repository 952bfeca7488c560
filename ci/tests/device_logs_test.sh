#!/usr/bin/env bash
# ci/tests/device_logs_test.sh SOURCE_DIR: ci/device_ab.sh and
# ci/device_verify.sh leave two files in $OUT (the packed logs and the
# summary), however many steps ran, since the device tool brings back at
# most 8 (ci/device_logs.sh); that a step run twice in one call keeps
# both its logs; that device_verify.sh's BITGATE_VERIFY_GPU runs no step
# on another card, and its BITGATE_VERIFY_SHARD reaches the runs.  Runs
# them in a scratch folder on a stand-in bitgate that only echoes, an MPS
# control that fails (the scripts go on without MPS) and an nvidia-smi
# that names an H100, so no GPU is needed.
set -eu
src=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/build" "$t/bin"
printf '#!/bin/sh\necho "stand-in bitgate $*"\n' >"$t/build/bitgate"
printf '#!/bin/sh\nexit 1\n' >"$t/bin/nvidia-cuda-mps-control"
printf '#!/bin/sh\necho "NVIDIA H100 80GB HBM3, 1980 MHz, 580.159.04"\n' >"$t/bin/nvidia-smi"
chmod +x "$t/build/bitgate" "$t/bin/nvidia-cuda-mps-control" "$t/bin/nvidia-smi"
cp "$t/build/bitgate" "$t/candidate"
cd "$t"
export PATH="$t/bin:$PATH" BITGATE_DEVICE_LOGS="$t/work"

# expect NAME OUT LOGS: OUT holds NAME.tgz and NAME-summary.txt only, the tgz LOGS logs.
expect() {
  local files logs
  files=$(cd "$2" && LC_ALL=C ls | tr '\n' ' ')
  [ "$files" = "$1-summary.txt $1.tgz " ] || { echo "FAIL: $1: OUT holds '$files'"; exit 1; }
  logs=$(tar -tzf "$2/$1.tgz" | grep -c '\.log$')
  [ "$logs" = "$3" ] || { echo "FAIL: $1: $logs logs packed, expected $3"; exit 1; }
  echo "$1: OUT holds $files($3 logs packed)"
}

OUT=$t/ab-out ROUNDS=3 bash "$src/ci/device_ab.sh" "$t/candidate" >/dev/null || true # the exit status is the last step's
expect ab "$t/ab-out" 9 # 3 rounds x (this build, the candidate), the compare, the gate and the nightly
OUT=$t/verify-out bash "$src/ci/device_verify.sh" 2 8 >/dev/null || true
expect verify "$t/verify-out" 2
# A second run in the same call adds its logs; a later call (another OUT) starts afresh.
OUT=$t/verify-out bash "$src/ci/device_verify.sh" 10 >/dev/null || true
expect verify "$t/verify-out" 4
# A step run again in the same call keeps the first run's log beside its own.
OUT=$t/verify-out bash "$src/ci/device_verify.sh" 2 >/dev/null || true
expect verify "$t/verify-out" 5
tar -tzf "$t/verify-out/verify.tgz" | grep -qx 'verify/gate_fast_j4.2.log' ||
  { echo "FAIL: the second gate_fast_j4 log is not gate_fast_j4.2.log"; exit 1; }
grep -q '^gate_fast_j4.2 rc=' "$t/verify-out/verify-summary.txt" ||
  { echo "FAIL: the summary does not name gate_fast_j4.2"; exit 1; }
# BITGATE_VERIFY_GPU: on another card no step runs (exit 4) and the summary says which card came.
rc=0
BITGATE_VERIFY_GPU=H200 OUT=$t/card-out bash "$src/ci/device_verify.sh" 2 >/dev/null 2>&1 || rc=$?
[ "$rc" = 4 ] || { echo "FAIL: BITGATE_VERIFY_GPU=H200 on an H100 exited $rc, expected 4"; exit 1; }
! tar -tzf "$t/card-out/verify.tgz" | grep -q '\.log$' || { echo "FAIL: a step ran on the wrong card"; exit 1; }
grep -qx 'gpu: NVIDIA H100 80GB HBM3, 1980 MHz, 580.159.04' "$t/card-out/verify-summary.txt" &&
  grep -q 'no step run' "$t/card-out/verify-summary.txt" ||
  { echo "FAIL: the wrong card's summary does not name it"; exit 1; }
# BITGATE_VERIFY_SHARD: the nightly's run gets --shard, and its log says which shard.
BITGATE_VERIFY_SHARD=1/2 OUT=$t/shard-out bash "$src/ci/device_verify.sh" 9 >/dev/null || true
tar -xzOf "$t/shard-out/verify.tgz" verify/nightly_both_j16_mps_shard1of2.log 2>/dev/null |
  grep -q -- '--suite nightly --variant both --jobs 16 --shard 1/2 --db .*/nightly_both_shard1of2.db' ||
  { echo "FAIL: BITGATE_VERIFY_SHARD=1/2 did not reach the nightly's run as --shard 1/2"; exit 1; }
BITGATE_VERIFY_GPU=H100 OUT=$t/verify-out2 bash "$src/ci/device_verify.sh" 2 >/dev/null || true
expect verify "$t/verify-out2" 1

#!/usr/bin/env bash
# ci/device_verify.sh: issue 8's re-verification on a lent GPU host, in one
# call of at most ten minutes (the device tool's limit per command).
#
# Run there after `source ci/device_env.sh`.  Each step has its own time
# limit, so a hung step costs its limit and not the rest.  Every log and
# database goes to a work folder, packed into $OUT/verify.tgz after each
# step (OUT default ./verify-logs), so whatever finished comes back even
# when the call is cut short; $OUT/verify-summary.txt has a line a step
# (ci/device_logs.sh: the device tool brings back at most 8 files).
#
#   1. the GPU tests but the two-minute hang test          (limit 200 s)
#   2. the gate, every lane, fast variant, 4 workers       (limit 120 s)
#   3. bitgate bench, both variants: ratio 128             (limit 150 s)
#   4.   ratio 4 at 4K                                     (limit 100 s)
#   5.   IndexShare                                        (limit 150 s)
#   6. bitgate bench, fast only: ratio 4 at 64K            (limit 100 s)
#      (the reference's 64K scoring takes seconds a replay)
#   7. the oracle alone, 1 and 16 threads, on the two big
#      shapes, with no GPU visible to it                   (limit 2 x 120 s)
#   8. the gate, both variants, 16 workers under MPS       (limit 240 s)
#   9. the nightly, both variants, 16 workers under MPS    (limit 480 s)
#  10. bench --loops: the attention's inner loops alone,
#      then the CSA B = 1 lines beside them                (limit 60 + 90 s)
#  11. the oracle's B = 1 steps on 1 and 16 threads, call
#      by call (bench --oracle-threads), no GPU visible    (limit 150 s)
#
# The limits add up to more than one call's ten minutes: give a call the
# steps that fit, e.g. `ci/device_verify.sh 1 2 3 4` and then `5 6 7`.
#
# Each run's first summary line names the GPU.  BITGATE_VERIFY_GPU=TEXT
# runs the steps only where that name holds TEXT (e.g. H200: a call for an
# H200 may get an H100, and a run that must be on one card is then not
# worth its device time); elsewhere it runs none and exits 4.
# BITGATE_VERIFY_SHARD=K/N gives the gate and nightly runs (steps 2, 8, 9)
# `--shard K/N`, their logs and databases a `_shardKofN` suffix, so that a
# run longer than the device time left can be split over calls (merge the
# databases with `bitgate db merge`).
# Usage: ci/device_verify.sh [STEP...]   (default: every step)
set -u
steps=${*:-1 2 3 4 5 6 7 8 9 10 11}
source "$(dirname "$0")/device_logs.sh" # logs_open, logs_file, logs_step, logs_pack
logs_open verify "${OUT:-$PWD/verify-logs}"
# The bench's databases are packed with the logs; the runs' (the nightly's
# are tens of MB) stay on the host, in BITGATE_VERIFY_DB_DIR or beside the logs.
db=${BITGATE_VERIFY_DB_DIR:-$logs_root/runs}
mkdir -p "$db"
gpu=$(nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
echo "gpu: ${gpu:-none found (no nvidia-smi answered)}" | tee -a "$logs/summary.txt"
case $gpu in
*"${BITGATE_VERIFY_GPU:-}"*) ;;
*) echo "device_verify: BITGATE_VERIFY_GPU=$BITGATE_VERIFY_GPU, and this GPU's name does not hold it: no step run" | tee -a "$logs/summary.txt" >&2
   logs_pack
   exit 4 ;;
esac

shard=${BITGATE_VERIFY_SHARD:-}
shard_tag=${shard:+_shard${shard%%/*}of${shard##*/}}

# step NAME LIMIT COMMAND...: runs it with its limit, records exit status and seconds.
step() {
  local log limit=$2 t0 rc
  log=$(logs_file "$1")
  shift 2
  t0=$(date +%s)
  timeout "$limit" "$@" > "$log" 2>&1
  rc=$?
  logs_step "$log" "$rc" "$t0"
}

bench() { # bench NAME LIMIT VARIANT FILTER
  step "$1" "$2" build/bitgate bench --variant "$3" --runs 20 --filter "$4" --db "$logs/bench.db"
}

source "$(dirname "$0")/device_mps.sh" # mps_start, mps_stop

for s in $steps; do
  case $s in
  1) step ctest_gpu 200 ctest --test-dir build -L gpu -E worker --output-on-failure ;;
  2) step gate_fast_j4$shard_tag 120 build/bitgate run --suite gate --jobs 4 ${shard:+--shard "$shard"} \
       --db "$db/gate$shard_tag.db" ;;
  3) bench bench_csa128 150 both 'csa128*' ;;
  4) bench bench_csa4_4k 100 both 'csa4 pos 4096*' ;;
  5) bench bench_index_share 150 both 'IndexShare*' ;;
  6) bench bench_csa4_64k 100 fast 'csa4 pos 65536*' ;;
  7) for t in 1 16; do
       step "oracle_t$t" 120 env CUDA_VISIBLE_DEVICES= BITGATE_ORACLE_THREADS=$t sh -c \
         "build/bitgate bench --filter 'csa4 pos 65536, B=64' --db '$logs/oracle.db' &&
          build/bitgate bench --filter 'IndexShare K=2048, heads 64, B=64' --db '$logs/oracle.db'"
     done ;;
  8) mps_start "$logs/summary.txt"
     step gate_both_j16_mps$shard_tag 240 build/bitgate run --suite gate --variant both --jobs 16 \
       ${shard:+--shard "$shard"} --db "$db/gate_both$shard_tag.db"
     mps_stop ;;
  9) mps_start "$logs/summary.txt"
     step nightly_both_j16_mps$shard_tag 480 build/bitgate run --suite nightly --variant both --jobs 16 \
       ${shard:+--shard "$shard"} --db "$db/nightly_both$shard_tag.db"
     mps_stop ;;
  10) step bench_loops 60 build/bitgate bench --loops --runs 50
      bench bench_csa_b1 90 fast 'csa*B=1' ;;
  11) step oracle_calls_b1 150 env CUDA_VISIBLE_DEVICES= build/bitgate bench --oracle-threads 1,16 \
        --oracle-runs 7 --oracle-calls --filter '*B=1' ;;
  *) echo "device_verify: no step '$s' (steps are 1 to 11)" >&2; exit 2 ;;
  esac
done

#!/usr/bin/env bash
# ci/gate.sh: what a GPU CI job runs (issue 7, item 2).
#   1. ci/bootstrap.sh                 packages, configure, build
#   2. bitgate audit                   the PTX of every kernel (no GPU needed)
#   3. bitgate run --require-gpu       the gate suite in every lane
#   4. bitgate report                  gate-junit.xml and gate-report.html
# Usage: ci/gate.sh [extra bitgate run options, e.g. --baseline 12 --repeat 3]
# Environment: GATE_DB (results database, default bitgate.db; keep it between
# jobs for --baseline), BITGATE_BUILD_DIR (default build), BITGATE_PREBUILT
# (skip the bootstrap: the build dir is already there), BITGATE_PLANT
# (plants a kernel bug, for testing the gate itself; see bitgate run --help).
#
# Exit code: the run's (0 pass, 1 failures, 2 usage, 3 environment), so a
# planted bug is exit 1.  Two exceptions, so nothing fails silently: a failed
# audit turns a passing run into 1, and reports that cannot be written turn
# a passing run into 3.  The reports are written whatever the run's verdict
# (that is when they matter most); only a failed bootstrap stops early.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${BITGATE_BUILD_DIR:-build}"
db="${GATE_DB:-bitgate.db}"
bitgate="$build_dir/bitgate"

# BITGATE_PREBUILT=1: the build dir was made by an earlier CI stage (or
# copied to a GPU host without a package registry); use it as it is.
if [ -n "${BITGATE_PREBUILT:-}" ]; then
  echo "gate: using the prebuilt $build_dir (BITGATE_PREBUILT)"
else
  ci/bootstrap.sh
fi

# The audit is a verdict of its own; the run goes on either way so the job
# reports everything it can find in one pass.
audit_rc=0
"$bitgate" audit || audit_rc=$?

# The run's output goes to the job log and to gate-run.log, where the run id
# is read back (the report must describe this run, not whatever ran last).
run_rc=0
"$bitgate" run --require-gpu --suite gate --db "$db" "$@" 2>&1 | tee gate-run.log || run_rc=${PIPESTATUS[0]}
run_id=$(sed -n 's/^run \([0-9][0-9]*\): suite .*/\1/p' gate-run.log | tail -n 1)

# --baseline RUN of the run also goes to the reports (their regressions section).
baseline=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    --baseline) [ $((i + 1)) -lt ${#args[@]} ] && baseline=(--baseline "${args[$((i + 1))]}") ;;
    --baseline=*) baseline=(--baseline "${args[$i]#--baseline=}") ;;
  esac
done

report_rc=0
if [ -n "$run_id" ]; then
  for fmt in junit:gate-junit.xml html:gate-report.html; do
    "$bitgate" report --db "$db" --run "$run_id" ${baseline[@]+"${baseline[@]}"} --format "${fmt%%:*}" \
      -o "${fmt#*:}" || report_rc=$?
  done
else
  echo "gate: the run recorded nothing (exit $run_rc); no reports written" >&2
  report_rc=3
fi

rc=$run_rc
if [ "$rc" -eq 0 ] && [ "$audit_rc" -ne 0 ]; then
  echo "gate: bitgate audit failed (exit $audit_rc): the gate fails" >&2
  rc=1
fi
if [ "$rc" -eq 0 ] && [ "$report_rc" -ne 0 ]; then
  echo "gate: the reports could not be written (exit $report_rc)" >&2
  rc=3
fi
echo "gate: run ${run_id:-none} exit $run_rc, audit exit $audit_rc; reports gate-junit.xml gate-report.html; exit $rc"
exit "$rc"

# ci/device_logs.sh: sourced by the device scripts (device_verify.sh,
# device_ab.sh): where their logs are written and what they leave in $OUT.
#
# Why: the device tool brings back at most 8 files from $OUT, and a call
# that leaves more brings back none of them (docs/SPEED.md, forty-first and
# forty-second rounds: an A/B call's logs were lost so).  So each step's log,
# and the bench's database, is written to a work folder outside $OUT, and $OUT holds
# two files only: NAME.tgz (the whole folder, packed again after every step,
# so that a call cut short still brings back what finished) and
# NAME-summary.txt (a line a step).
#
#   logs_open NAME OUT   $logs: the work folder (${BITGATE_DEVICE_LOGS:-$TMPDIR or /tmp}/bitgate-NAME/NAME),
#                        emptied unless OUT already holds NAME.tgz: a device call's OUT starts empty, so
#                        an earlier call's logs on a warm machine go, a second run of the script in the
#                        same call adds to the first's; $logs_out: OUT, made if need be
#   logs_file STEP       the path of STEP's log: $logs/STEP.log, or STEP.2.log, STEP.3.log, ... where
#                        a run earlier in the call wrote one, so that a step run twice keeps both logs
#                        (the forty-third round's second gate run had overwritten the first's)
#   logs_step LOG RC T0  a finished step: its summary line (LOG's name, exit status RC, seconds since
#                        T0) to the screen and summary.txt, then logs_pack
#   logs_pack            packs $logs into $logs_out/NAME.tgz (databases' -wal and -shm files left
#                        out) and copies its summary.txt beside it
logs_open() {
  logs_name=$1 logs_out=$2
  logs_root=${BITGATE_DEVICE_LOGS:-${TMPDIR:-/tmp}}/bitgate-$logs_name
  logs=$logs_root/$logs_name
  [ -f "$logs_out/$logs_name.tgz" ] || rm -rf "$logs_root"
  mkdir -p "$logs" "$logs_out"
}

logs_file() {
  local f=$logs/$1.log n=2
  while [ -e "$f" ]; do
    f=$logs/$1.$n.log
    n=$((n + 1))
  done
  echo "$f"
}

logs_pack() {
  tar -C "$logs_root" --exclude='*.db-wal' --exclude='*.db-shm' -czf "$logs_out/$logs_name.tgz" "$logs_name"
  [ ! -f "$logs/summary.txt" ] || cp "$logs/summary.txt" "$logs_out/$logs_name-summary.txt"
}

logs_step() {
  echo "$(basename "$1" .log) rc=$2 $(($(date +%s) - $3)) s" | tee -a "$logs/summary.txt"
  logs_pack
}

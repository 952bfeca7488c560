#!/bin/sh
# html_chromium_check.sh BITGATE DB OUTDIR: renders the fixture run as HTML
# and opens it in headless Chromium (issue 7, item 1):
#   1. the page loads with no console message at all (the page has no
#      script, so any console line is an error: a blocked or missing
#      resource, a parse problem);
#   2. the DOM Chromium built holds the failing-case table with every
#      failing case (5 in the fixture) and the charts;
#   3. a screenshot is saved as OUTDIR/report.png (printed), the artifact.
# Chromium missing: exit 77 (skipped) on a dev box, failure under CI=true,
# where ci/bootstrap.sh installs it (Debian package chromium).
set -eu
bitgate=$1 db=$2 outdir=$3
html="$outdir/report.html" dom="$outdir/report.dom.html" log="$outdir/chromium.log" png="$outdir/report.png"
browser=""
for b in chromium chromium-browser google-chrome; do
  command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
if [ -z "$browser" ]; then
  echo "report_html_chromium: no chromium binary (Debian package chromium; ci/bootstrap.sh installs it)"
  [ -n "${CI:-}" ] && exit 1
  exit 77
fi
"$bitgate" report --db "$db" --baseline previous --format html -o "$html"

# A throwaway profile keeps the run independent of the user's; --no-sandbox
# because CI containers run as root, where Chromium's sandbox refuses to start.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chrome() {
  timeout 90 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile" \
    --enable-logging=stderr --v=0 "$@"
}
chrome --dump-dom "file://$html" >"$dom" 2>"$log" || { cat "$log"; echo "chromium failed"; exit 1; }
if grep -E 'CONSOLE|Uncaught|Failed to load resource' "$log"; then
  echo "report_html_chromium: the page logged console messages (above)"
  exit 1
fi
rows=$(sed -n '/<table id="failing-cases">/,/<\/table>/p' "$dom" | grep -o '<tr>' | wc -l)
[ "$rows" -eq 6 ] || { echo "failing-case table: $rows rows in the DOM, want 6 (head + 5)"; exit 1; }
[ "$(grep -o '<svg ' "$dom" | wc -l)" -eq 3 ] || { echo "want 3 charts in the DOM"; exit 1; }
grep -q 'id="regressions"' "$dom" || { echo "no regressions section in the DOM"; exit 1; }

chrome --screenshot="$png" --window-size=1400,3400 --hide-scrollbars "file://$html" >/dev/null 2>>"$log" ||
  { cat "$log"; echo "chromium screenshot failed"; exit 1; }
[ -s "$png" ] || { echo "no screenshot at $png"; exit 1; }
echo "report_html_chromium: page loads clean, failing-case table has 5 rows; screenshot: $png"

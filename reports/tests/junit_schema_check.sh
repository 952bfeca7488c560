#!/bin/sh
# junit_schema_check.sh BITGATE DB XSD OUTDIR: renders the fixture run as
# JUnit XML (with a baseline, as CI would) and validates it with xmllint
# against reports/schema/junit.xsd.  The root must be <testsuites>: the
# schema alone would also accept a lone <testsuite>.
# xmllint missing: exit 77 (skipped) on a dev box, failure under CI=true,
# where ci/bootstrap.sh installs it (libxml2-utils).
set -eu
bitgate=$1 db=$2 xsd=$3 outdir=$4
out="$outdir/report-junit.xml"
if ! command -v xmllint >/dev/null 2>&1; then
  echo "report_junit_schema: xmllint not found (Debian package libxml2-utils; ci/bootstrap.sh installs it)"
  [ -n "${CI:-}" ] && exit 1
  exit 77
fi
"$bitgate" report --db "$db" --baseline previous --format junit -o "$out"
xmllint --noout --schema "$xsd" "$out"
xmllint --xpath 'name(/*)' "$out" | grep -qx testsuites || { echo "root element is not testsuites"; exit 1; }
echo "report_junit_schema: $out validates against $xsd"

#!/bin/sh
# ctest_cli_gpu.sh BITGATE TEST_CLI: test_cli's tests whose GPU half checks a
# GPU-only behaviour (a planted kernel gets no figure, the launch floor lines,
# the loop probes), as the CTest test test_cli_gpu (label gpu), on the GPU
# CTest gave it (ci/ctest_gpu.sh).  test_cli itself is a unit test and runs
# where there is no GPU, so without this entry a device verification (`ctest
# -L gpu`) never ran those halves: one of them went stale for six sessions.
# Left out: bench_prints_oracle_figures_and_says_what_needs_a_gpu, whose GPU
# half is a whole B = 1 bench in both variants (minutes).  Exit 77, CTest's
# skip, with the reason, where bitgate sees no GPU.
bitgate=$1
test_cli=$2
none=$("$bitgate" --version | grep '^gpu none')
if [ -n "$none" ]; then
  echo "test_cli_gpu: skipped, no GPU here: $none"
  exit 77
fi
exec sh "$(dirname "$0")/ctest_gpu.sh" "$test_cli" --filter 'cli/bench_@(exploration|opens|loops)*' --jobs 2

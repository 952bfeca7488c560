/*
** test_bench_loops.c: `bench --loops`'s probes (harness/bench_loops.c,
** device/kernels/loop_probe.cu).  Without a GPU: the probe kernels compile
** to an sm_90 CUBIN holding each one.  On a GPU: every probe's sums equal
** the C sums bit for bit and it posts cycles, and a probe whose loop no
** longer adds in the oracle's order posts none (test_cli plants that one
** through the command).
*/
#include "device/tests/gpu_test_support.h"
#include "harness/bench_loops.h"

#include <criterion/criterion.h>
#include <string.h>

Test(bench_loops, the_probe_kernels_compile_to_a_cubin) {
  static const char *const names[] = {"loop_probe_values_narrow", "loop_probe_add_chain", "loop_probe_scores_resident",
                                      "loop_probe_softmax_sum", "loop_probe_softmax_segments",
                                      "loop_probe_values_transposed"};
  gpu_test_expect_cubin("loop_probe.cu", names, sizeof names / sizeof names[0]);
}

Test(bench_loops, every_probe_matches_its_c_sums_and_posts_cycles) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  bench_loop_figure fig[BENCH_LOOP_PROBES];
  char err[1024];
  int i;
  cr_assert_eq(bench_loops_measure(rt, 3, fig, err, sizeof err), 0, "%s", err);
  for (i = 0; i < BENCH_LOOP_PROBES; i++) {
    cr_expect(fig[i].checked, "%s: %s", fig[i].name, fig[i].mismatch);
    cr_expect_gt(fig[i].terms, 0);
    /* a chain's term is at least one dependent add: no probe can run it in under a cycle, but the
       sum in segments, whose half-warps take a segment each */
    if (!strstr(fig[i].name, "softmax sum in segments"))
      cr_expect_geq(fig[i].median_block, 1.0, "%s: %.3f cycles a term", fig[i].name, fig[i].median_block);
    else
      cr_expect_gt(fig[i].median_block, 0.0, "%s: %.3f cycles a term", fig[i].name, fig[i].median_block);
    cr_expect_geq(fig[i].slowest_block, fig[i].median_block, "%s", fig[i].name);
  }
  cr_expect(bench_loops_print(fig, 3));
  device_runtime_destroy(rt);
}

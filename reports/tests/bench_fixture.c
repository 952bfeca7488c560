/* bench_fixture.c: see bench_fixture.h. */
#include "reports/tests/bench_fixture.h"

#include <criterion/criterion.h>

void bench_fixture_run(store *s, const char *rev, const char *hash, const store_bench_row *rows, int n) {
  bench_fixture_run_as(s, rev, hash, "bitgate bench", rows, n);
}

void bench_fixture_run_as(store *s, const char *rev, const char *hash, const char *command_line,
                          const store_bench_row *rows, int n) {
  store_provenance p = {.git_rev = rev, .bitgate_version = "0.1.0", .oracle_version = 3, .numerics_version = 2,
                        .kernel_hash = hash, .device_name = "NVIDIA H200", .host = "h200-host", .suite = "bench",
                        .shard = "1/1", .command_line = command_line};
  long long run = 0;
  int i;
  cr_assert_eq(store_run_begin(s, &p, &run), 0, "%s", store_errmsg(s));
  for (i = 0; i < n; i++) cr_assert_eq(store_bench_put(s, run, &rows[i]), 0, "%s", store_errmsg(s));
  cr_assert_eq(store_run_end(s, run, "passed", 0), 0, "%s", store_errmsg(s));
}

store_bench_row bench_fixture_figure(const char *kernel, const char *shape, const char *variant, const char *timing,
                                     double median_us) {
  return (store_bench_row){.kernel = kernel, .variant = variant, .shape = shape, .timing = timing,
                           .median_us = median_us, .min_us = median_us - 0.1, .runs = 20, .oracle_ms = 8.5,
                           .floor_fraction = 0.08};
}

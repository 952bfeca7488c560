/*
** report_fixture.c: writes the database described in report_fixture.h.
*/
#include "reports/tests/report_fixture.h"

#include "harness/store.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A result row with the fields every row needs; mismatch fields off. */
static store_result row(const char *case_id, const char *lane, int step, const char *status) {
  store_result r;
  memset(&r, 0, sizeof r);
  r.case_id = case_id, r.lane = lane, r.step = step, r.status = status;
  r.ulp_distance = -1;
  r.oracle_ms = 1.5, r.device_ms = NAN;
  return r;
}

static store_result mismatch(const char *case_id, const char *lane, int step, const char *tensor,
                             const char *coords, const char *expected, const char *actual, long long ulp) {
  store_result r = row(case_id, lane, step, "mismatch");
  r.has_mismatch = 1;
  r.tensor = tensor, r.coords = coords, r.expected_hex = expected, r.actual_hex = actual;
  r.ulp_distance = ulp, r.flat_offset = 27, r.mismatch_count = 3;
  r.device_ms = 0.25;
  return r;
}

static int commit(store *s, long long run, const store_result *rows, int n) {
  return store_results_commit(s, run, rows, n);
}

static int run_one(store *s, long long *run, const char *command_line) {
  store_provenance p = {.git_rev = FIXTURE_GIT_REV, .bitgate_version = "0.1.0", .oracle_version = 3,
                        .numerics_version = 2, .kernel_hash = "kh-5eed", .nvrtc_version = "12.4",
                        .nvrtc_options = "--gpu-architecture=sm_90 --fmad=false --ftz=false",
                        .driver_version = 12040, .device_name = "NVIDIA H200", .compute_capability = "9.0",
                        .host = "ci-host", .suite = "gate", .command_line = command_line};
  return store_run_begin(s, &p, run);
}

static int cases_put(store *s, long long run) {
  static const char *const cases[][3] = {
      {"is.valid.0000000a", "IndexShare", "is.valid"},
      {"is.valid.0000000b", "IndexShare", "is.valid"},
      {"csa4.chain.0000000c", "CompressedSparseAttention", "csa4.chain"},
      {"csa128.chain.0000000d", "CompressedSparseAttention", "csa128.chain"},
      {"is.bias.0000000e", "IndexShare", "is.bias"},
      {"is.masked.0000000f", "IndexShare", "is.masked"},
      {FIXTURE_NASTY_ID, "IndexShare", "is.contract"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char spec[256];
    snprintf(spec, sizeof spec, "family=%s seed=%zu", cases[i][2], i);
    if (store_case_put(s, cases[i][0], cases[i][1], cases[i][2], spec, run)) return -1;
  }
  return 0;
}

static int baseline_write(store *s, long long run) {
  store_result a[] = {row("is.valid.0000000a", "oracle", 0, "pass"), row("is.valid.0000000a", "eager", 0, "pass")};
  store_result b[] = {row("is.valid.0000000b", "oracle", 0, "pass"),
                      mismatch("is.valid.0000000b", "eager", 0, "y", "[0,0,0,1]", "0x3c00", "0x3c01", 300)};
  store_result c[] = {mismatch("csa4.chain.0000000c", "eager", 3, "attn_out", "[0,2,0,5]", "0x3f800000",
                               "0x3f811170", 70000)};
  store_result d[] = {row("csa128.chain.0000000d", "capture", 0, "pass")};
  b[1].message = "y differs; repro: bitgate repro is.valid.0000000b --lanes eager";
  c[0].stage = "IndexScoring";
  return commit(s, run, a, 2) || commit(s, run, b, 2) || commit(s, run, c, 1) || commit(s, run, d, 1) ||
         store_run_end(s, run, "failed", 1);
}

static int current_write(store *s, long long run) {
  store_result a[] = {row("is.valid.0000000a", "oracle", 0, "pass"),
                      mismatch("is.valid.0000000a", "eager", 0, "y", "[0,1,2,3]", "0x3f800000", "0x3f800001", 1)};
  store_result b[] = {row("is.valid.0000000b", "oracle", 0, "pass"), row("is.valid.0000000b", "eager", 0, "pass")};
  store_result c[] = {row("csa4.chain.0000000c", "eager", 0, "pass"), row("csa4.chain.0000000c", "eager", 1, "pass"),
                      row("csa4.chain.0000000c", "eager", 2, "pass"),
                      mismatch("csa4.chain.0000000c", "eager", 3, "attn_out", "[0,2,0,5]", "0x3f800000",
                               "0x3f811170", 70000)};
  store_result d[] = {mismatch("csa128.chain.0000000d", "capture", 0, "present_kv", "[1,0,4]", "0x4000", "0x4001", 1)};
  store_result e[] = {row("is.bias.0000000e", "eager", 0, "unavailable"), row("is.bias.0000000e", "poison", 0, "skipped")};
  store_result f[] = {row("is.masked.0000000f", "eager", 0, "crash")};
  store_result g[] = {row(FIXTURE_NASTY_ID, "oracle", 0, "error_parity")};
  a[1].message = "y differs at [0,1,2,3]; repro: bitgate repro is.valid.0000000a --lanes eager";
  c[3].stage = "IndexScoring";
  d[0].status = "nondeterministic", d[0].stage = "CompressionUpdate";
  f[0].message = "illegal address; repro: bitgate repro is.masked.0000000f --lanes eager";
  g[0].message = FIXTURE_NASTY_MESSAGE "; repro: bitgate repro '" FIXTURE_NASTY_ID "' --lanes oracle";
  return commit(s, run, a, 2) || commit(s, run, b, 2) || commit(s, run, c, 4) || commit(s, run, d, 1) ||
         commit(s, run, e, 2) || commit(s, run, f, 1) || commit(s, run, g, 1) || store_run_end(s, run, "failed", 1);
}

int report_fixture_write(const char *path, char *err, size_t err_len) {
  store *s = NULL;
  long long base = 0, now = 0;
  int rc = store_open(path, &s, err, err_len);
  if (rc) return -1;
  rc = run_one(s, &base, "run --suite gate") || cases_put(s, base) || baseline_write(s, base) ||
       run_one(s, &now, "run --filter 'is.*' & <more>") || current_write(s, now);
  if (rc) snprintf(err, err_len, "%s", store_errmsg(s));
  store_close(s);
  return rc ? -1 : 0;
}

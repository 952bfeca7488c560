/*
** test_reference_variant.c: the reference kernels (issue 8; the seed's
** serial design in the device/kernels/..._reference.cu files) against the oracle, byte
** for byte, on the GPU, through the same case runner `bitgate run --variant
** reference` uses.
**
** The cases are the first REF_CASES_PER_FAMILY gate cases of every family
** of each operator (corpus/gate.suite), run in the eager, capture and poison
** lanes; every row must pass.  One case runs with --variant both, which must
** add passing LANE@ref rows beside the fast ones.  Without a GPU every test
** skips (exit 77, "skipped: no GPU").
*/
#include "cases/case_spec.h"
#include "device/tests/gpu_test_support.h"
#include "harness/case_runner.h"
#include "harness/suite.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_CASES_PER_FAMILY 2
#define REF_MAX_FAMILIES 32

static const lane_mask device_lanes = LANE_BIT(LANE_EAGER) | LANE_BIT(LANE_CAPTURE) | LANE_BIT(LANE_POISON);

/* Prints every failing row of r. */
static void print_failures(const char *id, const case_report *r) {
  int i;
  for (i = 0; i < r->n; i++)
    if (strcmp(r->rows[i].status, "pass") && strcmp(r->rows[i].status, "skipped"))
      fprintf(stderr, "FAIL %s %s step %d (%s): %s\n", id, r->rows[i].lane, r->rows[i].step, r->rows[i].status,
              r->rows[i].message);
}

/* The gate suite's first REF_CASES_PER_FAMILY cases of every family starting with prefix, in env. */
static void expect_reference_cases(const char *prefix) {
  static case_report r;
  char families[REF_MAX_FAMILIES][64], err[512], family[64], id[CASE_ID_MAX];
  int taken[REF_MAX_FAMILIES] = {0}, n_families = 0, i, f, ran = 0;
  runner_env env;
  suite s;
  memset(&env, 0, sizeof env);
  env.rt = gpu_test_runtime_or_skip();
  env.lanes = device_lanes;
  env.variant = DEVICE_VARIANT_REFERENCE;
  cr_assert_eq(suite_load(suite_default_dir(), "gate", &s, err, sizeof err), 0, "%s", err);
  for (i = 0; i < s.count; i++) {
    family[0] = '\0';
    case_spec_get(s.specs[i], "family", family, sizeof family);
    if (strncmp(family, prefix, strlen(prefix))) continue;
    for (f = 0; f < n_families && strcmp(families[f], family); f++) {}
    if (f == n_families) {
      cr_assert_lt(n_families, REF_MAX_FAMILIES);
      snprintf(families[n_families++], sizeof families[0], "%s", family);
    }
    if (taken[f]++ >= REF_CASES_PER_FAMILY) continue;
    cr_assert_eq(case_id_from_spec(s.specs[i], id, sizeof id), 0);
    case_run(&env, id, s.specs[i], &r);
    print_failures(id, &r);
    cr_expect_eq(r.failed, 0, "%s with the reference kernels: %d failing rows (above)", id, r.failed);
    ran++;
  }
  cr_expect_gt(ran, 0, "gate has %s cases", prefix);
  suite_free(&s);
  device_runtime_destroy(env.rt);
}

Test(reference_variant, index_share_cases_match_the_oracle) { expect_reference_cases("is."); }

Test(reference_variant, csa128_cases_match_the_oracle) { expect_reference_cases("csa128."); }

Test(reference_variant, csa4_cases_match_the_oracle) { expect_reference_cases("csa4."); }

/* --variant both: the fast rows, then the same device lanes as LANE@ref, all passing. */
Test(reference_variant, both_adds_passing_ref_rows) {
  static case_report r;
  static const char spec[] =
      "family=csa4.chain op=CompressedSparseAttention ratio=4 b=1 heads=1 iheads=4 topk=512 window=16 start=0 "
      "prefill=4 decode=46 cap=14 outputs=6 bias=none sink=neginf scale=none seed=2312490336";
  runner_env env;
  int i, eager = 0, eager_ref = 0, capture_ref = 0;
  memset(&env, 0, sizeof env);
  env.rt = gpu_test_runtime_or_skip();
  env.lanes = LANE_ALL;
  cr_assert_eq(runner_env_set_variant(&env, "both"), 0);
  case_run(&env, "test.both", spec, &r);
  print_failures("test.both", &r);
  cr_expect_eq(r.failed, 0);
  for (i = 0; i < r.n; i++) {
    eager |= !strcmp(r.rows[i].lane, "eager");
    eager_ref |= !strcmp(r.rows[i].lane, "eager@ref");
    capture_ref |= !strcmp(r.rows[i].lane, "capture@ref");
    cr_expect_neq(strcmp(r.rows[i].lane, "oracle@ref"), 0, "the oracle lane runs once");
  }
  cr_expect(eager && eager_ref && capture_ref, "fast and reference rows of the device lanes");
  device_runtime_destroy(env.rt);
}

/* The option's words; no GPU needed. */
Test(reference_variant, variant_words) {
  runner_env env;
  memset(&env, 0, sizeof env);
  cr_expect_eq(runner_env_set_variant(&env, "reference"), 0);
  cr_expect_eq(env.variant, DEVICE_VARIANT_REFERENCE);
  cr_expect_eq(env.both_variants, 0);
  cr_expect_eq(runner_env_set_variant(&env, "both"), 0);
  cr_expect_eq(env.variant, DEVICE_VARIANT_FAST);
  cr_expect_eq(env.both_variants, 1);
  cr_expect_eq(runner_env_set_variant(&env, "fast"), 0);
  cr_expect_eq(env.both_variants, 0);
  cr_expect_eq(runner_env_set_variant(NULL, "slow"), -1);
}

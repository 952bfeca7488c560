/*
** test_csa4_lanes.c: the ratio-4 CSA oracle lane through the shared chain
** driver: specs of every csa4 family pass, and an expectation that does not
** match what the oracle does (a tampered code, site or verdict) fails the
** lane with the step, what the oracle said and what the case expected.
*/
#include "cases/csa4_cases.h"
#include "harness/case_runner.h"
#include "harness/run_csa4.h"
#include "harness/run_csa_chain.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

typedef struct spec_bag {
  char spec[4][CSA4_CASE_SPEC_MAX];
  int n;
} spec_bag;

static void keep_spec(const char *spec, void *ctx) {
  spec_bag *b = ctx;
  if (b->n < 4) snprintf(b->spec[b->n++], sizeof b->spec[0], "%s", spec);
}

/* The first n specs of a family (cases_csa4_enumerate, seed 11). */
static void family_specs(const char *family, int n, spec_bag *b) {
  memset(b, 0, sizeof *b);
  cr_assert_eq(cases_csa4_enumerate(family, n, 11, keep_spec, b), n, "%s", family);
}

static void parse_spec(const char *spec, csa4_case *c, char *id, size_t id_len) {
  char err[256];
  cr_assert_eq(cases_csa4_parse(spec, c, err, sizeof err), 0, "%s: %s", spec, err);
  cr_assert_eq(cases_csa4_id(c, id, id_len), 0);
}

static runner_env oracle_env(void) {
  runner_env env;
  memset(&env, 0, sizeof env);
  env.lanes = LANE_BIT(LANE_ORACLE);
  return env;
}

Test(csa4_lanes, oracle_lane_passes_every_family) {
  static const char *const families[] = {"csa4.chain", "csa4.state", "csa4.ties", "csa4.contract", "csa4.tiles"};
  static case_report r;
  runner_env env = oracle_env();
  spec_bag b;
  unsigned f;
  int i;
  for (f = 0; f < sizeof families / sizeof families[0]; f++) {
    family_specs(families[f], 2, &b);
    for (i = 0; i < b.n; i++) {
      csa4_case c;
      char id[64];
      parse_spec(b.spec[i], &c, id, sizeof id);
      cr_assert_eq(case_run(&env, id, b.spec[i], &r), 0, "%s", id);
      cr_assert_eq(r.failed, 0, "%s: %s", id, r.n ? r.rows[0].message : "no row");
      cr_assert_eq(r.n, 1, "%s: one oracle row per chain", id);
      cr_expect_str_eq(r.rows[0].lane, "oracle");
      if (c.family == CSA4_FAMILY_CONTRACT)
        cr_expect(strstr(r.rows[0].message, "rejects as expected") != NULL, "%s: %s", id, r.rows[0].message);
      else
        cr_expect_eq(r.rows[0].step, cases_csa4_steps(&c) - 1, "%s: the row names the last step", id);
    }
  }
}

/* ---- tampered expectations: the descriptor with one hook replaced ---------- */

static int tamper_code_delta, tamper_input_delta, tamper_reject;

static int tampered_expected(const void *c, int *code) {
  int reject = cases_csa4_expected(c, code);
  if (tamper_reject && !reject) {
    *code = CSA_CONTRACT_SHAPE;
    return 1;
  }
  *code += tamper_code_delta;
  return reject;
}

static int tampered_site(const void *c, int *input, int *axis) {
  int r = cases_csa4_expected_site(c, input, axis);
  *input += tamper_input_delta;
  return r;
}

/* Runs spec's oracle lane with the tampered hooks; returns its one row. */
static const result_row *run_tampered(const char *spec, int code_delta, int input_delta, int reject) {
  static case_report r;
  csa_chain_ratio t = *run_csa4_ratio();
  runner_env env = oracle_env();
  csa4_case c;
  char id[64];
  parse_spec(spec, &c, id, sizeof id);
  tamper_code_delta = code_delta, tamper_input_delta = input_delta, tamper_reject = reject;
  t.expected = tampered_expected;
  t.expected_site = tampered_site;
  memset(&r, 0, sizeof r);
  run_csa_chain(&env, id, &t, &c, cases_csa4_steps(&c), &r);
  cr_assert_eq(r.n, 1, "%s", spec);
  cr_expect_eq(r.failed, 1, "%s: %s", spec, r.rows[0].message);
  cr_expect_str_eq(r.rows[0].status, "fail");
  cr_expect(strstr(r.rows[0].message, "repro: bitgate repro csa4.") != NULL, "%s", r.rows[0].message);
  return &r.rows[0];
}

Test(csa4_lanes, untampered_descriptor_passes) {
  static case_report r;
  runner_env env = oracle_env();
  spec_bag b;
  csa4_case c;
  char id[64];
  family_specs("csa4.contract", 1, &b);
  parse_spec(b.spec[0], &c, id, sizeof id);
  run_csa_chain(&env, id, run_csa4_ratio(), &c, cases_csa4_steps(&c), &r);
  cr_expect_eq(r.failed, 0, "%s", r.rows[0].message);
}

Test(csa4_lanes, tampered_contract_code_fails) {
  spec_bag b;
  const result_row *row;
  family_specs("csa4.contract", 1, &b);
  row = run_tampered(b.spec[0], 1, 0, 0);
  cr_expect(strstr(row->message, "but the case expects contract") != NULL, "%s", row->message);
}

Test(csa4_lanes, tampered_contract_site_fails) {
  spec_bag b;
  const result_row *row;
  family_specs("csa4.contract", 3, &b);
  row = run_tampered(b.spec[2], 0, 1, 0);
  cr_expect(strstr(row->message, "but the case expects contract") != NULL, "%s", row->message);
  cr_expect(strstr(row->message, " at input ") != NULL, "names the expected site: %s", row->message);
}

Test(csa4_lanes, chain_expected_to_reject_fails) {
  spec_bag b;
  const result_row *row;
  family_specs("csa4.chain", 1, &b);
  row = run_tampered(b.spec[0], 0, 0, 1);
  cr_expect_eq(row->step, 0);
  cr_expect(strstr(row->message, "step 0: oracle accepts") != NULL, "%s", row->message);
  cr_expect(strstr(row->message, "expects contract shape") != NULL, "%s", row->message);
}

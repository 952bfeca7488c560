/*
** test_case_runner.c: lane bookkeeping shared by every operator: lane lists,
** report rows, the mismatch row the device lanes fill from a diff, and a
** run's per-lane tally.
*/
#include "harness/case_runner.h"
#include "harness/diff.h"
#include "harness/run_tally.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

Test(case_runner, mismatch_row_carries_every_detail) {
  float want[4] = {1.0f, 2.0f, 3.0f, 4.0f}, got[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  tensor a = {DTYPE_F32, 2, {2, 2, 0, 0}, want}, b = {DTYPE_F32, 2, {2, 2, 0, 0}, got};
  case_report r;
  tensor_diff d;
  result_row *row;
  memset(&r, 0, sizeof r);
  memcpy(&got[2], "\xa5\xa5\xa5\xa5", 4); /* the junk fill, never overwritten */
  cr_assert_eq(tensor_diff_run(&a, &b, &d), 1);
  row = case_report_add(&r, LANE_EAGER, 3, "pass");
  result_row_set_mismatch(row, "Y", &d);
  cr_expect_str_eq(row->status, "mismatch");
  cr_expect_str_eq(row->tensor, "Y");
  cr_expect_eq(row->flat_offset, 2);
  cr_expect_str_eq(row->coords, "[1,0]");
  cr_expect_str_eq(row->expected_hex, "0x40400000");
  cr_expect_str_eq(row->actual_hex, "0xa5a5a5a5");
  cr_expect_eq(row->mismatch_count, 1);
  cr_expect_eq(row->has_mismatch, 1);
  cr_expect(strstr(row->message, "never written") != NULL, "%s", row->message);
  cr_expect_str_eq(row->lane, "eager");
  cr_expect_eq(row->step, 3);
}

Test(case_runner, lane_lists) {
  lane_mask m;
  char err[128];
  cr_expect_eq(lane_mask_parse("oracle,poison", &m, err, sizeof err), 0);
  cr_expect_eq(m, LANE_BIT(LANE_ORACLE) | LANE_BIT(LANE_POISON));
  cr_expect_eq(lane_mask_parse("oracle,gpu", &m, err, sizeof err), -1);
  cr_expect(strstr(err, "'gpu'") != NULL, "%s", err);
}

/* --variant both's LANE@ref rows count in columns of their own, failures too (they were dropped). */
Test(case_runner, tally_counts_reference_rows_apart) {
  static case_report r;
  suite_run_tally t;
  memset(&t, 0, sizeof t);
  memset(&r, 0, sizeof r);
  case_report_add(&r, LANE_ORACLE, 0, "pass");
  case_report_add(&r, LANE_EAGER, 0, "pass");
  snprintf(case_report_add(&r, LANE_EAGER, 0, "mismatch")->lane, sizeof r.rows[0].lane, "eager@ref");
  snprintf(case_report_add(&r, LANE_CAPTURE, 0, "pass")->lane, sizeof r.rows[0].lane, "capture@ref");
  snprintf(case_report_add(&r, LANE_POISON, 0, "pass")->lane, sizeof r.rows[0].lane, "poison@refx");
  r.failed = 1;
  suite_run_tally_add(&t, &r);
  cr_expect_eq(t.cases, 1);
  cr_expect_eq(t.failed_cases, 1);
  cr_expect_eq(t.rows[LANE_ORACLE], 1);
  cr_expect_eq(t.rows[LANE_EAGER], 1);
  cr_expect_eq(t.failed_rows[LANE_EAGER], 0);
  cr_expect_eq(t.rows[LANE_COUNT + LANE_EAGER], 1);
  cr_expect_eq(t.failed_rows[LANE_COUNT + LANE_EAGER], 1, "the reference's mismatch is counted");
  cr_expect_eq(t.rows[LANE_COUNT + LANE_CAPTURE], 1);
  cr_expect_eq(t.rows[LANE_COUNT + LANE_POISON], 0, "an unknown suffix is no lane");
  cr_expect_eq(t.rows[LANE_POISON], 0);
}

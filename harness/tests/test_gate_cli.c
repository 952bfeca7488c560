/*
** test_gate_cli.c: the gate as CI meets it, through the binary, oracle lane
** only (no GPU): a tiny corpus whose one case has no generator fails every
** time, like a known kernel bug would.  Waived is exit 0 and never counted as
** passed; a stale waiver is printed; a bad known-failures line is exit 3
** naming file:line; --baseline passes a known failure and fails a new one.
*/
#include "harness/tests/bitgate_process.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

TestSuite(gate_cli, .init = make_tmp, .fini = remove_tmp);

/* The case ids bitgate gives the specs below (bitgate list). */
#define VALID_ID "is.valid.253ae06b"
#define BOGUS_ID "zz.bogus.0a39cb3f"
#define BOGUS2_ID "zz.bogus.33e649d4"

static const char valid_spec[] = "family=is.valid op=IndexShare dtype=f32 idx=i32 b=3 n=1 nkv=none sq=1 sc=1 sp=0 "
                                 "h=4 ih=1 k=32 out=1 present=grow vlen=none bias=none scale=0x1.3cc36p-1 "
                                 "seed=2119080470 steps=4";

static void write_file(const char *name, const char *text) {
  char path[512];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  cr_assert((f = fopen(path, "w")), "%s", path);
  fputs(text, f);
  fclose(f);
}

/* mini.suite: the valid case and one bogus case (two with extra). */
static void write_suite(int extra) {
  char text[1024];
  snprintf(text, sizeof text, "%s\nfamily=zz.bogus op=Bogus seed=1 steps=1\n%s", valid_spec,
           extra ? "family=zz.bogus op=Bogus seed=2 steps=1\n" : "");
  write_file("mini.suite", text);
}

#define RUN_MINI(...) RUN(tmp, "run", "--suite", "mini", "--corpus", tmp, "--lanes", "oracle", "--db", "r.db", __VA_ARGS__)

Test(gate_cli, ids_are_as_expected) {
  outcome *o;
  write_suite(1);
  o = RUN(tmp, "list", "--suite", "mini", "--corpus", tmp);
  cr_assert_eq(o->status, 0, "%s", o->err);
  cr_expect_str_eq(o->out, VALID_ID "\n" BOGUS_ID "\n" BOGUS2_ID "\n");
}

Test(gate_cli, waived_is_exit_0_never_pass_and_stale_is_printed) {
  outcome *o;
  write_suite(0);
  write_file("known-failures", "# known\n" BOGUS_ID " oracle alice no generator yet (#7)\n"
                               VALID_ID " oracle bob fixed long ago\n");
  o = RUN_MINI("--filter", "*");
  cr_assert_eq(o->status, 0, "%s\n%s", o->out, o->err);
  cr_expect(strstr(o->out, "WAIVED " BOGUS_ID " oracle step 0: waived fail (known failure, owner alice: no generator "
                           "yet (#7);"), "%s", o->out);
  cr_expect(!strstr(o->out, "FAIL "), "%s", o->out);
  cr_expect(strstr(o->out, "2 cases, 1 passed, 0 failed, 1 waived"), "%s", o->out);
  cr_expect(strstr(o->out, "lane oracle   2 results, 0 failed, 1 waived"), "%s", o->out);
  cr_expect(strstr(o->out, "stale waiver: " VALID_ID " oracle (owner bob,"), "%s", o->out);
  cr_expect(strstr(o->out, "2 listed, 1 results waived in 1 cases, 1 stale, 0 not run"), "%s", o->out);
  o = RUN(tmp, "report", "--db", "r.db", "--format", "junit"); /* the report says skipped, not passed */
  cr_assert_eq(o->status, 0, "%s", o->err);
  cr_expect(strstr(o->out, "skipped=\"1\""), "%s", o->out);
  o = RUN_MINI("--known-failures", "none"); /* waivers off: the failure fails */
  cr_expect_eq(o->status, 1, "%s", o->out);
}

Test(gate_cli, bad_known_failures_line_is_exit_3) {
  outcome *o;
  write_suite(0);
  write_file("known-failures", "# known\n\n" BOGUS_ID " eagr alice typo in the lane\n");
  o = RUN_MINI("--filter", "*");
  cr_expect_eq(o->status, 3, "%s\n%s", o->out, o->err);
  cr_expect(strstr(o->err, "known-failures:3: unknown lane 'eagr'"), "%s", o->err);
  cr_expect(!strstr(o->out, "run 1:"), "nothing ran: %s", o->out);
  o = RUN_MINI("--known-failures", "absent-file");
  cr_expect_eq(o->status, 3, "an explicit file must exist: %s", o->err);
}

Test(gate_cli, baseline_fails_only_new_failures) {
  outcome *o;
  write_suite(0);
  o = RUN_MINI("--filter", "*");
  cr_assert_eq(o->status, 1, "%s\n%s", o->out, o->err);
  o = RUN_MINI("--baseline", "1");
  cr_expect_eq(o->status, 0, "%s\n%s", o->out, o->err);
  cr_expect(strstr(o->out, "FAIL " BOGUS_ID), "the row still fails in the store: %s", o->out);
  cr_expect(strstr(o->out, "known from baseline: " BOGUS_ID " oracle (fail)"), "%s", o->out);
  cr_expect(strstr(o->out, "baseline run 1: 0 new failures, 1 still failing (known from baseline), 0 fixed"), "%s",
            o->out);
  write_suite(1);
  o = RUN_MINI("--baseline", "1");
  cr_expect_eq(o->status, 1, "%s\n%s", o->out, o->err);
  cr_expect(strstr(o->out, "new failure: " BOGUS2_ID " oracle (fail; baseline: absent)"), "%s", o->out);
  o = RUN_MINI("--baseline", "42");
  cr_expect_eq(o->status, 2, "%s", o->err);
  cr_expect(strstr(o->err, "--baseline 42: the results database has no run 42"), "%s", o->err);
  o = RUN_MINI("--repeat", "0");
  cr_expect_eq(o->status, 2, "%s", o->err);
}

/*
** test_worker_gpu.c: crash and hang isolation of real kernels (issue 7,
** item 4), through the binary on a GPU host; without a GPU every test skips
** (exit 77, "skipped: no GPU").
**
** A three-case suite (IndexShare, CSA ratio 4, IndexShare) runs in the
** oracle and eager lanes with workers (the default with a GPU) and a kernel
** bug planted in csa4.cu (BITGATE_PLANT, inherited by the workers):
**   fault  the index-query kernel stores 2^40 floats past its output: an
**          illegal address, a sticky CUDA error that ruins the context, so
**          the worker reports the case as 'crash' and retires;
**   hang   the same store in an endless loop: the case is killed after
**          --timeout and recorded as 'timeout'.
** Either way the CSA case has one failing eager row with the repro command,
** and the IndexShare case after it passes in a fresh worker.
*/
#include "device/device.h"
#include "harness/tests/bitgate_process.h"

#include "harness/tests/kernel_plants.h"
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(worker_gpu, .init = make_tmp, .fini = remove_tmp, .timeout = 580);

/* The ids `bitgate list --suite mini` gives the specs below. */
#define IS1_ID "is.valid.253ae06b"
#define CSA4_ID_PREFIX "csa4.chain."

static const char suite_text[] =
    "family=is.valid op=IndexShare dtype=f32 idx=i32 b=3 n=1 nkv=none sq=1 sc=1 sp=0 h=4 ih=1 k=32 out=1 "
    "present=grow vlen=none bias=none scale=0x1.3cc36p-1 seed=2119080470 steps=4\n"
    "family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=1 iheads=4 topk=1 window=128 start=0 "
    "prefill=520 decode=40 cap=140 outputs=6 bias=1 sink=rand scale=0x1.8p-4 seed=3953392690\n"
    "family=is.valid op=IndexShare dtype=f32 idx=i32 b=3 n=1 nkv=none sq=1 sc=1 sp=0 h=4 ih=1 k=32 out=1 "
    "present=grow vlen=none bias=none scale=0x1.3cc36p-1 seed=2119080471 steps=4\n";


static void skip_without_gpu(void) {
  device_info info;
  device_probe(&info);
  if (!info.available) cr_skip_test("skipped: no GPU (%s)", info.reason);
}

static void write_suite(void) {
  char path[512];
  FILE *f;
  snprintf(path, sizeof path, "%s/mini.suite", tmp);
  cr_assert((f = fopen(path, "w")), "%s", path);
  fputs(suite_text, f);
  fclose(f);
}

/* Runs the suite with plant; expects the CSA case's one FAIL line in eager as status (why), the rest passing. */
static void expect_lost(const char *plant, const char *status, const char *why) {
  outcome *o;
  char line[1024] = "";
  const char *at;
  skip_without_gpu();
  write_suite();
  cr_assert_eq(setenv("BITGATE_PLANT", plant, 1), 0);
  o = RUN(tmp, "run", "--suite", "mini", "--corpus", tmp, "--lanes", "oracle,eager", "--db", "r.db", "--timeout",
          "120");
  cr_expect_eq(o->status, 1, "%s\n%s", o->out, o->err);
  if ((at = strstr(o->out, "FAIL " CSA4_ID_PREFIX))) snprintf(line, sizeof line, "%.*s", (int)strcspn(at, "\n"), at);
  cr_expect(strstr(line, " eager step "), "%s", o->out);
  cr_expect(strstr(line, status) && strstr(line, why), "want %s (%s): %s", status, why, o->out);
  cr_expect(strstr(line, "; repro: bitgate repro " CSA4_ID_PREFIX), "%s", line);
  cr_expect(strstr(o->out, "3 cases, 2 passed, 1 failed"), "the IndexShare cases pass around it: %s", o->out);
  cr_expect(!strstr(o->out, "FAIL " IS1_ID), "%s", o->out);
  cr_expect(strstr(o->out, "workers: 1,"), "workers are the default with a GPU: %s", o->out);
}

Test(worker_gpu, kernel_fault_is_a_crash_row_and_the_suite_goes_on) {
  expect_lost(PLANT_CSA4_FAULT, "(crash)", "kernel fault, device context lost");
}

Test(worker_gpu, hung_kernel_is_a_timeout_row_and_the_suite_goes_on) {
  expect_lost(PLANT_CSA4_HANG, "(timeout)", "no answer within --timeout 120 s");
}

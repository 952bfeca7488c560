/*
** test_oracle_threads.c: the oracle's thread count changes no byte (issue 8,
** "Oracle speed"; oracle/oracle_threads.h).
**
** A sample of the gate suite, the first cases of every family, runs in the
** oracle lane at 1, 2 and 16 threads.  Each run is reduced to a transcript:
** one line per step and output (its XXH3 digest, as the frozen-oracle file
** pins it, or the rejection) and one per stage payload, in the order the lane
** hands them over.  The transcripts must be equal byte for byte.  Because
** 16 threads is more than this machine's cores and most cases are small,
** the sample also holds cases big enough to take each parallel path: many
** IndexShare rows, a long ratio-4 state (records split within a row), and
** multi-row and multi-head CSA steps.
*/
#include "harness/case_runner.h"
#include "harness/frozen_oracle.h"
#include "harness/suite.h"
#include "oracle/oracle_threads.h"
#include "oracle/tensor.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_PER_FAMILY 3
#define FAMILY_MAX 32

/* A growing text: the transcript of one case at one thread count. */
typedef struct transcript {
  char *text;
  size_t len, cap;
} transcript;

static void transcript_add(transcript *t, const char *line) {
  const size_t n = strlen(line);
  if (t->len + n + 1 > t->cap) {
    t->cap = (t->len + n + 1) * 2;
    t->text = realloc(t->text, t->cap);
    cr_assert_not_null(t->text);
  }
  memcpy(t->text + t->len, line, n + 1);
  t->len += n;
}

static void on_outcome(void *ctx, const char *case_id, int step, const struct tensor *outputs,
                       const char *const *names, int n_out, const struct op_error *rejection) {
  char value[256], line[400];
  int i;
  (void)case_id;
  if (rejection) {
    frozen_oracle_rejection_value(rejection, value, sizeof value);
    snprintf(line, sizeof line, "step %d rejected %s\n", step, value);
    transcript_add(ctx, line);
    return;
  }
  for (i = 0; i < n_out; i++) {
    frozen_oracle_tensor_value(&outputs[i], value, sizeof value);
    snprintf(line, sizeof line, "step %d output %s %s\n", step, names[i], value);
    transcript_add(ctx, line);
  }
}

static void on_payload(void *ctx, const char *case_id, int step, const char *stage, const char *source,
                       const struct tensor *payload) {
  char value[256], line[400];
  (void)case_id;
  frozen_oracle_tensor_value(payload, value, sizeof value);
  snprintf(line, sizeof line, "step %d payload %s/%s %s\n", step, source, stage, value);
  transcript_add(ctx, line);
}

/* The case's transcript with the oracle on `threads` threads; the caller frees text. */
static transcript run_at(const char *id, const char *spec, int threads) {
  static case_report report;
  transcript t = {NULL, 0, 0};
  runner_env env;
  memset(&env, 0, sizeof env);
  env.lanes = LANE_BIT(LANE_ORACLE);
  env.oracle_outcome = on_outcome, env.oracle_outcome_ctx = &t;
  env.payload = on_payload, env.payload_ctx = &t;
  transcript_add(&t, "");
  oracle_threads_set(threads);
  cr_assert_eq(case_run(&env, id, spec, &report), 0, "%s: could not run", id);
  oracle_threads_set(0);
  cr_assert_eq(report.failed, 0, "%s at %d threads: %s", id, threads, report.n ? report.rows[0].message : "");
  return t;
}

/* The first line where two transcripts differ, for the failure message. */
static const char *first_difference(const char *a, const char *b) {
  const char *line = a;
  for (; *a && *a == *b; a++, b++)
    if (*a == '\n') line = a + 1;
  return line;
}

static void expect_thread_independent(const char *id, const char *spec) {
  static const int counts[] = {2, 16};
  transcript one = run_at(id, spec, 1);
  size_t i;
  cr_assert(one.len > 0, "%s: the lane handed over nothing", id);
  for (i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    transcript many = run_at(id, spec, counts[i]);
    cr_expect_str_eq(many.text, one.text, "%s: 1 vs %d threads differ at: %.200s", id, counts[i],
                     first_difference(one.text, many.text));
    free(many.text);
  }
  free(one.text);
}

/* "family=csa4.state op=..." -> "csa4.state" in out. */
static void spec_family(const char *spec, char *out, size_t len) {
  const char *v = strncmp(spec, "family=", 7) == 0 ? spec + 7 : "";
  size_t n = strcspn(v, " ");
  snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), v);
}

Test(oracle_threads, gate_sample_is_byte_identical_at_1_2_and_16_threads, .timeout = 600) {
  char families[FAMILY_MAX][40], family[40], err[512], id[64];
  int taken[FAMILY_MAX] = {0}, n_families = 0, i, f, ran = 0;
  suite s;
  cr_assert_eq(suite_load(suite_default_dir(), "gate", &s, err, sizeof err), 0, "%s", err);
  for (i = 0; i < s.count; i++) {
    spec_family(s.specs[i], family, sizeof family);
    for (f = 0; f < n_families && strcmp(families[f], family); f++) continue;
    if (f == n_families) {
      cr_assert_lt(n_families, FAMILY_MAX);
      snprintf(families[n_families++], sizeof families[0], "%s", family);
    }
    if (taken[f]++ >= SAMPLE_PER_FAMILY) continue;
    snprintf(id, sizeof id, "%s.sample%d", family, taken[f]);
    expect_thread_independent(id, s.specs[i]);
    ran++;
  }
  cr_expect_geq(n_families, 14, "every family of the gate is sampled");
  cr_expect_eq(ran, n_families * SAMPLE_PER_FAMILY);
  suite_free(&s);
}

/* Gate cases sized so that each parallel path splits its work even on few cores. */
static const char *const big_cases[][2] = {
    /* 3 x 8 x 4 = 96 IndexShare rows, capacity present with a bias: rows split */
    {"is.big.rows", "family=is.valid op=IndexShare dtype=bf16 idx=i64 b=3 n=8 nkv=2 sq=4 sc=4 sp=13 h=8 ih=1 k=5 "
                    "out=3 present=cap vlen=12,12,12 bias=1x13 scale=none seed=2709884360 steps=4"},
    /* 3 units of 8 heads (b = 1, 3 kv heads) under 2 x 2 workers: the phases of index_share_split.c, up to 3
       key chunks of 128 and 3 dim chunks of 32 a unit; 1 thread takes whole units */
    {"is.big.split", "family=is.valid op=IndexShare dtype=bf16 idx=i32 b=1 n=24 nkv=3 sq=1 sc=1 sp=400 h=96 ih=1 "
                     "k=300 out=1 present=grow vlen=none bias=none scale=none seed=1409761537 steps=4"},
    /* the same split with 20 heads a kv head (chunks of 16 and 4 heads, 16-lane dots), per-head bias, a capacity
       present, 3 masked rows and dim chunks of 32 and 8 */
    {"is.big.split.cap", "family=is.masked op=IndexShare dtype=f32 idx=i64 b=1 n=20 nkv=1 sq=1 sc=2 sp=400 h=40 "
                         "ih=1 k=260 out=3 present=cap vlen=390 bias=1x20x1x400 scale=none masked=3 "
                         "seed=3027584811 steps=3"},
    /* the split over units of one head each (an index row a head), f16, with a per-head bias */
    {"is.big.split.rows", "family=is.valid op=IndexShare dtype=f16 idx=i32 b=1 n=3 nkv=1 sq=1 sc=3 sp=300 h=64 "
                          "ih=3 k=257 out=3 present=grow vlen=none bias=1x3x1x303 scale=none seed=613905327 "
                          "steps=3"},
    /* 2 x 520 prefill rows: whole ratio-4 index rows split, then attention rows, topk 512 */
    {"csa4.big.rows", "family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=2 iheads=1 topk=512 "
                      "window=128 start=0 prefill=520 decode=4 cap=131 outputs=6 bias=1 sink=zero scale=none "
                      "seed=2161528630"},
    /* single rows at position 2^17 over 32K records: records split within a row, then the 2 heads */
    {"csa4.big.records", "family=csa4.state op=CompressedSparseAttention ratio=4 b=1 heads=2 iheads=4 topk=7 "
                         "window=128 start=131071 prefill=1 decode=4 cap=32770 outputs=6 bias=135 sink=rand "
                         "scale=none seed=2371627104"},
    /* one row at position 4,096 over 1,024 records: its 16 index heads' finalize and its 128 selected records'
       decode split within the row, then its records */
    {"csa4.big.heads", "family=csa4.state op=CompressedSparseAttention ratio=4 b=1 heads=2 iheads=16 topk=128 "
                       "window=128 start=4095 prefill=1 decode=2 cap=1025 outputs=6 bias=none sink=rand "
                       "scale=none seed=1203004211"},
    /* ratio 128, FP8: 2 batch rows of compression and 2 x 128 prefill rows split */
    /* ratio 128, FP8, 2 heads: the 1-row decode steps split their heads */
    {"csa128.big.rows", "family=csa128.chain op=CompressedSparseAttention ratio=128 cache=fp8 b=2 heads=1 "
                        "window=128 start=0 prefill=128 decode=3 cap=1 bias=1x1x1x129 sink=zero scale=none "
                        "seed=2575309871"},
    /* ratio 128, FP8, one row at position 4,096 over 32 records: the step that finishes a record sets its carry
       from the past and resets it, each split by slots, and decodes its 32 records split between the workers */
    {"csa128.big.records", "family=csa128.state op=CompressedSparseAttention ratio=128 cache=fp8 b=1 heads=2 "
                           "window=128 start=4095 prefill=1 decode=2 cap=33 bias=none sink=rand scale=none "
                           "seed=1630215787"},
    {"csa128.big.heads", "family=csa128.chain op=CompressedSparseAttention ratio=128 cache=fp8 b=2 heads=2 "
                         "window=128 start=0 prefill=8 decode=4 cap=3 bias=2x2x1x131 sink=rand scale=none "
                         "seed=3395805050"},
};

Test(oracle_threads, big_cases_are_byte_identical_at_1_2_and_16_threads, .timeout = 600) {
  size_t i;
  char err[256];
  for (i = 0; i < sizeof big_cases / sizeof big_cases[0]; i++) {
    cr_assert_eq(case_check_spec(big_cases[i][1], err, sizeof err), 0, "%s: %s", big_cases[i][0], err);
    expect_thread_independent(big_cases[i][0], big_cases[i][1]);
  }
}

Test(oracle_threads, count_comes_from_the_setting_then_the_environment) {
  const int online = (oracle_threads_set(0), unsetenv("BITGATE_ORACLE_THREADS"), oracle_threads_count());
  cr_expect_geq(online, 1);
  setenv("BITGATE_ORACLE_THREADS", "3", 1);
  cr_expect_eq(oracle_threads_count(), 3);
  oracle_threads_set(5);
  cr_expect_eq(oracle_threads_count(), 5, "the API wins over the environment");
  oracle_threads_set(0);
  setenv("BITGATE_ORACLE_THREADS", "two", 1);
  cr_expect_eq(oracle_threads_count(), online, "a value that is no count is ignored");
  setenv("BITGATE_ORACLE_THREADS", "0", 1);
  cr_expect_eq(oracle_threads_count(), online);
  unsetenv("BITGATE_ORACLE_THREADS");
  cr_expect_eq(oracle_parallel_workers(100, 1) <= online, 1);
  cr_expect_eq(oracle_parallel_workers(3, 4), 1, "a call with less than one grain stays on one thread");
}

/*
** Speed, not bytes: the ratio-4 scorer's per-worker dot sums once shared a
** cache line with the next worker's scratch, and two threads ran that stage
** at 1.5x instead of 2x.  Every oracle scratch block now starts on a line and
** owns whole lines, and per-worker slices of one block are a whole number of
** lines apart.  Sizes that are not a line's multiple are the ones that broke.
*/
Test(oracle_threads, worker_scratch_never_shares_a_cache_line) {
  static const size_t sizes[] = {1, 4, 8, 12, 24, 2 * 583};
  static const long long counts[] = {1, 3, 17, 64, 65, 640};
  size_t s;
  int c;
  for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (c = 0; c < (int)(sizeof counts / sizeof counts[0]); c++) {
      const long long stride = oracle_worker_stride(counts[c], sizes[s]);
      unsigned char *a = oracle_alloc_or_die((size_t)counts[c], sizes[s], __FILE__, __LINE__);
      unsigned char *b = oracle_alloc_or_die((size_t)counts[c], sizes[s], __FILE__, __LINE__);
      const size_t bytes = (size_t)counts[c] * sizes[s];
      size_t i;
      cr_expect_eq((uintptr_t)a % ORACLE_CACHE_LINE, 0, "%lld x %zu bytes: block not on a line", counts[c], sizes[s]);
      cr_expect(b >= a + bytes + (ORACLE_CACHE_LINE - bytes % ORACLE_CACHE_LINE) % ORACLE_CACHE_LINE ||
                    a >= b + bytes + (ORACLE_CACHE_LINE - bytes % ORACLE_CACHE_LINE) % ORACLE_CACHE_LINE,
                "%lld x %zu bytes: two blocks share a line", counts[c], sizes[s]);
      for (i = 0; i < bytes; i++) cr_assert_eq(a[i], 0, "the block is not zeroed at byte %zu", i);
      cr_expect_geq(stride, counts[c]);
      cr_expect_eq((size_t)stride * sizes[s] % ORACLE_CACHE_LINE, 0,
                   "%lld x %zu bytes: stride %lld leaves slices sharing lines", counts[c], sizes[s], stride);
      free(a);
      free(b);
    }
}

/*
** test_csa128_cases.c: the CSA ratio-128 case generator
** (cases/csa128_cases.h).
**
** The oracle is the judge: every gate case's full chain runs through
** oracle_csa128_run with each step's presents threaded back in as the next
** step's pasts, valid families must succeed at every step and csa128.contract
** cases must fail with OP_ERR_CONTRACT and their code.  Failures print the
** spec, so a failing case can be rebuilt from this output alone.
*/
#include "cases/case_spec.h"
#include "cases/csa128_cases.h"
#include "oracle/numerics/numerics.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ helpers */

#include "csa_test_util.h"

/* The ratio-128 gate suite as cases_csa_write_suite writes it. */
static spec_set generated_suite(void) { return csa_test_generated_suite(cases_csa_write_suite, "ratio-128"); }

static csa_case parse_or_die(const char *spec) {
  csa_case c;
  char err[512];
  cr_assert_eq(cases_csa_parse(spec, &c, err, sizeof err), 0, "parse failed: %s\n  %s", err, spec);
  return c;
}

/* --------------------------------------------------- spec text and ids */

Test(csa128_spec, suite_round_trips_and_ids_are_unique) {
  spec_set s = generated_suite();
  char **ids = calloc((size_t)s.n, sizeof *ids);
  int i, j;
  for (i = 0; i < s.n; i++) {
    csa_case c = parse_or_die(s.v[i]);
    char back[CSA_CASE_SPEC_MAX], id[CASE_ID_MAX];
    cr_assert_eq(cases_csa_format(&c, back, sizeof back), 0);
    cr_assert_str_eq(back, s.v[i], "not canonical:\n  %s\n  %s", s.v[i], back);
    cr_assert_eq(cases_csa_id(&c, id, sizeof id), 0);
    cr_assert(!strncmp(id, cases_csa_family_name(c.family), strlen(cases_csa_family_name(c.family))));
    ids[i] = strdup(id);
  }
  for (i = 0; i < s.n; i++)
    for (j = i + 1; j < s.n; j++) cr_assert_str_neq(ids[i], ids[j], "id %s twice:\n  %s\n  %s", ids[i], s.v[i], s.v[j]);
  for (i = 0; i < s.n; i++) free(ids[i]);
  free(ids);
  spec_set_free(&s);
}

Test(csa128_spec, token_order_does_not_matter) {
  const char *canon = "family=csa128.chain op=CompressedSparseAttention ratio=128 cache=fp8 b=2 heads=1 window=128 "
                      "start=0 prefill=129 decode=130 cap=3 bias=1x1x1x131 sink=large scale=none seed=7";
  const char *shuffled = "seed=7 sink=large  family=csa128.chain cap=3 op=CompressedSparseAttention ratio=128 "
                         "cache=fp8 heads=1 b=2 window=128 start=0 decode=130 prefill=129 bias=1x1x1x131 scale=none";
  csa_case a = parse_or_die(canon), b = parse_or_die(shuffled);
  char ta[CSA_CASE_SPEC_MAX], tb[CSA_CASE_SPEC_MAX];
  cr_assert_eq(cases_csa_format(&a, ta, sizeof ta), 0);
  cr_assert_eq(cases_csa_format(&b, tb, sizeof tb), 0);
  cr_assert_str_eq(ta, canon);
  cr_assert_str_eq(tb, canon);
  cr_assert_eq(cases_csa_steps(&a), 131);
}

#define HEAD "family=csa128.chain op=CompressedSparseAttention ratio=128 cache=f32 "
#define DIMS "b=1 heads=2 window=128 start=0 prefill=3 decode=2 cap=0 "
#define TAIL "sink=zero scale=none seed=1"
/* cases_csa_parse for csa_test_expect_parse_rows. */
static int parse128(const char *spec, char *err, size_t len) {
  csa_case c;
  return cases_csa_parse(spec, &c, err, len);
}

Test(csa128_spec, parse_errors_name_the_token) {
  static const csa_parse_row rows[] = {
      {HEAD DIMS "bias=none " TAIL, NULL},
      {HEAD "b=0 heads=2 window=128 start=0 prefill=3 decode=2 cap=0 bias=none " TAIL, "bad value in token 'b=0'"},
      {HEAD "b=01 heads=2 window=128 start=0 prefill=3 decode=2 cap=0 bias=none " TAIL, "bad value in token 'b=01'"},
      {HEAD "b=1 heads=2 window=129 start=0 prefill=3 decode=2 cap=0 bias=none " TAIL, "bad value in token 'window=129'"},
      {HEAD DIMS "bias=1x2x3x4x5 " TAIL, "bad value in token 'bias=1x2x3x4x5'"},
      {HEAD DIMS "bias=none sink=big scale=none seed=1", "bad value in token 'sink=big'"},
      {HEAD DIMS "bias=none sink=zero scale=0x1.0p-3 seed=1", "bad value in token 'scale=0x1.0p-3'"},
      {HEAD DIMS "bias=none " TAIL " b=1", "repeated key in token 'b=1'"},
      {HEAD DIMS "bias=none " TAIL " foo=1", "unknown key in token 'foo=1'"},
      {HEAD DIMS "bias=none " TAIL " contract=scale", "key not used by family csa128.chain in token 'contract=scale'"},
      {HEAD DIMS "bias=none sink=zero scale=none", "missing key 'seed'"},
      {"family=csa128.bogus op=CompressedSparseAttention", "bad value in token 'family=csa128.bogus'"},
      {"family=csa128.chain op=CompressedSparseAttention ratio=4 cache=f32 " DIMS "bias=none " TAIL,
       "bad value in token 'ratio=4'"},
      {"family=csa128.chain op=CompressedSparseAttention ratio=128 cache=fp4 " DIMS "bias=none " TAIL,
       "bad value in token 'cache=fp4'"},
      {HEAD "b=1 heads=2 window=128 start=5 prefill=3 decode=2 cap=0 bias=none " TAIL, "inconsistent token 'start=5'"},
      {HEAD "b=1 heads=2 window=128 start=0 prefill=127 decode=2 cap=0 bias=none " TAIL, "inconsistent token 'cap=0'"},
      {HEAD DIMS "bias=1x2x3x128 " TAIL, "inconsistent token 'bias=1x2x3x128'"},
      {HEAD DIMS "bias=129 " TAIL, "inconsistent token 'bias=129'"},
      {"family=csa128.state op=CompressedSparseAttention ratio=128 cache=f32 " DIMS "bias=none " TAIL,
       "inconsistent token 'start=0'"},
      /* csa128.tiles takes start=0 chains and synthetic starts alike */
      {"family=csa128.tiles op=CompressedSparseAttention ratio=128 cache=f32 " DIMS "bias=none " TAIL, NULL},
      {"family=csa128.tiles op=CompressedSparseAttention ratio=128 cache=fp8 b=1 heads=64 window=128 start=300 "
       "prefill=3 decode=2 cap=2 bias=none " TAIL,
       NULL},
      {"family=csa128.tiles op=CompressedSparseAttention ratio=128 cache=fp8 b=1 heads=64 window=128 start=300 "
       "prefill=3 decode=2 cap=1 bias=none " TAIL,
       "inconsistent token 'cap=1'"},
      {"family=csa128.tiles op=CompressedSparseAttention ratio=128 cache=f32 " DIMS "bias=none " TAIL
       " contract=scale",
       "key not used by family csa128.tiles in token 'contract=scale'"},
      {"family=csa128.contract op=CompressedSparseAttention ratio=128 cache=f32 " DIMS "bias=none " TAIL
       " contract=scale",
       "inconsistent token 'decode=2'"},
      {"family=csa128.contract op=CompressedSparseAttention ratio=128 cache=f32 b=1 heads=2 window=128 start=0 "
       "prefill=3 decode=0 cap=0 bias=none sink=zero scale=none contract=bias_dtype seed=1",
       "inconsistent token 'contract=bias_dtype'"},
      {"family=csa128.contract op=CompressedSparseAttention ratio=128 cache=f32 b=1 heads=2 window=128 start=0 "
       "prefill=3 decode=0 cap=0 bias=none sink=zero scale=none contract=past_capacity seed=1",
       "inconsistent token 'contract=past_capacity'"},
      {"family=csa128.contract op=CompressedSparseAttention ratio=128 cache=f32 b=1 heads=2 window=128 start=0 "
       "prefill=3 decode=0 cap=0 bias=none sink=zero scale=none contract=none seed=1",
       "bad value in token 'contract=none'"},
  };
  csa_test_expect_parse_rows(rows, sizeof rows / sizeof rows[0], parse128);
}

/* Which of the things the brief names does the suite hold? */
Test(csa128_spec, suite_covers_the_families_and_boundaries) {
  static const long long prefills[] = {1, 127, 128, 129, 255, 256, 300};
  spec_set s = generated_suite();
  int fam[CSA_FAMILY_COUNT] = {0}, codes[CSA_CONTRACT_COUNT] = {0}, seen_prefill[7] = {0}, fmt[2][CSA_FAMILY_COUNT] = {{0}};
  int long_chain = 0, batch = 0, short_window = 0, no_bias = 0, rank1 = 0, full = 0, spare = 0, sinks[CSA_SINK_COUNT] = {0};
  int near16 = 0, near20 = 0, i, k;
  for (i = 0; i < s.n; i++) {
    csa_case c = parse_or_die(s.v[i]);
    long long final_total = c.start + c.prefill + c.decode;
    fam[c.family]++;
    fmt[c.format == CSA_CACHE_FP8][c.family]++;
    if (c.family == CSA_FAMILY_CONTRACT) {
      codes[c.contract]++;
      continue;
    }
    for (k = 0; k < 7; k++) seen_prefill[k] += c.family == CSA_FAMILY_CHAIN && c.prefill == prefills[k];
    long_chain += c.decode >= 130;
    batch += c.batch > 1;
    short_window += c.window < 128;
    no_bias += c.bias_rank < 0;
    rank1 += c.bias_rank == 1;
    full += c.capacity == final_total / 128;
    spare += c.capacity > final_total / 128;
    sinks[c.sink]++;
    near16 += c.family == CSA_FAMILY_STATE && c.start >= 65000 && c.start <= 65536;
    near20 += c.family == CSA_FAMILY_STATE && c.start >= 1048000;
  }
  for (i = 0; i < CSA_FAMILY_COUNT; i++) cr_expect(fmt[0][i] && fmt[1][i], "family %d lacks a cache format", i);
  for (i = 1; i < CSA_CONTRACT_COUNT; i++)
    cr_expect(codes[i] > 0 || !csa_case_contract_applies(i, CSA128_RATIO), "no contract case for %s",
              csa_contract_name(i));
  for (k = 0; k < 7; k++) cr_expect(seen_prefill[k] > 0, "no chain with prefill %lld", prefills[k]);
  cr_expect(long_chain >= 10 && batch && short_window && no_bias && rank1 && full && spare && near16 && near20);
  for (i = 0; i < CSA_SINK_COUNT; i++) cr_expect(sinks[i] > 0);
  for (i = 0; i < CSA_FAMILY_COUNT; i++) cr_expect(fam[i] > 0, "no %s case", cases_csa_family_name((csa_family)i));
  printf("csa128 gate suite: %d specs: chain %d, state %d, contract %d, tiles %d; %d chains of >= 130 decode steps\n",
         s.n, fam[0], fam[1], fam[2], fam[3], long_chain);
  spec_set_free(&s);
}

/* ------------------------------------------------------------- tensors */

typedef csa_step_tensors step_tensors;

static int step_make(const csa_case *c, int step, step_tensors *t, char *err, size_t len) {
  int rc = cases_csa_materialize(c, step, t->in, &t->n_in, t->out, &t->n_out, &t->attrs, err, len);
  csa_step_bind(t);
  return rc;
}

Test(csa128_tensors, materialize_is_deterministic_and_threads_the_past) {
  static const char *specs[] = {
      "family=csa128.state op=CompressedSparseAttention ratio=128 cache=fp8 b=2 heads=2 window=100 start=65530 "
      "prefill=7 decode=2 cap=513 bias=2x1x1x641 sink=rand scale=0x1p-4 seed=11",
      "family=csa128.chain op=CompressedSparseAttention ratio=128 cache=f32 b=1 heads=1 window=128 start=0 "
      "prefill=130 decode=1 cap=1 bias=[] sink=zero scale=none seed=5",
  };
  size_t k;
  for (k = 0; k < sizeof specs / sizeof specs[0]; k++) {
    csa_case c = parse_or_die(specs[k]);
    step_tensors a, b, n;
    char err[256];
    int i;
    cr_assert_eq(step_make(&c, 0, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(step_make(&c, 0, &b, err, sizeof err), 0, "%s", err);
    for (i = 0; i < CSA_INPUT_COUNT; i++) cr_assert(csa_tensors_equal(&a.in[i], &b.in[i]), "input %d differs", i);
    cr_assert_eq(step_make(&c, 1, &n, err, sizeof err), 0, "%s", err);
    /* Step 1: pasts are left to the harness, shaped like step 0's presents. */
    cr_assert_null(n.in[CSA_IN_PAST_COMPRESSED_KV].data);
    cr_assert_null(n.in[CSA_IN_PAST_CARRY].data);
    cr_assert_eq(n.in[CSA_IN_PAST_COMPRESSED_KV].shape[1], a.out[CSA_OUT_PRESENT_COMPRESSED_KV].shape[1]);
    cr_assert_eq(n.in[CSA_IN_PAST_COMPRESSED_KV].dt, a.out[CSA_OUT_PRESENT_COMPRESSED_KV].dt);
    /* The kv stream is per position: step 1's window is step 0's shifted by one. */
    {
      const tensor *k0 = &a.in[CSA_IN_CURRENT_KV], *k1 = &n.in[CSA_IN_CURRENT_KV];
      long long L0 = k0->shape[1], L1 = k1->shape[1], bb;
      cr_assert(L1 == L0 || L1 == L0 + 1);
      for (bb = 0; bb < k0->shape[0]; bb++)
        cr_assert(!memcmp((const float *)k1->data + (bb * L1 + L1 - 2) * CSA_HEAD_DIM,
                          (const float *)k0->data + (bb * L0 + L0 - 1) * CSA_HEAD_DIM, CSA_HEAD_DIM * sizeof(float)),
                  "token total-1 of step 0 is not token total-2 of step 1");
    }
    cases_csa_release(a.in, a.out);
    cases_csa_release(b.in, b.out);
    cases_csa_release(n.in, n.out);
  }
}

Test(csa128_tensors, synthetic_past_is_valid_and_format_independent) {
  const char *f32 = "family=csa128.state op=CompressedSparseAttention ratio=128 cache=f32 b=1 heads=1 window=128 "
                    "start=300 prefill=1 decode=1 cap=3 bias=none sink=zero scale=none seed=4";
  const char *fp8 = "family=csa128.state op=CompressedSparseAttention ratio=128 cache=fp8 b=1 heads=1 window=128 "
                    "start=300 prefill=1 decode=1 cap=3 bias=none sink=zero scale=none seed=4";
  csa_case a = parse_or_die(f32), b = parse_or_die(fp8);
  step_tensors ta, tb;
  char err[256];
  long long k;
  int d, j;
  cr_assert_eq(step_make(&a, 0, &ta, err, sizeof err), 0, "%s", err);
  cr_assert_eq(step_make(&b, 0, &tb, err, sizeof err), 0, "%s", err);
  for (k = 0; k < 3; k++) {
    const float *x = (const float *)ta.in[CSA_IN_PAST_COMPRESSED_KV].data + k * CSA_HEAD_DIM;
    const unsigned char *r = (const unsigned char *)tb.in[CSA_IN_PAST_COMPRESSED_KV].data + k * CSA_FP8_RECORD_BYTES;
    for (d = 0; d < CSA_HEAD_DIM; d++) {
      float y = 0.0f;
      if (k < 2 && d < CSA_NOPE_DIM)
        y = nx_e4m3_decode(r[65 * (d / 64) + 1 + d % 64]) * nx_ue8m0_decode(r[65 * (d / 64)]);
      else if (k < 2)
        y = nx_bf16_to_f32((nx_u16)(r[455 + 2 * (d - 448)] | r[456 + 2 * (d - 448)] << 8));
      cr_assert_eq(nx_f32_bits(x[d]), nx_f32_bits(y), "record %lld dim %d: f32 %a, fp8 view %a", k, d, (double)x[d],
                   (double)y);
    }
  }
  /* Carry: slots below 300 % 128 = 44 are live, the rest (+0, -inf). */
  for (j = 0; j < CSA128_RATIO; j++) {
    const float *row = (const float *)ta.in[CSA_IN_PAST_CARRY].data;
    uint32_t score = nx_f32_bits(row[(2 * j + 1) * CSA_HEAD_DIM]);
    cr_assert(j < 44 ? score != 0xff800000u : score == 0xff800000u, "slot %d score %08x", j, score);
  }
  cases_csa_release(ta.in, ta.out);
  cases_csa_release(tb.in, tb.out);
}

Test(csa128_tensors, budget_refusal) {
  const char *big = "family=csa128.state op=CompressedSparseAttention ratio=128 cache=f32 b=64 heads=1 window=128 "
                    "start=1048574 prefill=1 decode=1 cap=8192 bias=none sink=zero scale=none seed=1";
  csa_case c = parse_or_die(big);
  step_tensors t;
  char err[256] = "";
  int i;
  cr_assert_eq(step_make(&c, 0, &t, err, sizeof err), -1);
  cr_assert(strstr(err, "over the budget of"), "%s", err);
  for (i = 0; i < CSA_INPUT_COUNT; i++) cr_assert_null(t.in[i].data);
  c.batch = 1; /* small, but over a tiny budget */
  c.budget_bytes = 1024;
  cr_assert_eq(step_make(&c, 0, &t, err, sizeof err), -1);
  cr_assert(strstr(err, "case needs"), "%s", err);
}

/* ------------------------------------------------------------ the oracle */

/*
** Runs every step of c through the oracle, threading presents into pasts.
** Returns the failing step's error in *err (cls OP_OK when all passed).
*/
static void run_chain(const char *spec, const csa_case *c, op_error *e, int *failed_step) {
  tensor past_cache = {0}, past_carry = {0};
  int step, steps = cases_csa_steps(c);
  op_error_clear(e);
  *failed_step = -1;
  for (step = 0; step < steps; step++) {
    step_tensors t;
    char err[256];
    int rc;
    cr_assert_eq(step_make(c, step, &t, err, sizeof err), 0, "%s\n  %s", err, spec);
    if (step > 0) { /* the harness's part: move the previous presents in */
      cr_assert_eq(t.in[CSA_IN_PAST_COMPRESSED_KV].dt, past_cache.dt);
      cr_assert(!memcmp(t.in[CSA_IN_PAST_COMPRESSED_KV].shape, past_cache.shape, sizeof past_cache.shape));
      cr_assert(!memcmp(t.in[CSA_IN_PAST_CARRY].shape, past_carry.shape, sizeof past_carry.shape));
      t.in[CSA_IN_PAST_COMPRESSED_KV].data = past_cache.data;
      t.in[CSA_IN_PAST_CARRY].data = past_carry.data;
    }
    rc = oracle_csa128_run(&t.attrs, t.in_p, t.n_in, t.out_p, t.n_out, NULL, e);
    past_cache = t.out[CSA_OUT_PRESENT_COMPRESSED_KV];
    past_carry = t.out[CSA_OUT_PRESENT_CARRY];
    t.out[CSA_OUT_PRESENT_COMPRESSED_KV].data = t.out[CSA_OUT_PRESENT_CARRY].data = NULL;
    cases_csa_release(t.in, t.out);
    if (rc) {
      *failed_step = step;
      break;
    }
  }
  tensor_free(&past_cache);
  tensor_free(&past_carry);
}

static void run_family(csa_family family) {
  spec_set s = generated_suite();
  double t0 = csa_test_now_s(), worst = 0.0;
  int i, n = 0, steps = 0;
  const char *worst_spec = "";
  for (i = 0; i < s.n; i++) {
    csa_case c = parse_or_die(s.v[i]);
    op_error e;
    int step, code;
    double t1 = csa_test_now_s();
    if (c.family != family) continue;
    n++;
    steps += cases_csa_steps(&c);
    run_chain(s.v[i], &c, &e, &step);
    if (cases_csa_expected(&c, &code)) {
      cr_assert_eq(e.cls, OP_ERR_CONTRACT, "expected a contract rejection (%s), got class %d\n  %s",
                   csa_contract_name(code), e.cls, s.v[i]);
      cr_assert_eq(e.rule, code, "expected %s, got %s (%s)\n  %s", csa_contract_name(code), csa_contract_name(e.rule),
                   e.message, s.v[i]);
    } else {
      cr_assert_eq(e.cls, OP_OK, "step %d failed: %s (%s)\n  %s", step, csa_contract_name(e.rule), e.message, s.v[i]);
    }
    if (csa_test_now_s() - t1 > worst) worst = csa_test_now_s() - t1, worst_spec = s.v[i];
  }
  printf("csa128 oracle: %s: %d cases, %d steps, %.2f s (slowest case %.2f s: %s)\n", cases_csa_family_name(family), n,
         steps, csa_test_now_s() - t0, worst, worst_spec);
  fflush(stdout);
  spec_set_free(&s);
}

Test(csa128_oracle, chain_family_runs_every_step, .timeout = 600) { run_family(CSA_FAMILY_CHAIN); }
Test(csa128_oracle, state_family_runs_every_step, .timeout = 600) { run_family(CSA_FAMILY_STATE); }
Test(csa128_oracle, contract_family_is_rejected_with_its_code, .timeout = 600) { run_family(CSA_FAMILY_CONTRACT); }
Test(csa128_oracle, tiles_family_runs_every_step, .timeout = 600) { run_family(CSA_FAMILY_TILES); }

/* --------------------------------------------------------- the corpus */

Test(csa128_corpus, gate_suite_holds_the_generated_lines) {
  spec_set gen = generated_suite();
  csa_test_expect_corpus(&gen, "gate", "family=csa128.", "ratio-128");
  spec_set_free(&gen);
}

Test(csa128_corpus, nightly_suite_holds_the_generated_lines) {
  spec_set gen = csa_test_generated_nightly(cases_csa_write_nightly, "ratio-128");
  csa_test_expect_corpus(&gen, "nightly", "family=csa128.", "ratio-128");
  spec_set_free(&gen);
}

/*
** test_csa4_oracle.c: the CSA ratio-4 gate cases through the oracle.
**
** The oracle is the judge: every csa4.contract case is rejected with its
** code, input and axis; every step of every chain, state, ties and tiles
** case is accepted (so the materialized shapes meet the contract), with
** each step's presents threaded back in as the next step's pasts; the ties
** cases tie (the oracle's IndexScoring payload shows equal scores, and its
** selection follows the total order with the record tiebreak); and a chain
** of decode steps ends where one prefill of the same tokens ends.  Each
** family prints its oracle time.  Failures print the spec.
*/
#include "cases/csa4_cases.h"
#include "csa4_test_util.h"
#include "oracle/numerics/numerics.h"
#include "oracle/numerics/nx_csa.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inputs 6, 7, 17, 18 take outputs 1, 2, 3, 4 of the step before. */
static const int threaded[4][2] = {{CSA_IN_PAST_COMPRESSED_KV, CSA_OUT_PRESENT_COMPRESSED_KV},
                                   {CSA_IN_PAST_CARRY, CSA_OUT_PRESENT_CARRY},
                                   {CSA_IN_PAST_INDEX_KEY, CSA_OUT_PRESENT_INDEX_KEY},
                                   {CSA_IN_PAST_INDEX_CARRY, CSA_OUT_PRESENT_INDEX_CARRY}};

/* Called after every successful step with its tensors and the trace it ran with. */
typedef void (*step_check_fn)(const csa4_case *c, int step, const csa4_step_tensors *t, const csa4_trace *trace,
                              void *ctx);

/* The last step's outputs, kept when the caller asks (the chain comparison). */
typedef struct chain_end {
  tensor out[CSA_OUTPUT_MAX];
} chain_end;

/*
** Runs every step of c through the oracle, threading presents into pasts.
** With check, each step also fills index_scores and selection for it.
** The failing step's error in *e (OP_OK when all passed); *failed_step.
*/
static void run_chain(const char *spec, const csa4_case *c, step_check_fn check, void *ctx, chain_end *end, op_error *e,
                      int *failed_step) {
  tensor past[4] = {{0}};
  int step, steps = cases_csa4_steps(c), j;
  op_error_clear(e);
  *failed_step = -1;
  for (step = 0; step < steps; step++) {
    csa4_step_tensors t;
    csa4_trace trace = {0};
    char err[256];
    int rc;
    cr_assert_eq(csa4_step_make(c, step, &t, err, sizeof err), 0, "%s\n  %s", err, spec);
    if (step > 0) /* the harness's part: move the previous presents in */
      for (j = 0; j < 4; j++) {
        tensor *in = &t.in[threaded[j][0]];
        cr_assert(in->dt == past[j].dt && !memcmp(in->shape, past[j].shape, sizeof in->shape), "input %d\n  %s",
                  threaded[j][0], spec);
        in->data = past[j].data;
        past[j].data = NULL;
      }
    if (check) {
      long long rows = t.in[CSA_IN_QUERY].shape[0] * t.in[CSA_IN_QUERY].shape[1];
      trace.index_scores = calloc((size_t)(rows * c->capacity + 1), sizeof(float));
      trace.selection = calloc((size_t)(rows * c->topk), sizeof(int));
    }
    rc = oracle_csa4_run(&t.attrs, t.in_p, t.n_in, t.out_p, t.n_out, check ? &trace : NULL, e);
    if (!rc && check) check(c, step, &t, &trace, ctx);
    free(trace.index_scores);
    free(trace.selection);
    for (j = 0; j < 4; j++) {
      past[j] = t.out[threaded[j][1]];
      t.out[threaded[j][1]].data = NULL;
    }
    if (end && step == steps - 1) {
      memcpy(end->out, t.out, sizeof end->out);
      memset(t.out, 0, sizeof t.out);
      for (j = 0; j < 4; j++) end->out[threaded[j][1]] = past[j], past[j].data = NULL;
    }
    cases_csa4_release(t.in, t.out);
    if (rc) {
      *failed_step = step;
      break;
    }
  }
  for (j = 0; j < 4; j++) tensor_free(&past[j]);
}

static void run_family(csa4_family family, step_check_fn check, void *ctx) {
  spec_set s = csa4_generated_suite();
  double t0 = csa_test_now_s(), worst = 0.0;
  int i, n = 0, steps = 0;
  const char *worst_spec = "";
  for (i = 0; i < s.n; i++) {
    csa4_case c = csa4_parse_or_die(s.v[i]);
    op_error e;
    int step, code, input, axis;
    double t1 = csa_test_now_s();
    if (c.family != family) continue;
    n++;
    steps += cases_csa4_steps(&c);
    run_chain(s.v[i], &c, check, ctx, NULL, &e, &step);
    if (cases_csa4_expected(&c, &code)) {
      cases_csa4_expected_site(&c, &input, &axis);
      cr_assert_eq(e.cls, OP_ERR_CONTRACT, "expected a contract rejection (%s), got class %d\n  %s",
                   csa_contract_name(code), e.cls, s.v[i]);
      cr_assert(e.rule == code && e.input == input && e.axis == axis,
                "expected %s at input %d axis %d, got %s at input %d axis %d (%s)\n  %s", csa_contract_name(code),
                input, axis, csa_contract_name(e.rule), e.input, e.axis, e.message, s.v[i]);
    } else {
      cr_assert_eq(e.cls, OP_OK, "step %d failed: %s (%s)\n  %s", step, csa_contract_name(e.rule), e.message, s.v[i]);
    }
    if (csa_test_now_s() - t1 > worst) worst = csa_test_now_s() - t1, worst_spec = s.v[i];
  }
  printf("csa4 oracle: %s: %d cases, %d steps, %.2f s (slowest case %.2f s: %s)\n", cases_csa4_family_name(family), n,
         steps, csa_test_now_s() - t0, worst, worst_spec);
  fflush(stdout);
  spec_set_free(&s);
}

Test(csa4_oracle, contract_family_is_rejected_with_its_code_input_and_axis, .timeout = 600) {
  run_family(CSA4_FAMILY_CONTRACT, NULL, NULL);
}
Test(csa4_oracle, chain_family_runs_every_step, .timeout = 600) { run_family(CSA4_FAMILY_CHAIN, NULL, NULL); }
Test(csa4_oracle, state_family_runs_every_step, .timeout = 600) { run_family(CSA4_FAMILY_STATE, NULL, NULL); }
Test(csa4_oracle, tiles_family_runs_every_step, .timeout = 600) { run_family(CSA4_FAMILY_TILES, NULL, NULL); }

/* ------------------------------------------------------------ the ties */

/* Per tie mode: query rows, rows with records, rows whose every record scores +0, tied rows, deciding ties. */
typedef struct tie_count {
  long long rows[CSA4_TIE_COUNT], scored[CSA4_TIE_COUNT], all_zero[CSA4_TIE_COUNT];
  long long tied[CSA4_TIE_COUNT], deciding[CSA4_TIE_COUNT];
  long long case_tied; /* tied rows of the case being run */
} tie_count;

/*
** One step of a ties case: every row's selection is its causal records in
** nx_csa_rank_before order of its index_scores (so equal scores go by
** ascending record), cut at topk and padded with -1.  Counts the rows with
** two bit-equal scores, and those where a tie decides what is selected (one
** record of a tied pair selected, the other not).
*/
static void check_ties(const csa4_case *c, int step, const csa4_step_tensors *t, const csa4_trace *trace, void *ctx) {
  tie_count *n = ctx;
  long long S = t->in[CSA_IN_QUERY].shape[1], total = c->start + c->prefill + step, R = c->capacity, K = c->topk;
  long long b, s, r, q, k, *rank = calloc((size_t)R + 1, sizeof *rank);
  for (b = 0; b < c->batch; b++)
    for (s = 0; s < S; s++) {
      const float *score = trace->index_scores + (b * S + s) * R;
      const int *sel = trace->selection + (b * S + s) * K;
      long long pos = total - S + s, limit = (pos + 1) / CSA4_RATIO < R ? (pos + 1) / CSA4_RATIO : R;
      int tied = 0, decides = 0, zero = 1;
      for (r = 0; r < limit; r++) {
        zero &= nx_f32_bits(score[r]) == 0u;
        for (rank[r] = 0, q = 0; q < limit; q++) rank[r] += q != r && nx_csa_rank_before(score[q], q, score[r], r);
      }
      for (r = 0; r < limit; r++)
        if (rank[r] < K)
          cr_assert_eq(sel[rank[r]], r, "row (%lld, %lld) slot %lld holds %d, want record %lld", b, s, rank[r],
                       sel[rank[r]], r);
      for (k = limit < K ? limit : K; k < K; k++)
        cr_assert_eq(sel[k], -1, "row (%lld, %lld) slot %lld not padded", b, s, k);
      for (r = limit; r < R; r++)
        cr_assert(nx_csa_is_neg_inf(score[r]), "record %lld beyond the causal limit scored", r);
      for (r = 0; r < limit; r++)
        for (q = r + 1; q < limit; q++)
          if (nx_f32_bits(score[q]) == nx_f32_bits(score[r])) tied = 1, decides |= (rank[r] < K) != (rank[q] < K);
      n->rows[c->ties]++;
      n->scored[c->ties] += limit > 0;
      n->all_zero[c->ties] += limit > 0 && zero;
      n->tied[c->ties] += tied, n->case_tied += tied;
      n->deciding[c->ties] += decides;
    }
  free(rank);
}

/*
** Every ties case ties somewhere, every mode has ties that decide a
** selection, and relu and zero make every score of every row +0.
*/
Test(csa4_oracle, ties_family_ties_and_selects_in_total_order, .timeout = 600) {
  spec_set s = csa4_generated_suite();
  tie_count n;
  double t0 = csa_test_now_s();
  int i, cases = 0, m;
  memset(&n, 0, sizeof n);
  for (i = 0; i < s.n; i++) {
    csa4_case c = csa4_parse_or_die(s.v[i]);
    op_error e;
    int step;
    if (c.family != CSA4_FAMILY_TIES) continue;
    cases++;
    n.case_tied = 0;
    run_chain(s.v[i], &c, check_ties, &n, NULL, &e, &step);
    cr_assert_eq(e.cls, OP_OK, "step %d failed: %s (%s)\n  %s", step, csa_contract_name(e.rule), e.message, s.v[i]);
    cr_assert(n.case_tied > 0, "no row of this case has tied index scores\n  %s", s.v[i]);
  }
  printf("csa4 oracle: csa4.ties: %d cases, %.2f s\n", cases, csa_test_now_s() - t0);
  for (m = CSA4_TIE_RELU; m < CSA4_TIE_COUNT; m++) {
    printf("  ties=%-5s %4lld rows, %4lld with records, %4lld all +0, %4lld tied, %4lld where a tie decides the "
           "selection\n",
           cases_csa4_tie_name(m), n.rows[m], n.scored[m], n.all_zero[m], n.tied[m], n.deciding[m]);
    cr_expect(n.deciding[m] > 0, "ties=%s: no tie decides a selection", cases_csa4_tie_name(m));
    if (m == CSA4_TIE_RELU || m == CSA4_TIE_ZERO)
      cr_expect_eq(n.all_zero[m], n.scored[m], "ties=%s: a row scores other than +0", cases_csa4_tie_name(m));
  }
  spec_set_free(&s);
}

/* ----------------------------------------------------- chain threading */

/*
** A chain of decode steps ends where one prefill of the same tokens ends:
** the token streams are per position, so case (prefill P, decode D) and
** case (prefill P + D, decode 0) see the same tokens, and the harness's
** threading must carry exactly the state the operator carries inside one
** step.  Both presents (all four) and the last row of Y and of the
** selection agree bit for bit.  No bias: it is drawn per step.
*/
Test(csa4_oracle, decode_steps_end_where_one_prefill_ends, .timeout = 600) {
  static const char *specs[] = {
      "family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=2 iheads=4 topk=3 window=128 start=0 "
      "prefill=5 decode=14 cap=6 outputs=6 bias=none sink=rand scale=none seed=21",
      "family=csa4.chain op=CompressedSparseAttention ratio=4 b=1 heads=1 iheads=1 topk=512 window=6 start=0 "
      "prefill=1 decode=9 cap=3 outputs=6 bias=none sink=large scale=0x1p-4 seed=22",
      "family=csa4.state op=CompressedSparseAttention ratio=4 b=2 heads=1 iheads=2 topk=7 window=128 start=4094 "
      "prefill=1 decode=5 cap=1026 outputs=6 bias=none sink=zero scale=none seed=23",
  };
  size_t k;
  for (k = 0; k < sizeof specs / sizeof specs[0]; k++) {
    csa4_case steps = csa4_parse_or_die(specs[k]), once = steps;
    chain_end a = {{{0}}}, b = {{{0}}};
    op_error e;
    int failed, o;
    long long bb, last, H = steps.heads, IH = steps.index_heads, K = steps.topk;
    once.prefill += once.decode, once.decode = 0;
    run_chain(specs[k], &steps, NULL, NULL, &a, &e, &failed);
    cr_assert_eq(e.cls, OP_OK, "%s\n  %s", e.message, specs[k]);
    run_chain(specs[k], &once, NULL, NULL, &b, &e, &failed);
    cr_assert_eq(e.cls, OP_OK, "%s\n  %s", e.message, specs[k]);
    for (o = CSA_OUT_PRESENT_COMPRESSED_KV; o <= CSA_OUT_PRESENT_INDEX_CARRY; o++)
      cr_assert(csa_tensors_equal(&a.out[o], &b.out[o]), "output %d differs after the chain\n  %s", o, specs[k]);
    last = once.prefill - 1;
    for (bb = 0; bb < steps.batch; bb++) {
      const float *ya = (const float *)a.out[CSA_OUT_Y].data + bb * H * CSA_HEAD_DIM;
      const float *yb = (const float *)b.out[CSA_OUT_Y].data + (bb * once.prefill + last) * H * CSA_HEAD_DIM;
      long long h;
      cr_assert(!memcmp(ya, yb, (size_t)(H * CSA_HEAD_DIM) * sizeof(float)), "Y of the last token differs\n  %s",
                specs[k]);
      for (h = 0; h < IH; h++)
        cr_assert(!memcmp((const int *)a.out[CSA_OUT_SELECTED].data + (bb * IH + h) * K,
                          (const int *)b.out[CSA_OUT_SELECTED].data + ((bb * IH + h) * once.prefill + last) * K,
                          (size_t)K * sizeof(int)),
                  "the last token's selection differs\n  %s", specs[k]);
    }
    for (o = 0; o < CSA_OUTPUT_MAX; o++) tensor_free(&a.out[o]), tensor_free(&b.out[o]);
  }
}

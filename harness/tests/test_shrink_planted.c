/*
** test_shrink_planted.c: `bitgate shrink` on a planted bug, without a GPU
** (issue "Corpus and goldens", item 5).
**
** The bug: this binary is linked with -Wl,--wrap=csa_attend_heads, so every
** call the oracle makes comes here; while `planted` is set, head 0's output
** row at absolute positions 37 mod 64 gets bit 0 of element 0 flipped (in Y
** and in the SparseSinkSoftmaxAttention trace), a one-ulp error a small
** case still meets once its chain reaches position 37.
**
** The probe stands in for the eager lane: it runs the ratio-4 chain twice
** through the real chain hooks (run_csa4_ratio(): materialize, the oracle
** with its stage payloads, the threading map and the compare order), once
** as the reference and once as the "device" with the bug planted, each
** threading its own presents, and compares them step by step in pipeline
** order: the first difference becomes an eager mismatch row, and its
** signature is what shrink keeps.
*/
#include "cases/case_spec.h"
#include "cases/csa4_cases.h"
#include "harness/case_lookup.h"
#include "harness/diff.h"
#include "harness/frozen_oracle.h"
#include "harness/run_csa4.h"
#include "harness/run_csa_chain.h"
#include "harness/shrink.h"
#include "oracle/csa_attention.h"
#include "oracle/numerics/nx_base.h"
#include "oracle/oracle_version.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int planted;

void __real_csa_attend_heads(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b, long long s,
                             const float *const *values, long long count, float *trace_scores,
                             float *trace_output);
void __wrap_csa_attend_heads(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b, long long s,
                             const float *const *values, long long count, float *trace_scores,
                             float *trace_output);

void __wrap_csa_attend_heads(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b, long long s,
                             const float *const *values, long long count, float *trace_scores,
                             float *trace_output) {
  long long row = (b * d->seq + s) * d->heads; /* head 0 */
  __real_csa_attend_heads(d, in, out, b, s, values, count, trace_scores, trace_output);
  if (!planted || csa_window_of(d, s).position % 64 != 37) return;
  {
    float *y = (float *)out[CSA_OUT_Y]->data + row * CSA_HEAD_DIM;
    y[0] = nx_f32_from_bits(nx_f32_bits(y[0]) ^ 1u);
    if (trace_output) trace_output[row * CSA_HEAD_DIM] = y[0];
  }
}

/* ---- the two-chain probe ------------------------------------------------ */

typedef struct chain {
  tensor past[CSA_CHAIN_MAX_THREADS];
} chain;

/* Materializes step into s, plugs the chain's past (step > 0) and runs the oracle with stages. */
static int chain_step(const csa_chain_ratio *r, const void *c, int step, chain *ch, csa_step *s, int plant) {
  char err[512];
  int j;
  memset(s, 0, sizeof *s);
  if (r->materialize(c, step, s, err, sizeof err) != 0) return -1;
  for (j = 0; step > 0 && j < r->n_threads; j++) s->in[r->thread_in[j]].data = ch->past[j].data;
  op_error_clear(&s->err);
  planted = plant;
  r->oracle(s, 1);
  planted = 0;
  return 0;
}

/* Threads the step's presents into the chain's past (owned copies) and frees the step. */
static void chain_next(const csa_chain_ratio *r, int step, chain *ch, csa_step *s) {
  int j;
  for (j = 0; j < r->n_threads; j++) {
    tensor *p = &ch->past[j], *o = &s->out[r->thread_out[j]];
    if (step > 0) s->in[r->thread_in[j]].data = NULL; /* it was ch->past's */
    tensor_free(p);
    *p = *o;
    p->data = NULL;
    cr_assert_eq(tensor_alloc(p), 0);
    memcpy(p->data, o->data, tensor_bytes(o));
  }
  for (j = 0; j < CSA_CHAIN_MAX_STAGES; j++) tensor_free(&s->stage[j]);
  r->release(s);
}

/* The first difference of a step in the ratio's compare order; 1 and a row when there is one. */
static int compare_step(const csa_chain_ratio *r, const csa_step *ref, const csa_step *dev, int step,
                        case_report *rep) {
  tensor_diff d;
  int e;
  if (ref->rc != 0 || dev->rc != 0) {
    if (ref->rc != 0 && dev->rc != 0 && op_error_same(&ref->err, &dev->err)) return 0;
    case_report_add(rep, LANE_EAGER, step, "error_parity");
    return rep->failed = 1;
  }
  for (e = 0; e < r->n_compare; e++) {
    int o = r->compare_order[e], st = o < 0 ? r->dev_stages[-1 - o].oracle_stage : -1;
    const tensor *a = o < 0 ? &ref->stage[st] : &ref->out[o], *b = o < 0 ? &dev->stage[st] : &dev->out[o];
    if (o >= ref->n_out || a->dt == DTYPE_NONE || !tensor_diff_run(a, b, &d)) continue;
    result_row_set_mismatch(case_report_add(rep, LANE_EAGER, step, "mismatch"), o < 0 ? r->stage_names[st] : r->output_names[o],
                            &d);
    return rep->failed = 1;
  }
  return 0;
}

static int probes;

static int mutant_probe(void *ctx, const char *id, const char *spec, lane_mask lanes, shrink_sig *out) {
  static case_report rep;
  const csa_chain_ratio *r = run_csa4_ratio();
  chain ref, dev;
  csa4_case c;
  char err[512];
  int step, j, differ = 0;
  (void)ctx, (void)id, (void)lanes;
  probes++;
  memset(&rep, 0, sizeof rep);
  memset(&ref, 0, sizeof ref);
  memset(&dev, 0, sizeof dev);
  cr_assert_eq(cases_csa4_parse(spec, &c, err, sizeof err), 0, "%s: %s", spec, err);
  for (step = 0; step < cases_csa4_steps(&c) && !differ; step++) {
    csa_step a, b;
    cr_assert_eq(chain_step(r, &c, step, &ref, &a, 0), 0);
    cr_assert_eq(chain_step(r, &c, step, &dev, &b, 1), 0);
    differ = compare_step(r, &a, &b, step, &rep);
    chain_next(r, step, &ref, &a);
    chain_next(r, step, &dev, &b);
  }
  for (j = 0; j < CSA_CHAIN_MAX_THREADS; j++) tensor_free(&ref.past[j]), tensor_free(&dev.past[j]);
  shrink_sig_of_report(&rep, out);
  return 0;
}

/* ---- the test ----------------------------------------------------------- */

static char tmp[] = "/tmp/bitgate-shrink-XXXXXXXX";

static void write_file(const char *name, const char *text) {
  char path[512];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  cr_assert(f = fopen(path, "w"), "%s", path);
  fputs(text, f);
  fclose(f);
}

/* A gate corpus of one small case, its digests pinned as `bitgate golden pin` would. */
static void make_corpus(void) {
  static const char small[] = "family=csa4.chain op=CompressedSparseAttention ratio=4 b=1 heads=1 iheads=1 topk=1 "
                              "window=1 start=0 prefill=1 decode=0 cap=0 outputs=5 bias=none sink=zero scale=none seed=1";
  static case_report rep;
  char path[512], text[4200], err[512], id[CASE_ID_MAX];
  frozen_oracle f;
  runner_env env;
  cr_assert(mkdtemp(tmp), "mkdtemp");
  snprintf(text, sizeof text, "%s\n", small);
  write_file("gate.suite", text);
  memset(&env, 0, sizeof env);
  env.lanes = LANE_BIT(LANE_ORACLE);
  frozen_oracle_open_pin(&f);
  frozen_oracle_attach(&f, &env);
  cr_assert_eq(case_id_from_spec(small, id, sizeof id), 0);
  case_run(&env, id, small, &rep);
  cr_assert_eq(rep.failed, 0);
  f.observed.oracle_version = ORACLE_VERSION, f.observed.numerics_version = NX_NUMERICS_VERSION;
  snprintf(f.observed.suite, sizeof f.observed.suite, "gate");
  golden_digests_path(tmp, "gate", path, sizeof path);
  cr_assert_eq(golden_digests_write(&f.observed, path, err, sizeof err), 0, "%s", err);
  frozen_oracle_close(&f);
}

static void remove_corpus(void) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  cr_expect_eq(system(cmd), 0);
}

/* The shrunk case resolves as a gate case of the corpus, and the oracle lane holds it to its new digests. */
static void expect_in_gate(const shrink_result *r) {
  static case_report rep;
  char spec[4096], id[CASE_ID_MAX], where[256], err[512];
  frozen_oracle f;
  runner_env env;
  cr_assert_eq(case_lookup(r->id, tmp, NULL, spec, sizeof spec, id, sizeof id, where, sizeof where, err, sizeof err), 0,
               "%s: %s", r->id, err);
  cr_expect_str_eq(where, "suite gate");
  cr_expect_str_eq(spec, r->spec);
  cr_assert_eq(frozen_oracle_open(&f, tmp, "gate", err, sizeof err), 0, "%s", err);
  memset(&env, 0, sizeof env);
  env.lanes = LANE_BIT(LANE_ORACLE);
  frozen_oracle_attach(&f, &env);
  case_run(&env, r->id, r->spec, &rep);
  cr_expect_eq(frozen_oracle_check_case(&f, r->id, &rep), 0, "%s: %s", r->id, rep.n ? rep.rows[rep.n - 1].message : "");
  frozen_oracle_close(&f);
}

Test(shrink_planted, batch4_chain300_shrinks_10x_same_signature, .timeout = 120) {
  static const char original[] =
      "family=csa4.chain op=CompressedSparseAttention ratio=4 b=4 heads=2 iheads=2 topk=16 window=128 start=0 "
      "prefill=8 decode=299 cap=80 outputs=6 bias=4x1x1x144 sink=large scale=none seed=7";
  static shrink_result r;
  shrink_opts o = {200, LANE_ALL, stdout};
  char err[512], note[600], text[4096];
  FILE *f;
  cr_assert_eq(shrink_run(original, mutant_probe, NULL, &o, &r, err, sizeof err), SHRINK_OK, "%s", err);
  cr_assert(r.sig.failed, "the planted bug makes the original fail");
  cr_expect_str_eq(r.sig.lane, "eager");
  cr_expect_str_eq(r.sig.tensor, "Y");
  cr_expect_str_eq(r.sig.kind, "value");
  cr_assert_geq(r.size_before, 10 * r.size_after, "%llu -> %llu bytes: %s", r.size_before, r.size_after, r.spec);
  cr_expect(strstr(r.spec, " b=1 ") && strstr(r.spec, " mag=24 "), "%s", r.spec);
  { /* the result fails the same way on its own */
    shrink_sig again;
    mutant_probe(NULL, r.id, r.spec, LANE_ALL, &again);
    cr_expect(shrink_sig_equal(&again, &r.sig));
  }
  printf("shrunk: %llu -> %llu bytes (%.0fx) in %d probes: %s\n", r.size_before, r.size_after,
         (double)r.size_before / (double)r.size_after, probes, r.spec);
  make_corpus();
  cr_assert_eq(shrink_regression_append(tmp, "csa4.chain.29884a0e", &r, err, sizeof err), 0, "%s", err);
  cr_expect_eq(shrink_regression_append(tmp, "csa4.chain.29884a0e", &r, err, sizeof err), 1, "a second append is refused");
  cr_assert_eq(shrink_digests_add(tmp, r.id, r.spec, "csa4.chain.29884a0e", note, sizeof note, err, sizeof err), 0,
               "%s", err);
  snprintf(text, sizeof text, "%s/regressions", tmp);
  cr_assert(f = fopen(text, "r"));
  cr_assert(fgets(text, sizeof text, f) && text[0] == '#' && strstr(text, "eager/Y/Y/value"), "%s", text);
  cr_assert(fgets(text, sizeof text, f) && !strncmp(text, r.spec, strlen(r.spec)), "%s", text);
  fclose(f);
  expect_in_gate(&r);
  remove_corpus();
}

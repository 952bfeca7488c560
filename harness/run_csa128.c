/*
** run_csa128.c: the ratio-128 CSA lanes (see run_csa128.h): the ratio's
** descriptor for the shared chain driver (run_csa_chain.h).
**
** Ratio 128 threads present_compressed_kv and present_compression_carry
** (outputs 1, 2) into past_compressed_kv and past_compression_carry (inputs
** 6, 7).  The oracle exposes three stage payloads (csa_trace):
** CompressionUpdate, CandidateAssembly and SparseSinkSoftmaxAttention; the
** device exposes none, so its steps compare outputs only; a differing step
** is localised to the compressor or the attention kernel (loc below).
*/
#include "harness/run_csa128.h"
#include "cases/csa128_cases.h"
#include "device/csa128_device.h"
#include "harness/run_csa_chain.h"
#include "oracle/csa.h"

#include <stdio.h>
#include <string.h>

static const char *const output_names[CSA_OUTPUT_MAX] = {"Y", "present_compressed_kv", "present_compression_carry"};
static const char *const stage_names[] = {"CompressionUpdate", "CandidateAssembly", "SparseSinkSoftmaxAttention"};

static int csa128_materialize(const void *c, int step, csa_step *s, char *err, size_t len) {
  return cases_csa_materialize(c, step, s->in, &s->n_in, s->out, &s->n_out, &s->attrs, err, len);
}

static void csa128_release(csa_step *s) { cases_csa_release(s->in, s->out); }

static int csa128_expected(const void *c, int *code) { return cases_csa_expected(c, code); }

/*
** The decode step to capture: the first from which every later step has
** the same input shapes, or the last step when shapes never settle; -1 for a
** chain without decode steps.  Decode steps have S = 1 and current_kv holds
** min(window, total) rows (cases/csa128_cases.h), so shapes settle once total
** reaches the window.
*/
static int csa128_capture_step(const void *cv, int steps) {
  const csa_case *c = cv;
  long long first = c->window - (c->start + c->prefill);
  if (steps < 2) return -1;
  if (first < 1) first = 1;
  return first < steps ? (int)first : steps - 1;
}

/*
** The oracle's step; with stages, also the stage boundaries it exposes
** (csa_trace), allocated with the shapes csa_validate resolves (all three
** or none); CompressionUpdate is cut to the records the step emits.
*/
static int csa128_oracle(csa_step *s, int stages) {
  const tensor *in[CSA_INPUT_COUNT], *cout[CSA_OUTPUT_MAX];
  tensor *out[CSA_OUTPUT_MAX];
  csa_trace trace, *tr = NULL;
  csa_dims d;
  op_error verr;
  int i;
  for (i = 0; i < s->n_in; i++) in[i] = s->in[i].dt == DTYPE_NONE ? NULL : &s->in[i];
  for (i = 0; i < s->n_out; i++) cout[i] = out[i] = &s->out[i];
  if (stages && csa_validate(&s->attrs, in, s->n_in, cout, s->n_out, &d, &verr) == 0) {
    if (csa_chain_payload_alloc(&s->stage[0], DTYPE_F32, 3, d.batch, d.present_capacity, CSA_HEAD_DIM, 0) == 0 &&
        csa_chain_payload_alloc(&s->stage[1], DTYPE_F32, 4, d.batch, d.seq, d.heads,
                                CSA_DENSE_WINDOW + d.present_capacity) == 0 &&
        csa_chain_payload_alloc(&s->stage[2], DTYPE_F32, 4, d.batch, d.seq, d.heads, CSA_HEAD_DIM) == 0) {
      trace.records = s->stage[0].data, trace.scores = s->stage[1].data, trace.output = s->stage[2].data;
      tr = &trace;
    } else {
      for (i = 0; i < 3; i++) tensor_free(&s->stage[i]), memset(&s->stage[i], 0, sizeof s->stage[i]);
    }
  }
  s->rc = oracle_csa128_run(&s->attrs, in, s->n_in, out, s->n_out, tr, &s->err);
  if (tr && s->rc == 0 && csa_validate_cursor(&d, in[CSA_IN_TOTAL_SEQ], &verr) == 0)
    csa_chain_payload_keep_rows(&s->stage[0], d.past_records, d.present_records);
  return s->rc;
}

static int dev_create(device_runtime *rt, const csa_attrs *a, device_variant v, void **k, char *err, size_t len) {
  device_csa128 *p = NULL;
  int rc = device_csa128_create_variant(rt, a, v, &p, err, len);
  *k = p;
  return rc;
}

static void dev_destroy(void *k) { device_csa128_destroy(k); }

static int dev_execute(void *k, const device_tensor *const *in, int n_in, device_tensor *const *out, int n_out,
                       op_error *err) {
  return device_csa128_execute(k, in, n_in, out, n_out, err);
}

static int dev_capture_ready(const void *k, char *why, size_t len) { return device_csa128_capture_ready(k, why, len); }

/*
** Stage localisation: the compressor alone, then the attention alone on the
** oracle's present_compressed_kv.  The device exposes no candidate scores,
** so a difference in the attention kernel is named SparseSinkSoftmaxAttention.
*/
static const csa_chain_loc_step loc[] = {
    {"CompressionUpdate", 1u << CSA128_PART_STATE | 1u << CSA128_PART_COMPRESS, {0}, 0,
     {CSA_OUT_PRESENT_COMPRESSED_KV, CSA_OUT_PRESENT_CARRY}, 2},
    {"SparseSinkSoftmaxAttention", 1u << CSA128_PART_ATTENTION, {CSA_OUT_PRESENT_COMPRESSED_KV}, 1, {CSA_OUT_Y}, 1},
};

static int dev_execute_parts(void *k, unsigned parts, const device_tensor *const *in, int n_in,
                             device_tensor *const *out, int n_out, op_error *err) {
  return device_csa128_execute_parts(k, parts, in, n_in, out, n_out, err);
}

static int dev_capture_parts(void *k, unsigned parts, const device_tensor *const *in, int n_in,
                             device_tensor *const *out, int n_out, device_graph **graph, op_error *err) {
  return device_csa128_capture_parts(k, parts, in, n_in, out, n_out, graph, err);
}

static const csa_chain_ratio csa128_ratio = {
    .output_names = output_names,
    .n_threads = 2,
    .thread_out = {CSA_OUT_PRESENT_COMPRESSED_KV, CSA_OUT_PRESENT_CARRY},
    .thread_in = {CSA_IN_PAST_COMPRESSED_KV, CSA_IN_PAST_CARRY},
    .stage_names = stage_names,
    .n_stages = 3,
    .materialize = csa128_materialize,
    .release = csa128_release,
    .expected = csa128_expected,
    .capture_step = csa128_capture_step,
    .oracle = csa128_oracle,
    .dev_create = dev_create,
    .dev_destroy = dev_destroy,
    .dev_execute = dev_execute,
    .dev_capture_ready = dev_capture_ready,
    .loc = loc,
    .n_loc = (int)(sizeof loc / sizeof loc[0]),
    .dev_execute_parts = dev_execute_parts,
    .dev_capture_parts = dev_capture_parts,
};

const csa_chain_ratio *run_csa128_ratio(void) { return &csa128_ratio; }

int run_csa128(runner_env *env, const char *case_id, const char *spec, case_report *out) {
  csa_case c;
  char err[512];
  result_row *row;
  if (cases_csa_parse(spec, &c, err, sizeof err) != 0) {
    row = case_report_add(out, LANE_ORACLE, 0, "fail");
    if (row) snprintf(row->message, sizeof row->message, "%s; repro: bitgate repro %s --lanes oracle", err, case_id);
    out->failed++;
    return -1;
  }
  run_csa_chain(env, case_id, &csa128_ratio, &c, cases_csa_steps(&c), out);
  return 0;
}

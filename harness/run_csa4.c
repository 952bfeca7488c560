/*
** run_csa4.c: the ratio-4 CSA lanes (see run_csa4.h): the ratio's
** descriptor for the shared chain driver (run_csa_chain.h).
**
** The oracle exposes seven stage payloads (csa4_trace), handed to the
** payload sink in pipeline order; the device exposes four of them
** (device_csa4_stage_copy), which the eager lane compares and also hands
** over, as "device".  A device step is compared in pipeline order: main
** compression (outputs 1, 2), index-key compression (3, 4), index query,
** index scores, selection, selected_indices (5, the 6-output configuration),
** candidate scores, Y (0).
*/
#include "harness/run_csa4.h"
#include "cases/csa4_cases.h"
#include "device/csa4_device.h"
#include "harness/run_csa_chain.h"
#include "oracle/csa.h"

#include <stdio.h>
#include <string.h>

static const char *const output_names[CSA_OUTPUT_MAX] = {
    "Y", "present_compressed_kv", "present_compression_carry", "present_index_key", "present_index_carry",
    "selected_indices"};

/* Oracle stage payloads: csa4_trace's fields, in pipeline order. */
enum csa4_oracle_stage {
  OS_RECORDS = 0,
  OS_INDEX_RECORDS,
  OS_INDEX_QUERY,
  OS_INDEX_SCORES,
  OS_SELECTION,
  OS_SCORES,
  OS_OUTPUT,
  OS_COUNT
};

static const char *const stage_names[OS_COUNT] = {
    "CompressionUpdate", "IndexKeyUpdate", "IndexQueryFinalize", "IndexScoring",
    "Selection", "CandidateAssembly", "SparseSinkSoftmaxAttention"};

static const csa_chain_dev_stage dev_stages[] = {
    {CSA4_STAGE_INDEX_QUERY, OS_INDEX_QUERY},
    {CSA4_STAGE_INDEX_SCORES, OS_INDEX_SCORES},
    {CSA4_STAGE_SELECTION, OS_SELECTION},
    {CSA4_STAGE_SCORES, OS_SCORES}};

static const int compare_order[] = {
    CSA_OUT_PRESENT_COMPRESSED_KV, CSA_OUT_PRESENT_CARRY, CSA_OUT_PRESENT_INDEX_KEY, CSA_OUT_PRESENT_INDEX_CARRY,
    CSA_CHAIN_STAGE_ENTRY(0),  /* IndexQueryFinalize */
    CSA_CHAIN_STAGE_ENTRY(1),  /* IndexScoring */
    CSA_CHAIN_STAGE_ENTRY(2),  /* Selection */
    CSA_OUT_SELECTED,
    CSA_CHAIN_STAGE_ENTRY(3),  /* CandidateAssembly */
    CSA_OUT_Y};

#define PART(p) (1u << (p))
#define OUT1 CSA_OUT_PRESENT_COMPRESSED_KV
#define OUT3 CSA_OUT_PRESENT_INDEX_KEY

/*
** Stage localisation: each stage alone, on the oracle's payloads (the
** dev_stages entries are 0 index query, 1 index scores, 2 selection, 3
** candidate scores).  The attention kernel computes CandidateAssembly and Y
** together, so it runs once for each, and a Y difference is named only
** when the candidate scores agree.
*/
static const csa_chain_loc_step loc[] = {
    {"CompressionUpdate", PART(CSA4_PART_STATE) | PART(CSA4_PART_MAIN), {0}, 0, {OUT1, CSA_OUT_PRESENT_CARRY}, 2},
    {"IndexKeyUpdate", PART(CSA4_PART_STATE) | PART(CSA4_PART_INDEX), {0}, 0, {OUT3, CSA_OUT_PRESENT_INDEX_CARRY}, 2},
    {"IndexQueryFinalize", PART(CSA4_PART_QUERY), {0}, 0, {CSA_CHAIN_STAGE_ENTRY(0)}, 1},
    {"IndexScoring", PART(CSA4_PART_SCORE), {CSA_CHAIN_STAGE_ENTRY(0), OUT3}, 2, {CSA_CHAIN_STAGE_ENTRY(1)}, 1},
    {"Selection", PART(CSA4_PART_SELECT), {CSA_CHAIN_STAGE_ENTRY(1)}, 1, {CSA_CHAIN_STAGE_ENTRY(2), CSA_OUT_SELECTED}, 2},
    {"CandidateAssembly", PART(CSA4_PART_ATTENTION), {CSA_CHAIN_STAGE_ENTRY(2), OUT1}, 2, {CSA_CHAIN_STAGE_ENTRY(3)}, 1},
    {"SparseSinkSoftmaxAttention", PART(CSA4_PART_ATTENTION), {CSA_CHAIN_STAGE_ENTRY(2), OUT1}, 2, {CSA_OUT_Y}, 1},
};

static int csa4_materialize(const void *c, int step, csa_step *s, char *err, size_t len) {
  return cases_csa4_materialize(c, step, s->in, &s->n_in, s->out, &s->n_out, &s->attrs, err, len);
}

static void csa4_release(csa_step *s) { cases_csa4_release(s->in, s->out); }

static int csa4_expected(const void *c, int *code) { return cases_csa4_expected(c, code); }

static int csa4_expected_site(const void *c, int *input, int *axis) {
  return cases_csa4_expected_site(c, input, axis);
}

/*
** The decode step to capture: as for ratio 128, decode steps have S = 1
** and current_kv holds min(window, total) rows, the caches a fixed capacity
** and the bias one shape, so shapes settle once total reaches the window;
** -1 without decode steps.
*/
static int csa4_capture_step(const void *cv, int steps) {
  const csa4_case *c = cv;
  long long first = c->window - (c->start + c->prefill);
  if (steps < 2) return -1;
  if (first < 1) first = 1;
  return first < steps ? (int)first : steps - 1;
}

/* Allocates the seven trace payloads with the shapes csa_validate resolved (all or none). */
static int trace_alloc(csa_step *s, const csa_dims *d, csa4_trace *t) {
  long long b = d->batch, sq = d->seq, rci = d->index_present_capacity;
  int i;
  if (csa_chain_payload_alloc(&s->stage[OS_RECORDS], DTYPE_F32, 3, b, d->present_capacity, CSA_HEAD_DIM, 0) ||
      csa_chain_payload_alloc(&s->stage[OS_INDEX_RECORDS], DTYPE_F32, 3, b, rci, CSA4_INDEX_DIM, 0) ||
      csa_chain_payload_alloc(&s->stage[OS_INDEX_QUERY], DTYPE_F32, 4, b, sq, d->index_heads, CSA4_INDEX_DIM) ||
      csa_chain_payload_alloc(&s->stage[OS_INDEX_SCORES], DTYPE_F32, 3, b, sq, rci, 0) ||
      csa_chain_payload_alloc(&s->stage[OS_SELECTION], DTYPE_I32, 3, b, sq, d->topk, 0) ||
      csa_chain_payload_alloc(&s->stage[OS_SCORES], DTYPE_F32, 4, b, sq, d->heads, CSA_DENSE_WINDOW + d->topk) ||
      csa_chain_payload_alloc(&s->stage[OS_OUTPUT], DTYPE_F32, 4, b, sq, d->heads, CSA_HEAD_DIM)) {
    for (i = 0; i < OS_COUNT; i++) tensor_free(&s->stage[i]), memset(&s->stage[i], 0, sizeof s->stage[i]);
    return -1;
  }
  t->records = s->stage[OS_RECORDS].data;
  t->index_records = s->stage[OS_INDEX_RECORDS].data;
  t->index_query = s->stage[OS_INDEX_QUERY].data;
  t->index_scores = s->stage[OS_INDEX_SCORES].data;
  t->selection = s->stage[OS_SELECTION].data;
  t->scores = s->stage[OS_SCORES].data;
  t->output = s->stage[OS_OUTPUT].data;
  return 0;
}

/*
** The oracle's step; with stages, also every stage boundary it exposes
** (csa4_trace), the two compression payloads cut to the records the step
** emits.
*/
static int csa4_oracle(csa_step *s, int stages) {
  const tensor *in[CSA_INPUT_COUNT], *cout[CSA_OUTPUT_MAX];
  tensor *out[CSA_OUTPUT_MAX];
  csa4_trace trace, *tr = NULL;
  csa_dims d;
  op_error verr;
  int i;
  for (i = 0; i < s->n_in; i++) in[i] = s->in[i].dt == DTYPE_NONE ? NULL : &s->in[i];
  for (i = 0; i < s->n_out; i++) cout[i] = out[i] = &s->out[i];
  if (stages && csa_validate(&s->attrs, in, s->n_in, cout, s->n_out, &d, &verr) == 0 && trace_alloc(s, &d, &trace) == 0)
    tr = &trace;
  s->rc = oracle_csa4_run(&s->attrs, in, s->n_in, out, s->n_out, tr, &s->err);
  if (tr && s->rc == 0 && csa_validate_cursor(&d, in[CSA_IN_TOTAL_SEQ], &verr) == 0) {
    csa_chain_payload_keep_rows(&s->stage[OS_RECORDS], d.past_records, d.present_records);
    csa_chain_payload_keep_rows(&s->stage[OS_INDEX_RECORDS], d.past_records, d.present_records);
  }
  return s->rc;
}

static int dev_create(device_runtime *rt, const csa_attrs *a, device_variant v, void **k, char *err, size_t len) {
  device_csa4 *p = NULL;
  int rc = device_csa4_create_variant(rt, a, v, &p, err, len);
  *k = p;
  return rc;
}

static void dev_destroy(void *k) { device_csa4_destroy(k); }

static int dev_execute(void *k, const device_tensor *const *in, int n_in, device_tensor *const *out, int n_out,
                       op_error *err) {
  return device_csa4_execute(k, in, n_in, out, n_out, err);
}

static int dev_capture_ready(const void *k, char *why, size_t len) { return device_csa4_capture_ready(k, why, len); }

static int dev_scratch_fill(void *k, int byte) { return device_csa4_scratch_fill(k, byte); }

static int dev_scratch_check(void *k, char *report, size_t len) { return device_csa4_scratch_check(k, report, len); }

/* Why a stage copy or load failed: the runtime's error, or where it left none, that it was the scratch slot. */
static const char *stage_failure(void *k) {
  const char *why = device_runtime_error(device_csa4_runtime(k));
  return why && *why ? why : "the stage's scratch slot could not be had";
}

static int dev_stage_copy(void *k, int st, tensor *t, char *err, size_t len) {
  size_t have = device_csa4_stage_bytes(k, (csa4_stage)st), want = tensor_bytes(t);
  if (have != want)
    return snprintf(err, len, "the device's payload holds %zu bytes, the oracle's %zu", have, want), -1;
  if (device_csa4_stage_copy(k, (csa4_stage)st, t->data, want) != 0)
    return snprintf(err, len, "copy failed: %s", stage_failure(k)), -1;
  return 0;
}

static int dev_execute_parts(void *k, unsigned parts, const device_tensor *const *in, int n_in,
                             device_tensor *const *out, int n_out, op_error *err) {
  return device_csa4_execute_parts(k, parts, in, n_in, out, n_out, err);
}

static int dev_stage_load(void *k, int st, const tensor *t, char *err, size_t len) {
  size_t have = device_csa4_stage_bytes(k, (csa4_stage)st), want = tensor_bytes(t);
  if (have != want)
    return snprintf(err, len, "the device's payload holds %zu bytes, the oracle's %zu", have, want), -1;
  if (device_csa4_stage_load(k, (csa4_stage)st, t->data, want) != 0)
    return snprintf(err, len, "load failed: %s", stage_failure(k)), -1;
  return 0;
}

static int dev_capture_parts(void *k, unsigned parts, const device_tensor *const *in, int n_in,
                             device_tensor *const *out, int n_out, device_graph **graph, op_error *err) {
  return device_csa4_capture_parts(k, parts, in, n_in, out, n_out, graph, err);
}

static const csa_chain_ratio csa4_ratio = {
    .output_names = output_names,
    .n_threads = 4,
    .thread_out = {CSA_OUT_PRESENT_COMPRESSED_KV, CSA_OUT_PRESENT_CARRY, CSA_OUT_PRESENT_INDEX_KEY,
                   CSA_OUT_PRESENT_INDEX_CARRY},
    .thread_in = {CSA_IN_PAST_COMPRESSED_KV, CSA_IN_PAST_CARRY, CSA_IN_PAST_INDEX_KEY, CSA_IN_PAST_INDEX_CARRY},
    .stage_names = stage_names,
    .n_stages = OS_COUNT,
    .materialize = csa4_materialize,
    .release = csa4_release,
    .expected = csa4_expected,
    .expected_site = csa4_expected_site,
    .capture_step = csa4_capture_step,
    .oracle = csa4_oracle,
    .dev_create = dev_create,
    .dev_destroy = dev_destroy,
    .dev_execute = dev_execute,
    .dev_capture_ready = dev_capture_ready,
    .dev_scratch_fill = dev_scratch_fill,
    .dev_scratch_check = dev_scratch_check,
    .dev_stage_copy = dev_stage_copy,
    .dev_stages = dev_stages,
    .n_dev_stages = (int)(sizeof dev_stages / sizeof dev_stages[0]),
    .compare_order = compare_order,
    .n_compare = (int)(sizeof compare_order / sizeof compare_order[0]),
    .loc = loc,
    .n_loc = (int)(sizeof loc / sizeof loc[0]),
    .dev_execute_parts = dev_execute_parts,
    .dev_stage_load = dev_stage_load,
    .dev_capture_parts = dev_capture_parts,
};

const csa_chain_ratio *run_csa4_ratio(void) { return &csa4_ratio; }

int run_csa4(runner_env *env, const char *case_id, const char *spec, case_report *out) {
  csa4_case c;
  char err[512];
  result_row *row;
  if (cases_csa4_parse(spec, &c, err, sizeof err) != 0) {
    row = case_report_add(out, LANE_ORACLE, 0, "fail");
    if (row) snprintf(row->message, sizeof row->message, "%s; repro: bitgate repro %s --lanes oracle", err, case_id);
    out->failed++;
    return -1;
  }
  run_csa_chain(env, case_id, &csa4_ratio, &c, cases_csa4_steps(&c), out);
  return 0;
}

/*
** index_share_materialize.c: the tensors of one step of an IndexShare case
** (see index_share_cases.h "Tensors"): the plan of shapes the spec's common
** tokens describe, the one is.contract mutation on top of it, the byte
** budget, then allocation, the fills (index_share_fill.c) and release.
*/
#include "cases/index_share_cases_internal.h"

#include "cases/spec_text.h"
#include "oracle/numerics/numerics.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define IS_EXTRA_INPUT IS_INPUT_COUNT /* the 8th input of contract=inputs:8 */

/* ------------------------------------------------------------ the plan */

/* The tensors' metadata before allocation, and what the operator is told. */
typedef struct is_plan {
  tensor in[IS_CASE_MAX_INPUTS];
  tensor out[IS_OUTPUT_COUNT];
  int n_in, n_out;
  index_share_attrs attrs;
} is_plan;

static void shape4(tensor *t, dtype dt, long long d0, long long d1, long long d2, long long d3) {
  memset(t, 0, sizeof *t);
  t->dt = dt;
  t->rank = 4;
  t->shape[0] = d0, t->shape[1] = d1, t->shape[2] = d2, t->shape[3] = d3;
}

static long long smallest_non_divisor(long long n) {
  long long k = 2;
  while (n % k == 0) k++;
  return k;
}

/* The K/V head count the tensors get (kv_not_divisor changes it). */
static long long plan_kv(const is_case *c) {
  return c->contract == IS_CK_KV_NOT_DIVISOR ? smallest_non_divisor(c->num_heads) : is_case_kv(c);
}

static void plan_present(const is_case *c, tensor *t) {
  shape4(t, c->dt, c->batch, plan_kv(c), is_case_cache(c), c->head_size);
}

/* The valid configuration the spec's common tokens describe. */
static void plan_build(const is_case *c, is_plan *p) {
  long long B = c->batch, H = c->head_size, kv = plan_kv(c);
  memset(p, 0, sizeof *p);
  shape4(&p->in[IS_IN_QUERY], c->dt, B, c->num_heads, c->q_seq, H);
  shape4(&p->in[IS_IN_KEY], c->dt, B, kv, c->current_seq, H);
  p->in[IS_IN_VALUE] = p->in[IS_IN_KEY];
  if (c->past_seq > 0) {
    shape4(&p->in[IS_IN_PAST_KEY], c->dt, B, kv, c->past_seq, H);
    p->in[IS_IN_PAST_VALUE] = p->in[IS_IN_PAST_KEY];
  }
  shape4(&p->in[IS_IN_INDICES], c->index_dt, B, c->index_heads, c->q_seq, c->selected_width);
  if (is_case_has_bias(c)) {
    p->in[IS_IN_BIAS].dt = c->dt;
    p->in[IS_IN_BIAS].rank = c->bias_rank;
    memcpy(p->in[IS_IN_BIAS].shape, c->bias_shape, sizeof c->bias_shape);
  }
  p->n_in = is_case_has_bias(c) ? 7 : 6;
  shape4(&p->out[IS_OUT_Y], c->dt, B, c->num_heads, c->q_seq, H);
  if (c->n_outputs == 3) {
    plan_present(c, &p->out[IS_OUT_PRESENT_KEY]);
    p->out[IS_OUT_PRESENT_VALUE] = p->out[IS_OUT_PRESENT_KEY];
  }
  p->n_out = c->n_outputs;
  p->attrs.num_heads = c->num_heads;
  p->attrs.kv_num_heads = c->contract == IS_CK_KV_NOT_DIVISOR ? kv : c->kv_num_heads;
  p->attrs.has_scale = c->has_scale;
  p->attrs.scale = c->scale;
}

/* An is.contract mutation of one tensor (the kinds that take a TARGET). */
static void plan_mutate_target(const is_case *c, is_plan *p) {
  int slot = is_slot_of_target(c->contract_target);
  tensor *t = slot < IS_INPUT_COUNT ? &p->in[slot] : &p->out[slot - IS_INPUT_COUNT];
  if (slot == IS_IN_BIAS && c->contract != IS_CK_DTYPE) { /* name the axis: make all four explicit */
    long long d4[4];
    is_bias_dims4(t->rank, t->shape, d4);
    t->rank = 4;
    memcpy(t->shape, d4, sizeof d4);
  }
  switch (c->contract) {
  case IS_CK_RANK: /* [d0 * d1, d2, d3] */
    t->shape[0] *= t->shape[1], t->shape[1] = t->shape[2], t->shape[2] = t->shape[3], t->shape[3] = 0;
    t->rank = 3;
    break;
  case IS_CK_BATCH: t->shape[0] = c->batch + 1; break;
  case IS_CK_HEADS:
    t->shape[1] = slot == IS_IN_INDICES || slot == IS_IN_BIAS ? c->num_heads + 1 : t->shape[1] + 1;
    break;
  case IS_CK_SEQ:
    t->shape[2] = slot == IS_IN_BIAS ? c->q_seq + 1 : slot > IS_INPUT_COUNT ? is_case_total(c) + 1 : t->shape[2] + 1;
    break;
  case IS_CK_HEAD_SIZE: t->shape[3] += 1; break;
  case IS_CK_PAST_UNPAIRED:
  case IS_CK_ABSENT: memset(t, 0, sizeof *t); break;
  case IS_CK_DTYPE: t->dt = c->contract_dtype; break;
  default: /* not a kind that takes a target */
    fprintf(stderr, "%s:%d: contract kind %d has no target\n", __FILE__, __LINE__, (int)c->contract);
    abort();
  }
  /* batch/heads/head_size:past_key break the past's own shape: both past
  ** tensors get it, so they still match each other (past_value: it alone). */
  if (slot == IS_IN_PAST_KEY && (c->contract == IS_CK_BATCH || c->contract == IS_CK_HEADS || c->contract == IS_CK_HEAD_SIZE))
    memcpy(p->in[IS_IN_PAST_VALUE].shape, t->shape, sizeof t->shape);
}

static void plan_mutate(const is_case *c, is_plan *p) {
  static const float scale_of[] = {0.0f, -0.0f};
  switch (c->contract) {
  case IS_CK_NONE:
  case IS_CK_KV_NOT_DIVISOR: return; /* plan_build did it */
  case IS_CK_PRESENT_MIXED:
    p->out[IS_OUT_PRESENT_KEY].shape[2] = is_case_total(c);
    p->out[IS_OUT_PRESENT_VALUE].shape[2] = c->past_seq;
    return;
  case IS_CK_NUM_HEADS_ZERO: p->attrs.num_heads = 0; return;
  case IS_CK_NUM_HEADS_NEGATIVE: p->attrs.num_heads = -1; return;
  case IS_CK_KV_NEGATIVE: p->attrs.kv_num_heads = -1; return;
  case IS_CK_SCALE_ZERO:
  case IS_CK_SCALE_NEG_ZERO: p->attrs.has_scale = 1, p->attrs.scale = scale_of[c->contract - IS_CK_SCALE_ZERO]; return;
  case IS_CK_SCALE_NEGATIVE: p->attrs.has_scale = 1, p->attrs.scale = -(c->has_scale ? c->scale : 0.125f); return;
  case IS_CK_SCALE_NAN: p->attrs.has_scale = 1, p->attrs.scale = nx_f32_nan(); return;
  case IS_CK_SCALE_INF: p->attrs.has_scale = 1, p->attrs.scale = nx_f32_from_bits(0x7f800000u); return;
  case IS_CK_INPUTS:
    p->n_in = c->contract_target;
    if (p->n_in == 5) memset(&p->in[IS_IN_INDICES], 0, 2 * sizeof(tensor));
    else p->in[IS_EXTRA_INPUT].dt = c->dt, p->in[IS_EXTRA_INPUT].rank = 1, p->in[IS_EXTRA_INPUT].shape[0] = 1;
    return;
  case IS_CK_OUTPUTS:
    p->n_out = c->contract_target;
    if (p->n_out == 2) plan_present(c, &p->out[IS_OUT_PRESENT_KEY]);
    memset(&p->out[p->n_out], 0, (size_t)(IS_OUTPUT_COUNT - p->n_out) * sizeof(tensor));
    return;
  case IS_CK_CAP_NO_BIAS: memset(&p->in[IS_IN_BIAS], 0, sizeof(tensor)), p->n_in = 6; return;
  case IS_CK_CAP_NO_PAST: memset(&p->in[IS_IN_PAST_KEY], 0, 2 * sizeof(tensor)); return;
  case IS_CK_K_ZERO: p->in[IS_IN_INDICES].shape[3] = 0; return;
  default: plan_mutate_target(c, p); return;
  }
}

/* Total bytes of the plan's tensors; -1 when that overflows 64 bits. */
static int plan_bytes(const is_plan *p, unsigned long long *total) {
  const tensor *all[IS_CASE_MAX_INPUTS + IS_OUTPUT_COUNT];
  int i, a;
  *total = 0;
  for (i = 0; i < IS_CASE_MAX_INPUTS; i++) all[i] = &p->in[i];
  for (i = 0; i < IS_OUTPUT_COUNT; i++) all[IS_CASE_MAX_INPUTS + i] = &p->out[i];
  for (i = 0; i < IS_CASE_MAX_INPUTS + IS_OUTPUT_COUNT; i++) {
    unsigned long long n = all[i]->dt == DTYPE_NONE ? 0 : dtype_size(all[i]->dt);
    for (a = 0; a < all[i]->rank; a++) {
      unsigned long long d = (unsigned long long)all[i]->shape[a];
      if (d && n > ULLONG_MAX / d) return -1;
      n *= d;
    }
    if (n > ULLONG_MAX - *total) return -1;
    *total += n;
  }
  return 0;
}

/* ------------------------------------------------------ materialize */

void cases_is_release(tensor inputs[IS_CASE_MAX_INPUTS], tensor outputs[IS_OUTPUT_COUNT]) {
  int i;
  for (i = 0; i < IS_CASE_MAX_INPUTS; i++) tensor_free(&inputs[i]);
  for (i = 0; i < IS_OUTPUT_COUNT; i++) tensor_free(&outputs[i]);
}

static int alloc_all(tensor *t, int n, char *err, size_t len) {
  int i;
  for (i = 0; i < n; i++) {
    if (t[i].dt == DTYPE_NONE) continue;
    if (tensor_alloc(&t[i])) {
      t[i].data = NULL;
      return spec_set_err(err, len, "out of memory allocating %zu bytes", tensor_bytes(&t[i])), -1;
    }
  }
  return 0;
}

int cases_is_materialize(const is_case *c, int step, tensor inputs[IS_CASE_MAX_INPUTS], int *n_inputs,
                         tensor outputs[IS_OUTPUT_COUNT], int *n_outputs, index_share_attrs *attrs, char *err,
                         size_t err_len) {
  size_t budget = c->budget_bytes ? c->budget_bytes : CASES_IS_BUDGET_DEFAULT;
  unsigned long long need;
  long long *bound = NULL;
  is_plan p;
  int rc = -1;
  memset(inputs, 0, IS_CASE_MAX_INPUTS * sizeof(tensor));
  memset(outputs, 0, IS_OUTPUT_COUNT * sizeof(tensor));
  *n_inputs = *n_outputs = 0;
  if (step < 0 || step >= c->steps)
    return spec_set_err(err, err_len, "step %d is outside the case's steps=%d", step, c->steps), -1;
  plan_build(c, &p);
  plan_mutate(c, &p);
  if (plan_bytes(&p, &need))
    return spec_set_err(err, err_len, "case needs more than %llu bytes, over the budget of %zu", ULLONG_MAX, budget), -1;
  if (need > budget) return spec_set_err(err, err_len, "case needs %llu bytes, over the budget of %zu", need, budget), -1;
  memcpy(inputs, p.in, sizeof p.in);
  memcpy(outputs, p.out, sizeof p.out);
  if (alloc_all(inputs, IS_CASE_MAX_INPUTS, err, err_len) || alloc_all(outputs, IS_OUTPUT_COUNT, err, err_len)) goto done;
  if (!(bound = malloc((size_t)c->batch * sizeof *bound))) {
    spec_set_err(err, err_len, "out of memory");
    goto done;
  }
  cases_is_bounds(c, bound);
  if (is_fill_inputs(c, step, inputs, bound)) {
    spec_set_err(err, err_len, "out of memory filling the inputs");
    goto done;
  }
  *n_inputs = p.n_in, *n_outputs = p.n_out, *attrs = p.attrs;
  rc = 0;
done:
  free(bound);
  if (rc) cases_is_release(inputs, outputs);
  return rc;
}

/*
** index_share_validate.c: the IndexShare contract (claim-time checks), the
** capacity frontier and the six selected_indices row rules.
**
** Source: seed 000_7dfea7c512118af3.txt, the factory's attribute checks, then
** the kernel's execute / validate_shapes / validate_bias_shape, then the
** host-side validate_indices and the capacity_write_pos kernel.  The checks
** run in the order oracle/SPEC.md section 1 lists; the first failure is the
** one reported.  Where the seed tests several things in one condition, the
** location reported is the first operand of that condition (SPEC.md says
** which).  Nothing here looks at float values except the frontier, which
** only asks whether a bias value is finite (NaN and +-inf are not).
*/
#include "oracle/index_share.h"

#include "oracle/numerics/numerics.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static const char *const input_names[IS_INPUT_COUNT] = {
    "query", "key", "value", "past_key", "past_value", "selected_indices", "attention_bias"};

/* Five codes a row, in enum order. */
/* clang-format off */
static const char *const contract_names[IS_CONTRACT_COUNT] = {
    "none",            "num_heads",       "kv_num_heads",    "head_group",      "scale",
    "arity_inputs",    "arity_outputs",   "required_input",  "past_pair",       "query_dtype",
    "dtype_mismatch",  "index_dtype",     "output_dtype",    "rank",            "negative_dim",
    "query_heads",     "kv_batch",        "kv_heads",        "kv_seq",          "kv_head_size",
    "past_mismatch",   "past_shape",      "seq_overflow",    "indices_shape",   "indices_width",
    "output_shape",    "present_shape",   "bias_rank",       "bias_broadcast",  "capacity_bias"};
/* clang-format on */

const char *index_share_contract_name(int code) {
  return code >= 0 && code < IS_CONTRACT_COUNT ? contract_names[code] : "?";
}


/* First axis where t differs from want[0..3]; -1 when t's rank is not 4 or all agree. */
static int first_diff_axis(const tensor *t, const long long *want) {
  int i;
  if (t->rank != 4) return -1;
  for (i = 0; i < 4; i++)
    if (t->shape[i] != want[i]) return i;
  return -1;
}

static int same_shape4(const tensor *t, const long long *want) {
  return t->rank == 4 && first_diff_axis(t, want) < 0;
}

/* Seed: IndexShareFactory::create (required/optional positive ints, scale). */
static int check_attrs(const index_share_attrs *a, op_error *err) {
  long long kv = a->kv_num_heads ? a->kv_num_heads : a->num_heads;
  if (a->num_heads <= 0)
    return op_error_contract(err, IS_CONTRACT_NUM_HEADS, -1, -1, "num_heads %lld must be > 0", a->num_heads);
  if (a->kv_num_heads < 0)
    return op_error_contract(err, IS_CONTRACT_KV_NUM_HEADS, -1, -1, "kv_num_heads %lld must be > 0", a->kv_num_heads);
  if (a->num_heads % kv)
    return op_error_contract(err, IS_CONTRACT_HEAD_GROUP, -1, -1, "num_heads %lld must be a multiple of kv_num_heads %lld",
                a->num_heads, kv);
  if (a->has_scale && !(a->scale > 0.0f && a->scale <= 0x1.fffffep127f)) /* NaN fails too */
    return op_error_contract(err, IS_CONTRACT_SCALE, -1, -1, "scale %a must be finite and > 0", (double)a->scale);
  return 0;
}

/* Seed: execute, from the arity checks to the output dtypes. */
static int check_arity_dtypes(const tensor *const *in, int n_in, const tensor *const *out, int n_out,
                              op_error *err) {
  static const int required[] = {IS_IN_QUERY, IS_IN_KEY, IS_IN_VALUE, IS_IN_INDICES};
  static const int same_dtype[] = {IS_IN_KEY, IS_IN_VALUE, IS_IN_PAST_KEY, IS_IN_PAST_VALUE, IS_IN_BIAS};
  const tensor *pk, *pv;
  dtype dt;
  int i;
  if (n_in < 6 || n_in > 7)
    return op_error_contract(err, IS_CONTRACT_ARITY_INPUTS, -1, -1, "expected 6 or 7 inputs, got %d", n_in);
  if (n_out != 1 && n_out != 3)
    return op_error_contract(err, IS_CONTRACT_ARITY_OUTPUTS, -1, -1, "expected 1 or 3 outputs, got %d", n_out);
  for (i = 0; i < 4; i++)
    if (!tensor_optional(in, n_in, required[i]))
      return op_error_contract(err, IS_CONTRACT_REQUIRED_INPUT, required[i], -1, "required input %d (%s) is absent",
                  required[i], input_names[required[i]]);
  pk = tensor_optional(in, n_in, IS_IN_PAST_KEY);
  pv = tensor_optional(in, n_in, IS_IN_PAST_VALUE);
  if (!pk != !pv)
    return op_error_contract(err, IS_CONTRACT_PAST_PAIR, pk ? IS_IN_PAST_VALUE : IS_IN_PAST_KEY, -1,
                "past_key and past_value must be given together");
  dt = in[IS_IN_QUERY]->dt;
  if (!dtype_is_float(dt))
    return op_error_contract(err, IS_CONTRACT_QUERY_DTYPE, IS_IN_QUERY, -1,
                "query dtype %s unsupported (expected f32, f16 or bf16)", dtype_name(dt));
  for (i = 0; i < 5; i++) {
    const tensor *t = tensor_optional(in, n_in, same_dtype[i]);
    if (t && t->dt != dt)
      return op_error_contract(err, IS_CONTRACT_DTYPE_MISMATCH, same_dtype[i], -1, "%s dtype %s must equal query's %s",
                  input_names[same_dtype[i]], dtype_name(t->dt), dtype_name(dt));
  }
  if (in[IS_IN_INDICES]->dt != DTYPE_I32 && in[IS_IN_INDICES]->dt != DTYPE_I64)
    return op_error_contract(err, IS_CONTRACT_INDEX_DTYPE, IS_IN_INDICES, -1,
                "selected_indices dtype %s unsupported (expected i32 or i64)",
                dtype_name(in[IS_IN_INDICES]->dt));
  for (i = 0; i < n_out; i++) {
    dtype odt = out[i] ? out[i]->dt : DTYPE_NONE;
    if (odt != dt)
      return op_error_contract(err, IS_CONTRACT_OUTPUT_DTYPE, 100 + i, -1, "output %d dtype %s must equal query's %s", i,
                  dtype_name(odt), dtype_name(dt));
  }
  return 0;
}

/* Seed: require_rank for inputs 0, 1, 2, 5, then past (3, 4); plus no negative dims. */
static int check_ranks(const tensor *const *in, int n_in, op_error *err) {
  static const int order[] = {IS_IN_QUERY,   IS_IN_KEY,      IS_IN_VALUE,
                              IS_IN_INDICES, IS_IN_PAST_KEY, IS_IN_PAST_VALUE};
  int i, axis;
  for (i = 0; i < 6; i++) {
    const tensor *t = tensor_optional(in, n_in, order[i]);
    if (!t) continue; /* only the optional past can be absent here */
    if (t->rank != 4)
      return op_error_contract(err, IS_CONTRACT_RANK, order[i], -1, "input %d (%s) rank %d unsupported; expected 4",
                  order[i], input_names[order[i]], t->rank);
    for (axis = 0; axis < 4; axis++)
      if (t->shape[axis] < 0)
        return op_error_contract(err, IS_CONTRACT_NEGATIVE_DIM, order[i], axis, "input %d (%s) dimension %d is %lld",
                    order[i], input_names[order[i]], axis, t->shape[axis]);
  }
  return 0;
}

/* Seed: validate_shapes, query against num_heads, then key and value. */
static int check_qkv(const tensor *q, const tensor *k, const tensor *v, index_share_dims *d, op_error *err) {
  const tensor *kv[2] = {k, v};
  int i;
  if (q->shape[1] != d->q_heads)
    return op_error_contract(err, IS_CONTRACT_QUERY_HEADS, IS_IN_QUERY, 1, "query heads %lld must equal num_heads %lld",
                q->shape[1], d->q_heads);
  for (i = 0; i < 2; i++)
    if (kv[i]->shape[0] != d->batch)
      return op_error_contract(err, IS_CONTRACT_KV_BATCH, IS_IN_KEY + i, 0, "%s batch %lld must equal query's %lld",
                  input_names[IS_IN_KEY + i], kv[i]->shape[0], d->batch);
  for (i = 0; i < 2; i++)
    if (kv[i]->shape[1] != d->kv_heads)
      return op_error_contract(err, IS_CONTRACT_KV_HEADS, IS_IN_KEY + i, 1, "%s heads %lld must equal kv_num_heads %lld",
                  input_names[IS_IN_KEY + i], kv[i]->shape[1], d->kv_heads);
  if (v->shape[2] != k->shape[2])
    return op_error_contract(err, IS_CONTRACT_KV_SEQ, IS_IN_VALUE, 2, "value sequence %lld must equal key's %lld",
                v->shape[2], k->shape[2]);
  for (i = 0; i < 2; i++)
    if (kv[i]->shape[3] != d->head_size)
      return op_error_contract(err, IS_CONTRACT_KV_HEAD_SIZE, IS_IN_KEY + i, 3,
                  "%s head size %lld must equal query's %lld", input_names[IS_IN_KEY + i], kv[i]->shape[3],
                  d->head_size);
  return 0;
}

/* Seed: validate_shapes, the past pair, then the total length. */
static int check_past(const tensor *pk, const tensor *pv, index_share_dims *d, op_error *err) {
  static const int axes[] = {0, 1, 3};
  int i;
  if (pk) {
    long long want[4];
    int axis = first_diff_axis(pv, pk->shape);
    if (axis >= 0)
      return op_error_contract(err, IS_CONTRACT_PAST_MISMATCH, IS_IN_PAST_VALUE, axis,
                  "past_value dimension %d is %lld, past_key's is %lld", axis, pv->shape[axis],
                  pk->shape[axis]);
    want[0] = d->batch, want[1] = d->kv_heads, want[2] = pk->shape[2], want[3] = d->head_size;
    for (i = 0; i < 3; i++)
      if (pk->shape[axes[i]] != want[axes[i]])
        return op_error_contract(err, IS_CONTRACT_PAST_SHAPE, IS_IN_PAST_KEY, axes[i],
                    "past_key dimension %d is %lld; expected [B=%lld, kv_num_heads=%lld, S_past, H=%lld]",
                    axes[i], pk->shape[axes[i]], want[0], want[1], want[3]);
    d->has_past = 1;
    d->past_seq = pk->shape[2];
  }
  if (d->past_seq > LLONG_MAX - d->current_seq)
    return op_error_contract(err, IS_CONTRACT_SEQ_OVERFLOW, IS_IN_PAST_KEY, 2, "total sequence %lld + %lld overflows",
                d->past_seq, d->current_seq);
  d->total_seq = d->past_seq + d->current_seq;
  return 0;
}

/* Seed: validate_shapes, selected_indices [B, 1|N, Sq, K] with K > 0. */
static int check_indices_shape(const tensor *ix, index_share_dims *d, op_error *err) {
  const long long *s = ix->shape;
  int axis = s[0] != d->batch ? 0 : (s[1] != 1 && s[1] != d->q_heads) ? 1 : s[2] != d->q_seq ? 2 : -1;
  if (axis >= 0)
    return op_error_contract(err, IS_CONTRACT_INDICES_SHAPE, IS_IN_INDICES, axis,
                "selected_indices [%lld, %lld, %lld, %lld] must be [B=%lld, 1|N=%lld, S_q=%lld, K]", s[0],
                s[1], s[2], s[3], d->batch, d->q_heads, d->q_seq);
  if (s[3] == 0)
    return op_error_contract(err, IS_CONTRACT_INDICES_WIDTH, IS_IN_INDICES, 3, "selected_indices K must be nonzero");
  d->index_heads = s[1];
  d->selected_width = s[3];
  return 0;
}

/*
** Seed: validate_shapes, the outputs.  The present is growing when both
** outputs are [B, Nkv, Sp + Sc, H]; otherwise capacity when Sp > 0 and both
** are [B, Nkv, Sp, H].  Growing is tested first, so with Sc == 0 the shapes
** coincide and the present is growing.  A failure names present_key when it
** matches neither shape (axis: the first that fits neither), else
** present_value (axis: the first that differs from present_key's shape).
*/
static int check_outputs(const tensor *const *out, const tensor *q, index_share_dims *d, op_error *err) {
  long long grow[4], cap[4];
  const tensor *pk, *pv;
  int axis;
  if (!same_shape4(out[IS_OUT_Y], q->shape))
    return op_error_contract(err, IS_CONTRACT_OUTPUT_SHAPE, 100, first_diff_axis(out[IS_OUT_Y], q->shape),
                "output 0 shape must equal the query shape");
  d->cache_seq = d->total_seq;
  if (d->n_outputs == 1) return 0;
  grow[0] = cap[0] = d->batch, grow[1] = cap[1] = d->kv_heads, grow[3] = cap[3] = d->head_size;
  grow[2] = d->total_seq, cap[2] = d->past_seq;
  pk = out[IS_OUT_PRESENT_KEY], pv = out[IS_OUT_PRESENT_VALUE];
  if (same_shape4(pk, grow)) {
    /* growing */
  } else if (d->past_seq > 0 && same_shape4(pk, cap)) {
    d->capacity_mode = 1;
    d->cache_seq = d->past_seq;
  } else {
    for (axis = 0; pk->rank == 4 && axis < 4; axis++)
      if (pk->shape[axis] != grow[axis] && !(d->past_seq > 0 && pk->shape[axis] == cap[axis])) break;
    return op_error_contract(err, IS_CONTRACT_PRESENT_SHAPE, 101, pk->rank == 4 ? axis : -1,
                "present_key must be [%lld, %lld, %lld, %lld] (growing) or [%lld, %lld, %lld, %lld] "
                "(capacity, needs S_past > 0)",
                grow[0], grow[1], grow[2], grow[3], cap[0], cap[1], cap[2], cap[3]);
  }
  if (!same_shape4(pv, pk->shape))
    return op_error_contract(err, IS_CONTRACT_PRESENT_SHAPE, 102, first_diff_axis(pv, pk->shape),
                "present_value shape must equal present_key's");
  return 0;
}

/* Seed: validate_bias_shape against [B, N, Sq, cache_seq], then the capacity rule. */
static int check_bias(const tensor *bias, index_share_dims *d, op_error *err) {
  long long target[4];
  int axis, lead;
  if (!bias) {
    if (d->capacity_mode)
      return op_error_contract(err, IS_CONTRACT_CAPACITY_BIAS, IS_IN_BIAS, -1,
                  "capacity-mode present needs attention_bias to carry the valid length");
    return 0;
  }
  if (bias->rank < 0 || bias->rank > 4)
    return op_error_contract(err, IS_CONTRACT_BIAS_RANK, IS_IN_BIAS, -1, "attention_bias rank %d exceeds 4", bias->rank);
  target[0] = d->batch, target[1] = d->q_heads, target[2] = d->q_seq, target[3] = d->cache_seq;
  lead = 4 - bias->rank;
  for (axis = 0; axis < bias->rank; axis++) {
    long long dim = bias->shape[axis];
    if (dim != 1 && dim != target[lead + axis])
      return op_error_contract(err, IS_CONTRACT_BIAS_BROADCAST, IS_IN_BIAS, axis,
                  "attention_bias dimension %d (%lld) does not broadcast to [%lld, %lld, %lld, %lld]", axis,
                  dim, target[0], target[1], target[2], target[3]);
    d->bias_dims[lead + axis] = dim;
  }
  d->has_bias = 1;
  d->bias_rank = bias->rank;
  return 0;
}

int index_share_validate(const index_share_attrs *a, const tensor *const *inputs, int n_inputs,
                         const tensor *const *outputs, int n_outputs, index_share_dims *d, op_error *err) {
  const tensor *q, *k;
  float scale;
  int rc, i;
  op_error_clear(err);
  *d = (index_share_dims){0};
  for (i = 0; i < 4; i++) d->bias_dims[i] = 1;
  rc = check_attrs(a, err);
  if (!rc) rc = check_arity_dtypes(inputs, n_inputs, outputs, n_outputs, err);
  if (!rc) rc = check_ranks(inputs, n_inputs, err);
  if (rc) return rc;
  q = inputs[IS_IN_QUERY], k = inputs[IS_IN_KEY];
  d->dt = q->dt;
  d->index_dt = inputs[IS_IN_INDICES]->dt;
  d->n_outputs = n_outputs;
  d->batch = q->shape[0], d->q_heads = a->num_heads, d->q_seq = q->shape[2], d->head_size = q->shape[3];
  d->kv_heads = a->kv_num_heads ? a->kv_num_heads : a->num_heads;
  d->group = d->q_heads / d->kv_heads;
  d->current_seq = k->shape[2];
  rc = check_qkv(q, k, inputs[IS_IN_VALUE], d, err);
  if (!rc)
    rc = check_past(tensor_optional(inputs, n_inputs, IS_IN_PAST_KEY), tensor_optional(inputs, n_inputs, IS_IN_PAST_VALUE),
                    d, err);
  if (!rc) rc = check_indices_shape(inputs[IS_IN_INDICES], d, err);
  if (!rc) rc = check_outputs(outputs, q, d, err);
  if (!rc) rc = check_bias(tensor_optional(inputs, n_inputs, IS_IN_BIAS), d, err);
  if (rc) return rc;
  /* Seed: launch_rows.  All float, each step correctly rounded (sqrtf is IEEE). */
  scale = a->has_scale ? a->scale : 1.0f / sqrtf((float)d->head_size);
  d->sqrt_scale = sqrtf(scale);
  return 0;
}

/*
** Flat offset of the bias value for logical (b, h, q, k): right-aligned
** broadcast, a size-1 axis reads index 0 (seed: bias_at).  Absent leading
** axes have size 1 in d->bias_dims, so all four axes fold the same way.
*/
long long index_share_bias_offset(const index_share_dims *d, long long b, long long h, long long q,
                                  long long k) {
  const long long logical[4] = {b, h, q, k};
  long long off = 0;
  int axis;
  for (axis = 0; axis < 4; axis++)
    off = off * d->bias_dims[axis] + (d->bias_dims[axis] == 1 ? 0 : logical[axis]);
  return off;
}

/* Seed: capacity_write_pos (max over every head and query of the finite columns). */
void index_share_capacity_frontier(const index_share_dims *d, const tensor *bias, long long *valid_len,
                                   long long *write_pos) {
  long long b, h, q, k;
  assert(d->has_bias && bias);
  for (b = 0; b < d->batch; b++) {
    long long valid = 0;
    for (h = 0; h < d->q_heads; h++)
      for (q = 0; q < d->q_seq; q++)
        for (k = valid; k < d->cache_seq; k++) /* columns below valid cannot raise it */
          if (nx_f32_bits(nx_f32_abs(tensor_load_f32(bias, index_share_bias_offset(d, b, h, q, k)))) <
              0x7f800000u) /* finite? */
            valid = k + 1;
    valid_len[b] = valid;
    write_pos[b] = valid >= d->current_seq ? valid - d->current_seq : 0;
  }
}

/* Records an index-row failure at (b, h, q, col) and returns -1. */
static int index_fail(op_error *err, int rule, long long b, long long h, long long q, long long col,
                      const char *fmt, ...) {
  char reason[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  op_error_clear(err);
  err->cls = OP_ERR_INDEX;
  err->rule = rule;
  err->batch = b, err->head = h, err->query = q, err->column = col;
  snprintf(err->message, sizeof err->message,
           "selected_indices [batch=%lld, head=%lld, query=%lld, column=%lld]: %s", b, h, q, col, reason);
  return -1;
}

/*
** Seed: validate_indices (host) and validate_index_rows (device), one row:
** the rules in this order per column, the first one that fires wins.
*/
static int check_index_row(const tensor *ix, long long base, long long width, long long bound, long long b,
                           long long h, long long q, op_error *err) {
  long long col, prev = -1, count = 0;
  int padding = 0;
  for (col = 0; col < width; col++) {
    long long v = tensor_load_index(ix, base + col);
    if (v == -1) { /* padding: the rest of the row must be -1 too */
      padding = 1;
      continue;
    }
    if (v < -1) return index_fail(err, INDEX_RULE_SENTINEL, b, h, q, col, "invalid sentinel %lld", v);
    if (padding)
      return index_fail(err, INDEX_RULE_AFTER_PADDING, b, h, q, col, "index %lld follows -1 padding", v);
    if (v >= bound)
      return index_fail(err, INDEX_RULE_OUT_OF_RANGE, b, h, q, col, "index %lld out of range for length %lld",
                        v, bound);
    if (count > 0 && v == prev)
      return index_fail(err, INDEX_RULE_DUPLICATE, b, h, q, col, "duplicate index %lld", v);
    if (count > 0 && v < prev)
      return index_fail(err, INDEX_RULE_NOT_INCREASING, b, h, q, col,
                        "not strictly increasing: %lld then %lld", prev, v);
    prev = v;
    count++;
  }
  if (count == 0) return index_fail(err, INDEX_RULE_ALL_PADDING, b, h, q, -1, "the row is all -1");
  return 0;
}

int index_share_validate_indices(const index_share_dims *d, const tensor *indices, const long long *bound,
                                 op_error *err) {
  long long b, h, q, K = d->selected_width;
  op_error_clear(err);
  for (b = 0; b < d->batch; b++)
    for (h = 0; h < d->index_heads; h++)
      for (q = 0; q < d->q_seq; q++)
        if (check_index_row(indices, ((b * d->index_heads + h) * d->q_seq + q) * K, K, bound[b], b, h, q,
                            err))
          return -1;
  return 0;
}

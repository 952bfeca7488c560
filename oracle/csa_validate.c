/*
** csa_validate.c: the CSA ratio-128 contract (claim-time checks) and the
** execute-time cursor rules of total_sequence_length.
**
** Source: seed 003_9308a65268dfd821.txt, unsupported_reason (seed:2562),
** validate_ratio128_claim (seed:2729), validate_attention_bias_claim
** (seed:2809), require_fixed_contract / require_dtype / require_shape
** (seed:2866-2952), and the launch code's cursor arithmetic (seed:189-190,
** 2320-2353).  The checks run in the order oracle/SPEC.md lists ("CSA ratio
** 128", section C1); the first failure is the one reported.  The CPU
** factory's own attribute checks are not in the seed; the ones here are
** decisions, marked *ours* in SPEC.md.  Nothing here reads float values; the
** cursor check reads the one i64 of input 9.
*/
#include "oracle/csa.h"

#include "oracle/numerics/numerics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const input_names[CSA_INPUT_COUNT] = {
    "query",          "current_kv",           "compressor_kv",        "compressor_gate",
    "compressor_ape", "compressor_norm",      "past_compressed_kv",   "past_compression_carry",
    "seqlens_k",      "total_sequence_length", "head_sink",           "index_query",
    "index_weight",   "index_compressor_kv",  "index_compressor_gate", "index_compressor_ape",
    "index_compressor_norm", "past_index_key", "past_index_carry",    "attention_bias"};

/* clang-format off */
static const char *const contract_names[CSA_CONTRACT_COUNT] = {
    "none",           "ratio",            "ratio4_missing",  "cache_format",   "num_heads",
    "scale",          "arity_inputs",     "required_input",  "ratio4_input",   "arity_outputs",
    "fp4_format",     "head_dim",         "rope_dim",        "dtype",          "rank",
    "negative_dim",   "empty_query",      "shape",           "bias_dtype",     "bias_rank",
    "bias_broadcast", "output_dtype",     "output_shape",    "bias_candidates", "total_negative",
    "total_short",    "past_capacity",    "present_capacity"};
/* clang-format on */

const char *csa_contract_name(int code) {
  return code >= 0 && code < CSA_CONTRACT_COUNT ? contract_names[code] : "?";
}


static csa_cache_format parse_format(const char *name) {
  if (!name || !strcmp(name, "f32")) return CSA_CACHE_F32;
  if (!strcmp(name, "fp8_e4m3_block64")) return CSA_CACHE_FP8;
  if (!strcmp(name, "fp4_e2m1_block32")) return CSA_CACHE_FP4;
  return CSA_CACHE_UNKNOWN;
}

/* Seed: the CPU factory's dry run (seed:2573), whose checks the seed does not show. */
static int check_attrs(const csa_attrs *a, csa_dims *d, op_error *err) {
  if (a->compression_ratio != 4 && a->compression_ratio != CSA128_RATIO)
    return op_error_contract(err, CSA_CONTRACT_RATIO, -1, -1, "compression_ratio %lld unsupported (expected 4 or 128)",
                a->compression_ratio);
  if (a->compression_ratio == 4)
    return op_error_contract(err, CSA_CONTRACT_RATIO4_MISSING, -1, -1, "compression_ratio 4 is not in this oracle yet");
  d->format = parse_format(a->cache_format);
  if (d->format == CSA_CACHE_UNKNOWN)
    return op_error_contract(err, CSA_CONTRACT_CACHE_FORMAT, -1, -1, "cache_format '%s' unknown", a->cache_format);
  if (a->num_heads <= 0)
    return op_error_contract(err, CSA_CONTRACT_NUM_HEADS, -1, -1, "num_heads %lld must be > 0", a->num_heads);
  if (a->has_scale && nx_f32_bits(nx_f32_abs(a->scale)) >= 0x7f800000u /* inf or NaN? */)
    return op_error_contract(err, CSA_CONTRACT_SCALE, -1, -1, "scale %a must be finite", (double)a->scale);
  return 0;
}

/* Seed: validate_ratio128_claim's arity part and require_fixed_contract (seed:2735-2754, 2866). */
static int check_arity(const csa_attrs *a, const tensor *const *in, int n_in, int n_out, csa_dims *d,
                       op_error *err) {
  int i;
  if (n_in < CSA_IN_HEAD_SINK + 1 || n_in > CSA_INPUT_COUNT)
    return op_error_contract(err, CSA_CONTRACT_ARITY_INPUTS, -1, -1, "expected 11 to 20 inputs, got %d", n_in);
  for (i = 0; i <= CSA_IN_HEAD_SINK; i++)
    if (!tensor_optional(in, n_in, i))
      return op_error_contract(err, CSA_CONTRACT_REQUIRED_INPUT, i, -1, "required input %d (%s) is absent", i,
                  input_names[i]);
  for (i = CSA_IN_INDEX_FIRST; i <= CSA_IN_INDEX_LAST; i++)
    if (tensor_optional(in, n_in, i))
      return op_error_contract(err, CSA_CONTRACT_RATIO4_INPUT, i, -1, "ratio-4-only input %d (%s) is unsupported for ratio-128",
                  i, input_names[i]);
  if (n_out != CSA_OUTPUT_COUNT)
    return op_error_contract(err, CSA_CONTRACT_ARITY_OUTPUTS, -1, -1, "ratio-128 requires exactly 3 outputs, got %d", n_out);
  if (d->format == CSA_CACHE_FP4)
    return op_error_contract(err, CSA_CONTRACT_FP4_FORMAT, -1, -1, "ratio-128 records are f32 or hybrid FP8/BF16, not FP4");
  if (a->head_dim != CSA_HEAD_DIM)
    return op_error_contract(err, CSA_CONTRACT_HEAD_DIM, -1, -1, "ratio-128 requires head_dim=512, got %lld", a->head_dim);
  if (a->qk_rope_head_dim != CSA_ROPE_DIM)
    return op_error_contract(err, CSA_CONTRACT_ROPE_DIM, -1, -1, "ratio-128 requires qk_rope_head_dim=64, got %lld",
                a->qk_rope_head_dim);
  return 0;
}

/* Seed: the require_dtype table of validate_ratio128_claim (seed:2761-2776). */
static int check_dtypes(const tensor *const *in, const csa_dims *d, op_error *err) {
  int i;
  for (i = 0; i <= CSA_IN_HEAD_SINK; i++) {
    dtype want = DTYPE_F32;
    if (i == CSA_IN_PAST_COMPRESSED_KV) want = d->format == CSA_CACHE_F32 ? DTYPE_F32 : DTYPE_U8;
    if (i == CSA_IN_SEQLENS_K) want = DTYPE_I32;
    if (i == CSA_IN_TOTAL_SEQ) want = DTYPE_I64;
    if (in[i]->dt != want)
      return op_error_contract(err, CSA_CONTRACT_DTYPE, i, -1, "input %d (%s) dtype %s unsupported; expected %s", i,
                  input_names[i], dtype_name(in[i]->dt), dtype_name(want));
  }
  return 0;
}

/* One axis rule of require_shape (seed:2929). */
typedef enum axis_kind { AXIS_ANY, AXIS_NONZERO, AXIS_FIXED, AXIS_SAME } axis_kind;
typedef struct axis_rule {
  axis_kind kind;
  long long value; /* AXIS_FIXED: the size; AXIS_SAME: input * 4 + axis */
} axis_rule;
typedef struct shape_rule {
  int rank;
  axis_rule axis[4];
} shape_rule;

#define ANY {AXIS_ANY, 0}
#define NONZERO {AXIS_NONZERO, 0}
#define FIXED(n) {AXIS_FIXED, (n)}
#define SAME(i, ax) {AXIS_SAME, (i) * 4 + (ax)}

/* Seed: require_shape, one input: rank, then (ours) no negative dim, then each axis. */
static int check_shape(const tensor *const *in, int i, const shape_rule *r, op_error *err) {
  const tensor *t = in[i];
  int axis;
  if (t->rank != r->rank)
    return op_error_contract(err, CSA_CONTRACT_RANK, i, -1, "input %d (%s) rank %d unsupported; expected %d", i,
                input_names[i], t->rank, r->rank);
  for (axis = 0; axis < t->rank; axis++)
    if (t->shape[axis] < 0)
      return op_error_contract(err, CSA_CONTRACT_NEGATIVE_DIM, i, axis, "input %d (%s) axis %d is %lld", i, input_names[i],
                  axis, t->shape[axis]);
  for (axis = 0; axis < t->rank; axis++) {
    const axis_rule *ar = &r->axis[axis];
    long long want;
    if (ar->kind == AXIS_NONZERO && t->shape[axis] == 0)
      return op_error_contract(err, CSA_CONTRACT_EMPTY_QUERY, i, axis, "input %d (%s) axis %d must be nonzero", i,
                  input_names[i], axis);
    if (ar->kind != AXIS_FIXED && ar->kind != AXIS_SAME) continue;
    want = ar->kind == AXIS_FIXED ? ar->value : in[ar->value / 4]->shape[ar->value % 4];
    if (t->shape[axis] != want)
      return op_error_contract(err, CSA_CONTRACT_SHAPE, i, axis, "input %d (%s) axis %d is %lld; expected %lld", i,
                  input_names[i], axis, t->shape[axis], want);
  }
  return 0;
}

/* Seed: the require_shape table of validate_ratio128_claim (seed:2778-2805). */
static int check_shapes(const tensor *const *in, long long heads, csa_dims *d, op_error *err) {
  const long long width = d->format == CSA_CACHE_F32 ? CSA_HEAD_DIM : CSA_FP8_RECORD_BYTES;
  const shape_rule rules[CSA_IN_HEAD_SINK + 1] = {
      {4, {ANY, NONZERO, FIXED(heads), FIXED(CSA_HEAD_DIM)}},
      {3, {SAME(0, 0), ANY, FIXED(CSA_HEAD_DIM)}},
      {3, {SAME(0, 0), SAME(0, 1), FIXED(CSA_HEAD_DIM)}},
      {3, {SAME(0, 0), SAME(0, 1), FIXED(CSA_HEAD_DIM)}},
      {2, {FIXED(CSA128_RATIO), FIXED(CSA_HEAD_DIM)}},
      {1, {FIXED(CSA_HEAD_DIM)}},
      {3, {SAME(0, 0), ANY, FIXED(width)}},
      {4, {SAME(0, 0), FIXED(CSA128_RATIO), FIXED(2), FIXED(CSA_HEAD_DIM)}},
      {1, {SAME(0, 0)}},
      {0, {ANY}},
      {1, {FIXED(heads)}},
  };
  int i, rc;
  for (i = 0; i <= CSA_IN_HEAD_SINK; i++)
    if ((rc = check_shape(in, i, &rules[i], err))) return rc;
  d->batch = in[CSA_IN_QUERY]->shape[0];
  d->seq = in[CSA_IN_QUERY]->shape[1];
  d->heads = heads;
  d->dim = CSA_HEAD_DIM;
  d->kv_len = in[CSA_IN_CURRENT_KV]->shape[1];
  d->past_capacity = in[CSA_IN_PAST_COMPRESSED_KV]->shape[1];
  d->record_width = width;
  return 0;
}

/* Seed: validate_attention_bias_claim (seed:2809): dtype, rank, broadcast to [B, heads, S, ?]. */
static int check_bias(const tensor *bias, csa_dims *d, op_error *err) {
  long long target[3];
  int axis, lead;
  if (!bias) return 0;
  if (bias->dt != DTYPE_F32)
    return op_error_contract(err, CSA_CONTRACT_BIAS_DTYPE, CSA_IN_BIAS, -1, "attention_bias dtype %s unsupported; expected f32",
                dtype_name(bias->dt));
  if (bias->rank < 0 || bias->rank > 4)
    return op_error_contract(err, CSA_CONTRACT_BIAS_RANK, CSA_IN_BIAS, -1, "attention_bias rank %d exceeds 4", bias->rank);
  target[0] = d->batch, target[1] = d->heads, target[2] = d->seq;
  lead = 4 - bias->rank;
  for (axis = 0; axis < bias->rank; axis++) {
    long long dim = bias->shape[axis];
    if (dim < 0)
      return op_error_contract(err, CSA_CONTRACT_NEGATIVE_DIM, CSA_IN_BIAS, axis, "attention_bias axis %d is %lld", axis, dim);
    if (lead + axis < 3 && dim != 1 && dim != target[lead + axis])
      return op_error_contract(err, CSA_CONTRACT_BIAS_BROADCAST, CSA_IN_BIAS, axis,
                  "attention_bias axis %d (%lld) does not broadcast to [%lld, %lld, %lld, ?]", axis, dim,
                  target[0], target[1], target[2]);
    d->bias_dims[lead + axis] = dim;
  }
  d->has_bias = 1;
  return 0;
}

/* First axis where t differs from want[0..rank); -1 when all agree. */
static int first_diff_axis(const tensor *t, const long long *want, int rank) {
  int i;
  for (i = 0; i < rank; i++)
    if (t->shape[i] != want[i]) return i;
  return -1;
}

/*
** The outputs (*ours*: the claim does not see them; the launch reads their
** shapes, seed:1563-1567, 1819-1823): dtypes, then Y == query shape, present cache
** [B, Rc, W] with Rc >= 0, present carry == past carry shape.
*/
static int check_outputs(const tensor *const *out, const tensor *const *in, csa_dims *d, op_error *err) {
  const dtype want[CSA_OUTPUT_COUNT] = {DTYPE_F32, in[CSA_IN_PAST_COMPRESSED_KV]->dt, DTYPE_F32};
  const tensor *ref[CSA_OUTPUT_COUNT] = {in[CSA_IN_QUERY], in[CSA_IN_PAST_COMPRESSED_KV], in[CSA_IN_PAST_CARRY]};
  int o, axis;
  for (o = 0; o < CSA_OUTPUT_COUNT; o++) {
    dtype got = out[o] ? out[o]->dt : DTYPE_NONE;
    if (got != want[o])
      return op_error_contract(err, CSA_CONTRACT_OUTPUT_DTYPE, 100 + o, -1, "output %d dtype %s; expected %s", o,
                  dtype_name(got), dtype_name(want[o]));
  }
  for (o = 0; o < CSA_OUTPUT_COUNT; o++) {
    long long shape[4];
    memcpy(shape, ref[o]->shape, sizeof shape);
    if (out[o]->rank != ref[o]->rank)
      return op_error_contract(err, CSA_CONTRACT_OUTPUT_SHAPE, 100 + o, -1, "output %d rank %d; expected %d", o, out[o]->rank,
                  ref[o]->rank);
    if (o == CSA_OUT_PRESENT_COMPRESSED_KV) {
      if (out[o]->shape[1] < 0)
        return op_error_contract(err, CSA_CONTRACT_OUTPUT_SHAPE, 100 + o, 1, "present_compressed_kv capacity %lld < 0",
                    out[o]->shape[1]);
      shape[1] = out[o]->shape[1]; /* the capacity Rc is free */
    }
    axis = first_diff_axis(out[o], shape, out[o]->rank);
    if (axis >= 0)
      return op_error_contract(err, CSA_CONTRACT_OUTPUT_SHAPE, 100 + o, axis, "output %d axis %d is %lld; expected %lld", o, axis,
                  out[o]->shape[axis], shape[axis]);
  }
  d->present_capacity = out[CSA_OUT_PRESENT_COMPRESSED_KV]->shape[1];
  d->score_stride = CSA_DENSE_WINDOW + d->present_capacity;
  return 0;
}

/*
** *Ours*: the kernel reads the bias at candidate column c < 128 + Rc
** (seed:757, 794), so a non-broadcast candidate axis must be that long.
*/
static int check_bias_candidates(const tensor *bias, const csa_dims *d, op_error *err) {
  if (!d->has_bias || bias->rank == 0) return 0;
  if (d->bias_dims[3] != 1 && d->bias_dims[3] != d->score_stride)
    return op_error_contract(err, CSA_CONTRACT_BIAS_CANDIDATES, CSA_IN_BIAS, bias->rank - 1,
                "attention_bias candidate axis %lld must be 1 or 128 + capacity = %lld", d->bias_dims[3],
                d->score_stride);
  return 0;
}

int csa_validate(const csa_attrs *a, const tensor *const *inputs, int n_inputs, const tensor *const *outputs,
                 int n_outputs, csa_dims *d, op_error *err) {
  const tensor *bias;
  int rc, i;
  op_error_clear(err);
  *d = (csa_dims){0};
  for (i = 0; i < 4; i++) d->bias_dims[i] = 1;
  rc = check_attrs(a, d, err);
  if (!rc) rc = check_arity(a, inputs, n_inputs, n_outputs, d, err);
  if (!rc) rc = check_dtypes(inputs, d, err);
  if (!rc) rc = check_shapes(inputs, a->num_heads, d, err);
  if (rc) return rc;
  bias = tensor_optional(inputs, n_inputs, CSA_IN_BIAS);
  rc = check_bias(bias, d, err);
  if (!rc) rc = check_outputs(outputs, inputs, d, err);
  if (!rc) rc = check_bias_candidates(bias, d, err);
  if (rc) return rc;
  /* Seed:1575-1579: scale 0 means 1/sqrt(dim), in f32 (sqrtf is IEEE-exact). */
  d->scale = a->has_scale && a->scale != 0.0f ? a->scale : 1.0f / sqrtf((float)d->dim);
  return 0;
}

/*
** Seed: the cursor arithmetic of both kernels (seed:189-190, 715-729) and
** the host path's checks and current_kv trim (seed:2320-2353).
*/
int csa_validate_cursor(csa_dims *d, const tensor *total, op_error *err) {
  long long t = ((const long long *)total->data)[0];
  op_error_clear(err);
  if (t < 0)
    return op_error_contract(err, CSA_CONTRACT_TOTAL_NEGATIVE, CSA_IN_TOTAL_SEQ, -1, "total_sequence_length %lld < 0", t);
  if (t < d->seq)
    return op_error_contract(err, CSA_CONTRACT_TOTAL_SHORT, CSA_IN_TOTAL_SEQ, -1,
                "total_sequence_length %lld is below the query length %lld", t, d->seq);
  d->total = t;
  d->start = t - d->seq;
  d->past_records = d->start / CSA128_RATIO;
  d->present_records = t / CSA128_RATIO;
  if (d->past_capacity < d->past_records)
    return op_error_contract(err, CSA_CONTRACT_PAST_CAPACITY, CSA_IN_PAST_COMPRESSED_KV, 1,
                "past_compressed_kv holds %lld records; the cursor needs %lld", d->past_capacity,
                d->past_records);
  if (d->present_capacity < d->present_records)
    return op_error_contract(err, CSA_CONTRACT_PRESENT_CAPACITY, 100 + CSA_OUT_PRESENT_COMPRESSED_KV, 1,
                "present_compressed_kv holds %lld records; the cursor needs %lld", d->present_capacity,
                d->present_records);
  d->kv_used = d->kv_len < t ? d->kv_len : t;
  d->kv_base = t - d->kv_used;
  return 0;
}

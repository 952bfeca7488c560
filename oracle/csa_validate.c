/*
** csa_validate.c: the CSA contract (claim-time checks) of both compression
** ratios, and the execute-time cursor rules of total_sequence_length.
**
** Source: seed 003_9308a65268dfd821.txt, unsupported_reason (seed:2562),
** validate_ratio4_claim (seed:2617-2727), validate_ratio128_claim
** (seed:2729-2807), validate_attention_bias_claim (seed:2809),
** require_fixed_contract / required_attr / require_dtype / require_shape
** (seed:2866-2952), and the launch code's cursor arithmetic (seed:189-190,
** 300-301, 409-410, 2320-2353).  The checks run in the order of the enum
** csa_contract (oracle/csa.h) and of oracle/SPEC.md's tables C1 (ratio 128)
** and R1 (ratio 4); the first failure is the one reported.  The CPU
** factory's own attribute checks are not in the seed; the ones here are
** decisions, marked *ours* in SPEC.md.  Nothing here reads float values;
** the cursor check reads the one i64 of input 9.
*/
#include "oracle/csa.h"

#include "oracle/numerics/numerics.h"

#include <math.h>
#include <string.h>

static const char *const input_names[CSA_INPUT_COUNT] = {
    "query",          "current_kv",           "compressor_kv",        "compressor_gate",
    "compressor_ape", "compressor_norm",      "past_compressed_kv",   "past_compression_carry",
    "seqlens_k",      "total_sequence_length", "head_sink",           "index_query",
    "index_weight",   "index_compressor_kv",  "index_compressor_gate", "index_compressor_ape",
    "index_compressor_norm", "past_index_key", "past_index_carry",    "attention_bias"};

/* clang-format off */
static const char *const contract_names[] = {
    "none",           "ratio",          "cache_format",    "num_heads",       "scale",
    "arity_inputs",   "required_input", "ratio4_input",    "index_input",     "arity_outputs",
    "index_head_dim", "ratio4_format",  "fp4_format",      "head_dim",        "rope_dim",
    "dtype",          "index_heads",    "topk",            "rank",            "negative_dim",
    "empty_query",    "shape",          "bias_dtype",      "bias_rank",       "bias_broadcast",
    "output_dtype",   "output_shape",   "bias_candidates", "total_negative",  "total_short",
    "past_capacity",  "present_capacity"};
/* clang-format on */
_Static_assert(sizeof contract_names / sizeof contract_names[0] == CSA_CONTRACT_COUNT, "one name per contract code");

const char *csa_contract_name(int code) {
  return code >= 0 && code < CSA_CONTRACT_COUNT ? contract_names[code] : "?";
}

static csa_cache_format parse_format(const char *name) {
  if (!name || !strcmp(name, "f32")) return CSA_CACHE_F32;
  if (!strcmp(name, "fp8_e4m3_block64")) return CSA_CACHE_FP8;
  if (!strcmp(name, "fp4_e2m1_block32")) return CSA_CACHE_FP4;
  return CSA_CACHE_UNKNOWN;
}

/* The last input the ratio reads the dtype and shape of: 10 (ratio 128) or 18 (ratio 4). */
static int last_checked_input(const csa_dims *d) {
  return d->ratio == CSA4_RATIO ? CSA_IN_INDEX_LAST : CSA_IN_HEAD_SINK;
}

/* Seed: the CPU factory's dry run (seed:2573), whose checks the seed does not show. */
static int check_attrs(const csa_attrs *a, csa_dims *d, op_error *err) {
  if (a->compression_ratio != CSA4_RATIO && a->compression_ratio != CSA128_RATIO)
    return op_error_contract(err, CSA_CONTRACT_RATIO, -1, -1, "compression_ratio %lld unsupported (expected 4 or 128)",
                             a->compression_ratio);
  d->ratio = a->compression_ratio;
  d->format = parse_format(a->cache_format);
  if (d->format == CSA_CACHE_UNKNOWN)
    return op_error_contract(err, CSA_CONTRACT_CACHE_FORMAT, -1, -1, "cache_format '%s' unknown", a->cache_format);
  if (a->num_heads <= 0)
    return op_error_contract(err, CSA_CONTRACT_NUM_HEADS, -1, -1, "num_heads %lld must be > 0", a->num_heads);
  if (a->has_scale && nx_f32_bits(nx_f32_abs(a->scale)) >= 0x7f800000u /* inf or NaN? */)
    return op_error_contract(err, CSA_CONTRACT_SCALE, -1, -1, "scale %a must be finite", (double)a->scale);
  return 0;
}

/*
** Seed: the arity parts of validate_ratio4_claim (seed:2623-2631) and
** validate_ratio128_claim (seed:2735-2747); the input count bounds are ours.
*/
static int check_arity(const tensor *const *in, int n_in, int n_out, const csa_dims *d, op_error *err) {
  const int r4 = d->ratio == CSA4_RATIO, min_in = r4 ? CSA_IN_INDEX_LAST + 1 : CSA_IN_HEAD_SINK + 1;
  int i;
  if (n_in < min_in || n_in > CSA_INPUT_COUNT)
    return op_error_contract(err, CSA_CONTRACT_ARITY_INPUTS, -1, -1, "ratio-%lld expects %d to 20 inputs, got %d",
                             d->ratio, min_in, n_in);
  for (i = 0; i <= CSA_IN_HEAD_SINK; i++)
    if (!tensor_optional(in, n_in, i))
      return op_error_contract(err, CSA_CONTRACT_REQUIRED_INPUT, i, -1, "required input %d (%s) is absent", i,
                               input_names[i]);
  for (i = CSA_IN_INDEX_FIRST; i <= CSA_IN_INDEX_LAST; i++) {
    const int present = tensor_optional(in, n_in, i) != NULL;
    if (!r4 && present)
      return op_error_contract(err, CSA_CONTRACT_RATIO4_INPUT, i, -1,
                               "ratio-4-only input %d (%s) is unsupported for ratio-128", i, input_names[i]);
    if (r4 && !present)
      return op_error_contract(err, CSA_CONTRACT_INDEX_INPUT, i, -1,
                               "ratio-4 requires all eight index inputs (11..18); input %d (%s) is absent", i,
                               input_names[i]);
  }
  if (!r4 && n_out != CSA128_OUTPUT_COUNT)
    return op_error_contract(err, CSA_CONTRACT_ARITY_OUTPUTS, -1, -1, "ratio-128 requires exactly 3 outputs, got %d",
                             n_out);
  if (r4 && n_out != CSA_OUT_SELECTED && n_out != CSA_OUTPUT_MAX)
    return op_error_contract(err, CSA_CONTRACT_ARITY_OUTPUTS, -1, -1, "ratio-4 requires 5 or 6 outputs, got %d",
                             n_out);
  return 0;
}

/* Seed: the format checks of both claims (seed:2632-2644, 2748-2753) and require_fixed_contract (seed:2866). */
static int check_fixed_attrs(const csa_attrs *a, const csa_dims *d, op_error *err) {
  if (d->ratio == CSA4_RATIO) {
    if (a->index_head_dim != CSA4_INDEX_DIM)
      return op_error_contract(err, CSA_CONTRACT_INDEX_HEAD_DIM, -1, -1,
                               "ratio-4 requires index_head_dim=128, got %lld", a->index_head_dim);
    if (d->format != CSA_CACHE_FP8)
      return op_error_contract(err, CSA_CONTRACT_RATIO4_FORMAT, -1, -1,
                               "ratio-4 requires cache_format='fp8_e4m3_block64', got '%s'",
                               a->cache_format ? a->cache_format : "f32");
  } else if (d->format == CSA_CACHE_FP4) {
    return op_error_contract(err, CSA_CONTRACT_FP4_FORMAT, -1, -1,
                             "ratio-128 records are f32 or hybrid FP8/BF16, not FP4");
  }
  if (a->head_dim != CSA_HEAD_DIM)
    return op_error_contract(err, CSA_CONTRACT_HEAD_DIM, -1, -1, "ratio-%lld requires head_dim=512, got %lld", d->ratio,
                             a->head_dim);
  if (a->qk_rope_head_dim != CSA_ROPE_DIM)
    return op_error_contract(err, CSA_CONTRACT_ROPE_DIM, -1, -1, "ratio-%lld requires qk_rope_head_dim=64, got %lld",
                             d->ratio, a->qk_rope_head_dim);
  return 0;
}

/* Seed: the require_dtype tables (seed:2646-2668, 2761-2776). */
static int check_dtypes(const tensor *const *in, const csa_dims *d, op_error *err) {
  int i;
  for (i = 0; i <= last_checked_input(d); i++) {
    dtype want = DTYPE_F32;
    if (i == CSA_IN_PAST_COMPRESSED_KV) want = d->format == CSA_CACHE_F32 ? DTYPE_F32 : DTYPE_U8;
    if (i == CSA_IN_SEQLENS_K) want = DTYPE_I32;
    if (i == CSA_IN_TOTAL_SEQ) want = DTYPE_I64;
    if (i == CSA_IN_PAST_INDEX_KEY) want = DTYPE_U8;
    if (in[i]->dt != want)
      return op_error_contract(err, CSA_CONTRACT_DTYPE, i, -1, "input %d (%s) dtype %s unsupported; expected %s", i,
                               input_names[i], dtype_name(in[i]->dt), dtype_name(want));
  }
  return 0;
}

/* Seed: required_attr("index_num_heads") (seed:2670); index_topk is ours (SPEC.md R9). */
static int check_index_attrs(const csa_attrs *a, csa_dims *d, op_error *err) {
  if (d->ratio != CSA4_RATIO) return 0;
  if (a->index_num_heads <= 0)
    return op_error_contract(err, CSA_CONTRACT_INDEX_HEADS, -1, -1, "index_num_heads %lld must be > 0",
                             a->index_num_heads);
  if (a->index_topk < 1 || a->index_topk > CSA4_TOPK_MAX)
    return op_error_contract(err, CSA_CONTRACT_TOPK, -1, -1,
                             "index_topk %lld must be in 1..%d (the pooled selection capacity)",
                             a->index_topk, CSA4_TOPK_MAX);
  d->index_heads = a->index_num_heads;
  d->index_dim = CSA4_INDEX_DIM;
  d->topk = a->index_topk;
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
      return op_error_contract(err, CSA_CONTRACT_NEGATIVE_DIM, i, axis, "input %d (%s) axis %d is %lld", i,
                               input_names[i], axis, t->shape[axis]);
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

/*
** Seed: the require_shape tables of validate_ratio4_claim (seed:2671-2725)
** and validate_ratio128_claim (seed:2778-2805), which differ only in the
** compressor geometry: ratio 128 has 128 slots over a 512-wide source,
** ratio 4 has 8 slots (4 ape rows) over a 1024-wide one.
*/
static int check_shapes(const tensor *const *in, long long heads, csa_dims *d, op_error *err) {
  const int r4 = d->ratio == CSA4_RATIO;
  const long long width = d->format == CSA_CACHE_F32 ? CSA_HEAD_DIM : CSA_FP8_RECORD_BYTES;
  const long long source = r4 ? CSA4_SOURCE_WIDTH : CSA_HEAD_DIM, slots = r4 ? CSA4_SLOTS : CSA128_RATIO;
  const long long ape_rows = r4 ? CSA4_RATIO : CSA128_RATIO, ih = d->index_heads;
  const shape_rule rules[CSA_IN_INDEX_LAST + 1] = {
      {4, {ANY, NONZERO, FIXED(heads), FIXED(CSA_HEAD_DIM)}},
      {3, {SAME(0, 0), ANY, FIXED(CSA_HEAD_DIM)}},
      {3, {SAME(0, 0), SAME(0, 1), FIXED(source)}},
      {3, {SAME(0, 0), SAME(0, 1), FIXED(source)}},
      {2, {FIXED(ape_rows), FIXED(source)}},
      {1, {FIXED(CSA_HEAD_DIM)}},
      {3, {SAME(0, 0), ANY, FIXED(width)}},
      {4, {SAME(0, 0), FIXED(slots), FIXED(2), FIXED(source)}},
      {1, {SAME(0, 0)}},
      {0, {ANY}},
      {1, {FIXED(heads)}},
      /* ratio 4's index stream */
      {4, {SAME(0, 0), SAME(0, 1), FIXED(ih), FIXED(CSA4_INDEX_DIM)}},
      {3, {SAME(0, 0), SAME(0, 1), FIXED(ih)}},
      {3, {SAME(0, 0), SAME(0, 1), FIXED(CSA4_INDEX_SOURCE)}},
      {3, {SAME(0, 0), SAME(0, 1), FIXED(CSA4_INDEX_SOURCE)}},
      {2, {FIXED(CSA4_RATIO), FIXED(CSA4_INDEX_SOURCE)}},
      {1, {FIXED(CSA4_INDEX_DIM)}},
      {3, {SAME(0, 0), ANY, FIXED(CSA4_INDEX_RECORD_BYTES)}},
      {4, {SAME(0, 0), FIXED(CSA4_SLOTS), FIXED(2), FIXED(CSA4_INDEX_SOURCE)}},
  };
  int i, rc;
  for (i = 0; i <= last_checked_input(d); i++)
    if ((rc = check_shape(in, i, &rules[i], err))) return rc;
  d->batch = in[CSA_IN_QUERY]->shape[0];
  d->seq = in[CSA_IN_QUERY]->shape[1];
  d->heads = heads;
  d->dim = CSA_HEAD_DIM;
  d->kv_len = in[CSA_IN_CURRENT_KV]->shape[1];
  d->past_capacity = in[CSA_IN_PAST_COMPRESSED_KV]->shape[1];
  d->record_width = width;
  if (r4) d->index_past_capacity = in[CSA_IN_PAST_INDEX_KEY]->shape[1];
  return 0;
}

/* Seed: validate_attention_bias_claim (seed:2809): dtype, rank, broadcast to [B, heads, S, ?]. */
static int check_bias(const tensor *bias, csa_dims *d, op_error *err) {
  long long target[3];
  int axis, lead;
  if (!bias) return 0;
  if (bias->dt != DTYPE_F32)
    return op_error_contract(err, CSA_CONTRACT_BIAS_DTYPE, CSA_IN_BIAS, -1,
                             "attention_bias dtype %s unsupported; expected f32", dtype_name(bias->dt));
  if (bias->rank < 0 || bias->rank > 4)
    return op_error_contract(err, CSA_CONTRACT_BIAS_RANK, CSA_IN_BIAS, -1, "attention_bias rank %d exceeds 4",
                             bias->rank);
  target[0] = d->batch, target[1] = d->heads, target[2] = d->seq;
  lead = 4 - bias->rank;
  for (axis = 0; axis < bias->rank; axis++) {
    long long dim = bias->shape[axis];
    if (dim < 0)
      return op_error_contract(err, CSA_CONTRACT_NEGATIVE_DIM, CSA_IN_BIAS, axis, "attention_bias axis %d is %lld",
                               axis, dim);
    if (lead + axis < 3 && dim != 1 && dim != target[lead + axis])
      return op_error_contract(err, CSA_CONTRACT_BIAS_BROADCAST, CSA_IN_BIAS, axis,
                               "attention_bias axis %d (%lld) does not broadcast to [%lld, %lld, %lld, ?]", axis, dim,
                               target[0], target[1], target[2]);
    d->bias_dims[lead + axis] = dim;
  }
  d->has_bias = 1;
  return 0;
}

/* What an output must be: a dtype and a shape, one axis of which may be a free capacity (>= 0). */
typedef struct output_rule {
  dtype dt;
  int rank, free_axis; /* free_axis -1: none */
  long long shape[4];
} output_rule;

static output_rule output_like(dtype dt, const tensor *ref, int free_axis) {
  output_rule r;
  r.dt = dt, r.rank = ref->rank, r.free_axis = free_axis;
  memcpy(r.shape, ref->shape, sizeof r.shape);
  return r;
}

/*
** The outputs (*ours*: the claim does not see them; the launches read their
** shapes, seed:1563-1567, 1687-1692, 1819-1823): every dtype first, then
** every shape.  Y = query; present caches [B, capacity >= 0, width] of the
** past's dtype; present carries = past carries; selected_indices
** [B, IH, S, index_topk] i32.
*/
static int check_outputs(const tensor *const *out, int n_out, const tensor *const *in, csa_dims *d, op_error *err) {
  output_rule want[CSA_OUTPUT_MAX];
  int o, axis;
  want[CSA_OUT_Y] = output_like(DTYPE_F32, in[CSA_IN_QUERY], -1);
  want[CSA_OUT_PRESENT_COMPRESSED_KV] =
      output_like(in[CSA_IN_PAST_COMPRESSED_KV]->dt, in[CSA_IN_PAST_COMPRESSED_KV], 1);
  want[CSA_OUT_PRESENT_CARRY] = output_like(DTYPE_F32, in[CSA_IN_PAST_CARRY], -1);
  if (d->ratio == CSA4_RATIO) {
    const long long sel[4] = {d->batch, d->index_heads, d->seq, d->topk};
    want[CSA_OUT_PRESENT_INDEX_KEY] = output_like(DTYPE_U8, in[CSA_IN_PAST_INDEX_KEY], 1);
    want[CSA_OUT_PRESENT_INDEX_CARRY] = output_like(DTYPE_F32, in[CSA_IN_PAST_INDEX_CARRY], -1);
    want[CSA_OUT_SELECTED].dt = DTYPE_I32, want[CSA_OUT_SELECTED].rank = 4, want[CSA_OUT_SELECTED].free_axis = -1;
    memcpy(want[CSA_OUT_SELECTED].shape, sel, sizeof sel);
  }
  for (o = 0; o < n_out; o++) {
    dtype got = out[o] ? out[o]->dt : DTYPE_NONE;
    if (got != want[o].dt)
      return op_error_contract(err, CSA_CONTRACT_OUTPUT_DTYPE, 100 + o, -1, "output %d dtype %s; expected %s", o,
                               dtype_name(got), dtype_name(want[o].dt));
  }
  for (o = 0; o < n_out; o++) {
    output_rule *w = &want[o];
    if (out[o]->rank != w->rank)
      return op_error_contract(err, CSA_CONTRACT_OUTPUT_SHAPE, 100 + o, -1, "output %d rank %d; expected %d", o,
                               out[o]->rank, w->rank);
    if (w->free_axis >= 0) {
      if (out[o]->shape[w->free_axis] < 0)
        return op_error_contract(err, CSA_CONTRACT_OUTPUT_SHAPE, 100 + o, w->free_axis, "output %d capacity %lld < 0",
                                 o, out[o]->shape[w->free_axis]);
      w->shape[w->free_axis] = out[o]->shape[w->free_axis];
    }
    for (axis = 0; axis < w->rank; axis++)
      if (out[o]->shape[axis] != w->shape[axis])
        return op_error_contract(err, CSA_CONTRACT_OUTPUT_SHAPE, 100 + o, axis,
                                 "output %d axis %d is %lld; expected %lld", o, axis, out[o]->shape[axis],
                                 w->shape[axis]);
  }
  d->present_capacity = out[CSA_OUT_PRESENT_COMPRESSED_KV]->shape[1];
  if (d->ratio == CSA4_RATIO) {
    d->index_present_capacity = out[CSA_OUT_PRESENT_INDEX_KEY]->shape[1];
    d->has_selected = n_out == CSA_OUTPUT_MAX;
  }
  /* the candidate axis (seed:1565, 1697): the dense window, then every record or the selection */
  d->score_stride = CSA_DENSE_WINDOW + (d->ratio == CSA4_RATIO ? d->topk : d->present_capacity);
  return 0;
}

/*
** *Ours*: the kernels read the bias at candidate column c < score_stride
** (seed:757, 794, 931), so a non-broadcast candidate axis must be that long.
*/
static int check_bias_candidates(const tensor *bias, const csa_dims *d, op_error *err) {
  if (!d->has_bias || bias->rank == 0) return 0;
  if (d->bias_dims[3] != 1 && d->bias_dims[3] != d->score_stride)
    return op_error_contract(err, CSA_CONTRACT_BIAS_CANDIDATES, CSA_IN_BIAS, bias->rank - 1,
                             "attention_bias candidate axis %lld must be 1 or 128 + %s = %lld", d->bias_dims[3],
                             d->ratio == CSA4_RATIO ? "index_topk" : "capacity", d->score_stride);
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
  if (!rc) rc = check_arity(inputs, n_inputs, n_outputs, d, err);
  if (!rc) rc = check_fixed_attrs(a, d, err);
  if (!rc) rc = check_dtypes(inputs, d, err);
  if (!rc) rc = check_index_attrs(a, d, err);
  if (!rc) rc = check_shapes(inputs, a->num_heads, d, err);
  if (rc) return rc;
  bias = tensor_optional(inputs, n_inputs, CSA_IN_BIAS);
  rc = check_bias(bias, d, err);
  if (!rc) rc = check_outputs(outputs, n_outputs, inputs, d, err);
  if (!rc) rc = check_bias_candidates(bias, d, err);
  if (rc) return rc;
  /* Seed:1575-1579: scale 0 means 1/sqrt(dim), in f32 (sqrtf is IEEE-exact). */
  d->scale = a->has_scale && a->scale != 0.0f ? a->scale : 1.0f / sqrtf((float)d->dim);
  return 0;
}

/* A capacity rule of the cursor: the cache must hold `need` records. */
static int check_capacity(long long have, long long need, int code, int where, const char *name, op_error *err) {
  if (have >= need) return 0;
  return op_error_contract(err, code, where, 1, "%s holds %lld records; the cursor needs %lld", name, have, need);
}

/*
** Seed: the cursor arithmetic of the kernels (seed:189-190, 300-301,
** 409-410, 715-729, 879-889) and the host path's checks and current_kv trim
** (seed:2320-2353).  Ratio 4 checks the main cache, then the index key.
*/
int csa_validate_cursor(csa_dims *d, const tensor *total, op_error *err) {
  const int r4 = d->ratio == CSA4_RATIO;
  long long t = ((const long long *)total->data)[0];
  int rc;
  op_error_clear(err);
  if (t < 0)
    return op_error_contract(err, CSA_CONTRACT_TOTAL_NEGATIVE, CSA_IN_TOTAL_SEQ, -1, "total_sequence_length %lld < 0",
                             t);
  if (t < d->seq)
    return op_error_contract(err, CSA_CONTRACT_TOTAL_SHORT, CSA_IN_TOTAL_SEQ, -1,
                             "total_sequence_length %lld is below the query length %lld", t, d->seq);
  d->total = t;
  d->start = t - d->seq;
  d->past_records = d->start / d->ratio;
  d->present_records = t / d->ratio;
  rc = check_capacity(d->past_capacity, d->past_records, CSA_CONTRACT_PAST_CAPACITY, CSA_IN_PAST_COMPRESSED_KV,
                      "past_compressed_kv", err);
  if (!rc && r4)
    rc = check_capacity(d->index_past_capacity, d->past_records, CSA_CONTRACT_PAST_CAPACITY, CSA_IN_PAST_INDEX_KEY,
                        "past_index_key", err);
  if (!rc)
    rc = check_capacity(d->present_capacity, d->present_records, CSA_CONTRACT_PRESENT_CAPACITY,
                        100 + CSA_OUT_PRESENT_COMPRESSED_KV, "present_compressed_kv", err);
  if (!rc && r4)
    rc = check_capacity(d->index_present_capacity, d->present_records, CSA_CONTRACT_PRESENT_CAPACITY,
                        100 + CSA_OUT_PRESENT_INDEX_KEY, "present_index_key", err);
  if (rc) return rc;
  d->kv_used = d->kv_len < t ? d->kv_len : t;
  d->kv_base = t - d->kv_used;
  return 0;
}

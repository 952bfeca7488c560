/*
** csa128_materialize.c: the tensors of one step of a ratio-128 case (see
** csa128_cases.h "Tensors"): the plan of the valid step, the one
** csa128.contract mutation on top of it, the byte budget, the fills (the
** synthetic past records and carry of csa128.state, junk bytes for the
** tensors a mutation breaks), and materialize / release.
*/
#include "cases/csa128_cases_internal.h"

#include "cases/fill.h"
#include "cases/rng.h"
#include "cases/spec_text.h"
#include "oracle/numerics/numerics.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#define CARRY_FLOATS (CSA128_RATIO * 2 * CSA_HEAD_DIM)

/* Derived sizes. */
static long long step_seq(const csa_case *c, int step) { return step == 0 ? c->prefill : 1; }
static long long step_total(const csa_case *c, int step) { return c->start + c->prefill + step; }
static long long case_width(const csa_case *c) {
  return c->format == CSA_CACHE_FP8 ? CSA_FP8_RECORD_BYTES : CSA_HEAD_DIM;
}
static dtype case_cache_dt(const csa_case *c) { return c->format == CSA_CACHE_FP8 ? DTYPE_U8 : DTYPE_F32; }

/* ------------------------------------------------------------ the plan */

/* One step's tensors before allocation, and what the operator is told. */
typedef struct csa_plan {
  tensor in[CSA_INPUT_COUNT];
  tensor out[CSA_OUTPUT_COUNT];
  unsigned char junk_in[CSA_INPUT_COUNT], junk_out[CSA_OUTPUT_COUNT]; /* mutated: junk bytes */
  int n_in, n_out;
  long long total; /* the value input 9 holds */
  csa_attrs attrs;
} csa_plan;

/* The valid step the spec's tokens describe. */
static void plan_build(const csa_case *c, int step, csa_plan *p) {
  long long B = c->batch, S = step_seq(c, step), H = c->heads, total = step_total(c, step);
  long long L = c->window < total ? c->window : total, W = case_width(c), R = c->capacity;
  memset(p, 0, sizeof *p);
  csa_case_set_shape(&p->in[CSA_IN_QUERY], DTYPE_F32, 4, B, S, H, CSA_HEAD_DIM);
  csa_case_set_shape(&p->in[CSA_IN_CURRENT_KV], DTYPE_F32, 3, B, L, CSA_HEAD_DIM, 0);
  csa_case_set_shape(&p->in[CSA_IN_COMPRESSOR_KV], DTYPE_F32, 3, B, S, CSA_HEAD_DIM, 0);
  csa_case_set_shape(&p->in[CSA_IN_COMPRESSOR_GATE], DTYPE_F32, 3, B, S, CSA_HEAD_DIM, 0);
  csa_case_set_shape(&p->in[CSA_IN_COMPRESSOR_APE], DTYPE_F32, 2, CSA128_RATIO, CSA_HEAD_DIM, 0, 0);
  csa_case_set_shape(&p->in[CSA_IN_COMPRESSOR_NORM], DTYPE_F32, 1, CSA_HEAD_DIM, 0, 0, 0);
  csa_case_set_shape(&p->in[CSA_IN_PAST_COMPRESSED_KV], case_cache_dt(c), 3, B, R, W, 0);
  csa_case_set_shape(&p->in[CSA_IN_PAST_CARRY], DTYPE_F32, 4, B, CSA128_RATIO, 2, CSA_HEAD_DIM);
  csa_case_set_shape(&p->in[CSA_IN_SEQLENS_K], DTYPE_I32, 1, B, 0, 0, 0);
  csa_case_set_shape(&p->in[CSA_IN_TOTAL_SEQ], DTYPE_I64, 0, 0, 0, 0, 0);
  csa_case_set_shape(&p->in[CSA_IN_HEAD_SINK], DTYPE_F32, 1, H, 0, 0, 0);
  p->n_in = CSA_IN_HEAD_SINK + 1;
  if (c->bias_rank >= 0) {
    csa_case_set_shape(&p->in[CSA_IN_BIAS], DTYPE_F32, c->bias_rank, c->bias_shape[0], c->bias_shape[1],
                       c->bias_shape[2], c->bias_shape[3]);
    p->n_in = CSA_INPUT_COUNT;
  }
  csa_case_set_shape(&p->out[CSA_OUT_Y], DTYPE_F32, 4, B, S, H, CSA_HEAD_DIM);
  csa_case_set_shape(&p->out[CSA_OUT_PRESENT_COMPRESSED_KV], case_cache_dt(c), 3, B, R, W, 0);
  csa_case_set_shape(&p->out[CSA_OUT_PRESENT_CARRY], DTYPE_F32, 4, B, CSA128_RATIO, 2, CSA_HEAD_DIM);
  p->n_out = CSA_OUTPUT_COUNT;
  p->total = total;
  p->attrs.compression_ratio = CSA128_RATIO;
  p->attrs.cache_format = c->format == CSA_CACHE_FP8 ? "fp8_e4m3_block64" : "f32";
  p->attrs.num_heads = H;
  p->attrs.head_dim = CSA_HEAD_DIM;
  p->attrs.qk_rope_head_dim = CSA_ROPE_DIM;
  p->attrs.has_scale = c->has_scale;
  p->attrs.scale = c->scale;
}

/*
** csa128.contract: the one change that makes the checks (oracle/csa.h's
** order) stop at c->contract, every earlier check still passing.
*/
static void plan_mutate(const csa_case *c, csa_plan *p) {
  tensor *bias = &p->in[CSA_IN_BIAS];
  long long d4[4];
  switch (c->contract) {
  case CSA_CONTRACT_RATIO: p->attrs.compression_ratio = 64; break;
  case CSA_CONTRACT_CACHE_FORMAT: p->attrs.cache_format = "fp8_e5m2"; break;
  case CSA_CONTRACT_NUM_HEADS: p->attrs.num_heads = 0; break;
  case CSA_CONTRACT_SCALE: p->attrs.has_scale = 1, p->attrs.scale = nx_f32_nan(); break;
  case CSA_CONTRACT_ARITY_INPUTS: p->n_in = CSA_IN_HEAD_SINK; break; /* 10: head_sink dropped */
  case CSA_CONTRACT_REQUIRED_INPUT: /* seqlens_k: required, though never read */
    memset(&p->in[CSA_IN_SEQLENS_K], 0, sizeof(tensor));
    break;
  case CSA_CONTRACT_RATIO4_INPUT: /* index_query present, shaped as the ratio-4 path would */
    csa_case_set_shape(&p->in[CSA_IN_INDEX_FIRST], DTYPE_F32, 4, c->batch, c->prefill, 1, CSA128_RATIO);
    p->junk_in[CSA_IN_INDEX_FIRST] = 1;
    p->n_in = CSA_INPUT_COUNT;
    break;
  case CSA_CONTRACT_ARITY_OUTPUTS: p->n_out = 2; break;
  case CSA_CONTRACT_FP4_FORMAT: p->attrs.cache_format = "fp4_e2m1_block32"; break;
  case CSA_CONTRACT_HEAD_DIM: p->attrs.head_dim = 256; break;
  case CSA_CONTRACT_ROPE_DIM: p->attrs.qk_rope_head_dim = 0; break; /* absent */
  case CSA_CONTRACT_DTYPE:
    p->in[CSA_IN_SEQLENS_K].dt = DTYPE_I64;
    p->junk_in[CSA_IN_SEQLENS_K] = 1;
    break;
  case CSA_CONTRACT_RANK:
    csa_case_set_shape(&p->in[CSA_IN_HEAD_SINK], DTYPE_F32, 2, 1, c->heads, 0, 0);
    p->junk_in[CSA_IN_HEAD_SINK] = 1;
    break;
  case CSA_CONTRACT_NEGATIVE_DIM: p->in[CSA_IN_CURRENT_KV].shape[1] = -1; break;
  case CSA_CONTRACT_EMPTY_QUERY: p->in[CSA_IN_QUERY].shape[1] = 0; break;
  case CSA_CONTRACT_SHAPE:
    p->in[CSA_IN_COMPRESSOR_APE].shape[0] = CSA128_RATIO - 1;
    p->junk_in[CSA_IN_COMPRESSOR_APE] = 1;
    break;
  case CSA_CONTRACT_BIAS_DTYPE:
    bias->dt = DTYPE_F16;
    p->junk_in[CSA_IN_BIAS] = 1;
    break;
  case CSA_CONTRACT_BIAS_RANK: /* rank 5 does not fit a tensor; -1 breaks the same rule */
    csa_case_set_shape(bias, DTYPE_F32, -1, 0, 0, 0, 0);
    p->junk_in[CSA_IN_BIAS] = 1;
    break;
  case CSA_CONTRACT_BIAS_BROADCAST:
    csa128_bias_dims4(c, d4);
    csa_case_set_shape(bias, DTYPE_F32, 4, c->batch + 1, d4[1], d4[2], d4[3]);
    p->junk_in[CSA_IN_BIAS] = 1;
    break;
  case CSA_CONTRACT_OUTPUT_DTYPE:
    p->out[CSA_OUT_Y].dt = DTYPE_F16;
    p->junk_out[CSA_OUT_Y] = 1;
    break;
  case CSA_CONTRACT_OUTPUT_SHAPE: p->out[CSA_OUT_Y].shape[3] = CSA_HEAD_DIM / 2; break;
  case CSA_CONTRACT_BIAS_CANDIDATES:
    if (bias->rank == 0) bias->rank = 1;
    bias->shape[bias->rank - 1] = CSA_DENSE_WINDOW + c->capacity + 1;
    p->junk_in[CSA_IN_BIAS] = 1;
    break;
  case CSA_CONTRACT_TOTAL_NEGATIVE: p->total = -1; break;
  case CSA_CONTRACT_TOTAL_SHORT: p->total = c->prefill - 1; break;
  case CSA_CONTRACT_PAST_CAPACITY:
    p->in[CSA_IN_PAST_COMPRESSED_KV].shape[1] = c->start / CSA128_RATIO - 1;
    break;
  case CSA_CONTRACT_PRESENT_CAPACITY: /* the bias's candidate axis follows the capacity */
    p->out[CSA_OUT_PRESENT_COMPRESSED_KV].shape[1] = p->total / CSA128_RATIO - 1;
    if (bias->dt != DTYPE_NONE && bias->rank > 0 && bias->shape[bias->rank - 1] != 1)
      bias->shape[bias->rank - 1] = CSA_DENSE_WINDOW + p->total / CSA128_RATIO - 1;
    break;
  default: break;
  }
}

/* Bytes the plan's tensors take (a negative dim counts nothing); -1 on overflow. */
static int plan_bytes(const csa_plan *p, unsigned long long *total) {
  unsigned long long in, out;
  if (csa_case_bytes(p->in, CSA_INPUT_COUNT, &in) || csa_case_bytes(p->out, CSA_OUTPUT_COUNT, &out) ||
      in > ULLONG_MAX - out)
    return -1;
  *total = in + out;
  return 0;
}

/* ----------------------------------------------------------- the fills */

static uint64_t bits_at(const csa_case *c, uint32_t stream, uint32_t step, uint64_t i) {
  return cases_rng_u64(c->seed, stream, step, i);
}

/*
** A synthetic record k of batch b, written as the oracle writes one
** (csa128.c record_write): FP8 blocks plus the bf16 tail, or that record
** dequantized.
*/
static void past_record(const csa_case *c, long long b, long long k, unsigned char *dst) {
  float rec[CSA_HEAD_DIM];
  nx_u8 block[NX_FP8_BLOCK_BYTES];
  uint64_t base = ((uint64_t)k * (uint64_t)c->batch + (uint64_t)b) * CSA_HEAD_DIM;
  int d, blk;
  for (d = 0; d < CSA_HEAD_DIM; d++) rec[d] = cases_rng_normalish(bits_at(c, CSA_STREAM_PAST, 0, base + (uint64_t)d));
  for (d = CSA_NOPE_DIM; d < CSA_HEAD_DIM; d++) rec[d] = nx_bf16_round(rec[d]);
  if (c->format == CSA_CACHE_FP8) {
    for (blk = 0; blk < CSA_FP8_BLOCKS; blk++) nx_fp8_block64_quantize(rec + blk * NX_FP8_BLOCK, dst + blk * NX_FP8_BLOCK_BYTES);
    for (d = 0; d < CSA_ROPE_DIM; d++) {
      nx_u16 h = nx_bf16_round_bits(rec[CSA_NOPE_DIM + d]);
      dst[455 + 2 * d] = (unsigned char)(h & 0xffu);
      dst[456 + 2 * d] = (unsigned char)(h >> 8);
    }
    return;
  }
  for (blk = 0; blk < CSA_FP8_BLOCKS; blk++) {
    nx_fp8_block64_quantize(rec + blk * NX_FP8_BLOCK, block);
    nx_fp8_block64_dequantize(block, rec + blk * NX_FP8_BLOCK);
  }
  memcpy(dst, rec, sizeof rec);
}

/* A split fill (cases/fill.h): past_record draws at its record's indices and writes its bytes only. */
typedef struct past_job {
  const csa_case *c;
  tensor *t;
  long long records; /* per batch row */
} past_job;

/* Records [begin, end) of the B * records synthetic ones, batch row major. */
static void past_cache_range(void *ctx, long long begin, long long end, int worker) {
  const past_job *j = ctx;
  long long R = j->t->shape[1], i;
  size_t rb = (size_t)j->t->shape[2] * dtype_size(j->t->dt);
  (void)worker;
  for (i = begin; i < end; i++) {
    long long b = i / j->records, k = i % j->records;
    past_record(j->c, b, k, (unsigned char *)j->t->data + (size_t)(b * R + k) * rb);
  }
}

/* Step 0's past cache: start / 128 synthetic records (no more than fit), zero bytes after. */
static void fill_past_cache(const csa_case *c, tensor *t) {
  long long R = t->shape[1], records = c->start / CSA128_RATIO;
  past_job j = {.c = c, .t = t};
  if (records > R) records = R; /* a past_capacity case's shortened cache */
  j.records = records;
  if (records > 0) cases_fill_parallel(t->shape[0] * records, CSA_HEAD_DIM, past_cache_range, &j);
}

/* Step 0's carry: slots below start % 128 filled, the rest (+0, -inf) as a reset leaves them. */
static void fill_past_carry(const csa_case *c, tensor *t) {
  long long b, used = c->start % CSA128_RATIO;
  int j, d;
  for (b = 0; b < t->shape[0]; b++) {
    float *row = (float *)t->data + b * CARRY_FLOATS;
    for (j = 0; j < CSA128_RATIO; j++)
      for (d = 0; d < CSA_HEAD_DIM; d++) {
        uint64_t i = (((uint64_t)b * CSA128_RATIO + (uint64_t)j) * 2) * CSA_HEAD_DIM + (uint64_t)d;
        float *kv = row + (2 * j) * CSA_HEAD_DIM + d, *score = row + (2 * j + 1) * CSA_HEAD_DIM + d;
        *kv = j < used ? cases_rng_normalish(bits_at(c, CSA_STREAM_CARRY, 0, i)) : 0.0f;
        *score = j < used ? cases_rng_normalish(bits_at(c, CSA_STREAM_CARRY, 0, i + CSA_HEAD_DIM)) : csa_case_neg_inf();
      }
  }
}

static void fill_inputs(const csa_case *c, int step, const csa_plan *p, tensor *in) {
  long long total = step_total(c, step), b;
  int slot;
  for (slot = 0; slot < CSA_INPUT_COUNT; slot++) {
    tensor *t = &in[slot];
    if (!t->data) continue;
    if (p->junk_in[slot]) {
      csa_case_fill_junk(c->seed, t, CSA_STREAM_JUNK + (uint32_t)slot, step);
      continue;
    }
    switch (slot) {
    case CSA_IN_QUERY: csa_case_fill_normalish(c->seed, t, CSA_STREAM_QUERY, (uint32_t)step, 1.0f); break;
    case CSA_IN_CURRENT_KV: csa_case_fill_positions(c->seed, t, CSA_STREAM_KV, total - t->shape[1], 1.0f); break;
    case CSA_IN_COMPRESSOR_KV: csa_case_fill_positions(c->seed, t, CSA_STREAM_CKV, total - t->shape[1], 1.0f); break;
    case CSA_IN_COMPRESSOR_GATE: csa_case_fill_positions(c->seed, t, CSA_STREAM_GATE, total - t->shape[1], 1.0f); break;
    case CSA_IN_COMPRESSOR_APE: csa_case_fill_normalish(c->seed, t, CSA_STREAM_APE, 0, 0.5f); break;
    case CSA_IN_COMPRESSOR_NORM: csa_case_fill_uniform(c->seed, t, CSA_STREAM_NORM, 0.5f, 1.5f); break;
    case CSA_IN_PAST_COMPRESSED_KV: fill_past_cache(c, t); break;
    case CSA_IN_PAST_CARRY: fill_past_carry(c, t); break;
    case CSA_IN_SEQLENS_K: /* not read by ratio 128; the total, saturated to i32 */
      for (b = 0; b < t->shape[0]; b++) ((int32_t *)t->data)[b] = total > INT32_MAX ? INT32_MAX : (int32_t)total;
      break;
    case CSA_IN_TOTAL_SEQ: ((int64_t *)t->data)[0] = p->total; break;
    case CSA_IN_HEAD_SINK: csa_case_fill_sink(c->seed, t, c->sink, CSA_STREAM_SINK); break;
    case CSA_IN_BIAS: csa_case_fill_normalish(c->seed, t, CSA_STREAM_BIAS, (uint32_t)step, 1.0f); break;
    default: break;
    }
  }
}

/* ------------------------------------------------------ materialize */

void cases_csa_release(tensor inputs[CSA_INPUT_COUNT], tensor outputs[CSA_OUTPUT_COUNT]) {
  int i;
  for (i = 0; i < CSA_INPUT_COUNT; i++) tensor_free(&inputs[i]);
  for (i = 0; i < CSA_OUTPUT_COUNT; i++) tensor_free(&outputs[i]);
}

int cases_csa_materialize(const csa_case *c, int step, tensor inputs[CSA_INPUT_COUNT], int *n_inputs,
                          tensor outputs[CSA_OUTPUT_COUNT], int *n_outputs, csa_attrs *attrs, char *err,
                          size_t err_len) {
  size_t budget = c->budget_bytes ? c->budget_bytes : CASES_CSA_BUDGET_DEFAULT;
  unsigned char threaded[CSA_INPUT_COUNT] = {0};
  unsigned long long need;
  csa_plan p;
  memset(inputs, 0, CSA_INPUT_COUNT * sizeof(tensor));
  memset(outputs, 0, CSA_OUTPUT_COUNT * sizeof(tensor));
  *n_inputs = *n_outputs = 0;
  if (step < 0 || step >= cases_csa_steps(c))
    return spec_set_err(err, err_len, "step %d is outside the case's %d steps", step, cases_csa_steps(c)), -1;
  plan_build(c, step, &p);
  plan_mutate(c, &p);
  if (plan_bytes(&p, &need))
    return spec_set_err(err, err_len, "case needs more than %llu bytes, over the budget of %zu", ULLONG_MAX, budget), -1;
  if (need > budget) return spec_set_err(err, err_len, "case needs %llu bytes, over the budget of %zu", need, budget), -1;
  memcpy(inputs, p.in, sizeof p.in);
  memcpy(outputs, p.out, sizeof p.out);
  if (step > 0) threaded[CSA_IN_PAST_COMPRESSED_KV] = threaded[CSA_IN_PAST_CARRY] = 1; /* the harness's */
  if (csa_case_alloc(inputs, CSA_INPUT_COUNT, threaded, err, err_len) ||
      csa_case_alloc(outputs, CSA_OUTPUT_COUNT, NULL, err, err_len)) {
    cases_csa_release(inputs, outputs);
    return -1;
  }
  fill_inputs(c, step, &p, inputs);
  if (p.junk_out[CSA_OUT_Y] && outputs[CSA_OUT_Y].data)
    csa_case_fill_junk(c->seed, &outputs[CSA_OUT_Y], CSA_STREAM_JUNK + 20, step);
  *n_inputs = p.n_in, *n_outputs = p.n_out, *attrs = p.attrs;
  return 0;
}

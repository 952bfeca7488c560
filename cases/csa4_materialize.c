/*
** csa4_materialize.c: the tensors of one step of a ratio-4 case (see
** csa4_cases.h "Tensors"): the plan of the valid step, the fills, the
** synthetic past of csa4.state, the index streams csa4.ties crafts, and
** materialize / release.
**
** Why the tie crafting ties (oracle/SPEC.md "ratio 4", IndexScoring): a
** record's score is the ascending sum from +0 of relu(dot_h) * w_h * scale.
**   relu   keys whose dims 0..63 are positive and 64..127 zero (so RoPE
**          leaves them alone), against queries negative in dims 0..63 and
**          zero in 64..127: the dot before the Hadamard transform is a sum
**          of negative products, and the transform (orthogonal up to a
**          factor) and FP4 keep it negative; relu gives +0, and +0 or -0
**          times w sums to +0.
**   dup    each block's index compressor inputs repeat block 0's, phase by
**          phase, with the RoPE dims zero: every record after record 0 pools
**          the same eight candidates into the same key.
**   zero   even positions have weights of +-0, odd positions queries of +-0
**          (the FP4 round trip keeps a zero's sign): every score is +0.
**   mixed  blocks 4m and 4m + 1 take the dup pattern (so records 1, 5, 9,
**          ... share a key among random ones) and every third position has
**          +-0 weights.
** cases/tests/test_csa4_cases.c checks with the oracle's index_scores that
** the ties happen.
*/
#include "cases/csa4_cases_internal.h"

#include "cases/fill.h"
#include "cases/rng.h"
#include "cases/spec_text.h"
#include "oracle/numerics/numerics.h"
#include "oracle/numerics/nx_csa.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#define ROPE_FIRST (CSA4_INDEX_DIM - CSA_ROPE_DIM) /* index dims 64..127 are rotated */

/* ------------------------------------------------------------ the plan */

/* The valid step the spec's tokens describe. */
static void plan_build(const csa4_case *c, int step, csa4_plan *p) {
  long long B = c->batch, S = csa4_step_seq(c, step), H = c->heads, IH = c->index_heads;
  long long total = csa4_step_total(c, step), L = c->window < total ? c->window : total, R = c->capacity;
  tensor *in = p->in, *out = p->out;
  memset(p, 0, sizeof *p);
  csa_case_set_shape(&in[CSA_IN_QUERY], DTYPE_F32, 4, B, S, H, CSA_HEAD_DIM);
  csa_case_set_shape(&in[CSA_IN_CURRENT_KV], DTYPE_F32, 3, B, L, CSA_HEAD_DIM, 0);
  csa_case_set_shape(&in[CSA_IN_COMPRESSOR_KV], DTYPE_F32, 3, B, S, CSA4_SOURCE_WIDTH, 0);
  csa_case_set_shape(&in[CSA_IN_COMPRESSOR_GATE], DTYPE_F32, 3, B, S, CSA4_SOURCE_WIDTH, 0);
  csa_case_set_shape(&in[CSA_IN_COMPRESSOR_APE], DTYPE_F32, 2, CSA4_RATIO, CSA4_SOURCE_WIDTH, 0, 0);
  csa_case_set_shape(&in[CSA_IN_COMPRESSOR_NORM], DTYPE_F32, 1, CSA_HEAD_DIM, 0, 0, 0);
  csa_case_set_shape(&in[CSA_IN_PAST_COMPRESSED_KV], DTYPE_U8, 3, B, R, CSA_FP8_RECORD_BYTES, 0);
  csa_case_set_shape(&in[CSA_IN_PAST_CARRY], DTYPE_F32, 4, B, CSA4_SLOTS, 2, CSA4_SOURCE_WIDTH);
  csa_case_set_shape(&in[CSA_IN_SEQLENS_K], DTYPE_I32, 1, B, 0, 0, 0);
  csa_case_set_shape(&in[CSA_IN_TOTAL_SEQ], DTYPE_I64, 0, 0, 0, 0, 0);
  csa_case_set_shape(&in[CSA_IN_HEAD_SINK], DTYPE_F32, 1, H, 0, 0, 0);
  csa_case_set_shape(&in[CSA_IN_INDEX_QUERY], DTYPE_F32, 4, B, S, IH, CSA4_INDEX_DIM);
  csa_case_set_shape(&in[CSA_IN_INDEX_WEIGHT], DTYPE_F32, 3, B, S, IH, 0);
  csa_case_set_shape(&in[CSA_IN_INDEX_KV], DTYPE_F32, 3, B, S, CSA4_INDEX_SOURCE, 0);
  csa_case_set_shape(&in[CSA_IN_INDEX_GATE], DTYPE_F32, 3, B, S, CSA4_INDEX_SOURCE, 0);
  csa_case_set_shape(&in[CSA_IN_INDEX_APE], DTYPE_F32, 2, CSA4_RATIO, CSA4_INDEX_SOURCE, 0, 0);
  csa_case_set_shape(&in[CSA_IN_INDEX_NORM], DTYPE_F32, 1, CSA4_INDEX_DIM, 0, 0, 0);
  csa_case_set_shape(&in[CSA_IN_PAST_INDEX_KEY], DTYPE_U8, 3, B, R, CSA4_INDEX_RECORD_BYTES, 0);
  csa_case_set_shape(&in[CSA_IN_PAST_INDEX_CARRY], DTYPE_F32, 4, B, CSA4_SLOTS, 2, CSA4_INDEX_SOURCE);
  p->n_in = CSA_IN_INDEX_LAST + 1;
  if (c->bias_rank >= 0) {
    csa_case_set_shape(&in[CSA_IN_BIAS], DTYPE_F32, c->bias_rank, c->bias_shape[0], c->bias_shape[1], c->bias_shape[2],
                       c->bias_shape[3]);
    p->n_in = CSA_INPUT_COUNT;
  }
  csa_case_set_shape(&out[CSA_OUT_Y], DTYPE_F32, 4, B, S, H, CSA_HEAD_DIM);
  csa_case_set_shape(&out[CSA_OUT_PRESENT_COMPRESSED_KV], DTYPE_U8, 3, B, R, CSA_FP8_RECORD_BYTES, 0);
  csa_case_set_shape(&out[CSA_OUT_PRESENT_CARRY], DTYPE_F32, 4, B, CSA4_SLOTS, 2, CSA4_SOURCE_WIDTH);
  csa_case_set_shape(&out[CSA_OUT_PRESENT_INDEX_KEY], DTYPE_U8, 3, B, R, CSA4_INDEX_RECORD_BYTES, 0);
  csa_case_set_shape(&out[CSA_OUT_PRESENT_INDEX_CARRY], DTYPE_F32, 4, B, CSA4_SLOTS, 2, CSA4_INDEX_SOURCE);
  if (c->outputs == 6) csa_case_set_shape(&out[CSA_OUT_SELECTED], DTYPE_I32, 4, B, IH, S, c->topk);
  p->n_out = c->outputs;
  p->total = total;
  p->attrs.compression_ratio = CSA4_RATIO;
  p->attrs.cache_format = "fp8_e4m3_block64";
  p->attrs.num_heads = H;
  p->attrs.head_dim = CSA_HEAD_DIM;
  p->attrs.qk_rope_head_dim = CSA_ROPE_DIM;
  p->attrs.has_scale = c->has_scale;
  p->attrs.scale = c->scale;
  p->attrs.index_num_heads = IH;
  p->attrs.index_head_dim = CSA4_INDEX_DIM;
  p->attrs.index_topk = c->topk;
}

/* --------------------------------------------------- the index streams */

static uint64_t bits_at(const csa4_case *c, uint32_t stream, uint32_t step, uint64_t i) {
  return cases_rng_u64(c->seed, stream, step, i);
}

static float signed_zero(const csa4_case *c, long long b, uint64_t i) {
  return nx_f32_from_bits(bits_at(c, CSA4_STREAM_TIE, (uint32_t)b, i) >> 63 ? 0x80000000u : 0u);
}

/* Does position pos take the duplicated-block pattern of the index compressor? */
static int dup_position(const csa4_case *c, long long pos) {
  return c->ties == CSA4_TIE_DUP || (c->ties == CSA4_TIE_MIXED && pos / CSA4_RATIO % 4 <= 1);
}
static int zero_weights(const csa4_case *c, long long pos) {
  return (c->ties == CSA4_TIE_ZERO && pos % 2 == 0) || (c->ties == CSA4_TIE_MIXED && pos % 3 == 0);
}
static int zero_query(const csa4_case *c, long long pos) { return c->ties == CSA4_TIE_ZERO && pos % 2 == 1; }

/*
** Element e of position pos (batch row b) of index input `slot` (11..14),
** whose per-position width is w.  Without ties: a bell value of the slot's
** token stream.
*/
static float index_value(const csa4_case *c, int slot, long long b, long long pos, long long e, long long w) {
  static const uint32_t streams[4] = {CSA4_STREAM_IQUERY, CSA4_STREAM_IWEIGHT, CSA4_STREAM_IKV, CSA4_STREAM_IGATE};
  uint32_t stream = streams[slot - CSA_IN_INDEX_QUERY];
  uint64_t i = (uint64_t)pos * (uint64_t)w + (uint64_t)e;
  long long dim = e % CSA4_INDEX_DIM; /* query: the head dim; compressor: the record dim fed */
  switch (slot) {
  case CSA_IN_INDEX_QUERY:
    if (c->ties == CSA4_TIE_RELU)
      return dim < ROPE_FIRST ? -cases_rng_uniform(bits_at(c, stream, (uint32_t)b, i), 0.5f, 1.5f) : 0.0f;
    if (zero_query(c, pos)) return signed_zero(c, b, i);
    break;
  case CSA_IN_INDEX_WEIGHT:
    if (zero_weights(c, pos)) return signed_zero(c, b, i);
    break;
  case CSA_IN_INDEX_KV:
    if (c->ties == CSA4_TIE_RELU)
      return dim < ROPE_FIRST ? cases_rng_uniform(bits_at(c, stream, (uint32_t)b, i), 0.5f, 1.5f) : 0.0f;
    /* fall through */
  default: /* index_compressor_kv and _gate */
    if (dup_position(c, pos)) {
      if (slot == CSA_IN_INDEX_KV && dim >= ROPE_FIRST) return 0.0f;
      i = (uint64_t)(pos % CSA4_RATIO) * (uint64_t)w + (uint64_t)e; /* block 0's token of this phase */
    }
    break;
  }
  return cases_rng_normalish(bits_at(c, stream, (uint32_t)b, i));
}

/*
** A split fill (cases/fill.h): items are the [B * n] token rows of an index
** stream, or the B * records records of a past cache; index_value and the
** record writers draw at the item's own indices and write its bytes only.
*/
typedef struct fill_job {
  const csa4_case *c;
  tensor *t;
  int slot;
  long long n, w, first; /* a stream: positions per batch row, row width, first position (a cache: n records) */
  void (*record)(const csa4_case *, long long, long long, unsigned char *);
} fill_job;

static void index_stream_range(void *ctx, long long begin, long long end, int worker) {
  const fill_job *j = ctx;
  float *x = j->t->data;
  long long row, e;
  (void)worker;
  for (row = begin; row < end; row++)
    for (e = 0; e < j->w; e++)
      x[row * j->w + e] = index_value(j->c, j->slot, row / j->n, j->first + row % j->n, e, j->w);
}

/* Index input `slot` [B, n, ...] at absolute positions first .. first + n - 1. */
static void fill_index_stream(const csa4_case *c, tensor *t, int slot, long long first) {
  long long B = t->shape[0], n = t->shape[1], w = B && n ? tensor_numel(t) / (B * n) : 0;
  fill_job j = {.c = c, .t = t, .slot = slot, .n = n, .w = w, .first = first};
  if (w > 0) cases_fill_parallel(B * n, w, index_stream_range, &j);
}

/* ---------------------------------------------------- the synthetic past */

/* Main record k of batch row b: 512 bell values written as the oracle writes a record. */
static void past_main_record(const csa4_case *c, long long b, long long k, unsigned char *dst) {
  float rec[CSA_HEAD_DIM];
  uint64_t base = ((uint64_t)k * (uint64_t)c->batch + (uint64_t)b) * CSA_HEAD_DIM;
  int d;
  for (d = 0; d < CSA_HEAD_DIM; d++) rec[d] = cases_rng_normalish(bits_at(c, CSA4_STREAM_PAST, 0, base + (uint64_t)d));
  nx_csa_fp8_record_write(rec, dst);
}

/* Index key record k of batch row b: 128 bell values in four FP4 blocks. */
static void past_index_record(const csa4_case *c, long long b, long long k, unsigned char *dst) {
  float rec[CSA4_INDEX_DIM];
  uint64_t base = ((uint64_t)k * (uint64_t)c->batch + (uint64_t)b) * CSA4_INDEX_DIM;
  int d, blk;
  for (d = 0; d < CSA4_INDEX_DIM; d++)
    rec[d] = cases_rng_normalish(bits_at(c, CSA4_STREAM_IPAST, 0, base + (uint64_t)d));
  for (blk = 0; blk < CSA4_INDEX_DIM / NX_FP4_BLOCK; blk++)
    nx_fp4_block32_quantize(rec + blk * NX_FP4_BLOCK, dst + blk * NX_FP4_BLOCK_BYTES);
}

/* Records [begin, end) of the B * records synthetic ones, batch row major. */
static void past_cache_range(void *ctx, long long begin, long long end, int worker) {
  const fill_job *j = ctx;
  long long R = j->t->shape[1], i;
  size_t rb = (size_t)j->t->shape[2];
  (void)worker;
  for (i = begin; i < end; i++) {
    long long b = i / j->n, k = i % j->n;
    j->record(j->c, b, k, (unsigned char *)j->t->data + (size_t)(b * R + k) * rb);
  }
}

/* Step 0's past cache: start / 4 synthetic records (no more than fit), zero bytes after. */
static void fill_past_cache(const csa4_case *c, tensor *t,
                            void (*record)(const csa4_case *, long long, long long, unsigned char *)) {
  long long R = t->shape[1], records = c->start / CSA4_RATIO;
  fill_job j = {.c = c, .t = t, .record = record};
  if (records > R) records = R; /* a past_capacity case's shortened cache */
  j.n = records;
  if (records > 0) /* a record's bytes stand in for its draws */
    cases_fill_parallel(t->shape[0] * records, t->shape[2], past_cache_range, &j);
}

/*
** Step 0's carry [B, 8, 2, w]: slots 0..3 (the previous block) live once a
** block has completed (start >= 4), slots 4.. 4 + start % 4 - 1 (the current
** block's tokens so far) live; live slots hold bell kv and score, the others
** (+0, -inf) as a reset leaves them.
*/
static void fill_past_carry(const csa4_case *c, tensor *t, uint32_t stream) {
  long long w = t->shape[3], b, j, d, current = c->start % CSA4_RATIO;
  for (b = 0; b < t->shape[0]; b++)
    for (j = 0; j < CSA4_SLOTS; j++) {
      int live = j < CSA4_RATIO ? c->start >= CSA4_RATIO : j - CSA4_RATIO < current;
      float *kv = (float *)t->data + ((b * CSA4_SLOTS + j) * 2) * w, *score = kv + w;
      for (d = 0; d < w; d++) {
        uint64_t i = (uint64_t)((b * CSA4_SLOTS + j) * 2 * w + d);
        kv[d] = live ? cases_rng_normalish(bits_at(c, stream, 0, i)) : 0.0f;
        score[d] = live ? cases_rng_normalish(bits_at(c, stream, 0, i + (uint64_t)w)) : csa_case_neg_inf();
      }
    }
}

/* ----------------------------------------------------------- the fills */

static void fill_inputs(const csa4_case *c, int step, const csa4_plan *p, tensor *in) {
  long long total = csa4_step_total(c, step), b;
  uint64_t seed = c->seed;
  float amp = 1.0f; /* 2^-mag, exact: scaling by it changes no mantissa bit */
  int slot;
  for (slot = 0; slot < c->mag; slot++) amp *= 0.5f;
  for (slot = 0; slot < CSA_INPUT_COUNT; slot++) {
    tensor *t = &in[slot];
    long long first = t->rank >= 2 ? total - t->shape[1] : 0; /* token streams: the first position */
    if (!t->data) continue;
    if (p->junk_in[slot]) {
      csa_case_fill_junk(seed, t, CSA4_STREAM_JUNK + (uint32_t)slot, step);
      continue;
    }
    switch (slot) {
    case CSA_IN_QUERY: csa_case_fill_positions(seed, t, CSA4_STREAM_QUERY, first, amp); break;
    case CSA_IN_CURRENT_KV: csa_case_fill_positions(seed, t, CSA4_STREAM_KV, first, amp); break;
    case CSA_IN_COMPRESSOR_KV: csa_case_fill_positions(seed, t, CSA4_STREAM_CKV, first, amp); break;
    case CSA_IN_COMPRESSOR_GATE: csa_case_fill_positions(seed, t, CSA4_STREAM_GATE, first, 1.0f); break;
    case CSA_IN_COMPRESSOR_APE: csa_case_fill_normalish(seed, t, CSA4_STREAM_APE, 0, 0.5f); break;
    case CSA_IN_COMPRESSOR_NORM: csa_case_fill_uniform(seed, t, CSA4_STREAM_NORM, 0.5f, 1.5f); break;
    case CSA_IN_PAST_COMPRESSED_KV: fill_past_cache(c, t, past_main_record); break;
    case CSA_IN_PAST_CARRY: fill_past_carry(c, t, CSA4_STREAM_CARRY); break;
    case CSA_IN_SEQLENS_K: /* required, not read; the total, saturated to i32 */
      for (b = 0; b < t->shape[0]; b++) ((int32_t *)t->data)[b] = total > INT32_MAX ? INT32_MAX : (int32_t)total;
      break;
    case CSA_IN_TOTAL_SEQ: ((int64_t *)t->data)[0] = p->total; break;
    case CSA_IN_HEAD_SINK: csa_case_fill_sink(seed, t, c->sink, CSA4_STREAM_SINK); break;
    case CSA_IN_INDEX_QUERY:
    case CSA_IN_INDEX_WEIGHT:
    case CSA_IN_INDEX_KV:
    case CSA_IN_INDEX_GATE: fill_index_stream(c, t, slot, first); break;
    case CSA_IN_INDEX_APE: csa_case_fill_normalish(seed, t, CSA4_STREAM_IAPE, 0, 0.5f); break;
    case CSA_IN_INDEX_NORM: csa_case_fill_uniform(seed, t, CSA4_STREAM_INORM, 0.5f, 1.5f); break;
    case CSA_IN_PAST_INDEX_KEY: fill_past_cache(c, t, past_index_record); break;
    case CSA_IN_PAST_INDEX_CARRY: fill_past_carry(c, t, CSA4_STREAM_ICARRY); break;
    case CSA_IN_BIAS: csa_case_fill_normalish(seed, t, CSA4_STREAM_BIAS, (uint32_t)step, 1.0f); break;
    default: break;
    }
  }
}

/* ------------------------------------------------------ materialize */

void cases_csa4_release(tensor inputs[CSA_INPUT_COUNT], tensor outputs[CSA_OUTPUT_MAX]) {
  int i;
  for (i = 0; i < CSA_INPUT_COUNT; i++) tensor_free(&inputs[i]);
  for (i = 0; i < CSA_OUTPUT_MAX; i++) tensor_free(&outputs[i]);
}

int cases_csa4_materialize(const csa4_case *c, int step, tensor inputs[CSA_INPUT_COUNT], int *n_inputs,
                           tensor outputs[CSA_OUTPUT_MAX], int *n_outputs, csa_attrs *attrs, char *err,
                           size_t err_len) {
  size_t budget = c->budget_bytes ? c->budget_bytes : CASES_CSA4_BUDGET_DEFAULT;
  unsigned char threaded[CSA_INPUT_COUNT] = {0};
  unsigned long long need_in, need_out;
  csa4_plan p;
  int o;
  memset(inputs, 0, CSA_INPUT_COUNT * sizeof(tensor));
  memset(outputs, 0, CSA_OUTPUT_MAX * sizeof(tensor));
  *n_inputs = *n_outputs = 0;
  if (step < 0 || step >= cases_csa4_steps(c))
    return spec_set_err(err, err_len, "step %d is outside the case's %d steps", step, cases_csa4_steps(c)), -1;
  plan_build(c, step, &p);
  csa4_plan_mutate(c, &p);
  if (csa_case_bytes(p.in, CSA_INPUT_COUNT, &need_in) || csa_case_bytes(p.out, CSA_OUTPUT_MAX, &need_out) ||
      need_in > ULLONG_MAX - need_out)
    return spec_set_err(err, err_len, "case needs more than %llu bytes, over the budget of %zu", ULLONG_MAX, budget),
           -1;
  if (need_in + need_out > budget)
    return spec_set_err(err, err_len, "case needs %llu bytes, over the budget of %zu", need_in + need_out, budget), -1;
  memcpy(inputs, p.in, sizeof p.in);
  memcpy(outputs, p.out, sizeof p.out);
  if (step > 0) /* the harness threads the previous step's outputs 1..4 in here */
    threaded[CSA_IN_PAST_COMPRESSED_KV] = threaded[CSA_IN_PAST_CARRY] = threaded[CSA_IN_PAST_INDEX_KEY] =
        threaded[CSA_IN_PAST_INDEX_CARRY] = 1;
  if (csa_case_alloc(inputs, CSA_INPUT_COUNT, threaded, err, err_len) ||
      csa_case_alloc(outputs, CSA_OUTPUT_MAX, NULL, err, err_len)) {
    cases_csa4_release(inputs, outputs);
    return -1;
  }
  fill_inputs(c, step, &p, inputs);
  for (o = 0; o < CSA_OUTPUT_MAX; o++)
    if (p.junk_out[o] && outputs[o].data)
      csa_case_fill_junk(c->seed, &outputs[o], CSA4_STREAM_JUNK + CSA_INPUT_COUNT + (uint32_t)o, step);
  *n_inputs = p.n_in, *n_outputs = p.n_out, *attrs = p.attrs;
  return 0;
}

/*
** csa128.c: the CSA ratio-128 oracle's computation, one step: the
** compression update (carry slots, a record every 128th position) and the
** sink attention over the dense window and the completed records.
**
** Source: seed 003_9308a65268dfd821.txt, the kernels csa_ratio128_compress
** (seed:180-281) and csa_ratio128_sink_attention (seed:691-859), run in that
** order (run_device_ratio128, seed:1943).  oracle/SPEC.md, "CompressedSparse
** Attention, ratio 128", gives every formula; in short:
**
**   pool[d]   = bf16( sum_j w_j kv_j[d] / sum_j w_j ),  w_j = nx_expf(score_j[d] - max_j),
**               over the 128 slots j whose score is not -inf
**   rec[d]    = bf16( (pool[d] * 1/sqrt(sum pool^2 / 512 + 1e-6)) * norm[d] )
**   tail pair = bf16-rounded rotation by (pos - 127) * frequency(pair)
**   record    = 7 FP8 blocks + 64 bf16 (583 bytes), or that record dequantized (f32)
**   score_c   = (sum_d q[d] k_c[d]) * scale [+ bias];  m = max_c score_c
**   denom     = sum_c nx_expf(score_c - m) + nx_expf(sink - m)
**   Y[d]      = sum_c (nx_expf(score_c - m) / denom) * v_c[d]
**
** Exactness: every operation is one IEEE binary32 operation rounded to
** nearest; sums start at +0.0f and run in ascending index order (the seed's
** kernels are single-thread serial loops, so their order is the
** specification); the build forbids contraction (-ffp-contract=off).
** nx_expf, nx_powf and nx_sincosf are correctly rounded (DESIGN.md), unlike
** the seed's (float)exp((double)x), powf and sincosf.  bf16 rounding is the
** seeds' formula (nx_bf16_round), which does not preserve NaN.
** NaN / inf: a NaN score is skipped by the max (nx_maxf) but enters the sums,
** so it poisons the result; -inf scores are skipped; a pool whose 128 scores
** are all -inf is 0/0 = NaN; an attention row whose scores are all -inf or
** NaN is all-masked and stores +0.  Signed zero: the all-masked row is +0.
*/
#include "oracle/csa.h"

#include "oracle/numerics/numerics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEG_INF_BITS 0xff800000u
#define CARRY_FLOATS (CSA128_RATIO * 2 * CSA_HEAD_DIM) /* one batch row of the carry */

/* The oracle has no error class for memory: running out is fatal, with the place. */
static void *alloc_or_die(size_t count, size_t size, int line) {
  void *p = calloc(count ? count : 1, size);
  if (!p) {
    fprintf(stderr, "%s:%d: out of memory\n", __FILE__, line);
    abort();
  }
  return p;
}

static float neg_inf(void) { return nx_f32_from_bits(NEG_INF_BITS); }

/* ---- compression update (seed:180-281) ----------------------------------- */

/* Slot j's kv (state 0) or score (state 1) of dim dd, in one batch row of the carry. */
static float *carry_at(float *carry_row, int slot, int state, int dd) {
  return carry_row + ((long long)(2 * slot + state)) * CSA_HEAD_DIM + dd;
}

/* Every slot back to kv = +0, score = -inf (seed:199-207, 275-279). */
static void carry_reset(float *carry_row) {
  int j, dd;
  for (j = 0; j < CSA128_RATIO; j++)
    for (dd = 0; dd < CSA_HEAD_DIM; dd++) {
      *carry_at(carry_row, j, 0, dd) = 0.0f;
      *carry_at(carry_row, j, 1, dd) = neg_inf();
    }
}

/*
** Per-dimension softmax pooling over the 128 slots (seed:218-232): the max
** over every slot, then the two sums over the slots whose score is not
** -inf, ascending; then bf16.
*/
static void record_pool(float *carry_row, float *rec) {
  int j, dd;
  for (dd = 0; dd < CSA_HEAD_DIM; dd++) {
    float m = neg_inf(), num = 0.0f, den = 0.0f;
    for (j = 0; j < CSA128_RATIO; j++) m = nx_maxf(m, *carry_at(carry_row, j, 1, dd));
    for (j = 0; j < CSA128_RATIO; j++) {
      float score = *carry_at(carry_row, j, 1, dd), w;
      if (nx_f32_bits(score) == NEG_INF_BITS) continue; /* an empty slot? */
      w = nx_expf(score - m);
      den = den + w;
      num = num + w * *carry_at(carry_row, j, 0, dd);
    }
    rec[dd] = nx_bf16_round(num / den);
  }
}

/* RMSNorm with eps 1e-6, then the norm weight, then bf16 (seed:233-238). */
static void record_norm(const float *norm, float *rec) {
  float sq = 0.0f, inv_rms;
  int dd;
  for (dd = 0; dd < CSA_HEAD_DIM; dd++) sq = sq + rec[dd] * rec[dd];
  inv_rms = 1.0f / sqrtf(sq / (float)CSA_HEAD_DIM + 1.0e-6f);
  for (dd = 0; dd < CSA_HEAD_DIM; dd++) rec[dd] = nx_bf16_round((rec[dd] * inv_rms) * norm[dd]);
}

/*
** The RoPE tail on dims 448..511 at the block's first position pos - 127,
** bf16 after each component (seed:239-249).  fminf/fmaxf of the seed's ramp
** see no NaN or signed zero here, so plain comparisons give the same value.
*/
static void record_rope(long long pos, float *rec) {
  int pair;
  for (pair = 0; pair < CSA_ROPE_DIM / 2; pair++) {
    float ramp = ((float)pair - 15.0f) / 10.0f;
    float base, freq, sn, cs, re, im;
    int dd = CSA_NOPE_DIM + 2 * pair;
    if (ramp < 0.0f) ramp = 0.0f;
    if (ramp > 1.0f) ramp = 1.0f;
    base = nx_powf(160000.0f, -((float)(2 * pair)) / 64.0f);
    freq = base * (1.0f - ramp) + (base / 16.0f) * ramp;
    nx_sincosf((float)(pos - 127) * freq, &sn, &cs);
    re = rec[dd], im = rec[dd + 1];
    rec[dd] = nx_bf16_round(re * cs - im * sn);
    rec[dd + 1] = nx_bf16_round(re * sn + im * cs);
  }
}

/*
** Writes the finished record (seed:250-274): FP8, 7 x (scale, 64 codes)
** then 64 little-endian bf16; or the f32 view, the FP8 blocks dequantized
** and the tail as is (already bf16 values).
*/
static void record_write(csa_cache_format fmt, const float *rec, void *dst) {
  nx_u8 block[NX_FP8_BLOCK_BYTES];
  int k, dd;
  if (fmt == CSA_CACHE_FP8) {
    nx_u8 *out = dst;
    for (k = 0; k < CSA_FP8_BLOCKS; k++) nx_fp8_block64_quantize(rec + k * NX_FP8_BLOCK, out + k * NX_FP8_BLOCK_BYTES);
    for (dd = 0; dd < CSA_ROPE_DIM; dd++) {
      nx_u16 bits = nx_bf16_round_bits(rec[CSA_NOPE_DIM + dd]);
      out[455 + 2 * dd] = (nx_u8)(bits & 0xffu);
      out[455 + 2 * dd + 1] = (nx_u8)(bits >> 8);
    }
    return;
  }
  for (k = 0; k < CSA_FP8_BLOCKS; k++) {
    nx_fp8_block64_quantize(rec + k * NX_FP8_BLOCK, block);
    nx_fp8_block64_dequantize(block, (float *)dst + k * NX_FP8_BLOCK);
  }
  memcpy((float *)dst + CSA_NOPE_DIM, rec + CSA_NOPE_DIM, CSA_ROPE_DIM * sizeof(float));
}

/* Bytes of one stored record. */
static size_t record_bytes(const csa_dims *d) {
  return d->format == CSA_CACHE_FP8 ? CSA_FP8_RECORD_BYTES : CSA_HEAD_DIM * sizeof(float);
}

/*
** One batch row of the compression update.  Present records from
** past_records up to the capacity start as zero bytes (*ours*: the seed
** kernel leaves them unwritten); the emitted ones overwrite theirs.
*/
static void compress_row(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b,
                         csa_trace *trace) {
  const float *kv = in[CSA_IN_COMPRESSOR_KV]->data, *gate = in[CSA_IN_COMPRESSOR_GATE]->data;
  const float *ape = in[CSA_IN_COMPRESSOR_APE]->data, *norm = in[CSA_IN_COMPRESSOR_NORM]->data;
  const unsigned char *past = in[CSA_IN_PAST_COMPRESSED_KV]->data;
  unsigned char *cache = out[CSA_OUT_PRESENT_COMPRESSED_KV]->data;
  float *carry = (float *)out[CSA_OUT_PRESENT_CARRY]->data + b * CARRY_FLOATS;
  size_t rb = record_bytes(d);
  long long s, emitted = 0;
  float rec[CSA_HEAD_DIM];
  int dd;

  memcpy(carry, (const float *)in[CSA_IN_PAST_CARRY]->data + b * CARRY_FLOATS, CARRY_FLOATS * sizeof(float));
  memcpy(cache + (size_t)(b * d->present_capacity) * rb, past + (size_t)(b * d->past_capacity) * rb,
         (size_t)d->past_records * rb);
  memset(cache + (size_t)(b * d->present_capacity + d->past_records) * rb, 0,
         (size_t)(d->present_capacity - d->past_records) * rb);
  if (d->start == 0) carry_reset(carry);
  for (s = 0; s < d->seq; s++) {
    long long pos = d->start + s, row = (b * d->seq + s) * CSA_HEAD_DIM, out_rec;
    int slot = (int)(pos & 127);
    for (dd = 0; dd < CSA_HEAD_DIM; dd++) {
      *carry_at(carry, slot, 0, dd) = kv[row + dd];
      *carry_at(carry, slot, 1, dd) = gate[row + dd] + ape[slot * CSA_HEAD_DIM + dd];
    }
    if (((pos + 1) & 127) != 0) continue; /* block not complete? */
    record_pool(carry, rec);
    record_norm(norm, rec);
    record_rope(pos, rec);
    out_rec = d->past_records + emitted++;
    if (trace && trace->records)
      memcpy(trace->records + (b * d->present_capacity + out_rec) * CSA_HEAD_DIM, rec, sizeof rec);
    record_write(d->format, rec, cache + (size_t)(b * d->present_capacity + out_rec) * rb);
    carry_reset(carry);
  }
}

/* ---- sink attention (seed:691-859) --------------------------------------- */

/* Element dd of present record rec of batch b, as the attention reads it (seed:765-786, 830-852). */
static float record_load(const csa_dims *d, const tensor *cache, long long b, long long rec, int dd) {
  if (d->format == CSA_CACHE_FP8) {
    const nx_u8 *p = (const nx_u8 *)cache->data + (b * d->present_capacity + rec) * CSA_FP8_RECORD_BYTES;
    int tail = dd - CSA_NOPE_DIM, k = dd / NX_FP8_BLOCK;
    if (dd < CSA_NOPE_DIM)
      return nx_e4m3_decode(p[NX_FP8_BLOCK_BYTES * k + 1 + dd % NX_FP8_BLOCK]) *
             nx_ue8m0_decode(p[NX_FP8_BLOCK_BYTES * k]);
    return nx_bf16_to_f32((nx_u16)(p[455 + 2 * tail] | (p[455 + 2 * tail + 1] << 8)));
  }
  return ((const float *)cache->data)[(b * d->present_capacity + rec) * CSA_HEAD_DIM + dd];
}

/* Flat bias offset for (b, h, s, candidate c): size-1 axes read index 0 (seed:752-758, 789-795). */
static long long bias_offset(const csa_dims *d, long long b, long long h, long long s, long long c) {
  const long long logical[4] = {b, h, s, c};
  long long off = 0;
  int axis;
  for (axis = 0; axis < 4; axis++)
    off = off * d->bias_dims[axis] + (d->bias_dims[axis] == 1 ? 0 : logical[axis]);
  return off;
}

/* One row's candidate geometry (seed:715-730). */
typedef struct row_geom {
  long long position, dense_start, dense, records, count;
} row_geom;

static row_geom row_geometry(const csa_dims *d, long long s) {
  row_geom g;
  long long window;
  g.dense = CSA_DENSE_WINDOW;
  if (d->start == 0) g.dense = d->kv_used < CSA_DENSE_WINDOW ? d->kv_used : CSA_DENSE_WINDOW;
  g.position = d->start + s;
  window = g.position + 1 - CSA_DENSE_WINDOW;
  if (window < 0) window = 0;
  g.dense_start = d->kv_base > window ? d->kv_base : window;
  g.records = (g.position + 1) / CSA128_RATIO;
  if (g.records > d->present_capacity) g.records = d->present_capacity;
  g.count = g.dense + g.records;
  return g;
}

/* Candidate c's value at dim dd: a current_kv row or a record. */
static float candidate_load(const csa_dims *d, const tensor *const *in, tensor *const *out, const row_geom *g,
                            long long b, long long c, int dd) {
  if (c < g->dense) {
    long long rel = g->dense_start + c - d->kv_base;
    return ((const float *)in[CSA_IN_CURRENT_KV]->data)[(b * d->kv_len + rel) * CSA_HEAD_DIM + dd];
  }
  return record_load(d, out[CSA_OUT_PRESENT_COMPRESSED_KV], b, c - g->dense, dd);
}

/* 1 when dense candidate c is a live position (seed:742-747). */
static int dense_live(const csa_dims *d, const row_geom *g, long long c) {
  long long abs_pos = g->dense_start + c;
  return abs_pos <= g->position && abs_pos - d->kv_base < d->kv_used;
}

/*
** One output row (b, s, h).  score[] (score_stride long) gets every
** candidate's score, -inf where there is none.
*/
static void attend_row(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b, long long s,
                       long long h, float *score) {
  const float *q = (const float *)in[CSA_IN_QUERY]->data + ((b * d->seq + s) * d->heads + h) * CSA_HEAD_DIM;
  const float *bias = d->has_bias ? in[CSA_IN_BIAS]->data : NULL;
  float *y = (float *)out[CSA_OUT_Y]->data + ((b * d->seq + s) * d->heads + h) * CSA_HEAD_DIM;
  float sink = ((const float *)in[CSA_IN_HEAD_SINK]->data)[h];
  row_geom g = row_geometry(d, s);
  float m = neg_inf(), denom = 0.0f, *prob;
  long long c;
  int dd;

  for (c = 0; c < d->score_stride; c++) score[c] = neg_inf();
  for (c = 0; c < g.count; c++) {
    float acc = 0.0f, sc;
    if (c < g.dense && !dense_live(d, &g, c)) continue;
    for (dd = 0; dd < CSA_HEAD_DIM; dd++) acc = acc + q[dd] * candidate_load(d, in, out, &g, b, c, dd);
    sc = acc * d->scale;
    if (bias) sc = sc + bias[bias_offset(d, b, h, s, c)];
    score[c] = sc;
    m = nx_maxf(m, sc);
  }
  if (nx_f32_bits(m) == NEG_INF_BITS) { /* all masked: the sink alone gives no row */
    for (dd = 0; dd < CSA_HEAD_DIM; dd++) y[dd] = 0.0f;
    return;
  }
  for (c = 0; c < g.count; c++)
    if (nx_f32_bits(score[c]) != NEG_INF_BITS) denom = denom + nx_expf(score[c] - m);
  denom = denom + nx_expf(sink - m); /* after the max: a logit-only mass */
  /* prob[c] = exp(score - m) / denom, the same value for every dim, so it is
  ** computed once per candidate (the bits do not depend on where) */
  prob = alloc_or_die((size_t)g.count, sizeof *prob, __LINE__);
  for (c = 0; c < g.count; c++)
    prob[c] = nx_f32_bits(score[c]) == NEG_INF_BITS ? 0.0f : nx_expf(score[c] - m) / denom;
  for (dd = 0; dd < CSA_HEAD_DIM; dd++) {
    float acc = 0.0f;
    for (c = 0; c < g.count; c++) {
      if (nx_f32_bits(score[c]) == NEG_INF_BITS) continue;
      acc = acc + prob[c] * candidate_load(d, in, out, &g, b, c, dd);
    }
    y[dd] = acc;
  }
  free(prob);
}

int oracle_csa128_run(const csa_attrs *a, const tensor *const *inputs, int n_inputs, tensor *const *outputs,
                      int n_outputs, csa_trace *trace, op_error *err) {
  csa_dims d;
  long long b, s, h;
  float *score;
  int rc;

  rc = csa_validate(a, inputs, n_inputs, (const tensor *const *)outputs, n_outputs, &d, err);
  if (!rc) rc = csa_validate_cursor(&d, inputs[CSA_IN_TOTAL_SEQ], err);
  if (rc) return rc;
  for (b = 0; b < d.batch; b++) compress_row(&d, inputs, outputs, b, trace);
  score = alloc_or_die((size_t)d.score_stride, sizeof(float), __LINE__);
  for (b = 0; b < d.batch; b++)
    for (s = 0; s < d.seq; s++)
      for (h = 0; h < d.heads; h++) {
        long long row = (b * d.seq + s) * d.heads + h;
        attend_row(&d, inputs, outputs, b, s, h, score);
        if (trace && trace->scores)
          memcpy(trace->scores + row * d.score_stride, score, (size_t)d.score_stride * sizeof(float));
        if (trace && trace->output)
          memcpy(trace->output + row * CSA_HEAD_DIM, (const float *)outputs[CSA_OUT_Y]->data + row * CSA_HEAD_DIM,
                 CSA_HEAD_DIM * sizeof(float));
      }
  free(score);
  return 0;
}

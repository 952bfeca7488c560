/*
** index_share.c: the IndexShare oracle's computation: the present KV cache
** and, per output row, the selected-key scores, the softmax and P.V.
**
** Source: seed 000_7dfea7c512118af3.txt, the kernels build_present,
** build_present_capacity and index_share_row, and execute's order of steps.
** oracle/SPEC.md gives every formula; in short, for row (b, qh, qi):
**
**   score_s = sum_d (q[d] * sqrt_scale) * (K[key_s][d] * sqrt_scale)  [+ bias]
**   m = max_s score_s (nx_maxf: NaN ignored); m == -inf: the row is +0
**   e_s = nx_expf(score_s - m); sum = sum_s e_s; inv = 1 / sum; p_s = e_s * inv
**   Y[d] = sum_s p_s * V[key_s][d]
**
** Exactness: every operation is one IEEE binary32 operation rounded to
** nearest; sums start at +0.0f and run in ascending index order; the build
** forbids contraction (-ffp-contract=off), so nothing is fused.  nx_expf is
** correctly rounded (DESIGN.md "The frozen numerics"), unlike the seed's CUDA
** expf.  f16/bf16 values are widened exactly and every stored value goes
** through the storage conversion (round to nearest even, NaN -> 0x7fff).
** NaN: a NaN score is skipped by the max but poisons the sum (Y is NaN); a
** row whose scores are all -inf or NaN is all-masked.  Inf: a +inf score
** gives inf - inf = NaN.  Signed zero: the all-masked row stores +0.
** Threads: output rows are independent, so they are spread over the
** oracle's workers (oracle_threads.h); each row's operations are unchanged.
*/
#include "oracle/index_share.h"

#include "oracle/numerics/numerics.h"
#include "oracle/oracle_threads.h"

#include <stdlib.h>
#include <string.h>

/* Rows a worker should get at least: a row is K dot products of H, so a few
** rows outweigh starting a thread; tiny cases stay on one thread. */
#define ROWS_PER_WORKER_MIN 4

/* The oracle has no error class for memory: running out is fatal, with the place. */
/* A present cache (K or V) as a function of its two sources. */
typedef struct is_cache {
  const tensor *past; /* NULL when there is no past */
  const tensor *cur;
} is_cache;

/*
** Which source holds present row t of (b, kv head h), and the flat offset of
** that row's first element there.  Growing: past rows [0, Sp), then current
** rows.  Capacity: past rows, except [wp, wp + Sc) (clipped to cache_seq by
** the caller's range of t), which hold current row t - wp.
*/
static const tensor *present_source(const index_share_dims *d, const is_cache *c, long long wp, long long b,
                                    long long h, long long t, long long *row_off) {
  long long bh = b * d->kv_heads + h;
  int from_current = d->capacity_mode ? (t >= wp && t - wp < d->current_seq) : t >= d->past_seq;
  if (from_current) {
    long long ct = d->capacity_mode ? t - wp : t - d->past_seq;
    *row_off = (bh * d->current_seq + ct) * d->head_size;
    return c->cur;
  }
  *row_off = (bh * d->past_seq + t) * d->head_size;
  return c->past;
}

/*
** A value as it reads back after a store into storage of type dt: the
** identity on every value except an f16/bf16 NaN, which becomes 0x7fff
** (the kernel's load_float / store_float pair does the same).
*/
static float storage_round_trip(dtype dt, float v) {
  if (dt == DTYPE_F16) return nx_f16_to_f32(nx_f16_from_f32(v));
  if (dt == DTYPE_BF16) return nx_bf16_to_f32(nx_bf16_from_f32(v));
  return v;
}

/*
** Writes the present output [B, Nkv, cache_seq, H].  f32 is copied bit for
** bit (so NaN payloads survive); f16/bf16 go through load and store.
*/
static void build_present(const index_share_dims *d, const is_cache *c, const long long *write_pos,
                          tensor *out) {
  long long b, h, t, i, off, dst = 0;
  for (b = 0; b < d->batch; b++)
    for (h = 0; h < d->kv_heads; h++)
      for (t = 0; t < d->cache_seq; t++, dst += d->head_size) {
        const tensor *src = present_source(d, c, write_pos[b], b, h, t, &off);
        if (d->dt == DTYPE_F32) {
          memcpy((float *)out->data + dst, (const float *)src->data + off,
                 (size_t)d->head_size * sizeof(float));
          continue;
        }
        for (i = 0; i < d->head_size; i++) tensor_store_f32(out, dst + i, tensor_load_f32(src, off + i));
      }
}

/* Everything one output row reads, and its scratch. */
typedef struct is_ctx {
  const index_share_dims *d;
  const tensor *q, *indices, *bias;
  is_cache key, value;
  const long long *write_pos;
  tensor *y;
  index_share_trace *trace;
  float *scratch; /* per worker 2K + 3H floats: a row_scratch */
  long long scratch_stride; /* floats between two workers' scratch, on whole cache lines */
} is_ctx;

/* One worker's scratch, cut from is_ctx.scratch. */
typedef struct row_scratch {
  float *score, *prob; /* [K]: scores (then exponentials), probabilities */
  float *q_scaled;     /* [H]: the row's q[d] * sqrt_scale, the same for every key */
  float *kv;           /* [H]: one present K or V row as the kernel reads it back */
  float *y;            /* [H]: Y's sums */
} row_scratch;

/*
** Present row t of (b, kv head h), every element as the kernel reads it back:
** tensor_load_f32 then storage_round_trip, with the type tests out of the
** loop.  A half stored as its own type comes back unchanged unless it is a
** NaN (test_numerics_formats checks all 65,536 of each), so only a NaN pays
** for the conversion.
*/
static void present_row(const is_ctx *x, const is_cache *c, long long b, long long h, long long t, float *out) {
  const long long n = x->d->head_size;
  const dtype store = x->d->dt;
  long long off, dd;
  const tensor *src = present_source(x->d, c, x->write_pos[b], b, h, t, &off);
  const nx_u16 *half = (const nx_u16 *)src->data + off;
  switch (src->dt) {
  case DTYPE_F32:
    for (dd = 0; dd < n; dd++) out[dd] = storage_round_trip(store, ((const float *)src->data)[off + dd]);
    break;
  case DTYPE_F16:
    for (dd = 0; dd < n; dd++) {
      const float v = nx_f16_to_f32(half[dd]);
      out[dd] = store == DTYPE_F16 && v == v ? v : storage_round_trip(store, v);
    }
    break;
  default:
    for (dd = 0; dd < n; dd++) {
      const float v = nx_bf16_to_f32(half[dd]);
      out[dd] = store == DTYPE_BF16 && v == v ? v : storage_round_trip(store, v);
    }
    break;
  }
}

/* Entries before the first -1 (the validated row's selected keys). */
static long long row_valid_count(const is_ctx *x, long long index_row) {
  long long s;
  for (s = 0; s < x->d->selected_width; s++)
    if (tensor_load_index(x->indices, index_row + s) == -1) break;
  return s;
}

/* y[d] = y[d] + p * v[d]: the two never overlap, so the dims may advance as vectors. */
static void add_scaled_row(float *restrict y, const float *restrict v, float p, long long n) {
  long long dd;
  for (dd = 0; dd < n; dd++) y[dd] = y[dd] + p * v[dd];
}

/* score = sum_d (q[d] * ss) * (K[key][d] * ss) from +0 ascending, then + bias. */
static float row_score(const is_ctx *x, const row_scratch *w, long long b, long long qh, long long qi,
                       long long kvh, long long key) {
  const index_share_dims *d = x->d;
  const float ss = d->sqrt_scale;
  float acc = 0.0f;
  long long dd;
  present_row(x, &x->key, b, kvh, key, w->kv);
  for (dd = 0; dd < d->head_size; dd++) acc = acc + w->q_scaled[dd] * (w->kv[dd] * ss);
  if (d->has_bias) acc = acc + tensor_load_f32(x->bias, index_share_bias_offset(d, b, qh, qi, key));
  return acc;
}

/*
** One output row (b, qh, qi): seed index_share_row, stages 1 to 3, on the
** calling worker's scratch w; the row writes only its own Y row and trace
** columns, so rows may run on any thread in any order.  Y's sums advance
** key by key, all dims at once; each dim still adds its terms in key order.
*/
static void row_attend(const is_ctx *x, const row_scratch *w, long long b, long long qh, long long qi) {
  const index_share_dims *d = x->d;
  float *score = w->score, *prob = w->prob;
  long long K = d->selected_width, row = (b * d->q_heads + qh) * d->q_seq + qi;
  long long kvh = qh / d->group, ih = d->index_heads == 1 ? 0 : qh;
  long long index_row = ((b * d->index_heads + ih) * d->q_seq + qi) * K;
  long long valid = row_valid_count(x, index_row), s, dd;
  float m = nx_f32_from_bits(0xff800000u), sum = 0.0f, inv; /* m starts at -inf */

  for (dd = 0; dd < d->head_size; dd++)
    w->q_scaled[dd] = tensor_load_f32(x->q, row * d->head_size + dd) * d->sqrt_scale;
  for (s = 0; s < valid; s++) {
    score[s] = row_score(x, w, b, qh, qi, kvh, tensor_load_index(x->indices, index_row + s));
    if (x->trace && x->trace->scores) x->trace->scores[row * K + s] = score[s];
  }
  for (s = 0; s < valid; s++) m = nx_maxf(m, score[s]);
  if (m == nx_f32_from_bits(0xff800000u)) { /* every score -inf or NaN: all masked */
    for (dd = 0; dd < d->head_size; dd++) tensor_store_f32(x->y, row * d->head_size + dd, 0.0f);
    if (x->trace && x->trace->probs)
      for (s = 0; s < valid; s++) x->trace->probs[row * K + s] = 0.0f;
    return;
  }
  for (s = 0; s < valid; s++) {
    score[s] = nx_expf(score[s] - m);
    sum = sum + score[s];
  }
  inv = 1.0f / sum;
  for (s = 0; s < valid; s++) {
    prob[s] = score[s] * inv;
    if (x->trace && x->trace->probs) x->trace->probs[row * K + s] = prob[s];
  }
  for (dd = 0; dd < d->head_size; dd++) w->y[dd] = 0.0f;
  for (s = 0; s < valid; s++) {
    const float p = prob[s];
    present_row(x, &x->value, b, kvh, tensor_load_index(x->indices, index_row + s), w->kv);
    add_scaled_row(w->y, w->kv, p, d->head_size);
  }
  for (dd = 0; dd < d->head_size; dd++) tensor_store_f32(x->y, row * d->head_size + dd, w->y[dd]);
}

/* Output rows [begin, end) in (b, qh, qi) order, on one worker's scratch. */
static void rows_attend(void *ctx, long long begin, long long end, int worker) {
  const is_ctx *x = ctx;
  const long long K = x->d->selected_width, H = x->d->head_size;
  row_scratch w;
  long long r;
  w.score = x->scratch + worker * x->scratch_stride, w.prob = w.score + K;
  w.q_scaled = w.prob + K, w.kv = w.q_scaled + H, w.y = w.kv + H;
  for (r = begin; r < end; r++)
    row_attend(x, &w, r / (x->d->q_heads * x->d->q_seq), r / x->d->q_seq % x->d->q_heads, r % x->d->q_seq);
}

int oracle_index_share_run(const index_share_attrs *a, const tensor *const *inputs, int n_inputs,
                           tensor *const *outputs, int n_outputs, index_share_trace *trace, op_error *err) {
  index_share_dims d;
  long long *valid_len = NULL, *write_pos = NULL, *bound = NULL, b, rows;
  is_ctx x;
  int rc, workers;

  rc = index_share_validate(a, inputs, n_inputs, (const tensor *const *)outputs, n_outputs, &d, err);
  if (rc) return rc;
  valid_len = oracle_alloc_or_die((size_t)d.batch, sizeof *valid_len, __FILE__, __LINE__);
  write_pos = oracle_alloc_or_die((size_t)d.batch, sizeof *write_pos, __FILE__, __LINE__);
  bound = oracle_alloc_or_die((size_t)d.batch, sizeof *bound, __FILE__, __LINE__);
  if (d.capacity_mode) index_share_capacity_frontier(&d, inputs[IS_IN_BIAS], valid_len, write_pos);
  for (b = 0; b < d.batch; b++) bound[b] = d.capacity_mode ? valid_len[b] : d.total_seq;
  rc = index_share_validate_indices(&d, inputs[IS_IN_INDICES], bound, err);
  if (rc) goto done;

  memset(&x, 0, sizeof x);
  x.d = &d;
  x.q = inputs[IS_IN_QUERY];
  x.indices = inputs[IS_IN_INDICES];
  x.bias = d.has_bias ? inputs[IS_IN_BIAS] : NULL;
  x.key.past = d.has_past ? inputs[IS_IN_PAST_KEY] : NULL;
  x.key.cur = inputs[IS_IN_KEY];
  x.value.past = d.has_past ? inputs[IS_IN_PAST_VALUE] : NULL;
  x.value.cur = inputs[IS_IN_VALUE];
  x.write_pos = write_pos; /* all 0 when growing, where it is not used */
  x.y = outputs[IS_OUT_Y];
  x.trace = trace;
  rows = d.batch * d.q_heads * d.q_seq;
  workers = oracle_parallel_workers(rows, ROWS_PER_WORKER_MIN);
  x.scratch_stride = oracle_worker_stride(2 * d.selected_width + 3 * d.head_size, sizeof(float));
  x.scratch = oracle_alloc_or_die((size_t)(workers * x.scratch_stride), sizeof(float), __FILE__, __LINE__);
  if (n_outputs == 3) {
    build_present(&d, &x.key, write_pos, outputs[IS_OUT_PRESENT_KEY]);
    build_present(&d, &x.value, write_pos, outputs[IS_OUT_PRESENT_VALUE]);
  }
  oracle_parallel_for(rows, workers, rows_attend, &x);
  free(x.scratch);
done:
  free(valid_len);
  free(write_pos);
  free(bound);
  return rc;
}

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
** oracle's workers (oracle_threads.h), a unit of a few heads that share a kv
** head and an index row at a time (each K and V row read once for them);
** each row's operations are unchanged.  When the units are too few for the
** workers, index_share_split.c cuts each into finer items, with the same
** operations again (index_share_rows.h).  The present outputs' (b, kv head)
** blocks are spread over the workers too.
*/
#include "oracle/index_share.h"
#include "oracle/index_share_rows.h"

#include "oracle/numerics/numerics.h"
#include "oracle/oracle_threads.h"

#include <stdlib.h>
#include <string.h>

/* Rows a worker should get at least: a row is K dot products of H, so a few
** rows outweigh starting a thread; tiny cases stay on one thread. */
#define ROWS_PER_WORKER_MIN 4

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

/* One present output's build, shared by the workers that split its (b, kv head) blocks. */
typedef struct present_job {
  const index_share_dims *d;
  const is_cache *c;
  const long long *write_pos;
  tensor *out;
} present_job;

/*
** Blocks [i0, i1) of the present output [B, Nkv, cache_seq, H], block i =
** (b, h) = (i / Nkv, i % Nkv).  f32 is copied bit for bit (so NaN payloads
** survive); f16/bf16 go through load and store, which for a half of the
** output's own type is the identity unless it is a NaN (test_numerics_formats
** checks all 65,536 of each), so only a NaN pays for the conversion.
*/
static void present_blocks(void *ctx, long long i0, long long i1, int worker) {
  const present_job *j = ctx;
  const index_share_dims *d = j->d;
  long long i, t, e, off;
  (void)worker;
  for (i = i0; i < i1; i++) {
    const long long b = i / d->kv_heads, h = i % d->kv_heads;
    long long dst = i * d->cache_seq * d->head_size;
    for (t = 0; t < d->cache_seq; t++, dst += d->head_size) {
      const tensor *src = present_source(d, j->c, j->write_pos[b], b, h, t, &off);
      if (d->dt == DTYPE_F32) {
        memcpy((float *)j->out->data + dst, (const float *)src->data + off, (size_t)d->head_size * sizeof(float));
      } else if (src->dt == j->out->dt) {
        const nx_u16 *from = (const nx_u16 *)src->data + off;
        nx_u16 *to = (nx_u16 *)j->out->data + dst;
        for (e = 0; e < d->head_size; e++) {
          const float v = tensor_load_f32(src, off + e);
          if (v == v) to[e] = from[e];
          else tensor_store_f32(j->out, dst + e, v);
        }
      } else {
        for (e = 0; e < d->head_size; e++) tensor_store_f32(j->out, dst + e, tensor_load_f32(src, off + e));
      }
    }
  }
}

/* Writes the present output [B, Nkv, cache_seq, H], its (b, kv head) blocks on the workers. */
static void build_present(const index_share_dims *d, const is_cache *c, const long long *write_pos,
                          tensor *out) {
  const long long blocks = d->batch * d->kv_heads;
  present_job j;
  j.d = d, j.c = c, j.write_pos = write_pos, j.out = out;
  oracle_parallel_for(blocks, oracle_parallel_workers(blocks, 1), present_blocks, &j);
}

/* One worker's scratch for whole units, cut from is_ctx.scratch; [g] is head g of the unit. */
typedef struct row_scratch {
  float *score, *prob; /* [G][K]: scores (then exponentials), probabilities */
  float *q_t;          /* [H][IS_HEAD_GROUP]: each head's q[d] * sqrt_scale (the same for every key), interleaved */
  float *kv;           /* [H]: one present K or V row as the kernel reads it back */
  float *k_scaled;     /* [H]: that K row times sqrt_scale, the same for every head */
  float *y;            /* [G][H]: Y's sums */
} row_scratch;

static long long scratch_floats(long long g, long long k, long long h) {
  return 2 * g * k + IS_HEAD_GROUP * h + g * h + 2 * h;
}

void is_unit_locate(const is_ctx *x, long long u, is_unit *out) {
  const index_share_dims *d = x->d;
  const long long G = x->group_heads, r = u / d->q_seq, chunk = r % x->head_chunks, bk = r / x->head_chunks;
  out->qi = u % d->q_seq;
  out->kv_head = bk % d->kv_heads;
  out->b = bk / d->kv_heads;
  out->h0 = out->kv_head * d->group + chunk * G;
  out->heads = d->group - chunk * G < G ? d->group - chunk * G : G;
  out->index_row = ((out->b * d->index_heads + (d->index_heads == 1 ? 0 : out->h0)) * d->q_seq + out->qi) *
                   d->selected_width;
  out->valid = 0;
}

long long is_row_valid_count(const is_ctx *x, long long index_row) {
  long long s;
  for (s = 0; s < x->d->selected_width; s++)
    if (tensor_load_index(x->indices, index_row + s) == -1) break;
  return s;
}

/*
** Every element through tensor_load_f32 then storage_round_trip, with the
** type tests out of the loop.  A half stored as its own type comes back
** unchanged unless it is a NaN (test_numerics_formats checks all 65,536 of
** each), so only a NaN pays for the conversion.
*/
void is_present_row(const is_ctx *x, const is_cache *c, long long b, long long h, long long t, long long d0,
                    long long n, float *out) {
  const dtype store = x->d->dt;
  long long off, dd;
  const tensor *src = present_source(x->d, c, x->write_pos[b], b, h, t, &off);
  const nx_u16 *half = (const nx_u16 *)src->data + off + d0;
  switch (src->dt) {
  case DTYPE_F32:
    for (dd = 0; dd < n; dd++) out[dd] = storage_round_trip(store, ((const float *)src->data)[off + d0 + dd]);
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

/*
** acc[g] = sum_d q_t[d * IS_HEAD_GROUP + g] * k[d] from +0, d ascending, for
** the first `lanes` lanes at once (the heads' queries interleaved, so that
** one d is one vector operation; lanes past the unit's heads hold zeros).
** lanes is a constant where it is inlined, so each width gets its own loop.
*/
static inline void dot_lanes(const float *restrict q_t, const float *restrict k, long long n, float *restrict acc,
                             int lanes) {
  long long dd;
  int g;
  for (g = 0; g < lanes; g++) acc[g] = 0.0f;
  for (dd = 0; dd < n; dd++)
    for (g = 0; g < lanes; g++) acc[g] = acc[g] + q_t[dd * IS_HEAD_GROUP + g] * k[dd];
}

/*
** The G heads' dots: 8 lanes where they are enough (64 query heads over 8
** kv heads), else IS_HEAD_GROUP.  Why: 16 lanes for 8 heads computed as many
** zero lanes as heads (IndexShare heads 64, B = 1 on one thread: 13.3 ->
** 8.8 ms with 8 lanes, docs/SPEED.md).
*/
static void dot_heads(const float *restrict q_t, const float *restrict k, long long n, long long G,
                      float *restrict acc) {
  if (G <= IS_HEAD_GROUP / 2)
    dot_lanes(q_t, k, n, acc, IS_HEAD_GROUP / 2);
  else
    dot_lanes(q_t, k, n, acc, IS_HEAD_GROUP);
}

void is_query_lanes(const is_ctx *x, const is_unit *u, float *q_t) {
  const index_share_dims *d = x->d;
  const long long H = d->head_size;
  long long g, dd;
  for (g = 0; g < IS_HEAD_GROUP; g++) {
    const long long row = (u->b * d->q_heads + u->h0 + g) * d->q_seq + u->qi;
    for (dd = 0; dd < H; dd++)
      q_t[dd * IS_HEAD_GROUP + g] = g < u->heads ? tensor_load_f32(x->q, row * H + dd) * d->sqrt_scale : 0.0f;
  }
}

void is_key_scores(const is_ctx *x, const is_unit *u, long long key, const float *q_t, float *kv,
                   float *k_scaled, float *score, long long stride) {
  const index_share_dims *d = x->d;
  const long long H = d->head_size;
  float acc[IS_HEAD_GROUP];
  long long g, dd;
  is_present_row(x, &x->key, u->b, u->kv_head, key, 0, H, kv);
  for (dd = 0; dd < H; dd++) k_scaled[dd] = kv[dd] * d->sqrt_scale;
  if (u->heads == 1) { /* heads with index rows of their own (index_heads > 1): one chain, no idle lanes */
    acc[0] = 0.0f;
    for (dd = 0; dd < H; dd++) acc[0] = acc[0] + q_t[dd * IS_HEAD_GROUP] * k_scaled[dd];
  } else {
    dot_heads(q_t, k_scaled, H, u->heads, acc);
  }
  for (g = 0; g < u->heads; g++) {
    if (d->has_bias)
      acc[g] = acc[g] + tensor_load_f32(x->bias, index_share_bias_offset(d, u->b, u->h0 + g, u->qi, key));
    score[g * stride] = acc[g];
  }
}

int is_head_softmax(const is_ctx *x, const is_unit *u, long long g, float *score, float *prob) {
  const index_share_dims *d = x->d;
  const long long K = d->selected_width, row = (u->b * d->q_heads + u->h0 + g) * d->q_seq + u->qi;
  const float neg_inf = nx_f32_from_bits(0xff800000u);
  float m = neg_inf, sum = 0.0f, inv;
  long long s;
  if (x->trace && x->trace->scores)
    for (s = 0; s < u->valid; s++) x->trace->scores[row * K + s] = score[s];
  for (s = 0; s < u->valid; s++) m = nx_maxf(m, score[s]);
  if (m == neg_inf) { /* every score -inf or NaN: all masked */
    if (x->trace && x->trace->probs)
      for (s = 0; s < u->valid; s++) x->trace->probs[row * K + s] = 0.0f;
    return 0;
  }
  for (s = 0; s < u->valid; s++) {
    score[s] = nx_expf(score[s] - m);
    sum = sum + score[s];
  }
  inv = 1.0f / sum;
  for (s = 0; s < u->valid; s++) {
    prob[s] = score[s] * inv;
    if (x->trace && x->trace->probs) x->trace->probs[row * K + s] = prob[s];
  }
  return 1;
}

/*
** The unit's output rows: seed index_share_row, stages 1 to 3, on the
** calling worker's scratch w.  Per head:
**   score_s = sum_d (q[d] * ss) * (K[key_s][d] * ss) from +0 ascending, + bias
**   m = max_s score_s; m == -inf: Y = +0; e_s = exp(score_s - m), sum in s
**   order, p_s = e_s * (1 / sum); Y[d] = sum_s p_s * V[key_s][d], s ascending
** Each K or V row is read once for the unit's heads; every head's sums are
** its own, in the order above.  The rows write only their own Y rows and
** trace columns, so units may run on any thread in any order.
*/
static void rows_attend_heads(const is_ctx *x, const row_scratch *w, const is_unit *u) {
  const index_share_dims *d = x->d;
  const long long K = d->selected_width, H = d->head_size;
  int live[IS_HEAD_GROUP];
  long long g, s, dd;

  is_query_lanes(x, u, w->q_t);
  for (s = 0; s < u->valid; s++)
    is_key_scores(x, u, tensor_load_index(x->indices, u->index_row + s), w->q_t, w->kv, w->k_scaled, w->score + s,
                  K);
  for (g = 0; g < u->heads; g++) {
    for (dd = 0; dd < H; dd++) w->y[g * H + dd] = 0.0f;
    live[g] = is_head_softmax(x, u, g, w->score + g * K, w->prob + g * K);
  }
  for (s = 0; s < u->valid; s++) {
    is_present_row(x, &x->value, u->b, u->kv_head, tensor_load_index(x->indices, u->index_row + s), 0, H, w->kv);
    for (g = 0; g < u->heads; g++)
      if (live[g]) is_add_scaled_row(w->y + g * H, w->kv, w->prob[g * K + s], H);
  }
  for (g = 0; g < u->heads; g++) {
    const long long row = (u->b * d->q_heads + u->h0 + g) * d->q_seq + u->qi;
    for (dd = 0; dd < H; dd++) tensor_store_f32(x->y, row * H + dd, w->y[g * H + dd]);
  }
}

/* Units [begin, end), on one worker's scratch. */
static void rows_attend(void *ctx, long long begin, long long end, int worker) {
  const is_ctx *x = ctx;
  const long long K = x->d->selected_width, H = x->d->head_size, G = x->group_heads;
  row_scratch w;
  is_unit unit;
  long long u;
  w.score = x->scratch + worker * x->scratch_stride, w.prob = w.score + G * K;
  w.q_t = w.prob + G * K, w.y = w.q_t + IS_HEAD_GROUP * H, w.kv = w.y + G * H, w.k_scaled = w.kv + H;
  for (u = begin; u < end; u++) {
    is_unit_locate(x, u, &unit);
    unit.valid = is_row_valid_count(x, unit.index_row);
    rows_attend_heads(x, &w, &unit);
  }
}

/* Whole units on the workers, each on a worker's scratch. */
static void rows_attend_units(is_ctx *x, long long units) {
  const int workers = oracle_parallel_workers(units, (ROWS_PER_WORKER_MIN + x->group_heads - 1) / x->group_heads);
  x->scratch_stride =
      oracle_worker_stride(scratch_floats(x->group_heads, x->d->selected_width, x->d->head_size), sizeof(float));
  x->scratch = oracle_alloc_or_die((size_t)(workers * x->scratch_stride), sizeof(float), __FILE__, __LINE__);
  oracle_parallel_for(units, workers, rows_attend, x);
  free(x->scratch);
  x->scratch = NULL;
}

int oracle_index_share_run(const index_share_attrs *a, const tensor *const *inputs, int n_inputs,
                           tensor *const *outputs, int n_outputs, index_share_trace *trace, op_error *err) {
  index_share_dims d;
  long long *valid_len = NULL, *write_pos = NULL, *bound = NULL, b, units;
  is_ctx x;
  int rc;

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
  x.group_heads = d.index_heads == 1 ? (d.group < IS_HEAD_GROUP ? d.group : IS_HEAD_GROUP) : 1;
  if (x.group_heads < 1) x.group_heads = 1;
  x.head_chunks = (d.group + x.group_heads - 1) / x.group_heads;
  units = d.batch * d.kv_heads * x.head_chunks * d.q_seq;
  if (n_outputs == 3) {
    build_present(&d, &x.key, write_pos, outputs[IS_OUT_PRESENT_KEY]);
    build_present(&d, &x.value, write_pos, outputs[IS_OUT_PRESENT_VALUE]);
  }
  if (is_split_fits(&x, units))
    is_rows_attend_split(&x, units);
  else
    rows_attend_units(&x, units);
done:
  free(valid_len);
  free(write_pos);
  free(bound);
  return rc;
}

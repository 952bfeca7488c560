/*
** index_share_fill.c: the values of one step's IndexShare inputs, once
** index_share_materialize.c has allocated them: random values per element
** (a stream per input slot, so a case plus its seed fixes every byte),
** is.numeric's specials (huge, subnormal, NaN, inf, written as raw storage
** bits), the valid index rows, and the bias with a capacity case's
** frontier (the non-finite tail, the finite anchor, is.capfront's gaps and
** inner specials) and is.masked's rows.
*/
#include "cases/index_share_cases_internal.h"

#include "cases/rng.h"
#include "oracle/numerics/numerics.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------- the values */

static float f32_inf(int negative) { return nx_f32_from_bits(negative ? 0xff800000u : 0x7f800000u); }

/* Stores v into element i whatever the tensor's dtype (a contract case may
** give a float input an integer dtype: it then gets v truncated, 0 for non-finite). */
static void store_any(tensor *t, long long i, float v) {
  long long x = v > -1e9f && v < 1e9f ? (long long)v : 0;
  switch (t->dt) {
  case DTYPE_F32:
  case DTYPE_F16:
  case DTYPE_BF16: tensor_store_f32(t, i, v); break;
  case DTYPE_I32: ((int32_t *)t->data)[i] = (int32_t)x; break;
  case DTYPE_I64: ((int64_t *)t->data)[i] = x; break;
  case DTYPE_U8: ((uint8_t *)t->data)[i] = (uint8_t)x; break;
  default: break;
  }
}

/* Stores index value v (an index tensor may have a float dtype in is.contract). */
void is_store_index(tensor *t, long long i, long long v) {
  switch (t->dt) {
  case DTYPE_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
  case DTYPE_I64: ((int64_t *)t->data)[i] = v; break;
  case DTYPE_U8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
  case DTYPE_F32:
  case DTYPE_F16:
  case DTYPE_BF16: tensor_store_f32(t, i, (float)v); break;
  default: break;
  }
}

static void fill_values(const is_case *c, int step, tensor *t, int slot) {
  long long i, n = tensor_numel(t);
  for (i = 0; i < n; i++)
    store_any(t, i, cases_rng_normalish(cases_rng_u64(c->seed, IS_STREAM_TENSOR + (uint32_t)slot, (uint32_t)step, (uint64_t)i)));
}

/*
** One is.numeric special into element i of a float tensor, written as raw
** storage bits where the value matters bit for bit (subnormal, NaN, inf).
*/
static void put_special(tensor *t, long long i, is_special kind, uint64_t bits) {
  unsigned sign = (unsigned)(bits & 1u);
  bits >>= 1;
  if (kind == IS_SPECIAL_MIXED) kind = (is_special)(IS_SPECIAL_HUGE + (int)(bits % 4u)), bits >>= 2;
  if (kind == IS_SPECIAL_HUGE) {
    float m = cases_rng_uniform(bits, 0.5f, 1.0f) * (t->dt == DTYPE_F16 ? 6.0e4f : 1.0e30f); /* f16 max 65504 */
    tensor_store_f32(t, i, sign ? -m : m);
  } else if (t->dt == DTYPE_F32) {
    uint32_t u = kind == IS_SPECIAL_SUBNORMAL ? 1u + (uint32_t)(bits % 0x7fffffu)
                 : kind == IS_SPECIAL_NAN     ? 0x7fc00000u | (uint32_t)(bits & 0x3fffffu)
                                              : 0x7f800000u;
    ((uint32_t *)t->data)[i] = u | (uint32_t)sign << 31;
  } else {
    int half = t->dt == DTYPE_F16;
    unsigned u = kind == IS_SPECIAL_SUBNORMAL ? 1u + (unsigned)(bits % (half ? 0x3ffu : 0x7fu))
                 : kind == IS_SPECIAL_NAN     ? (half ? 0x7e00u | (unsigned)(bits & 0x1ffu) : 0x7fc0u | (unsigned)(bits & 0x3fu))
                                              : (half ? 0x7c00u : 0x7f80u);
    ((uint16_t *)t->data)[i] = (uint16_t)(u | sign << 15);
  }
}

static int slot_gets_specials(const is_case *c, int slot) {
  if (c->family != IS_FAMILY_NUMERIC) return 0;
  switch (slot) {
  case IS_IN_QUERY: return (c->num_in & IS_NUM_IN_Q) != 0;
  case IS_IN_KEY:
  case IS_IN_PAST_KEY: return (c->num_in & IS_NUM_IN_K) != 0;
  case IS_IN_VALUE:
  case IS_IN_PAST_VALUE: return (c->num_in & IS_NUM_IN_V) != 0;
  default: return 0;
  }
}

static void fill_specials(const is_case *c, int step, tensor *t, int slot) {
  long long i, n = tensor_numel(t);
  if (!dtype_is_float(t->dt)) return;
  for (i = 0; i < n; i++) {
    uint64_t bits = cases_rng_u64(c->seed, IS_STREAM_SPECIAL + (uint32_t)slot, (uint32_t)step, (uint64_t)i);
    if (bits % 1000u < (unsigned)c->num_rate) put_special(t, i, c->num, bits >> 10);
  }
}

/* --------------------------------------------------------- index rows */

/* n distinct values of [lo, hi) in increasing order (Floyd's sampling); out holds n. */
void is_sample_sorted(cases_rng *r, long long n, long long lo, long long hi, long long *out) {
  long long j, m = 0;
  for (j = hi - lo - n; j < hi - lo; j++) {
    long long t = cases_rng_next_range(r, 0, j), a = 0, z = m;
    while (a < z) { /* lower bound of t */
      long long mid = a + (z - a) / 2;
      if (out[mid] < t) a = mid + 1;
      else z = mid;
    }
    if (a < m && out[a] == t) {
      out[m++] = j; /* j is above everything drawn so far */
      continue;
    }
    memmove(out + a + 1, out + a, (size_t)(m - a) * sizeof *out);
    out[a] = t;
    m++;
  }
  for (j = 0; j < n; j++) out[j] += lo;
}

/*
** Valid index rows: each row gets 1..min(K, bound) strictly increasing keys
** below its batch's bound, then -1 padding.  A bound of 0 (an is.capfront
** valid length 0) draws below the capacity instead, so every key is out of
** range.  Works on the tensor's actual shape (right-aligned to 4 dims), so a
** contract case's wrong shape still gets rows.
*/
static int fill_indices(const is_case *c, int step, tensor *ix, const long long *bound) {
  long long d4[4], K, rows, r, col, *keys;
  if (ix->dt == DTYPE_NONE || tensor_numel(ix) == 0) return 0;
  is_bias_dims4(ix->rank, ix->shape, d4);
  K = d4[3];
  rows = tensor_numel(ix) / K;
  if (!(keys = malloc((size_t)K * sizeof *keys))) return -1;
  for (r = 0; r < rows; r++) {
    long long b = r / (d4[1] * d4[2]), draw, n;
    cases_rng rr;
    if (b >= c->batch) b = c->batch - 1;
    draw = bound[b] > 0 ? bound[b] : (is_case_cache(c) > 0 ? is_case_cache(c) : 1);
    cases_rng_init(&rr, c->seed, IS_STREAM_ROWS, (uint32_t)step, (uint64_t)r << 20);
    n = 1 + cases_rng_next_range(&rr, 0, (K < draw ? K : draw) - 1);
    is_sample_sorted(&rr, n, 0, draw, keys);
    for (col = 0; col < K; col++) is_store_index(ix, r * K + col, col < n ? keys[col] : -1);
  }
  free(keys);
  return 0;
}

/* ----------------------------------------------------------- the bias */

/* -inf, +inf or NaN for a bias fill kind (mixed: one of the three). */
static float bias_nonfinite(is_fill kind, uint64_t bits) {
  if (kind == IS_FILL_MIXED) kind = (is_fill)(IS_FILL_NEG_INF + (int)(bits % 3u));
  if (kind == IS_FILL_POS_INF) return f32_inf(0);
  if (kind == IS_FILL_NAN) return nx_f32_nan();
  return f32_inf(1); /* neginf, and the tail of families without a tail knob */
}

typedef struct bias_fill {
  const is_case *c;
  int step;
  long long d4[4];
  unsigned char *gap; /* [d4[0]][d4[3]]: -inf gap columns, or NULL */
} bias_fill;

static long long bias_valid_len(const bias_fill *f, long long bb) {
  long long b = f->d4[0] == 1 ? 0 : bb < f->c->batch ? bb : f->c->batch - 1;
  return f->c->valid_len[b];
}

/* The frontier anchor: (bb, 0, 0, vlen - 1) stays finite, whatever else happens. */
static int bias_is_anchor(const bias_fill *f, const long long *co) {
  long long vl = bias_valid_len(f, co[0]);
  return co[1] == 0 && co[2] == 0 && vl > 0 && (f->d4[3] == 1 || co[3] == vl - 1);
}

/* Chooses each bias batch's gap columns, below its anchor column. */
static int bias_make_gaps(bias_fill *f) {
  long long bb, i, *cols;
  f->gap = NULL;
  if (!f->c->capacity || f->c->gaps == 0 || f->d4[3] <= 1) return 0;
  if (!(f->gap = calloc((size_t)(f->d4[0] * f->d4[3]) + 1, 1))) return -1;
  if (!(cols = malloc((size_t)f->c->gaps * sizeof *cols))) {
    free(f->gap);
    return -1;
  }
  for (bb = 0; bb < f->d4[0]; bb++) {
    long long room = bias_valid_len(f, bb) - 1, n = f->c->gaps < room ? f->c->gaps : room;
    cases_rng r;
    if (n <= 0) continue;
    cases_rng_init(&r, f->c->seed, IS_STREAM_GAPS, (uint32_t)f->step, (uint64_t)bb << 20);
    is_sample_sorted(&r, n, 0, room, cols);
    for (i = 0; i < n; i++)
      if (cols[i] < f->d4[3]) f->gap[bb * f->d4[3] + cols[i]] = 1;
  }
  free(cols);
  return 0;
}

/* A capacity case's bias value at co (flat e), given the random finite v. */
static float bias_capacity_value(const bias_fill *f, long long e, const long long *co, float v) {
  const is_case *c = f->c;
  long long vl = bias_valid_len(f, co[0]);
  uint64_t tail_bits = cases_rng_u64(c->seed, IS_STREAM_TAIL, (uint32_t)f->step, (uint64_t)e);
  uint64_t inner_bits = cases_rng_u64(c->seed, IS_STREAM_INNER, (uint32_t)f->step, (uint64_t)e);
  if (f->d4[3] == 1) return vl > 0 ? v : bias_nonfinite(c->tail, tail_bits); /* one value for every column */
  if (co[3] >= vl) return bias_nonfinite(c->tail, tail_bits);
  if (bias_is_anchor(f, co)) return v;
  if (f->gap && f->gap[co[0] * f->d4[3] + co[3]]) return f32_inf(1);
  if (c->inner != IS_FILL_NONE && inner_bits % 8u == 0) return bias_nonfinite(c->inner, inner_bits >> 3);
  return v;
}

/*
** At capacity a masked row must not select its batch's anchor column
** vlen - 1, which stays finite: drop it from the row (the largest key, so
** the last before the padding), or move it to vlen - 2 when it is alone.
*/
static void mask_drop_anchor_key(const is_case *c, tensor *ix, long long base, long long b) {
  long long vl = c->valid_len[b], col, last = -1;
  for (col = 0; col < c->selected_width && tensor_load_index(ix, base + col) >= 0; col++) last = col;
  if (vl < 2 || last < 0 || tensor_load_index(ix, base + last) != vl - 1) return;
  is_store_index(ix, base + last, last > 0 ? -1 : vl - 2);
}

/* is.masked: every selected key of the chosen rows gets -inf (the anchor excepted). */
static int bias_mask_rows(const bias_fill *f, tensor *bias, tensor *ix) {
  const is_case *c = f->c;
  long long R = c->batch * c->num_heads * c->q_seq, K = c->selected_width, i, col, *rows;
  cases_rng r;
  if (!(rows = malloc((size_t)c->masked_rows * sizeof *rows))) return -1;
  cases_rng_init(&r, c->seed, IS_STREAM_MASK, (uint32_t)f->step, 0);
  is_sample_sorted(&r, c->masked_rows, 0, R, rows);
  for (i = 0; i < c->masked_rows; i++) {
    long long b = rows[i] / (c->num_heads * c->q_seq), h = rows[i] / c->q_seq % c->num_heads, q = rows[i] % c->q_seq;
    long long base = ((b * c->index_heads + (c->index_heads == 1 ? 0 : h)) * c->q_seq + q) * K;
    if (c->capacity) mask_drop_anchor_key(c, ix, base, b);
    for (col = 0; col < K; col++) {
      long long key = tensor_load_index(ix, base + col), co[4];
      if (key < 0) break; /* trailing padding */
      co[0] = f->d4[0] == 1 ? 0 : b, co[1] = f->d4[1] == 1 ? 0 : h;
      co[2] = f->d4[2] == 1 ? 0 : q, co[3] = f->d4[3] == 1 ? 0 : key;
      if (c->capacity && bias_is_anchor(f, co)) continue;
      store_any(bias, ((co[0] * f->d4[1] + co[1]) * f->d4[2] + co[2]) * f->d4[3] + co[3], f32_inf(1));
    }
  }
  free(rows);
  return 0;
}

/*
** The bias: random finite values; at capacity, the frontier of batch b sits
** at vlen[b] (columns beyond it non-finite, per tail; the anchor at column
** vlen - 1 of head 0, query 0 finite), with gaps and inner specials below it;
** then is.masked's rows (which may drop a key from their index rows, see
** mask_drop_anchor_key).
*/
static int fill_bias(const is_case *c, int step, tensor *bias, tensor *ix) {
  bias_fill f;
  long long e, n = tensor_numel(bias), co[4];
  int rc = 0;
  f.c = c, f.step = step;
  is_bias_dims4(bias->rank, bias->shape, f.d4);
  if (bias_make_gaps(&f)) return -1;
  for (e = 0; e < n; e++) {
    float v = 2.0f * cases_rng_normalish(cases_rng_u64(c->seed, IS_STREAM_TENSOR + IS_IN_BIAS, (uint32_t)step, (uint64_t)e));
    co[3] = e % f.d4[3], co[2] = e / f.d4[3] % f.d4[2], co[1] = e / (f.d4[3] * f.d4[2]) % f.d4[1];
    co[0] = e / (f.d4[3] * f.d4[2] * f.d4[1]);
    store_any(bias, e, c->capacity ? bias_capacity_value(&f, e, co, v) : v);
  }
  if (c->family == IS_FAMILY_MASKED) rc = bias_mask_rows(&f, bias, ix);
  free(f.gap);
  return rc;
}

/* --------------------------------------------------------- the inputs */

/*
** Every input of a step: random values (is.numeric's specials on top), the
** index rows (is.indexviol's planted one on top), then the bias, which
** may drop keys from the index rows (is.masked).
*/
int is_fill_inputs(const is_case *c, int step, tensor *in, const long long *bound) {
  int slot;
  for (slot = 0; slot < IS_CASE_MAX_INPUTS; slot++) {
    if (in[slot].dt == DTYPE_NONE || slot == IS_IN_INDICES || slot == IS_IN_BIAS) continue;
    fill_values(c, step, &in[slot], slot);
    if (slot_gets_specials(c, slot)) fill_specials(c, step, &in[slot], slot);
  }
  if (fill_indices(c, step, &in[IS_IN_INDICES], bound)) return -1;
  if (c->family == IS_FAMILY_INDEXVIOL &&
      cases_is_plant(c, &in[IS_IN_INDICES], c->viol_rule, c->viol_b, c->viol_h, c->viol_q, c->viol_column, bound)) {
    fprintf(stderr, "%s:%d: the parsed viol= cannot be planted\n", __FILE__, __LINE__);
    abort(); /* is_check_case proved it feasible */
  }
  if (in[IS_IN_BIAS].dt != DTYPE_NONE && fill_bias(c, step, &in[IS_IN_BIAS], &in[IS_IN_INDICES])) return -1;
  return 0;
}

/*
** index_share_rows.h: internal to the IndexShare oracle.  The pieces of
** one output row's computation (oracle/SPEC.md), shared by the two ways
** index_share.c spreads rows over the workers: whole units, each a few heads
** of one (b, kv head, qi), when there are enough of them; else the phases of
** index_share_split.c, whose items are finer than a unit.  Both ways call
** these same functions on every key, head and dim, so each output element is
** the same sequence of float operations whichever way, and on any thread
** count, computed it.
*/
#ifndef ORACLE_INDEX_SHARE_ROWS_H
#define ORACLE_INDEX_SHARE_ROWS_H

#include "oracle/index_share.h"

/*
** Heads taken together: with one index row for every head (index_heads ==
** 1), the heads of a kv head select the same keys, so a group of them reads
** (and converts) each present K and V row once instead of once a head.
*/
#define IS_HEAD_GROUP 16

/* A present cache (K or V) as a function of its two sources. */
typedef struct is_cache {
  const tensor *past; /* NULL when there is no past */
  const tensor *cur;
} is_cache;

/* Everything the output rows read. */
typedef struct is_ctx {
  const index_share_dims *d;
  const tensor *q, *indices, *bias;
  is_cache key, value;
  const long long *write_pos;
  tensor *y;
  index_share_trace *trace;
  long long group_heads;    /* heads a unit takes: min(IS_HEAD_GROUP, group) when they share the index row, else 1 */
  long long head_chunks;    /* units a (b, kv head, qi): group / group_heads, rounded up */
  float *scratch;           /* whole units only: per worker, a row_scratch's floats */
  long long scratch_stride; /* floats between two workers' scratch, on whole cache lines */
} is_ctx;

/*
** Unit u: output rows (b, qh, qi) for qh = h0 .. h0 + heads - 1, heads of
** one kv head that share an index row.  Units are numbered (b, kv head,
** head chunk, qi), qi fastest; the last chunk of a kv head may have fewer
** heads than group_heads.
*/
typedef struct is_unit {
  long long b, kv_head, h0, heads, qi;
  long long index_row; /* flat offset of the unit's index row in the indices */
  long long valid;     /* its selected keys: the entries before the first -1 */
} is_unit;

/* Unit u's rows and index row; valid is left to is_row_valid_count (a row's K loads). */
void is_unit_locate(const is_ctx *x, long long u, is_unit *out);

/* Entries of the index row at index_row before the first -1 (the validated row's selected keys). */
long long is_row_valid_count(const is_ctx *x, long long index_row);

/*
** Dims [d0, d0 + n) of present row t of (b, kv head h), as the kernel reads
** them back (a store in the operator's storage type, then a load).
*/
void is_present_row(const is_ctx *x, const is_cache *c, long long b, long long h, long long t, long long d0,
                    long long n, float *out);

/* q_t[d * IS_HEAD_GROUP + g] = q[d] * sqrt_scale of the unit's head g, zeros past its heads. */
void is_query_lanes(const is_ctx *x, const is_unit *u, float *q_t);

/*
** The unit's heads' scores on one selected key, score[g * stride] for head
** g: sum_d (q[d] * ss) * (K[key][d] * ss) from +0, d ascending, then + bias.
** kv and k_scaled are scratch of head_size floats each.
*/
void is_key_scores(const is_ctx *x, const is_unit *u, long long key, const float *q_t, float *kv,
                   float *k_scaled, float *score, long long stride);

/*
** Head g of the unit: the trace's scores, max, exponentials (into score),
** in-order sum, 1 / sum and the probabilities (into prob, which may be
** score: each entry is read before it is written), and the trace's
** probabilities.  Returns 0 when the row is all masked (every score -inf or
** NaN; its Y stays +0 and prob is not written), else 1.
*/
int is_head_softmax(const is_ctx *x, const is_unit *u, long long g, float *score, float *prob);

/*
** y[d] = y[d] + p * v[d]: the two never overlap, so the dims may advance as
** vectors.  They go in blocks of IS_SCALED_BLOCK, a width gcc knows, since
** -O2 vectorizes only such loops (every lane does the same two operations,
** so the bits are those of the plain loop): P.V at IndexShare heads 64, B =
** 1, on one thread, 9.5 -> 4 ms (docs/SPEED.md).
*/
#define IS_SCALED_BLOCK 32
static inline void is_add_scaled_row(float *restrict y, const float *restrict v, float p, long long n) {
  long long dd = 0;
  int k;
  for (; dd + IS_SCALED_BLOCK <= n; dd += IS_SCALED_BLOCK)
    for (k = 0; k < IS_SCALED_BLOCK; k++) y[dd + k] = y[dd + k] + p * v[dd + k];
  for (; dd < n; dd++) y[dd] = y[dd] + p * v[dd];
}

/* Whether the phases of index_share_split.c should take these units, rather than the workers whole units. */
int is_split_fits(const is_ctx *x, long long units);

/* All units' output rows, in three phases of finer items (index_share_split.c). */
void is_rows_attend_split(const is_ctx *x, long long units);

#endif

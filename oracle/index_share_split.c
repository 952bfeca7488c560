/*
** index_share_split.c: the IndexShare oracle's output rows when there are
** too few units (index_share_rows.h) to keep the workers busy: a decode step
** at batch 1 has one unit a kv head and query, 8 units at 64 or 128 heads,
** and a unit's 2,048 keys took a whole millisecond, so 16 threads ran only
** 5.4-7x faster than one.  Here each unit's work is cut into three phases,
** each one parallel call over items finer than a unit:
**   1. scores, items (unit, key chunk): the unit's heads' scores on the
**      chunk's keys (is_key_scores, key by key as the whole unit does);
**   2. softmax, items (unit, head): is_head_softmax on that head's scores;
**   3. values, items (unit, dim chunk): Y[g][d] = sum_s p_s * V[key_s][d]
**      for the chunk's dims, s ascending from +0, as the whole unit does.
** Exactness: a sum never crosses items.  Each score is one key's dot (phase
** 1), each softmax sum one head's (phase 2), each Y element one dim's sum
** over the keys in order (phase 3); an item computes its elements with the
** same operations in the same order as rows_attend_heads, so every byte is
** the same as there, on any thread count (test_oracle_threads compares 1
** thread, which takes whole units, with 2 and 16, which come here).
** The phases share the units' scores in one array; an item writes only
** its own entries, and a call returns after all its items are done.
*/
#include "oracle/index_share_rows.h"

#include "oracle/oracle_threads.h"

/*
** Keys a scores item takes.  A key costs the heads' 128-dim dots, about
** 0.25 us at 8 heads on one core here (IndexShare heads 64, B = 1: 96 items
** of 29 us), well above the microseconds a spinning helper takes to claim
** an item, and the items stay many: 16 a unit of 2,048 keys, 128 over 8
** units, so 16 workers' last items end close together.
*/
#define SPLIT_KEYS 128

/*
** Dims a values item takes: 32 bf16 values are one 64-byte cache line, so
** no two items gather the same line of a V row (at 16 dims, two would).
** An item reads every selected key's row there: at heads 64, B = 1, about
** 0.13 ms (1,500 keys, 8 heads), and 32 items over 8 units, two a worker
** at 16 threads.
*/
#define SPLIT_DIMS 32

/* The units' shared state from phase to phase; [u] is unit u's part. */
typedef struct split_job {
  const is_ctx *x;
  is_unit *unit;        /* [units] */
  float *q_t;           /* [units][H * IS_HEAD_GROUP]: is_query_lanes */
  float *score;         /* [units][G][K]: scores, then exponentials, then probabilities, in place */
  long long *key;       /* [units][K]: the selected keys, as phase 1 read them */
  unsigned char *live;  /* [units][G]: is_head_softmax's answer */
  long long key_chunks; /* scores items a unit: its most valid keys over SPLIT_KEYS, rounded up */
  long long dim_chunks; /* values items a unit: H over SPLIT_DIMS, rounded up */
} split_job;

/*
** Worth the three calls when the units fill less than two rounds of the
** workers (at two or more rounds whole units balance, and cost less: one
** call, no shared scores), and a unit has more than one chunk of keys
** (else the unit is small, and phase 1 no finer than whole units).
*/
int is_split_fits(const is_ctx *x, long long units) {
  const int threads = oracle_threads_available();
  return threads > 1 && units < 2LL * threads && x->d->selected_width > SPLIT_KEYS;
}

/* Phase 1, items (unit, key chunk). */
static void split_scores(void *ctx, long long begin, long long end, int worker) {
  static _Thread_local oracle_kept kept_rows; /* a worker's K row and scaled row, kept from call to call */
  const split_job *j = ctx;
  const long long K = j->x->d->selected_width, H = j->x->d->head_size, G = j->x->group_heads;
  float *kv = oracle_kept_or_die(&kept_rows, (size_t)(2 * H), sizeof(float), __FILE__, __LINE__);
  long long i, s;
  (void)worker;
  for (i = begin; i < end; i++) {
    const long long u = i / j->key_chunks, s0 = i % j->key_chunks * SPLIT_KEYS;
    const is_unit *unit = &j->unit[u];
    const long long s1 = s0 + SPLIT_KEYS < unit->valid ? s0 + SPLIT_KEYS : unit->valid;
    for (s = s0; s < s1; s++) {
      const long long key = tensor_load_index(j->x->indices, unit->index_row + s);
      j->key[u * K + s] = key;
      is_key_scores(j->x, unit, key, j->q_t + u * H * IS_HEAD_GROUP, kv, kv + H, j->score + u * G * K + s, K);
    }
  }
}

/* Phase 2, items (unit, head); a unit's last chunk may have fewer heads than G. */
static void split_softmax(void *ctx, long long begin, long long end, int worker) {
  const split_job *j = ctx;
  const long long K = j->x->d->selected_width, G = j->x->group_heads;
  long long i;
  (void)worker;
  for (i = begin; i < end; i++) {
    const long long u = i / G, g = i % G;
    float *score = j->score + (u * G + g) * K;
    if (g < j->unit[u].heads) j->live[u * G + g] = (unsigned char)is_head_softmax(j->x, &j->unit[u], g, score, score);
  }
}

/* Phase 3, items (unit, dim chunk): the chunk's Y sums on the stack, then stored. */
static void split_values(void *ctx, long long begin, long long end, int worker) {
  const split_job *j = ctx;
  const index_share_dims *d = j->x->d;
  const long long K = d->selected_width, H = d->head_size, G = j->x->group_heads;
  float y[IS_HEAD_GROUP][SPLIT_DIMS], v[SPLIT_DIMS];
  long long i, g, s, dd;
  (void)worker;
  for (i = begin; i < end; i++) {
    const long long u = i / j->dim_chunks, d0 = i % j->dim_chunks * SPLIT_DIMS;
    const long long n = H - d0 < SPLIT_DIMS ? H - d0 : SPLIT_DIMS;
    const is_unit *unit = &j->unit[u];
    const float *prob = j->score + u * G * K;
    const unsigned char *live = j->live + u * G;
    for (g = 0; g < unit->heads; g++)
      for (dd = 0; dd < n; dd++) y[g][dd] = 0.0f;
    for (s = 0; s < unit->valid; s++) {
      is_present_row(j->x, &j->x->value, unit->b, unit->kv_head, j->key[u * K + s], d0, n, v);
      for (g = 0; g < unit->heads; g++)
        if (live[g]) is_add_scaled_row(y[g], v, prob[g * K + s], n);
    }
    for (g = 0; g < unit->heads; g++) {
      const long long row = (unit->b * d->q_heads + unit->h0 + g) * d->q_seq + unit->qi;
      for (dd = 0; dd < n; dd++) tensor_store_f32(j->x->y, row * H + d0 + dd, y[g][dd]);
    }
  }
}

/* Runs fn over count items on as many workers as there are items, up to all (a macro: profiles name fn). */
#define split_phase(count, fn, j) oracle_parallel_for((count), oracle_parallel_workers((count), 1), fn, (j))

void is_rows_attend_split(const is_ctx *x, long long units) {
  /* the calling thread's blocks, kept from call to call: fresh ones would fault a page each 4 KiB */
  static _Thread_local oracle_kept kept_units, kept_floats, kept_keys, kept_live;
  const long long K = x->d->selected_width, H = x->d->head_size, G = x->group_heads;
  long long u, most_valid = 0;
  split_job j;
  j.x = x;
  j.unit = oracle_kept_or_die(&kept_units, (size_t)units, sizeof *j.unit, __FILE__, __LINE__);
  j.q_t = oracle_kept_or_die(&kept_floats, (size_t)(units * (H * IS_HEAD_GROUP + G * K)), sizeof(float), __FILE__,
                             __LINE__);
  j.score = j.q_t + units * H * IS_HEAD_GROUP;
  j.key = oracle_kept_or_die(&kept_keys, (size_t)(units * K), sizeof *j.key, __FILE__, __LINE__);
  j.live = oracle_kept_or_die(&kept_live, (size_t)(units * G), sizeof *j.live, __FILE__, __LINE__);
  for (u = 0; u < units; u++) { /* a few units: serial; the units of one (b, qi) share an index row */
    is_unit *unit = &j.unit[u];
    is_unit_locate(x, u, unit);
    unit->valid = u > 0 && unit->index_row == j.unit[u - 1].index_row ? j.unit[u - 1].valid
                                                                       : is_row_valid_count(x, unit->index_row);
    if (unit->valid > most_valid) most_valid = unit->valid;
    is_query_lanes(x, unit, j.q_t + u * H * IS_HEAD_GROUP);
  }
  j.key_chunks = (most_valid + SPLIT_KEYS - 1) / SPLIT_KEYS;
  j.dim_chunks = (H + SPLIT_DIMS - 1) / SPLIT_DIMS;
  split_phase(units * j.key_chunks, split_scores, &j);
  split_phase(units * G, split_softmax, &j);
  split_phase(units * j.dim_chunks, split_values, &j);
}

/*
** csa4_compress.c: the two ratio-4 compressors, main KV (outputs 1, 2) and
** index key (outputs 3, 4).  Both are one 8-slot overlapped compressor over
** a source twice the record's width; they differ only in the width and in
** how a finished record is rotated and stored.
**
** Source: seed 003_9308a65268dfd821.txt, csa_ratio4_main_compress
** (seed:400-502) and csa_ratio4_index_compress (seed:291-390), single-thread
** serial loops whose order is the order of every sum here.  oracle/SPEC.md
** "CompressedSparseAttention, ratio 4", R2 and R3, gives the formulas:
**
**   carry    slots 0..3 hold the previous block, 4..7 the current one;
**            token pos writes slot 4 + (pos & 3): kv, and gate + ape[pos & 3]
**   pool[d]  nx_csa_pool over the 8 slots: slots 0..3 read source dim d,
**            slots 4..7 dim D + d (the overlapped window); bf16
**   rec[d]   bf16((pool[d] * 1/sqrt(sum pool^2 / D + 1e-6)) * norm[d])
**   main     RoPE tail (dims 448..511) at the block start pos - 3, then the
**            583-byte FP8 record
**   index    RoPE tail (dims 64..127) at pos - 3, Walsh-Hadamard, bf16(x *
**            1/sqrt(128)), then the 68-byte FP4 record
**   then     slots 4..7 move to 0..3; 4..7 reset to (+0, -inf)
**
** Exactness: the shared nx_csa.h functions, one IEEE binary32 operation at a
** time (DESIGN.md); nx_expf, nx_powf and nx_sincosf are correctly rounded.
** NaN / inf: as nx_csa_pool (a NaN score enters the sums; eight -inf scores
** give 0/0 = NaN); bf16 is the seeds' formula, which does not keep NaN.
** Threads: the present caches' bytes are set first, in pieces over the
** workers (oracle_threads.h); then each (stream, batch row) pair, which has
** its own carry, cache rows and trace rows, runs on any worker, or, when the
** pairs are fewer than the workers, the pairs run in turn and each record's
** per-dim pools are spread instead; inside a pair the tokens run in order,
** as the carry needs.
*/
#include "oracle/csa4_stages.h"

#include "oracle/numerics/numerics.h"
#include "oracle/numerics/nx_csa.h"
#include "oracle/oracle_threads.h"

#include <pthread.h>
#include <string.h>

/* One compressed stream: the main KV (D = 512) or the index key (D = 128). */
typedef struct stream {
  int dim, record_bytes;
  const float *kv, *gate, *ape, *norm; /* [B, S, 2D], [B, S, 2D], [4, 2D], [D] */
  const float *past_carry;             /* [B, 8, 2, 2D] */
  float *carry;                        /* [B, 8, 2, 2D] */
  const unsigned char *past;           /* [B, past_capacity, record_bytes] */
  unsigned char *cache;                /* [B, present_capacity, record_bytes] */
  long long past_capacity, present_capacity;
  void (*rotate)(float *rec, long long block_start); /* after the norm */
  void (*write)(const float *rec, unsigned char *out);
  float *trace; /* [B, present_capacity, D]: rec after rotate, or NULL */
} stream;

/* Slot j's kv (state 0) or score (state 1), source dim 0, in one batch row of the carry. */
static float *slot_at(const stream *st, float *carry_row, int slot, int state) {
  return carry_row + (long long)(2 * slot + state) * (2 * st->dim);
}

/* Slots [first, first + n) back to kv = +0, score = -inf (seed:308-314, 381-388). */
static void slots_reset(const stream *st, float *carry_row, int first, int n) {
  int j, i;
  for (j = first; j < first + n; j++)
    for (i = 0; i < 2 * st->dim; i++) {
      slot_at(st, carry_row, j, 0)[i] = 0.0f;
      slot_at(st, carry_row, j, 1)[i] = nx_f32_from_bits(NX_CSA_NEG_INF_BITS);
    }
}

/* One finished record's pools, split by dim between the workers (record_pool_norm). */
typedef struct pool_job {
  const stream *st;
  float *carry_row, *rec;
} pool_job;

/* Record dims [d0, d1): each dim's pool is its own pair of chains over the 8 slots. */
static void pool_dims(void *ctx, long long d0, long long d1, int worker) {
  const pool_job *j = ctx;
  const stream *st = j->st;
  long long dd;
  (void)worker;
  for (dd = d0; dd < d1; dd++)
    j->rec[dd] = nx_csa_pool(slot_at(st, j->carry_row, 0, 1) + dd, slot_at(st, j->carry_row, 0, 0) + dd, CSA4_SLOTS,
                             2 * (2 * st->dim), CSA4_SLOTS / 2, st->dim);
}

/*
** Record dims a worker pools at least: 8 nx_expf each, so 32 dims are
** about 10 us, and the main stream's 512 reach 16 workers.
*/
#define POOL_DIMS_PER_WORKER_MIN 32

/*
** Pool and RMSNorm of the completed block (seed:329-355, 441-470).  The
** pools are spread over the workers when this row is not itself one
** worker's item (csa4_compress: one batch row, as in decode at B = 1);
** inside an item the call runs them in turn.
*/
static void record_pool_norm(const stream *st, float *carry_row, float *rec) {
  pool_job j;
  float inv_rms;
  int dd;
  j.st = st, j.carry_row = carry_row, j.rec = rec;
  oracle_parallel_for(st->dim, oracle_parallel_workers(st->dim, POOL_DIMS_PER_WORKER_MIN), pool_dims, &j);
  inv_rms = nx_csa_inv_rms(nx_csa_square_sum(rec, st->dim), st->dim);
  for (dd = 0; dd < st->dim; dd++) rec[dd] = nx_csa_norm_value(rec[dd], inv_rms, st->norm[dd]);
}

/*
** Bytes [lo, hi) of batch row b's present cache: present records [0,
** past_records) are the past's bytes, [past_records, capacity) start as
** zero bytes (*ours*: the seed leaves them unwritten), and compress_row
** then overwrites the emitted ones.
*/
static void cache_bytes(const csa_dims *d, const stream *st, long long b, long long lo, long long hi) {
  const long long rb = st->record_bytes, copied = d->past_records * rb;
  unsigned char *row = st->cache + b * st->present_capacity * rb;
  const unsigned char *past = st->past + b * st->past_capacity * rb;
  if (lo < copied) memcpy(row + lo, past + lo, (size_t)((hi < copied ? hi : copied) - lo));
  if (hi > copied) {
    const long long z = lo > copied ? lo : copied;
    memset(row + z, 0, (size_t)(hi - z));
  }
}

/* One batch row's carry and emitted records; cache_bytes has set its cache row. */
static void compress_row(const csa_dims *d, const stream *st, long long b) {
  const long long source = 2 * st->dim, carry_floats = CSA4_SLOTS * 2 * source;
  const size_t rb = (size_t)st->record_bytes;
  float *carry = st->carry + b * carry_floats, rec[CSA_HEAD_DIM];
  long long s, emitted = 0;
  memcpy(carry, st->past_carry + b * carry_floats, (size_t)carry_floats * sizeof(float));
  if (d->start == 0) slots_reset(st, carry, 0, CSA4_SLOTS);
  for (s = 0; s < d->seq; s++) {
    const long long pos = d->start + s, row = (b * d->seq + s) * source;
    const int phase = (int)(pos & 3);
    long long i, at;
    for (i = 0; i < source; i++) {
      slot_at(st, carry, 4 + phase, 0)[i] = st->kv[row + i];
      slot_at(st, carry, 4 + phase, 1)[i] = st->gate[row + i] + st->ape[phase * source + i];
    }
    if (((pos + 1) & 3) != 0) continue; /* block not complete? */
    record_pool_norm(st, carry, rec);
    st->rotate(rec, pos - 3);
    at = b * st->present_capacity + d->past_records + emitted++;
    if (st->trace) memcpy(st->trace + at * st->dim, rec, (size_t)st->dim * sizeof(float));
    st->write(rec, st->cache + (size_t)at * rb);
    /* the current block becomes the previous one (seed:381-388) */
    memcpy(slot_at(st, carry, 0, 0), slot_at(st, carry, 4, 0), (size_t)(4 * 2 * source) * sizeof(float));
    slots_reset(st, carry, 4, 4);
  }
}

/* ---- the main KV stream (seed:400-502) ------------------------------------ */

static void main_rotate(float *rec, long long block_start) { nx_csa_rope_tail(rec + CSA_NOPE_DIM, block_start); }

static void main_write(const float *rec, unsigned char *out) { nx_csa_fp8_record_write(rec, out); }

static void main_stream(const csa_dims *d, const tensor *const *in, tensor *const *out, float *trace, stream *st) {
  st->dim = CSA_HEAD_DIM, st->record_bytes = CSA_FP8_RECORD_BYTES;
  st->kv = in[CSA_IN_COMPRESSOR_KV]->data, st->gate = in[CSA_IN_COMPRESSOR_GATE]->data;
  st->ape = in[CSA_IN_COMPRESSOR_APE]->data, st->norm = in[CSA_IN_COMPRESSOR_NORM]->data;
  st->past_carry = in[CSA_IN_PAST_CARRY]->data, st->carry = out[CSA_OUT_PRESENT_CARRY]->data;
  st->past = in[CSA_IN_PAST_COMPRESSED_KV]->data, st->cache = out[CSA_OUT_PRESENT_COMPRESSED_KV]->data;
  st->past_capacity = d->past_capacity, st->present_capacity = d->present_capacity;
  st->rotate = main_rotate, st->write = main_write, st->trace = trace;
}

/* ---- the index key stream (seed:291-390) ---------------------------------- */

/* nx_csa_rope_freq of every pair, taken once a process: each is an nx_powf. */
static float rope_freq[NX_CSA_ROPE_PAIRS];
_Static_assert(NX_CSA_ROPE_PAIRS == sizeof(((csa4_rope *)0)->sn) / sizeof(float), "a csa4_rope holds every pair");
static pthread_once_t rope_freq_once = PTHREAD_ONCE_INIT;

static void rope_freq_fill(void) {
  int p;
  for (p = 0; p < NX_CSA_ROPE_PAIRS; p++) rope_freq[p] = nx_csa_rope_freq(p);
}

void csa4_rope_angles(long long pos, csa4_rope *a) {
  int p;
  pthread_once(&rope_freq_once, rope_freq_fill);
  for (p = 0; p < NX_CSA_ROPE_PAIRS; p++) nx_sincosf((float)pos * rope_freq[p], &a->sn[p], &a->cs[p]);
}

void csa4_index_rotate_by(float *x, const csa4_rope *a) {
  const float scale = nx_csa_rsqrt_exact(CSA4_INDEX_DIM);
  int dd, p;
  for (p = 0; p < NX_CSA_ROPE_PAIRS; p++) nx_csa_rope_rotate(x + CSA4_INDEX_DIM - CSA_ROPE_DIM, p, a->sn[p], a->cs[p]);
  nx_csa_hadamard(x, CSA4_INDEX_DIM);
  for (dd = 0; dd < CSA4_INDEX_DIM; dd++) x[dd] = nx_bf16_round(x[dd] * scale);
}

void csa4_index_rotate(float *x, long long pos) {
  csa4_rope a;
  csa4_rope_angles(pos, &a);
  csa4_index_rotate_by(x, &a);
}

static void index_write(const float *rec, unsigned char *out) { nx_csa_fp4_record_write(rec, out); }

static void index_stream(const csa_dims *d, const tensor *const *in, tensor *const *out, float *trace, stream *st) {
  st->dim = CSA4_INDEX_DIM, st->record_bytes = CSA4_INDEX_RECORD_BYTES;
  st->kv = in[CSA_IN_INDEX_KV]->data, st->gate = in[CSA_IN_INDEX_GATE]->data;
  st->ape = in[CSA_IN_INDEX_APE]->data, st->norm = in[CSA_IN_INDEX_NORM]->data;
  st->past_carry = in[CSA_IN_PAST_INDEX_CARRY]->data, st->carry = out[CSA_OUT_PRESENT_INDEX_CARRY]->data;
  st->past = in[CSA_IN_PAST_INDEX_KEY]->data, st->cache = out[CSA_OUT_PRESENT_INDEX_KEY]->data;
  st->past_capacity = d->index_past_capacity, st->present_capacity = d->index_present_capacity;
  st->rotate = csa4_index_rotate, st->write = index_write, st->trace = trace;
}

/* ---- both streams, every batch row ---------------------------------------- */

/*
** The present caches' bytes go in pieces of this many bytes, all the
** pieces of both streams' rows spread over the workers before any row
** compresses.  Why: at 64K positions and B = 1 the main stream's row is
** 9.5 MB, and as part of its row's item it was 2 ms of a 6.3 ms step on
** 16 cores (docs/SPEED.md).  A piece is about 10 us of memcpy, so that
** the 4K step's 0.7 MB (4 pieces of 256 KiB, on 2 workers: 46 us of a
** 1.1 ms step on 16 cores) spreads too.
*/
#define CACHE_PIECE_BYTES (64LL << 10)

typedef struct compress_job {
  const csa_dims *d;
  stream streams[2];     /* main, index */
  long long pieces[2];   /* a batch row's cache pieces, per stream */
} compress_job;

/* Items [i0, i1): the main stream's B x pieces[0] pieces, then the index stream's, row-major. */
static void cache_pieces(void *ctx, long long i0, long long i1, int worker) {
  const compress_job *j = ctx;
  const long long first_index = j->d->batch * j->pieces[0];
  long long i;
  (void)worker;
  for (i = i0; i < i1; i++) {
    const int sn = i >= first_index;
    const stream *st = &j->streams[sn];
    const long long k = sn ? i - first_index : i, row = st->present_capacity * st->record_bytes;
    const long long lo = k % j->pieces[sn] * CACHE_PIECE_BYTES;
    cache_bytes(j->d, st, k / j->pieces[sn], lo, lo + CACHE_PIECE_BYTES < row ? lo + CACHE_PIECE_BYTES : row);
  }
}

/* Items [i0, i1): item i is stream i / B, batch row i % B. */
static void compress_items(void *ctx, long long i0, long long i1, int worker) {
  const compress_job *j = ctx;
  long long i;
  (void)worker;
  for (i = i0; i < i1; i++) compress_row(j->d, &j->streams[i / j->d->batch], i % j->d->batch);
}

void csa4_compress(const csa_dims *d, const tensor *const *in, tensor *const *out, float *records_trace,
                   float *index_records_trace) {
  compress_job j;
  long long pieces, sn;
  main_stream(d, in, out, records_trace, &j.streams[0]);
  index_stream(d, in, out, index_records_trace, &j.streams[1]);
  j.d = d;
  for (sn = 0; sn < 2; sn++) { /* at least one piece a row, so that an empty row is one empty item */
    const long long row = j.streams[sn].present_capacity * j.streams[sn].record_bytes;
    j.pieces[sn] = row > CACHE_PIECE_BYTES ? (row + CACHE_PIECE_BYTES - 1) / CACHE_PIECE_BYTES : 1;
  }
  pieces = d->batch * (j.pieces[0] + j.pieces[1]);
  oracle_parallel_for(pieces, oracle_parallel_workers(pieces, 1), cache_pieces, &j);
  /*
  ** The (stream, row) items over the workers when every worker can have a
  ** main-stream row; else in turn, each record's pools spread over the
  ** workers (record_pool_norm).  Why: at B = 1 two items left all but two
  ** of 16 workers idle while the main stream pooled 512 dims, and on 2
  ** workers the index row (128 dims) left one idle for 3/4 of the main
  ** row's time: 0.10 ms for what takes 0.13 ms on one.
  */
  if (d->batch >= oracle_threads_available())
    oracle_parallel_for(2 * d->batch, oracle_parallel_workers(2 * d->batch, 1), compress_items, &j);
  else
    compress_items(&j, 0, 2 * d->batch, 0);
}

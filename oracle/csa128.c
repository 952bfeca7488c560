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
** The record math is nx_csa.h's (shared with ratio 4 and the kernels); the
** attention row is csa_attention.c's (shared with ratio 4).
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
** Threads (oracle_threads.h): batch rows of the compression (or, for one
** row, a record's dims of the pool and the carry's slots), decoded records,
** and query rows (or their heads) of the attention are independent outputs
** and run on any worker; each one's operations are unchanged.
*/
#include "oracle/csa.h"
#include "oracle/csa_attention.h"

#include "oracle/numerics/numerics.h"
#include "oracle/numerics/nx_csa.h"
#include "oracle/oracle_threads.h"

#include <stdlib.h>
#include <string.h>

#define CARRY_FLOATS (CSA128_RATIO * 2 * CSA_HEAD_DIM) /* one batch row of the carry */
/*
** FP8 records decoded per worker at least.  A record takes about 0.5 us (a
** table's decode) and a call to helpers that are watching for work costs a
** few: at 4K positions the 32 records ran on the caller alone with the old
** 64, and on 2 of 16 workers (25 us) with 16.
*/
#define RECORDS_PER_WORKER_MIN 4
/*
** Record dims pooled per worker at least (each 128 nx_expf, 4 us).  At 8
** the 512 dims are 64 items, and the guided chunks even out a helper that
** starts late; at 32 (16 items) a 4K step took 0.42-0.43 ms on 16 cores
** against 0.37-0.40 (docs/SPEED.md, eighteenth session).
*/
#define POOL_DIMS_PER_WORKER_MIN 8
#define CARRY_SLOTS_PER_WORKER_MIN 8 /* carry slots (4 KiB each) copied or reset per worker at least */

/* ---- compression update (seed:180-281) ----------------------------------- */

/* Slot j's kv (state 0) or score (state 1) of dim dd, in one batch row of the carry. */
static float *carry_at(float *carry_row, int slot, int state, int dd) {
  return carry_row + ((long long)(2 * slot + state)) * CSA_HEAD_DIM + dd;
}

/* One batch row's carry being set, slot by slot: from the past's row, or (past NULL) reset. */
typedef struct carry_job {
  float *carry_row;
  const float *past_row;
} carry_job;

/* Slots [j0, j1): the past's values, or back to kv = +0, score = -inf (seed:199-207, 275-279). */
static void carry_slots(void *ctx, long long j0, long long j1, int worker) {
  const carry_job *c = ctx;
  long long j;
  int dd;
  (void)worker;
  if (c->past_row) {
    memcpy(carry_at(c->carry_row, (int)j0, 0, 0), c->past_row + j0 * 2 * CSA_HEAD_DIM,
           (size_t)((j1 - j0) * 2 * CSA_HEAD_DIM) * sizeof(float));
    return;
  }
  for (j = j0; j < j1; j++)
    for (dd = 0; dd < CSA_HEAD_DIM; dd++) {
      *carry_at(c->carry_row, (int)j, 0, dd) = 0.0f;
      *carry_at(c->carry_row, (int)j, 1, dd) = nx_f32_from_bits(NX_CSA_NEG_INF_BITS);
    }
}

/*
** Sets a batch row's carry (512 KiB): copied from past_row, or reset when
** it is NULL.  Split by slots when the batch rows are not (B = 1): on the
** caller alone, the copy and the reset of a step that finishes a record
** kept its helpers waiting for them (with the rest of the row's serial
** part, 70-80 us of a 2 ms step on 2 threads at 4K positions).
*/
static void carry_set(float *carry_row, const float *past_row) {
  carry_job c;
  c.carry_row = carry_row, c.past_row = past_row;
  oracle_parallel_for(CSA128_RATIO, oracle_parallel_workers(CSA128_RATIO, CARRY_SLOTS_PER_WORKER_MIN), carry_slots,
                      &c);
}

/* One finished record's pools, split by dim between the workers (record_finish). */
typedef struct pool_job {
  float *carry_row, *rec;
} pool_job;

/* Record dims [d0, d1): each dim's pool is its own pair of chains over the slots. */
static void pool_dims(void *ctx, long long d0, long long d1, int worker) {
  const pool_job *j = ctx;
  long long dd;
  (void)worker;
  for (dd = d0; dd < d1; dd++)
    j->rec[dd] = nx_csa_pool(carry_at(j->carry_row, 0, 1, (int)dd), carry_at(j->carry_row, 0, 0, (int)dd),
                             CSA128_RATIO, 2 * CSA_HEAD_DIM, CSA128_RATIO, 0);
}

/*
** The finished record of a complete block ending at pos (seed:218-249):
** the per-dimension pool over the 128 slots, RMSNorm with the norm weight,
** then the RoPE tail at the block's first position pos - 127.
*/
static void record_finish(float *carry_row, const float *norm, long long pos, float *rec) {
  pool_job j;
  float inv_rms;
  int dd;
  j.carry_row = carry_row, j.rec = rec;
  /* 512 x 128 nx_expf: spread over the workers when the batch rows are not (one row, as in decode at B = 1) */
  oracle_parallel_for(CSA_HEAD_DIM, oracle_parallel_workers(CSA_HEAD_DIM, POOL_DIMS_PER_WORKER_MIN), pool_dims, &j);
  inv_rms = nx_csa_inv_rms(nx_csa_square_sum(rec, CSA_HEAD_DIM), CSA_HEAD_DIM);
  for (dd = 0; dd < CSA_HEAD_DIM; dd++) rec[dd] = nx_csa_norm_value(rec[dd], inv_rms, norm[dd]);
  nx_csa_rope_tail(rec + CSA_NOPE_DIM, pos - (CSA128_RATIO - 1));
}

/*
** Writes the finished record (seed:250-274): the 583-byte hybrid record, or
** the f32 view, which is that record decoded (the FP8 blocks dequantized,
** the bf16 tail widened), so both formats hold the same values.
*/
static void record_write(csa_cache_format fmt, const float *rec, void *dst) {
  nx_u8 packed[CSA_FP8_RECORD_BYTES];
  if (fmt == CSA_CACHE_FP8) {
    nx_csa_fp8_record_write(rec, dst);
    return;
  }
  nx_csa_fp8_record_write(rec, packed);
  csa_fp8_record_decode(packed, dst);
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

  carry_set(carry, (const float *)in[CSA_IN_PAST_CARRY]->data + b * CARRY_FLOATS);
  memcpy(cache + (size_t)(b * d->present_capacity) * rb, past + (size_t)(b * d->past_capacity) * rb,
         (size_t)d->past_records * rb);
  memset(cache + (size_t)(b * d->present_capacity + d->past_records) * rb, 0,
         (size_t)(d->present_capacity - d->past_records) * rb);
  if (d->start == 0) carry_set(carry, NULL);
  for (s = 0; s < d->seq; s++) {
    long long pos = d->start + s, row = (b * d->seq + s) * CSA_HEAD_DIM, out_rec;
    int slot = (int)(pos & 127);
    for (dd = 0; dd < CSA_HEAD_DIM; dd++) {
      *carry_at(carry, slot, 0, dd) = kv[row + dd];
      *carry_at(carry, slot, 1, dd) = gate[row + dd] + ape[slot * CSA_HEAD_DIM + dd];
    }
    if (((pos + 1) & 127) != 0) continue; /* block not complete? */
    record_finish(carry, norm, pos, rec);
    out_rec = d->past_records + emitted++;
    if (trace && trace->records)
      memcpy(trace->records + (b * d->present_capacity + out_rec) * CSA_HEAD_DIM, rec, sizeof rec);
    record_write(d->format, rec, cache + (size_t)(b * d->present_capacity + out_rec) * rb);
    carry_set(carry, NULL);
  }
}

/* ---- sink attention (seed:691-859) --------------------------------------- */

/* One step's attention, shared by the workers of its parallel calls. */
typedef struct attend_job {
  const csa_dims *d;
  const tensor *const *in;
  tensor *const *out;
  csa_trace *trace;
  long long b;
  float *buf;         /* [present_records][512]: batch row b's FP8 records decoded */
  const float **rec;  /* [present_records]: each record's 512 floats */
  const float **values; /* per worker [score_stride], value_stride apart */
  long long value_stride; /* score_stride on whole cache lines */
} attend_job;

/*
** Records [k0, k1) of batch row b as 512-float vectors: the f32 view in
** place, FP8 records decoded once into buf so that every row and head reuses
** them.  Records are independent, so any worker may take any of them.
*/
static void records_view(void *ctx, long long k0, long long k1, int worker) {
  const attend_job *j = ctx;
  const csa_dims *d = j->d;
  const tensor *cache = j->out[CSA_OUT_PRESENT_COMPRESSED_KV];
  long long k;
  (void)worker;
  for (k = k0; k < k1; k++) {
    if (d->format == CSA_CACHE_FP8) {
      csa_fp8_record_decode((const nx_u8 *)cache->data + (j->b * d->present_capacity + k) * CSA_FP8_RECORD_BYTES,
                            j->buf + k * CSA_HEAD_DIM);
      j->rec[k] = j->buf + k * CSA_HEAD_DIM;
    } else {
      j->rec[k] = (const float *)cache->data + (j->b * d->present_capacity + k) * CSA_HEAD_DIM;
    }
  }
}

/*
** Query rows [s0, s1) of batch row b.  Row (s, h)'s candidates
** (seed:715-797): the dense window, then records 0 .. min((position + 1) /
** 128, Rc) - 1.
*/
static void attend_rows(void *ctx, long long s0, long long s1, int worker) {
  const attend_job *j = ctx;
  const csa_dims *d = j->d;
  const float **values = j->values + worker * j->value_stride;
  long long s, c;
  for (s = s0; s < s1; s++) {
    csa_window w = csa_window_of(d, s);
    long long records = (w.position + 1) / CSA128_RATIO;
    if (records > d->present_capacity) records = d->present_capacity;
    for (c = 0; c < w.dense; c++) values[c] = csa_dense_value(d, j->in[CSA_IN_CURRENT_KV], j->b, &w, c);
    for (c = 0; c < records; c++) values[w.dense + c] = j->rec[c];
    csa_attend_heads(d, j->in, j->out, j->b, s, values, w.dense + records, j->trace ? j->trace->scores : NULL,
                     j->trace ? j->trace->output : NULL);
  }
}

/* Batch rows [b0, b1) of the compression update: each row has its own carry and cache rows. */
static void compress_rows(void *ctx, long long b0, long long b1, int worker) {
  const attend_job *j = ctx;
  long long b;
  (void)worker;
  for (b = b0; b < b1; b++) compress_row(j->d, j->in, j->out, b, j->trace);
}

int oracle_csa128_run(const csa_attrs *a, const tensor *const *inputs, int n_inputs, tensor *const *outputs,
                      int n_outputs, csa_trace *trace, op_error *err) {
  static _Thread_local oracle_kept decoded; /* the FP8 records decoded, kept from step to step */
  csa_dims d;
  attend_job j;
  int rc, workers;

  rc = csa_validate(a, inputs, n_inputs, (const tensor *const *)outputs, n_outputs, &d, err);
  if (!rc && d.ratio != CSA128_RATIO)
    rc = op_error_contract(err, CSA_CONTRACT_RATIO, -1, -1, "oracle_csa128_run needs compression_ratio 128");
  if (!rc) rc = csa_validate_cursor(&d, inputs[CSA_IN_TOTAL_SEQ], err);
  if (rc) return rc;
  memset(&j, 0, sizeof j);
  j.d = &d, j.in = inputs, j.out = outputs, j.trace = trace;
  oracle_parallel_for(d.batch, oracle_parallel_workers(d.batch, 1), compress_rows, &j);
  /* rows in parallel (each row's heads in turn), or rows in turn (csa_attend_heads spreads the heads) */
  workers = csa_split_rows(d.seq, d.heads) ? oracle_parallel_workers(d.seq, 1) : 1;
  j.buf = oracle_kept_or_die(&decoded, (size_t)(d.format == CSA_CACHE_FP8 ? d.present_records : 0) * CSA_HEAD_DIM,
                             sizeof *j.buf, __FILE__, __LINE__);
  j.rec = oracle_alloc_or_die((size_t)d.present_records, sizeof *j.rec, __FILE__, __LINE__);
  j.value_stride = oracle_worker_stride(d.score_stride, sizeof *j.values);
  j.values = oracle_alloc_or_die((size_t)(workers * j.value_stride), sizeof *j.values, __FILE__, __LINE__);
  for (j.b = 0; j.b < d.batch; j.b++) {
    oracle_parallel_for(d.present_records, oracle_parallel_workers(d.present_records, RECORDS_PER_WORKER_MIN),
                        records_view, &j);
    oracle_parallel_for(d.seq, workers, attend_rows, &j);
  }
  free((void *)j.rec);
  free((void *)j.values);
  return 0;
}

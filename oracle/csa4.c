/*
** csa4.c: the CSA ratio-4 oracle, one step: main KV compression, index-key
** compression, then per query row the indexer (query finalize, scoring,
** top-k selection), then the sparse sink attention over the dense window
** and the selected records.
**
** Source: seed 003_9308a65268dfd821.txt, the stage order of
** run_capturable_ratio4 (seed:1966-1983): csa_ratio4_main_compress,
** csa_ratio4_index_compress, csa_ratio4_index_select (+ the head broadcast
** csa_ratio4_index_replicate, seed:673-688), csa_ratio4_sink_attention
** (seed:862-990).  oracle/SPEC.md "CompressedSparseAttention, ratio 4"
** gives every formula; the stages live in csa4_compress.c (R2, R3),
** csa4_index.c (R4-R6) and csa_attention.c (R7, shared with ratio 128).
**
** The attention of row (b, s, h) (seed:880-945): the dense window as ratio
** 128 has it, then candidate dense + k for slot k of the row's selection,
** live iff 0 <= record < T / 4, its value the decoded 583-byte main record;
** the bias column of a candidate is its index c.  The 5-output config
** computes everything the 6-output one does (*ours*: the seed takes that
** config's Y from its host oracle, seed:2477-2484); only output 5 is left out.
**
** Exactness: see the stage files; every sum from +0.0f in the seed's order.
** Threads (oracle_threads.h): the stages run in order; inside each, the
** independent outputs (streams and batch rows, query rows or a row's heads
** and records, query rows or a row's selected records and heads) are spread
** over the workers, each with its own scratch.
*/
#include "oracle/csa.h"
#include "oracle/csa4_stages.h"
#include "oracle/csa_attention.h"
#include "oracle/oracle_threads.h"

#include <stdlib.h>
#include <string.h>

/* Scratch of the attention of one query row; one per worker. */
typedef struct attend_scratch {
  float *records;       /* [topk][512]: the selected records, decoded once per (b, s) */
  const float **values; /* [128 + topk]: each candidate's value vector, NULL if not live */
} attend_scratch;

/* One step's attention, shared by the workers. */
typedef struct attend_job {
  const csa_dims *d;
  const tensor *const *in;
  tensor *const *out;
  const int *selection; /* [B, S, topk] */
  attend_scratch *scratch;
  csa4_trace *trace;
} attend_job;

/*
** Selected records a worker should decode at least when a row's decode is
** split (rows in turn, B = 1): a record is 512 dims, about 2 us on the
** H200's host.  32, so that a top-k of 512 reaches 16 workers (with 64, 8
** of them took 0.18 ms of a 1.9 ms step at 4K; docs/SPEED.md).
*/
#define DECODE_RECORDS_MIN 32

/* The decode of one row's selected records into its scratch, shared by the workers. */
typedef struct decode_job {
  const csa_dims *d;
  const unsigned char *cache; /* the present compressed KV */
  const int *selection;       /* the row's topk records */
  long long b, dense;         /* the batch row; the window's candidates, before the records */
  attend_scratch *x;
} decode_job;

/* Selection slots [k0, k1): each live record decoded into its own slot of x->records. */
static void decode_selected(void *ctx, long long k0, long long k1, int worker) {
  const decode_job *j = ctx;
  const csa_dims *d = j->d;
  long long k;
  (void)worker;
  for (k = k0; k < k1; k++) {
    const long long record = j->selection[k];
    float *v = j->x->records + k * CSA_HEAD_DIM;
    j->x->values[j->dense + k] = NULL;
    if (record < 0 || record >= d->present_records) continue; /* padding is no candidate */
    csa_fp8_record_decode(j->cache + (j->b * d->present_capacity + record) * CSA_FP8_RECORD_BYTES, v);
    j->x->values[j->dense + k] = v;
  }
}

/*
** R7 for row (b, s): every head's Y (and trace payloads) from the row's
** selection.  Each selected record is decoded once and shared by the heads;
** when the rows run in turn the decode is split over the workers too (called
** from a worker, oracle_parallel_for runs it inline).
*/
static void attend_query_row(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b, long long s,
                             const int *selection, attend_scratch *x, csa4_trace *trace) {
  const csa_window w = csa_window_of(d, s);
  decode_job j;
  long long c;
  for (c = 0; c < w.dense; c++) x->values[c] = csa_dense_value(d, in[CSA_IN_CURRENT_KV], b, &w, c);
  j.d = d, j.cache = out[CSA_OUT_PRESENT_COMPRESSED_KV]->data, j.selection = selection;
  j.b = b, j.dense = w.dense, j.x = x;
  oracle_parallel_for(d->topk, oracle_parallel_workers(d->topk, DECODE_RECORDS_MIN), decode_selected, &j);
  csa_attend_heads(d, in, out, b, s, x->values, w.dense + d->topk, trace ? trace->scores : NULL,
                   trace ? trace->output : NULL);
}

/* Query rows [i0, i1) (i = b * S + s) on one worker's scratch. */
static void attend_rows(void *ctx, long long i0, long long i1, int worker) {
  const attend_job *j = ctx;
  long long i;
  for (i = i0; i < i1; i++)
    attend_query_row(j->d, j->in, j->out, i / j->d->seq, i % j->d->seq, j->selection + i * j->d->topk,
                     &j->scratch[worker], j->trace);
}

/* R6's head broadcast (seed:673-688): selected_indices[b, h, s, :] = the row's selection. */
static void broadcast_selection(const csa_dims *d, const int *selection, tensor *selected) {
  long long b, h, s;
  for (b = 0; b < d->batch; b++)
    for (h = 0; h < d->index_heads; h++)
      for (s = 0; s < d->seq; s++)
        memcpy((int *)selected->data + ((b * d->index_heads + h) * d->seq + s) * d->topk,
               selection + (b * d->seq + s) * d->topk, (size_t)d->topk * sizeof(int));
}

int oracle_csa4_run(const csa_attrs *a, const tensor *const *inputs, int n_inputs, tensor *const *outputs,
                    int n_outputs, csa4_trace *trace, op_error *err) {
  /*
  ** The workers' attention scratch, kept from step to step: a fresh 1 MiB of
  ** records a worker was zeroed on the calling thread every step, 0.3 ms of
  ** a 1.9 ms step on 16 cores (docs/SPEED.md).  A slot is written before it
  ** is read (decode_selected), so the kept blocks need no clearing.
  */
  static _Thread_local oracle_kept kept_records, kept_values;
  csa_dims d;
  attend_job j;
  long long record_stride, value_stride;
  float *records;
  const float **values;
  int *selection, rc, workers, w;

  rc = csa_validate(a, inputs, n_inputs, (const tensor *const *)outputs, n_outputs, &d, err);
  if (!rc && d.ratio != CSA4_RATIO)
    rc = op_error_contract(err, CSA_CONTRACT_RATIO, -1, -1, "oracle_csa4_run needs compression_ratio 4");
  if (!rc) rc = csa_validate_cursor(&d, inputs[CSA_IN_TOTAL_SEQ], err);
  if (rc) return rc;
  csa4_compress(&d, inputs, outputs, trace ? trace->records : NULL, trace ? trace->index_records : NULL);
  selection = oracle_alloc_or_die((size_t)(d.batch * d.seq * d.topk), sizeof *selection, __FILE__, __LINE__);
  csa4_index_select(&d, inputs, outputs, selection, trace ? trace->index_query : NULL,
                    trace ? trace->index_scores : NULL);
  if (trace && trace->selection)
    memcpy(trace->selection, selection, (size_t)(d.batch * d.seq * d.topk) * sizeof *selection);
  if (d.has_selected) broadcast_selection(&d, selection, outputs[CSA_OUT_SELECTED]);
  /* rows in parallel (each row's heads in turn), or rows in turn (csa_attend_heads spreads the heads) */
  workers = csa_split_rows(d.batch * d.seq, d.heads) ? oracle_parallel_workers(d.batch * d.seq, 1) : 1;
  record_stride = oracle_worker_stride(d.topk * CSA_HEAD_DIM, sizeof(float));
  value_stride = oracle_worker_stride(d.score_stride, sizeof(float *));
  j.d = &d, j.in = inputs, j.out = outputs, j.selection = selection, j.trace = trace;
  j.scratch = oracle_alloc_or_die((size_t)workers, sizeof *j.scratch, __FILE__, __LINE__);
  records = oracle_kept_or_die(&kept_records, (size_t)(workers * record_stride), sizeof(float), __FILE__, __LINE__);
  values = oracle_kept_or_die(&kept_values, (size_t)(workers * value_stride), sizeof(float *), __FILE__, __LINE__);
  for (w = 0; w < workers; w++) {
    j.scratch[w].records = records + w * record_stride;
    j.scratch[w].values = values + w * value_stride;
  }
  oracle_parallel_for(d.batch * d.seq, workers, attend_rows, &j);
  free(j.scratch);
  free(selection);
  return 0;
}

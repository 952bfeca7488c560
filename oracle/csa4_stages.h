/*
** csa4_stages.h: the stages of the CSA ratio-4 oracle, one function each,
** in the seed's stage order (run_capturable_ratio4, seed:1966-1983;
** oracle/SPEC.md "CompressedSparseAttention, ratio 4", sections R2-R7).
** csa4.c runs them; csa4_compress.c and csa4_index.c define them.
** Internal to oracle/: every function assumes csa_validate and
** csa_validate_cursor accepted the call and filled *d.
*/
#ifndef ORACLE_CSA4_STAGES_H
#define ORACLE_CSA4_STAGES_H

#include "oracle/csa.h"

/*
** R2 (seed csa_ratio4_main_compress, seed:400-502): outputs 1 and 2 from
** inputs 2..7, every batch row.  trace: [B, Rc, 512] or NULL.
*/
void csa4_compress_main(const csa_dims *d, const tensor *const *in, tensor *const *out, float *trace);

/*
** R3 (seed csa_ratio4_index_compress, seed:291-390): outputs 3 and 4 from
** inputs 13..18, every batch row.  trace: [B, Rci, 128] or NULL.
*/
void csa4_compress_index(const csa_dims *d, const tensor *const *in, tensor *const *out, float *trace);

/*
** The index rotation both the key records (at their block start) and the
** queries (at their own position) go through (seed:356-376, 586-607): the
** RoPE tail on dims 64..127, the Walsh-Hadamard transform of all 128 dims,
** then bf16(x * (1 / sqrt(128))).
*/
void csa4_index_rotate(float *x, long long pos);

/*
** Scratch for one query row's index stages; csa4_index_scratch_alloc sizes
** it from *d (aborts when memory runs out).
*/
typedef struct csa4_index_scratch {
  float *query_t;  /* [128][IH]: the finalized queries, dim-major */
  float *dot;      /* [IH] */
  float *scores;   /* [Rci] */
  void *order;     /* [Rci] (score, record) pairs */
} csa4_index_scratch;

void csa4_index_scratch_alloc(const csa_dims *d, csa4_index_scratch *x);
void csa4_index_scratch_free(csa4_index_scratch *x);

/*
** R4-R6 (seed csa_ratio4_index_select, seed:551-664) for query row (b, s):
** finalizes the IH index queries (query_trace: that row's [IH, 128], or
** NULL), scores every causal record of the present index key (out 3) into
** x->scores (-inf from the causal limit up to Rci), and writes the first
** topk records in rank order to selection[0..topk), -1 padded.
*/
void csa4_index_select_row(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b, long long s,
                           csa4_index_scratch *x, float *query_trace, int *selection);

#endif

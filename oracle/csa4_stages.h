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
** R2 and R3, every batch row: R2 (seed csa_ratio4_main_compress,
** seed:400-502) writes outputs 1 and 2 from inputs 2..7, records_trace
** [B, Rc, 512] or NULL; R3 (seed csa_ratio4_index_compress, seed:291-390)
** writes outputs 3 and 4 from inputs 13..18, index_records_trace [B, Rci,
** 128] or NULL.  The two share no data, so they run side by side.
*/
void csa4_compress(const csa_dims *d, const tensor *const *in, tensor *const *out, float *records_trace,
                   float *index_records_trace);

/*
** The index rotation both the key records (at their block start) and the
** queries (at their own position) go through (seed:356-376, 586-607): the
** RoPE tail on dims 64..127, the Walsh-Hadamard transform of all 128 dims,
** then bf16(x * (1 / sqrt(128))).
*/
void csa4_index_rotate(float *x, long long pos);

/*
** The same in two steps, for many vectors at one position (a row's index
** queries, one a head): each RoPE pair's sine and cosine at pos, then the
** rotation by them.  A head's own 32 nx_powf and nx_sincosf had been most of
** its finalize (docs/SPEED.md, eighteenth session).
*/
typedef struct csa4_rope {
  float sn[CSA_ROPE_DIM / 2], cs[CSA_ROPE_DIM / 2]; /* a pair each */
} csa4_rope;
void csa4_rope_angles(long long pos, csa4_rope *a);
void csa4_index_rotate_by(float *x, const csa4_rope *a);

/*
** R4-R6 (seed csa_ratio4_index_select, seed:551-664) for every query row
** (b, s): finalizes the IH index queries (query_trace: [B, S, IH, 128], or
** NULL), scores every causal record of the present index key (out 3;
** scores_trace: [B, S, Rci], -inf from the row's causal limit, or NULL), and
** writes the first topk records in rank order to selection [B, S, topk], -1
** padded.
*/
void csa4_index_select(const csa_dims *d, const tensor *const *in, tensor *const *out, int *selection,
                       float *query_trace, float *scores_trace);

#endif

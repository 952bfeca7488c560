/*
** csa_attention.h: the sink-softmax attention row that both CSA ratios share
** (seed csa_ratio128_sink_attention, seed:691-859, and
** csa_ratio4_sink_attention, seed:862-990; oracle/SPEC.md sections C3 and
** R7).  The two seed kernels differ only in where their candidates come
** from: ratio 128 reads the dense window and then every completed record,
** ratio 4 the dense window and then the records the indexer selected.  So
** the caller lists the candidates (one 512-float value vector each, NULL
** for a candidate that is not live) and csa_attend_heads does the rest.
**
** Internal to oracle/: csa128.c and csa4.c include it; nothing else should.
*/
#ifndef ORACLE_CSA_ATTENTION_H
#define ORACLE_CSA_ATTENTION_H

#include "oracle/csa.h"

/* Where one query row's dense window lies (seed:715-725, 880-887). */
typedef struct csa_window {
  long long position;    /* start + s: the row's absolute position */
  long long dense;       /* dense candidates: 128, or min(kv_used, 128) at start 0 */
  long long dense_start; /* absolute position of dense candidate 0 */
} csa_window;

csa_window csa_window_of(const csa_dims *d, long long s);

/*
** Dense candidate c (< w->dense) of batch row b: its current_kv row (512
** floats), or NULL when the position is past the row's own or outside the
** logical prefix of current_kv (seed:742-747, 895-899).
*/
const float *csa_dense_value(const csa_dims *d, const tensor *current_kv, long long b, const csa_window *w,
                             long long c);

/*
** The bias of (b, h, s, candidate c) is row[c * step]: size-1 axes read index
** 0 (seed:752-758).  Returns the row and sets *step (0 when the candidate axis
** broadcasts, else 1); NULL when there is no bias.
*/
const float *csa_bias_row(const csa_dims *d, const tensor *const *in, long long b, long long h, long long s,
                          long long *step);

/* A 583-byte hybrid record decoded into 512 floats: each is nx_csa_fp8_record_value of its dim. */
void csa_fp8_record_decode(const unsigned char *rec, float *out);

/*
** Every head of query row (b, s) over the same candidates, into Y
** (out[CSA_OUT_Y]).  values[c] (c < count) is candidate c's 512 floats, NULL
** when not live.  Per head h, with its query q, bias row and sink:
**
**   score_c = (sum_d q[d] * v_c[d]) * scale [+ bias[c]]  (-inf: no live candidate)
**   m = max score_c; m == -inf: y = +0
**   den = sum_c exp(score_c - m) + exp(sink - m);  y[d] = sum_c (exp(score_c - m) / den) * v_c[d]
**
** Every sum runs in ascending c (the seed's order), each dot product in
** ascending d, and each one is computed whole by one thread, so the bits do
** not depend on the threads.  When given, trace_scores ([B, S, heads,
** score_stride]) and trace_output ([B, S, heads, 512]) receive copies of the
** head's scores and Y row.  Called outside a worker, it spreads the row over
** the oracle's threads in three phases (the scores by candidates, the
** softmax by heads, y by dims; csa_attention.c says why); inside one, it
** runs them in turn.  Its scratch is its own (kept by the calling thread).
** It writes only row (b, s)'s outputs, so calls for different rows may run
** at once.
*/
void csa_attend_heads(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b, long long s,
                      const float *const *values, long long count, float *trace_scores, float *trace_output);

/*
** 1 when a step's rows should be spread over the workers (each row's
** phases then run in turn), 0 when the rows should run in turn and each
** row's phases be spread: whichever keeps more workers busy, counting a
** row's heads as its items (its smallest phase), rows on a tie (fewer
** thread starts).
*/
int csa_split_rows(long long rows, long long heads);

#endif

/*
** csa_case_util.h: what the CSA case families of both ratios share
** (cases/csa128_cases.c, cases/csa4_cases.c): the value syntax of the spec
** keys they have in common (bias shape, sink, scale, contract name), the
** byte budget and allocation of one step's tensors, and the fills that do
** not depend on the ratio.  Every fill draws from cases_rng_u64(seed,
** stream, step, i) (cases/rng.h), so a value is a pure function of its key.
*/
#ifndef CASES_CSA_CASE_UTIL_H
#define CASES_CSA_CASE_UTIL_H

#include "oracle/tensor.h"

#include <stddef.h>
#include <stdint.h>

/* head_sink kinds: -inf, +0, 30, or a bell-shaped value per head. */
typedef enum csa_sink { CSA_SINK_NEG_INF = 0, CSA_SINK_ZERO, CSA_SINK_LARGE, CSA_SINK_RANDOM, CSA_SINK_COUNT } csa_sink;

/* ------------------------------------------------------- value syntax */

/* snprintf into o; 0, or -1 when it does not fit. */
int csa_case_put(char *o, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "none" (rank -1), "[]" (rank 0) or 1..4 dims in [0, dim_max] joined by 'x'.  0 or -1. */
int csa_case_bias_parse(const char *v, long long dim_max, int *rank, long long shape[4]);
int csa_case_bias_format(int rank, const long long shape[4], char *o, size_t n);
/* The bias shape right-aligned into 4 dims, 1 where absent (rank <= 0 gives all 1). */
void csa_case_bias_dims4(int rank, const long long shape[4], long long d4[4]);

int csa_case_sink_parse(const char *v, csa_sink *sink);
const char *csa_case_sink_name(csa_sink sink);

/* "none", or a positive finite float in canonical C99 "%a" text.  0 or -1. */
int csa_case_scale_parse(const char *v, int *has_scale, float *scale);
int csa_case_scale_format(int has_scale, float scale, char *o, size_t n);

/* A csa_contract_name() other than "none".  0 or -1. */
int csa_case_contract_parse(const char *v, int *code);
/* 1 when a step of this compression ratio (4 or 128) can break rule `code` (oracle/csa.h's r4 / r128 marks). */
int csa_case_contract_applies(int code, long long ratio);

/* ------------------------------------------------- one step's tensors */

void csa_case_set_shape(tensor *t, dtype dt, int rank, long long d0, long long d1, long long d2, long long d3);

/* Bytes n tensors take (a tensor with a dim <= 0 counts nothing).  0, or -1 on overflow. */
int csa_case_bytes(const tensor *t, int n, unsigned long long *total);

/*
** Allocates every present tensor of t[0..n) except those with a negative
** dim (data stays NULL) and those with skip[i] set (skip may be NULL).
** 0, or -1 with err set (the caller frees what was allocated).
*/
int csa_case_alloc(tensor *t, int n, const unsigned char *skip, char *err, size_t len);

/* ----------------------------------------------------------- the fills */

float csa_case_neg_inf(void);

/* Every element amp * bell(seed, stream, step, i). */
void csa_case_fill_normalish(uint64_t seed, tensor *t, uint32_t stream, uint32_t step, float amp);

/* Every element uniform in [lo, hi) from (seed, stream, 0, i). */
void csa_case_fill_uniform(uint64_t seed, tensor *t, uint32_t stream, float lo, float hi);

/*
** A token stream [B, n, ...] at absolute positions [first, first + n), the
** axes after the second flattened into one of `width` elements: element
** (b, r, d) is amp * bell(seed, stream, b, (first + r) * width + d).
*/
void csa_case_fill_positions(uint64_t seed, tensor *t, uint32_t stream, long long first, float amp);

/* head_sink [heads] of the given kind (the random kind draws from stream). */
void csa_case_fill_sink(uint64_t seed, tensor *t, csa_sink sink, uint32_t stream);

/* Deterministic junk bytes for a mutated tensor. */
void csa_case_fill_junk(uint64_t seed, tensor *t, uint32_t stream, int step);

/* -------------------------------------------------- enumerator draws */

struct cases_rng;

/* 1 with probability percent / 100 (one draw). */
int csa_case_coin(struct cases_rng *r, int percent);
/* One of v[0..n) (one draw). */
long long csa_case_pick(struct cases_rng *r, const long long *v, int n);

/*
** Bias shapes by kind (0..CSA_CASE_BIAS_KINDS-1): none, [], [1], [cand],
** [B,1,1,1], [1,heads,1,1], [B,heads,s,cand], [1,1,1,cand] ... with s = 1
** or, for a one-step case (decode 0) half the time, the prefill, and
** [heads,1,1].  cand is the candidate axis (128 + Rc or 128 + topk).
*/
#define CSA_CASE_BIAS_KINDS 9
void csa_case_gen_bias(struct cases_rng *r, int kind, long long batch, long long heads, long long prefill,
                       long long decode, long long cand, int *rank, long long shape[4]);
/* The scale attribute: absent 80% of the time, else one of four powers-of-two-ish values. */
void csa_case_gen_scale(struct cases_rng *r, int *has_scale, float *scale);
/* The dense window: the whole 128 65% of the time, else 1..127. */
long long csa_case_gen_window(struct cases_rng *r);

#endif

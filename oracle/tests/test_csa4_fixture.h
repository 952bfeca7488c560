/*
** test_csa4_fixture.h: the fixture and the independent references of the
** CSA ratio-4 oracle's tests (test_csa4.c, test_csa4_contracts.c).
**
** A fixture is one valid ratio-4 call: every input allocated with the
** geometry's shapes (zero data, norm weights 1, carries in the reset state
** kv +0 / score -inf), every output and trace buffer filled with the 0xa5
** sentinel, so that "never written" shows.  The references recompute the
** seed's math apart from the oracle: exp, pow, sin and cos through libm in
** binary64 rounded once to binary32, bf16 by the seeds' formula written out
** again, the Hadamard butterflies and the FP4 quantizer written out again.
*/
#ifndef TEST_CSA4_FIXTURE_H
#define TEST_CSA4_FIXTURE_H

#include "oracle/csa.h"

#include <criterion/criterion.h>
#include <math.h>

#define D CSA_HEAD_DIM
#define ID CSA4_INDEX_DIM
#define NEG_INF (-INFINITY)
#define SENTINEL 0xa5u

typedef struct geometry4 {
  long long B, S, H, IH, L, Rp, Rc, Rpi, Rci, topk, total;
  int n_out;     /* 5 or 6 */
  int bias_rank; /* -1: no bias */
  long long bias_shape[4];
} geometry4;

typedef struct fixture4 {
  geometry4 g;
  csa_attrs a;
  tensor t_in[CSA_INPUT_COUNT], t_out[CSA_OUTPUT_MAX];
  const tensor *in[CSA_INPUT_COUNT];
  tensor *out[CSA_OUTPUT_MAX];
  int n_in, n_out;
  op_error err;
  csa4_trace trace;
} fixture4;

/* A valid geometry: B, S, heads, index heads, topk and the total; L = min(total, 128), capacities exact + 1. */
geometry4 geo4(long long B, long long S, long long H, long long IH, long long topk, long long total);

void fx4_init(fixture4 *f, const geometry4 *g);
void fx4_free(fixture4 *f);
int fx4_run(fixture4 *f);
void fx4_run_ok(fixture4 *f, int line);
/* (Re)allocates t with that dtype and shape, zero-filled. */
void fx4_make(tensor *t, dtype dt, int rank, const long long *shape);

float *f32p(const tensor *t);
unsigned char *u8p(const tensor *t);

/* Fills every float input but the norms and carries with a deterministic pattern of the seed. */
void fx4_fill_pattern(fixture4 *f, unsigned seed);

/* Token streams as functions of the absolute position (so that steps can be split). */
float tok_kv(long long pos, int i);
float tok_gate(long long pos, int i);
float ape_value(int phase, int i);
/* Writes the token streams (kv, gate over `width`; ape) of the main (width 1024) or index (256) compressor. */
void fx4_fill_tokens(fixture4 *f, int index_stream);

void expect_bits_at(const char *what, long long i, float got, float want, int line);

/* ---- references ---- */
float ref_bf16(float x);
float ref_exp(float x);
/* RoPE on a 64-float tail at position p0, transcendentals in binary64. */
void ref_rope(float *tail, long long p0);
/* RMSNorm (eps 1e-6) with weight 1, then bf16, over n floats in place. */
void ref_norm(float *r, int n);
/* The index rotation: ref_rope on dims 64..127, the butterflies, bf16(x * (1/sqrtf(128))). */
void ref_index_rotate(float *x, long long pos);
/* One 32-block quantized to FP4 E2M1 (UE8M0 scale) and dequantized, in place. */
void ref_fp4_roundtrip(float *x);
/* Element d of a 583-byte record: E4M3 * 2^(e-127) below 448, the bf16 tail above. */
float ref_fp8_value(const unsigned char *rec, int d);
/* Element d of a 68-byte FP4 record. */
float ref_fp4_value(const unsigned char *rec, int d);

#endif

/*
** test_csa4_fixture.c: see test_csa4_fixture.h.
*/
#include "oracle/tests/test_csa4_fixture.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

float *f32p(const tensor *t) { return (float *)t->data; }
unsigned char *u8p(const tensor *t) { return (unsigned char *)t->data; }

void fx4_make(tensor *t, dtype dt, int rank, const long long *shape) {
  tensor_free(t);
  memset(t, 0, sizeof *t);
  t->dt = dt;
  t->rank = rank;
  if (rank) memcpy(t->shape, shape, (size_t)rank * sizeof *shape);
  cr_assert(tensor_alloc(t) == 0);
}

geometry4 geo4(long long B, long long S, long long H, long long IH, long long topk, long long total) {
  geometry4 g;
  memset(&g, 0, sizeof g);
  g.B = B, g.S = S, g.H = H, g.IH = IH, g.topk = topk, g.total = total;
  g.L = total < 128 ? total : 128;
  g.Rp = g.Rpi = (total - S) / 4 + 1;
  g.Rc = g.Rci = total / 4 + 1;
  g.n_out = 6;
  g.bias_rank = -1;
  return g;
}

/* Carry rows in the reset state: kv +0, score -inf, for a source `width` wide. */
static void carry_reset(tensor *t, long long width) {
  long long i, n = tensor_numel(t);
  for (i = 0; i < n; i++) f32p(t)[i] = ((i / width) % 2) ? NEG_INF : 0.0f;
}

static void *sentinel_buffer(long long count, size_t size) {
  void *p = malloc((size_t)(count ? count : 1) * size);
  cr_assert(p);
  memset(p, (int)SENTINEL, (size_t)(count ? count : 1) * size);
  return p;
}

void fx4_init(fixture4 *f, const geometry4 *g) {
  long long s_q[4] = {g->B, g->S, g->H, D}, s_kv[3] = {g->B, g->L, D}, s_src[3] = {g->B, g->S, 1024};
  long long s_ape[2] = {4, 1024}, s_norm[1] = {D}, s_past[3] = {g->B, g->Rp, CSA_FP8_RECORD_BYTES};
  long long s_carry[4] = {g->B, 8, 2, 1024}, s_b[1] = {g->B}, s_h[1] = {g->H};
  long long s_iq[4] = {g->B, g->S, g->IH, ID}, s_iw[3] = {g->B, g->S, g->IH}, s_isrc[3] = {g->B, g->S, 256};
  long long s_iape[2] = {4, 256}, s_inorm[1] = {ID}, s_ikey[3] = {g->B, g->Rpi, CSA4_INDEX_RECORD_BYTES};
  long long s_icarry[4] = {g->B, 8, 2, 256}, s_pres[3] = {g->B, g->Rc, CSA_FP8_RECORD_BYTES};
  long long s_ipres[3] = {g->B, g->Rci, CSA4_INDEX_RECORD_BYTES}, s_sel[4] = {g->B, g->IH, g->S, g->topk};
  long long i;
  memset(f, 0, sizeof *f);
  f->g = *g;
  f->a.compression_ratio = 4;
  f->a.cache_format = "fp8_e4m3_block64";
  f->a.num_heads = g->H;
  f->a.head_dim = D;
  f->a.qk_rope_head_dim = 64;
  f->a.index_num_heads = g->IH;
  f->a.index_head_dim = ID;
  f->a.index_topk = g->topk;
  fx4_make(&f->t_in[CSA_IN_QUERY], DTYPE_F32, 4, s_q);
  fx4_make(&f->t_in[CSA_IN_CURRENT_KV], DTYPE_F32, 3, s_kv);
  fx4_make(&f->t_in[CSA_IN_COMPRESSOR_KV], DTYPE_F32, 3, s_src);
  fx4_make(&f->t_in[CSA_IN_COMPRESSOR_GATE], DTYPE_F32, 3, s_src);
  fx4_make(&f->t_in[CSA_IN_COMPRESSOR_APE], DTYPE_F32, 2, s_ape);
  fx4_make(&f->t_in[CSA_IN_COMPRESSOR_NORM], DTYPE_F32, 1, s_norm);
  fx4_make(&f->t_in[CSA_IN_PAST_COMPRESSED_KV], DTYPE_U8, 3, s_past);
  fx4_make(&f->t_in[CSA_IN_PAST_CARRY], DTYPE_F32, 4, s_carry);
  fx4_make(&f->t_in[CSA_IN_SEQLENS_K], DTYPE_I32, 1, s_b);
  fx4_make(&f->t_in[CSA_IN_TOTAL_SEQ], DTYPE_I64, 0, NULL);
  fx4_make(&f->t_in[CSA_IN_HEAD_SINK], DTYPE_F32, 1, s_h);
  fx4_make(&f->t_in[CSA_IN_INDEX_QUERY], DTYPE_F32, 4, s_iq);
  fx4_make(&f->t_in[CSA_IN_INDEX_WEIGHT], DTYPE_F32, 3, s_iw);
  fx4_make(&f->t_in[CSA_IN_INDEX_KV], DTYPE_F32, 3, s_isrc);
  fx4_make(&f->t_in[CSA_IN_INDEX_GATE], DTYPE_F32, 3, s_isrc);
  fx4_make(&f->t_in[CSA_IN_INDEX_APE], DTYPE_F32, 2, s_iape);
  fx4_make(&f->t_in[CSA_IN_INDEX_NORM], DTYPE_F32, 1, s_inorm);
  fx4_make(&f->t_in[CSA_IN_PAST_INDEX_KEY], DTYPE_U8, 3, s_ikey);
  fx4_make(&f->t_in[CSA_IN_PAST_INDEX_CARRY], DTYPE_F32, 4, s_icarry);
  if (g->bias_rank >= 0) fx4_make(&f->t_in[CSA_IN_BIAS], DTYPE_F32, g->bias_rank, g->bias_shape);
  for (i = 0; i < D; i++) f32p(&f->t_in[CSA_IN_COMPRESSOR_NORM])[i] = 1.0f;
  for (i = 0; i < ID; i++) f32p(&f->t_in[CSA_IN_INDEX_NORM])[i] = 1.0f;
  carry_reset(&f->t_in[CSA_IN_PAST_CARRY], 1024);
  carry_reset(&f->t_in[CSA_IN_PAST_INDEX_CARRY], 256);
  ((int64_t *)f->t_in[CSA_IN_TOTAL_SEQ].data)[0] = g->total;
  fx4_make(&f->t_out[CSA_OUT_Y], DTYPE_F32, 4, s_q);
  fx4_make(&f->t_out[CSA_OUT_PRESENT_COMPRESSED_KV], DTYPE_U8, 3, s_pres);
  fx4_make(&f->t_out[CSA_OUT_PRESENT_CARRY], DTYPE_F32, 4, s_carry);
  fx4_make(&f->t_out[CSA_OUT_PRESENT_INDEX_KEY], DTYPE_U8, 3, s_ipres);
  fx4_make(&f->t_out[CSA_OUT_PRESENT_INDEX_CARRY], DTYPE_F32, 4, s_icarry);
  fx4_make(&f->t_out[CSA_OUT_SELECTED], DTYPE_I32, 4, s_sel);
  for (i = 0; i < CSA_OUTPUT_MAX; i++) memset(f->t_out[i].data, (int)SENTINEL, tensor_bytes(&f->t_out[i]));
  for (i = 0; i < CSA_INPUT_COUNT; i++) f->in[i] = &f->t_in[i];
  for (i = 0; i < CSA_OUTPUT_MAX; i++) f->out[i] = &f->t_out[i];
  f->n_in = g->bias_rank >= 0 ? 20 : 19;
  f->n_out = g->n_out;
  f->trace.records = sentinel_buffer(g->B * g->Rc * D, sizeof(float));
  f->trace.index_records = sentinel_buffer(g->B * g->Rci * ID, sizeof(float));
  f->trace.index_query = sentinel_buffer(g->B * g->S * g->IH * ID, sizeof(float));
  f->trace.index_scores = sentinel_buffer(g->B * g->S * g->Rci, sizeof(float));
  f->trace.selection = sentinel_buffer(g->B * g->S * g->topk, sizeof(int));
  f->trace.scores = sentinel_buffer(g->B * g->S * g->H * (128 + g->topk), sizeof(float));
  f->trace.output = sentinel_buffer(g->B * g->S * g->H * D, sizeof(float));
}

void fx4_free(fixture4 *f) {
  int i;
  for (i = 0; i < CSA_INPUT_COUNT; i++) tensor_free(&f->t_in[i]);
  for (i = 0; i < CSA_OUTPUT_MAX; i++) tensor_free(&f->t_out[i]);
  free(f->trace.records);
  free(f->trace.index_records);
  free(f->trace.index_query);
  free(f->trace.index_scores);
  free(f->trace.selection);
  free(f->trace.scores);
  free(f->trace.output);
}

int fx4_run(fixture4 *f) { return oracle_csa4_run(&f->a, f->in, f->n_in, f->out, f->n_out, &f->trace, &f->err); }

void fx4_run_ok(fixture4 *f, int line) {
  int rc = fx4_run(f);
  cr_assert(rc == 0, "line %d: run failed: code %d (%s) input %d axis %d: %s", line, f->err.rule,
            csa_contract_name(f->err.rule), f->err.input, f->err.axis, f->err.message);
}

/* A deterministic value in [-1, 1) with 1/1024 steps. */
static float pattern(unsigned seed, long long i) {
  uint32_t h = (uint32_t)(i * 2654435761u) ^ (seed * 0x9e3779b9u);
  h ^= h >> 15, h *= 0x85ebca6bu, h ^= h >> 13;
  return (float)((int)(h % 2048) - 1024) / 1024.0f;
}

void fx4_fill_pattern(fixture4 *f, unsigned seed) {
  static const int fill[] = {CSA_IN_QUERY,      CSA_IN_CURRENT_KV, CSA_IN_COMPRESSOR_KV, CSA_IN_COMPRESSOR_GATE,
                             CSA_IN_COMPRESSOR_APE, CSA_IN_HEAD_SINK, CSA_IN_INDEX_QUERY, CSA_IN_INDEX_WEIGHT,
                             CSA_IN_INDEX_KV,   CSA_IN_INDEX_GATE, CSA_IN_INDEX_APE,    CSA_IN_BIAS};
  size_t k;
  long long i;
  for (k = 0; k < sizeof fill / sizeof fill[0]; k++) {
    tensor *t = &f->t_in[fill[k]];
    if (t->dt != DTYPE_F32) continue;
    for (i = 0; i < tensor_numel(t); i++) f32p(t)[i] = pattern(seed + (unsigned)fill[k], i);
  }
}

float tok_kv(long long pos, int i) { return (float)((pos * 5 + i * 3) % 13 - 6) / 4.0f; }
float tok_gate(long long pos, int i) { return (float)((pos * 7 + i) % 9 - 4) / 8.0f; }
float ape_value(int phase, int i) { return (float)((phase * 3 + i) % 5 - 2) / 16.0f; }

void fx4_fill_tokens(fixture4 *f, int index_stream) {
  const int width = index_stream ? 256 : 1024;
  tensor *kv = &f->t_in[index_stream ? CSA_IN_INDEX_KV : CSA_IN_COMPRESSOR_KV];
  tensor *gate = &f->t_in[index_stream ? CSA_IN_INDEX_GATE : CSA_IN_COMPRESSOR_GATE];
  tensor *ape = &f->t_in[index_stream ? CSA_IN_INDEX_APE : CSA_IN_COMPRESSOR_APE];
  long long b, s, start = f->g.total - f->g.S;
  int i, ph;
  for (b = 0; b < f->g.B; b++)
    for (s = 0; s < f->g.S; s++)
      for (i = 0; i < width; i++) {
        f32p(kv)[(b * f->g.S + s) * width + i] = tok_kv(start + s + b, i);
        f32p(gate)[(b * f->g.S + s) * width + i] = tok_gate(start + s + b, i);
      }
  for (ph = 0; ph < 4; ph++)
    for (i = 0; i < width; i++) f32p(ape)[ph * width + i] = ape_value(ph, i);
}

void expect_bits_at(const char *what, long long i, float got, float want, int line) {
  uint32_t g, w;
  memcpy(&g, &got, 4);
  memcpy(&w, &want, 4);
  cr_expect(g == w, "line %d: %s[%lld]: got %a (0x%08x), want %a (0x%08x)", line, what, i, (double)got, g,
            (double)want, w);
}

/* ---- references ---------------------------------------------------------- */

float ref_bf16(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u = ((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) << 16;
  memcpy(&x, &u, 4);
  return x;
}

float ref_exp(float x) { return (float)exp((double)x); }

void ref_rope(float *tail, long long p0) {
  int k;
  for (k = 0; k < 32; k++) {
    float ramp = fminf(1.0f, fmaxf(0.0f, ((float)k - 15.0f) / 10.0f));
    float base = (float)pow(160000.0, (double)(-(float)(2 * k) / 64.0f));
    float freq = base * (1.0f - ramp) + (base / 16.0f) * ramp;
    float ang = (float)p0 * freq, sn = (float)sin((double)ang), cs = (float)cos((double)ang);
    float re = tail[2 * k], im = tail[2 * k + 1];
    tail[2 * k] = ref_bf16(re * cs - im * sn);
    tail[2 * k + 1] = ref_bf16(re * sn + im * cs);
  }
}

void ref_norm(float *r, int n) {
  float sq = 0.0f, inv;
  int d;
  for (d = 0; d < n; d++) sq += r[d] * r[d];
  inv = 1.0f / sqrtf(sq / (float)n + 1e-6f);
  for (d = 0; d < n; d++) r[d] = ref_bf16((r[d] * inv) * 1.0f);
}

void ref_index_rotate(float *x, long long pos) {
  int span, base, off, d;
  ref_rope(x + 64, pos);
  for (span = 1; span < ID; span *= 2)
    for (base = 0; base < ID; base += 2 * span)
      for (off = 0; off < span; off++) {
        float l = x[base + off], r = x[base + off + span];
        x[base + off] = l + r;
        x[base + off + span] = l - r;
      }
  for (d = 0; d < ID; d++) x[d] = ref_bf16(x[d] * (1.0f / sqrtf(128.0f)));
}

/* The E2M1 magnitude nearest to a (>= 0), ties to the even code; saturates at 6. */
static float e2m1_nearest(float a) {
  static const float grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  int k, best = 0;
  for (k = 1; k < 8; k++) {
    float db = fabsf(a - grid[best]), dk = fabsf(a - grid[k]);
    if (dk < db || (dk == db && k % 2 == 0)) best = k;
  }
  return grid[best];
}

void ref_fp4_roundtrip(float *x) {
  float amax = 0.0f, t, m, scale;
  int i, e;
  for (i = 0; i < 32; i++)
    if (fabsf(x[i]) > amax) amax = fabsf(x[i]);
  if (amax < 0x1.8p-124f) amax = 0x1.8p-124f;
  t = amax / 6.0f;
  m = frexpf(t, &e); /* t = m 2^e, m in [0.5, 1): ceil(log2 t) = e, or e - 1 when m == 0.5 */
  if (m == 0.5f) e -= 1;
  if (e < -126) e = -126;
  if (e > 127) e = 127;
  scale = ldexpf(1.0f, e);
  for (i = 0; i < 32; i++) x[i] = copysignf(e2m1_nearest(fabsf(x[i] / scale)), x[i]) * scale;
}

/* E4M3FN by the format's definition (bias 7, subnormals of 2^-9, 0x7f/0xff NaN). */
static float e4m3_value(unsigned char c) {
  int e = (c >> 3) & 15, m = c & 7;
  float v = e ? ldexpf(1.0f + (float)m / 8.0f, e - 7) : ldexpf((float)m, -9);
  if ((c & 0x7f) == 0x7f) return NAN;
  return (c & 0x80) ? -v : v;
}

float ref_fp8_value(const unsigned char *rec, int d) {
  uint32_t bits;
  float v;
  if (d < 448) return e4m3_value(rec[65 * (d / 64) + 1 + d % 64]) * ldexpf(1.0f, (int)rec[65 * (d / 64)] - 127);
  bits = (uint32_t)(rec[455 + 2 * (d - 448)] | (rec[456 + 2 * (d - 448)] << 8)) << 16;
  memcpy(&v, &bits, 4);
  return v;
}

float ref_fp4_value(const unsigned char *rec, int d) {
  static const float grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  unsigned char byte = rec[17 * (d / 32) + 1 + (d % 32) / 2], code = (d % 2) ? byte >> 4 : byte & 15;
  float v = grid[code & 7] * ldexpf(1.0f, (int)rec[17 * (d / 32)] - 127);
  return (code & 8) ? -v : v;
}

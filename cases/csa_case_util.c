/*
** csa_case_util.c: see csa_case_util.h.
*/
#include "cases/csa_case_util.h"

#include "cases/fill.h"
#include "cases/rng.h"
#include "cases/spec_text.h"
#include "oracle/csa.h"
#include "oracle/numerics/numerics.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- value syntax */

static const char *const sink_names[CSA_SINK_COUNT] = {"neginf", "zero", "large", "rand"};

int csa_case_put(char *o, size_t n, const char *fmt, ...) {
  va_list ap;
  int w;
  va_start(ap, fmt);
  w = vsnprintf(o, n, fmt, ap);
  va_end(ap);
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

int csa_case_bias_parse(const char *v, long long dim_max, int *rank, long long shape[4]) {
  char buf[256], *p, *q;
  int n = 0;
  if (!strcmp(v, "none")) return *rank = -1, 0;
  if (!strcmp(v, "[]")) return *rank = 0, 0;
  if (strlen(v) >= sizeof buf) return -1;
  strcpy(buf, v);
  for (p = buf;; p = q + 1) {
    if (n == 4) return -1;
    q = strchr(p, 'x');
    if (q) *q = '\0';
    if (spec_parse_ll(p, 0, dim_max, &shape[n++])) return -1;
    if (!q) break;
  }
  *rank = n;
  return 0;
}

int csa_case_bias_format(int rank, const long long shape[4], char *o, size_t n) {
  size_t used = 0;
  int i;
  if (rank < 0) return csa_case_put(o, n, "none");
  if (rank == 0) return csa_case_put(o, n, "[]");
  for (i = 0; i < rank; i++) {
    if (csa_case_put(o + used, n - used, "%s%lld", i ? "x" : "", shape[i])) return -1;
    used += strlen(o + used);
  }
  return 0;
}

void csa_case_bias_dims4(int rank, const long long shape[4], long long d4[4]) {
  int i, r = rank < 0 ? 0 : rank;
  for (i = 0; i < 4; i++) d4[i] = i < 4 - r ? 1 : shape[i - (4 - r)];
}

int csa_case_sink_parse(const char *v, csa_sink *sink) {
  int s = spec_name_lookup(sink_names, CSA_SINK_COUNT, v);
  if (s < 0) return -1;
  *sink = (csa_sink)s;
  return 0;
}

const char *csa_case_sink_name(csa_sink sink) { return (unsigned)sink < CSA_SINK_COUNT ? sink_names[sink] : "?"; }

int csa_case_scale_parse(const char *v, int *has_scale, float *scale) {
  char canon[64], *end;
  double d;
  if (!strcmp(v, "none")) return *has_scale = 0, 0;
  d = strtod(v, &end);
  if (*end || !(d > 0.0) || (double)(float)d != d || !((float)d <= 0x1.fffffep127f)) return -1;
  spec_format_hex_float((float)d, canon, sizeof canon);
  if (strcmp(canon, v)) return -1; /* not canonical: one case, one text */
  *has_scale = 1;
  *scale = (float)d;
  return 0;
}

int csa_case_scale_format(int has_scale, float scale, char *o, size_t n) {
  if (!has_scale) return csa_case_put(o, n, "none");
  spec_format_hex_float(scale, o, n);
  return 0;
}

int csa_case_contract_parse(const char *v, int *code) {
  int k;
  for (k = CSA_CONTRACT_NONE + 1; k < CSA_CONTRACT_COUNT; k++)
    if (!strcmp(v, csa_contract_name(k))) return *code = k, 0;
  return -1;
}

int csa_case_contract_applies(int code, long long ratio) {
  switch (code) {
  case CSA_CONTRACT_NONE: return 0;
  case CSA_CONTRACT_RATIO4_INPUT:
  case CSA_CONTRACT_FP4_FORMAT: return ratio == CSA128_RATIO;
  case CSA_CONTRACT_INDEX_INPUT:
  case CSA_CONTRACT_INDEX_HEAD_DIM:
  case CSA_CONTRACT_RATIO4_FORMAT:
  case CSA_CONTRACT_INDEX_HEADS:
  case CSA_CONTRACT_TOPK: return ratio == CSA4_RATIO;
  default: return code > 0 && code < CSA_CONTRACT_COUNT;
  }
}

/* ------------------------------------------------- one step's tensors */

void csa_case_set_shape(tensor *t, dtype dt, int rank, long long d0, long long d1, long long d2, long long d3) {
  memset(t, 0, sizeof *t);
  t->dt = dt;
  t->rank = rank;
  t->shape[0] = d0, t->shape[1] = d1, t->shape[2] = d2, t->shape[3] = d3;
}

int csa_case_bytes(const tensor *t, int n, unsigned long long *total) {
  int i, k;
  *total = 0;
  for (i = 0; i < n; i++) {
    unsigned long long e = dtype_size(t[i].dt);
    for (k = 0; k < t[i].rank && e; k++) {
      long long d = t[i].shape[k];
      if (d <= 0)
        e = 0;
      else if (e > ULLONG_MAX / (unsigned long long)d)
        return -1;
      else
        e *= (unsigned long long)d;
    }
    if (*total > ULLONG_MAX - e) return -1;
    *total += e;
  }
  return 0;
}

static int has_negative_dim(const tensor *t) {
  int k;
  for (k = 0; k < t->rank; k++)
    if (t->shape[k] < 0) return 1;
  return 0;
}

int csa_case_alloc(tensor *t, int n, const unsigned char *skip, char *err, size_t len) {
  int i;
  for (i = 0; i < n; i++) {
    if (t[i].dt == DTYPE_NONE || (skip && skip[i]) || has_negative_dim(&t[i])) continue;
    if (tensor_alloc(&t[i])) {
      t[i].data = NULL;
      return spec_set_err(err, len, "out of memory allocating %zu bytes", tensor_bytes(&t[i])), -1;
    }
  }
  return 0;
}

/* ----------------------------------------------------------- the fills */

float csa_case_neg_inf(void) { return nx_f32_from_bits(0xff800000u); }

/*
** The element fills below split over threads (cases/fill.h): element i, or
** row i of a token stream, draws at its own index and writes its own floats.
*/
typedef struct fill_job {
  uint64_t seed;
  float *x;
  uint32_t stream, step;
  float amp, lo, hi;
  long long n, w, first; /* token streams: positions per batch row, row width, first position */
} fill_job;

static void normalish_range(void *ctx, long long begin, long long end, int worker) {
  const fill_job *j = ctx;
  long long i;
  (void)worker;
  for (i = begin; i < end; i++)
    j->x[i] = j->amp * cases_rng_normalish(cases_rng_u64(j->seed, j->stream, j->step, (uint64_t)i));
}

void csa_case_fill_normalish(uint64_t seed, tensor *t, uint32_t stream, uint32_t step, float amp) {
  fill_job j = {.seed = seed, .x = t->data, .stream = stream, .step = step, .amp = amp};
  cases_fill_parallel(tensor_numel(t), 1, normalish_range, &j);
}

static void uniform_range(void *ctx, long long begin, long long end, int worker) {
  const fill_job *j = ctx;
  long long i;
  (void)worker;
  for (i = begin; i < end; i++)
    j->x[i] = cases_rng_uniform(cases_rng_u64(j->seed, j->stream, 0, (uint64_t)i), j->lo, j->hi);
}

void csa_case_fill_uniform(uint64_t seed, tensor *t, uint32_t stream, float lo, float hi) {
  fill_job j = {.seed = seed, .x = t->data, .stream = stream, .lo = lo, .hi = hi};
  cases_fill_parallel(tensor_numel(t), 1, uniform_range, &j);
}

/* Rows [begin, end) of the flattened [B * n] rows of a token stream. */
static void positions_range(void *ctx, long long begin, long long end, int worker) {
  const fill_job *j = ctx;
  long long row, d;
  (void)worker;
  for (row = begin; row < end; row++) {
    uint64_t b = (uint64_t)(row / j->n), base = (uint64_t)(j->first + row % j->n) * (uint64_t)j->w;
    for (d = 0; d < j->w; d++)
      j->x[row * j->w + d] =
          j->amp * cases_rng_normalish(cases_rng_u64(j->seed, j->stream, (uint32_t)b, base + (uint64_t)d));
  }
}

void csa_case_fill_positions(uint64_t seed, tensor *t, uint32_t stream, long long first, float amp) {
  long long B = t->shape[0], n = t->shape[1], w = B && n ? tensor_numel(t) / (B * n) : 0;
  fill_job j = {.seed = seed, .x = t->data, .stream = stream, .amp = amp, .n = n, .w = w, .first = first};
  if (w > 0) cases_fill_parallel(B * n, w, positions_range, &j);
}

void csa_case_fill_sink(uint64_t seed, tensor *t, csa_sink sink, uint32_t stream) {
  long long h;
  for (h = 0; h < t->shape[0]; h++) {
    float v = 0.0f;
    if (sink == CSA_SINK_NEG_INF)
      v = csa_case_neg_inf();
    else if (sink == CSA_SINK_LARGE)
      v = 30.0f;
    else if (sink == CSA_SINK_RANDOM)
      v = cases_rng_normalish(cases_rng_u64(seed, stream, 0, (uint64_t)h));
    ((float *)t->data)[h] = v;
  }
}

void csa_case_fill_junk(uint64_t seed, tensor *t, uint32_t stream, int step) {
  size_t i, n = tensor_bytes(t);
  for (i = 0; i < n; i++)
    ((unsigned char *)t->data)[i] = (unsigned char)(cases_rng_u64(seed, stream, (uint32_t)step, i) >> 56);
}

/* -------------------------------------------------- enumerator draws */

int csa_case_coin(cases_rng *r, int percent) { return cases_rng_next_range(r, 0, 99) < percent; }

long long csa_case_pick(cases_rng *r, const long long *v, int n) { return v[cases_rng_next_range(r, 0, n - 1)]; }

void csa_case_gen_bias(cases_rng *r, int kind, long long batch, long long heads, long long prefill, long long decode,
                       long long cand, int *rank, long long shape[4]) {
  long long seq = decode == 0 && csa_case_coin(r, 50) ? prefill : 1;
  long long *s = shape;
  *rank = kind == 0 ? -1 : kind == 1 ? 0 : kind <= 3 ? 1 : kind == 8 ? 3 : 4;
  s[0] = s[1] = s[2] = s[3] = 1;
  switch (kind) {
  case 3: s[0] = cand; break;
  case 4: s[0] = batch; break;
  case 5: s[1] = heads; break;
  case 6: s[0] = batch, s[1] = heads, s[2] = seq, s[3] = cand; break;
  case 7: s[2] = seq, s[3] = cand; break;
  case 8: s[0] = heads; break;
  default: break;
  }
}

void csa_case_gen_scale(cases_rng *r, int *has_scale, float *scale) {
  static const float scales[] = {0x1p-4f, 0x1.6a09e6p-5f, 0x1p-5f, 0x1.8p-4f};
  *has_scale = csa_case_coin(r, 20);
  *scale = *has_scale ? scales[cases_rng_next_range(r, 0, 3)] : 0.0f;
}

long long csa_case_gen_window(cases_rng *r) {
  return csa_case_coin(r, 65) ? CSA_DENSE_WINDOW : cases_rng_next_range(r, 1, CSA_DENSE_WINDOW - 1);
}

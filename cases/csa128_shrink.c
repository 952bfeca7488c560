/*
** csa128_shrink.c: the ratio-128 knobs of `bitgate shrink`
** (cases/shrink_reduce.h; grammar in cases/csa128_cases.h).  Floors: 1 for
** dims, 0 decode steps, the final total / 128 records of capacity (a bias
** whose candidate axis was 128 + cap follows the capacity), no bias.  This
** grammar has no magnitude token yet.
*/
#include "cases/csa128_cases.h"
#include "cases/shrink_reduce.h"

#include <stdio.h>
#include <string.h>

enum { K_B, K_HEADS, K_WINDOW, K_START, K_PREFILL, K_DECODE, K_CAP, K_BIAS, K_COUNT };

static const char *const knob_names[K_COUNT] = {"b", "heads", "window", "start", "prefill", "decode", "cap", "bias"};

static long long *knob_field(csa_case *c, int k) {
  switch (k) {
  case K_B: return &c->batch;
  case K_HEADS: return &c->heads;
  case K_WINDOW: return &c->window;
  case K_START: return &c->start;
  case K_PREFILL: return &c->prefill;
  case K_DECODE: return &c->decode;
  default: return &c->capacity;
  }
}

static long long knob_floor(const void *cv, int k) {
  const csa_case *c = cv;
  switch (k) {
  case K_START: return c->family == CSA_FAMILY_STATE ? 1 : 0;
  case K_DECODE: case K_BIAS: return 0;
  case K_CAP: return (c->start + c->prefill + c->decode) / 128;
  default: return 1;
  }
}

/* What the bias broadcasts against: [B, heads, S of step 0, 128 + cap]. */
static void bias_target(const void *cv, long long t[4]) {
  const csa_case *c = cv;
  t[0] = c->batch, t[1] = c->heads, t[2] = c->prefill, t[3] = CSA_DENSE_WINDOW + c->capacity;
}

static int csa128_size(const char *spec, unsigned long long *bytes, char *err, size_t len) {
  tensor in[CSA_INPUT_COUNT], out[CSA_OUTPUT_COUNT];
  csa_attrs attrs;
  csa_case c;
  unsigned long long n;
  int step, n_in, n_out;
  if (cases_csa_parse(spec, &c, err, len) != 0) return -1;
  for (step = 0; step < cases_csa_steps(&c); step++) {
    if (cases_csa_materialize(&c, step, in, &n_in, out, &n_out, &attrs, err, len) != 0) return -1;
    if (csa_case_bytes(in, n_in, &n) != 0) n = 0;
    *bytes += n;
    cases_csa_release(in, out);
  }
  return 0;
}


static long long knob_get(const void *cv, int k) {
  csa_case *c = (csa_case *)cv; /* knob_field only reads here */
  return k == K_BIAS ? shrink_bias_level(c->bias_rank) : *knob_field(c, k);
}

static void knob_set(void *cv, int k, long long v) {
  csa_case *c = cv;
  if (k == K_BIAS) shrink_bias_set_level(&c->bias_rank, c->bias_shape, v);
  else *knob_field(c, k) = v;
}

static int parse(const char *spec, void *c, char *err, size_t len) { return cases_csa_parse(spec, c, err, len); }
static int format(const void *c, char *out, size_t len) { return cases_csa_format(c, out, len); }

static void bias(void *cv, int **rank, long long **shape) {
  csa_case *c = cv;
  *rank = &c->bias_rank, *shape = c->bias_shape;
}

static const shrink_case_ops ops = {sizeof(csa_case), K_BIAS,   parse,       format, knob_get,
                                    knob_floor,       knob_set, bias_target, bias};

const shrink_family shrink_family_csa128 = {"csa128.", K_COUNT, knob_names, &ops, csa128_size};

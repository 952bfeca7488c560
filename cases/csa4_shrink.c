/*
** csa4_shrink.c: the ratio-4 knobs of `bitgate shrink` (cases/shrink_reduce.h;
** grammar in cases/csa4_cases.h).  Floors: 1 for dims, 0 decode steps, the
** final total / 4 records of capacity, 5 outputs, no bias, and the smallest
** values mag= gives (2^-24).  start only moves within its family's range
** (csa4.state keeps start > 0; the parser refuses the rest).
*/
#include "cases/csa4_cases.h"
#include "cases/shrink_reduce.h"

#include <stdio.h>
#include <string.h>

enum { K_B, K_HEADS, K_IHEADS, K_TOPK, K_WINDOW, K_START, K_PREFILL, K_DECODE, K_CAP, K_OUTPUTS, K_BIAS, K_MAG, K_COUNT };

static const char *const knob_names[K_COUNT] = {"b",      "heads",  "iheads", "topk",    "window", "start",
                                                "prefill", "decode", "cap",    "outputs", "bias",   "mag"};

/* mag counts down as values grow, so "smaller" is the same direction for every knob. */
static long long knob_get(const void *cv, int k) {
  const csa4_case *c = cv;
  switch (k) {
  case K_B: return c->batch;
  case K_HEADS: return c->heads;
  case K_IHEADS: return c->index_heads;
  case K_TOPK: return c->topk;
  case K_WINDOW: return c->window;
  case K_START: return c->start;
  case K_PREFILL: return c->prefill;
  case K_DECODE: return c->decode;
  case K_CAP: return c->capacity;
  case K_OUTPUTS: return c->outputs - 5;
  case K_BIAS: return shrink_bias_level(c->bias_rank);
  default: return CSA4_MAG_MAX - c->mag;
  }
}

static long long knob_floor(const void *cv, int k) {
  const csa4_case *c = cv;
  switch (k) {
  case K_START: return c->family == CSA4_FAMILY_STATE ? 1 : 0;
  case K_DECODE: return 0;
  case K_CAP: return (c->start + c->prefill + c->decode) / 4;
  case K_OUTPUTS: case K_BIAS: case K_MAG: return 0;
  default: return 1;
  }
}

static void knob_set(void *cv, int k, long long v) {
  csa4_case *c = cv;
  switch (k) {
  case K_B: c->batch = v; break;
  case K_HEADS: c->heads = v; break;
  case K_IHEADS: c->index_heads = v; break;
  case K_TOPK: c->topk = v; break;
  case K_WINDOW: c->window = v; break;
  case K_START: c->start = v; break;
  case K_PREFILL: c->prefill = v; break;
  case K_DECODE: c->decode = v; break;
  case K_CAP: c->capacity = v; break;
  case K_OUTPUTS: c->outputs = 5 + (int)v; break;
  case K_BIAS: shrink_bias_set_level(&c->bias_rank, c->bias_shape, v); break;
  default: c->mag = CSA4_MAG_MAX - (int)v; break;
  }
}

/* What the bias broadcasts against: [B, heads, S of step 0, 128 + topk]. */
static void bias_target(const void *cv, long long t[4]) {
  const csa4_case *c = cv;
  t[0] = c->batch, t[1] = c->heads, t[2] = c->prefill, t[3] = CSA_DENSE_WINDOW + c->topk;
}

static int csa4_size(const char *spec, unsigned long long *bytes, char *err, size_t len) {
  tensor in[CSA_INPUT_COUNT], out[CSA_OUTPUT_MAX];
  csa_attrs attrs;
  csa4_case c;
  unsigned long long n;
  int step, n_in, n_out;
  if (cases_csa4_parse(spec, &c, err, len) != 0) return -1;
  for (step = 0; step < cases_csa4_steps(&c); step++) {
    if (cases_csa4_materialize(&c, step, in, &n_in, out, &n_out, &attrs, err, len) != 0) return -1;
    if (csa_case_bytes(in, n_in, &n) != 0) n = 0;
    *bytes += n;
    cases_csa4_release(in, out);
  }
  return 0;
}


static int parse(const char *spec, void *c, char *err, size_t len) { return cases_csa4_parse(spec, c, err, len); }
static int format(const void *c, char *out, size_t len) { return cases_csa4_format(c, out, len); }

static void bias(void *cv, int **rank, long long **shape) {
  csa4_case *c = cv;
  *rank = &c->bias_rank, *shape = c->bias_shape;
}

static const shrink_case_ops ops = {sizeof(csa4_case), K_BIAS,   parse,       format, knob_get,
                                    knob_floor,        knob_set, bias_target, bias};

const shrink_family shrink_family_csa4 = {"csa4.", K_COUNT, knob_names, &ops, csa4_size};

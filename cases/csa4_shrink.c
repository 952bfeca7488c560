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
static long long knob_get(const csa4_case *c, int k) {
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

static long long knob_floor(const csa4_case *c, int k) {
  switch (k) {
  case K_START: return c->family == CSA4_FAMILY_STATE ? 1 : 0;
  case K_DECODE: return 0;
  case K_CAP: return (c->start + c->prefill + c->decode) / 4;
  case K_OUTPUTS: case K_BIAS: case K_MAG: return 0;
  default: return 1;
  }
}

static void knob_set(csa4_case *c, int k, long long v) {
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
static void bias_target(const csa4_case *c, long long t[4]) {
  t[0] = c->batch, t[1] = c->heads, t[2] = c->prefill, t[3] = CSA_DENSE_WINDOW + c->topk;
}

static int csa4_reduce(const char *spec, int knob, shrink_how how, char *out, size_t len) {
  csa4_case c;
  char err[512];
  long long v, t, before[4], after[4];
  if (cases_csa4_parse(spec, &c, err, sizeof err) != 0) return -1;
  v = knob_get(&c, knob);
  if ((t = shrink_target(v, knob_floor(&c, knob), how)) >= v) return 1;
  bias_target(&c, before);
  knob_set(&c, knob, t);
  bias_target(&c, after);
  if (knob != K_BIAS) shrink_bias_follow(c.bias_rank, c.bias_shape, before, after);
  if (cases_csa4_format(&c, out, len) != 0) return -1;
  return cases_csa4_parse(out, &c, err, sizeof err) != 0 ? 1 : 0;
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

static int canonical(const char *spec, char *out, size_t len, char *err, size_t err_len) {
  csa4_case c;
  if (cases_csa4_parse(spec, &c, err, err_len) != 0) return -1;
  return cases_csa4_format(&c, out, len) != 0 ? (snprintf(err, err_len, "spec too long"), -1) : 0;
}

const shrink_family shrink_family_csa4 = {"csa4.", K_COUNT, knob_names, csa4_reduce, csa4_size, canonical};

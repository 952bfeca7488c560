/*
** index_share_shrink.c: the IndexShare knobs of `bitgate shrink`
** (cases/shrink_reduce.h; grammar in cases/index_share_cases.h).  Floors:
** 1 for dims and steps, 0 past tokens, no bias; kv heads stay absent when
** absent.  Couplings: kv heads and index heads that equalled the heads
** follow them; a capacity present's valid lengths are cut to the new batch
** and capped at the new sp; the bias follows [B, N, sq, cache].  A planted
** violation's coordinates do not move: a candidate that puts them outside
** the case does not parse and is skipped.  No magnitude token yet (is.numeric
** has its own special values).
*/
#include "cases/index_share_cases.h"
#include "cases/shrink_reduce.h"

#include <stdio.h>
#include <string.h>

enum { K_B, K_N, K_NKV, K_SQ, K_SC, K_SP, K_H, K_IH, K_K, K_STEPS, K_BIAS, K_COUNT };

static const char *const knob_names[K_COUNT] = {"b", "n", "nkv", "sq", "sc", "sp", "h", "ih", "k", "steps", "bias"};

static long long knob_get(const void *cv, int k) {
  const is_case *c = cv;
  switch (k) {
  case K_B: return c->batch;
  case K_N: return c->num_heads;
  case K_NKV: return c->kv_num_heads;
  case K_SQ: return c->q_seq;
  case K_SC: return c->current_seq;
  case K_SP: return c->past_seq;
  case K_H: return c->head_size;
  case K_IH: return c->index_heads;
  case K_K: return c->selected_width;
  case K_STEPS: return c->steps;
  default: return shrink_bias_level(c->bias_rank);
  }
}

static long long knob_floor(const void *cv, int k) {
  const is_case *c = cv;
  switch (k) {
  case K_NKV: return c->kv_num_heads ? 1 : 0; /* absent stays absent */
  case K_SP: case K_BIAS: return 0;
  default: return 1;
  }
}

static void knob_set(void *cv, int k, long long v) {
  is_case *c = cv;
  int i;
  switch (k) {
  case K_B:
    c->batch = v;
    if (c->n_valid_len > v) c->n_valid_len = (int)v;
    break;
  case K_N:
    if (c->kv_num_heads == c->num_heads) c->kv_num_heads = v;
    if (c->index_heads == c->num_heads) c->index_heads = v;
    c->num_heads = v;
    break;
  case K_NKV: c->kv_num_heads = v; break;
  case K_SQ: c->q_seq = v; break;
  case K_SC: c->current_seq = v; break;
  case K_SP:
    c->past_seq = v;
    for (i = 0; i < c->n_valid_len; i++)
      if (c->valid_len[i] > v) c->valid_len[i] = v;
    break;
  case K_H: c->head_size = v; break;
  case K_IH: c->index_heads = v; break;
  case K_K: c->selected_width = v; break;
  case K_STEPS: c->steps = (int)v; break;
  default: shrink_bias_set_level(&c->bias_rank, c->bias_shape, v); break;
  }
}

/* What the bias broadcasts against: [B, N, sq, cache] (cache: sp + sc, or sp at capacity). */
static void bias_target(const void *cv, long long t[4]) {
  const is_case *c = cv;
  t[0] = c->batch, t[1] = c->num_heads, t[2] = c->q_seq;
  t[3] = c->capacity ? c->past_seq : c->past_seq + c->current_seq;
}

/* Bytes of n_in inputs; absent ones (DTYPE_NONE) and dims <= 0 count nothing. */
static unsigned long long input_bytes(const tensor *in, int n_in) {
  unsigned long long total = 0;
  int i, k;
  for (i = 0; i < n_in; i++) {
    int whole = in[i].dt != DTYPE_NONE && in[i].rank >= 0;
    for (k = 0; k < in[i].rank && whole; k++) whole = in[i].shape[k] > 0;
    if (whole) total += tensor_bytes(&in[i]);
  }
  return total;
}

static int is_size(const char *spec, unsigned long long *bytes, char *err, size_t len) {
  tensor in[IS_CASE_MAX_INPUTS], out[IS_OUTPUT_COUNT];
  index_share_attrs attrs;
  is_case c;
  int step, n_in, n_out;
  if (cases_is_parse(spec, &c, err, len) != 0) return -1;
  for (step = 0; step < c.steps; step++) {
    if (cases_is_materialize(&c, step, in, &n_in, out, &n_out, &attrs, err, len) != 0) {
      cases_is_release(in, out);
      return -1;
    }
    *bytes += input_bytes(in, n_in);
    cases_is_release(in, out);
  }
  return 0;
}


static int parse(const char *spec, void *c, char *err, size_t len) { return cases_is_parse(spec, c, err, len); }
static int format(const void *c, char *out, size_t len) { return cases_is_format(c, out, len); }

static void bias(void *cv, int **rank, long long **shape) {
  is_case *c = cv;
  *rank = &c->bias_rank, *shape = c->bias_shape;
}

static const shrink_case_ops ops = {sizeof(is_case), K_BIAS,   parse,       format, knob_get,
                                    knob_floor,      knob_set, bias_target, bias};

const shrink_family shrink_family_is = {"is.", K_COUNT, knob_names, &ops, is_size};

/*
** csa4_contract.c: the csa4.contract family's violations.  For each contract
** code that applies to ratio 4 (oracle/csa.h), the sites where a single
** mutation of a valid step breaks it, the axis the rejection must then
** name, and the mutation itself.
**
** Why a mutation reaches exactly its code: the oracle checks in the order of
** enum csa_contract, input by input (rank, negative dims, then each axis),
** so a change that breaks one rule at one input leaves every earlier check
** passing.  Same-as axes refer to query (input 0), which is checked first;
** that is why a SHAPE violation of query changes its heads axis, not B or S.
**
** Attribute codes have no site; where a rule has several ways to be broken
** (a NaN or an infinite scale, index_topk 0 or 513, ...), the case's seed
** picks one, so the spec still fixes every byte.
*/
#include "cases/csa4_cases_internal.h"

#include "oracle/numerics/numerics.h"

#include <string.h>

/* Rank of inputs 0..18 in a valid ratio-4 step (seed validate_ratio4_claim). */
static const int input_rank[CSA_IN_BIAS] = {4, 3, 3, 3, 2, 1, 3, 4, 1, 0, 1, 4, 3, 3, 3, 2, 1, 3, 4};

/*
** The axis a SHAPE violation grows by one: a fixed width or a same-as-query
** axis of each input (-1: total_sequence_length has no axis).
*/
static const int shape_axis[CSA_IN_BIAS] = {2, 2, 2, 2, 0, 0, 2, 1, 0, -1, 0, 3, 2, 2, 2, 0, 0, 2, 1};

/* The axis an OUTPUT_SHAPE violation grows by one, per output. */
static const int output_shape_axis[CSA_OUTPUT_MAX] = {3, 2, 1, 2, 3, 3};

static int code_has_no_site(int code) {
  switch (code) {
  case CSA_CONTRACT_RATIO:
  case CSA_CONTRACT_CACHE_FORMAT:
  case CSA_CONTRACT_NUM_HEADS:
  case CSA_CONTRACT_SCALE:
  case CSA_CONTRACT_ARITY_INPUTS:
  case CSA_CONTRACT_ARITY_OUTPUTS:
  case CSA_CONTRACT_INDEX_HEAD_DIM:
  case CSA_CONTRACT_RATIO4_FORMAT:
  case CSA_CONTRACT_HEAD_DIM:
  case CSA_CONTRACT_ROPE_DIM:
  case CSA_CONTRACT_INDEX_HEADS:
  case CSA_CONTRACT_TOPK: return 1;
  default: return 0;
  }
}

/*
** Is `site` a place rule `code` can be broken at?  *axis: the axis named.
** (A bias site also needs a bias: csa4_cases.c checks that.)
*/
static int site_axis(int code, int site, int outputs, int bias_rank, int *axis) {
  int in = site >= 0 && site < CSA_INPUT_COUNT ? site : -1, o = site >= 100 ? site - 100 : -1;
  int bias_axis = (bias_rank > 0 ? bias_rank : 1) - 1;
  *axis = -1;
  if (code_has_no_site(code)) return site == -1;
  switch (code) {
  case CSA_CONTRACT_REQUIRED_INPUT: return in >= 0 && in <= CSA_IN_HEAD_SINK;
  case CSA_CONTRACT_INDEX_INPUT: return in >= CSA_IN_INDEX_FIRST && in <= CSA_IN_INDEX_LAST;
  case CSA_CONTRACT_DTYPE:
  case CSA_CONTRACT_RANK: return in >= 0 && in < CSA_IN_BIAS;
  case CSA_CONTRACT_NEGATIVE_DIM:
    if (in == CSA_IN_BIAS) return *axis = bias_axis, 1;
    if (in < 0 || in == CSA_IN_TOTAL_SEQ) return 0;
    return *axis = input_rank[in] >= 2 ? 1 : 0, 1;
  case CSA_CONTRACT_EMPTY_QUERY: return *axis = 1, in == CSA_IN_QUERY;
  case CSA_CONTRACT_SHAPE:
    if (in < 0 || in >= CSA_IN_BIAS || shape_axis[in] < 0) return 0;
    return *axis = shape_axis[in], 1;
  case CSA_CONTRACT_BIAS_DTYPE:
  case CSA_CONTRACT_BIAS_RANK: return in == CSA_IN_BIAS;
  case CSA_CONTRACT_BIAS_BROADCAST: return *axis = 0, in == CSA_IN_BIAS;
  case CSA_CONTRACT_BIAS_CANDIDATES: return *axis = bias_axis, in == CSA_IN_BIAS;
  case CSA_CONTRACT_OUTPUT_DTYPE: return o >= 0 && o < outputs;
  case CSA_CONTRACT_OUTPUT_SHAPE: return *axis = o >= 0 ? output_shape_axis[o] : -1, o >= 0 && o < outputs;
  case CSA_CONTRACT_TOTAL_NEGATIVE:
  case CSA_CONTRACT_TOTAL_SHORT: return in == CSA_IN_TOTAL_SEQ;
  case CSA_CONTRACT_PAST_CAPACITY: return *axis = 1, in == CSA_IN_PAST_COMPRESSED_KV || in == CSA_IN_PAST_INDEX_KEY;
  case CSA_CONTRACT_PRESENT_CAPACITY:
    return *axis = 1, o == CSA_OUT_PRESENT_COMPRESSED_KV || o == CSA_OUT_PRESENT_INDEX_KEY;
  default: return 0;
  }
}

int csa4_contract_site(const csa4_case *c, int *axis) {
  int ax;
  if (!csa_case_contract_applies(c->contract, CSA4_RATIO) ||
      !site_axis(c->contract, c->contract_site, c->outputs, c->bias_rank, &ax))
    return -1;
  if (axis) *axis = ax;
  return 0;
}

int cases_csa4_contract_sites(int code, int outputs, int has_bias, int sites[CSA4_SITES_MAX]) {
  int n = 0, s, ax;
  if (!csa_case_contract_applies(code, CSA4_RATIO)) return 0;
  if (site_axis(code, -1, outputs, 1, &ax)) sites[n++] = -1;
  for (s = 0; s < CSA_INPUT_COUNT; s++)
    if ((s != CSA_IN_BIAS || has_bias) && site_axis(code, s, outputs, 1, &ax)) sites[n++] = s;
  for (s = 0; s < CSA_OUTPUT_MAX; s++)
    if (site_axis(code, 100 + s, outputs, 1, &ax)) sites[n++] = 100 + s;
  return n;
}

/* A dtype the rule does not allow where `dt` is expected: f32 -> f16, u8 -> f32, i32 <-> i64. */
static dtype wrong_dtype(dtype dt) {
  switch (dt) {
  case DTYPE_F32: return DTYPE_F16;
  case DTYPE_U8: return DTYPE_F32; /* a packed cache handed over as floats */
  case DTYPE_I32: return DTYPE_I64;
  default: return DTYPE_I32;
  }
}

/* Input t's rank broken: rank 4 loses its last axis, lower ranks gain a trailing axis of 1. */
static void break_rank(tensor *t) {
  if (t->rank == 4)
    t->rank = 3;
  else
    t->shape[t->rank++] = 1;
}

/* The variant (0..n-1) of an attribute mutation: the seed's choice. */
static int variant(const csa4_case *c, int n) { return (int)(c->seed % (unsigned long long)n); }

static void mutate_attrs(const csa4_case *c, csa4_plan *p) {
  static const char *const ratio4_formats[] = {"f32", NULL, "fp4_e2m1_block32"};
  static const long long ratios[] = {64, 0, 5};
  csa_attrs *a = &p->attrs;
  switch (c->contract) {
  case CSA_CONTRACT_RATIO: a->compression_ratio = ratios[variant(c, 3)]; break;
  case CSA_CONTRACT_CACHE_FORMAT: a->cache_format = variant(c, 2) ? "" : "fp8_e5m2"; break;
  case CSA_CONTRACT_NUM_HEADS: a->num_heads = variant(c, 2) ? -1 : 0; break;
  case CSA_CONTRACT_SCALE:
    a->has_scale = 1;
    a->scale = variant(c, 3) == 0 ? nx_f32_nan() : nx_f32_from_bits(variant(c, 3) == 1 ? 0x7f800000u : 0xff800000u);
    break;
  case CSA_CONTRACT_ARITY_INPUTS: p->n_in = variant(c, 2) ? CSA_IN_HEAD_SINK + 1 : CSA_IN_INDEX_LAST; break;
  case CSA_CONTRACT_ARITY_OUTPUTS: p->n_out = variant(c, 2) ? CSA128_OUTPUT_COUNT : CSA_OUT_PRESENT_INDEX_CARRY; break;
  case CSA_CONTRACT_INDEX_HEAD_DIM: a->index_head_dim = variant(c, 2) ? 0 : 64; break;
  case CSA_CONTRACT_RATIO4_FORMAT: a->cache_format = ratio4_formats[variant(c, 3)]; break;
  case CSA_CONTRACT_HEAD_DIM: a->head_dim = variant(c, 2) ? 0 : 256; break;
  case CSA_CONTRACT_ROPE_DIM: a->qk_rope_head_dim = variant(c, 2) ? 0 : 32; break;
  case CSA_CONTRACT_INDEX_HEADS: a->index_num_heads = variant(c, 2) ? -1 : 0; break;
  case CSA_CONTRACT_TOPK: a->index_topk = variant(c, 2) ? CSA4_TOPK_MAX + 1 : 0; break;
  default: break;
  }
}

/* The mutations with an input site. */
static void mutate_input(const csa4_case *c, csa4_plan *p, int in) {
  tensor *t = &p->in[in];
  long long d4[4];
  int axis = -1;
  site_axis(c->contract, in, c->outputs, c->bias_rank, &axis);
  switch (c->contract) {
  case CSA_CONTRACT_REQUIRED_INPUT:
  case CSA_CONTRACT_INDEX_INPUT: memset(t, 0, sizeof *t); return;
  case CSA_CONTRACT_DTYPE: t->dt = wrong_dtype(t->dt); break;
  case CSA_CONTRACT_RANK: break_rank(t); break;
  case CSA_CONTRACT_NEGATIVE_DIM:
    if (t->rank == 0) t->rank = 1; /* a [] bias becomes [-1] */
    t->shape[axis] = -1;
    return; /* data stays NULL */
  case CSA_CONTRACT_EMPTY_QUERY: t->shape[1] = 0; return;
  case CSA_CONTRACT_SHAPE: t->shape[axis] += 1; break;
  case CSA_CONTRACT_BIAS_DTYPE: t->dt = DTYPE_F16; break;
  case CSA_CONTRACT_BIAS_RANK: csa_case_set_shape(t, DTYPE_F32, -1, 0, 0, 0, 0); break; /* rank 5 does not fit */
  case CSA_CONTRACT_BIAS_BROADCAST:
    csa_case_bias_dims4(c->bias_rank, c->bias_shape, d4);
    csa_case_set_shape(t, DTYPE_F32, 4, c->batch + 1, d4[1], d4[2], d4[3]);
    break;
  case CSA_CONTRACT_BIAS_CANDIDATES:
    if (t->rank == 0) t->rank = 1;
    t->shape[t->rank - 1] = csa4_candidates(c) + 1;
    break;
  case CSA_CONTRACT_TOTAL_NEGATIVE: p->total = -1; return;
  case CSA_CONTRACT_TOTAL_SHORT: p->total = c->prefill - 1; return;
  case CSA_CONTRACT_PAST_CAPACITY: t->shape[1] = c->start / CSA4_RATIO - 1; return;
  default: return;
  }
  p->junk_in[in] = 1;
}

/* The mutations with an output site. */
static void mutate_output(const csa4_case *c, csa4_plan *p, int o) {
  tensor *t = &p->out[o];
  switch (c->contract) {
  case CSA_CONTRACT_OUTPUT_DTYPE: t->dt = wrong_dtype(t->dt); break;
  case CSA_CONTRACT_OUTPUT_SHAPE: t->shape[output_shape_axis[o]] += 1; break;
  case CSA_CONTRACT_PRESENT_CAPACITY: t->shape[1] = p->total / CSA4_RATIO - 1; return;
  default: return;
  }
  p->junk_out[o] = 1;
}

void csa4_plan_mutate(const csa4_case *c, csa4_plan *p) {
  int site = c->contract_site;
  if (c->family != CSA4_FAMILY_CONTRACT) return;
  if (site < 0)
    mutate_attrs(c, p);
  else if (site >= 100)
    mutate_output(c, p, site - 100);
  else
    mutate_input(c, p, site);
}

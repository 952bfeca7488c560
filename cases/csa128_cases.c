/*
** csa128_cases.c: see csa128_cases.h.
**
** In order: names; the spec text (value parsers, the key table, format,
** the consistency rules, parse); the tensors (the plan of one step, the
** csa128.contract mutations, the fills, materialize); the family
** enumerators; the suite.
**
** Random streams.  Every draw names a stream (enum csa_stream), so adding a
** draw to one fill never shifts another's values.
*/
#include "cases/csa128_cases.h"

#include "cases/case_spec.h"
#include "cases/rng.h"
#include "cases/spec_list.h"
#include "cases/spec_text.h"
#include "oracle/numerics/numerics.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum csa_stream {
  CSA_STREAM_QUERY = 0,
  CSA_STREAM_KV,       /* per position: current_kv */
  CSA_STREAM_CKV,      /* per position: compressor_kv */
  CSA_STREAM_GATE,     /* per position: compressor_gate */
  CSA_STREAM_APE,
  CSA_STREAM_NORM,
  CSA_STREAM_PAST,     /* synthetic past records */
  CSA_STREAM_CARRY,    /* synthetic carry */
  CSA_STREAM_SINK,
  CSA_STREAM_BIAS,
  CSA_STREAM_JUNK = 32, /* + input slot (outputs at 32 + 20 + o): mutated tensors' bytes */
  CSA_STREAM_ENUM = 96  /* + family: enumerator draws */
};

#define CSA_DIM_MAX ((1ll << 30) - 1)
#define CSA_START_MAX (1ll << 40)
#define CSA_STEPS_MAX 4096
#define CARRY_FLOATS (CSA128_RATIO * 2 * CSA_HEAD_DIM)

/* ---------------------------------------------------------------- names */

static const char *const family_names[CSA_FAMILY_COUNT] = {"csa128.chain", "csa128.state", "csa128.contract"};

const char *cases_csa_family_name(csa_family f) {
  return (unsigned)f < CSA_FAMILY_COUNT ? family_names[f] : "?";
}

/* Derived sizes. */
static long long case_final_total(const csa_case *c) { return c->start + c->prefill + c->decode; }
static long long step_seq(const csa_case *c, int step) { return step == 0 ? c->prefill : 1; }
static long long step_total(const csa_case *c, int step) { return c->start + c->prefill + step; }
static long long case_width(const csa_case *c) {
  return c->format == CSA_CACHE_FP8 ? CSA_FP8_RECORD_BYTES : CSA_HEAD_DIM;
}
static dtype case_cache_dt(const csa_case *c) { return c->format == CSA_CACHE_FP8 ? DTYPE_U8 : DTYPE_F32; }

/* The bias shape right-aligned into 4 dims (1 where absent). */
static void bias_dims4(const csa_case *c, long long *d4) { csa_case_bias_dims4(c->bias_rank, c->bias_shape, d4); }

/* ---------------------------------------------------- value parsers */

typedef int (*value_parse_fn)(csa_case *c, const char *v);
typedef int (*value_format_fn)(const csa_case *c, char *out, size_t len);

static int vp_family(csa_case *c, const char *v) {
  int f = spec_name_lookup(family_names, CSA_FAMILY_COUNT, v);
  if (f < 0) return -1;
  c->family = (csa_family)f;
  return 0;
}
static int vp_op(csa_case *c, const char *v) { return (void)c, strcmp(v, "CompressedSparseAttention") ? -1 : 0; }
static int vp_ratio(csa_case *c, const char *v) { return (void)c, strcmp(v, "128") ? -1 : 0; }

static int vp_cache(csa_case *c, const char *v) {
  if (!strcmp(v, "f32")) return c->format = CSA_CACHE_F32, 0;
  if (!strcmp(v, "fp8")) return c->format = CSA_CACHE_FP8, 0;
  return -1;
}

#define VP_DIM(name, field, lo, hi)                                                                    \
  static int name(csa_case *c, const char *v) { return spec_parse_ll(v, lo, hi, &c->field); }
VP_DIM(vp_b, batch, 1, CSA_DIM_MAX)
VP_DIM(vp_heads, heads, 1, CSA_DIM_MAX)
VP_DIM(vp_window, window, 1, CSA_DENSE_WINDOW)
VP_DIM(vp_start, start, 0, CSA_START_MAX)
VP_DIM(vp_prefill, prefill, 1, CSA_DIM_MAX)
VP_DIM(vp_decode, decode, 0, CSA_STEPS_MAX - 1)
VP_DIM(vp_cap, capacity, 0, CSA_DIM_MAX)

static int vp_bias(csa_case *c, const char *v) {
  return csa_case_bias_parse(v, CSA_DIM_MAX, &c->bias_rank, c->bias_shape);
}
static int vp_sink(csa_case *c, const char *v) { return csa_case_sink_parse(v, &c->sink); }
static int vp_scale(csa_case *c, const char *v) { return csa_case_scale_parse(v, &c->has_scale, &c->scale); }
static int vp_contract(csa_case *c, const char *v) { return csa_case_contract_parse(v, &c->contract); }

static int vp_seed(csa_case *c, const char *v) { return spec_parse_u64(v, &c->seed); }

static int vf_family(const csa_case *c, char *o, size_t n) { return csa_case_put(o, n, "%s", family_names[c->family]); }
static int vf_op(const csa_case *c, char *o, size_t n) {
  return (void)c, csa_case_put(o, n, "CompressedSparseAttention");
}
static int vf_ratio(const csa_case *c, char *o, size_t n) { return (void)c, csa_case_put(o, n, "128"); }
static int vf_cache(const csa_case *c, char *o, size_t n) {
  return csa_case_put(o, n, c->format == CSA_CACHE_FP8 ? "fp8" : "f32");
}
#define VF_DIM(name, field)                                                                                            \
  static int name(const csa_case *c, char *o, size_t n) { return csa_case_put(o, n, "%lld", c->field); }
VF_DIM(vf_b, batch)
VF_DIM(vf_heads, heads)
VF_DIM(vf_window, window)
VF_DIM(vf_start, start)
VF_DIM(vf_prefill, prefill)
VF_DIM(vf_decode, decode)
VF_DIM(vf_cap, capacity)

static int vf_bias(const csa_case *c, char *o, size_t n) {
  return csa_case_bias_format(c->bias_rank, c->bias_shape, o, n);
}
static int vf_sink(const csa_case *c, char *o, size_t n) {
  return csa_case_put(o, n, "%s", csa_case_sink_name(c->sink));
}
static int vf_scale(const csa_case *c, char *o, size_t n) {
  return csa_case_scale_format(c->has_scale, c->scale, o, n);
}
static int vf_contract(const csa_case *c, char *o, size_t n) {
  return csa_case_put(o, n, "%s", csa_contract_name(c->contract));
}
static int vf_seed(const csa_case *c, char *o, size_t n) { return csa_case_put(o, n, "%llu", c->seed); }

/* ------------------------------------------------------ the key table */

#define F(x) (1u << (x))
#define F_ALL (F(CSA_FAMILY_COUNT) - 1u)
static const struct csa_key {
  const char *name;
  unsigned families; /* the families whose specs carry it */
  value_parse_fn parse;
  value_format_fn format;
} spec_keys[] = {
    {"family", F_ALL, vp_family, vf_family},
    {"op", F_ALL, vp_op, vf_op},
    {"ratio", F_ALL, vp_ratio, vf_ratio},
    {"cache", F_ALL, vp_cache, vf_cache},
    {"b", F_ALL, vp_b, vf_b},
    {"heads", F_ALL, vp_heads, vf_heads},
    {"window", F_ALL, vp_window, vf_window},
    {"start", F_ALL, vp_start, vf_start},
    {"prefill", F_ALL, vp_prefill, vf_prefill},
    {"decode", F_ALL, vp_decode, vf_decode},
    {"cap", F_ALL, vp_cap, vf_cap},
    {"bias", F_ALL, vp_bias, vf_bias},
    {"sink", F_ALL, vp_sink, vf_sink},
    {"scale", F_ALL, vp_scale, vf_scale},
    {"contract", F(CSA_FAMILY_CONTRACT), vp_contract, vf_contract},
    {"seed", F_ALL, vp_seed, vf_seed},
};
#define KEY_COUNT ((int)(sizeof spec_keys / sizeof spec_keys[0]))

/* The grammar's view of this family's key table (cases/spec_text.h). */
static const char *grammar_key_name(int k) { return spec_keys[k].name; }
static int grammar_key_allowed(const void *c, int k) {
  return (spec_keys[k].families & F(((const csa_case *)c)->family)) != 0;
}
static int grammar_parse_key(void *c, int k, const char *v) { return spec_keys[k].parse((csa_case *)c, v); }
static int grammar_parse_family(void *c, const char *v) { return vp_family((csa_case *)c, v); }
static const char *grammar_family_name(const void *c) { return family_names[((const csa_case *)c)->family]; }
static int grammar_format_key(const void *c, int k, char *o, size_t n) {
  return spec_keys[k].format((const csa_case *)c, o, n);
}

static const spec_grammar grammar = {KEY_COUNT,         CSA_CASE_SPEC_MAX,    grammar_key_name,    grammar_key_allowed,
                                     grammar_parse_key, grammar_parse_family, grammar_family_name, grammar_format_key,
                                     NULL /* no optional keys */};

int cases_csa_format(const csa_case *c, char *spec, size_t len) {
  if ((unsigned)c->family >= CSA_FAMILY_COUNT) return -1;
  return spec_format_tokens(&grammar, c, spec, len);
}

int cases_csa_id(const csa_case *c, char *id, size_t len) {
  char spec[CSA_CASE_SPEC_MAX];
  return cases_csa_format(c, spec, sizeof spec) ? -1 : case_id_from_spec(spec, id, len);
}

int cases_csa_steps(const csa_case *c) { return (int)c->decode + 1; }

int cases_csa_expected(const csa_case *c, int *code) {
  int reject = c->family == CSA_FAMILY_CONTRACT;
  if (code) *code = reject ? c->contract : CSA_CONTRACT_NONE;
  return reject;
}

/* ------------------------------------------------ consistency rules */

/* Does the bias broadcast to [B, heads, S, 128 + cap] at a step of length S? */
static int bias_fits(const csa_case *c, long long seq) {
  long long target[4] = {c->batch, c->heads, seq, CSA_DENSE_WINDOW + c->capacity}, d4[4];
  int i;
  bias_dims4(c, d4);
  for (i = 0; i < 4; i++)
    if (d4[i] != 1 && d4[i] != target[i]) return 0;
  return 1;
}

static int check_contract(const csa_case *c, char *err, size_t len) {
  if (!csa_case_contract_applies(c->contract, CSA128_RATIO))
    return spec_inconsistent(&grammar, c, "contract", err, len, "applies to ratio 4 only");
  switch (c->contract) {
  case CSA_CONTRACT_BIAS_DTYPE:
  case CSA_CONTRACT_BIAS_RANK:
  case CSA_CONTRACT_BIAS_BROADCAST:
  case CSA_CONTRACT_BIAS_CANDIDATES:
    return c->bias_rank < 0 ? spec_inconsistent(&grammar, c, "contract", err, len, "needs a bias") : 0;
  case CSA_CONTRACT_PAST_CAPACITY:
    return c->start < CSA128_RATIO
               ? spec_inconsistent(&grammar, c, "contract", err, len, "needs start >= 128 (a past record)")
               : 0;
  case CSA_CONTRACT_PRESENT_CAPACITY:
    return c->start + c->prefill < CSA128_RATIO
               ? spec_inconsistent(&grammar, c, "contract", err, len, "needs start + prefill >= 128 (a record to hold)")
               : 0;
  default: return 0;
  }
}

/* The rules a spec must meet beyond each value's own syntax. */
static int check_case(const csa_case *c, char *err, size_t len) {
  long long final_total = case_final_total(c);
  if (c->family == CSA_FAMILY_CHAIN && c->start != 0)
    return spec_inconsistent(&grammar, c, "start", err, len, "csa128.chain starts a fresh sequence (start=0)");
  if (c->family == CSA_FAMILY_STATE && c->start == 0)
    return spec_inconsistent(&grammar, c, "start", err, len, "csa128.state starts from a synthetic state (start > 0)");
  if (c->family == CSA_FAMILY_CONTRACT && c->decode != 0)
    return spec_inconsistent(&grammar, c, "decode", err, len, "csa128.contract is one step (decode=0)");
  if (final_total > CSA_START_MAX)
    return spec_inconsistent(&grammar, c, "start", err, len, "the final total is above 2^40");
  if (c->capacity < final_total / CSA128_RATIO)
    return spec_inconsistent(&grammar, c, "cap", err, len, "holds fewer than the %lld records of the final total %lld",
                             final_total / CSA128_RATIO, final_total);
  if (c->bias_rank >= 0 && (!bias_fits(c, c->prefill) || (c->decode && !bias_fits(c, 1))))
    return spec_inconsistent(&grammar, c, "bias", err, len, "does not broadcast to [%lld, %lld, S, %lld] at every step",
                             c->batch, c->heads, CSA_DENSE_WINDOW + c->capacity);
  return c->family == CSA_FAMILY_CONTRACT ? check_contract(c, err, len) : 0;
}

/* ------------------------------------------------------------- parse */

int cases_csa_parse(const char *spec, csa_case *c, char *err, size_t err_len) {
  memset(c, 0, sizeof *c);
  c->bias_rank = -1;
  if (spec_parse_tokens(&grammar, spec, c, err, err_len)) return -1;
  return check_case(c, err, err_len);
}

/* ------------------------------------------------------------ the plan */

/* One step's tensors before allocation, and what the operator is told. */
typedef struct csa_plan {
  tensor in[CSA_INPUT_COUNT];
  tensor out[CSA_OUTPUT_COUNT];
  unsigned char junk_in[CSA_INPUT_COUNT], junk_out[CSA_OUTPUT_COUNT]; /* mutated: junk bytes */
  int n_in, n_out;
  long long total; /* the value input 9 holds */
  csa_attrs attrs;
} csa_plan;

/* The valid step the spec's tokens describe. */
static void plan_build(const csa_case *c, int step, csa_plan *p) {
  long long B = c->batch, S = step_seq(c, step), H = c->heads, total = step_total(c, step);
  long long L = c->window < total ? c->window : total, W = case_width(c), R = c->capacity;
  memset(p, 0, sizeof *p);
  csa_case_set_shape(&p->in[CSA_IN_QUERY], DTYPE_F32, 4, B, S, H, CSA_HEAD_DIM);
  csa_case_set_shape(&p->in[CSA_IN_CURRENT_KV], DTYPE_F32, 3, B, L, CSA_HEAD_DIM, 0);
  csa_case_set_shape(&p->in[CSA_IN_COMPRESSOR_KV], DTYPE_F32, 3, B, S, CSA_HEAD_DIM, 0);
  csa_case_set_shape(&p->in[CSA_IN_COMPRESSOR_GATE], DTYPE_F32, 3, B, S, CSA_HEAD_DIM, 0);
  csa_case_set_shape(&p->in[CSA_IN_COMPRESSOR_APE], DTYPE_F32, 2, CSA128_RATIO, CSA_HEAD_DIM, 0, 0);
  csa_case_set_shape(&p->in[CSA_IN_COMPRESSOR_NORM], DTYPE_F32, 1, CSA_HEAD_DIM, 0, 0, 0);
  csa_case_set_shape(&p->in[CSA_IN_PAST_COMPRESSED_KV], case_cache_dt(c), 3, B, R, W, 0);
  csa_case_set_shape(&p->in[CSA_IN_PAST_CARRY], DTYPE_F32, 4, B, CSA128_RATIO, 2, CSA_HEAD_DIM);
  csa_case_set_shape(&p->in[CSA_IN_SEQLENS_K], DTYPE_I32, 1, B, 0, 0, 0);
  csa_case_set_shape(&p->in[CSA_IN_TOTAL_SEQ], DTYPE_I64, 0, 0, 0, 0, 0);
  csa_case_set_shape(&p->in[CSA_IN_HEAD_SINK], DTYPE_F32, 1, H, 0, 0, 0);
  p->n_in = CSA_IN_HEAD_SINK + 1;
  if (c->bias_rank >= 0) {
    csa_case_set_shape(&p->in[CSA_IN_BIAS], DTYPE_F32, c->bias_rank, c->bias_shape[0], c->bias_shape[1],
                       c->bias_shape[2], c->bias_shape[3]);
    p->n_in = CSA_INPUT_COUNT;
  }
  csa_case_set_shape(&p->out[CSA_OUT_Y], DTYPE_F32, 4, B, S, H, CSA_HEAD_DIM);
  csa_case_set_shape(&p->out[CSA_OUT_PRESENT_COMPRESSED_KV], case_cache_dt(c), 3, B, R, W, 0);
  csa_case_set_shape(&p->out[CSA_OUT_PRESENT_CARRY], DTYPE_F32, 4, B, CSA128_RATIO, 2, CSA_HEAD_DIM);
  p->n_out = CSA_OUTPUT_COUNT;
  p->total = total;
  p->attrs.compression_ratio = CSA128_RATIO;
  p->attrs.cache_format = c->format == CSA_CACHE_FP8 ? "fp8_e4m3_block64" : "f32";
  p->attrs.num_heads = H;
  p->attrs.head_dim = CSA_HEAD_DIM;
  p->attrs.qk_rope_head_dim = CSA_ROPE_DIM;
  p->attrs.has_scale = c->has_scale;
  p->attrs.scale = c->scale;
}

/*
** csa128.contract: the one change that makes the checks (oracle/csa.h's
** order) stop at c->contract, every earlier check still passing.
*/
static void plan_mutate(const csa_case *c, csa_plan *p) {
  tensor *bias = &p->in[CSA_IN_BIAS];
  long long d4[4];
  switch (c->contract) {
  case CSA_CONTRACT_RATIO: p->attrs.compression_ratio = 64; break;
  case CSA_CONTRACT_CACHE_FORMAT: p->attrs.cache_format = "fp8_e5m2"; break;
  case CSA_CONTRACT_NUM_HEADS: p->attrs.num_heads = 0; break;
  case CSA_CONTRACT_SCALE: p->attrs.has_scale = 1, p->attrs.scale = nx_f32_nan(); break;
  case CSA_CONTRACT_ARITY_INPUTS: p->n_in = CSA_IN_HEAD_SINK; break; /* 10: head_sink dropped */
  case CSA_CONTRACT_REQUIRED_INPUT: /* seqlens_k: required, though never read */
    memset(&p->in[CSA_IN_SEQLENS_K], 0, sizeof(tensor));
    break;
  case CSA_CONTRACT_RATIO4_INPUT: /* index_query present, shaped as the ratio-4 path would */
    csa_case_set_shape(&p->in[CSA_IN_INDEX_FIRST], DTYPE_F32, 4, c->batch, c->prefill, 1, CSA128_RATIO);
    p->junk_in[CSA_IN_INDEX_FIRST] = 1;
    p->n_in = CSA_INPUT_COUNT;
    break;
  case CSA_CONTRACT_ARITY_OUTPUTS: p->n_out = 2; break;
  case CSA_CONTRACT_FP4_FORMAT: p->attrs.cache_format = "fp4_e2m1_block32"; break;
  case CSA_CONTRACT_HEAD_DIM: p->attrs.head_dim = 256; break;
  case CSA_CONTRACT_ROPE_DIM: p->attrs.qk_rope_head_dim = 0; break; /* absent */
  case CSA_CONTRACT_DTYPE:
    p->in[CSA_IN_SEQLENS_K].dt = DTYPE_I64;
    p->junk_in[CSA_IN_SEQLENS_K] = 1;
    break;
  case CSA_CONTRACT_RANK:
    csa_case_set_shape(&p->in[CSA_IN_HEAD_SINK], DTYPE_F32, 2, 1, c->heads, 0, 0);
    p->junk_in[CSA_IN_HEAD_SINK] = 1;
    break;
  case CSA_CONTRACT_NEGATIVE_DIM: p->in[CSA_IN_CURRENT_KV].shape[1] = -1; break;
  case CSA_CONTRACT_EMPTY_QUERY: p->in[CSA_IN_QUERY].shape[1] = 0; break;
  case CSA_CONTRACT_SHAPE:
    p->in[CSA_IN_COMPRESSOR_APE].shape[0] = CSA128_RATIO - 1;
    p->junk_in[CSA_IN_COMPRESSOR_APE] = 1;
    break;
  case CSA_CONTRACT_BIAS_DTYPE:
    bias->dt = DTYPE_F16;
    p->junk_in[CSA_IN_BIAS] = 1;
    break;
  case CSA_CONTRACT_BIAS_RANK: /* rank 5 does not fit a tensor; -1 breaks the same rule */
    csa_case_set_shape(bias, DTYPE_F32, -1, 0, 0, 0, 0);
    p->junk_in[CSA_IN_BIAS] = 1;
    break;
  case CSA_CONTRACT_BIAS_BROADCAST:
    bias_dims4(c, d4);
    csa_case_set_shape(bias, DTYPE_F32, 4, c->batch + 1, d4[1], d4[2], d4[3]);
    p->junk_in[CSA_IN_BIAS] = 1;
    break;
  case CSA_CONTRACT_OUTPUT_DTYPE:
    p->out[CSA_OUT_Y].dt = DTYPE_F16;
    p->junk_out[CSA_OUT_Y] = 1;
    break;
  case CSA_CONTRACT_OUTPUT_SHAPE: p->out[CSA_OUT_Y].shape[3] = CSA_HEAD_DIM / 2; break;
  case CSA_CONTRACT_BIAS_CANDIDATES:
    if (bias->rank == 0) bias->rank = 1;
    bias->shape[bias->rank - 1] = CSA_DENSE_WINDOW + c->capacity + 1;
    p->junk_in[CSA_IN_BIAS] = 1;
    break;
  case CSA_CONTRACT_TOTAL_NEGATIVE: p->total = -1; break;
  case CSA_CONTRACT_TOTAL_SHORT: p->total = c->prefill - 1; break;
  case CSA_CONTRACT_PAST_CAPACITY:
    p->in[CSA_IN_PAST_COMPRESSED_KV].shape[1] = c->start / CSA128_RATIO - 1;
    break;
  case CSA_CONTRACT_PRESENT_CAPACITY: /* the bias's candidate axis follows the capacity */
    p->out[CSA_OUT_PRESENT_COMPRESSED_KV].shape[1] = p->total / CSA128_RATIO - 1;
    if (bias->dt != DTYPE_NONE && bias->rank > 0 && bias->shape[bias->rank - 1] != 1)
      bias->shape[bias->rank - 1] = CSA_DENSE_WINDOW + p->total / CSA128_RATIO - 1;
    break;
  default: break;
  }
}

/* Bytes the plan's tensors take (a negative dim counts nothing); -1 on overflow. */
static int plan_bytes(const csa_plan *p, unsigned long long *total) {
  unsigned long long in, out;
  if (csa_case_bytes(p->in, CSA_INPUT_COUNT, &in) || csa_case_bytes(p->out, CSA_OUTPUT_COUNT, &out) ||
      in > ULLONG_MAX - out)
    return -1;
  *total = in + out;
  return 0;
}

/* ----------------------------------------------------------- the fills */

static uint64_t bits_at(const csa_case *c, uint32_t stream, uint32_t step, uint64_t i) {
  return cases_rng_u64(c->seed, stream, step, i);
}

/*
** A synthetic record k of batch b, written as the oracle writes one
** (csa128.c record_write): FP8 blocks plus the bf16 tail, or that record
** dequantized.
*/
static void past_record(const csa_case *c, long long b, long long k, unsigned char *dst) {
  float rec[CSA_HEAD_DIM];
  nx_u8 block[NX_FP8_BLOCK_BYTES];
  uint64_t base = ((uint64_t)k * (uint64_t)c->batch + (uint64_t)b) * CSA_HEAD_DIM;
  int d, blk;
  for (d = 0; d < CSA_HEAD_DIM; d++) rec[d] = cases_rng_normalish(bits_at(c, CSA_STREAM_PAST, 0, base + (uint64_t)d));
  for (d = CSA_NOPE_DIM; d < CSA_HEAD_DIM; d++) rec[d] = nx_bf16_round(rec[d]);
  if (c->format == CSA_CACHE_FP8) {
    for (blk = 0; blk < CSA_FP8_BLOCKS; blk++) nx_fp8_block64_quantize(rec + blk * NX_FP8_BLOCK, dst + blk * NX_FP8_BLOCK_BYTES);
    for (d = 0; d < CSA_ROPE_DIM; d++) {
      nx_u16 h = nx_bf16_round_bits(rec[CSA_NOPE_DIM + d]);
      dst[455 + 2 * d] = (unsigned char)(h & 0xffu);
      dst[456 + 2 * d] = (unsigned char)(h >> 8);
    }
    return;
  }
  for (blk = 0; blk < CSA_FP8_BLOCKS; blk++) {
    nx_fp8_block64_quantize(rec + blk * NX_FP8_BLOCK, block);
    nx_fp8_block64_dequantize(block, rec + blk * NX_FP8_BLOCK);
  }
  memcpy(dst, rec, sizeof rec);
}

/* Step 0's past cache: start / 128 synthetic records (no more than fit), zero bytes after. */
static void fill_past_cache(const csa_case *c, tensor *t) {
  long long R = t->shape[1], records = c->start / CSA128_RATIO, b, k;
  size_t rb = (size_t)t->shape[2] * dtype_size(t->dt);
  if (records > R) records = R; /* a past_capacity case's shortened cache */
  for (b = 0; b < t->shape[0]; b++)
    for (k = 0; k < records; k++) past_record(c, b, k, (unsigned char *)t->data + (size_t)(b * R + k) * rb);
}

/* Step 0's carry: slots below start % 128 filled, the rest (+0, -inf) as a reset leaves them. */
static void fill_past_carry(const csa_case *c, tensor *t) {
  long long b, used = c->start % CSA128_RATIO;
  int j, d;
  for (b = 0; b < t->shape[0]; b++) {
    float *row = (float *)t->data + b * CARRY_FLOATS;
    for (j = 0; j < CSA128_RATIO; j++)
      for (d = 0; d < CSA_HEAD_DIM; d++) {
        uint64_t i = (((uint64_t)b * CSA128_RATIO + (uint64_t)j) * 2) * CSA_HEAD_DIM + (uint64_t)d;
        float *kv = row + (2 * j) * CSA_HEAD_DIM + d, *score = row + (2 * j + 1) * CSA_HEAD_DIM + d;
        *kv = j < used ? cases_rng_normalish(bits_at(c, CSA_STREAM_CARRY, 0, i)) : 0.0f;
        *score = j < used ? cases_rng_normalish(bits_at(c, CSA_STREAM_CARRY, 0, i + CSA_HEAD_DIM)) : csa_case_neg_inf();
      }
  }
}

static void fill_inputs(const csa_case *c, int step, const csa_plan *p, tensor *in) {
  long long total = step_total(c, step), b;
  int slot;
  for (slot = 0; slot < CSA_INPUT_COUNT; slot++) {
    tensor *t = &in[slot];
    if (!t->data) continue;
    if (p->junk_in[slot]) {
      csa_case_fill_junk(c->seed, t, CSA_STREAM_JUNK + (uint32_t)slot, step);
      continue;
    }
    switch (slot) {
    case CSA_IN_QUERY: csa_case_fill_normalish(c->seed, t, CSA_STREAM_QUERY, (uint32_t)step, 1.0f); break;
    case CSA_IN_CURRENT_KV: csa_case_fill_positions(c->seed, t, CSA_STREAM_KV, total - t->shape[1], 1.0f); break;
    case CSA_IN_COMPRESSOR_KV: csa_case_fill_positions(c->seed, t, CSA_STREAM_CKV, total - t->shape[1], 1.0f); break;
    case CSA_IN_COMPRESSOR_GATE: csa_case_fill_positions(c->seed, t, CSA_STREAM_GATE, total - t->shape[1], 1.0f); break;
    case CSA_IN_COMPRESSOR_APE: csa_case_fill_normalish(c->seed, t, CSA_STREAM_APE, 0, 0.5f); break;
    case CSA_IN_COMPRESSOR_NORM: csa_case_fill_uniform(c->seed, t, CSA_STREAM_NORM, 0.5f, 1.5f); break;
    case CSA_IN_PAST_COMPRESSED_KV: fill_past_cache(c, t); break;
    case CSA_IN_PAST_CARRY: fill_past_carry(c, t); break;
    case CSA_IN_SEQLENS_K: /* not read by ratio 128; the total, saturated to i32 */
      for (b = 0; b < t->shape[0]; b++) ((int32_t *)t->data)[b] = total > INT32_MAX ? INT32_MAX : (int32_t)total;
      break;
    case CSA_IN_TOTAL_SEQ: ((int64_t *)t->data)[0] = p->total; break;
    case CSA_IN_HEAD_SINK: csa_case_fill_sink(c->seed, t, c->sink, CSA_STREAM_SINK); break;
    case CSA_IN_BIAS: csa_case_fill_normalish(c->seed, t, CSA_STREAM_BIAS, (uint32_t)step, 1.0f); break;
    default: break;
    }
  }
}

/* ------------------------------------------------------ materialize */

void cases_csa_release(tensor inputs[CSA_INPUT_COUNT], tensor outputs[CSA_OUTPUT_COUNT]) {
  int i;
  for (i = 0; i < CSA_INPUT_COUNT; i++) tensor_free(&inputs[i]);
  for (i = 0; i < CSA_OUTPUT_COUNT; i++) tensor_free(&outputs[i]);
}

int cases_csa_materialize(const csa_case *c, int step, tensor inputs[CSA_INPUT_COUNT], int *n_inputs,
                          tensor outputs[CSA_OUTPUT_COUNT], int *n_outputs, csa_attrs *attrs, char *err,
                          size_t err_len) {
  size_t budget = c->budget_bytes ? c->budget_bytes : CASES_CSA_BUDGET_DEFAULT;
  unsigned char threaded[CSA_INPUT_COUNT] = {0};
  unsigned long long need;
  csa_plan p;
  memset(inputs, 0, CSA_INPUT_COUNT * sizeof(tensor));
  memset(outputs, 0, CSA_OUTPUT_COUNT * sizeof(tensor));
  *n_inputs = *n_outputs = 0;
  if (step < 0 || step >= cases_csa_steps(c))
    return spec_set_err(err, err_len, "step %d is outside the case's %d steps", step, cases_csa_steps(c)), -1;
  plan_build(c, step, &p);
  plan_mutate(c, &p);
  if (plan_bytes(&p, &need))
    return spec_set_err(err, err_len, "case needs more than %llu bytes, over the budget of %zu", ULLONG_MAX, budget), -1;
  if (need > budget) return spec_set_err(err, err_len, "case needs %llu bytes, over the budget of %zu", need, budget), -1;
  memcpy(inputs, p.in, sizeof p.in);
  memcpy(outputs, p.out, sizeof p.out);
  if (step > 0) threaded[CSA_IN_PAST_COMPRESSED_KV] = threaded[CSA_IN_PAST_CARRY] = 1; /* the harness's */
  if (csa_case_alloc(inputs, CSA_INPUT_COUNT, threaded, err, err_len) ||
      csa_case_alloc(outputs, CSA_OUTPUT_COUNT, NULL, err, err_len)) {
    cases_csa_release(inputs, outputs);
    return -1;
  }
  fill_inputs(c, step, &p, inputs);
  if (p.junk_out[CSA_OUT_Y] && outputs[CSA_OUT_Y].data)
    csa_case_fill_junk(c->seed, &outputs[CSA_OUT_Y], CSA_STREAM_JUNK + 20, step);
  *n_inputs = p.n_in, *n_outputs = p.n_out, *attrs = p.attrs;
  return 0;
}

/* -------------------------------------------------------- enumerators */

/*
** Case number i picks its combination as i modulo the family's combos, and
** the cursor r draws the rest.  Sizes follow the oracle's cost: a row
** attends to up to 128 + records candidates at ~512 nx_expf each, so
** long prefills and the 2^20 cursors keep b * heads at 1 or 2.
*/

/* Capacity: exactly full half the time, else 1..3 spare rows. */
static void gen_capacity(csa_case *c, cases_rng *r) {
  c->capacity = case_final_total(c) / CSA128_RATIO + (csa_case_coin(r, 50) ? 0 : cases_rng_next_range(r, 1, 3));
}

/* Bias shapes by kind k (csa_case_gen_bias), the candidate axis 128 + cap. */
#define BIAS_KINDS CSA_CASE_BIAS_KINDS
static void gen_bias(csa_case *c, cases_rng *r, int k) {
  csa_case_gen_bias(r, k, c->batch, c->heads, c->prefill, c->decode, CSA_DENSE_WINDOW + c->capacity, &c->bias_rank,
                    c->bias_shape);
}
static void gen_scale(csa_case *c, cases_rng *r) { csa_case_gen_scale(r, &c->has_scale, &c->scale); }

/*
** csa128.chain: 28 boundary combinations (prefill 1, 127, 128, 129, 255,
** 256, 300 x short or long decode x cache format), then 72 small chains
** (prefill 1..40, decode 0..6, b <= 3, heads <= 4).  Long decodes run 130
** to 140 steps, so a block completes mid-chain whatever the prefill.
*/
#define CHAIN_BOUNDARY 28
#define CHAIN_COMBOS 100
static void gen_chain(csa_case *c, cases_rng *r, long long i) {
  static const long long prefills[] = {1, 127, 128, 129, 255, 256, 300};
  long long j = i % CHAIN_COMBOS;
  c->start = 0;
  if (j < CHAIN_BOUNDARY) {
    c->prefill = prefills[j % 7];
    c->decode = j / 7 % 2 ? cases_rng_next_range(r, 130, 140) : cases_rng_next_range(r, 0, 4);
    c->format = j / 14 ? CSA_CACHE_FP8 : CSA_CACHE_F32;
    c->batch = c->prefill <= 129 && csa_case_coin(r, 40) ? 2 : 1;
    c->heads = c->batch == 1 && c->prefill <= 129 && csa_case_coin(r, 40) ? 2 : 1;
  } else {
    c->prefill = cases_rng_next_range(r, 1, 40);
    c->decode = cases_rng_next_range(r, 0, 6);
    c->format = j % 2 ? CSA_CACHE_FP8 : CSA_CACHE_F32;
    c->batch = cases_rng_next_range(r, 1, 3);
    c->heads = cases_rng_next_range(r, 1, c->batch == 3 ? 2 : 4);
  }
  c->window = csa_case_gen_window(r);
  gen_capacity(c, r);
  gen_bias(c, r, (int)(i % BIAS_KINDS));
  c->sink = (csa_sink)(i / 3 % CSA_SINK_COUNT);
  gen_scale(c, r);
}

/*
** csa128.state: 8 starts x 2 formats.  The starts put the cursor just
** before 2^16 and 2^20 - 1 (a block completes in step 0 or 1), on a block
** boundary (a carry of nothing but reset slots), across a boundary inside
** a multi-token step 0, and at small positions.
*/
#define STATE_COMBOS 16
static void gen_state(csa_case *c, cases_rng *r, long long i) {
  static const long long starts[] = {65535, 1048574, 65536, 1048448, 65530, 1048500, 300, 8191};
  long long j = i % STATE_COMBOS;
  int far;
  c->start = starts[j % 8];
  far = c->start > (1ll << 19);
  c->format = j / 8 ? CSA_CACHE_FP8 : CSA_CACHE_F32;
  c->prefill = c->start == 65530 ? cases_rng_next_range(r, 6, 9) : far ? 1 : cases_rng_next_range(r, 1, 3);
  c->decode = far ? cases_rng_next_range(r, 1, 2) : cases_rng_next_range(r, 2, 4);
  c->batch = !far && csa_case_coin(r, 50) ? 2 : 1;
  c->heads = far ? (csa_case_coin(r, 30) ? 2 : 1) : cases_rng_next_range(r, 1, 2);
  c->window = csa_case_gen_window(r);
  gen_capacity(c, r);
  gen_bias(c, r, (int)(i % BIAS_KINDS));
  c->sink = (csa_sink)(i % CSA_SINK_COUNT);
  gen_scale(c, r);
}

/*
** csa128.chain, nightly: 12 combinations.  4 long chains (prefill 1, 128,
** 255, 300 x 256..299 decode steps: two or three blocks complete on the
** way), then 8 wide ones (b 4..8, heads 2..4, prefill 1..300, 2..12 decode
** steps), each cache format in turn.
*/
#define CHAIN_NIGHTLY_COMBOS 12
static void gen_chain_nightly(csa_case *c, cases_rng *r, long long i) {
  static const long long long_prefills[] = {1, 128, 255, 300};
  long long j = i % CHAIN_NIGHTLY_COMBOS;
  c->start = 0;
  c->format = (j + i / CHAIN_NIGHTLY_COMBOS) % 2 ? CSA_CACHE_FP8 : CSA_CACHE_F32;
  if (j < 4) {
    c->prefill = long_prefills[j];
    c->decode = cases_rng_next_range(r, 256, 299);
    c->batch = cases_rng_next_range(r, 1, 2);
    c->heads = cases_rng_next_range(r, 1, 2);
  } else {
    c->prefill = cases_rng_next_range(r, 1, 300);
    c->decode = cases_rng_next_range(r, 2, 12);
    c->batch = cases_rng_next_range(r, 4, 8);
    c->heads = cases_rng_next_range(r, 2, 4);
  }
  c->window = csa_case_gen_window(r);
  gen_capacity(c, r);
  gen_bias(c, r, (int)(i % BIAS_KINDS));
  c->sink = (csa_sink)(i / 3 % CSA_SINK_COUNT);
  gen_scale(c, r);
}

/*
** csa128.state, nightly: 8 starts x 2 formats, further out and wider than
** the gate's: block boundaries at 2^17, 2^18 and 2^19, just before 2^18
** and 2^20 - 128, across a boundary inside a multi-token step 0 near 2^19,
** and mid-block near 2^18 and 2^20; b up to 4, heads up to 4, 2..4 decode
** steps.
*/
static void gen_state_nightly(csa_case *c, cases_rng *r, long long i) {
  static const long long starts[] = {131072, 262144, 524288, 262143, 1048447, 524283, 262200, 1000000};
  long long j = i % STATE_COMBOS;
  c->start = starts[j % 8];
  c->format = j / 8 ? CSA_CACHE_FP8 : CSA_CACHE_F32;
  c->prefill = c->start == 524283 ? cases_rng_next_range(r, 6, 9) : cases_rng_next_range(r, 1, 3);
  c->decode = cases_rng_next_range(r, 2, 4);
  c->batch = cases_rng_next_range(r, 1, 4);
  c->heads = cases_rng_next_range(r, 1, c->batch > 2 ? 2 : 4);
  c->window = csa_case_gen_window(r);
  gen_capacity(c, r);
  gen_bias(c, r, (int)(i % BIAS_KINDS));
  c->sink = (csa_sink)(i % CSA_SINK_COUNT);
  gen_scale(c, r);
}

/*
** csa128.contract: every ratio-128 code, on small valid single steps (past
** and present cursors when the code needs them).  The table keeps the order
** the codes had when ratio 4 was one code (ratio4_missing, slot 2), so the
** other cases kept their specs and ids; that slot is a second `ratio` case.
*/
static const int contract_codes[] = {
    CSA_CONTRACT_RATIO,         CSA_CONTRACT_RATIO,         CSA_CONTRACT_CACHE_FORMAT,    CSA_CONTRACT_NUM_HEADS,
    CSA_CONTRACT_SCALE,         CSA_CONTRACT_ARITY_INPUTS,  CSA_CONTRACT_REQUIRED_INPUT,  CSA_CONTRACT_RATIO4_INPUT,
    CSA_CONTRACT_ARITY_OUTPUTS, CSA_CONTRACT_FP4_FORMAT,    CSA_CONTRACT_HEAD_DIM,        CSA_CONTRACT_ROPE_DIM,
    CSA_CONTRACT_DTYPE,         CSA_CONTRACT_RANK,          CSA_CONTRACT_NEGATIVE_DIM,    CSA_CONTRACT_EMPTY_QUERY,
    CSA_CONTRACT_SHAPE,         CSA_CONTRACT_BIAS_DTYPE,    CSA_CONTRACT_BIAS_RANK,       CSA_CONTRACT_BIAS_BROADCAST,
    CSA_CONTRACT_OUTPUT_DTYPE,  CSA_CONTRACT_OUTPUT_SHAPE,  CSA_CONTRACT_BIAS_CANDIDATES, CSA_CONTRACT_TOTAL_NEGATIVE,
    CSA_CONTRACT_TOTAL_SHORT,   CSA_CONTRACT_PAST_CAPACITY, CSA_CONTRACT_PRESENT_CAPACITY};
#define CONTRACT_COMBOS ((int)(sizeof contract_codes / sizeof contract_codes[0]))
static void gen_contract(csa_case *c, cases_rng *r, long long i) {
  static const long long starts[] = {0, 256, 300};
  int code = contract_codes[i % CONTRACT_COMBOS], bias_kind;
  c->contract = code;
  c->format = i / CONTRACT_COMBOS % 2 ? CSA_CACHE_FP8 : CSA_CACHE_F32;
  c->start = code == CSA_CONTRACT_PAST_CAPACITY || code == CSA_CONTRACT_PRESENT_CAPACITY
                 ? csa_case_pick(r, starts + 1, 2)
                 : csa_case_pick(r, starts, 3);
  c->prefill = cases_rng_next_range(r, 1, 4);
  c->decode = 0;
  c->batch = cases_rng_next_range(r, 1, 2);
  c->heads = cases_rng_next_range(r, 1, 2);
  c->window = csa_case_gen_window(r);
  gen_capacity(c, r);
  bias_kind = (int)cases_rng_next_range(r, 0, BIAS_KINDS - 1);
  if (code >= CSA_CONTRACT_BIAS_DTYPE && code <= CSA_CONTRACT_BIAS_BROADCAST && bias_kind == 0) bias_kind = 6;
  if (code == CSA_CONTRACT_BIAS_CANDIDATES && bias_kind == 0) bias_kind = 3;
  gen_bias(c, r, bias_kind);
  c->sink = (csa_sink)cases_rng_next_range(r, 0, CSA_SINK_COUNT - 1);
  gen_scale(c, r);
}

typedef void (*family_gen_fn)(csa_case *c, cases_rng *r, long long i);
static const family_gen_fn family_gens[CSA_FAMILY_COUNT] = {gen_chain, gen_state, gen_contract};
static const int family_combos[CSA_FAMILY_COUNT] = {CHAIN_COMBOS, STATE_COMBOS, CONTRACT_COMBOS};
/* The nightly suite's added cases: longer and wider chains, further starts; contract as the gate's, other seeds. */
static const family_gen_fn nightly_gens[CSA_FAMILY_COUNT] = {gen_chain_nightly, gen_state_nightly, gen_contract};
static const int nightly_combos[CSA_FAMILY_COUNT] = {CHAIN_NIGHTLY_COMBOS, STATE_COMBOS, CONTRACT_COMBOS};

int cases_csa_family_combos(const char *family) {
  int f = spec_name_lookup(family_names, CSA_FAMILY_COUNT, family);
  return f < 0 ? -1 : family_combos[f];
}

/* count specs of family f, case i made by gens[f] from (seed, i). */
static int csa_enumerate(int f, const family_gen_fn *gens, int count, unsigned long long seed,
                         void (*emit)(const char *spec, void *ctx), void *ctx) {
  int i;
  if (f < 0) return -1;
  for (i = 0; i < count; i++) {
    char spec[CSA_CASE_SPEC_MAX], err[512] = "";
    csa_case c, back;
    cases_rng r;
    memset(&c, 0, sizeof c);
    c.family = (csa_family)f;
    cases_rng_init(&r, seed, CSA_STREAM_ENUM + (uint32_t)f, 0, (uint64_t)i << 16);
    gens[f](&c, &r, i);
    c.seed = cases_rng_u64(seed, CSA_STREAM_ENUM + (uint32_t)f, 1, (uint64_t)i) >> 32;
    if (cases_csa_format(&c, spec, sizeof spec) || cases_csa_parse(spec, &back, err, sizeof err)) {
      fprintf(stderr, "%s:%d: %s case %d is not a valid spec: %s\n  %s\n", __FILE__, __LINE__, family_names[f], i, err,
              spec);
      abort(); /* a generator bug */
    }
    emit(spec, ctx);
  }
  return count;
}

int cases_csa_enumerate(const char *family, int count, unsigned long long seed,
                        void (*emit)(const char *spec, void *ctx), void *ctx) {
  return csa_enumerate(spec_name_lookup(family_names, CSA_FAMILY_COUNT, family), family_gens, count, seed, emit, ctx);
}

/* ------------------------------------------------------------- suite */

#define CASES_CSA_SUITE_SEED 0x62697467617465ull   /* "bitgate" */
#define CASES_CSA_NIGHTLY_SEED 0x6e696768746c79ull /* "nightly" */

/* Passes over each family's combinations in the gate suite (at scale 1): 200 + 48 + 54 specs. */
static const int suite_passes[CSA_FAMILY_COUNT] = {2, 3, 2};
/* The nightly suite's added passes over nightly_gens' combinations: 24 + 32 + 54 specs. */
static const int nightly_passes[CSA_FAMILY_COUNT] = {2, 2, 2};

static int csa_write_suite(FILE *out, int per_family_scale, int nightly) {
  spec_list l = {0};
  int f;
  for (f = 0; f < CSA_FAMILY_COUNT && !l.failed; f++) {
    csa_enumerate(f, family_gens, suite_passes[f] * per_family_scale * family_combos[f], CASES_CSA_SUITE_SEED,
                  spec_list_push, &l);
    if (nightly)
      csa_enumerate(f, nightly_gens, nightly_passes[f] * nightly_combos[f], CASES_CSA_NIGHTLY_SEED, spec_list_push,
                    &l);
  }
  return spec_list_write(&l, out);
}

int cases_csa_write_suite(FILE *out, int per_family_scale) { return csa_write_suite(out, per_family_scale, 0); }

int cases_csa_write_nightly(FILE *out) { return csa_write_suite(out, 1, 1); }

/*
** csa128_cases.c: the ratio-128 spec text (see csa128_cases.h): names,
** value parsers and formatters, the key table, format, ids, what a case
** expects, the consistency rules and parse.  The tensors are
** csa128_materialize.c's, the enumerators and the suite
** csa128_enumerate.c's.
*/
#include "cases/csa128_cases_internal.h"

#include "cases/case_spec.h"
#include "cases/spec_text.h"

#include <string.h>

#define CSA_DIM_MAX ((1ll << 30) - 1)
#define CSA_START_MAX (1ll << 40)
#define CSA_STEPS_MAX 4096

/* ---------------------------------------------------------------- names */

const char *const csa128_family_names[CSA_FAMILY_COUNT] = {"csa128.chain", "csa128.state", "csa128.contract",
                                                           "csa128.tiles"};

const char *cases_csa_family_name(csa_family f) {
  return (unsigned)f < CSA_FAMILY_COUNT ? csa128_family_names[f] : "?";
}

/* ---------------------------------------------------- value parsers */

typedef int (*value_parse_fn)(csa_case *c, const char *v);
typedef int (*value_format_fn)(const csa_case *c, char *out, size_t len);

static int vp_family(csa_case *c, const char *v) {
  int f = spec_name_lookup(csa128_family_names, CSA_FAMILY_COUNT, v);
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

static int vf_family(const csa_case *c, char *o, size_t n) {
  return csa_case_put(o, n, "%s", csa128_family_names[c->family]);
}
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
static const char *grammar_family_name(const void *c) { return csa128_family_names[((const csa_case *)c)->family]; }
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
  csa128_bias_dims4(c, d4);
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
  long long final_total = csa128_final_total(c);
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

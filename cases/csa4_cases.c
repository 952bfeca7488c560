/*
** csa4_cases.c: the ratio-4 spec text (see csa4_cases.h): names, value
** parsers and formatters, the key table, the consistency rules, parse,
** format, ids and what a case expects.
*/
#include "cases/csa4_cases_internal.h"

#include "cases/case_spec.h"
#include "cases/spec_text.h"

#include <string.h>

/* ---------------------------------------------------------------- names */

static const char *const family_names[CSA4_FAMILY_COUNT] = {"csa4.chain", "csa4.state", "csa4.ties", "csa4.contract",
                                                             "csa4.tiles"};
static const char *const tie_names[CSA4_TIE_COUNT] = {"none", "relu", "dup", "zero", "mixed"};

const char *cases_csa4_family_name(csa4_family f) { return (unsigned)f < CSA4_FAMILY_COUNT ? family_names[f] : "?"; }

const char *cases_csa4_tie_name(csa4_tie t) { return (unsigned)t < CSA4_TIE_COUNT ? tie_names[t] : "?"; }

/* ---------------------------------------------------- value parsers */

typedef int (*value_parse_fn)(csa4_case *c, const char *v);
typedef int (*value_format_fn)(const csa4_case *c, char *out, size_t len);

static int vp_family(csa4_case *c, const char *v) {
  int f = spec_name_lookup(family_names, CSA4_FAMILY_COUNT, v);
  if (f < 0) return -1;
  c->family = (csa4_family)f;
  return 0;
}
static int vp_op(csa4_case *c, const char *v) { return (void)c, strcmp(v, "CompressedSparseAttention") ? -1 : 0; }
static int vp_ratio(csa4_case *c, const char *v) { return (void)c, strcmp(v, "4") ? -1 : 0; }

#define VP_DIM(name, field, lo, hi)                                                                                    \
  static int name(csa4_case *c, const char *v) { return spec_parse_ll(v, lo, hi, &c->field); }
VP_DIM(vp_b, batch, 1, CSA4_DIM_MAX)
VP_DIM(vp_heads, heads, 1, CSA4_DIM_MAX)
VP_DIM(vp_iheads, index_heads, 1, CSA4_DIM_MAX)
VP_DIM(vp_topk, topk, 1, CSA4_TOPK_MAX)
VP_DIM(vp_window, window, 1, CSA_DENSE_WINDOW)
VP_DIM(vp_start, start, 0, CSA4_START_MAX)
VP_DIM(vp_prefill, prefill, 1, CSA4_DIM_MAX)
VP_DIM(vp_decode, decode, 0, CSA4_STEPS_MAX - 1)
VP_DIM(vp_cap, capacity, 0, CSA4_DIM_MAX)

static int vp_outputs(csa4_case *c, const char *v) {
  long long n;
  if (spec_parse_ll(v, 5, 6, &n)) return -1;
  c->outputs = (int)n;
  return 0;
}

static int vp_bias(csa4_case *c, const char *v) {
  return csa_case_bias_parse(v, CSA4_DIM_MAX, &c->bias_rank, c->bias_shape);
}
static int vp_sink(csa4_case *c, const char *v) { return csa_case_sink_parse(v, &c->sink); }
static int vp_scale(csa4_case *c, const char *v) { return csa_case_scale_parse(v, &c->has_scale, &c->scale); }

static int vp_ties(csa4_case *c, const char *v) {
  int t = spec_name_lookup(tie_names, CSA4_TIE_COUNT, v);
  if (t <= CSA4_TIE_NONE) return -1; /* csa4.ties always crafts */
  c->ties = (csa4_tie)t;
  return 0;
}

static int vp_contract(csa4_case *c, const char *v) { return csa_case_contract_parse(v, &c->contract); }

/* "none", "in<i>" (0..19) or "out<o>" (0..5, stored as 100 + o). */
static int vp_at(csa4_case *c, const char *v) {
  long long n;
  if (!strcmp(v, "none")) return c->contract_site = -1, 0;
  if (!strncmp(v, "in", 2) && !spec_parse_ll(v + 2, 0, CSA_INPUT_COUNT - 1, &n)) return c->contract_site = (int)n, 0;
  if (!strncmp(v, "out", 3) && !spec_parse_ll(v + 3, 0, CSA_OUTPUT_MAX - 1, &n))
    return c->contract_site = 100 + (int)n, 0;
  return -1;
}

/* 1..CSA4_MAG_MAX: 0, the default, is written by leaving the token out. */
static int vp_mag(csa4_case *c, const char *v) {
  long long n;
  if (spec_parse_ll(v, 1, CSA4_MAG_MAX, &n)) return -1;
  c->mag = (int)n;
  return 0;
}

static int vp_seed(csa4_case *c, const char *v) { return spec_parse_u64(v, &c->seed); }

static int vf_family(const csa4_case *c, char *o, size_t n) {
  return csa_case_put(o, n, "%s", family_names[c->family]);
}
static int vf_op(const csa4_case *c, char *o, size_t n) {
  return (void)c, csa_case_put(o, n, "CompressedSparseAttention");
}
static int vf_ratio(const csa4_case *c, char *o, size_t n) { return (void)c, csa_case_put(o, n, "4"); }
#define VF_DIM(name, field)                                                                                            \
  static int name(const csa4_case *c, char *o, size_t n) { return csa_case_put(o, n, "%lld", (long long)c->field); }
VF_DIM(vf_b, batch)
VF_DIM(vf_heads, heads)
VF_DIM(vf_iheads, index_heads)
VF_DIM(vf_topk, topk)
VF_DIM(vf_window, window)
VF_DIM(vf_start, start)
VF_DIM(vf_prefill, prefill)
VF_DIM(vf_decode, decode)
VF_DIM(vf_cap, capacity)
VF_DIM(vf_outputs, outputs)

static int vf_bias(const csa4_case *c, char *o, size_t n) {
  return csa_case_bias_format(c->bias_rank, c->bias_shape, o, n);
}
static int vf_sink(const csa4_case *c, char *o, size_t n) {
  return csa_case_put(o, n, "%s", csa_case_sink_name(c->sink));
}
static int vf_scale(const csa4_case *c, char *o, size_t n) {
  return csa_case_scale_format(c->has_scale, c->scale, o, n);
}
static int vf_ties(const csa4_case *c, char *o, size_t n) {
  return csa_case_put(o, n, "%s", cases_csa4_tie_name(c->ties));
}
static int vf_contract(const csa4_case *c, char *o, size_t n) {
  return csa_case_put(o, n, "%s", csa_contract_name(c->contract));
}
static int vf_at(const csa4_case *c, char *o, size_t n) {
  if (c->contract_site < 0) return csa_case_put(o, n, "none");
  if (c->contract_site >= 100) return csa_case_put(o, n, "out%d", c->contract_site - 100);
  return csa_case_put(o, n, "in%d", c->contract_site);
}
static int vf_mag(const csa4_case *c, char *o, size_t n) { return csa_case_put(o, n, "%d", c->mag); }
static int vf_seed(const csa4_case *c, char *o, size_t n) { return csa_case_put(o, n, "%llu", c->seed); }

/* ------------------------------------------------------ the key table */

#define F(x) (1u << (x))
#define F_ALL (F(CSA4_FAMILY_COUNT) - 1u)
static const struct csa4_key {
  const char *name;
  unsigned families; /* the families whose specs carry it */
  value_parse_fn parse;
  value_format_fn format;
} spec_keys[] = {
    {"family", F_ALL, vp_family, vf_family},
    {"op", F_ALL, vp_op, vf_op},
    {"ratio", F_ALL, vp_ratio, vf_ratio},
    {"b", F_ALL, vp_b, vf_b},
    {"heads", F_ALL, vp_heads, vf_heads},
    {"iheads", F_ALL, vp_iheads, vf_iheads},
    {"topk", F_ALL, vp_topk, vf_topk},
    {"window", F_ALL, vp_window, vf_window},
    {"start", F_ALL, vp_start, vf_start},
    {"prefill", F_ALL, vp_prefill, vf_prefill},
    {"decode", F_ALL, vp_decode, vf_decode},
    {"cap", F_ALL, vp_cap, vf_cap},
    {"outputs", F_ALL, vp_outputs, vf_outputs},
    {"bias", F_ALL, vp_bias, vf_bias},
    {"sink", F_ALL, vp_sink, vf_sink},
    {"scale", F_ALL, vp_scale, vf_scale},
    {"ties", F(CSA4_FAMILY_TIES), vp_ties, vf_ties},
    {"contract", F(CSA4_FAMILY_CONTRACT), vp_contract, vf_contract},
    {"at", F(CSA4_FAMILY_CONTRACT), vp_at, vf_at},
    {"mag", F_ALL, vp_mag, vf_mag}, /* optional (grammar_key_default) */
    {"seed", F_ALL, vp_seed, vf_seed},
};
#define KEY_COUNT ((int)(sizeof spec_keys / sizeof spec_keys[0]))

/* The grammar's view of the key table (cases/spec_text.h). */
static const char *grammar_key_name(int k) { return spec_keys[k].name; }
static int grammar_key_allowed(const void *c, int k) {
  return (spec_keys[k].families & F(((const csa4_case *)c)->family)) != 0;
}
static int grammar_parse_key(void *c, int k, const char *v) { return spec_keys[k].parse((csa4_case *)c, v); }
static int grammar_parse_family(void *c, const char *v) { return vp_family((csa4_case *)c, v); }
static const char *grammar_family_name(const void *c) { return family_names[((const csa4_case *)c)->family]; }
static int grammar_format_key(const void *c, int k, char *o, size_t n) {
  return spec_keys[k].format((const csa4_case *)c, o, n);
}

/* mag= is the one optional key: left out at 0, so older specs keep their text. */
static int grammar_key_default(const void *c, int k) {
  return !strcmp(spec_keys[k].name, "mag") && ((const csa4_case *)c)->mag == 0;
}

static const spec_grammar grammar = {KEY_COUNT,          CSA4_CASE_SPEC_MAX,   grammar_key_name,
                                     grammar_key_allowed, grammar_parse_key,   grammar_parse_family,
                                     grammar_family_name, grammar_format_key,  grammar_key_default};

int cases_csa4_format(const csa4_case *c, char *spec, size_t len) {
  if ((unsigned)c->family >= CSA4_FAMILY_COUNT) return -1;
  return spec_format_tokens(&grammar, c, spec, len);
}

int cases_csa4_id(const csa4_case *c, char *id, size_t len) {
  char spec[CSA4_CASE_SPEC_MAX];
  return cases_csa4_format(c, spec, sizeof spec) ? -1 : case_id_from_spec(spec, id, len);
}

int cases_csa4_steps(const csa4_case *c) { return (int)c->decode + 1; }

int cases_csa4_expected(const csa4_case *c, int *code) {
  int reject = c->family == CSA4_FAMILY_CONTRACT;
  if (code) *code = reject ? c->contract : CSA_CONTRACT_NONE;
  return reject;
}

int cases_csa4_expected_site(const csa4_case *c, int *input, int *axis) {
  int ax = -1, reject = c->family == CSA4_FAMILY_CONTRACT && !csa4_contract_site(c, &ax);
  if (input) *input = reject ? c->contract_site : -1;
  if (axis) *axis = reject ? ax : -1;
  return reject;
}

/* ------------------------------------------------ consistency rules */

/* Does the bias broadcast to [B, heads, S, 128 + topk] at a step of length S? */
static int bias_fits(const csa4_case *c, long long seq) {
  long long target[4] = {c->batch, c->heads, seq, csa4_candidates(c)}, d4[4];
  int i;
  csa_case_bias_dims4(c->bias_rank, c->bias_shape, d4);
  for (i = 0; i < 4; i++)
    if (d4[i] != 1 && d4[i] != target[i]) return 0;
  return 1;
}

static int check_contract(const csa4_case *c, char *err, size_t len) {
  int code = c->contract;
  if (!csa_case_contract_applies(code, CSA4_RATIO))
    return spec_inconsistent(&grammar, c, "contract", err, len, "applies to ratio 128 only");
  if (csa4_contract_site(c, NULL))
    return spec_inconsistent(&grammar, c, "at", err, len, "%s cannot be broken there", csa_contract_name(code));
  if (c->contract_site == CSA_IN_BIAS && c->bias_rank < 0)
    return spec_inconsistent(&grammar, c, "contract", err, len, "needs a bias");
  if (code == CSA_CONTRACT_PAST_CAPACITY && c->start < CSA4_RATIO)
    return spec_inconsistent(&grammar, c, "contract", err, len, "needs start >= 4 (a past record)");
  if (code == CSA_CONTRACT_PRESENT_CAPACITY && c->start + c->prefill < CSA4_RATIO)
    return spec_inconsistent(&grammar, c, "contract", err, len, "needs start + prefill >= 4 (a record to hold)");
  return 0;
}

/* The rules a spec must meet beyond each value's own syntax. */
static int check_case(const csa4_case *c, char *err, size_t len) {
  long long final_total = csa4_final_total(c);
  if ((c->family == CSA4_FAMILY_CHAIN || c->family == CSA4_FAMILY_TIES || c->family == CSA4_FAMILY_TILES) &&
      c->start != 0)
    return spec_inconsistent(&grammar, c, "start", err, len, "%s starts a fresh sequence (start=0)",
                             family_names[c->family]);
  if (c->family == CSA4_FAMILY_STATE && c->start == 0)
    return spec_inconsistent(&grammar, c, "start", err, len, "csa4.state starts from a synthetic state (start > 0)");
  if (c->family == CSA4_FAMILY_CONTRACT && c->decode != 0)
    return spec_inconsistent(&grammar, c, "decode", err, len, "csa4.contract is one step (decode=0)");
  if (final_total > CSA4_START_MAX)
    return spec_inconsistent(&grammar, c, "start", err, len, "the final total is above 2^40");
  if (c->capacity < final_total / CSA4_RATIO)
    return spec_inconsistent(&grammar, c, "cap", err, len, "holds fewer than the %lld records of the final total %lld",
                             final_total / CSA4_RATIO, final_total);
  if (c->bias_rank >= 0 && (!bias_fits(c, c->prefill) || (c->decode && !bias_fits(c, 1))))
    return spec_inconsistent(&grammar, c, "bias", err, len, "does not broadcast to [%lld, %lld, S, %lld] at every step",
                             c->batch, c->heads, csa4_candidates(c));
  return c->family == CSA4_FAMILY_CONTRACT ? check_contract(c, err, len) : 0;
}

/* ------------------------------------------------------------- parse */

int cases_csa4_parse(const char *spec, csa4_case *c, char *err, size_t err_len) {
  memset(c, 0, sizeof *c);
  c->bias_rank = -1;
  c->contract_site = -1;
  if (spec_parse_tokens(&grammar, spec, c, err, err_len)) return -1;
  return check_case(c, err, err_len);
}

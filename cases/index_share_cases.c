/*
** index_share_cases.c: the IndexShare spec text (see index_share_cases.h):
** names, value parsers and formatters, the key table and its grammar,
** format, ids, the key bounds, and parse (which applies the consistency
** rules of index_share_check.c).  The tensors, the enumerators and the
** suite live in the files index_share_cases_internal.h lists.
*/
#include "cases/index_share_cases_internal.h"

#include "cases/case_spec.h"
#include "cases/spec_text.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- names */

const char *const is_family_names[IS_FAMILY_COUNT] = {
    "is.valid", "is.indexviol", "is.bias", "is.capfront", "is.masked", "is.contract", "is.numeric", "is.tiles"};
static const char *const fill_names[] = {"none", "neginf", "posinf", "nan", "mixed"};
static const char *const special_names[] = {"none", "huge", "subnormal", "nan", "inf", "mixed"};
const char *const is_ck_names[IS_CK_COUNT] = {
    "none",           "rank",           "batch",          "heads",         "seq",
    "head_size",      "past_unpaired",  "absent",         "dtype",         "present_mixed",
    "num_heads_zero", "num_heads_negative", "kv_negative", "kv_not_divisor", "scale_zero",
    "scale_neg_zero", "scale_negative", "scale_nan",      "scale_inf",     "inputs",
    "outputs",        "cap_no_bias",    "cap_no_past",    "k_zero"};

const char *const is_slot_names[IS_SLOT_COUNT] = {
    "query", "key", "value", "past_key", "past_value", "indices", "bias", "y", "present_key", "present_value"};

#define S(slot) IS_SLOT_BIT(slot) /* short, for the table */
#define SLOTS_ALL (S(IS_SLOT_COUNT) - 1u)
const is_ck_form is_ck_info[IS_CK_COUNT] = {
    [IS_CK_RANK] = {IS_CK_ARG_TARGET, SLOTS_ALL & ~S(IS_IN_BIAS)},
    [IS_CK_BATCH] = {IS_CK_ARG_TARGET, SLOTS_ALL & ~S(IS_IN_QUERY)},
    [IS_CK_HEADS] = {IS_CK_ARG_TARGET, SLOTS_ALL},
    [IS_CK_SEQ] = {IS_CK_ARG_TARGET, S(2) | S(4) | S(5) | S(6) | S(7) | S(8) | S(9)},
    [IS_CK_HEAD_SIZE] = {IS_CK_ARG_TARGET, S(1) | S(2) | S(3) | S(4) | S(7) | S(8) | S(9)},
    [IS_CK_PAST_UNPAIRED] = {IS_CK_ARG_TARGET, S(3) | S(4)},
    [IS_CK_ABSENT] = {IS_CK_ARG_TARGET, S(0) | S(1) | S(2) | S(5)},
    [IS_CK_DTYPE] = {IS_CK_ARG_TARGET_DTYPE, SLOTS_ALL},
    [IS_CK_INPUTS] = {IS_CK_ARG_COUNT, 0},
    [IS_CK_OUTPUTS] = {IS_CK_ARG_COUNT, 0},
};

const char *cases_is_family_name(is_family f) {
  return (unsigned)f < IS_FAMILY_COUNT ? is_family_names[f] : "?";
}

const char *cases_is_contract_kind_name(is_contract_kind k) {
  return (unsigned)k < IS_CK_COUNT ? is_ck_names[k] : "?";
}

/* ---------------------------------------------------- value parsers */

/* Splits s at sep into at most max fields of a scratch copy; returns the count, -1 if more. */
static int split(const char *s, char sep, char *buf, size_t buf_len, char **fields, int max) {
  int n = 0;
  char *p;
  if (strlen(s) + 1 > buf_len) return -1;
  strcpy(buf, s);
  for (p = buf;; p++) {
    if (n == max) return -1;
    fields[n++] = p;
    p = strchr(p, sep);
    if (!p) return n;
    *p = '\0';
  }
}

/* --------------------------------------------- the key table: parse */

typedef int (*value_parse_fn)(is_case *c, const char *v);
typedef int (*value_format_fn)(const is_case *c, char *out, size_t len);

static int vp_family(is_case *c, const char *v) {
  int f = spec_name_lookup(is_family_names, IS_FAMILY_COUNT, v);
  if (f < 0) return -1;
  c->family = (is_family)f;
  return 0;
}

static int vp_op(is_case *c, const char *v) {
  (void)c;
  return strcmp(v, "IndexShare") ? -1 : 0;
}

static int vp_dtype(is_case *c, const char *v) {
  dtype dt = dtype_parse(v);
  if (!dtype_is_float(dt)) return -1;
  c->dt = dt;
  return 0;
}

static int vp_idx(is_case *c, const char *v) {
  dtype dt = dtype_parse(v);
  if (dt != DTYPE_I32 && dt != DTYPE_I64) return -1;
  c->index_dt = dt;
  return 0;
}

#define VP_DIM(name, field, lo, hi)                                                                    \
  static int name(is_case *c, const char *v) { return spec_parse_ll(v, lo, hi, &c->field); }
VP_DIM(vp_b, batch, 1, IS_DIM_MAX)
VP_DIM(vp_n, num_heads, 1, IS_DIM_MAX)
VP_DIM(vp_sq, q_seq, 1, IS_DIM_MAX)
VP_DIM(vp_sc, current_seq, 1, IS_DIM_MAX)
VP_DIM(vp_sp, past_seq, 0, IS_DIM_MAX)
VP_DIM(vp_h, head_size, 1, IS_DIM_MAX)
VP_DIM(vp_ih, index_heads, 1, IS_DIM_MAX)
VP_DIM(vp_k, selected_width, 1, IS_K_MAX)
VP_DIM(vp_masked, masked_rows, 1, LLONG_MAX)

static int vp_nkv(is_case *c, const char *v) {
  if (!strcmp(v, "none")) return c->kv_num_heads = 0, 0;
  return spec_parse_ll(v, 1, IS_DIM_MAX, &c->kv_num_heads);
}

static int vp_int(const char *v, long long lo, long long hi, int *out) {
  long long x;
  if (spec_parse_ll(v, lo, hi, &x)) return -1;
  *out = (int)x;
  return 0;
}

static int vp_out(is_case *c, const char *v) {
  if (vp_int(v, 1, 3, &c->n_outputs) || c->n_outputs == 2) return -1;
  return 0;
}

static int vp_present(is_case *c, const char *v) {
  if (strcmp(v, "grow") && strcmp(v, "cap")) return -1;
  c->capacity = !strcmp(v, "cap");
  return 0;
}

static int vp_vlen(is_case *c, const char *v) {
  char buf[IS_CASE_SPEC_MAX], *f[IS_CASE_MAX_BATCH];
  int n, i;
  c->n_valid_len = 0;
  if (!strcmp(v, "none")) return 0;
  if ((n = split(v, ',', buf, sizeof buf, f, IS_CASE_MAX_BATCH)) < 0) return -1;
  for (i = 0; i < n; i++)
    if (spec_parse_ll(f[i], 0, IS_DIM_MAX, &c->valid_len[i])) return -1;
  c->n_valid_len = n;
  return 0;
}

static int vp_bias(is_case *c, const char *v) {
  char buf[128], *f[4];
  int n, i;
  if (!strcmp(v, "none")) return c->bias_rank = -1, 0;
  if (!strcmp(v, "[]")) return c->bias_rank = 0, 0;
  if ((n = split(v, 'x', buf, sizeof buf, f, 4)) < 0) return -1;
  for (i = 0; i < n; i++)
    if (spec_parse_ll(f[i], 0, IS_DIM_MAX, &c->bias_shape[i])) return -1;
  c->bias_rank = n;
  return 0;
}

static int vp_scale(is_case *c, const char *v) {
  char canon[64], *end;
  double d;
  if (!strcmp(v, "none")) return c->has_scale = 0, 0;
  d = strtod(v, &end);
  if (*end || !(d > 0.0) || (double)(float)d != d || !((float)d <= 0x1.fffffep127f)) return -1;
  spec_format_hex_float((float)d, canon, sizeof canon);
  if (strcmp(canon, v)) return -1; /* not canonical: one case, one text */
  c->has_scale = 1;
  c->scale = (float)d;
  return 0;
}

static int vp_viol(is_case *c, const char *v) {
  char buf[128], buf2[128], *f[2], *loc[4];
  long long x[4];
  int i, rule = -1;
  if (split(v, ':', buf, sizeof buf, f, 2) != 2) return -1;
  for (i = INDEX_RULE_SENTINEL; i <= INDEX_RULE_ALL_PADDING; i++)
    if (!strcmp(f[0], index_rule_name(i))) rule = i;
  if (rule < 0 || split(f[1], ',', buf2, sizeof buf2, loc, 4) != 4) return -1;
  for (i = 0; i < 4; i++)
    if (spec_parse_ll(loc[i], i == 3 ? -1 : 0, IS_DIM_MAX, &x[i])) return -1;
  c->viol_rule = rule;
  c->viol_b = x[0], c->viol_h = x[1], c->viol_q = x[2], c->viol_column = x[3];
  return 0;
}

static int vp_gaps(is_case *c, const char *v) { return vp_int(v, 0, IS_GAPS_MAX, &c->gaps); }

static int vp_fill(const char *v, int allow_none, is_fill *out) {
  int f = spec_name_lookup(fill_names, 5, v);
  if (f < 0 || (f == IS_FILL_NONE && !allow_none)) return -1;
  *out = (is_fill)f;
  return 0;
}
static int vp_tail(is_case *c, const char *v) { return vp_fill(v, 0, &c->tail); }
static int vp_inner(is_case *c, const char *v) { return vp_fill(v, 1, &c->inner); }

static int vp_num(is_case *c, const char *v) {
  int k = spec_name_lookup(special_names, 6, v);
  if (k <= 0) return -1;
  c->num = (is_special)k;
  return 0;
}

static int vp_num_in(is_case *c, const char *v) {
  static const char order[] = "qkv";
  const char *p;
  unsigned bits = 0;
  int last = -1;
  for (p = v; *p; p++) {
    const char *at = strchr(order, *p);
    if (!at || (int)(at - order) <= last) return -1; /* unknown, repeated or out of order */
    last = (int)(at - order);
    bits |= 1u << last;
  }
  if (!bits) return -1;
  c->num_in = bits;
  return 0;
}

static int vp_num_rate(is_case *c, const char *v) { return vp_int(v, 1, 1000, &c->num_rate); }

static int vp_contract(is_case *c, const char *v) {
  char buf[128], *f[3];
  int n = split(v, ':', buf, sizeof buf, f, 3), kind;
  long long x;
  if (n < 1 || (kind = spec_name_lookup(is_ck_names, IS_CK_COUNT, f[0])) <= 0) return -1;
  c->contract = (is_contract_kind)kind;
  c->contract_target = -1;
  c->contract_dtype = DTYPE_NONE;
  switch (is_ck_info[kind].arg) {
  case IS_CK_ARG_NONE: return n == 1 ? 0 : -1;
  case IS_CK_ARG_COUNT:
    if (n != 2 || spec_parse_ll(f[1], 0, 99, &x)) return -1;
    c->contract_target = (int)x;
    return 0;
  case IS_CK_ARG_TARGET:
  case IS_CK_ARG_TARGET_DTYPE: break;
  }
  if (n != (is_ck_info[kind].arg == IS_CK_ARG_TARGET ? 2 : 3)) return -1;
  if ((x = spec_name_lookup(is_slot_names, IS_SLOT_COUNT, f[1])) < 0) return -1;
  c->contract_target = is_target_of_slot((int)x);
  if (n == 3 && ((c->contract_dtype = dtype_parse(f[2])) == DTYPE_NONE)) return -1;
  return 0;
}

static int vp_seed(is_case *c, const char *v) { return spec_parse_u64(v, &c->seed); }
static int vp_steps(is_case *c, const char *v) { return vp_int(v, 1, IS_CASE_MAX_STEPS, &c->steps); }

/* -------------------------------------------- the key table: format */

#define VF(name, ...)                                                                                  \
  static int name(const is_case *c, char *o, size_t n) {                                              \
    int w = snprintf(o, n, __VA_ARGS__);                                                               \
    return w < 0 || (size_t)w >= n ? -1 : 0;                                                           \
  }
VF(vf_family, "%s", is_family_names[c->family])
VF(vf_dtype, "%s", dtype_name(c->dt))
VF(vf_idx, "%s", dtype_name(c->index_dt))
VF(vf_b, "%lld", c->batch)
VF(vf_n, "%lld", c->num_heads)
VF(vf_sq, "%lld", c->q_seq)
VF(vf_sc, "%lld", c->current_seq)
VF(vf_sp, "%lld", c->past_seq)
VF(vf_h, "%lld", c->head_size)
VF(vf_ih, "%lld", c->index_heads)
VF(vf_k, "%lld", c->selected_width)
VF(vf_out, "%d", c->n_outputs)
VF(vf_present, "%s", c->capacity ? "cap" : "grow")
VF(vf_viol, "%s:%lld,%lld,%lld,%lld", index_rule_name(c->viol_rule), c->viol_b, c->viol_h, c->viol_q,
   c->viol_column)
VF(vf_gaps, "%d", c->gaps)
VF(vf_tail, "%s", fill_names[c->tail])
VF(vf_inner, "%s", fill_names[c->inner])
VF(vf_masked, "%lld", c->masked_rows)
VF(vf_num, "%s", special_names[c->num])
VF(vf_num_in, "%s%s%s", c->num_in & IS_NUM_IN_Q ? "q" : "", c->num_in & IS_NUM_IN_K ? "k" : "",
   c->num_in & IS_NUM_IN_V ? "v" : "")
VF(vf_num_rate, "%d", c->num_rate)
VF(vf_seed, "%llu", c->seed)
VF(vf_steps, "%d", c->steps)

static int vf_op(const is_case *c, char *o, size_t n) {
  (void)c;
  return snprintf(o, n, "IndexShare") >= (int)n ? -1 : 0;
}

static int vf_nkv(const is_case *c, char *o, size_t n) {
  int w = c->kv_num_heads ? snprintf(o, n, "%lld", c->kv_num_heads) : snprintf(o, n, "none");
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Appends "%lld" items joined by sep; "none" when there are none. */
static int format_list(const long long *v, int count, const char *sep, char *o, size_t n) {
  size_t used = 0;
  int i, w;
  if (count == 0) return snprintf(o, n, "none") >= (int)n ? -1 : 0;
  o[0] = '\0';
  for (i = 0; i < count; i++) {
    w = snprintf(o + used, n - used, "%s%lld", i ? sep : "", v[i]);
    if (w < 0 || (size_t)w >= n - used) return -1;
    used += (size_t)w;
  }
  return 0;
}

static int vf_vlen(const is_case *c, char *o, size_t n) { return format_list(c->valid_len, c->n_valid_len, ",", o, n); }

static int vf_bias(const is_case *c, char *o, size_t n) {
  if (c->bias_rank < 0) return snprintf(o, n, "none") >= (int)n ? -1 : 0;
  if (c->bias_rank == 0) return snprintf(o, n, "[]") >= (int)n ? -1 : 0;
  return format_list(c->bias_shape, c->bias_rank, "x", o, n);
}

static int vf_scale(const is_case *c, char *o, size_t n) {
  if (!c->has_scale) return snprintf(o, n, "none") >= (int)n ? -1 : 0;
  spec_format_hex_float(c->scale, o, n);
  return 0;
}

static int vf_contract(const is_case *c, char *o, size_t n) {
  int w;
  switch (is_ck_info[c->contract].arg) {
  case IS_CK_ARG_NONE: w = snprintf(o, n, "%s", is_ck_names[c->contract]); break;
  case IS_CK_ARG_COUNT: w = snprintf(o, n, "%s:%d", is_ck_names[c->contract], c->contract_target); break;
  case IS_CK_ARG_TARGET:
    w = snprintf(o, n, "%s:%s", is_ck_names[c->contract], is_slot_names[is_slot_of_target(c->contract_target)]);
    break;
  default:
    w = snprintf(o, n, "%s:%s:%s", is_ck_names[c->contract], is_slot_names[is_slot_of_target(c->contract_target)],
                 dtype_name(c->contract_dtype));
    break;
  }
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* ------------------------------------------------------ the key table */

#define F_ALL ((1u << IS_FAMILY_COUNT) - 1u)
#define F(x) (1u << (x))
static const struct is_key {
  const char *name;
  unsigned families; /* the families whose specs carry it */
  value_parse_fn parse;
  value_format_fn format;
} spec_keys[] = {
    {"family", F_ALL, vp_family, vf_family},
    {"op", F_ALL, vp_op, vf_op},
    {"dtype", F_ALL, vp_dtype, vf_dtype},
    {"idx", F_ALL, vp_idx, vf_idx},
    {"b", F_ALL, vp_b, vf_b},
    {"n", F_ALL, vp_n, vf_n},
    {"nkv", F_ALL, vp_nkv, vf_nkv},
    {"sq", F_ALL, vp_sq, vf_sq},
    {"sc", F_ALL, vp_sc, vf_sc},
    {"sp", F_ALL, vp_sp, vf_sp},
    {"h", F_ALL, vp_h, vf_h},
    {"ih", F_ALL, vp_ih, vf_ih},
    {"k", F_ALL, vp_k, vf_k},
    {"out", F_ALL, vp_out, vf_out},
    {"present", F_ALL, vp_present, vf_present},
    {"vlen", F_ALL, vp_vlen, vf_vlen},
    {"bias", F_ALL, vp_bias, vf_bias},
    {"scale", F_ALL, vp_scale, vf_scale},
    {"viol", F(IS_FAMILY_INDEXVIOL), vp_viol, vf_viol},
    {"gaps", F(IS_FAMILY_CAPFRONT), vp_gaps, vf_gaps},
    {"tail", F(IS_FAMILY_CAPFRONT), vp_tail, vf_tail},
    {"inner", F(IS_FAMILY_CAPFRONT), vp_inner, vf_inner},
    {"masked", F(IS_FAMILY_MASKED), vp_masked, vf_masked},
    {"num", F(IS_FAMILY_NUMERIC), vp_num, vf_num},
    {"num_in", F(IS_FAMILY_NUMERIC), vp_num_in, vf_num_in},
    {"num_rate", F(IS_FAMILY_NUMERIC), vp_num_rate, vf_num_rate},
    {"contract", F(IS_FAMILY_CONTRACT), vp_contract, vf_contract},
    {"seed", F_ALL, vp_seed, vf_seed},
    {"steps", F_ALL, vp_steps, vf_steps},
};
#define KEY_COUNT ((int)(sizeof spec_keys / sizeof spec_keys[0]))

/* The grammar's view of this family's key table (cases/spec_text.h). */
static const char *grammar_key_name(int k) { return spec_keys[k].name; }
static int grammar_key_allowed(const void *c, int k) {
  return (spec_keys[k].families & F(((const is_case *)c)->family)) != 0;
}
static int grammar_parse_key(void *c, int k, const char *v) { return spec_keys[k].parse((is_case *)c, v); }
static int grammar_parse_family(void *c, const char *v) { return vp_family((is_case *)c, v); }
static const char *grammar_family_name(const void *c) { return is_family_names[((const is_case *)c)->family]; }
static int grammar_format_key(const void *c, int k, char *o, size_t n) {
  return spec_keys[k].format((const is_case *)c, o, n);
}

const spec_grammar is_grammar = {KEY_COUNT,           IS_CASE_SPEC_MAX,    grammar_key_name,
                                 grammar_key_allowed, grammar_parse_key,   grammar_parse_family,
                                 grammar_family_name, grammar_format_key,  NULL /* no optional keys */};

int cases_is_format(const is_case *c, char *spec, size_t len) { return spec_format_tokens(&is_grammar, c, spec, len); }

int cases_is_id(const is_case *c, char *id, size_t len) {
  char spec[IS_CASE_SPEC_MAX];
  return cases_is_format(c, spec, sizeof spec) ? -1 : case_id_from_spec(spec, id, len);
}

void cases_is_bounds(const is_case *c, long long *bound) {
  long long b;
  for (b = 0; b < c->batch; b++) bound[b] = c->capacity ? c->valid_len[b] : is_case_total(c);
}

/* ------------------------------------------------------------- parse */

int cases_is_parse(const char *spec, is_case *c, char *err, size_t err_len) {
  memset(c, 0, sizeof *c);
  c->bias_rank = -1;
  c->contract_target = -1;
  if (spec_parse_tokens(&is_grammar, spec, c, err, err_len)) return -1;
  return is_check_case(c, err, err_len);
}

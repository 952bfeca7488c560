/*
** index_share_cases.c: see index_share_cases.h.
**
** In order: names; the spec text (value parsers, the key table, parse,
** format, the consistency rules); the tensors (the plan of shapes, the
** is.contract mutations, the value, index and bias fills, the planted index
** rows); the family enumerators; the gate suite.
**
** Random streams.  Every random draw names a stream (enum is_stream), so
** adding a draw to one fill never shifts another's values.
*/
#include "cases/index_share_cases.h"

#include "cases/case_spec.h"
#include "cases/rng.h"
#include "cases/spec_list.h"
#include "cases/spec_text.h"
#include "oracle/numerics/numerics.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum is_stream {
  IS_STREAM_TENSOR = 0,   /* + input slot: element values */
  IS_STREAM_SPECIAL = 16, /* + input slot: is.numeric specials */
  IS_STREAM_ROWS = 32,    /* index rows */
  IS_STREAM_GAPS,         /* is.capfront -inf gap columns */
  IS_STREAM_INNER,        /* is.capfront specials inside the frontier */
  IS_STREAM_TAIL,         /* is.capfront mixed tail */
  IS_STREAM_MASK,         /* is.masked rows */
  IS_STREAM_PLANT,        /* cases_is_plant's choices */
  IS_STREAM_ENUM = 64     /* + family: enumerator draws */
};

#define IS_DIM_MAX ((1ll << 30) - 1) /* any dim; sp + sc + 1 then fits an i32 */
#define IS_K_MAX 65536
#define IS_GAPS_MAX 1024
#define IS_EXTRA_INPUT IS_INPUT_COUNT /* the 8th input of contract=inputs:8 */

/* ---------------------------------------------------------------- names */

static const char *const family_names[IS_FAMILY_COUNT] = {
    "is.valid", "is.indexviol", "is.bias", "is.capfront", "is.masked", "is.contract", "is.numeric"};
static const char *const fill_names[] = {"none", "neginf", "posinf", "nan", "mixed"};
static const char *const special_names[] = {"none", "huge", "subnormal", "nan", "inf", "mixed"};
static const char *const ck_names[IS_CK_COUNT] = {
    "none",           "rank",           "batch",          "heads",         "seq",
    "head_size",      "past_unpaired",  "absent",         "dtype",         "present_mixed",
    "num_heads_zero", "num_heads_negative", "kv_negative", "kv_not_divisor", "scale_zero",
    "scale_neg_zero", "scale_negative", "scale_nan",      "scale_inf",     "inputs",
    "outputs",        "cap_no_bias",    "cap_no_past",    "k_zero"};

/* Contract targets as slots: inputs 0..6, then outputs 0..2 at 7..9. */
#define IS_SLOT_COUNT 10
static const char *const slot_names[IS_SLOT_COUNT] = {
    "query", "key", "value", "past_key", "past_value", "indices", "bias", "y", "present_key", "present_value"};

static int slot_of_target(int target) { return target < 100 ? target : IS_INPUT_COUNT + target - 100; }
static int target_of_slot(int slot) { return slot < IS_INPUT_COUNT ? slot : 100 + slot - IS_INPUT_COUNT; }

#define S(x) (1u << (x))
#define SLOTS_ALL (S(IS_SLOT_COUNT) - 1u)
enum ck_arg { CK_ARG_NONE, CK_ARG_TARGET, CK_ARG_TARGET_DTYPE, CK_ARG_COUNT };
static const struct {
  enum ck_arg arg;
  unsigned slots; /* targets the kind accepts (CK_ARG_TARGET*) */
} ck_info[IS_CK_COUNT] = {
    [IS_CK_RANK] = {CK_ARG_TARGET, SLOTS_ALL & ~S(IS_IN_BIAS)},
    [IS_CK_BATCH] = {CK_ARG_TARGET, SLOTS_ALL & ~S(IS_IN_QUERY)},
    [IS_CK_HEADS] = {CK_ARG_TARGET, SLOTS_ALL},
    [IS_CK_SEQ] = {CK_ARG_TARGET, S(2) | S(4) | S(5) | S(6) | S(7) | S(8) | S(9)},
    [IS_CK_HEAD_SIZE] = {CK_ARG_TARGET, S(1) | S(2) | S(3) | S(4) | S(7) | S(8) | S(9)},
    [IS_CK_PAST_UNPAIRED] = {CK_ARG_TARGET, S(3) | S(4)},
    [IS_CK_ABSENT] = {CK_ARG_TARGET, S(0) | S(1) | S(2) | S(5)},
    [IS_CK_DTYPE] = {CK_ARG_TARGET_DTYPE, SLOTS_ALL},
    [IS_CK_INPUTS] = {CK_ARG_COUNT, 0},
    [IS_CK_OUTPUTS] = {CK_ARG_COUNT, 0},
};

const char *cases_is_family_name(is_family f) {
  return (unsigned)f < IS_FAMILY_COUNT ? family_names[f] : "?";
}

const char *cases_is_contract_kind_name(is_contract_kind k) {
  return (unsigned)k < IS_CK_COUNT ? ck_names[k] : "?";
}

/* Derived sizes. */
static long long case_kv(const is_case *c) { return c->kv_num_heads ? c->kv_num_heads : c->num_heads; }
static long long case_total(const is_case *c) { return c->past_seq + c->current_seq; }
static long long case_cache(const is_case *c) { return c->capacity ? c->past_seq : case_total(c); }
static int case_has_bias(const is_case *c) { return c->bias_rank >= 0; }

/* The bias shape right-aligned into 4 dims (1 where absent). */
static void bias_dims4(int rank, const long long *shape, long long *d4) {
  int i;
  for (i = 0; i < 4; i++) d4[i] = i < 4 - rank ? 1 : shape[i - (4 - rank)];
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
  int f = spec_name_lookup(family_names, IS_FAMILY_COUNT, v);
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
  if (n < 1 || (kind = spec_name_lookup(ck_names, IS_CK_COUNT, f[0])) <= 0) return -1;
  c->contract = (is_contract_kind)kind;
  c->contract_target = -1;
  c->contract_dtype = DTYPE_NONE;
  switch (ck_info[kind].arg) {
  case CK_ARG_NONE: return n == 1 ? 0 : -1;
  case CK_ARG_COUNT:
    if (n != 2 || spec_parse_ll(f[1], 0, 99, &x)) return -1;
    c->contract_target = (int)x;
    return 0;
  case CK_ARG_TARGET:
  case CK_ARG_TARGET_DTYPE: break;
  }
  if (n != (ck_info[kind].arg == CK_ARG_TARGET ? 2 : 3)) return -1;
  if ((x = spec_name_lookup(slot_names, IS_SLOT_COUNT, f[1])) < 0) return -1;
  c->contract_target = target_of_slot((int)x);
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
VF(vf_family, "%s", family_names[c->family])
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
  switch (ck_info[c->contract].arg) {
  case CK_ARG_NONE: w = snprintf(o, n, "%s", ck_names[c->contract]); break;
  case CK_ARG_COUNT: w = snprintf(o, n, "%s:%d", ck_names[c->contract], c->contract_target); break;
  case CK_ARG_TARGET:
    w = snprintf(o, n, "%s:%s", ck_names[c->contract], slot_names[slot_of_target(c->contract_target)]);
    break;
  default:
    w = snprintf(o, n, "%s:%s:%s", ck_names[c->contract], slot_names[slot_of_target(c->contract_target)],
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
static const char *grammar_family_name(const void *c) { return family_names[((const is_case *)c)->family]; }
static int grammar_format_key(const void *c, int k, char *o, size_t n) {
  return spec_keys[k].format((const is_case *)c, o, n);
}

static const spec_grammar grammar = {KEY_COUNT,         IS_CASE_SPEC_MAX,     grammar_key_name,    grammar_key_allowed,
                                     grammar_parse_key, grammar_parse_family, grammar_family_name, grammar_format_key,
                                     NULL /* no optional keys */};

int cases_is_format(const is_case *c, char *spec, size_t len) { return spec_format_tokens(&grammar, c, spec, len); }

int cases_is_id(const is_case *c, char *id, size_t len) {
  char spec[IS_CASE_SPEC_MAX];
  return cases_is_format(c, spec, sizeof spec) ? -1 : case_id_from_spec(spec, id, len);
}

void cases_is_bounds(const is_case *c, long long *bound) {
  long long b;
  for (b = 0; b < c->batch; b++) bound[b] = c->capacity ? c->valid_len[b] : case_total(c);
}

/* ------------------------------------------------ consistency rules */

/* The bias covers every column with one value (rank 0, or a last dim of 1). */
static int bias_k_broadcast(const is_case *c) { return c->bias_rank == 0 || c->bias_shape[c->bias_rank - 1] == 1; }
/* One bias batch serves every batch (fewer than 4 dims, or a leading 1). */
static int bias_b_broadcast(const is_case *c) { return c->bias_rank < 4 || c->bias_shape[0] == 1; }

static int bias_broadcasts(const is_case *c) {
  long long target[4] = {c->batch, c->num_heads, c->q_seq, case_cache(c)}, d4[4];
  int i;
  bias_dims4(c->bias_rank, c->bias_shape, d4);
  for (i = 0; i < 4; i++)
    if (d4[i] != 1 && d4[i] != target[i]) return 0;
  return 1;
}

/*
** Can cases_is_plant put `rule` at `column` of a K-wide row whose bound is
** bnd?  The valid prefix needs `column` distinct keys below bnd (from 1 for
** not_increasing, whose offending value must be below a previous one >= 1).
*/
static int plant_feasible(int rule, long long column, long long K, long long bnd) {
  if (rule == INDEX_RULE_ALL_PADDING) return column == -1;
  if (column < 0 || column >= K) return 0;
  switch (rule) {
  case INDEX_RULE_SENTINEL:
  case INDEX_RULE_OUT_OF_RANGE: return column <= bnd;
  case INDEX_RULE_DUPLICATE: return column >= 1 && column <= bnd;
  case INDEX_RULE_NOT_INCREASING: return column >= 1 && column <= bnd - 1;
  case INDEX_RULE_AFTER_PADDING: return column >= 1 && bnd >= 1;
  default: return 0;
  }
}

static int check_capacity(const is_case *c, char *err, size_t len) {
  int i;
  if (!c->capacity)
    return c->n_valid_len ? spec_inconsistent(&grammar, c, "vlen", err, len, "vlen is for present=cap") : 0;
  if (c->n_outputs != 3) return spec_inconsistent(&grammar, c, "present", err, len, "a capacity present needs out=3");
  if (c->past_seq <= 0) return spec_inconsistent(&grammar, c, "present", err, len, "a capacity present needs sp > 0");
  if (!case_has_bias(c)) return spec_inconsistent(&grammar, c, "present", err, len, "a capacity present needs a bias");
  if (c->n_valid_len != c->batch)
    return spec_inconsistent(&grammar, c, "vlen", err, len, "needs one entry per batch (b=%lld)", c->batch);
  for (i = 0; i < c->n_valid_len; i++) {
    long long v = c->valid_len[i];
    if (v > c->past_seq)
      return spec_inconsistent(&grammar, c, "vlen", err, len, "%lld is above the capacity sp=%lld", v, c->past_seq);
    if (v == 0 && c->family != IS_FAMILY_CAPFRONT)
      return spec_inconsistent(&grammar, c, "vlen", err, len, "a valid length of 0 only belongs in is.capfront");
    if (bias_b_broadcast(c) && v != c->valid_len[0])
      return spec_inconsistent(&grammar, c, "vlen", err, len,
                               "the bias broadcasts over batch, so it carries one valid length");
    if (bias_k_broadcast(c) && v != 0 && v != c->past_seq)
      return spec_inconsistent(&grammar, c, "vlen", err, len,
                               "the bias broadcasts over columns, so the valid length is 0 or sp");
  }
  return 0;
}

/* What a contract kind/target needs of the base configuration. */
static int check_contract(const is_case *c, char *err, size_t len) {
  int k = c->contract, slot = c->contract_target >= 0 ? slot_of_target(c->contract_target) : -1;
  if (ck_info[k].arg == CK_ARG_COUNT) {
    int ok = k == IS_CK_INPUTS ? (c->contract_target == 5 || c->contract_target == 8)
                               : (c->contract_target == 0 || c->contract_target == 2);
    return ok ? 0
              : spec_inconsistent(&grammar, c, "contract", err, len,
                                  "the count must break the arity (inputs 5|8, outputs 0|2)");
  }
  if (ck_info[k].arg != CK_ARG_NONE && !(ck_info[k].slots & S(slot)))
    return spec_inconsistent(&grammar, c, "contract", err, len, "%s cannot target %s", ck_names[k], slot_names[slot]);
  if (((slot == IS_IN_PAST_KEY || slot == IS_IN_PAST_VALUE) || k == IS_CK_PAST_UNPAIRED || k == IS_CK_PRESENT_MIXED) &&
      c->past_seq == 0)
    return spec_inconsistent(&grammar, c, "contract", err, len, "needs a past (sp > 0)");
  if ((slot >= IS_INPUT_COUNT + 1 || k == IS_CK_PRESENT_MIXED) && c->n_outputs != 3)
    return spec_inconsistent(&grammar, c, "contract", err, len, "needs the present outputs (out=3)");
  if (slot == IS_IN_BIAS && !case_has_bias(c))
    return spec_inconsistent(&grammar, c, "contract", err, len, "needs a bias");
  if ((k == IS_CK_CAP_NO_BIAS || k == IS_CK_CAP_NO_PAST) && !c->capacity)
    return spec_inconsistent(&grammar, c, "contract", err, len, "needs present=cap");
  if (k == IS_CK_CAP_NO_PAST && c->past_seq == c->current_seq)
    return spec_inconsistent(&grammar, c, "contract", err, len,
                             "needs sp != sc, or the present would be a valid growing one");
  if (k == IS_CK_DTYPE && c->contract_dtype == (slot == IS_IN_INDICES ? c->index_dt : c->dt))
    return spec_inconsistent(&grammar, c, "contract", err, len, "the dtype is the one %s should have",
                             slot_names[slot]);
  return 0;
}

static int check_family(const is_case *c, char *err, size_t len) {
  long long bound[IS_CASE_MAX_BATCH];
  switch (c->family) {
  case IS_FAMILY_INDEXVIOL:
    if (c->viol_b >= c->batch || c->viol_h >= c->index_heads || c->viol_q >= c->q_seq)
      return spec_inconsistent(&grammar, c, "viol", err, len, "the row is outside [b=%lld, ih=%lld, sq=%lld]", c->batch,
                               c->index_heads, c->q_seq);
    if (c->batch > IS_CASE_MAX_BATCH)
      return spec_inconsistent(&grammar, c, "b", err, len, "is.indexviol allows b <= %d", IS_CASE_MAX_BATCH);
    cases_is_bounds(c, bound);
    if (!plant_feasible(c->viol_rule, c->viol_column, c->selected_width, bound[c->viol_b]))
      return spec_inconsistent(&grammar, c, "viol", err, len,
                               "cannot be planted at that column with k=%lld and bound %lld", c->selected_width,
                               bound[c->viol_b]);
    return 0;
  case IS_FAMILY_CAPFRONT:
    return c->capacity ? 0 : spec_inconsistent(&grammar, c, "present", err, len, "is.capfront needs present=cap");
  case IS_FAMILY_MASKED:
    if (!case_has_bias(c)) return spec_inconsistent(&grammar, c, "bias", err, len, "is.masked needs a bias");
    if (c->masked_rows > c->batch * c->num_heads * c->q_seq)
      return spec_inconsistent(&grammar, c, "masked", err, len, "more than the b*n*sq = %lld rows",
                               c->batch * c->num_heads * c->q_seq);
    return 0;
  case IS_FAMILY_CONTRACT: return check_contract(c, err, len);
  default: return 0;
  }
}

/* The rules a spec must meet beyond each value's own syntax. */
static int check_case(const is_case *c, char *err, size_t len) {
  if (c->num_heads % case_kv(c))
    return spec_inconsistent(&grammar, c, "nkv", err, len, "does not divide n=%lld", c->num_heads);
  if (c->index_heads != 1 && c->index_heads != c->num_heads)
    return spec_inconsistent(&grammar, c, "ih", err, len, "index heads must be 1 or n=%lld", c->num_heads);
  if (check_capacity(c, err, len)) return -1;
  if (case_has_bias(c) && c->family != IS_FAMILY_BIAS && !bias_broadcasts(c))
    return spec_inconsistent(&grammar, c, "bias", err, len, "does not broadcast to [%lld, %lld, %lld, %lld]", c->batch,
                             c->num_heads, c->q_seq, case_cache(c));
  return check_family(c, err, len);
}

/* ------------------------------------------------------------- parse */

int cases_is_parse(const char *spec, is_case *c, char *err, size_t err_len) {
  memset(c, 0, sizeof *c);
  c->bias_rank = -1;
  c->contract_target = -1;
  if (spec_parse_tokens(&grammar, spec, c, err, err_len)) return -1;
  return check_case(c, err, err_len);
}

/* ------------------------------------------------------------ the plan */

/* The tensors' metadata before allocation, and what the operator is told. */
typedef struct is_plan {
  tensor in[IS_CASE_MAX_INPUTS];
  tensor out[IS_OUTPUT_COUNT];
  int n_in, n_out;
  index_share_attrs attrs;
} is_plan;

static void shape4(tensor *t, dtype dt, long long d0, long long d1, long long d2, long long d3) {
  memset(t, 0, sizeof *t);
  t->dt = dt;
  t->rank = 4;
  t->shape[0] = d0, t->shape[1] = d1, t->shape[2] = d2, t->shape[3] = d3;
}

static long long smallest_non_divisor(long long n) {
  long long k = 2;
  while (n % k == 0) k++;
  return k;
}

/* The K/V head count the tensors get (kv_not_divisor changes it). */
static long long plan_kv(const is_case *c) {
  return c->contract == IS_CK_KV_NOT_DIVISOR ? smallest_non_divisor(c->num_heads) : case_kv(c);
}

static void plan_present(const is_case *c, tensor *t) {
  shape4(t, c->dt, c->batch, plan_kv(c), case_cache(c), c->head_size);
}

/* The valid configuration the spec's common tokens describe. */
static void plan_build(const is_case *c, is_plan *p) {
  long long B = c->batch, H = c->head_size, kv = plan_kv(c);
  memset(p, 0, sizeof *p);
  shape4(&p->in[IS_IN_QUERY], c->dt, B, c->num_heads, c->q_seq, H);
  shape4(&p->in[IS_IN_KEY], c->dt, B, kv, c->current_seq, H);
  p->in[IS_IN_VALUE] = p->in[IS_IN_KEY];
  if (c->past_seq > 0) {
    shape4(&p->in[IS_IN_PAST_KEY], c->dt, B, kv, c->past_seq, H);
    p->in[IS_IN_PAST_VALUE] = p->in[IS_IN_PAST_KEY];
  }
  shape4(&p->in[IS_IN_INDICES], c->index_dt, B, c->index_heads, c->q_seq, c->selected_width);
  if (case_has_bias(c)) {
    p->in[IS_IN_BIAS].dt = c->dt;
    p->in[IS_IN_BIAS].rank = c->bias_rank;
    memcpy(p->in[IS_IN_BIAS].shape, c->bias_shape, sizeof c->bias_shape);
  }
  p->n_in = case_has_bias(c) ? 7 : 6;
  shape4(&p->out[IS_OUT_Y], c->dt, B, c->num_heads, c->q_seq, H);
  if (c->n_outputs == 3) {
    plan_present(c, &p->out[IS_OUT_PRESENT_KEY]);
    p->out[IS_OUT_PRESENT_VALUE] = p->out[IS_OUT_PRESENT_KEY];
  }
  p->n_out = c->n_outputs;
  p->attrs.num_heads = c->num_heads;
  p->attrs.kv_num_heads = c->contract == IS_CK_KV_NOT_DIVISOR ? kv : c->kv_num_heads;
  p->attrs.has_scale = c->has_scale;
  p->attrs.scale = c->scale;
}

/* An is.contract mutation of one tensor (the kinds that take a TARGET). */
static void plan_mutate_target(const is_case *c, is_plan *p) {
  int slot = slot_of_target(c->contract_target);
  tensor *t = slot < IS_INPUT_COUNT ? &p->in[slot] : &p->out[slot - IS_INPUT_COUNT];
  if (slot == IS_IN_BIAS && c->contract != IS_CK_DTYPE) { /* name the axis: make all four explicit */
    long long d4[4];
    bias_dims4(t->rank, t->shape, d4);
    t->rank = 4;
    memcpy(t->shape, d4, sizeof d4);
  }
  switch (c->contract) {
  case IS_CK_RANK: /* [d0 * d1, d2, d3] */
    t->shape[0] *= t->shape[1], t->shape[1] = t->shape[2], t->shape[2] = t->shape[3], t->shape[3] = 0;
    t->rank = 3;
    break;
  case IS_CK_BATCH: t->shape[0] = c->batch + 1; break;
  case IS_CK_HEADS:
    t->shape[1] = slot == IS_IN_INDICES || slot == IS_IN_BIAS ? c->num_heads + 1 : t->shape[1] + 1;
    break;
  case IS_CK_SEQ:
    t->shape[2] = slot == IS_IN_BIAS ? c->q_seq + 1 : slot > IS_INPUT_COUNT ? case_total(c) + 1 : t->shape[2] + 1;
    break;
  case IS_CK_HEAD_SIZE: t->shape[3] += 1; break;
  case IS_CK_PAST_UNPAIRED:
  case IS_CK_ABSENT: memset(t, 0, sizeof *t); break;
  case IS_CK_DTYPE: t->dt = c->contract_dtype; break;
  default: /* not a kind that takes a target */
    fprintf(stderr, "%s:%d: contract kind %d has no target\n", __FILE__, __LINE__, (int)c->contract);
    abort();
  }
  /* batch/heads/head_size:past_key break the past's own shape: both past
  ** tensors get it, so they still match each other (past_value: it alone). */
  if (slot == IS_IN_PAST_KEY && (c->contract == IS_CK_BATCH || c->contract == IS_CK_HEADS || c->contract == IS_CK_HEAD_SIZE))
    memcpy(p->in[IS_IN_PAST_VALUE].shape, t->shape, sizeof t->shape);
}

static void plan_mutate(const is_case *c, is_plan *p) {
  static const float scale_of[] = {0.0f, -0.0f};
  switch (c->contract) {
  case IS_CK_NONE:
  case IS_CK_KV_NOT_DIVISOR: return; /* plan_build did it */
  case IS_CK_PRESENT_MIXED:
    p->out[IS_OUT_PRESENT_KEY].shape[2] = case_total(c);
    p->out[IS_OUT_PRESENT_VALUE].shape[2] = c->past_seq;
    return;
  case IS_CK_NUM_HEADS_ZERO: p->attrs.num_heads = 0; return;
  case IS_CK_NUM_HEADS_NEGATIVE: p->attrs.num_heads = -1; return;
  case IS_CK_KV_NEGATIVE: p->attrs.kv_num_heads = -1; return;
  case IS_CK_SCALE_ZERO:
  case IS_CK_SCALE_NEG_ZERO: p->attrs.has_scale = 1, p->attrs.scale = scale_of[c->contract - IS_CK_SCALE_ZERO]; return;
  case IS_CK_SCALE_NEGATIVE: p->attrs.has_scale = 1, p->attrs.scale = -(c->has_scale ? c->scale : 0.125f); return;
  case IS_CK_SCALE_NAN: p->attrs.has_scale = 1, p->attrs.scale = nx_f32_nan(); return;
  case IS_CK_SCALE_INF: p->attrs.has_scale = 1, p->attrs.scale = nx_f32_from_bits(0x7f800000u); return;
  case IS_CK_INPUTS:
    p->n_in = c->contract_target;
    if (p->n_in == 5) memset(&p->in[IS_IN_INDICES], 0, 2 * sizeof(tensor));
    else p->in[IS_EXTRA_INPUT].dt = c->dt, p->in[IS_EXTRA_INPUT].rank = 1, p->in[IS_EXTRA_INPUT].shape[0] = 1;
    return;
  case IS_CK_OUTPUTS:
    p->n_out = c->contract_target;
    if (p->n_out == 2) plan_present(c, &p->out[IS_OUT_PRESENT_KEY]);
    memset(&p->out[p->n_out], 0, (size_t)(IS_OUTPUT_COUNT - p->n_out) * sizeof(tensor));
    return;
  case IS_CK_CAP_NO_BIAS: memset(&p->in[IS_IN_BIAS], 0, sizeof(tensor)), p->n_in = 6; return;
  case IS_CK_CAP_NO_PAST: memset(&p->in[IS_IN_PAST_KEY], 0, 2 * sizeof(tensor)); return;
  case IS_CK_K_ZERO: p->in[IS_IN_INDICES].shape[3] = 0; return;
  default: plan_mutate_target(c, p); return;
  }
}

/* Total bytes of the plan's tensors; -1 when that overflows 64 bits. */
static int plan_bytes(const is_plan *p, unsigned long long *total) {
  const tensor *all[IS_CASE_MAX_INPUTS + IS_OUTPUT_COUNT];
  int i, a;
  *total = 0;
  for (i = 0; i < IS_CASE_MAX_INPUTS; i++) all[i] = &p->in[i];
  for (i = 0; i < IS_OUTPUT_COUNT; i++) all[IS_CASE_MAX_INPUTS + i] = &p->out[i];
  for (i = 0; i < IS_CASE_MAX_INPUTS + IS_OUTPUT_COUNT; i++) {
    unsigned long long n = all[i]->dt == DTYPE_NONE ? 0 : dtype_size(all[i]->dt);
    for (a = 0; a < all[i]->rank; a++) {
      unsigned long long d = (unsigned long long)all[i]->shape[a];
      if (d && n > ULLONG_MAX / d) return -1;
      n *= d;
    }
    if (n > ULLONG_MAX - *total) return -1;
    *total += n;
  }
  return 0;
}

/* -------------------------------------------------------------- fills */

static float f32_inf(int negative) { return nx_f32_from_bits(negative ? 0xff800000u : 0x7f800000u); }

/* Stores v into element i whatever the tensor's dtype (a contract case may
** give a float input an integer dtype: it then gets v truncated, 0 for non-finite). */
static void store_any(tensor *t, long long i, float v) {
  long long x = v > -1e9f && v < 1e9f ? (long long)v : 0;
  switch (t->dt) {
  case DTYPE_F32:
  case DTYPE_F16:
  case DTYPE_BF16: tensor_store_f32(t, i, v); break;
  case DTYPE_I32: ((int32_t *)t->data)[i] = (int32_t)x; break;
  case DTYPE_I64: ((int64_t *)t->data)[i] = x; break;
  case DTYPE_U8: ((uint8_t *)t->data)[i] = (uint8_t)x; break;
  default: break;
  }
}

/* Stores index value v (an index tensor may have a float dtype in is.contract). */
static void store_index(tensor *t, long long i, long long v) {
  switch (t->dt) {
  case DTYPE_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
  case DTYPE_I64: ((int64_t *)t->data)[i] = v; break;
  case DTYPE_U8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
  case DTYPE_F32:
  case DTYPE_F16:
  case DTYPE_BF16: tensor_store_f32(t, i, (float)v); break;
  default: break;
  }
}

static void fill_values(const is_case *c, int step, tensor *t, int slot) {
  long long i, n = tensor_numel(t);
  for (i = 0; i < n; i++)
    store_any(t, i, cases_rng_normalish(cases_rng_u64(c->seed, IS_STREAM_TENSOR + (uint32_t)slot, (uint32_t)step, (uint64_t)i)));
}

/*
** One is.numeric special into element i of a float tensor, written as raw
** storage bits where the value matters bit for bit (subnormal, NaN, inf).
*/
static void put_special(tensor *t, long long i, is_special kind, uint64_t bits) {
  unsigned sign = (unsigned)(bits & 1u);
  bits >>= 1;
  if (kind == IS_SPECIAL_MIXED) kind = (is_special)(IS_SPECIAL_HUGE + (int)(bits % 4u)), bits >>= 2;
  if (kind == IS_SPECIAL_HUGE) {
    float m = cases_rng_uniform(bits, 0.5f, 1.0f) * (t->dt == DTYPE_F16 ? 6.0e4f : 1.0e30f); /* f16 max 65504 */
    tensor_store_f32(t, i, sign ? -m : m);
  } else if (t->dt == DTYPE_F32) {
    uint32_t u = kind == IS_SPECIAL_SUBNORMAL ? 1u + (uint32_t)(bits % 0x7fffffu)
                 : kind == IS_SPECIAL_NAN     ? 0x7fc00000u | (uint32_t)(bits & 0x3fffffu)
                                              : 0x7f800000u;
    ((uint32_t *)t->data)[i] = u | (uint32_t)sign << 31;
  } else {
    int half = t->dt == DTYPE_F16;
    unsigned u = kind == IS_SPECIAL_SUBNORMAL ? 1u + (unsigned)(bits % (half ? 0x3ffu : 0x7fu))
                 : kind == IS_SPECIAL_NAN     ? (half ? 0x7e00u | (unsigned)(bits & 0x1ffu) : 0x7fc0u | (unsigned)(bits & 0x3fu))
                                              : (half ? 0x7c00u : 0x7f80u);
    ((uint16_t *)t->data)[i] = (uint16_t)(u | sign << 15);
  }
}

static int slot_gets_specials(const is_case *c, int slot) {
  if (c->family != IS_FAMILY_NUMERIC) return 0;
  switch (slot) {
  case IS_IN_QUERY: return (c->num_in & IS_NUM_IN_Q) != 0;
  case IS_IN_KEY:
  case IS_IN_PAST_KEY: return (c->num_in & IS_NUM_IN_K) != 0;
  case IS_IN_VALUE:
  case IS_IN_PAST_VALUE: return (c->num_in & IS_NUM_IN_V) != 0;
  default: return 0;
  }
}

static void fill_specials(const is_case *c, int step, tensor *t, int slot) {
  long long i, n = tensor_numel(t);
  if (!dtype_is_float(t->dt)) return;
  for (i = 0; i < n; i++) {
    uint64_t bits = cases_rng_u64(c->seed, IS_STREAM_SPECIAL + (uint32_t)slot, (uint32_t)step, (uint64_t)i);
    if (bits % 1000u < (unsigned)c->num_rate) put_special(t, i, c->num, bits >> 10);
  }
}

/* n distinct values of [lo, hi) in increasing order (Floyd's sampling); out holds n. */
static void sample_sorted(cases_rng *r, long long n, long long lo, long long hi, long long *out) {
  long long j, m = 0;
  for (j = hi - lo - n; j < hi - lo; j++) {
    long long t = cases_rng_next_range(r, 0, j), a = 0, z = m;
    while (a < z) { /* lower bound of t */
      long long mid = a + (z - a) / 2;
      if (out[mid] < t) a = mid + 1;
      else z = mid;
    }
    if (a < m && out[a] == t) {
      out[m++] = j; /* j is above everything drawn so far */
      continue;
    }
    memmove(out + a + 1, out + a, (size_t)(m - a) * sizeof *out);
    out[a] = t;
    m++;
  }
  for (j = 0; j < n; j++) out[j] += lo;
}

/*
** Valid index rows: each row gets 1..min(K, bound) strictly increasing keys
** below its batch's bound, then -1 padding.  A bound of 0 (an is.capfront
** valid length 0) draws below the capacity instead, so every key is out of
** range.  Works on the tensor's actual shape (right-aligned to 4 dims), so a
** contract case's wrong shape still gets rows.
*/
static int fill_indices(const is_case *c, int step, tensor *ix, const long long *bound) {
  long long d4[4], K, rows, r, col, *keys;
  if (ix->dt == DTYPE_NONE || tensor_numel(ix) == 0) return 0;
  bias_dims4(ix->rank, ix->shape, d4);
  K = d4[3];
  rows = tensor_numel(ix) / K;
  if (!(keys = malloc((size_t)K * sizeof *keys))) return -1;
  for (r = 0; r < rows; r++) {
    long long b = r / (d4[1] * d4[2]), draw, n;
    cases_rng rr;
    if (b >= c->batch) b = c->batch - 1;
    draw = bound[b] > 0 ? bound[b] : (case_cache(c) > 0 ? case_cache(c) : 1);
    cases_rng_init(&rr, c->seed, IS_STREAM_ROWS, (uint32_t)step, (uint64_t)r << 20);
    n = 1 + cases_rng_next_range(&rr, 0, (K < draw ? K : draw) - 1);
    sample_sorted(&rr, n, 0, draw, keys);
    for (col = 0; col < K; col++) store_index(ix, r * K + col, col < n ? keys[col] : -1);
  }
  free(keys);
  return 0;
}

/* -inf, +inf or NaN for a bias fill kind (mixed: one of the three). */
static float bias_nonfinite(is_fill kind, uint64_t bits) {
  if (kind == IS_FILL_MIXED) kind = (is_fill)(IS_FILL_NEG_INF + (int)(bits % 3u));
  if (kind == IS_FILL_POS_INF) return f32_inf(0);
  if (kind == IS_FILL_NAN) return nx_f32_nan();
  return f32_inf(1); /* neginf, and the tail of families without a tail knob */
}

typedef struct bias_fill {
  const is_case *c;
  int step;
  long long d4[4];
  unsigned char *gap; /* [d4[0]][d4[3]]: -inf gap columns, or NULL */
} bias_fill;

static long long bias_valid_len(const bias_fill *f, long long bb) {
  long long b = f->d4[0] == 1 ? 0 : bb < f->c->batch ? bb : f->c->batch - 1;
  return f->c->valid_len[b];
}

/* The frontier anchor: (bb, 0, 0, vlen - 1) stays finite, whatever else happens. */
static int bias_is_anchor(const bias_fill *f, const long long *co) {
  long long vl = bias_valid_len(f, co[0]);
  return co[1] == 0 && co[2] == 0 && vl > 0 && (f->d4[3] == 1 || co[3] == vl - 1);
}

/* Chooses each bias batch's gap columns, below its anchor column. */
static int bias_make_gaps(bias_fill *f) {
  long long bb, i, *cols;
  f->gap = NULL;
  if (!f->c->capacity || f->c->gaps == 0 || f->d4[3] <= 1) return 0;
  if (!(f->gap = calloc((size_t)(f->d4[0] * f->d4[3]) + 1, 1))) return -1;
  if (!(cols = malloc((size_t)f->c->gaps * sizeof *cols))) {
    free(f->gap);
    return -1;
  }
  for (bb = 0; bb < f->d4[0]; bb++) {
    long long room = bias_valid_len(f, bb) - 1, n = f->c->gaps < room ? f->c->gaps : room;
    cases_rng r;
    if (n <= 0) continue;
    cases_rng_init(&r, f->c->seed, IS_STREAM_GAPS, (uint32_t)f->step, (uint64_t)bb << 20);
    sample_sorted(&r, n, 0, room, cols);
    for (i = 0; i < n; i++)
      if (cols[i] < f->d4[3]) f->gap[bb * f->d4[3] + cols[i]] = 1;
  }
  free(cols);
  return 0;
}

/* A capacity case's bias value at co (flat e), given the random finite v. */
static float bias_capacity_value(const bias_fill *f, long long e, const long long *co, float v) {
  const is_case *c = f->c;
  long long vl = bias_valid_len(f, co[0]);
  uint64_t tail_bits = cases_rng_u64(c->seed, IS_STREAM_TAIL, (uint32_t)f->step, (uint64_t)e);
  uint64_t inner_bits = cases_rng_u64(c->seed, IS_STREAM_INNER, (uint32_t)f->step, (uint64_t)e);
  if (f->d4[3] == 1) return vl > 0 ? v : bias_nonfinite(c->tail, tail_bits); /* one value for every column */
  if (co[3] >= vl) return bias_nonfinite(c->tail, tail_bits);
  if (bias_is_anchor(f, co)) return v;
  if (f->gap && f->gap[co[0] * f->d4[3] + co[3]]) return f32_inf(1);
  if (c->inner != IS_FILL_NONE && inner_bits % 8u == 0) return bias_nonfinite(c->inner, inner_bits >> 3);
  return v;
}

/*
** At capacity a masked row must not select its batch's anchor column
** vlen - 1, which stays finite: drop it from the row (the largest key, so
** the last before the padding), or move it to vlen - 2 when it is alone.
*/
static void mask_drop_anchor_key(const is_case *c, tensor *ix, long long base, long long b) {
  long long vl = c->valid_len[b], col, last = -1;
  for (col = 0; col < c->selected_width && tensor_load_index(ix, base + col) >= 0; col++) last = col;
  if (vl < 2 || last < 0 || tensor_load_index(ix, base + last) != vl - 1) return;
  store_index(ix, base + last, last > 0 ? -1 : vl - 2);
}

/* is.masked: every selected key of the chosen rows gets -inf (the anchor excepted). */
static int bias_mask_rows(const bias_fill *f, tensor *bias, tensor *ix) {
  const is_case *c = f->c;
  long long R = c->batch * c->num_heads * c->q_seq, K = c->selected_width, i, col, *rows;
  cases_rng r;
  if (!(rows = malloc((size_t)c->masked_rows * sizeof *rows))) return -1;
  cases_rng_init(&r, c->seed, IS_STREAM_MASK, (uint32_t)f->step, 0);
  sample_sorted(&r, c->masked_rows, 0, R, rows);
  for (i = 0; i < c->masked_rows; i++) {
    long long b = rows[i] / (c->num_heads * c->q_seq), h = rows[i] / c->q_seq % c->num_heads, q = rows[i] % c->q_seq;
    long long base = ((b * c->index_heads + (c->index_heads == 1 ? 0 : h)) * c->q_seq + q) * K;
    if (c->capacity) mask_drop_anchor_key(c, ix, base, b);
    for (col = 0; col < K; col++) {
      long long key = tensor_load_index(ix, base + col), co[4];
      if (key < 0) break; /* trailing padding */
      co[0] = f->d4[0] == 1 ? 0 : b, co[1] = f->d4[1] == 1 ? 0 : h;
      co[2] = f->d4[2] == 1 ? 0 : q, co[3] = f->d4[3] == 1 ? 0 : key;
      if (c->capacity && bias_is_anchor(f, co)) continue;
      store_any(bias, ((co[0] * f->d4[1] + co[1]) * f->d4[2] + co[2]) * f->d4[3] + co[3], f32_inf(1));
    }
  }
  free(rows);
  return 0;
}

/*
** The bias: random finite values; at capacity, the frontier of batch b sits
** at vlen[b] (columns beyond it non-finite, per tail; the anchor at column
** vlen - 1 of head 0, query 0 finite), with gaps and inner specials below it;
** then is.masked's rows (which may drop a key from their index rows, see
** mask_drop_anchor_key).
*/
static int fill_bias(const is_case *c, int step, tensor *bias, tensor *ix) {
  bias_fill f;
  long long e, n = tensor_numel(bias), co[4];
  int rc = 0;
  f.c = c, f.step = step;
  bias_dims4(bias->rank, bias->shape, f.d4);
  if (bias_make_gaps(&f)) return -1;
  for (e = 0; e < n; e++) {
    float v = 2.0f * cases_rng_normalish(cases_rng_u64(c->seed, IS_STREAM_TENSOR + IS_IN_BIAS, (uint32_t)step, (uint64_t)e));
    co[3] = e % f.d4[3], co[2] = e / f.d4[3] % f.d4[2], co[1] = e / (f.d4[3] * f.d4[2]) % f.d4[1];
    co[0] = e / (f.d4[3] * f.d4[2] * f.d4[1]);
    store_any(bias, e, c->capacity ? bias_capacity_value(&f, e, co, v) : v);
  }
  if (c->family == IS_FAMILY_MASKED) rc = bias_mask_rows(&f, bias, ix);
  free(f.gap);
  return rc;
}

/* --------------------------------------------------- planted rows */

/*
** The offending value for `rule` (not after_padding, duplicate or
** not_increasing, whose value follows from the prefix): a few kinds each,
** including the i64 values whose low 32 bits are a valid index (a kernel
** that truncates would accept them).
*/
static long long plant_value(int rule, dtype dt, long long bnd, cases_rng *r) {
  long long small = cases_rng_next_range(r, 0, bnd > 0 ? bnd - 1 : 0);
  int kind = (int)cases_rng_next_range(r, 0, dt == DTYPE_I64 ? 3 : 2);
  if (rule == INDEX_RULE_SENTINEL) {
    switch (kind) {
    case 0: return -2;
    case 1: return -3 - cases_rng_next_range(r, 0, 1000);
    case 2: return dt == DTYPE_I64 ? LLONG_MIN : INT32_MIN;
    default: return -(1ll << 32) + small; /* low 32 bits: small */
    }
  }
  switch (kind) { /* out of range */
  case 0: return bnd;
  case 1: {
    long long v = bnd + 1 + cases_rng_next_range(r, 0, 1000);
    return dt == DTYPE_I32 && v > INT32_MAX ? INT32_MAX : v; /* INT32_MAX > any bound (IS_DIM_MAX) */
  }
  case 2: return dt == DTYPE_I64 ? LLONG_MAX : INT32_MAX;
  default: return (1ll << 32) + small; /* low 32 bits: small */
  }
}

int cases_is_plant(const is_case *c, tensor *ix, int rule, long long b, long long h, long long q, long long column,
                   const long long *bound) {
  long long K, base, bnd, col, prefix, pad_from, *keys;
  cases_rng r;
  uint64_t key;
  if ((ix->dt != DTYPE_I32 && ix->dt != DTYPE_I64) || ix->rank != 4) return -1;
  if (b < 0 || b >= ix->shape[0] || h < 0 || h >= ix->shape[1] || q < 0 || q >= ix->shape[2]) return -1;
  K = ix->shape[3], bnd = bound[b];
  if (!plant_feasible(rule, column, K, bnd)) return -1;
  base = ((b * ix->shape[1] + h) * ix->shape[2] + q) * K;
  key = cases_rng_u64(c->seed, IS_STREAM_PLANT, (uint32_t)rule, (uint64_t)b);
  key = cases_rng_u64(key, IS_STREAM_PLANT, (uint32_t)h, (uint64_t)q);
  cases_rng_init(&r, key, IS_STREAM_PLANT, 0, (uint64_t)(column + 1) << 20);
  if (rule == INDEX_RULE_ALL_PADDING) {
    for (col = 0; col < K; col++) store_index(ix, base + col, -1);
    return 0;
  }
  if (!(keys = malloc((size_t)(column + 1) * sizeof *keys))) return -1;
  /* The valid prefix: `prefix` keys, then -1 up to the column (after_padding only). */
  prefix = column, pad_from = column;
  if (rule == INDEX_RULE_AFTER_PADDING) {
    pad_from = cases_rng_next_range(&r, 0, (column - 1 < bnd - 1 ? column - 1 : bnd - 1));
    sample_sorted(&r, pad_from + 1, 0, bnd, keys); /* the last one goes after the padding */
    prefix = pad_from;
  } else {
    sample_sorted(&r, prefix, rule == INDEX_RULE_NOT_INCREASING ? 1 : 0, bnd, keys);
  }
  for (col = 0; col < column; col++) store_index(ix, base + col, col < pad_from ? keys[col] : -1);
  switch (rule) {
  case INDEX_RULE_AFTER_PADDING: store_index(ix, base + column, keys[prefix]); break;
  case INDEX_RULE_DUPLICATE: store_index(ix, base + column, keys[prefix - 1]); break;
  case INDEX_RULE_NOT_INCREASING: store_index(ix, base + column, cases_rng_next_range(&r, 0, keys[prefix - 1] - 1)); break;
  default: store_index(ix, base + column, plant_value(rule, ix->dt, bnd, &r)); break;
  }
  /* After it: padding, or junk that must not matter (the first violation wins). */
  if (cases_rng_next(&r) & 1u)
    for (col = column + 1; col < K; col++) store_index(ix, base + col, -1);
  else
    for (col = column + 1; col < K; col++) store_index(ix, base + col, cases_rng_next_range(&r, -3, bnd + 3));
  free(keys);
  return 0;
}

/* ------------------------------------------------------ materialize */

void cases_is_release(tensor inputs[IS_CASE_MAX_INPUTS], tensor outputs[IS_OUTPUT_COUNT]) {
  int i;
  for (i = 0; i < IS_CASE_MAX_INPUTS; i++) tensor_free(&inputs[i]);
  for (i = 0; i < IS_OUTPUT_COUNT; i++) tensor_free(&outputs[i]);
}

static int alloc_all(tensor *t, int n, char *err, size_t len) {
  int i;
  for (i = 0; i < n; i++) {
    if (t[i].dt == DTYPE_NONE) continue;
    if (tensor_alloc(&t[i])) {
      t[i].data = NULL;
      return spec_set_err(err, len, "out of memory allocating %zu bytes", tensor_bytes(&t[i])), -1;
    }
  }
  return 0;
}

static int fill_inputs(const is_case *c, int step, tensor *in, const long long *bound) {
  int slot;
  for (slot = 0; slot < IS_CASE_MAX_INPUTS; slot++) {
    if (in[slot].dt == DTYPE_NONE || slot == IS_IN_INDICES || slot == IS_IN_BIAS) continue;
    fill_values(c, step, &in[slot], slot);
    if (slot_gets_specials(c, slot)) fill_specials(c, step, &in[slot], slot);
  }
  if (fill_indices(c, step, &in[IS_IN_INDICES], bound)) return -1;
  if (c->family == IS_FAMILY_INDEXVIOL &&
      cases_is_plant(c, &in[IS_IN_INDICES], c->viol_rule, c->viol_b, c->viol_h, c->viol_q, c->viol_column, bound)) {
    fprintf(stderr, "%s:%d: the parsed viol= cannot be planted\n", __FILE__, __LINE__);
    abort(); /* check_case proved it feasible */
  }
  if (in[IS_IN_BIAS].dt != DTYPE_NONE && fill_bias(c, step, &in[IS_IN_BIAS], &in[IS_IN_INDICES])) return -1;
  return 0;
}

int cases_is_materialize(const is_case *c, int step, tensor inputs[IS_CASE_MAX_INPUTS], int *n_inputs,
                         tensor outputs[IS_OUTPUT_COUNT], int *n_outputs, index_share_attrs *attrs, char *err,
                         size_t err_len) {
  size_t budget = c->budget_bytes ? c->budget_bytes : CASES_IS_BUDGET_DEFAULT;
  unsigned long long need;
  long long *bound = NULL;
  is_plan p;
  int rc = -1;
  memset(inputs, 0, IS_CASE_MAX_INPUTS * sizeof(tensor));
  memset(outputs, 0, IS_OUTPUT_COUNT * sizeof(tensor));
  *n_inputs = *n_outputs = 0;
  if (step < 0 || step >= c->steps)
    return spec_set_err(err, err_len, "step %d is outside the case's steps=%d", step, c->steps), -1;
  plan_build(c, &p);
  plan_mutate(c, &p);
  if (plan_bytes(&p, &need))
    return spec_set_err(err, err_len, "case needs more than %llu bytes, over the budget of %zu", ULLONG_MAX, budget), -1;
  if (need > budget) return spec_set_err(err, err_len, "case needs %llu bytes, over the budget of %zu", need, budget), -1;
  memcpy(inputs, p.in, sizeof p.in);
  memcpy(outputs, p.out, sizeof p.out);
  if (alloc_all(inputs, IS_CASE_MAX_INPUTS, err, err_len) || alloc_all(outputs, IS_OUTPUT_COUNT, err, err_len)) goto done;
  if (!(bound = malloc((size_t)c->batch * sizeof *bound))) {
    spec_set_err(err, err_len, "out of memory");
    goto done;
  }
  cases_is_bounds(c, bound);
  if (fill_inputs(c, step, inputs, bound)) {
    spec_set_err(err, err_len, "out of memory filling the inputs");
    goto done;
  }
  *n_inputs = p.n_in, *n_outputs = p.n_out, *attrs = p.attrs;
  rc = 0;
done:
  free(bound);
  if (rc) cases_is_release(inputs, outputs);
  return rc;
}

/* -------------------------------------------------------- enumerators */

/*
** Each family generator turns case number i into a configuration: i modulo
** the family's combinations picks the combination (so `count` >= combos
** covers every one), and the cursor r draws everything else.  Sizes stay
** small (b <= 3, n <= 8, seqs <= 48, h <= 64, k <= 32) so a suite of a
** thousand cases runs through the oracle in seconds.
*/

static long long pick(cases_rng *r, const long long *v, int n) { return v[cases_rng_next_range(r, 0, n - 1)]; }
static int coin(cases_rng *r, int percent) { return cases_rng_next_range(r, 0, 99) < percent; }
static dtype float_dtype(unsigned long long i) { return (dtype)(DTYPE_F32 + (int)(i % 3u)); }

/* Rank-r bias whose axis a (of r) is full when bit a of mask is set, else 1. */
static void gen_bias(is_case *c, int rank, unsigned mask) {
  long long target[4] = {c->batch, c->num_heads, c->q_seq, case_cache(c)};
  int a;
  c->bias_rank = rank;
  for (a = 0; a < rank; a++) c->bias_shape[a] = (mask >> a & 1u) ? target[4 - rank + a] : 1;
}

static void gen_bias_random(is_case *c, cases_rng *r) {
  int rank = (int)cases_rng_next_range(r, 0, 4);
  gen_bias(c, rank, (unsigned)cases_rng_next_range(r, 0, (1 << rank) - 1));
}

/* Valid lengths the bias can carry, mostly at least sc, at least lo. */
static void gen_vlens(is_case *c, cases_rng *r, long long lo) {
  long long b, sc = c->current_seq < c->past_seq ? c->current_seq : c->past_seq;
  c->n_valid_len = (int)c->batch;
  for (b = 0; b < c->batch; b++) {
    long long from = coin(r, 80) && sc > lo ? sc : lo;
    c->valid_len[b] = bias_k_broadcast(c) ? c->past_seq
                      : bias_b_broadcast(c) && b > 0 ? c->valid_len[0]
                                                     : cases_rng_next_range(r, from, c->past_seq);
  }
}

/* The longest past a family draws: the gate's 40, the nightly suite's 600. */
static long long past_max(int nightly) { return nightly ? 600 : 40; }

/*
** The nightly suite's larger shapes, drawn after the gate's: up to 8
** batches, 1, 2 or 4 times the heads (the group kept), head size 32..128,
** K up to 128 half the time, and 8 steps.
*/
static void gen_dims_nightly(is_case *c, cases_rng *r) {
  static const long long times[] = {1, 2, 4}, hs[] = {32, 64, 128}, wide[] = {24, 64, 128};
  long long m = pick(r, times, 3);
  int every_head = c->index_heads == c->num_heads;
  c->batch = cases_rng_next_range(r, 1, 8);
  c->num_heads *= m;
  c->kv_num_heads *= m; /* 0 (absent) stays absent */
  if (every_head) c->index_heads = c->num_heads;
  c->head_size = pick(r, hs, 3);
  if (coin(r, 50)) c->selected_width = pick(r, wide, 3);
  c->steps = 8;
}

/* Everything but the present, bias and family knobs; group 0: random; nightly: larger (gen_dims_nightly). */
static void gen_dims(is_case *c, cases_rng *r, is_family family, long long group, int nightly) {
  static const long long groups[] = {1, 2, 4}, sqs[] = {1, 1, 1, 2, 3, 4}, hs[] = {4, 8, 12, 16, 32, 64};
  long long kvh;
  c->family = family;
  c->dt = float_dtype(cases_rng_next(r));
  c->index_dt = coin(r, 50) ? DTYPE_I32 : DTYPE_I64;
  c->batch = cases_rng_next_range(r, 1, 3);
  if (!group) group = pick(r, groups, 3);
  kvh = cases_rng_next_range(r, 1, 2);
  c->num_heads = kvh * group;
  c->kv_num_heads = group == 1 && coin(r, 50) ? 0 : kvh;
  c->q_seq = pick(r, sqs, 6);
  c->current_seq = coin(r, 70) ? c->q_seq : cases_rng_next_range(r, 1, 4);
  c->head_size = pick(r, hs, 6);
  c->index_heads = coin(r, 50) ? c->num_heads : 1;
  c->selected_width = coin(r, 85) ? cases_rng_next_range(r, 1, 12) : (coin(r, 50) ? 16 : 32);
  c->n_outputs = 1;
  c->bias_rank = -1;
  if (coin(r, 40)) c->has_scale = 1, c->scale = cases_rng_uniform(cases_rng_next(r), 0.03125f, 1.0f);
  c->steps = 4;
  if (nightly) gen_dims_nightly(c, r);
}

/* present: 0 grow with 1 output, 1 grow with 3, 2 capacity. */
static void gen_present(is_case *c, int present) {
  c->n_outputs = present ? 3 : 1;
  c->capacity = present == 2;
}

/* is.valid: dtype x index dtype x group x index heads x (past, outputs, present). */
static void gen_valid(is_case *c, cases_rng *r, long long i, int nightly) {
  static const long long groups[] = {1, 2, 4};
  long long j = i % 180, variant = j / 36 % 5; /* no past: 1, 3 grow; past: 1, 3 grow, 3 cap */
  gen_dims(c, r, IS_FAMILY_VALID, groups[j / 6 % 3], nightly);
  c->dt = float_dtype((unsigned long long)j);
  c->index_dt = j / 3 % 2 ? DTYPE_I64 : DTYPE_I32;
  c->index_heads = j / 18 % 2 ? c->num_heads : 1;
  c->past_seq = variant >= 2 ? cases_rng_next_range(r, 1, past_max(nightly)) : 0;
  gen_present(c, variant < 2 ? (int)variant : (int)variant - 2);
  if (c->capacity || coin(r, 70)) gen_bias_random(c, r);
  if (c->capacity) gen_vlens(c, r, 1);
}

/* is.indexviol: rule x row (first, middle, last) x column (same) x index dtype x present. */
static void gen_indexviol(is_case *c, cases_rng *r, long long i, int nightly) {
  long long j = i % 192, rowpos, colpos, rest, K, minc;
  int cap;
  gen_dims(c, r, IS_FAMILY_INDEXVIOL, 0, nightly);
  if (j < 180) /* five rules x 3 rows x 3 columns, then the rest */
    c->viol_rule = INDEX_RULE_SENTINEL + (int)(j % 5), rowpos = j / 5 % 3, colpos = j / 15 % 3, rest = j / 45;
  else /* all_padding has no column: 3 rows, then the rest */
    c->viol_rule = INDEX_RULE_ALL_PADDING, rowpos = (j - 180) % 3, colpos = -1, rest = (j - 180) / 3;
  c->index_dt = rest % 2 ? DTYPE_I64 : DTYPE_I32;
  cap = (int)(rest / 2 % 2);
  c->batch = cases_rng_next_range(r, 2, 3);
  c->selected_width = K = cases_rng_next_range(r, 3, 12);
  if (cap) {
    c->past_seq = cases_rng_next_range(r, K + 2, past_max(nightly));
    gen_present(c, 2);
    gen_bias_random(c, r);
    gen_vlens(c, r, K); /* every bound >= K: any column is plantable */
  } else {
    if (coin(r, 50)) c->past_seq = cases_rng_next_range(r, K, past_max(nightly));
    else c->current_seq = cases_rng_next_range(r, K, K + 3);
    gen_present(c, (int)cases_rng_next_range(r, 0, 1));
    if (coin(r, 50)) gen_bias_random(c, r);
  }
  c->viol_b = rowpos == 0 ? 0 : rowpos == 1 ? c->batch / 2 : c->batch - 1;
  c->viol_h = rowpos == 0 ? 0 : rowpos == 1 ? c->index_heads / 2 : c->index_heads - 1;
  c->viol_q = rowpos == 0 ? 0 : rowpos == 1 ? c->q_seq / 2 : c->q_seq - 1;
  minc = c->viol_rule == INDEX_RULE_SENTINEL || c->viol_rule == INDEX_RULE_OUT_OF_RANGE ? 0 : 1;
  c->viol_column = colpos < 0 ? -1 : colpos == 0 ? minc : colpos == 1 ? K / 2 : K - 1;
}

/*
** is.bias: 31 broadcastable patterns (rank 0..4, each axis 1 or full) x
** present, then 40 shapes that do not broadcast (one axis full + 1 or 0, per
** rank and axis, per present), then 8 whose column axis has the other
** present's length.
*/
static void gen_bias_family(is_case *c, cases_rng *r, long long i, int nightly) {
  long long j = i % 110, target[4];
  int cap = (int)(j % 2), rank, axis = -1, variant = 0;
  if (j < 62) {
    long long p = j / 2 + 1;
    for (rank = 0; (2ll << rank) <= p; rank++) continue;
  } else if (j < 102) {
    long long pa = (j - 62) / 4;
    variant = (int)((j - 62) / 2 % 2);
    for (rank = 1; pa >= rank; rank++) pa -= rank;
    axis = (int)pa;
  } else {
    rank = 1 + (int)((j - 102) / 2), axis = rank - 1, variant = 2;
  }
  gen_dims(c, r, IS_FAMILY_BIAS, pick(r, (const long long[]){2, 4}, 2), nightly);
  c->batch = cases_rng_next_range(r, 2, 3);
  c->q_seq = cases_rng_next_range(r, 2, 4);
  if (cap || variant == 2 || coin(r, 50)) c->past_seq = cases_rng_next_range(r, 2, past_max(nightly));
  else c->current_seq = cases_rng_next_range(r, 2, 4);
  gen_present(c, cap ? 2 : (int)cases_rng_next_range(r, 0, 1));
  if (j < 62) gen_bias(c, rank, (unsigned)(j / 2 + 1 - (1ll << rank)));
  else gen_bias(c, rank, (unsigned)cases_rng_next_range(r, 0, (1 << rank) - 1));
  target[0] = c->batch, target[1] = c->num_heads, target[2] = c->q_seq, target[3] = case_cache(c);
  if (variant == 2) c->bias_shape[axis] = cap ? case_total(c) : c->past_seq; /* the other present's length */
  else if (axis >= 0) c->bias_shape[axis] = variant ? 0 : target[4 - rank + axis] + 1;
  if (cap) gen_vlens(c, r, 1);
}

/* is.capfront: valid-length edge x bias layout x tail; inner specials and gaps vary. */
static void gen_capfront(is_case *c, cases_rng *r, long long i, int nightly) {
  long long j = i % 72, edges[6], b, e;
  int layout = (int)(j / 6 % 3), rank;
  gen_dims(c, r, IS_FAMILY_CAPFRONT, 0, nightly);
  c->current_seq = cases_rng_next_range(r, 2, 4);
  c->past_seq = cases_rng_next_range(r, c->current_seq + 3, past_max(nightly));
  c->batch = layout == 2 ? 3 : cases_rng_next_range(r, 1, 3);
  gen_present(c, 2);
  edges[0] = 0, edges[1] = 1, edges[2] = c->current_seq - 1, edges[3] = c->current_seq;
  edges[4] = c->past_seq - 1, edges[5] = c->past_seq;
  if (layout == 0) { /* one bias batch for all: rank < 4, or a leading 1 */
    rank = (int)cases_rng_next_range(r, 1, 4);
    gen_bias(c, rank, ((unsigned)cases_rng_next_range(r, 0, 15) | 1u << (rank - 1)) & (rank == 4 ? 14u : 15u));
  } else {
    gen_bias(c, 4, 9u | (unsigned)cases_rng_next_range(r, 0, 3) << 1);
  }
  e = edges[j % 6];
  c->n_valid_len = (int)c->batch;
  for (b = 0; b < c->batch; b++) c->valid_len[b] = e;
  if (layout == 2) /* the edge in one batch, other edges in the rest */
    for (b = 0; b < c->batch; b++)
      if (b != i / 72 % 3) c->valid_len[b] = edges[(j % 6 + cases_rng_next_range(r, 1, 5)) % 6];
  c->tail = (is_fill)(IS_FILL_NEG_INF + j / 18 % 4);
  c->inner = (is_fill)((i / 72 + j) % 4); /* none, neginf, posinf, nan */
  c->gaps = (int)cases_rng_next_range(r, 0, 3);
}

/* is.masked: present x index heads x bias layout x how many rows. */
static void gen_masked(is_case *c, cases_rng *r, long long i, int nightly) {
  static const unsigned layouts[4][2] = {{4, 15}, {4, 13}, {4, 14}, {2, 3}}; /* full, [B,1,Sq,T], [1,N,Sq,T], [Sq,T] */
  long long j = i % 48, rows;
  int cap = (int)(j % 2), level = (int)(j / 16 % 3);
  gen_dims(c, r, IS_FAMILY_MASKED, 0, nightly);
  c->index_heads = j / 2 % 2 ? c->num_heads : 1;
  if (cap || coin(r, 50)) c->past_seq = cases_rng_next_range(r, 2, past_max(nightly));
  else c->current_seq = cases_rng_next_range(r, 2, 4); /* some keys to choose from */
  gen_present(c, cap ? 2 : (int)cases_rng_next_range(r, 0, 1));
  gen_bias(c, (int)layouts[j / 4 % 4][0], layouts[j / 4 % 4][1]);
  if (cap) gen_vlens(c, r, 2); /* a row can then avoid the finite anchor column */
  rows = c->batch * c->num_heads * c->q_seq;
  c->masked_rows = level == 0 ? 1 : level == 1 ? (rows / 2 ? rows / 2 : 1) : rows;
}

/* Wrong dtypes per contract target; DTYPE_NONE: another float dtype than the case's. */
static const dtype contract_dtypes[IS_SLOT_COUNT][3] = {
    {DTYPE_I32, DTYPE_I64, DTYPE_U8}, {DTYPE_NONE}, {DTYPE_NONE}, {DTYPE_NONE}, {DTYPE_NONE},
    {DTYPE_F32, DTYPE_BF16, DTYPE_U8}, {DTYPE_NONE, DTYPE_I64}, {DTYPE_NONE, DTYPE_I32}, {DTYPE_NONE}, {DTYPE_NONE}};

static int contract_dtype_count(int slot) {
  int n = 1;
  while (n < 3 && contract_dtypes[slot][n] != DTYPE_NONE) n++;
  return n;
}

/*
** The j-th (kind, target, dtype) of is.contract, in kind order: every target
** a kind accepts, every wrong dtype per target, both counts.  Returns the
** number of entries when j is past the end (so contract_entry(INT_MAX, ...)
** counts them).
*/
static int contract_entry(int j, is_contract_kind *kind, int *target, dtype *dt) {
  int n = 0, k, s, d;
  for (k = 1; k < IS_CK_COUNT; k++) {
    if (ck_info[k].arg == CK_ARG_COUNT) {
      for (d = 0; d < 2; d++, n++)
        if (n == j) return *kind = (is_contract_kind)k, *target = (k == IS_CK_INPUTS ? 5 + 3 * d : 2 * d), *dt = DTYPE_NONE, j;
      continue;
    }
    if (ck_info[k].arg == CK_ARG_NONE) {
      if (n++ == j) return *kind = (is_contract_kind)k, *target = -1, *dt = DTYPE_NONE, j;
      continue;
    }
    for (s = 0; s < IS_SLOT_COUNT; s++) {
      if (!(ck_info[k].slots & S(s))) continue;
      for (d = 0; d < (ck_info[k].arg == CK_ARG_TARGET_DTYPE ? contract_dtype_count(s) : 1); d++, n++)
        if (n == j) return *kind = (is_contract_kind)k, *target = target_of_slot(s), *dt = contract_dtypes[s][d], j;
    }
  }
  return n;
}

static int contract_entries(void) {
  is_contract_kind k;
  int t;
  dtype d;
  return contract_entry(INT_MAX, &k, &t, &d);
}

/* is.contract: every entry on a valid base that has what the entry breaks. */
static void gen_contract(is_case *c, cases_rng *r, long long i, int nightly) {
  is_contract_kind kind;
  int target, slot, need_past, need_out3, need_cap;
  dtype dt;
  contract_entry((int)(i % contract_entries()), &kind, &target, &dt);
  slot = target >= 0 && ck_info[kind].arg != CK_ARG_COUNT ? slot_of_target(target) : -1;
  gen_dims(c, r, IS_FAMILY_CONTRACT, 0, nightly);
  c->dt = float_dtype((unsigned long long)(i + i / contract_entries()));
  need_cap = kind == IS_CK_CAP_NO_BIAS || kind == IS_CK_CAP_NO_PAST;
  need_past = need_cap || slot == IS_IN_PAST_KEY || slot == IS_IN_PAST_VALUE || kind == IS_CK_PAST_UNPAIRED ||
              kind == IS_CK_PRESENT_MIXED;
  need_out3 = need_cap || slot > IS_INPUT_COUNT || kind == IS_CK_PRESENT_MIXED;
  if (need_past || coin(r, 50)) c->past_seq = cases_rng_next_range(r, 1, past_max(nightly));
  if (kind == IS_CK_CAP_NO_PAST && c->past_seq == c->current_seq) c->past_seq++;
  gen_present(c, need_cap || (c->past_seq && coin(r, 30)) ? 2 : need_out3 ? 1 : (int)cases_rng_next_range(r, 0, 1));
  if (need_cap || c->capacity || slot == IS_IN_BIAS || coin(r, 50)) gen_bias_random(c, r);
  if (c->capacity) gen_vlens(c, r, 1);
  c->contract = kind;
  c->contract_target = target;
  c->contract_dtype = kind != IS_CK_DTYPE ? DTYPE_NONE
                      : dt != DTYPE_NONE  ? dt
                                          : float_dtype((unsigned long long)(c->dt - DTYPE_F32 + cases_rng_next_range(r, 1, 2)));
  c->steps = 1;
}

/* is.numeric: special x where x dtype; the rate and the rest vary. */
static void gen_numeric(is_case *c, cases_rng *r, long long i, int nightly) {
  static const unsigned where[] = {IS_NUM_IN_Q, IS_NUM_IN_K, IS_NUM_IN_V, IS_NUM_IN_Q | IS_NUM_IN_K | IS_NUM_IN_V};
  static const long long rates[] = {20, 100, 500, 1000};
  long long j = i % 60;
  gen_dims(c, r, IS_FAMILY_NUMERIC, 0, nightly);
  c->dt = float_dtype((unsigned long long)(j / 20));
  if (coin(r, 50)) c->past_seq = cases_rng_next_range(r, 1, past_max(nightly));
  gen_present(c, c->past_seq && coin(r, 30) ? 2 : (int)cases_rng_next_range(r, 0, 1));
  if (c->capacity || coin(r, 50)) gen_bias_random(c, r);
  if (c->capacity) gen_vlens(c, r, 1);
  c->num = (is_special)(IS_SPECIAL_HUGE + j % 5);
  c->num_in = where[j / 5 % 4];
  c->num_rate = (int)pick(r, rates, 4);
}

typedef void (*family_gen_fn)(is_case *c, cases_rng *r, long long i, int nightly);
static const family_gen_fn family_gens[IS_FAMILY_COUNT] = {gen_valid,  gen_indexviol, gen_bias_family, gen_capfront,
                                                           gen_masked, gen_contract,  gen_numeric};

int cases_is_family_combos(const char *family) {
  static const int combos[IS_FAMILY_COUNT] = {180, 192, 110, 72, 48, 0, 60};
  int f = spec_name_lookup(family_names, IS_FAMILY_COUNT, family);
  if (f < 0) return -1;
  return f == IS_FAMILY_CONTRACT ? contract_entries() : combos[f];
}

/* count specs of family f, drawn from seed; nightly: the nightly suite's larger shapes. */
static int is_enumerate(int f, int count, unsigned long long seed, int nightly, void (*emit)(const char *spec, void *ctx),
                        void *ctx) {
  int i;
  if (f < 0) return -1;
  for (i = 0; i < count; i++) {
    char spec[IS_CASE_SPEC_MAX], err[512];
    is_case c, back;
    cases_rng r;
    memset(&c, 0, sizeof c);
    c.contract_target = -1;
    cases_rng_init(&r, seed, IS_STREAM_ENUM + (uint32_t)f, 0, (uint64_t)i << 16);
    family_gens[f](&c, &r, i, nightly);
    c.seed = cases_rng_u64(seed, IS_STREAM_ENUM + (uint32_t)f, 1, (uint64_t)i) >> 32;
    if (cases_is_format(&c, spec, sizeof spec) || cases_is_parse(spec, &back, err, sizeof err)) {
      fprintf(stderr, "%s:%d: %s case %d is not a valid spec: %s\n  %s\n", __FILE__, __LINE__, family_names[f], i, err,
              spec);
      abort(); /* a generator bug */
    }
    emit(spec, ctx);
  }
  return count;
}

int cases_is_enumerate(const char *family, int count, unsigned long long seed, void (*emit)(const char *spec, void *ctx),
                       void *ctx) {
  return is_enumerate(spec_name_lookup(family_names, IS_FAMILY_COUNT, family), count, seed, 0, emit, ctx);
}

/* ------------------------------------------------------------- suite */

#define CASES_IS_SUITE_SEED 0x62697467617465ull /* "bitgate" */

/* Passes over each family's combinations in the gate suite (at scale 1). */
static const int suite_passes[IS_FAMILY_COUNT] = {2, 1, 1, 2, 2, 2, 2};

/* The nightly suite's added passes, drawn from their own seed with the larger shapes. */
#define CASES_IS_NIGHTLY_SEED 0x6e696768746c79ull /* "nightly" */
static const int nightly_passes[IS_FAMILY_COUNT] = {2, 1, 1, 1, 1, 1, 1};

static int is_write_suite(FILE *out, int per_family_scale, int nightly) {
  spec_list l = {0};
  int f;
  for (f = 0; f < IS_FAMILY_COUNT && !l.failed; f++) {
    int combos = cases_is_family_combos(family_names[f]);
    is_enumerate(f, suite_passes[f] * per_family_scale * combos, CASES_IS_SUITE_SEED, 0, spec_list_push, &l);
    if (nightly) is_enumerate(f, nightly_passes[f] * combos, CASES_IS_NIGHTLY_SEED, 1, spec_list_push, &l);
  }
  return spec_list_write(&l, out);
}

int cases_is_write_suite(FILE *out, int per_family_scale) { return is_write_suite(out, per_family_scale, 0); }

int cases_is_write_nightly(FILE *out) { return is_write_suite(out, 1, 1); }

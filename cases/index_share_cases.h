/*
** index_share_cases.h: IndexShare cases: the spec grammar, the tensors a spec
** stands for, planted index violations, the family enumerators and the gate
** suite (DESIGN.md "Cases, ids, corpus"; operator: seed
** 000_7dfea7c512118af3.txt, oracle/index_share.h).
**
** Spec grammar.  One line of space-separated key=value tokens, written in
** this order (a key the family does not use is left out):
**
**   family=F op=IndexShare dtype=f32|f16|bf16 idx=i32|i64
**   b=B n=N nkv=none|NKV sq=SQ sc=SC sp=SP h=H ih=1|N k=K out=1|3
**   present=grow|cap vlen=none|V0,V1,.. bias=none|[]|D0x..xDr scale=none|HEX
**   [family knobs] seed=S steps=T
**
**   b, n, nkv  batch, num_heads, kv_num_heads (none: the attribute is absent)
**   sq, sc, sp query, current and past sequence lengths (sp=0: no past)
**   h, ih, k   head size, index heads, selected width K
**   out        1 (Y) or 3 (Y, present_key, present_value)
**   present    grow: present is [B, Nkv, sp + sc, H]; cap: it aliases the
**              fixed-capacity past, [B, Nkv, sp, H] (needs out=3, sp > 0 and
**              a bias)
**   vlen       cap only: the valid length of each batch, which the bias
**              frontier carries (max finite column + 1 over heads and queries)
**   bias       none; [] (rank 0); or 1 to 4 dims joined by 'x', right-aligned
**              against [B, N, sq, cache] as the operator broadcasts it
**   scale      none, or the attribute as C99 "%a" of the float (0x1.8p-3)
**   seed       the data seed (unsigned 64-bit decimal); steps: 1..16
**
**   Family knobs (each family has exactly its own, in this order):
**   is.indexviol  viol=RULE:B,H,Q,COL  RULE an index_rule_name(); COL is -1
**                 for all_padding.  Planted at every step.
**   is.capfront   gaps=G (-inf columns before the frontier, per batch)
**                 tail=neginf|posinf|nan|mixed (the bias beyond the frontier)
**                 inner=none|neginf|posinf|nan (1 in 8 values inside it)
**   is.masked     masked=M (rows whose selected keys all get a -inf bias)
**   is.numeric    num=huge|subnormal|nan|inf|mixed num_in=q|k|v|qk|qv|kv|qkv
**                 num_rate=R (per mille of the elements; k and v include the
**                 past)
**   is.contract   contract=KIND[:TARGET[:DTYPE]]: one violation applied on
**                 top of the valid configuration the other tokens describe
**                 (is_contract_kind below lists them): rank:key,
**                 dtype:indices:f32, inputs:8, outputs:2, kv_not_divisor...
**
**   Other families have no knobs: is.valid, is.bias, is.tiles.  Every family except
**   is.bias (whose shapes may not broadcast) and is.contract (whose
**   violation is the KIND) describes an operator-valid configuration, and
**   the parser checks that.  is.capfront may carry vlen 0, which makes every
**   index of that batch out of range: an expected rejection.
**
** Examples:
**   family=is.valid op=IndexShare dtype=f16 idx=i32 b=2 n=4 nkv=2 sq=1 sc=1
**     sp=17 h=32 ih=1 k=8 out=3 present=grow vlen=none bias=2x1x1x18
**     scale=none seed=7 steps=4
**   family=is.capfront op=IndexShare dtype=bf16 idx=i64 b=3 n=2 nkv=none sq=2
**     sc=2 sp=12 h=16 ih=2 k=6 out=3 present=cap vlen=0,5,12 bias=3x1x2x12
**     scale=0x1p-2 gaps=2 tail=nan inner=posinf seed=99 steps=4
**   family=is.contract op=IndexShare dtype=f32 idx=i64 b=1 n=2 nkv=none sq=1
**     sc=1 sp=0 h=8 ih=1 k=4 out=1 present=grow vlen=none bias=none
**     scale=none contract=dtype:key:f16 seed=3 steps=1
** (each is one line in a real spec).
**
** Tensors: element i of stream t at step s is cases_rng_u64(seed, t, s, i)
** turned into a value (cases/rng.h); step 0 is the case, later steps are
** fresh values with the same shapes, valid lengths and planted violations.
**   q, k, v, past   bell-shaped, mean 0, |x| <= 3.47 (is.numeric: specials)
**   indices         per row 1..min(K, bound) strictly increasing keys below
**                   the batch's bound (cases_is_bounds), then -1 padding
**   bias            2 * bell-shaped.  At capacity, batch b's frontier is
**                   vlen[b]: columns >= vlen[b] are non-finite (-inf, or the
**                   is.capfront tail), column vlen[b] - 1 of head 0, query 0
**                   (the anchor) is finite; is.capfront adds -inf gap columns
**                   and specials below it.  is.masked then sets -inf on every
**                   key its rows select (such a row never selects the anchor).
**   outputs         zeros
*/
#ifndef CASES_INDEX_SHARE_CASES_H
#define CASES_INDEX_SHARE_CASES_H

#include "oracle/index_share.h"

#include <stddef.h>
#include <stdio.h>

#define IS_CASE_MAX_BATCH 64        /* vlen entries a capacity case can carry */
#define IS_CASE_MAX_INPUTS (IS_INPUT_COUNT + 1) /* room for the 8-input contract case */
#define IS_CASE_MAX_STEPS 16
#define IS_CASE_SPEC_MAX 2048       /* longest canonical spec, with its NUL */
#define CASES_IS_BUDGET_DEFAULT ((size_t)256 << 20)

typedef enum is_family {
  IS_FAMILY_VALID = 0,
  IS_FAMILY_INDEXVIOL,
  IS_FAMILY_BIAS,
  IS_FAMILY_CAPFRONT,
  IS_FAMILY_MASKED,
  IS_FAMILY_CONTRACT,
  IS_FAMILY_NUMERIC,
  IS_FAMILY_TILES,
  IS_FAMILY_COUNT
} is_family;

/* Non-finite bias fills (is.capfront tail and inner). */
typedef enum is_fill { IS_FILL_NONE = 0, IS_FILL_NEG_INF, IS_FILL_POS_INF, IS_FILL_NAN, IS_FILL_MIXED } is_fill;

/* Numeric specials written into q/k/v (is.numeric). */
typedef enum is_special {
  IS_SPECIAL_NONE = 0,
  IS_SPECIAL_HUGE,      /* |x| in [0.5, 1) * 1e30 (f16: * 6e4, its range) */
  IS_SPECIAL_SUBNORMAL, /* a random nonzero subnormal of the storage dtype */
  IS_SPECIAL_NAN,       /* quiet NaN, random sign and payload */
  IS_SPECIAL_INF,       /* +-inf */
  IS_SPECIAL_MIXED      /* each element one of the four */
} is_special;

/* num_in bits. */
#define IS_NUM_IN_Q 1u
#define IS_NUM_IN_K 2u
#define IS_NUM_IN_V 4u

/*
** is.contract violations.  TARGET names a tensor (query, key, value,
** past_key, past_value, indices, bias, y, present_key, present_value); the
** spec spells each kind in lower case without the prefix ("head_size").
*/
typedef enum is_contract_kind {
  IS_CK_NONE = 0,
  IS_CK_RANK,          /* TARGET has rank 3: its first two axes merged */
  IS_CK_BATCH,         /* TARGET's batch axis is B + 1 */
  IS_CK_HEADS,         /* TARGET's head axis is one more than it should be */
  IS_CK_SEQ,           /* TARGET's sequence axis: value/past_value/indices/bias/y +1; presents sp + sc + 1 */
  IS_CK_HEAD_SIZE,     /* TARGET's last axis is H + 1 */
                       /* (batch, heads, head_size of past_key: both past tensors, still a pair) */
  IS_CK_PAST_UNPAIRED, /* TARGET (past_key or past_value) is absent, its partner is not */
  IS_CK_ABSENT,        /* required TARGET (query, key, value, indices) is absent */
  IS_CK_DTYPE,         /* TARGET has dtype DTYPE */
  IS_CK_PRESENT_MIXED, /* present_key grows, present_value has the capacity shape */
  IS_CK_NUM_HEADS_ZERO,
  IS_CK_NUM_HEADS_NEGATIVE,
  IS_CK_KV_NEGATIVE,
  IS_CK_KV_NOT_DIVISOR, /* kv_num_heads (and the K/V heads) the smallest non-divisor of n */
  IS_CK_SCALE_ZERO,
  IS_CK_SCALE_NEG_ZERO,
  IS_CK_SCALE_NEGATIVE,
  IS_CK_SCALE_NAN,
  IS_CK_SCALE_INF,
  IS_CK_INPUTS,    /* TARGET is the input count, 5 or 8 */
  IS_CK_OUTPUTS,   /* TARGET is the output count, 0 or 2 */
  IS_CK_CAP_NO_BIAS,
  IS_CK_CAP_NO_PAST, /* capacity present [B, Nkv, sp, H] but no past inputs (needs sp != sc) */
  IS_CK_K_ZERO,
  IS_CK_COUNT
} is_contract_kind;

/* Contract targets: input index, or 100 + output index (as op_error.input). */
#define IS_CASE_TARGET_OUTPUT(o) (100 + (o))

typedef struct is_case {
  is_family family;
  dtype dt, index_dt;
  long long batch, num_heads, kv_num_heads; /* kv_num_heads 0: absent */
  long long q_seq, current_seq, past_seq, head_size, index_heads, selected_width;
  int n_outputs;   /* 1 or 3 */
  int capacity;    /* present=cap */
  int n_valid_len; /* entries in valid_len: batch at capacity, else 0 */
  long long valid_len[IS_CASE_MAX_BATCH];
  int bias_rank;   /* -1: no bias; else 0..4 */
  long long bias_shape[4];
  int has_scale;
  float scale;
  unsigned long long seed;
  int steps;
  /* is.indexviol */
  int viol_rule; /* index_rule */
  long long viol_b, viol_h, viol_q, viol_column;
  /* is.capfront */
  int gaps;
  is_fill tail, inner;
  /* is.masked */
  long long masked_rows;
  /* is.numeric */
  is_special num;
  unsigned num_in; /* IS_NUM_IN_* bits */
  int num_rate;    /* per mille */
  /* is.contract */
  is_contract_kind contract;
  int contract_target; /* input, 100 + output, or a count; -1 when the kind has none */
  dtype contract_dtype;
  /* Not part of the spec: cases_is_materialize refuses cases whose tensors
  ** need more bytes than this; 0 means CASES_IS_BUDGET_DEFAULT. */
  size_t budget_bytes;
} is_case;

const char *cases_is_family_name(is_family f); /* "is.valid", ... */
const char *cases_is_contract_kind_name(is_contract_kind k);

/*
** Parses a spec.  Strict: an unknown key, a key the family does not use, a
** repeated key, a bad value or a missing key fails, and so does a spec that
** is not what its family promises (e.g. an is.valid case whose bias does not
** broadcast).  Tokens may come in any order; cases_is_format gives the one
** canonical text, from which the id is taken.  0, or -1 with err naming the
** token ("bad value in token 'k=abc'") or the missing key.
*/
int cases_is_parse(const char *spec, is_case *c, char *err, size_t err_len);

/* Writes the canonical spec of c.  0, or -1 when len is too small. */
int cases_is_format(const is_case *c, char *spec, size_t len);

/* The case id of c's canonical spec ("is.valid.1f3c9a02"). 0 or -1. */
int cases_is_id(const is_case *c, char *id, size_t len);

/*
** The bound every index row of batch b is drawn below (and that
** index_share_validate_indices checks against): sp + sc when growing,
** valid_len[b] at capacity.  bound must hold c->batch entries.
*/
void cases_is_bounds(const is_case *c, long long *bound);

/*
** Allocates and fills the tensors of step `step` (0 <= step < steps).
** inputs: IS_CASE_MAX_INPUTS entries, the first *n_inputs meaningful, absent
** ones with dt == DTYPE_NONE and data NULL.  outputs: IS_OUTPUT_COUNT
** entries, zero-filled, the first *n_outputs with the shapes and dtype the
** case intends (an is.contract case may intend wrong ones).  Every entry of
** both arrays is either allocated or zeroed, so cases_is_release can free
** them all, also after a failure.  Index rows are valid against
** cases_is_bounds unless the family plants a violation.  Refuses a case whose
** tensors need more than its budget: "case needs N bytes, over the budget
** of M".  0, or -1 with err set.
*/
int cases_is_materialize(const is_case *c, int step, tensor inputs[IS_CASE_MAX_INPUTS], int *n_inputs,
                         tensor outputs[IS_OUTPUT_COUNT], int *n_outputs, index_share_attrs *attrs,
                         char *err, size_t err_len);

/* Frees what cases_is_materialize allocated (the arrays it was given). */
void cases_is_release(tensor inputs[IS_CASE_MAX_INPUTS], tensor outputs[IS_OUTPUT_COUNT]);

/*
** Rewrites row (b, h, q) of an i32/i64 index tensor [B, IH, Sq, K] so that
** index_share_validate_indices against bound[] reports exactly `rule` at
** (b, h, q, column) (column -1 for INDEX_RULE_ALL_PADDING): the columns
** before it stay valid (strictly increasing, below bound[b]), the offending
** value is chosen from a few kinds per rule (e.g. for out_of_range: the
** bound itself, far beyond it, the type's maximum, or 2^32 + a valid index
** for i64), and what follows it is -1 padding or junk.  Rows other than
** (b, h, q) are untouched.  The choices depend on c->seed and the location
** only.  0, or -1 when the rule cannot be placed there (e.g. duplicate at
** column 0, or more valid columns needed than bound[b] allows).
*/
int cases_is_plant(const is_case *c, tensor *indices, int rule, long long b, long long h, long long q,
                   long long column, const long long *bound);

/*
** Emits `count` canonical specs of family ("is.valid", "is.indexviol",
** "is.bias", "is.capfront", "is.masked", "is.contract", "is.numeric",
** "is.tiles"),
** cycling through the family's combinations (cases_is_family_combos) and
** drawing the rest of each configuration from (seed, case number).  The
** number emitted, or -1 for an unknown family.
*/
int cases_is_enumerate(const char *family, int count, unsigned long long seed,
                       void (*emit)(const char *spec, void *ctx), void *ctx);

/* How many distinct combinations one pass over a family makes; -1 if unknown. */
int cases_is_family_combos(const char *family);

/*
** Writes the IndexShare gate suite, one spec a line, grouped by family,
** per_family_scale passes' worth of each family (>= 1,100 lines at scale 1).
** Fails (-1) if two specs would share an id.  The number of lines, or -1.
*/
int cases_is_write_suite(FILE *out, int per_family_scale);

/*
** Writes the IndexShare nightly suite: per family, the gate suite's lines
** (scale 1), then more seeds with larger shapes (batch up to 8, up to 4x the
** heads, head size up to 128, K up to 128, past up to 600, 8 steps).  Fails
** (-1) if two specs would share an id.  The number of lines, or -1.
*/
int cases_is_write_nightly(FILE *out);

#endif

/*
** index_share_enumerate.c: the IndexShare families' enumerators
** (cases_is_enumerate, cases_is_family_combos; index_share_cases.h), and
** is_enumerate, which index_share_suite.c draws the suites from.
**
** Each family generator turns case number i into a configuration: i modulo
** the family's combinations picks the combination (so `count` >= combos
** covers every one), and the cursor r draws everything else.  Sizes stay
** small (b <= 3, n <= 8, seqs <= 48, h <= 64, k <= 32) so a suite of a
** thousand cases runs through the oracle in seconds; the nightly suite's
** (gen_dims_nightly) go further.
*/
#include "cases/index_share_cases_internal.h"

#include "cases/rng.h"
#include "cases/spec_text.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long long pick(cases_rng *r, const long long *v, int n) { return v[cases_rng_next_range(r, 0, n - 1)]; }
static int coin(cases_rng *r, int percent) { return cases_rng_next_range(r, 0, 99) < percent; }
static dtype float_dtype(unsigned long long i) { return (dtype)(DTYPE_F32 + (int)(i % 3u)); }

/* Rank-r bias whose axis a (of r) is full when bit a of mask is set, else 1. */
static void gen_bias(is_case *c, int rank, unsigned mask) {
  long long target[4] = {c->batch, c->num_heads, c->q_seq, is_case_cache(c)};
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
    c->valid_len[b] = is_bias_k_broadcast(c) ? c->past_seq
                      : is_bias_b_broadcast(c) && b > 0 ? c->valid_len[0]
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
  target[0] = c->batch, target[1] = c->num_heads, target[2] = c->q_seq, target[3] = is_case_cache(c);
  if (variant == 2) c->bias_shape[axis] = cap ? is_case_total(c) : c->past_seq; /* the other present's length */
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
    if (is_ck_info[k].arg == IS_CK_ARG_COUNT) {
      for (d = 0; d < 2; d++, n++)
        if (n == j) return *kind = (is_contract_kind)k, *target = (k == IS_CK_INPUTS ? 5 + 3 * d : 2 * d), *dt = DTYPE_NONE, j;
      continue;
    }
    if (is_ck_info[k].arg == IS_CK_ARG_NONE) {
      if (n++ == j) return *kind = (is_contract_kind)k, *target = -1, *dt = DTYPE_NONE, j;
      continue;
    }
    for (s = 0; s < IS_SLOT_COUNT; s++) {
      if (!(is_ck_info[k].slots & IS_SLOT_BIT(s))) continue;
      for (d = 0; d < (is_ck_info[k].arg == IS_CK_ARG_TARGET_DTYPE ? contract_dtype_count(s) : 1); d++, n++)
        if (n == j) return *kind = (is_contract_kind)k, *target = is_target_of_slot(s), *dt = contract_dtypes[s][d], j;
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
  slot = target >= 0 && is_ck_info[kind].arg != IS_CK_ARG_COUNT ? is_slot_of_target(target) : -1;
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

/*
** is.tiles: the shapes that make the fast rows kernel share gathered rows
** among 8-head tiles (index_share_rows; device/index_share_device.c's
** tile_heads): 16-bit dtype x head size (256: no split of the value pass)
** x group (8: whole tiles; 12: a whole and a half tile a kv head) x
** present, one index row for all heads, and more (b, head, query) rows
** than the launcher's IS_ROW_WAVE_TILES (132).  The other families' heads
** stay below it, so that without this one no gate case ran those tiles.
*/
#define IS_TILES_MIN_ROWS 133
static void gen_tiles(is_case *c, cases_rng *r, long long i, int nightly) {
  static const long long hs[] = {32, 64, 128, 256}, groups[] = {8, 12}, sqs[] = {1, 2, 4};
  long long j = i % 48, variant = j / 16;
  gen_dims(c, r, IS_FAMILY_TILES, groups[j / 8 % 2], nightly);
  c->dt = j % 2 ? DTYPE_BF16 : DTYPE_F16;
  c->head_size = hs[j / 2 % 4];
  c->index_heads = 1;
  c->q_seq = pick(r, sqs, 3);
  c->current_seq = coin(r, 70) ? c->q_seq : cases_rng_next_range(r, 1, 4);
  c->batch = (IS_TILES_MIN_ROWS + c->num_heads * c->q_seq - 1) / (c->num_heads * c->q_seq) +
             cases_rng_next_range(r, 0, 1);
  c->past_seq = variant ? cases_rng_next_range(r, 1, past_max(nightly)) : 0;
  gen_present(c, (int)variant);
  if (c->capacity || coin(r, 70)) gen_bias_random(c, r);
  if (c->capacity) gen_vlens(c, r, 1);
}

typedef void (*family_gen_fn)(is_case *c, cases_rng *r, long long i, int nightly);
static const family_gen_fn family_gens[IS_FAMILY_COUNT] = {gen_valid,  gen_indexviol, gen_bias_family, gen_capfront,
                                                           gen_masked, gen_contract,  gen_numeric,     gen_tiles};

int cases_is_family_combos(const char *family) {
  static const int combos[IS_FAMILY_COUNT] = {180, 192, 110, 72, 48, 0, 60, 48};
  int f = spec_name_lookup(is_family_names, IS_FAMILY_COUNT, family);
  if (f < 0) return -1;
  return f == IS_FAMILY_CONTRACT ? contract_entries() : combos[f];
}

/* count specs of family f, drawn from seed; nightly: the nightly suite's larger shapes. */
int is_enumerate(int f, int count, unsigned long long seed, int nightly, void (*emit)(const char *spec, void *ctx),
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
      fprintf(stderr, "%s:%d: %s case %d is not a valid spec: %s\n  %s\n", __FILE__, __LINE__, is_family_names[f], i,
              err, spec);
      abort(); /* a generator bug */
    }
    emit(spec, ctx);
  }
  return count;
}

int cases_is_enumerate(const char *family, int count, unsigned long long seed, void (*emit)(const char *spec, void *ctx),
                       void *ctx) {
  return is_enumerate(spec_name_lookup(is_family_names, IS_FAMILY_COUNT, family), count, seed, 0, emit, ctx);
}

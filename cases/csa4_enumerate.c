/*
** csa4_enumerate.c: the ratio-4 families' enumerators and their part of the
** gate and nightly suites (csa4_cases.h).
**
** Case number i picks its combination as i modulo the family's combos, and
** a cursor seeded by (suite seed, family, i) draws the rest.  Sizes follow
** the oracle's cost: each query row scores every causal record over IH
** index heads (128 multiply-adds each) and attends to 128 + topk candidates
** at ~512 nx_expf-free multiply-adds, and every completed block pools 8 x
** 512 + 8 x 128 candidates through nx_expf.  So the long decode chains keep
** B <= 2 and IH <= 4, IH 64 and topk 512 come with short chains, and the
** starts near 2^16 and 2^17 have B = 1, one or two heads and 2..4 steps.
** The nightly suite's additions (the *_nightly generators) go further the
** same way: 300-step chains keep IH <= 4, long prefills and starts out to
** 2^18 with IH 64 keep B = 1 and at most 5 steps.
*/
#include "cases/csa4_cases_internal.h"

#include "cases/rng.h"
#include "cases/spec_list.h"
#include "cases/spec_text.h"

#include <stdlib.h>
#include <string.h>

static const long long topk_widths[] = {1, 7, 512};

/* Capacity: exactly full half the time, else 1..3 spare records. */
static void gen_capacity(csa4_case *c, cases_rng *r) {
  c->capacity = csa4_final_total(c) / CSA4_RATIO + (csa_case_coin(r, 50) ? 0 : cases_rng_next_range(r, 1, 3));
}

/* The draws every family shares, after the shape: window, capacity, bias of kind k, sink, scale. */
static void gen_rest(csa4_case *c, cases_rng *r, int bias_kind, csa_sink sink) {
  c->window = csa_case_gen_window(r);
  gen_capacity(c, r);
  csa_case_gen_bias(r, bias_kind, c->batch, c->heads, c->prefill, c->decode, csa4_candidates(c), &c->bias_rank,
                    c->bias_shape);
  c->sink = sink;
  csa_case_gen_scale(r, &c->has_scale, &c->scale);
}

/*
** csa4.chain: 36 boundary combinations (prefill 1, 3, 4, 5, 127, 520 x a
** short (0..4) or long (40..48) decode x topk 1, 7, 512), then 28 small
** random chains.  The two passes of the suite give each boundary combination
** both output configurations.
*/
#define CHAIN_BOUNDARY 36
#define CHAIN_COMBOS 64
static void gen_chain(csa4_case *c, cases_rng *r, long long i) {
  static const long long prefills[] = {1, 3, 4, 5, 127, 520}, small_topk[] = {1, 2, 3, 5, 7, 16};
  static const long long long_iheads[] = {1, 4}, short_iheads[] = {1, 4, 64}, small_iheads[] = {1, 2, 4, 8};
  long long j = i % CHAIN_COMBOS, pass = i / CHAIN_COMBOS;
  c->start = 0;
  if (j < CHAIN_BOUNDARY) {
    int is_long = (int)(j / 6 % 2);
    c->prefill = prefills[j % 6];
    c->topk = topk_widths[j / 12];
    c->decode = is_long ? cases_rng_next_range(r, 40, 48) : cases_rng_next_range(r, 0, 4);
    c->index_heads = is_long ? csa_case_pick(r, long_iheads, 2) : csa_case_pick(r, short_iheads, 3);
    c->batch = c->index_heads == 64 && c->prefill > 5 ? 1 : cases_rng_next_range(r, 1, 2);
    c->heads = cases_rng_next_range(r, 1, 2);
  } else {
    c->prefill = cases_rng_next_range(r, 1, 24);
    c->decode = cases_rng_next_range(r, 0, 8);
    c->topk = csa_case_pick(r, small_topk, 6);
    c->index_heads = csa_case_pick(r, small_iheads, 4);
    c->batch = cases_rng_next_range(r, 1, 3);
    c->heads = cases_rng_next_range(r, 1, c->batch == 3 ? 2 : 4);
  }
  c->outputs = 5 + (int)((j + pass) % 2);
  gen_rest(c, r, (int)(i % CSA_CASE_BIAS_KINDS), (csa_sink)(i / 3 % CSA_SINK_COUNT));
}

/*
** csa4.state: 8 starts x (topk 1 or 7, topk 512).  The starts sit on a
** block boundary at 2^16 (a carry of the previous block only), just before
** it (a block completes in step 0), across it inside a multi-token step 0,
** just before 2^17, and at small positions (2051: just over the 512 records
** a full topk needs).
*/
#define STATE_COMBOS 16
static void gen_state(csa4_case *c, cases_rng *r, long long i) {
  static const long long starts[] = {65536, 65535, 65533, 131071, 4096, 2051, 515, 6}, iheads[] = {1, 4, 64};
  long long j = i % STATE_COMBOS;
  int far;
  c->start = starts[j % 8];
  far = c->start > 65000;
  c->topk = j / 8 ? CSA4_TOPK_MAX : topk_widths[cases_rng_next_range(r, 0, 1)];
  c->prefill = c->start == 65533 ? cases_rng_next_range(r, 4, 6) : far ? 1 : cases_rng_next_range(r, 1, 5);
  c->decode = far ? cases_rng_next_range(r, 2, 4) : cases_rng_next_range(r, 2, 6);
  c->batch = far ? 1 : cases_rng_next_range(r, 1, 2);
  c->heads = cases_rng_next_range(r, 1, 2);
  c->index_heads = far ? csa_case_pick(r, iheads, 2) : csa_case_pick(r, iheads, 3);
  c->outputs = 5 + (int)(i % 2);
  gen_rest(c, r, (int)(i % CSA_CASE_BIAS_KINDS), (csa_sink)(i % CSA_SINK_COUNT));
}

/*
** csa4.chain, nightly: 18 combinations.  4 long chains (prefill 1, 5, 127,
** 520, 280..299 decode steps), 8 wide ones (b 4..8, heads 2..4, a short
** prefill and 4..16 decode steps), and 6 long prefills (700..2051 tokens:
** up to 512 records, every one scored over IH 8..64) with topk 512 and 1..4
** decode steps.  IH 64 stops at 1024 tokens: step 0's selected_indices [B,
** IH, S, 512] must stay inside the materialize budget.
*/
#define CHAIN_NIGHTLY_COMBOS 18
static void gen_chain_nightly(csa4_case *c, cases_rng *r, long long i) {
  static const long long long_prefills[] = {1, 5, 127, 520}, wide_topk[] = {1, 7, 16, 512}, wide_iheads[] = {2, 4, 8};
  static const long long big_prefills[] = {1024, 2051, 1536, 2051, 700, 1024}, big_iheads[] = {64, 16, 16, 8, 64, 32};
  long long j = i % CHAIN_NIGHTLY_COMBOS;
  c->start = 0;
  if (j < 4) {
    c->prefill = long_prefills[j];
    c->decode = cases_rng_next_range(r, 280, 299);
    c->topk = topk_widths[1 + (i / CHAIN_NIGHTLY_COMBOS + j) % 2];
    c->index_heads = csa_case_pick(r, (const long long[]){1, 4}, 2);
    c->batch = cases_rng_next_range(r, 1, 2);
    c->heads = cases_rng_next_range(r, 1, 2);
  } else if (j < 12) {
    c->prefill = cases_rng_next_range(r, 1, 64);
    c->decode = cases_rng_next_range(r, 4, 16);
    c->topk = csa_case_pick(r, wide_topk, 4);
    c->index_heads = csa_case_pick(r, wide_iheads, 3);
    c->batch = cases_rng_next_range(r, 4, 8);
    c->heads = cases_rng_next_range(r, 2, 4);
  } else {
    c->prefill = big_prefills[j - 12];
    c->decode = cases_rng_next_range(r, 1, 4);
    c->topk = CSA4_TOPK_MAX;
    c->index_heads = big_iheads[j - 12];
    c->batch = 1;
    c->heads = cases_rng_next_range(r, 1, 2);
  }
  c->outputs = 5 + (int)((j + i / CHAIN_NIGHTLY_COMBOS) % 2);
  gen_rest(c, r, (int)(i % CSA_CASE_BIAS_KINDS), (csa_sink)(i / 3 % CSA_SINK_COUNT));
}

/*
** csa4.state, nightly: 6 long-context starts x (IH 64 with topk 512, or IH
** 1..8 with a random topk).  The starts sit on block boundaries at 2^16,
** 2^17 and 2^18, just before 2^18, across a boundary inside a multi-token
** step 0 near 2^17, and in the middle of a block at 3 x 2^16 + 3.  IH 64
** keeps b = 1; every case has 2..4 decode steps.
*/
#define STATE_NIGHTLY_COMBOS 12
static void gen_state_nightly(csa4_case *c, cases_rng *r, long long i) {
  static const long long starts[] = {65536, 131072, 262144, 262143, 131069, 196611}, small_iheads[] = {1, 2, 4, 8};
  static const long long small_topk[] = {1, 7, 64, 512};
  long long j = i % STATE_NIGHTLY_COMBOS;
  int wide = j / 6 == 0;
  c->start = starts[j % 6];
  c->prefill = c->start == 131069 ? cases_rng_next_range(r, 4, 6) : cases_rng_next_range(r, 1, 2);
  c->decode = cases_rng_next_range(r, 2, 4);
  c->index_heads = wide ? 64 : csa_case_pick(r, small_iheads, 4);
  c->topk = wide ? CSA4_TOPK_MAX : csa_case_pick(r, small_topk, 4);
  c->batch = wide ? 1 : cases_rng_next_range(r, 1, 2);
  c->heads = cases_rng_next_range(r, 1, 4);
  c->outputs = 5 + (int)(i % 2);
  gen_rest(c, r, (int)(i % CSA_CASE_BIAS_KINDS), (csa_sink)(i % CSA_SINK_COUNT));
}

/*
** csa4.ties: 4 tie modes x 6 prefills, decode 6..12 steps and at least 16
** tokens in all; topk mostly below the record count, so a tie can decide
** what is selected.
*/
#define TIES_COMBOS 24
static void gen_ties(csa4_case *c, cases_rng *r, long long i) {
  static const long long prefills[] = {1, 5, 9, 24, 40, 127}, topk[] = {1, 2, 3, 7, 7, 512}, iheads[] = {1, 2, 4, 64};
  long long j = i % TIES_COMBOS;
  c->ties = (csa4_tie)(CSA4_TIE_RELU + j % 4);
  c->start = 0;
  c->prefill = prefills[j / 4];
  c->decode = cases_rng_next_range(r, 6, 12);
  if (c->prefill + c->decode < 16) c->decode = 16 - c->prefill; /* >= 4 records: dup ties records 1.. */
  c->topk = csa_case_pick(r, topk, 6);
  c->index_heads = csa_case_pick(r, iheads, c->prefill <= 24 ? 4 : 3);
  c->batch = cases_rng_next_range(r, 1, 2);
  c->heads = cases_rng_next_range(r, 1, 2);
  c->outputs = 5 + (int)(i / 2 % 2);
  gen_rest(c, r, (int)(i % CSA_CASE_BIAS_KINDS), (csa_sink)(i / 4 % CSA_SINK_COUNT));
}

/*
** csa4.contract: every (code, site) pair of csa4_contract_sites, in code
** order, on small valid single steps.
*/
typedef struct contract_combo {
  int code, site;
} contract_combo;

static int contract_combos(contract_combo *out, int max) {
  int sites[CSA4_SITES_MAX], code, k, n = 0, m;
  for (code = CSA_CONTRACT_NONE + 1; code < CSA_CONTRACT_COUNT; code++) {
    m = cases_csa4_contract_sites(code, 6, 1, sites);
    for (k = 0; k < m; k++, n++)
      if (out && n < max) out[n].code = code, out[n].site = sites[k];
  }
  return n;
}

static void gen_contract(csa4_case *c, cases_rng *r, long long i) {
  static const long long starts[] = {0, 8, 13}, iheads[] = {1, 2, 4};
  contract_combo combos[CSA_CONTRACT_COUNT * (CSA_INPUT_COUNT + CSA_OUTPUT_MAX + 1)];
  int n = contract_combos(combos, (int)(sizeof combos / sizeof combos[0])), bias_kind;
  contract_combo cc = combos[i % n];
  int needs_past = cc.code == CSA_CONTRACT_PAST_CAPACITY || cc.code == CSA_CONTRACT_PRESENT_CAPACITY;
  int needs_bias = cc.site == CSA_IN_BIAS;
  c->contract = cc.code;
  c->contract_site = cc.site;
  c->start = csa_case_pick(r, needs_past ? starts + 1 : starts, needs_past ? 2 : 3);
  c->prefill = cases_rng_next_range(r, 1, 6);
  c->decode = 0;
  c->batch = cases_rng_next_range(r, 1, 2);
  c->heads = cases_rng_next_range(r, 1, 2);
  c->index_heads = csa_case_pick(r, iheads, 3);
  c->topk = csa_case_pick(r, topk_widths, 3);
  c->outputs = cc.site == 100 + CSA_OUT_SELECTED ? 6 : 5 + (int)cases_rng_next_range(r, 0, 1);
  bias_kind = (int)cases_rng_next_range(r, 0, CSA_CASE_BIAS_KINDS - 1);
  if (needs_bias && bias_kind == 0) bias_kind = 6;
  gen_rest(c, r, bias_kind, (csa_sink)cases_rng_next_range(r, 0, CSA_SINK_COUNT - 1));
}

/*
** csa4.tiles: the shapes that take the fast attention's two tilings
** (device/kernels/csa_attention_abi.h), which the other families' 1..4
** heads never fill.  A pass runs its wide tiles once it has at least 264
** wide units (CSA_WIDE_MIN_UNITS), with bs = b x S and stride = 128 + topk:
**   scores  bs x ceil(heads / 64) x ceil(stride / 32)
**   values  bs x ceil(heads / 32) x 4
** and else its narrow tiles (16 heads a scores tile, 8 a values tile).
** Each row below sets step 0's bs (b x prefill) on one side of those sums,
** several right at a threshold; the comments give the units and the passes
** that take wide tiles.  Heads 64 fill whole tiles; 72, 96, 40, 33 and 8
** leave one partly full (72 and 96 a whole tile and part of a second);
** topk 7, 100, 33, 300 and 1 end the last candidate tile partway.  The 1..3
** decode steps after step 0 (bs = b <= 2) run the narrow tiles: whole ones
** with heads 16, 64 and 96, a partly full scores tile with 8, 40 and 72.
** start = 0 keeps the index scoring cheap and leaves candidates the kernels
** must mask: the dense window holds fewer than 128 tokens (but in the
** prefill-128..140 row, unless the window draw shortens it), and topk 33
** and up exceed the records, so selection slots stay -1.  The shapes are
** written out, not derived from the ABI, so that a change of the kernels'
** thresholds leaves these specs and their digests as they are;
** cases/tests/test_csa_tiles.c fails if they stop reaching each tiling.
*/
typedef struct csa4_tiles_row {
  long long heads, topk, batch, prefill_lo, prefill_hi;
} csa4_tiles_row;

static const csa4_tiles_row tiles_rows[] = {
    /* both passes wide (scores units, values units at the smallest prefill) */
    {64, 7, 1, 53, 53},    /* 53 x 1 x 5 = 265, 53 x 2 x 4 = 424: scores at the threshold */
    {64, 512, 2, 17, 20},  /* 34 x 1 x 20 = 680, 34 x 2 x 4 = 272 */
    {72, 7, 1, 27, 32},    /* 27 x 2 x 5 = 270, 27 x 3 x 4 = 324 */
    {72, 100, 2, 11, 14},  /* 22 x 2 x 8 = 352, 22 x 3 x 4 = 264 */
    {40, 512, 1, 33, 40},  /* 33 x 1 x 20 = 660, 33 x 2 x 4 = 264 */
    {40, 33, 2, 22, 26},   /* 44 x 1 x 6 = 264, 44 x 2 x 4 = 352 */
    {33, 7, 1, 53, 60},    /* 53 x 1 x 5 = 265, 53 x 2 x 4 = 424 */
    {33, 300, 1, 33, 36},  /* 33 x 1 x 14 = 462, 33 x 2 x 4 = 264 */
    {8, 512, 2, 33, 36},   /* 66 x 1 x 20 = 1320, 66 x 1 x 4 = 264 */
    {8, 7, 1, 128, 140},   /* 128 x 1 x 5 = 640, 128 x 1 x 4 = 512: 7 of >= 32 records */
    {96, 1, 2, 14, 16},    /* 28 x 2 x 5 = 280, 28 x 3 x 4 = 336 */
    /* one pass wide */
    {64, 7, 2, 26, 26},    /* values: 52 x 1 x 5 = 260 (a row short), 52 x 2 x 4 = 416 */
    {64, 512, 2, 7, 7},    /* scores: 14 x 1 x 20 = 280 (at the threshold), 14 x 2 x 4 = 112 */
    {64, 512, 1, 32, 32},  /* scores: 32 x 1 x 20 = 640, 32 x 2 x 4 = 256 (a row short) */
    {8, 7, 1, 53, 65},     /* scores: 53 x 1 x 5 = 265, at most 65 x 1 x 4 = 260 */
    {72, 512, 1, 7, 21},   /* scores: 7 x 2 x 20 = 280, at most 21 x 3 x 4 = 252 */
    {40, 1, 2, 17, 26},    /* values: at most 52 x 1 x 5 = 260, 34 x 2 x 4 = 272 */
    {96, 1, 2, 11, 13},    /* values: at most 26 x 2 x 5 = 260, 22 x 3 x 4 = 264 */
    /* both narrow, whole narrow tiles in step 0 too */
    {16, 7, 2, 3, 20},     /* at most 40 x 1 x 5 = 200, 40 x 1 x 4 = 160 */
    {64, 7, 1, 1, 16},     /* at most 16 x 1 x 5 = 80, 16 x 2 x 4 = 128 */
};
#define TILES_COMBOS ((int)(sizeof tiles_rows / sizeof tiles_rows[0]))

/* One case of `row`: its heads, topk, batch and a prefill from its range; the rest drawn as the other families'. */
static void gen_tiles_row(csa4_case *c, cases_rng *r, long long i, const csa4_tiles_row *row, long long decode_hi) {
  static const long long iheads[] = {1, 4};
  c->start = 0;
  c->heads = row->heads;
  c->topk = row->topk;
  c->batch = row->batch;
  c->prefill = cases_rng_next_range(r, row->prefill_lo, row->prefill_hi);
  c->decode = cases_rng_next_range(r, 1, decode_hi);
  c->index_heads = csa_case_pick(r, iheads, 2);
  c->outputs = 5 + (int)(i / CSA_SINK_COUNT % 2);
  gen_rest(c, r, (int)(i % CSA_CASE_BIAS_KINDS), (csa_sink)(i % CSA_SINK_COUNT));
}

static void gen_tiles(csa4_case *c, cases_rng *r, long long i) {
  gen_tiles_row(c, r, i, &tiles_rows[i % TILES_COMBOS], 3);
}

/*
** csa4.tiles, nightly: more head counts (17 to 264), prefills of hundreds
** of tokens whose selections are full, and b = 8 chains whose decode steps
** take wide tiles themselves (their units at bs = 8).  Rows as tiles_rows,
** with 1..4 decode steps.
*/
static const csa4_tiles_row tiles_nightly_rows[] = {
    {128, 512, 2, 40, 60},  /* both: 80 x 2 x 20, 80 x 4 x 4 */
    {256, 7, 1, 66, 80},    /* both: 66 x 4 x 5, 66 x 8 x 4 */
    {65, 7, 2, 30, 40},     /* both: 60 x 2 x 5, 60 x 3 x 4 */
    {63, 1, 2, 27, 40},     /* both: 54 x 1 x 5, 54 x 2 x 4 */
    {24, 7, 1, 66, 80},     /* both: 66 x 1 x 5, 66 x 1 x 4 */
    {64, 100, 1, 500, 600}, /* both: 500 x 1 x 8, 500 x 2 x 4; topk 100 of >= 125 records, no slot -1 */
    {8, 33, 2, 200, 260},   /* both: 400 x 1 x 6, 400 x 1 x 4; records beyond topk */
    {264, 512, 8, 1, 4},    /* decode steps both: 8 x 5 x 20 = 800, 8 x 9 x 4 = 288 */
    {264, 7, 8, 1, 4},      /* decode steps values: 8 x 5 x 5 = 200, 8 x 9 x 4 = 288 */
    {72, 512, 8, 1, 3},     /* decode steps scores: 8 x 2 x 20 = 320, 8 x 3 x 4 = 96 */
    {160, 300, 8, 1, 3},    /* decode steps scores: 8 x 3 x 14 = 336, 8 x 5 x 4 = 160 */
    {256, 33, 2, 20, 30},   /* both: 40 x 4 x 6, 40 x 8 x 4 */
    {96, 512, 4, 2, 5},     /* scores: 8 x 2 x 20 = 320, at most 20 x 3 x 4 = 240 */
    {48, 200, 2, 40, 60},   /* both: 80 x 1 x 11, 80 x 2 x 4 */
    {32, 7, 2, 20, 26},     /* neither: at most 52 x 1 x 5 = 260, 52 x 1 x 4 = 208 */
    {17, 1, 1, 66, 70},     /* both: 66 x 1 x 5, 66 x 1 x 4 */
};
#define TILES_NIGHTLY_COMBOS ((int)(sizeof tiles_nightly_rows / sizeof tiles_nightly_rows[0]))

static void gen_tiles_nightly(csa4_case *c, cases_rng *r, long long i) {
  gen_tiles_row(c, r, i, &tiles_nightly_rows[i % TILES_NIGHTLY_COMBOS], 4);
}

/* ------------------------------------------------------- enumeration */

typedef void (*family_gen_fn)(csa4_case *c, cases_rng *r, long long i);
static const family_gen_fn family_gens[CSA4_FAMILY_COUNT] = {gen_chain, gen_state, gen_ties, gen_contract, gen_tiles};
/* The nightly suite's added cases: larger chains, starts and tiles; ties and contract as the gate's, other seeds. */
static const family_gen_fn nightly_gens[CSA4_FAMILY_COUNT] = {gen_chain_nightly, gen_state_nightly, gen_ties,
                                                              gen_contract, gen_tiles_nightly};

static int family_index(const char *family) {
  int f;
  for (f = 0; f < CSA4_FAMILY_COUNT; f++)
    if (!strcmp(family, cases_csa4_family_name((csa4_family)f))) return f;
  return -1;
}

static int family_combos(int f) {
  switch (f) {
  case CSA4_FAMILY_CHAIN: return CHAIN_COMBOS;
  case CSA4_FAMILY_STATE: return STATE_COMBOS;
  case CSA4_FAMILY_TIES: return TIES_COMBOS;
  case CSA4_FAMILY_CONTRACT: return contract_combos(NULL, 0);
  case CSA4_FAMILY_TILES: return TILES_COMBOS;
  default: return -1;
  }
}

static int nightly_combos(int f) {
  switch (f) {
  case CSA4_FAMILY_CHAIN: return CHAIN_NIGHTLY_COMBOS;
  case CSA4_FAMILY_STATE: return STATE_NIGHTLY_COMBOS;
  case CSA4_FAMILY_TILES: return TILES_NIGHTLY_COMBOS;
  default: return family_combos(f);
  }
}

int cases_csa4_family_combos(const char *family) { return family_combos(family_index(family)); }

/* count specs of family f, case i made by gens[f] from (seed, i). */
static int csa4_enumerate(int f, const family_gen_fn *gens, int count, unsigned long long seed,
                          void (*emit)(const char *spec, void *ctx), void *ctx) {
  int i;
  if (f < 0) return -1;
  for (i = 0; i < count; i++) {
    char spec[CSA4_CASE_SPEC_MAX], err[512] = "";
    csa4_case c, back;
    cases_rng r;
    memset(&c, 0, sizeof c);
    c.family = (csa4_family)f;
    c.contract_site = -1;
    cases_rng_init(&r, seed, CSA4_STREAM_ENUM + (uint32_t)f, 0, (uint64_t)i << 16);
    gens[f](&c, &r, i);
    c.seed = cases_rng_u64(seed, CSA4_STREAM_ENUM + (uint32_t)f, 1, (uint64_t)i) >> 32;
    if (cases_csa4_format(&c, spec, sizeof spec) || cases_csa4_parse(spec, &back, err, sizeof err)) {
      fprintf(stderr, "%s:%d: %s case %d is not a valid spec: %s\n  %s\n", __FILE__, __LINE__,
              cases_csa4_family_name((csa4_family)f), i, err, spec);
      abort(); /* a generator bug */
    }
    emit(spec, ctx);
  }
  return count;
}

int cases_csa4_enumerate(const char *family, int count, unsigned long long seed,
                         void (*emit)(const char *spec, void *ctx), void *ctx) {
  return csa4_enumerate(family_index(family), family_gens, count, seed, emit, ctx);
}

/* ------------------------------------------------------------- suite */

#define CASES_CSA4_SUITE_SEED 0x62697467617465ull   /* "bitgate" */
#define CASES_CSA4_NIGHTLY_SEED 0x6e696768746c79ull /* "nightly" */

/*
** Passes over each family's combinations in the gate suite (at scale 1):
** 128 + 32 + 48 + one per contract site + 20.
*/
static const int suite_passes[CSA4_FAMILY_COUNT] = {2, 2, 2, 1, 1};
/* The nightly suite's added passes over nightly_gens' combinations: 36 + 24 + 24 + one per contract site + 16. */
static const int nightly_passes[CSA4_FAMILY_COUNT] = {2, 2, 1, 1, 1};

static int csa4_write_suite(FILE *out, int per_family_scale, int nightly) {
  spec_list l = {0};
  int f;
  for (f = 0; f < CSA4_FAMILY_COUNT && !l.failed; f++) {
    csa4_enumerate(f, family_gens, suite_passes[f] * per_family_scale * family_combos(f), CASES_CSA4_SUITE_SEED,
                   spec_list_push, &l);
    if (nightly)
      csa4_enumerate(f, nightly_gens, nightly_passes[f] * nightly_combos(f), CASES_CSA4_NIGHTLY_SEED, spec_list_push,
                     &l);
  }
  return spec_list_write(&l, out);
}

int cases_csa4_write_suite(FILE *out, int per_family_scale) { return csa4_write_suite(out, per_family_scale, 0); }

int cases_csa4_write_nightly(FILE *out) { return csa4_write_suite(out, 1, 1); }

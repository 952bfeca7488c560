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

/* ------------------------------------------------------- enumeration */

typedef void (*family_gen_fn)(csa4_case *c, cases_rng *r, long long i);
static const family_gen_fn family_gens[CSA4_FAMILY_COUNT] = {gen_chain, gen_state, gen_ties, gen_contract};
/* The nightly suite's added cases: larger chains and starts; ties and contract as the gate's, other seeds. */
static const family_gen_fn nightly_gens[CSA4_FAMILY_COUNT] = {gen_chain_nightly, gen_state_nightly, gen_ties,
                                                              gen_contract};

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
  default: return -1;
  }
}

static int nightly_combos(int f) {
  switch (f) {
  case CSA4_FAMILY_CHAIN: return CHAIN_NIGHTLY_COMBOS;
  case CSA4_FAMILY_STATE: return STATE_NIGHTLY_COMBOS;
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

/* Passes over each family's combinations in the gate suite (at scale 1): 128 + 32 + 48 + one per contract site. */
static const int suite_passes[CSA4_FAMILY_COUNT] = {2, 2, 2, 1};
/* The nightly suite's added passes over nightly_gens' combinations: 36 + 24 + 24 + one per contract site. */
static const int nightly_passes[CSA4_FAMILY_COUNT] = {2, 2, 1, 1};

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

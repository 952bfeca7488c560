/*
** csa128_enumerate.c: the ratio-128 families' enumerators (the gate's and
** the nightly suite's *_nightly generators) and their part of the gate and
** nightly suites (csa128_cases.h).
**
** Case number i picks its combination as i modulo the family's combos, and
** the cursor r draws the rest.  Sizes follow the oracle's cost: a row
** attends to up to 128 + records candidates at ~512 nx_expf each, so
** long prefills and the 2^20 cursors keep b * heads at 1 or 2.
*/
#include "cases/csa128_cases_internal.h"

#include "cases/rng.h"
#include "cases/spec_list.h"
#include "cases/spec_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Capacity: exactly full half the time, else 1..3 spare rows. */
static void gen_capacity(csa_case *c, cases_rng *r) {
  c->capacity = csa128_final_total(c) / CSA128_RATIO + (csa_case_coin(r, 50) ? 0 : cases_rng_next_range(r, 1, 3));
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
  int f = spec_name_lookup(csa128_family_names, CSA_FAMILY_COUNT, family);
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
      fprintf(stderr, "%s:%d: %s case %d is not a valid spec: %s\n  %s\n", __FILE__, __LINE__, csa128_family_names[f],
              i, err, spec);
      abort(); /* a generator bug */
    }
    emit(spec, ctx);
  }
  return count;
}

int cases_csa_enumerate(const char *family, int count, unsigned long long seed,
                        void (*emit)(const char *spec, void *ctx), void *ctx) {
  return csa_enumerate(spec_name_lookup(csa128_family_names, CSA_FAMILY_COUNT, family), family_gens, count, seed, emit,
                       ctx);
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

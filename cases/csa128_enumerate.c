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

/*
** csa128.tiles: the shapes that take the fast attention's two tilings
** (device/kernels/csa_attention_abi.h), which the other families' 1..4
** heads never fill.  A pass runs its wide tiles once it has at least 264
** wide units (CSA_WIDE_MIN_UNITS), with bs = b x S and stride = 128 + cap:
**   scores  bs x ceil(heads / 64) x ceil(stride / 32)
**   values  bs x ceil(heads / 32) x 4
** and else its narrow tiles (16 heads a scores tile, 8 a values tile).
** Each row below sets step 0's bs (b x prefill) on one side of those sums,
** several right at a threshold, and the capacity (final total / 128
** records plus `spare`) so that the stride is known; the comments give the
** units and the passes that take wide tiles.  Heads 64 fill whole tiles;
** 72, 96, 40, 33 and 8 leave one partly full.  The start = 0 rows have
** strides of 128 (whole candidate tiles: the dense window alone) to 132,
** whose last tile ends partway on spare records, and dense windows of
** fewer than 128 tokens: candidates the kernels must mask (the
** prefill-130..140 row completes a block; the window draw shortens any
** row's window now and then).  The synthetic starts (records as
** csa128.state's) stretch the stride to 192 (8191), 425 (38000), 640
** (65535) and 8319 (1048500: every step of b = 2 takes wide scores, the
** decode steps too), plus the spare records.  Decode steps run 1..3 (1..2
** beyond 2^19), at bs = b <= 2: narrow tiles, whole ones with heads 16, 64
** and 96.  The shapes are written out, not derived from the ABI, so that a
** change of the kernels' thresholds leaves these specs and their digests
** as they are; cases/tests/test_csa_tiles.c fails if they stop reaching
** each tiling.
*/
typedef struct csa128_tiles_row {
  long long start, heads, batch, prefill_lo, prefill_hi, spare_lo, spare_hi;
} csa128_tiles_row;

static const csa128_tiles_row tiles_rows[] = {
    /* both passes wide (scores units, values units at the smallest prefill) */
    {0, 64, 2, 33, 33, 0, 0},        /* 66 x 1 x 4 = 264, 66 x 2 x 4 = 528: scores at the threshold */
    {0, 64, 1, 53, 60, 1, 3},        /* 53 x 1 x 5 = 265, 53 x 2 x 4 = 424 */
    {0, 72, 1, 27, 32, 2, 2},        /* 27 x 2 x 5 = 270, 27 x 3 x 4 = 324 */
    {0, 40, 2, 27, 30, 1, 1},        /* 54 x 1 x 5 = 270, 54 x 2 x 4 = 432 */
    {0, 33, 1, 66, 70, 0, 0},        /* 66 x 1 x 4 = 264, 66 x 2 x 4 = 528 */
    {0, 8, 1, 130, 140, 0, 3},       /* 130 x 1 x 5 = 650, 130 x 1 x 4 = 520: a live record */
    {65535, 72, 2, 11, 13, 0, 3},    /* 22 x 2 x 20 = 880, 22 x 3 x 4 = 264 */
    {8191, 40, 2, 22, 25, 0, 0},     /* 44 x 1 x 6 = 264, 44 x 2 x 4 = 352: stride 192 */
    {38000, 8, 2, 33, 36, 0, 3},     /* 66 x 1 x 14 = 924, 66 x 1 x 4 = 264 */
    {65535, 64, 2, 17, 20, 0, 3},    /* 34 x 1 x 20 = 680, 34 x 2 x 4 = 272 */
    {300, 64, 1, 53, 60, 0, 0},      /* 53 x 1 x 5 = 265, 53 x 2 x 4 = 424: two records */
    /* one pass wide */
    {0, 64, 1, 33, 33, 3, 3},        /* values: 33 x 1 x 5 = 165, 33 x 2 x 4 = 264 */
    {0, 64, 2, 30, 32, 0, 0},        /* values: at most 64 x 1 x 4 = 256, 60 x 2 x 4 = 480 */
    {0, 96, 2, 11, 13, 1, 1},        /* values: at most 26 x 2 x 5 = 260, 22 x 3 x 4 = 264 */
    {0, 8, 1, 53, 65, 2, 2},         /* scores: 53 x 1 x 5 = 265, at most 65 x 1 x 4 = 260 */
    {65535, 64, 1, 14, 20, 0, 3},    /* scores: 14 x 1 x 20 = 280, at most 20 x 2 x 4 = 160 */
    {38000, 33, 1, 19, 32, 0, 3},    /* scores: 19 x 1 x 14 = 266, at most 32 x 2 x 4 = 256 */
    {1048500, 8, 2, 1, 2, 0, 3},     /* scores: 2 x 1 x 260 = 520 (every step), at most 4 x 1 x 4 = 16 */
    /* both narrow, whole narrow tiles in step 0 too */
    {0, 16, 2, 3, 20, 0, 3},         /* at most 40 x 1 x 5 = 200, 40 x 1 x 4 = 160 */
    {0, 64, 1, 1, 20, 0, 3},         /* at most 20 x 1 x 5 = 100, 20 x 2 x 4 = 160 */
};
#define TILES_COMBOS ((int)(sizeof tiles_rows / sizeof tiles_rows[0]))

/* One case of `row`; the cache format alternates from case to case. */
static void gen_tiles_row(csa_case *c, cases_rng *r, long long i, const csa128_tiles_row *row, long long decode_hi) {
  int far = row->start > (1ll << 19);
  c->start = row->start;
  c->format = i % 2 ? CSA_CACHE_FP8 : CSA_CACHE_F32;
  c->heads = row->heads;
  c->batch = row->batch;
  c->prefill = cases_rng_next_range(r, row->prefill_lo, row->prefill_hi);
  c->decode = cases_rng_next_range(r, 1, far ? 2 : decode_hi);
  c->window = csa_case_gen_window(r);
  c->capacity = csa128_final_total(c) / CSA128_RATIO + cases_rng_next_range(r, row->spare_lo, row->spare_hi);
  gen_bias(c, r, (int)(i % BIAS_KINDS));
  c->sink = (csa_sink)(i % CSA_SINK_COUNT);
  gen_scale(c, r);
}

static void gen_tiles(csa_case *c, cases_rng *r, long long i) {
  gen_tiles_row(c, r, i, &tiles_rows[i % TILES_COMBOS], 3);
}

/*
** csa128.tiles, nightly: more head counts (17 to 264), prefills of
** hundreds of tokens, a stride of 1152 (131072), and b = 4 and 8 chains
** whose decode steps take wide tiles themselves (their units at bs = b).
** Rows as tiles_rows, with 1..4 decode steps.
*/
static const csa128_tiles_row tiles_nightly_rows[] = {
    {0, 128, 2, 40, 60, 0, 3},       /* both: 80 x 2 x 4, 80 x 4 x 4 */
    {0, 264, 8, 1, 4, 0, 3},         /* decode steps values: at most 8 x 5 x 5 = 200, 8 x 9 x 4 = 288 */
    {65535, 256, 4, 1, 2, 0, 3},     /* decode steps scores: 4 x 4 x 20 = 320, 4 x 8 x 4 = 128 */
    {1048500, 64, 2, 1, 2, 0, 3},    /* scores, every step: 2 x 1 x 260 = 520, at most 4 x 2 x 4 = 32 */
    {0, 64, 1, 300, 400, 0, 3},      /* both: 300 x 1 x 5, 300 x 2 x 4; two or three live records */
    {131072, 65, 2, 4, 8, 0, 3},     /* scores: 8 x 2 x 36 = 576, at most 16 x 3 x 4 = 192 */
    {0, 65, 2, 30, 40, 0, 3},        /* both: 60 x 2 x 4, 60 x 3 x 4 */
    {0, 63, 2, 33, 40, 0, 0},        /* both: 66 x 1 x 4 = 264, 66 x 2 x 4 */
    {0, 24, 1, 66, 80, 0, 3},        /* both: 66 x 1 x 4 = 264, 66 x 1 x 4 = 264 */
    {65535, 160, 8, 1, 2, 0, 3},     /* decode steps scores: 8 x 3 x 20 = 480, 8 x 5 x 4 = 160 */
    {8191, 264, 8, 1, 3, 0, 0},      /* decode steps values: 8 x 5 x 6 = 240, 8 x 9 x 4 = 288 */
    {65535, 256, 2, 7, 10, 0, 3},    /* both: 14 x 4 x 20, 14 x 8 x 4 */
    {38000, 96, 4, 3, 5, 0, 3},      /* scores: 12 x 2 x 14 = 336, at most 20 x 3 x 4 = 240 */
    {0, 48, 2, 40, 60, 0, 3},        /* both: 80 x 1 x 4, 80 x 2 x 4 */
    {0, 32, 2, 20, 26, 0, 0},        /* neither: at most 52 x 1 x 4 = 208, 52 x 1 x 4 = 208 */
    {300, 17, 1, 66, 70, 0, 3},      /* both: 66 x 1 x 5, 66 x 1 x 4 */
};
#define TILES_NIGHTLY_COMBOS ((int)(sizeof tiles_nightly_rows / sizeof tiles_nightly_rows[0]))

static void gen_tiles_nightly(csa_case *c, cases_rng *r, long long i) {
  gen_tiles_row(c, r, i, &tiles_nightly_rows[i % TILES_NIGHTLY_COMBOS], 4);
}

typedef void (*family_gen_fn)(csa_case *c, cases_rng *r, long long i);
static const family_gen_fn family_gens[CSA_FAMILY_COUNT] = {gen_chain, gen_state, gen_contract, gen_tiles};
static const int family_combos[CSA_FAMILY_COUNT] = {CHAIN_COMBOS, STATE_COMBOS, CONTRACT_COMBOS, TILES_COMBOS};
/*
** The nightly suite's added cases: longer and wider chains, further starts,
** wider tiles; contract as the gate's, other seeds.
*/
static const family_gen_fn nightly_gens[CSA_FAMILY_COUNT] = {gen_chain_nightly, gen_state_nightly, gen_contract,
                                                             gen_tiles_nightly};
static const int nightly_combos[CSA_FAMILY_COUNT] = {CHAIN_NIGHTLY_COMBOS, STATE_COMBOS, CONTRACT_COMBOS,
                                                     TILES_NIGHTLY_COMBOS};

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

/* Passes over each family's combinations in the gate suite (at scale 1): 200 + 48 + 54 + 20 specs. */
static const int suite_passes[CSA_FAMILY_COUNT] = {2, 3, 2, 1};
/* The nightly suite's added passes over nightly_gens' combinations: 24 + 32 + 54 + 16 specs. */
static const int nightly_passes[CSA_FAMILY_COUNT] = {2, 2, 2, 1};

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

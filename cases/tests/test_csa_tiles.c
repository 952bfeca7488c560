/*
** test_csa_tiles.c: which tiles of the fast CSA attention the csa4.tiles and
** csa128.tiles gate cases reach (cases/csa4_enumerate.c,
** cases/csa128_enumerate.c).  Every step of every tiles case of a ratio's
** generated gate suite is classed the way the launchers class it
** (device/kernels/csa_attention_abi.h: csa_attn_wide_scores,
** csa_attn_narrow_scores and csa_attn_wide_values of bs = b x S and the
** row stride, 128 + topk or 128 + cap), and each reach below must hold for
** some step, at both
** ratios.  The generators write their shapes out rather than derive them
** from the ABI, so this is what fails when the kernels' thresholds or tile
** widths move and the gate no longer reaches a tiling.
*/
#include "cases/csa128_cases.h"
#include "cases/csa4_cases.h"
#include "csa_test_util.h"
#include "device/kernels/csa_attention_abi.h"

#include <criterion/criterion.h>
#include <stdio.h>

/* One step as the attention passes see it. */
typedef struct tiles_step {
  int step;
  long long bs, heads, stride;
  int wide_scores, wide_values, narrow_scores; /* narrow_scores: the resident tiles, not one-chain */
} tiles_step;

typedef int (*tiles_reach_fn)(const tiles_step *s);

static int both_wide(const tiles_step *s) { return s->step == 0 && s->wide_scores && s->wide_values; }
static int both_narrow(const tiles_step *s) { return !s->wide_scores && !s->wide_values; }
/* Heads that fill whole narrow scores and values tiles (64, 96). */
static int whole_narrow_tiles(const tiles_step *s) {
  return s->heads % CSA_RESIDENT_HEADS == 0 && s->heads % CSA_NARROW_VALUE_HEADS == 0;
}
/* Heads that fill whole narrow values tiles and part of a narrow scores tile (8, 16, 40, 72). */
static int part_narrow_scores_tile(const tiles_step *s) {
  return s->heads % CSA_RESIDENT_HEADS != 0 && s->heads % CSA_NARROW_VALUE_HEADS == 0;
}

/* Step 0, both passes wide: whole wide tiles of both passes. */
static int reach_wide_whole(const tiles_step *s) { return both_wide(s) && s->heads % CSA_WIDE_SCORE_HEADS == 0; }
/* ... a whole wide scores tile and part of a second (heads 72, 96). */
static int reach_wide_whole_and_part(const tiles_step *s) {
  return both_wide(s) && s->heads > CSA_WIDE_SCORE_HEADS && s->heads % CSA_WIDE_SCORE_HEADS != 0;
}
/* ... a values tile partly full (heads 72, 40, 33, 8). */
static int reach_wide_values_part(const tiles_step *s) {
  return both_wide(s) && s->heads % CSA_WIDE_VALUE_HEADS != 0;
}
/* ... fewer heads than one wide values tile holds (8). */
static int reach_wide_one_part_tile(const tiles_step *s) { return both_wide(s) && s->heads < CSA_WIDE_VALUE_HEADS; }
/* The heads of one warp of a wide values tile (4; a wide scores tile's warp takes 8). */
#define WIDE_VALUE_WARP_HEADS (CSA_WIDE_VALUE_HEADS / (CSA_TILE_THREADS / 32))
/* ... a warp of either pass whose heads are partly there (33). */
static int reach_wide_part_warp(const tiles_step *s) {
  return both_wide(s) && s->heads % WIDE_VALUE_WARP_HEADS != 0;
}
/* Step 0, one pass wide and the other on narrow tiles, a whole one at least. */
static int reach_scores_only(const tiles_step *s) {
  return s->step == 0 && s->wide_scores && !s->wide_values && s->heads >= CSA_NARROW_VALUE_HEADS;
}
static int reach_values_only(const tiles_step *s) {
  return s->step == 0 && !s->wide_scores && s->wide_values && s->heads >= CSA_RESIDENT_HEADS;
}
/* Narrow tiles: a decode step after a prefill, whole tiles or a part scores tile, and a prefill. */
static int reach_decode_narrow(const tiles_step *s) { return s->step > 0 && both_narrow(s) && whole_narrow_tiles(s); }
static int reach_decode_narrow_part(const tiles_step *s) {
  return s->step > 0 && both_narrow(s) && part_narrow_scores_tile(s);
}
static int reach_prefill_narrow(const tiles_step *s) {
  return s->step == 0 && both_narrow(s) && whole_narrow_tiles(s);
}
/* Wide scores whose last candidate tile ends partway, and wide scores of whole candidate tiles. */
static int reach_wide_cut_candidates(const tiles_step *s) { return s->wide_scores && s->stride % CSA_TILE_CANDS != 0; }
static int reach_wide_whole_candidates(const tiles_step *s) {
  return s->wide_scores && s->stride % CSA_TILE_CANDS == 0;
}

/* Below wide, scores on the narrow tiles, whole ones; and on the one-chain tiles with heads >= 8. */
static int reach_narrow_scores(const tiles_step *s) {
  return s->narrow_scores && s->heads % CSA_RESIDENT_HEADS == 0;
}
/* ... and narrow scores tiles with some heads missing (a consumer's chains, a producer's query rows). */
static int reach_narrow_part_heads(const tiles_step *s) {
  return s->narrow_scores && s->heads % CSA_RESIDENT_HEADS != 0;
}
static int reach_one_chain_scores(const tiles_step *s) {
  return !s->wide_scores && !s->narrow_scores && s->heads >= CSA_ONE_SCORE_HEADS;
}
/* Narrow scores whose last candidate tile ends partway (some chain lanes' and producers' rows missing). */
static int reach_narrow_cut_candidates(const tiles_step *s) {
  return s->narrow_scores && s->stride % CSA_RESIDENT_CANDS != 0;
}

static const struct tiles_reach {
  const char *what;
  tiles_reach_fn reached;
} reaches[] = {
    {"step 0 on wide scores and values, whole 64-head tiles", reach_wide_whole},
    {"step 0 on wide scores and values, a whole scores tile and part of one", reach_wide_whole_and_part},
    {"step 0 on wide scores and values, a values tile partly full", reach_wide_values_part},
    {"step 0 on wide scores and values, fewer heads than a values tile", reach_wide_one_part_tile},
    {"step 0 on wide scores and values, a warp's heads partly there", reach_wide_part_warp},
    {"step 0 on wide scores and narrow values, a whole values tile", reach_scores_only},
    {"step 0 on narrow scores and wide values, a whole scores tile", reach_values_only},
    {"a decode step on whole narrow tiles", reach_decode_narrow},
    {"a decode step on narrow tiles, a scores tile partly full", reach_decode_narrow_part},
    {"step 0 on whole narrow tiles", reach_prefill_narrow},
    {"wide scores whose last candidate tile ends partway", reach_wide_cut_candidates},
    {"wide scores of whole candidate tiles", reach_wide_whole_candidates},
    {"scores on whole narrow tiles", reach_narrow_scores},
    {"scores on narrow tiles, a head tile partly full", reach_narrow_part_heads},
    {"scores on one-chain tiles, 8 heads or more", reach_one_chain_scores},
    {"narrow scores whose last candidate tile ends partway", reach_narrow_cut_candidates},
};
#define REACH_COUNT ((int)(sizeof reaches / sizeof reaches[0]))

/* A tiles case's shape: the step geometry both ratios share. */
typedef struct tiles_case {
  long long batch, heads, prefill, decode, stride;
} tiles_case;

/* Counts, per reach, the steps of c that have it. */
static void tiles_count(const tiles_case *c, int counts[REACH_COUNT]) {
  int step, k;
  for (step = 0; step <= c->decode; step++) {
    tiles_step s;
    s.step = step;
    s.bs = c->batch * (step == 0 ? c->prefill : 1);
    s.heads = c->heads;
    s.stride = c->stride;
    s.wide_scores = csa_attn_wide_scores(s.bs, s.heads, s.stride);
    s.wide_values = csa_attn_wide_values(s.bs, s.heads);
    s.narrow_scores = csa_attn_narrow_scores(s.bs, s.heads, s.stride);
    for (k = 0; k < REACH_COUNT; k++) counts[k] += reaches[k].reached(&s) != 0;
  }
}

/* Every reach has a step; prints the counts. */
static void tiles_expect(const char *family, int cases, const int counts[REACH_COUNT]) {
  int k;
  cr_expect(cases > 0, "the gate suite has no %s case", family);
  printf("%s: %d gate cases; steps per reach:", family, cases);
  for (k = 0; k < REACH_COUNT; k++) {
    printf(" %d", counts[k]);
    cr_expect(counts[k] > 0, "no %s gate step reaches: %s", family, reaches[k].what);
  }
  printf("\n");
  fflush(stdout);
}

Test(csa_tiles, csa4_tiles_reach_every_tiling) {
  spec_set s = csa_test_generated_suite(cases_csa4_write_suite, "ratio-4");
  int counts[REACH_COUNT] = {0}, cases = 0, i;
  for (i = 0; i < s.n; i++) {
    csa4_case c;
    char err[512];
    cr_assert_eq(cases_csa4_parse(s.v[i], &c, err, sizeof err), 0, "%s\n  %s", err, s.v[i]);
    if (c.family != CSA4_FAMILY_TILES) continue;
    cases++;
    tiles_count(&(tiles_case){c.batch, c.heads, c.prefill, c.decode, CSA_DENSE_WINDOW + c.topk}, counts);
  }
  tiles_expect("csa4.tiles", cases, counts);
  spec_set_free(&s);
}

Test(csa_tiles, csa128_tiles_reach_every_tiling) {
  spec_set s = csa_test_generated_suite(cases_csa_write_suite, "ratio-128");
  int counts[REACH_COUNT] = {0}, cases = 0, formats[2] = {0}, i;
  for (i = 0; i < s.n; i++) {
    csa_case c;
    char err[512];
    cr_assert_eq(cases_csa_parse(s.v[i], &c, err, sizeof err), 0, "%s\n  %s", err, s.v[i]);
    if (c.family != CSA_FAMILY_TILES) continue;
    cases++;
    formats[c.format == CSA_CACHE_FP8]++;
    tiles_count(&(tiles_case){c.batch, c.heads, c.prefill, c.decode, CSA_DENSE_WINDOW + c.capacity}, counts);
  }
  tiles_expect("csa128.tiles", cases, counts);
  cr_expect(formats[0] > 0 && formats[1] > 0, "csa128.tiles lacks a cache format (f32 %d, fp8 %d)", formats[0],
            formats[1]);
  spec_set_free(&s);
}

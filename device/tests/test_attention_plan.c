/*
** test_attention_plan.c: csa_device_attention_plan's choices for the fast
** attention's four passes at the bench's shapes (docs/SPEED.md): the tiling
** and blocks of each pass (0: not launched, as the gather where the narrow
** scores tiles decode their own rows), which passes are chained, which
** release the next one early and which take an SM a block.  Plain C, no GPU.
*/
#include "device/csa_device_common.h"
#include "device/kernels/csa_attention_abi.h"

#include <criterion/criterion.h>

#define HEADS 64
#define WINDOW 128

typedef struct plan_case {
  const char *what;
  long long bs_rows, stride;
  csa_attn_tiling tiling[CSA_ATTN_PASSES];
  unsigned long long blocks[CSA_ATTN_PASSES];
  int release_early[CSA_ATTN_PASSES], sm_alone[CSA_ATTN_PASSES];
} plan_case;

/*
** The bench's attention shapes (docs/SPEED.md, fourteenth round):
** - ratio 128 at position 4,096, 32 records and the window: 19.8 us plain,
**   16.5 with every pass released early;
** - top-k 512 and the window (ratio 4; ratio 128 at 64K): 29.8 us plain,
**   34.2 released early with the scheduler free to double blocks up, 27.0
**   with an SM a block;
** - the same at B = 64: many waves a pass, so each is released at the end;
** - at B = 1 with 640 candidates the narrow scores tiles decode their rows
**   themselves (csa_attention_resident.h), so no gather is launched and the
**   scores pass, first, is not chained.
*/
static const plan_case bench_shapes[] = {
    {"ratio 128, 4K, B=1", 1, WINDOW + 32, {CSA_TILING_ONE, CSA_TILING_ONE, CSA_TILING_ONE, CSA_TILING_ONE},
     {20, 40, 64, 128}, {1, 1, 1, 0}, {0, 1, 1, 1}},
    {"640 candidates, B=1", 1, WINDOW + 512, {CSA_TILING_ONE, CSA_TILING_NARROW, CSA_TILING_ONE, CSA_TILING_ONE},
     {0, 80, 64, 128}, {0, 1, 1, 0}, {0, 0, 1, 1}},
    {"640 candidates, B=64", 64, WINDOW + 512, {CSA_TILING_ONE, CSA_TILING_WIDE, CSA_TILING_ONE, CSA_TILING_WIDE},
     {5120, 1280, 4096, 512}, {0, 0, 0, 0}, {0, 0, 0, 0}},
};

Test(attention_plan, bench_shapes_tile_release_and_take_sms_as_measured) {
  size_t k;
  for (k = 0; k < sizeof bench_shapes / sizeof bench_shapes[0]; k++) {
    const plan_case *want = &bench_shapes[k];
    csa_attn_launch plan[CSA_ATTN_PASSES];
    int i;
    csa_device_attention_plan(want->bs_rows, HEADS, want->stride, plan);
    for (i = 0; i < CSA_ATTN_PASSES; i++) {
      cr_expect_eq(plan[i].tiling, want->tiling[i], "%s, pass %d: tiling %d, want %d", want->what, i,
                   (int)plan[i].tiling, (int)want->tiling[i]);
      cr_expect_eq(plan[i].blocks, want->blocks[i], "%s, pass %d: %llu blocks, want %llu", want->what, i,
                   plan[i].blocks, want->blocks[i]);
      cr_expect_eq(plan[i].chained, i > 0 && want->blocks[i] && (i > 1 || want->blocks[0]),
                   "%s, pass %d: chained %d", want->what, i, plan[i].chained);
      cr_expect_eq(plan[i].release_early, want->release_early[i], "%s, pass %d: release_early %d, want %d",
                   want->what, i, plan[i].release_early, want->release_early[i]);
      cr_expect_eq(plan[i].sm_alone, want->sm_alone[i], "%s, pass %d: sm_alone %d, want %d", want->what, i,
                   plan[i].sm_alone, want->sm_alone[i]);
    }
  }
}

/*
** Whatever the shape: the gather is launched unless the scores pass takes
** its narrow tiles; the first pass launched is plain and every later one
** chained; a pass released early takes an SM a block and is one wave of
** them, and every other pass is released at the end of the one before.
*/
Test(attention_plan, early_release_means_an_sm_a_block_in_one_wave) {
  long long bs, stride;
  for (bs = 1; bs <= 8; bs++)
    for (stride = 1; stride <= 1024; stride += 7) {
      csa_attn_launch plan[CSA_ATTN_PASSES];
      const int gathers = !csa_attn_narrow_scores(bs, HEADS, stride);
      int i;
      csa_device_attention_plan(bs, HEADS, stride, plan);
      cr_assert_eq(plan[CSA_ATTN_GATHER].blocks > 0, gathers, "bs %lld, stride %lld: gather blocks %llu", bs, stride,
                   plan[CSA_ATTN_GATHER].blocks);
      cr_assert_eq(plan[CSA_ATTN_VALUES].release_early, 0, "bs %lld, stride %lld: the values pass", bs, stride);
      cr_assert_eq(plan[CSA_ATTN_GATHER].sm_alone, 0, "bs %lld, stride %lld: the gather", bs, stride);
      cr_assert_eq(plan[CSA_ATTN_GATHER].release_early && !gathers, 0, "bs %lld, stride %lld: released unlaunched",
                   bs, stride);
      for (i = 1; i < CSA_ATTN_PASSES; i++) {
        cr_assert_eq(plan[i].chained, i > 1 || gathers, "bs %lld, stride %lld, pass %d: chained %d", bs, stride, i,
                     plan[i].chained);
        cr_assert_eq(plan[i].sm_alone, plan[i - 1].release_early, "bs %lld, stride %lld, pass %d", bs, stride, i);
        if (plan[i].sm_alone)
          cr_assert_leq(plan[i].blocks, CSA_CHAIN_MAX_BLOCKS, "bs %lld, stride %lld, pass %d: %llu blocks alone", bs,
                        stride, i, plan[i].blocks);
      }
    }
}

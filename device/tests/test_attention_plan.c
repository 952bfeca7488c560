/*
** test_attention_plan.c: csa_device_attention_plan's choices for the fast
** attention's four passes at the bench's shapes (docs/SPEED.md): the tiling
** and blocks of each pass, which passes are chained and which release the
** next one early.  Plain C, no GPU.
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
  int release_early[CSA_ATTN_PASSES];
} plan_case;

static void check_plan(const plan_case *want) {
  csa_attn_launch plan[CSA_ATTN_PASSES];
  int i;
  csa_device_attention_plan(want->bs_rows, HEADS, want->stride, plan);
  for (i = 0; i < CSA_ATTN_PASSES; i++) {
    cr_expect_eq(plan[i].tiling, want->tiling[i], "%s, pass %d: tiling %d, want %d", want->what, i,
                 (int)plan[i].tiling, (int)want->tiling[i]);
    cr_expect_eq(plan[i].blocks, want->blocks[i], "%s, pass %d: %llu blocks, want %llu", want->what, i,
                 plan[i].blocks, want->blocks[i]);
    cr_expect_eq(plan[i].chained, i > 0, "%s, pass %d: chained %d", want->what, i, plan[i].chained);
    cr_expect_eq(plan[i].release_early, want->release_early[i], "%s, pass %d: release_early %d, want %d",
                 want->what, i, plan[i].release_early, want->release_early[i]);
  }
}

/* Ratio 128 at position 4,096: 32 records and the window.  The gather and the scores pass release early. */
Test(attention_plan, short_row_releases_the_passes_that_fit_early) {
  const plan_case c = {"ratio 128, 4K, B=1", 1, WINDOW + 32,
                       {CSA_TILING_ONE, CSA_TILING_ONE, CSA_TILING_ONE, CSA_TILING_ONE},
                       {20, 40, 64, 128},
                       {1, 1, 0, 0}};
  check_plan(&c);
}

/* Top-k 512 and the window (ratio 4; ratio 128 at 64K): released early, 30 -> 34 us; at the end, 28.7. */
Test(attention_plan, long_row_releases_at_the_end) {
  const plan_case c = {"640 candidates, B=1", 1, WINDOW + 512,
                       {CSA_TILING_ONE, CSA_TILING_NARROW, CSA_TILING_ONE, CSA_TILING_ONE},
                       {80, 80, 64, 128},
                       {0, 0, 0, 0}};
  check_plan(&c);
}

Test(attention_plan, many_rows_release_at_the_end) {
  const plan_case c = {"640 candidates, B=64", 64, WINDOW + 512,
                       {CSA_TILING_ONE, CSA_TILING_WIDE, CSA_TILING_ONE, CSA_TILING_WIDE},
                       {5120, 1280, 4096, 512},
                       {0, 0, 0, 0}};
  check_plan(&c);
}

/* Whatever the shape: a pass releases early only where it and the next fit on the SMs side by side. */
Test(attention_plan, early_pairs_fit_side_by_side) {
  long long bs, stride;
  for (bs = 1; bs <= 8; bs++)
    for (stride = 1; stride <= 1024; stride += 7) {
      csa_attn_launch plan[CSA_ATTN_PASSES];
      int i;
      csa_device_attention_plan(bs, HEADS, stride, plan);
      cr_assert_eq(plan[CSA_ATTN_VALUES].release_early, 0, "bs %lld, stride %lld: the values pass", bs, stride);
      for (i = 0; i + 1 < CSA_ATTN_PASSES; i++)
        cr_assert_eq(plan[i].release_early, plan[i].blocks + plan[i + 1].blocks <= CSA_CHAIN_MAX_BLOCKS,
                     "bs %lld, stride %lld, pass %d: release_early %d, %llu + %llu blocks", bs, stride, i,
                     plan[i].release_early, plan[i].blocks, plan[i + 1].blocks);
    }
}

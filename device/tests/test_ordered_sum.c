/*
** test_ordered_sum.c: ordered_block_sum (device/kernels/ordered_sum_block.h),
** an in-order float sum taken a segment a half-warp from guesses of each
** segment's start (the softmax's denominator is such a sum), through
** ordered_sum_probe.cu, against a plain left-to-right float loop here.
**
** Its answer must be the loop's, bit for bit, on either path: a segment
** whose true start is one of its guesses (the common case: terms of
** similar size, checked to need no fallback at all) and a segment it adds
** again from the true start (tiny terms after a large one, which the
** ordered sum absorbs while the estimate does not: checked to fall back).
** The rows also cover a NaN, zeros, subnormals, one term, no terms, a
** length that fills no whole segment and the longest row.
**
** The CUBIN test needs NVRTC only; the rest skip without a GPU.
*/
#include "device/tests/gpu_test_support.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_FILE "ordered_sum_probe.cu"
#define PROBE_KERNEL "ordered_sum_probe"
#define PROBE_ROW 1024   /* ORDERED_PROBE_ROW */
#define PROBE_THREADS 256 /* a segment a warp to fill */

typedef enum row_kind { ROW_SIMILAR, ROW_ABSORBED, ROW_NAN, ROW_ZEROS, ROW_SUBNORMAL, ROW_SPREAD } row_kind;

typedef struct probe_row {
  const char *what;
  row_kind kind;
  int n;
  int misses; /* -1: any number of segments may fall back */
} probe_row;

static const probe_row rows[] = {
    {"640 similar terms (the softmax at B = 1)", ROW_SIMILAR, 640, 0},
    {"1 then 639 terms of 1e-8 (absorbed: the estimates drift)", ROW_ABSORBED, 640, 3},
    {"a NaN at 300", ROW_NAN, 640, -1},
    {"640 zeros", ROW_ZEROS, 640, 0},
    {"777 subnormals", ROW_SUBNORMAL, 777, -1},
    {"a large term every 97", ROW_SPREAD, 1000, -1},
    {"one term", ROW_SIMILAR, 1, 0},
    {"no terms", ROW_SIMILAR, 0, 0},
    {"160 terms (ratio 128, 4K)", ROW_SIMILAR, 160, 0},
    {"1,021 terms: no whole segment", ROW_SIMILAR, 1021, -1},
    {"1,024 terms: the longest row", ROW_SIMILAR, 1024, -1},
};
#define N_ROWS (sizeof rows / sizeof *rows)

static float term(const probe_row *r, int i) {
  const float similar = fabsf(gpu_test_value(7u + (unsigned)r->n, i)) / 2.0f; /* [0, 1) */
  switch (r->kind) {
  case ROW_ABSORBED: return i == 0 ? 1.0f : 1e-8f;
  case ROW_NAN: return i == 300 ? NAN : similar;
  case ROW_ZEROS: return 0.0f;
  case ROW_SUBNORMAL: return 1e-40f * (float)(i % 7);
  case ROW_SPREAD: return i % 97 == 0 ? 1e6f : similar;
  default: return similar;
  }
}

static unsigned bits_of(float f) {
  unsigned u;
  memcpy(&u, &f, sizeof u);
  return u;
}

Test(ordered_sum, probe_compiles_to_an_sm90_cubin) {
  static const char *const names[] = {PROBE_KERNEL};
  gpu_test_expect_cubin(PROBE_FILE, names, 1);
}

Test(ordered_sum, block_sum_is_the_left_to_right_loop_on_both_paths) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  float *x = calloc(N_ROWS * PROBE_ROW, sizeof *x), got[N_ROWS];
  int n[N_ROWS], missed[N_ROWS];
  device_buffer d_x, d_n, d_sum, d_missed;
  void *kernel, *p_x, *p_n, *p_sum, *p_missed;
  void *args[] = {&p_x, &p_n, &p_sum, &p_missed};
  size_t r;
  int i;
  cr_assert_not_null(x);
  for (r = 0; r < N_ROWS; r++) {
    n[r] = rows[r].n;
    for (i = 0; i < n[r]; i++) x[r * PROBE_ROW + i] = term(&rows[r], i);
  }
  GPU_RT_OK(rt, device_runtime_kernel(rt, PROBE_FILE, PROBE_KERNEL, &kernel));
  GPU_RT_OK(rt, device_buffer_alloc(rt, N_ROWS * PROBE_ROW * sizeof *x, &d_x));
  GPU_RT_OK(rt, device_buffer_alloc(rt, sizeof n, &d_n));
  GPU_RT_OK(rt, device_buffer_alloc(rt, sizeof got, &d_sum));
  GPU_RT_OK(rt, device_buffer_alloc(rt, sizeof missed, &d_missed));
  GPU_RT_OK(rt, device_buffer_upload(rt, &d_x, x, N_ROWS * PROBE_ROW * sizeof *x));
  GPU_RT_OK(rt, device_buffer_upload(rt, &d_n, n, sizeof n));
  p_x = d_x.dptr, p_n = d_n.dptr, p_sum = d_sum.dptr, p_missed = d_missed.dptr;
  GPU_RT_OK(rt, device_runtime_launch(rt, kernel, PROBE_KERNEL, N_ROWS, PROBE_THREADS, args));
  GPU_RT_OK(rt, device_buffer_download(rt, &d_sum, got, sizeof got));
  GPU_RT_OK(rt, device_buffer_download(rt, &d_missed, missed, sizeof missed));
  for (r = 0; r < N_ROWS; r++) {
    float want = 0.0f;
    for (i = 0; i < n[r]; i++) want = want + x[r * PROBE_ROW + i];
    if (isnan(want))
      cr_expect(isnan(got[r]), "%s: %a (bits %08x), where the loop gives NaN", rows[r].what, got[r], bits_of(got[r]));
    else
      cr_expect_eq(bits_of(got[r]), bits_of(want), "%s: %a (bits %08x), where the loop gives %a (bits %08x)",
                   rows[r].what, got[r], bits_of(got[r]), want, bits_of(want));
    if (rows[r].misses >= 0)
      cr_expect_eq(missed[r], rows[r].misses, "%s: %d segments fell back, where %d should", rows[r].what,
                   missed[r], rows[r].misses);
    cr_log_info("%s: sum %a, %d of 8 segments fell back", rows[r].what, got[r], missed[r]);
  }
  cr_expect_eq(bits_of(got[1]), bits_of(1.0f), "the absorbed row's loop sum is 1 exactly");
  device_buffer_free(&d_x), device_buffer_free(&d_n), device_buffer_free(&d_sum), device_buffer_free(&d_missed);
  free(x);
  device_runtime_destroy(rt);
}

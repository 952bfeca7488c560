/*
** test_gpu.c: the frozen numerics on the GPU give the host's bits
** (DESIGN.md "The frozen numerics" and "BF16 and f16").
**
** Runs the numerics_sweep kernel (device/numerics_sweep.h) over windows of
** consecutive bit patterns around chosen inputs (signed zeros, infinities,
** NaNs, subnormals, 1.0, format boundaries, DESIGN.md's hard inputs) and a
** strided sweep over the whole bit space, a few thousand inputs per function,
** and compares every function with device_sweep_expected(): the host's
** numerics.h result, which CUDA's __float2bfloat16_rn/__float2half_rn must
** equal too.  The exhaustive 2^32 check is `bitgate numerics check --device`.
**
** Without a GPU (or without the CUDA toolkit) every test skips, naming the
** reason, and the binary exits 77 so CTest reports it as skipped, not passed.
*/
#include "device/device.h"
#include "device/numerics_sweep.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>

#define WINDOW_HALF 16 /* each chosen input with 16 neighbours either side */

/* Chosen inputs by their bits, with why. */
static const struct chosen_input {
  unsigned bits;
  const char *why;
} chosen_inputs[] = {
    {0x00000000u, "+0"},
    {0x80000000u, "-0"},
    {0x7f800000u, "+inf"},
    {0xff800000u, "-inf"},
    {0x7fc00000u, "quiet NaN"},
    {0xffc00000u, "negative quiet NaN"},
    {0x7f800001u, "signalling NaN"},
    {0xffffffffu, "all-ones NaN (wraps to 0)"},
    {0x7fff8000u, "NaN whose seed bf16 rounding carries"},
    {0x00000001u, "smallest subnormal"},
    {0x007fffffu, "largest subnormal"},
    {0x00800000u, "smallest normal"},
    {0x3f800000u, "1.0"},
    {0xbf800000u, "-1.0"},
    {0x3f808000u, "bf16 tie above 1.0"},
    {0x7f7f8000u, "bf16 tie that rounds to inf"},
    {0x7f7fffffu, "FLT_MAX"},
    {0x477fe000u, "65504, f16 max"},
    {0x477ff000u, "65520, f16 overflow threshold"},
    {0x38800000u, "2^-14, f16 smallest normal"},
    {0x33800000u, "2^-24, f16 smallest subnormal"},
    {0x33000000u, "2^-25, f16 half of the smallest subnormal"},
    {0x43e00000u, "448, e4m3 max"},
    {0x3b000000u, "2^-9, e4m3 smallest subnormal"},
    {0x42b20000u, "89, expf overflow cut"},
    {0xc2d00000u, "-104, expf underflow cut"},
    {0x3f490fdbu, "pi/4"},
    {0x3fc90fdbu, "pi/2"},
};
#define CHOSEN_COUNT (sizeof chosen_inputs / sizeof chosen_inputs[0])

/* DESIGN.md's hard inputs, written as the floats it names. */
static const struct hard_input {
  float x;
  const char *why;
} hard_inputs[] = {
    {0x1.04845ep+5f, "0x1.04845ep+5, hard expf input"},
    {-0x1.d2259ap+3f, "-0x1.d2259ap+3, hard expf input"},
    {0x1.33333p+13f, "0x1.33333p+13, hard sinf input"},
    {0x1.3170fp+63f, "0x1.3170fp+63, hard cosf input"},
    {0x1.2b9622p+67f, "0x1.2b9622p+67, hard cosf input"},
};
#define HARD_COUNT (sizeof hard_inputs / sizeof hard_inputs[0])

#define STRIDED_WINDOWS 64
#define STRIDED_WINDOW_N 32

/* The probe's reason when there is no GPU: every test then skips. */
static device_sweep *sweep_open_or_skip(void) {
  device_info info;
  device_sweep *s = NULL;
  char err[4096];
  device_probe(&info);
  if (!info.available) cr_skip_test("skipped: no GPU (%s)", info.reason);
  cr_assert_eq(device_sweep_open(&s, err, sizeof err), 0, "device_sweep_open: %s", err);
  return s;
}

/* Runs func over [base, base + n) and compares with the host; returns mismatches. */
static unsigned check_window(device_sweep *s, unsigned func, unsigned base, unsigned n,
                             const char *why) {
  unsigned out[STRIDED_WINDOW_N > 2 * WINDOW_HALF + 1 ? STRIDED_WINDOW_N : 2 * WINDOW_HALF + 1];
  unsigned i, bad = 0;
  cr_assert_leq(n, sizeof out / sizeof out[0]);
  cr_assert_eq(device_sweep_run(s, func, base, n, out), 0, "%s: %s", device_sweep_func_name(func),
               device_sweep_error(s));
  for (i = 0; i < n; i++) {
    unsigned x = base + i, want = device_sweep_expected(func, x);
    if (out[i] == want) continue;
    if (bad++ == 0)
      cr_log_error("%s(0x%08x = %a) near %s: device 0x%08x, host 0x%08x",
                   device_sweep_func_name(func), x, (double)nx_f32_from_bits(x), why, out[i],
                   want);
  }
  return bad;
}

/* Every chosen window and the strided sweep for one function. */
static void check_func(device_sweep *s, unsigned func) {
  unsigned bad = 0, inputs = 0, k;
  for (k = 0; k < CHOSEN_COUNT; k++) {
    bad += check_window(s, func, chosen_inputs[k].bits - WINDOW_HALF, 2 * WINDOW_HALF + 1,
                        chosen_inputs[k].why);
    inputs += 2 * WINDOW_HALF + 1;
  }
  for (k = 0; k < HARD_COUNT; k++) {
    bad += check_window(s, func, nx_f32_bits(hard_inputs[k].x) - WINDOW_HALF,
                        2 * WINDOW_HALF + 1, hard_inputs[k].why);
    inputs += 2 * WINDOW_HALF + 1;
  }
  for (k = 0; k < STRIDED_WINDOWS; k++) {
    unsigned base = k * (0xffffffffu / STRIDED_WINDOWS + 1) + ((k * 0x9e3779b9u) >> 6);
    bad += check_window(s, func, base, STRIDED_WINDOW_N, "the strided sweep");
    inputs += STRIDED_WINDOW_N;
  }
  cr_expect_eq(bad, 0, "%s: %u of %u inputs differ from the host numerics",
               device_sweep_func_name(func), bad, inputs);
}

Test(gpu, transcendentals_match_host) {
  device_sweep *s = sweep_open_or_skip();
  check_func(s, SWEEP_FUNC_EXP);
  check_func(s, SWEEP_FUNC_SIN);
  check_func(s, SWEEP_FUNC_COS);
  check_func(s, SWEEP_FUNC_SINCOS_PAIR_CONSISTENT);
  check_func(s, SWEEP_FUNC_POW_160000);
  device_sweep_close(s);
}

Test(gpu, conversions_match_host_and_cuda) {
  device_sweep *s = sweep_open_or_skip();
  /* device_sweep_expected gives the numerics' bits for CUDA_*_RN as well, so
     these also prove __float2bfloat16_rn == nx_bf16_from_f32 and
     __float2half_rn == nx_f16_from_f32 on the same inputs */
  check_func(s, SWEEP_FUNC_BF16_RN);
  check_func(s, SWEEP_FUNC_CUDA_BF16_RN);
  check_func(s, SWEEP_FUNC_F16_RN);
  check_func(s, SWEEP_FUNC_CUDA_F16_RN);
  check_func(s, SWEEP_FUNC_BF16_ROUND_SEED);
  device_sweep_close(s);
}

Test(gpu, codecs_order_and_max_match_host) {
  device_sweep *s = sweep_open_or_skip();
  check_func(s, SWEEP_FUNC_E4M3_ENCODE);
  check_func(s, SWEEP_FUNC_E2M1_ENCODE);
  check_func(s, SWEEP_FUNC_UE8M0_FROM_RATIO);
  check_func(s, SWEEP_FUNC_CEIL_LOG2);
  check_func(s, SWEEP_FUNC_ORDER_KEY);
  check_func(s, SWEEP_FUNC_MAX_NEG);
  device_sweep_close(s);
}

Test(gpu, run_rejects_bad_arguments) {
  device_sweep *s = sweep_open_or_skip();
  unsigned out[1];
  cr_expect_neq(device_sweep_run(s, SWEEP_FUNC_COUNT, 0, 1, out), 0);
  cr_expect_str_eq(device_sweep_error(s), "unknown sweep function 16");
  cr_expect_neq(device_sweep_run(s, SWEEP_FUNC_EXP, 0, DEVICE_SWEEP_MAX_N + 1, out), 0);
  cr_expect_eq(device_sweep_run(s, SWEEP_FUNC_EXP, 0, 0, out), 0, "n = 0 is a no-op");
  device_sweep_close(s);
}

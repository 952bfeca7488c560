/*
** nx_order.h: the total order on binary32 and the maximum used by softmax.
**
** Total order (DESIGN.md "Top-k ties"; Rust's f32::total_cmp):
**   -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN,
** NaNs ordered by payload.  nx_f32_order_key maps a float to an unsigned key
** whose plain integer order is that total order, so sorts and radix selects can
** work on keys.
**
** Maximum: NaN-ignoring (the non-NaN argument wins; two NaNs give the first),
** and +0 is taken to be above -0, so the result never depends on argument
** order.  For non-NaN values this makes a max over a set order-free, which is
** what lets kernels reduce it in parallel.
*/
#ifndef NX_ORDER_H
#define NX_ORDER_H

#include "nx_base.h"

NX_FN nx_u32 nx_f32_order_key(float x) {
  nx_u32 u = nx_f32_bits(x);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* -1, 0 or 1 as a orders before, with, or after b. */
NX_FN int nx_f32_total_cmp(float a, float b) {
  nx_u32 ka = nx_f32_order_key(a), kb = nx_f32_order_key(b);
  return (ka > kb) - (ka < kb);
}

/*
** Equal values: identical bits, or +0 and -0, where the AND clears the
** sign.  Kernels take the max as selects (nx_maxf_selects): a branch costs
** an H200 warp about 30 cycles (docs/SPEED.md, twenty-second round).  The
** host keeps the early returns, which its branch predictor makes cheap:
** with both nx_maxf and nx_expf as selects, the oracle's IndexShare B = 1
** step took 14-20% longer on one thread here, and with this one as returns
** it did not (the same round).  test_numerics holds the two forms equal.
*/
NX_FN float nx_maxf_selects(float a, float b) {
  const float larger = a > b ? a : b > a ? b : nx_f32_from_bits(nx_f32_bits(a) & nx_f32_bits(b));
  return nx_f32_is_nan(a) ? b : nx_f32_is_nan(b) ? a : larger;
}

NX_FN float nx_maxf(float a, float b) {
#ifdef NX_CUDA
  return nx_maxf_selects(a, b);
#else
  if (nx_f32_is_nan(a)) return b;
  if (nx_f32_is_nan(b)) return a;
  if (a > b) return a;
  if (b > a) return b;
  return nx_f32_from_bits(nx_f32_bits(a) & nx_f32_bits(b));
#endif
}

#endif /* NX_ORDER_H */

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
** Written as selects, not early returns: a kernel's max then runs no
** branch (each cost an H200 warp about 30 cycles; docs/SPEED.md,
** twenty-second round).  Equal values: identical bits, or +0 and -0, where
** the AND clears the sign.
*/
NX_FN float nx_maxf(float a, float b) {
  const float larger = a > b ? a : b > a ? b : nx_f32_from_bits(nx_f32_bits(a) & nx_f32_bits(b));
  return nx_f32_is_nan(a) ? b : nx_f32_is_nan(b) ? a : larger;
}

#endif /* NX_ORDER_H */

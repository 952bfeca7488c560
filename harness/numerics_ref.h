/*
** numerics_ref.h: MPFR references for the frozen numerics.  Every function
** returns the correctly rounded (round to nearest, ties to even) result in the
** target format, with its subnormals, computed by MPFR independently of the
** numerics headers.  Thread-safe: MPFR keeps its exponent range and caches per
** thread; call numerics_ref_thread_done() before a worker thread exits.
*/
#ifndef NUMERICS_REF_H
#define NUMERICS_REF_H

float ref_expf(float x);
void ref_sincosf(float x, float *s, float *c);
float ref_powf(float x, float y);

/* Round to a narrow format's grid, returned as the exact float value.  NaN in,
** NaN out; the caller applies the format's saturation and NaN rules first. */
float ref_round_bf16(float x); /* 8-bit significand, binary32 exponent range */
float ref_round_f16(float x);  /* binary16: overflow to inf, subnormals */
float ref_round_e4m3(float x); /* 4-bit significand, subnormal step 2^-9; |x| <= 448 */
float ref_round_e2m1(float x); /* 2-bit significand, subnormal step 0.5; |x| <= 6 */

/* Frees MPFR's per-thread caches. */
void numerics_ref_thread_done(void);

#endif

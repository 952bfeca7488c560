/*
** Configure-time check of the host float environment (cmake/FpEnvCheck.cmake).
** Fails to compile if floats are evaluated in excess precision or fast math is
** on; fails at run time if the compiler contracted a*b-c into an FMA.
*/
#include <stdio.h>

#if !defined(__FLT_EVAL_METHOD__) || __FLT_EVAL_METHOD__ != 0
#error "__FLT_EVAL_METHOD__ must be 0"
#endif
#if defined(__FAST_MATH__)
#error "fast math must be off"
#endif

/* (1 + 2^-27)(1 - 2^-27) = 1 - 2^-54 rounds to 1 in double; an FMA keeps -2^-54. */
static double contract_d(double a, double b, double c) { return a * b - c; }
/* (1 + 2^-13)(1 - 2^-13) = 1 - 2^-26 rounds to 1 in float; an FMA keeps -2^-26. */
static float contract_f(float a, float b, float c) { return a * b - c; }

int main(void) {
  volatile double a = 1.0 + 0x1p-27, b = 1.0 - 0x1p-27, c = 1.0;
  volatile float af = 1.0f + 0x1p-13f, bf = 1.0f - 0x1p-13f, cf = 1.0f;
  if (contract_d(a, b, c) != 0.0 || contract_f(af, bf, cf) != 0.0f) {
    printf("FMA contraction is enabled; build with -ffp-contract=off and no -mfma");
    return 1;
  }
  printf("no excess precision, no contraction");
  return 0;
}

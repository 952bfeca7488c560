/*
** diff.h: byte-for-byte comparison of two tensors (DESIGN.md "Comparison").
**
** Elements compare by their bits.  The one equivalence: two NaNs of the same
** float dtype are equal, counted as nan_equivalent.  +0 and -0 differ.  The
** first mismatch is reported with its flat offset, coordinates, both values
** in hex and decimal, and the ULP distance: steps between the two values in
** the total order of the element's own format, where -0 is one step below +0.
*/
#ifndef HARNESS_DIFF_H
#define HARNESS_DIFF_H

#include "oracle/tensor.h"

typedef struct tensor_diff {
  long long mismatches, nan_equivalent;
  long long first_offset; /* -1 when identical */
  char coords[64];        /* "[0,3,1,7]" */
  char expected_hex[24], actual_hex[24];
  char expected_text[48], actual_text[48]; /* decimal, %a for floats */
  long long ulp_distance;                  /* -1 when not a float or a NaN is involved */
} tensor_diff;

/* Compares actual against expected (same dtype and shape; else every element
** mismatches and coords says "shape"). Returns the number of mismatches. */
long long tensor_diff_run(const tensor *expected, const tensor *actual, tensor_diff *d);

/* "mismatches 3 (nan_equivalent 0); first at offset 17 [0,1,0,1]: expected
** 0x3f800000 (0x1p+0), got 0x3f800001 (0x1.000002p+0), 1 ulp". */
void tensor_diff_describe(const tensor_diff *d, const char *name, char *out, unsigned long len);

#endif

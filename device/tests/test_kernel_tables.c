/*
** test_kernel_tables.c: the tables the kernels read instead of computing a
** numerics function (device/kernels/csa_rope_freq.h) hold that function's
** exact bits, entry for entry.  Plain C, no GPU.
*/
#include "device/kernels/csa_rope_freq.h"
#include "oracle/numerics/numerics.h"
#include "oracle/numerics/nx_csa.h"

#include <criterion/criterion.h>

Test(kernel_tables, rope_freq_is_nx_csa_rope_freq) {
  int p;
  cr_assert_eq(CSA_ROPE_FREQ_PAIRS, NX_CSA_ROPE_PAIRS, "one entry a RoPE pair");
  for (p = 0; p < CSA_ROPE_FREQ_PAIRS; p++)
    cr_expect_eq(nx_f32_bits(csa_rope_freq_table[p]), nx_f32_bits(nx_csa_rope_freq(p)),
                 "pair %d: table %a, nx_csa_rope_freq %a", p, (double)csa_rope_freq_table[p],
                 (double)nx_csa_rope_freq(p));
}

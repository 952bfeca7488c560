/*
** test_reference_kernels.c: the reference kernel files (issue 8;
** device/kernels/..._reference.cu) compile under the pinned NVRTC options to
** an sm_90 CUBIN holding every kernel their launchers load, and their PTX
** passes the audit (no .approx, no .ftz, no FMA, no bare add/sub/mul.f32).
** Needs NVRTC, not a GPU; built only when the CUDA toolkit was found.
**
** The symbol lists are the launchers' (device/csa128_device.c, csa4_device.c, index_share_create.c): each reference
** file stands in for these kernels of its fast twin, under the same names.
*/
#include "device/kernels/csa128_abi.h"
#include "device/kernels/csa4_abi.h"
#include "device/kernels/index_share_abi.h"
#include "device/kernels/reference_abi.h"
#include "device/nvrtc_compile.h"
#include "device/ptx_audit.h"
#include "device/tests/gpu_test_support.h"

#include <criterion/criterion.h>
#include <stdlib.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Compiles file to PTX with the pinned options and expects no audit finding. */
static void expect_audit_clean(const char *file) {
  nvrtc_output ptx;
  ptx_audit_result r;
  int n, i;
  cr_assert_eq(nvrtc_compile_ptx(file, &ptx), 0, "%s did not compile:\n%s", file, ptx.log);
  n = ptx_audit_run(ptx.code, file, ptx_audit_fma_allowance(file), &r);
  nvrtc_output_free(&ptx);
  cr_assert_geq(n, 0, "ptx_audit_run ran out of memory");
  for (i = 0; i < r.n_findings; i++) ptx_finding_print(stderr, file, &r.findings[i]);
  cr_expect_eq(n, 0, "%s: %d audit findings (above)", file, n);
  cr_expect_gt(r.n_instructions, 0, "%s: no instructions seen", file);
  ptx_audit_result_free(&r);
}

Test(reference_kernels, csa128_reference_has_its_kernels_and_passes_the_audit) {
  static const char *const names[] = {CSA128_KERNEL_COMPRESS, CSA128_KERNEL_ATTENTION};
  gpu_test_expect_cubin(CSA128_REFERENCE_FILE, names, COUNT(names));
  expect_audit_clean(CSA128_REFERENCE_FILE);
}

Test(reference_kernels, csa4_reference_has_its_kernels_and_passes_the_audit) {
  static const char *const names[] = {CSA4_KERNEL_MAIN_COMPRESS, CSA4_KERNEL_INDEX_COMPRESS,
                                      CSA4_KERNEL_INDEX_QUERY,   CSA4_KERNEL_INDEX_SCORE,
                                      CSA4_KERNEL_SELECT,        CSA4_KERNEL_ATTENTION};
  gpu_test_expect_cubin(CSA4_REFERENCE_FILE, names, COUNT(names));
  expect_audit_clean(CSA4_REFERENCE_FILE);
}

Test(reference_kernels, index_share_reference_has_its_kernels_and_passes_the_audit) {
  static const char *const names[] = {IS_KERNEL_FRONTIER, IS_KERNEL_ROWS};
  gpu_test_expect_cubin(IS_REFERENCE_FILE, names, COUNT(names));
  expect_audit_clean(IS_REFERENCE_FILE);
}

/*
** csa_test_support.h: what the CSA launcher tests (test_csa128_device.c,
** test_csa4_device.c) share: opening the GPU or skipping, deterministic
** test values, packed records built by the numerics' own quantizers, and
** the byte comparison that names the first difference.
*/
#ifndef DEVICE_TESTS_CSA_TEST_SUPPORT_H
#define DEVICE_TESTS_CSA_TEST_SUPPORT_H

#include "device/runtime.h"
#include "oracle/tensor.h"

#include <stddef.h>

/* A runtime on device 0, or the calling test skips with "skipped: no GPU (why)". */
device_runtime *csa_test_runtime_or_skip(void);

/* Asserts that a runtime call returned 0, with the runtime's error. */
#define CSA_RT_OK(rt, call) cr_assert_eq((call), 0, "%s: %s", #call, device_runtime_error(rt))

/* A value in [-2, 2) from (seed, i), exact in f32: every test byte is a pure function of both. */
float csa_test_value(unsigned seed, long long i);

/* +inf's negative: the empty carry slot's score and the masked bias. */
float csa_test_neg_inf(void);

/* A 583-byte hybrid record of 512 values (seven FP8 blocks, the bf16 tail). */
void csa_test_fp8_record(const float *x512, unsigned char *rec);

/*
** 0 when got equals want (bytes long); otherwise expects a failure that
** names when (the case and step), what (the tensor or stage), the first
** differing element
** (f32 as %a and hex, i32 as integers, u8 as record and byte with
** record_bytes) and the count of differing bytes, and returns 1.
*/
int csa_test_compare(const char *what, const char *when, dtype dt, long long record_bytes,
                     const unsigned char *got, const unsigned char *want, size_t bytes);

#endif

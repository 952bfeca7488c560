/*
** gpu_test_support.h: what every launcher test on a GPU (test_runtime.c,
** test_csa128_device.c, test_csa4_device.c) shares: opening the GPU or
** skipping, the runtime-call assertion, deterministic test values, the
** CUBIN symbol check, capture ends that must leave capture mode, and the
** device-versus-oracle op_error comparison.
*/
#ifndef DEVICE_TESTS_GPU_TEST_SUPPORT_H
#define DEVICE_TESTS_GPU_TEST_SUPPORT_H

#include "device/runtime.h"
#include "oracle/op_error.h"

#include <stddef.h>

/* A runtime on device 0, or the calling test skips with "skipped: no GPU (why)". */
device_runtime *gpu_test_runtime_or_skip(void);

/* Asserts that a runtime call returned 0, with the runtime's error. */
#define GPU_RT_OK(rt, call) cr_assert_eq((call), 0, "%s: %s", #call, device_runtime_error(rt))

/* A small integer hash: every test byte is a pure function of its inputs. */
unsigned gpu_test_mix(unsigned x);

/* A value in [-2, 2) from (seed, i), exact in f32: every test byte is a pure function of both. */
float gpu_test_value(unsigned seed, long long i);

/*
** Needs NVRTC, not a GPU: expects kernel_file ("csa4.cu") to compile to an
** sm_90 CUBIN (what device_runtime_kernel loads for an H200) holding every
** one of the n_names kernel symbols; skips in a build without NVRTC.
*/
void gpu_test_expect_cubin(const char *kernel_file, const char *const *names, size_t n_names);

/*
** Ends a capture that may have recorded nothing (whether an empty graph
** instantiates is not what these tests are about); capture mode must be left.
*/
void gpu_test_capture_end_any(device_runtime *rt);

/* Expects the device's op_error to be the oracle's, naming what and both errors. */
void gpu_test_expect_same_error(const op_error *dev, const op_error *ora, const char *what);

#endif

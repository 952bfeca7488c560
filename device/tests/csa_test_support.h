/*
** csa_test_support.h: what the CSA launcher tests (test_csa128_device.c,
** test_csa4_device.c) share beyond gpu_test_support.h: one step's host
** tensors and their guarded device mirrors, packed records built by the
** numerics' own quantizers, and the byte comparison that names the first
** difference.
*/
#ifndef DEVICE_TESTS_CSA_TEST_SUPPORT_H
#define DEVICE_TESTS_CSA_TEST_SUPPORT_H

#include "device/index_share_device.h" /* device_tensor */
#include "device/runtime.h"
#include "device/tests/gpu_test_support.h"
#include "oracle/csa.h"
#include "oracle/tensor.h"

#include <stddef.h>

/*
** One step's host tensors (in: the inputs, absent ones with dt 0; want: the
** oracle's outputs, unused ones with dt 0) and their device mirrors: a
** guarded buffer, a descriptor (no host data) and the pointer the launcher
** takes, NULL for an absent input.  Zeroed before use.
*/
typedef struct csa_test_io {
  tensor in[CSA_INPUT_COUNT], want[CSA_OUTPUT_MAX];
  device_buffer d_in[CSA_INPUT_COUNT], d_out[CSA_OUTPUT_MAX];
  device_tensor t_in[CSA_INPUT_COUNT], t_out[CSA_OUTPUT_MAX];
  const device_tensor *p_in[CSA_INPUT_COUNT];
  device_tensor *p_out[CSA_OUTPUT_MAX];
} csa_test_io;

/* Device buffers and descriptors for every present tensor; inputs uploaded, outputs junk. */
void csa_test_io_upload(device_runtime *rt, csa_test_io *io);

/* (Re)uploads every present input into its device buffer. */
void csa_test_io_upload_inputs(device_runtime *rt, csa_test_io *io);

/* Fills every output buffer with byte. */
void csa_test_io_fill_outputs(device_runtime *rt, csa_test_io *io, int byte);

/* Sets the cursor total_seq (host and device) to total. */
void csa_test_io_set_total(device_runtime *rt, csa_test_io *io, long long total);

/* Expects every canary (inputs and outputs) intact; a failure names label and the tensor. */
void csa_test_io_expect_canaries(device_runtime *rt, const csa_test_io *io, const char *label);

/* Expects output 0 (Y) to hold the junk byte everywhere: nothing was launched. */
void csa_test_io_expect_untouched(device_runtime *rt, const csa_test_io *io, const char *what);

/* Frees every host tensor and device buffer. */
void csa_test_io_free(csa_test_io *io);

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

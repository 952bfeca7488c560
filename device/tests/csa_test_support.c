/*
** csa_test_support.c: the CSA launcher tests' shared helpers (see
** csa_test_support.h).
*/
#include "device/tests/csa_test_support.h"
#include "device/device.h"
#include "oracle/csa.h"
#include "oracle/numerics/numerics.h"
#include "oracle/numerics/nx_csa.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void csa_test_io_upload_inputs(device_runtime *rt, csa_test_io *io) {
  int i;
  for (i = 0; i < CSA_INPUT_COUNT; i++)
    if (io->in[i].dt && tensor_bytes(&io->in[i]))
      GPU_RT_OK(rt, device_buffer_upload(rt, &io->d_in[i], io->in[i].data, tensor_bytes(&io->in[i])));
}

/* A guarded buffer for t and its descriptor: t's metadata, the buffer's address, no host data. */
static void mirror(device_runtime *rt, const tensor *t, device_buffer *buf, device_tensor *dt) {
  GPU_RT_OK(rt, device_buffer_alloc(rt, tensor_bytes(t), buf));
  dt->meta = *t;
  dt->meta.data = NULL;
  dt->dptr = buf->dptr;
}

void csa_test_io_upload(device_runtime *rt, csa_test_io *io) {
  int i;
  for (i = 0; i < CSA_INPUT_COUNT; i++) {
    io->p_in[i] = NULL;
    if (!io->in[i].dt) continue;
    mirror(rt, &io->in[i], &io->d_in[i], &io->t_in[i]);
    io->p_in[i] = &io->t_in[i];
  }
  csa_test_io_upload_inputs(rt, io);
  for (i = 0; i < CSA_OUTPUT_MAX; i++) {
    io->p_out[i] = NULL;
    if (!io->want[i].dt) continue;
    mirror(rt, &io->want[i], &io->d_out[i], &io->t_out[i]);
    io->p_out[i] = &io->t_out[i];
  }
}

void csa_test_io_fill_outputs(device_runtime *rt, csa_test_io *io, int byte) {
  int i;
  for (i = 0; i < CSA_OUTPUT_MAX; i++)
    if (io->want[i].dt) GPU_RT_OK(rt, device_buffer_fill(rt, &io->d_out[i], byte));
}

void csa_test_io_set_total(device_runtime *rt, csa_test_io *io, long long total) {
  tensor *t = &io->in[CSA_IN_TOTAL_SEQ];
  ((int64_t *)t->data)[0] = total;
  GPU_RT_OK(rt, device_buffer_upload(rt, &io->d_in[CSA_IN_TOTAL_SEQ], t->data, sizeof(int64_t)));
}

void csa_test_io_expect_canaries(device_runtime *rt, const csa_test_io *io, const char *label) {
  int i;
  for (i = 0; i < CSA_INPUT_COUNT + CSA_OUTPUT_MAX; i++) {
    const int is_in = i < CSA_INPUT_COUNT;
    const device_buffer *buf = is_in ? &io->d_in[i] : &io->d_out[i - CSA_INPUT_COUNT];
    unsigned damage;
    if (!buf->base) continue;
    GPU_RT_OK(rt, device_buffer_check(rt, buf, &damage, NULL));
    cr_expect_eq(damage, 0, "%s: canary of %s %d overwritten (0x%x)", label, is_in ? "input" : "output",
                 is_in ? i : i - CSA_INPUT_COUNT, damage);
  }
}

void csa_test_io_expect_untouched(device_runtime *rt, const csa_test_io *io, const char *what) {
  size_t bytes = tensor_bytes(&io->want[CSA_OUT_Y]), i;
  unsigned char *got = malloc(bytes);
  cr_assert_not_null(got);
  GPU_RT_OK(rt, device_buffer_download(rt, &io->d_out[CSA_OUT_Y], got, bytes));
  for (i = 0; i < bytes && got[i] == DEVICE_JUNK_BYTE; i++) continue;
  cr_expect_eq(i, bytes, "%s: Y byte %zu was written (0x%02x)", what, i, i < bytes ? got[i] : 0);
  free(got);
}

void csa_test_io_free(csa_test_io *io) {
  int i;
  for (i = 0; i < CSA_INPUT_COUNT; i++) tensor_free(&io->in[i]), device_buffer_free(&io->d_in[i]);
  for (i = 0; i < CSA_OUTPUT_MAX; i++) tensor_free(&io->want[i]), device_buffer_free(&io->d_out[i]);
}

float csa_test_neg_inf(void) { return nx_f32_from_bits(NX_CSA_NEG_INF_BITS); }

void csa_test_fp8_record(const float *x512, unsigned char *rec) { nx_csa_fp8_record_write(x512, rec); }

int csa_test_compare(const char *what, const char *when, dtype dt, long long record_bytes,
                     const unsigned char *got, const unsigned char *want, size_t bytes) {
  size_t at, n_bad = 0, i;
  for (at = 0; at < bytes && got[at] == want[at]; at++) continue;
  if (at == bytes) return 0;
  for (i = at; i < bytes; i++) n_bad += got[i] != want[i];
  if (dt == DTYPE_F32) {
    size_t e = at / 4;
    float g, w;
    memcpy(&g, got + 4 * e, 4);
    memcpy(&w, want + 4 * e, 4);
    cr_expect_fail("%s: %s differs first at f32 element %zu (byte %zu of %zu; %zu bytes differ): "
                   "device %a (0x%08x), oracle %a (0x%08x)",
                   when, what, e, at, bytes, n_bad, (double)g, nx_f32_bits(g), (double)w, nx_f32_bits(w));
  } else if (dt == DTYPE_I32) {
    size_t e = at / 4;
    int32_t g, w;
    memcpy(&g, got + 4 * e, 4);
    memcpy(&w, want + 4 * e, 4);
    cr_expect_fail("%s: %s differs first at i32 element %zu (%zu bytes differ): device %d, oracle %d", when,
                   what, e, n_bad, (int)g, (int)w);
  } else {
    cr_expect_fail("%s: %s differs first at byte %zu of %zu (record %zu, byte %zu; %zu bytes differ): "
                   "device 0x%02x, oracle 0x%02x",
                   when, what, at, bytes, at / (size_t)record_bytes, at % (size_t)record_bytes, n_bad,
                   got[at], want[at]);
  }
  return 1;
}

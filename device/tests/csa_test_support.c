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
#include <string.h>

device_runtime *csa_test_runtime_or_skip(void) {
  device_runtime *rt = NULL;
  device_info info;
  char err[2048];
  device_probe(&info);
  if (!info.available) cr_skip_test("skipped: no GPU (%s)", info.reason);
  cr_assert_eq(device_runtime_create(0, &rt, err, sizeof err), 0, "device_runtime_create: %s", err);
  return rt;
}

/* A small integer hash. */
static unsigned mix(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

float csa_test_value(unsigned seed, long long i) {
  return (float)(mix(seed * 0x9e3779b9u ^ (unsigned)i ^ (unsigned)(i >> 32)) >> 8) * 0x1p-22f - 2.0f;
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

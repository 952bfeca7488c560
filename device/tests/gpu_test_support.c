/*
** gpu_test_support.c: the GPU launcher tests' shared helpers (see
** gpu_test_support.h).
*/
#include "device/tests/gpu_test_support.h"
#include "device/device.h"
#include "device/nvrtc_compile.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <string.h>

device_runtime *gpu_test_runtime_or_skip(void) {
  device_runtime *rt = NULL;
  device_info info;
  char err[2048];
  device_probe(&info);
  if (!info.available) cr_skip_test("skipped: no GPU (%s)", info.reason);
  cr_assert_eq(device_runtime_create(0, &rt, err, sizeof err), 0, "device_runtime_create: %s", err);
  return rt;
}

unsigned gpu_test_mix(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

float gpu_test_value(unsigned seed, long long i) {
  return (float)(gpu_test_mix(seed * 0x9e3779b9u ^ (unsigned)i ^ (unsigned)(i >> 32)) >> 8) * 0x1p-22f - 2.0f;
}

void gpu_test_expect_cubin(const char *kernel_file, const char *const *names, size_t n_names) {
  nvrtc_output out;
  size_t i;
  if (!device_built_with_cuda()) cr_skip_test("skipped: no NVRTC in this build");
  cr_assert_eq(nvrtc_compile_cubin(kernel_file, 90, &out), 0, "%s", out.log);
  cr_expect_eq(memcmp(out.code, "\177ELF", 4), 0, "a CUBIN is an ELF file");
  for (i = 0; i < n_names; i++) {
    size_t len = strlen(names[i]) + 1, at; /* the symbol name with its NUL */
    for (at = 0; at + len <= out.size && memcmp(out.code + at, names[i], len); at++) continue;
    cr_expect_leq(at + len, out.size, "%s is not in the CUBIN", names[i]);
  }
  nvrtc_output_free(&out);
}

void gpu_test_capture_end_any(device_runtime *rt) {
  device_graph *g = NULL;
  if (device_runtime_capture_end(rt, &g)) cr_log_info("capture_end: %s", device_runtime_error(rt));
  device_graph_destroy(g);
  cr_assert_eq(device_runtime_is_capturing(rt), 0, "capture_end left the runtime capturing");
}

void gpu_test_expect_same_error(const op_error *dev, const op_error *ora, const char *what) {
  char d[256], o[256];
  op_error_describe(dev, d, sizeof d);
  op_error_describe(ora, o, sizeof o);
  cr_expect(op_error_same(dev, ora), "%s: device '%s' (%s), oracle '%s' (%s)", what, d, dev->message, o,
            ora->message);
}

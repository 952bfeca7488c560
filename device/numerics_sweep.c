/*
** numerics_sweep.c: the host side of the numerics_sweep kernel (see
** numerics_sweep.h), on cudart's runtime API only.
**
** The CUBIN is loaded with cudaLibraryLoadData and the kernel found with
** cudaLibraryGetKernel (CUDA 12+); cudaLaunchKernel accepts the cudaKernel_t
** cast to a function pointer.  Before each launch the output range is filled
** with a junk pattern, so an element the kernel never wrote cannot pass as a
** result.
*/
#include "device/numerics_sweep.h"
#include "device/device.h"
#include "device/nvrtc_compile.h"

#include <cuda_runtime_api.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define SWEEP_KERNEL_FILE "numerics_sweep.cu"
#define SWEEP_KERNEL_NAME "numerics_sweep"
#define SWEEP_BLOCK_THREADS 256u
#define SWEEP_JUNK_BYTE 0xa5 /* fills the output before each launch */

struct device_sweep {
  cudaLibrary_t library;
  cudaKernel_t kernel;
  unsigned *d_out; /* DEVICE_SWEEP_MAX_N words */
  char error[1024];
};

static int sweep_fail(device_sweep *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int sweep_fail(device_sweep *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->error, sizeof s->error, fmt, ap);
  va_end(ap);
  return 1;
}

/* Nonzero, with "call: cudart's message (name)" in s->error, unless err is success. */
static int sweep_check(device_sweep *s, cudaError_t err, const char *call) {
  if (err == cudaSuccess) return 0;
  return sweep_fail(s, "%s: %s (%s)", call, cudaGetErrorString(err), cudaGetErrorName(err));
}

int device_sweep_open(device_sweep **out, char *err, size_t err_len) {
  device_info info;
  nvrtc_output cubin = {0};
  device_sweep *s = NULL;
  int rc = 1;

  *out = NULL;
  device_probe(&info);
  if (!info.available) {
    snprintf(err, err_len, "no GPU: %s", info.reason);
    goto done;
  }
  if (nvrtc_compile_cubin(SWEEP_KERNEL_FILE, info.cc_major * 10 + info.cc_minor, &cubin)) {
    snprintf(err, err_len, "%s", cubin.log);
    goto done;
  }
  s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, err_len, "out of memory");
    goto done;
  }
  if (sweep_check(s, cudaSetDevice(0), "cudaSetDevice(0)") ||
      sweep_check(s, cudaLibraryLoadData(&s->library, cubin.code, NULL, NULL, 0, NULL, NULL, 0),
                  "cudaLibraryLoadData(" SWEEP_KERNEL_FILE ")") ||
      sweep_check(s, cudaLibraryGetKernel(&s->kernel, s->library, SWEEP_KERNEL_NAME),
                  "cudaLibraryGetKernel(" SWEEP_KERNEL_NAME ")") ||
      sweep_check(s, cudaMalloc((void **)&s->d_out, (size_t)DEVICE_SWEEP_MAX_N * sizeof(unsigned)),
                  "cudaMalloc(sweep output)")) {
    snprintf(err, err_len, "%s", s->error);
    goto done;
  }
  *out = s;
  s = NULL;
  rc = 0;
done:
  device_sweep_close(s);
  nvrtc_output_free(&cubin);
  return rc;
}

int device_sweep_run(device_sweep *s, unsigned func, unsigned base, unsigned n,
                     unsigned *host_out) {
  dim3 grid, block;
  void *args[4];
  size_t bytes = (size_t)n * sizeof(unsigned);

  s->error[0] = '\0';
  if (func >= SWEEP_FUNC_COUNT) return sweep_fail(s, "unknown sweep function %u", func);
  if (n > DEVICE_SWEEP_MAX_N)
    return sweep_fail(s, "n = %u is above the sweep's %u outputs per call", n,
                      DEVICE_SWEEP_MAX_N);
  if (n == 0) return 0;
  block.x = SWEEP_BLOCK_THREADS;
  grid.x = (n + SWEEP_BLOCK_THREADS - 1) / SWEEP_BLOCK_THREADS;
  block.y = block.z = grid.y = grid.z = 1;
  args[0] = &func;
  args[1] = &base;
  args[2] = &n;
  args[3] = &s->d_out;
  if (sweep_check(s, cudaMemset(s->d_out, SWEEP_JUNK_BYTE, bytes), "cudaMemset(sweep output)") ||
      sweep_check(s, cudaLaunchKernel((const void *)s->kernel, grid, block, args, 0, NULL),
                  "cudaLaunchKernel(" SWEEP_KERNEL_NAME ")") ||
      sweep_check(s, cudaDeviceSynchronize(), SWEEP_KERNEL_NAME " (cudaDeviceSynchronize)") ||
      sweep_check(s, cudaMemcpy(host_out, s->d_out, bytes, cudaMemcpyDeviceToHost),
                  "cudaMemcpy(sweep output)"))
    return 1;
  return 0;
}

const char *device_sweep_error(const device_sweep *s) { return s ? s->error : ""; }

void device_sweep_close(device_sweep *s) {
  if (!s) return;
  if (s->d_out) cudaFree(s->d_out);
  if (s->library) cudaLibraryUnload(s->library);
  free(s);
}

/*
** device_none.c: the device layer of an oracle-only build (no CUDA toolkit at
** configure time).  device.h reports the device as unavailable; every NVRTC
** compile and every sweep fails with a message saying this build has none.
** Nothing aborts, so the harness can run its oracle-only lanes.
*/
#include "device/device.h"
#include "device/nvrtc_compile.h"
#include "device/numerics_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_NVRTC "this build has no NVRTC (CUDA toolkit not found at configure time)"

void device_probe(device_info *info) {
  memset(info, 0, sizeof *info);
  snprintf(info->reason, sizeof info->reason, "built without the CUDA toolkit");
}

int device_built_with_cuda(void) { return 0; }

const char *device_nvrtc_version(void) { return "none"; }

const char *device_nvrtc_options(void) { return "none"; }

/* ---- nvrtc_compile.h ---------------------------------------------------- */

static int no_nvrtc(nvrtc_output *out) {
  static const char message[] = NO_NVRTC;
  memset(out, 0, sizeof *out);
  out->log = malloc(sizeof message);
  if (out->log) memcpy(out->log, message, sizeof message);
  return 1;
}

const char *const nvrtc_pinned_options[] = {"none"};
const int nvrtc_pinned_option_count = 0;

int nvrtc_compile_ptx(const char *kernel_name, nvrtc_output *out) {
  (void)kernel_name;
  return no_nvrtc(out);
}

int nvrtc_compile_ptx_options(const char *source_name, const char *source,
                              const char *const *options, int n_options, nvrtc_output *out) {
  (void)source_name, (void)source, (void)options, (void)n_options;
  return no_nvrtc(out);
}

int nvrtc_compile_cubin(const char *kernel_name, int sm, nvrtc_output *out) {
  (void)kernel_name, (void)sm;
  return no_nvrtc(out);
}


/* ---- numerics_sweep.h --------------------------------------------------- */

int device_sweep_open(device_sweep **out, char *err, size_t err_len) {
  *out = NULL;
  snprintf(err, err_len, NO_NVRTC);
  return 1;
}

int device_sweep_run(device_sweep *s, unsigned func, unsigned base, unsigned n,
                     unsigned *host_out) {
  (void)s, (void)func, (void)base, (void)n, (void)host_out;
  return 1;
}

const char *device_sweep_error(const device_sweep *s) {
  (void)s;
  return NO_NVRTC;
}

void device_sweep_close(device_sweep *s) { (void)s; }

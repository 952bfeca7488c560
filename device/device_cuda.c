/*
** device_cuda.c: device.h in a build with the CUDA toolkit (cudart + NVRTC).
**
** device_probe asks cudart for device 0.  Without a driver (no libcuda.so) or
** without a GPU, cudart returns an error code; the probe then reports the
** device as unavailable with cudart's own words as the reason.  It never
** aborts, and it runs once per process (pthread_once), so it is cheap and
** safe to call from any thread.
*/
#include "device/device.h"
#include "device/nvrtc_compile.h"

#include <cuda_runtime_api.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static device_info probe_result;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

/*
** cudart's words alone misled on the common case: a machine with no NVIDIA
** driver at all gets "CUDA driver version is insufficient for CUDA runtime
** version".  The driver's version (0 when there is none) tells that apart
** from a driver that is really too old, and the reason says which first.
*/
static void probe_unavailable(const char *call, cudaError_t err) {
  const device_info *d = &probe_result;
  char why[128] = "";
  if (err == cudaErrorInsufficientDriver && d->driver_version == 0)
    snprintf(why, sizeof why, "no NVIDIA driver is installed, so no GPU is usable; ");
  else if (err == cudaErrorInsufficientDriver)
    snprintf(why, sizeof why, "the NVIDIA driver supports CUDA %d.%d, older than this build's runtime %d.%d; ",
             d->driver_version / 1000, d->driver_version % 1000 / 10, d->runtime_version / 1000,
             d->runtime_version % 1000 / 10);
  else if (err == cudaErrorNoDevice)
    snprintf(why, sizeof why, "no CUDA device is visible (check CUDA_VISIBLE_DEVICES); ");
  snprintf(probe_result.reason, sizeof probe_result.reason, "%s%s: %s (%s)", why, call, cudaGetErrorString(err),
           cudaGetErrorName(err));
}

static void probe_run(void) {
  device_info *d = &probe_result;
  struct cudaDeviceProp prop;
  cudaError_t err;
  memset(d, 0, sizeof *d);
  if (cudaRuntimeGetVersion(&d->runtime_version) != cudaSuccess) d->runtime_version = 0;
  if (cudaDriverGetVersion(&d->driver_version) != cudaSuccess) d->driver_version = 0;
  err = cudaGetDeviceCount(&d->device_count);
  if (err != cudaSuccess) {
    d->device_count = 0;
    probe_unavailable("cudaGetDeviceCount", err);
    return;
  }
  if (d->device_count == 0) {
    snprintf(d->reason, sizeof d->reason, "cudaGetDeviceCount: no CUDA device");
    return;
  }
  err = cudaGetDeviceProperties(&prop, 0);
  if (err != cudaSuccess) {
    probe_unavailable("cudaGetDeviceProperties", err);
    return;
  }
  snprintf(d->name, sizeof d->name, "%s", prop.name);
  d->cc_major = prop.major;
  d->cc_minor = prop.minor;
  d->available = 1;
}

void device_probe(device_info *info) {
  pthread_once(&probe_once, probe_run);
  *info = probe_result;
}

int device_built_with_cuda(void) { return 1; }

static char nvrtc_version_text[32];
static pthread_once_t nvrtc_version_once = PTHREAD_ONCE_INIT;

static void nvrtc_version_run(void) {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    snprintf(nvrtc_version_text, sizeof nvrtc_version_text, "unknown");
  else
    snprintf(nvrtc_version_text, sizeof nvrtc_version_text, "%d.%d", major, minor);
}

const char *device_nvrtc_version(void) {
  pthread_once(&nvrtc_version_once, nvrtc_version_run);
  return nvrtc_version_text;
}

static char options_text[512];
static pthread_once_t options_once = PTHREAD_ONCE_INIT;

static void options_run(void) {
  size_t used = 0;
  int i;
  for (i = 0; i < nvrtc_pinned_option_count && used < sizeof options_text; i++)
    used += (size_t)snprintf(options_text + used, sizeof options_text - used, "%s%s",
                             i ? " " : "", nvrtc_pinned_options[i]);
}

/* The pinned options; a CUBIN for a device replaces compute_90 by its sm_XX. */
const char *device_nvrtc_options(void) {
  pthread_once(&options_once, options_run);
  return options_text;
}

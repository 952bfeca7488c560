/*
** device.h: what the harness may ask of the device layer (cudart + NVRTC).
**
** Every function works in every build.  Without the CUDA toolkit (an
** oracle-only build) or without a GPU, device_probe reports the device as
** unavailable with a reason, and compile requests fail with a clear message;
** nothing aborts.
*/
#ifndef DEVICE_H
#define DEVICE_H

#include <stddef.h>

typedef struct device_info {
  int available;          /* 1 when a CUDA device can run kernels */
  char reason[256];       /* why not, when available == 0 */
  char name[256];         /* e.g. "NVIDIA H200" */
  int cc_major, cc_minor; /* compute capability */
  int driver_version;     /* cudaDriverGetVersion, e.g. 13000; 0 if unknown */
  int runtime_version;    /* cudaRuntimeGetVersion; 0 without CUDA */
  int device_count;
} device_info;

/* Fills *info; never fails.  Cheap after the first call. */
void device_probe(device_info *info);

/* 1 when this binary was built with cudart and NVRTC. */
int device_built_with_cuda(void);

/* NVRTC's version as "13.0", or "none" in an oracle-only build. */
const char *device_nvrtc_version(void);

/* The pinned NVRTC options, joined by spaces, for provenance. */
const char *device_nvrtc_options(void);

/* Hex digest (xxh128) over every embedded kernel source and numerics header. */
const char *device_kernel_hash(void);

#endif /* DEVICE_H */

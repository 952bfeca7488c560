/*
** device_none.c: the device layer of an oracle-only build (no CUDA toolkit at
** configure time).  device.h reports the device as unavailable; every NVRTC
** compile and every sweep fails with a message saying this build has none;
** device_runtime_create fails with "no CUDA in this build", so no runtime,
** pool, graph or launcher can exist (the other runtime.h entry points fail
** the same way, should they be reached).  Nothing aborts, so the harness can run its oracle-only lanes.
*/
#include "device/device.h"
#include "device/nvrtc_compile.h"
#include "device/numerics_sweep.h"
#include "device/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_NVRTC "this build has no NVRTC (CUDA toolkit not found at configure time)"
#define NO_CUDA "no CUDA in this build (CUDA toolkit not found at configure time)"

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

/* ---- runtime.h ------------------------------------------------------------ */

int device_runtime_create(int ordinal, device_runtime **out, char *err, size_t err_len) {
  (void)ordinal;
  *out = NULL;
  snprintf(err, err_len, NO_CUDA);
  return 1;
}

void device_runtime_destroy(device_runtime *rt) { (void)rt; }
const char *device_runtime_error(const device_runtime *rt) { (void)rt; return NO_CUDA; }
int device_runtime_ordinal(const device_runtime *rt) { (void)rt; return -1; }
int device_runtime_sm(const device_runtime *rt) { (void)rt; return 0; }
void *device_runtime_stream(device_runtime *rt) { (void)rt; return NULL; }
int device_runtime_sync(device_runtime *rt) { (void)rt; return 1; }

int device_runtime_kernel(device_runtime *rt, const char *file, const char *kernel_name,
                          void **kernel) {
  (void)rt, (void)file, (void)kernel_name;
  *kernel = NULL;
  return 1;
}

int device_runtime_launch(device_runtime *rt, void *kernel, const char *name,
                          unsigned long long grid, unsigned block, void **args) {
  (void)rt, (void)kernel, (void)name, (void)grid, (void)block, (void)args;
  return 1;
}

int device_runtime_launch_as(device_runtime *rt, void *kernel, const char *name,
                             unsigned long long grid, unsigned block, void **args, unsigned how) {
  (void)how;
  return device_runtime_launch(rt, kernel, name, grid, block, args);
}

void device_runtime_set_skip(device_runtime *rt, struct launch_skip *skip) { (void)rt, (void)skip; }

int device_runtime_copy_to_host(device_runtime *rt, void *host, const void *dptr, size_t bytes) {
  (void)rt, (void)host, (void)dptr, (void)bytes;
  return 1;
}

int device_runtime_copy_to_device(device_runtime *rt, void *dptr, const void *host, size_t bytes) {
  (void)rt, (void)dptr, (void)host, (void)bytes;
  return 1;
}

int device_runtime_is_capturing(const device_runtime *rt) { (void)rt; return 0; }
int device_runtime_capture_begin(device_runtime *rt) { (void)rt; return 1; }

int device_runtime_capture_end(device_runtime *rt, device_graph **out) {
  (void)rt;
  *out = NULL;
  return 1;
}

int device_graph_replay(device_runtime *rt, device_graph *g) { (void)rt, (void)g; return 1; }
void device_graph_destroy(device_graph *g) { (void)g; }
void *device_runtime_latch_ptr(device_runtime *rt) { (void)rt; return NULL; }
int device_runtime_latch_reset(device_runtime *rt) { (void)rt; return 1; }

int device_runtime_latch_read(device_runtime *rt, unsigned *value) {
  (void)rt;
  *value = 0;
  return 1;
}

int device_buffer_alloc(device_runtime *rt, size_t bytes, device_buffer *buf) {
  (void)rt, (void)bytes;
  memset(buf, 0, sizeof *buf);
  return 1;
}

void device_buffer_free(device_buffer *buf) { memset(buf, 0, sizeof *buf); }

int device_buffer_fill(device_runtime *rt, const device_buffer *buf, int byte) {
  (void)rt, (void)buf, (void)byte;
  return 1;
}

int device_buffer_upload(device_runtime *rt, const device_buffer *buf, const void *host,
                         size_t bytes) {
  (void)rt, (void)buf, (void)host, (void)bytes;
  return 1;
}

int device_buffer_download(device_runtime *rt, const device_buffer *buf, void *host,
                           size_t bytes) {
  (void)rt, (void)buf, (void)host, (void)bytes;
  return 1;
}

int device_buffer_check(device_runtime *rt, const device_buffer *buf, unsigned *damage,
                        long *first_bad) {
  (void)rt, (void)buf;
  *damage = 0;
  if (first_bad) first_bad[0] = first_bad[1] = -1;
  return 1;
}

int device_pool_create(device_runtime *rt, device_pool **out) {
  (void)rt;
  *out = NULL;
  return 1;
}

void device_pool_destroy(device_pool *p) { (void)p; }

int device_pool_slot(device_pool *p, const char *name, size_t bytes, void **dptr) {
  (void)p, (void)name, (void)bytes;
  *dptr = NULL;
  return 1;
}

size_t device_pool_slot_bytes(const device_pool *p, const char *name) {
  (void)p, (void)name;
  return 0;
}

int device_pool_fill(device_pool *p, int byte) { (void)p, (void)byte; return 1; }

int device_pool_check(device_pool *p, int *n_damaged, char *report, size_t report_len) {
  (void)p;
  *n_damaged = 0;
  snprintf(report, report_len, NO_CUDA);
  return 1;
}

int device_graph_time(device_runtime *rt, device_graph *g, int held, float *ms, int *gave_up) {
  (void)rt, (void)g, (void)held;
  *ms = 0.0f;
  *gave_up = 0;
  return 1;
}

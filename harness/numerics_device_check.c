/*
** numerics_device_check.c: `bitgate numerics check --device`.
**
** Runs numerics.h as compiled by NVRTC (device/kernels/numerics_sweep.cu) over
** all 2^32 inputs of every sweep function and compares each result word with
** the host's (device_sweep_expected).  CUDA's own __float2bfloat16_rn and
** __float2half_rn are compared with the numerics' storage conversions the
** same way.  The GPU fills 2^28 results per call; the host checks them on all
** cores.
*/
#include "device/numerics_sweep.h"
#include "harness/numerics_check.h"
#include "harness/parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SUB_CHUNK (1u << 20)

typedef struct compare_job {
  unsigned func, base;
  const unsigned *got;
  check_tally *per_thread;
} compare_job;

static void compare_chunk(void *ctx, long long index, int thread) {
  compare_job *j = ctx;
  unsigned i0 = (unsigned)index * SUB_CHUNK, i;
  check_tally *t = &j->per_thread[thread];
  for (i = i0; i < i0 + SUB_CHUNK; i++) {
    unsigned x = j->base + i, want = device_sweep_expected(j->func, x);
    t->checked++;
    if (j->got[i] != want) {
      t->incorrect++;
      check_report(device_sweep_func_name(j->func), "input 0x%08x (%a): device 0x%08x, host 0x%08x", x,
                   nx_f32_from_bits(x), j->got[i], want);
    }
  }
}

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One function over all 2^32 inputs; returns 0, or -1 with err set. */
static int sweep_function(device_sweep *s, unsigned func, unsigned *buf, int threads, FILE *out,
                          check_tally *total, char *err, size_t err_len) {
  check_tally *per_thread = calloc((size_t)threads, sizeof *per_thread), sum = {0, 0};
  unsigned long long base;
  double start = seconds_now();
  int t;
  if (!per_thread) return snprintf(err, err_len, "out of memory"), -1;
  for (base = 0; base < (1ull << 32); base += DEVICE_SWEEP_MAX_N) {
    compare_job job = {func, (unsigned)base, buf, per_thread};
    if (device_sweep_run(s, func, (unsigned)base, DEVICE_SWEEP_MAX_N, buf) != 0) {
      snprintf(err, err_len, "device sweep %s failed: %s", device_sweep_func_name(func), device_sweep_error(s));
      free(per_thread);
      return -1;
    }
    parallel_for(DEVICE_SWEEP_MAX_N / SUB_CHUNK, threads, compare_chunk, &job, NULL);
  }
  for (t = 0; t < threads; t++) {
    sum.checked += per_thread[t].checked;
    sum.incorrect += per_thread[t].incorrect;
  }
  fprintf(out, "device %-22s %11lld compared, %lld differ (%.1f s)\n", device_sweep_func_name(func),
          sum.checked, sum.incorrect, seconds_now() - start);
  fflush(out);
  total->checked += sum.checked;
  total->incorrect += sum.incorrect;
  free(per_thread);
  return 0;
}

int numerics_device_func_known(const char *name) {
  unsigned func;
  for (func = 0; func < SWEEP_FUNC_COUNT; func++)
    if (!strcmp(name, device_sweep_func_name(func))) return 1;
  return 0;
}

int numerics_check_device(const char *only, int threads, FILE *out, check_tally *total, char *err,
                          size_t err_len) {
  device_sweep *s = NULL;
  unsigned *buf;
  unsigned func;
  long long before = total->incorrect, compared = total->checked;
  int rc = 0;
  if (device_sweep_open(&s, err, err_len) != 0) return -1;
  if (!(buf = malloc((size_t)DEVICE_SWEEP_MAX_N * sizeof *buf))) {
    device_sweep_close(s);
    return snprintf(err, err_len, "out of memory for the 1 GiB result buffer"), -1;
  }
  for (func = 0; func < SWEEP_FUNC_COUNT && rc == 0; func++)
    if (!only || !strcmp(only, device_sweep_func_name(func)))
      rc = sweep_function(s, func, buf, threads, out, total, err, err_len);
  if (rc == 0)
    fprintf(out, "device: %lld results compared with the host, %lld differences\n", total->checked - compared,
            total->incorrect - before);
  free(buf);
  device_sweep_close(s);
  return rc;
}

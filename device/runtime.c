/*
** runtime.c: device/runtime.h on cudart's runtime API (no direct libcuda).
**
** Modules are loaded with cudaLibraryLoadData and kernels found with
** cudaLibraryGetKernel (CUDA 12+), as numerics_sweep.c does; cudaLaunchKernel
** takes the cudaKernel_t cast to a function pointer.  Capture uses
** cudaStreamCaptureModeThreadLocal, so an unsafe call made by this thread
** while capturing (a cudaMalloc, a legacy-stream memset) fails loudly instead
** of silently breaking the graph.
**
** Every error goes through rt_fail: the message names the CUDA call (and what
** it was for), cudart's error string and the error's name.
*/
#include "device/runtime.h"
#include "device/launch_skip.h"
#include "device/nvrtc_compile.h"

#include <cuda_runtime_api.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RT_NAME_MAX 128   /* kernel file and kernel names */
#define RT_SLOT_NAME_MAX 64

typedef struct rt_module {
  char file[RT_NAME_MAX];
  cudaLibrary_t library;
} rt_module;

typedef struct rt_kernel {
  char file[RT_NAME_MAX];
  char name[RT_NAME_MAX];
  cudaKernel_t kernel;
} rt_kernel;

#define RT_STATIC_SMEM_MAX (48 * 1024) /* a kernel's static __shared__ bytes, at most */

struct device_runtime {
  int ordinal, sm;
  int alone_smem; /* dynamic shared memory that leaves no room for a second block on an SM; 0 if none fits */
  cudaStream_t stream;
  unsigned *latch; /* the capture-error word */
  cudaEvent_t timer_start, timer_stop; /* for device_graph_time; created on first use */
  unsigned *hold_words;                /* host-mapped [release, gave_up] of bench_hold.cu, or NULL */
  unsigned *hold_words_dev;            /* the same words as the device addresses them */
  void *hold_kernel;
  int capturing;
  int captured, left_out; /* launches recorded and left out since the capture began */
  launch_skip *skip;      /* kernels left out of captures (device_runtime_set_skip), or NULL */
  rt_module *modules;
  int n_modules, cap_modules;
  rt_kernel *kernels;
  int n_kernels, cap_kernels;
  char error[1536];
};

struct device_graph {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
};

typedef struct pool_slot {
  char name[RT_SLOT_NAME_MAX];
  device_buffer buf;
} pool_slot;

struct device_pool {
  device_runtime *rt;
  pool_slot *slots;
  int n_slots, cap_slots;
};

/* ---- errors ---------------------------------------------------------------- */

static int rt_fail(device_runtime *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int rt_fail(device_runtime *rt, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rt->error, sizeof rt->error, fmt, ap);
  va_end(ap);
  return 1;
}

/* Nonzero with "what: cudart's message (name)" unless err is cudaSuccess. */
static int rt_check(device_runtime *rt, cudaError_t err, const char *what) {
  if (err == cudaSuccess) return 0;
  return rt_fail(rt, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}

/* Nonzero, naming the operation, while a capture is open. */
static int rt_refuse_capturing(device_runtime *rt, const char *what) {
  if (!rt->capturing) return 0;
  return rt_fail(rt, "%s is not allowed while the stream is capturing a graph", what);
}

const char *device_runtime_error(const device_runtime *rt) { return rt ? rt->error : ""; }

/* ---- the runtime ------------------------------------------------------------- */

int device_runtime_create(int ordinal, device_runtime **out, char *err, size_t err_len) {
  device_runtime *rt = calloc(1, sizeof *rt);
  int count = 0, major = 0, minor = 0, sm_smem = 0, block_smem = 0;

  *out = NULL;
  if (!rt) {
    snprintf(err, err_len, "device_runtime_create: out of memory");
    return 1;
  }
  rt->ordinal = ordinal;
  if (rt_check(rt, cudaGetDeviceCount(&count), "cudaGetDeviceCount")) goto fail;
  if (ordinal < 0 || ordinal >= count) {
    rt_fail(rt, "device ordinal %d is out of range: %d CUDA device(s)", ordinal, count);
    goto fail;
  }
  if (rt_check(rt, cudaSetDevice(ordinal), "cudaSetDevice") ||
      rt_check(rt, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal),
               "cudaDeviceGetAttribute(compute capability major)") ||
      rt_check(rt, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal),
               "cudaDeviceGetAttribute(compute capability minor)") ||
      rt_check(rt, cudaDeviceGetAttribute(&sm_smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, ordinal),
               "cudaDeviceGetAttribute(shared memory per SM)") ||
      rt_check(rt, cudaDeviceGetAttribute(&block_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal),
               "cudaDeviceGetAttribute(shared memory per block, opt-in)") ||
      rt_check(rt, cudaStreamCreateWithFlags(&rt->stream, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags(non-blocking)") ||
      rt_check(rt, cudaMalloc((void **)&rt->latch, sizeof *rt->latch),
               "cudaMalloc(capture-error word)") ||
      rt_check(rt, cudaMemsetAsync(rt->latch, 0, sizeof *rt->latch, rt->stream),
               "cudaMemsetAsync(capture-error word)") ||
      rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(create)"))
    goto fail;
  rt->sm = major * 10 + minor;
  /* Half the SM's shared memory on top of a kernel's static 48 KiB at most, where a block may have that much. */
  rt->alone_smem = sm_smem / 2 + RT_STATIC_SMEM_MAX <= block_smem ? sm_smem / 2 : 0;
  rt->error[0] = '\0';
  *out = rt;
  return 0;
fail:
  snprintf(err, err_len, "%s", rt->error);
  device_runtime_destroy(rt);
  return 1;
}

void device_runtime_destroy(device_runtime *rt) {
  int i;
  if (!rt) return;
  for (i = 0; i < rt->n_modules; i++) cudaLibraryUnload(rt->modules[i].library);
  if (rt->latch) cudaFree(rt->latch);
  if (rt->timer_start) cudaEventDestroy(rt->timer_start);
  if (rt->timer_stop) cudaEventDestroy(rt->timer_stop);
  if (rt->hold_words) cudaFreeHost(rt->hold_words);
  if (rt->stream) cudaStreamDestroy(rt->stream);
  free(rt->modules);
  free(rt->kernels);
  free(rt);
}

int device_runtime_ordinal(const device_runtime *rt) { return rt->ordinal; }
int device_runtime_sm(const device_runtime *rt) { return rt->sm; }
void *device_runtime_stream(device_runtime *rt) { return rt->stream; }

int device_runtime_sync(device_runtime *rt) {
  if (rt_refuse_capturing(rt, "cudaStreamSynchronize")) return 1;
  return rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize");
}

/* ---- the module cache --------------------------------------------------------- */

/* Grows *items (n used of *cap) by one element of size; 0 or -1. */
static int rt_grow(void **items, int n, int *cap, size_t size) {
  void *more;
  int want;
  if (n < *cap) return 0;
  want = *cap ? 2 * *cap : 8;
  more = realloc(*items, (size_t)want * size);
  if (!more) return -1;
  *items = more;
  *cap = want;
  return 0;
}

/* The loaded library of file, compiling and loading it on first use. */
static int rt_module_get(device_runtime *rt, const char *file, cudaLibrary_t *library) {
  nvrtc_output cubin;
  rt_module *m;
  char what[RT_NAME_MAX + 64];
  int i, rc;

  for (i = 0; i < rt->n_modules; i++)
    if (!strcmp(rt->modules[i].file, file)) {
      *library = rt->modules[i].library;
      return 0;
    }
  if (strlen(file) >= RT_NAME_MAX) return rt_fail(rt, "kernel file name too long: %s", file);
  if (rt_grow((void **)&rt->modules, rt->n_modules, &rt->cap_modules, sizeof *rt->modules))
    return rt_fail(rt, "%s: out of memory", file);
  if (nvrtc_compile_cubin(file, rt->sm, &cubin)) {
    rt_fail(rt, "NVRTC compile of %s for sm_%d failed: %s", file, rt->sm, cubin.log);
    nvrtc_output_free(&cubin);
    return 1;
  }
  m = &rt->modules[rt->n_modules];
  snprintf(what, sizeof what, "cudaLibraryLoadData(%s)", file);
  rc = rt_check(rt, cudaLibraryLoadData(&m->library, cubin.code, NULL, NULL, 0, NULL, NULL, 0),
                what);
  nvrtc_output_free(&cubin);
  if (rc) return rc;
  snprintf(m->file, sizeof m->file, "%s", file);
  rt->n_modules++;
  *library = m->library;
  return 0;
}

int device_runtime_kernel(device_runtime *rt, const char *file, const char *kernel_name,
                          void **kernel) {
  cudaLibrary_t library = NULL;
  rt_kernel *k;
  char what[2 * RT_NAME_MAX + 64];
  int i;

  *kernel = NULL;
  for (i = 0; i < rt->n_kernels; i++)
    if (!strcmp(rt->kernels[i].file, file) && !strcmp(rt->kernels[i].name, kernel_name)) {
      *kernel = (void *)rt->kernels[i].kernel;
      return 0;
    }
  if (rt->capturing)
    return rt_fail(rt, "kernel %s of %s was not loaded before capture began (run an eager pass first)",
                   kernel_name, file);
  if (strlen(kernel_name) >= RT_NAME_MAX)
    return rt_fail(rt, "kernel name too long: %s", kernel_name);
  if (rt_module_get(rt, file, &library)) return 1;
  if (rt_grow((void **)&rt->kernels, rt->n_kernels, &rt->cap_kernels, sizeof *rt->kernels))
    return rt_fail(rt, "%s: out of memory", kernel_name);
  k = &rt->kernels[rt->n_kernels];
  snprintf(what, sizeof what, "cudaLibraryGetKernel(%s, %s)", file, kernel_name);
  if (rt_check(rt, cudaLibraryGetKernel(&k->kernel, library, kernel_name), what)) return 1;
  snprintf(k->file, sizeof k->file, "%s", file);
  snprintf(k->name, sizeof k->name, "%s", kernel_name);
  rt->n_kernels++;
  *kernel = (void *)k->kernel;
  return 0;
}

/*
** DEVICE_LAUNCH_CHAINED adds the programmatic-serialization attribute, so the
** kernel may start once every block of the kernel before it in the stream
** has released it (griddepcontrol.launch_dependents, or its exit); the
** kernel waits for that one's end itself (griddepcontrol.wait).  Captured,
** the attribute becomes a programmatic edge of the graph.
** DEVICE_LAUNCH_SM_ALONE reserves rt->alone_smem of dynamic shared memory,
** which the kernel does not use: the block scheduler then cannot place two
** of its blocks on one SM, also while the kernel before still holds SMs.
*/
static int rt_launch(device_runtime *rt, void *kernel, const char *name, unsigned long long grid,
                     unsigned block, void **args, unsigned how) {
  char what[RT_NAME_MAX + 64];
  cudaLaunchConfig_t config;
  cudaLaunchAttribute chained;
  if (grid == 0 || grid > 0x7fffffffull || block == 0 || block > 1024)
    return rt_fail(rt, "launch %s: bad shape grid %llu, block %u", name, grid, block);
  if (rt->capturing && launch_skip_hit(rt->skip, name)) return rt->left_out++, 0; /* not in the graph */
  /* the kernels before it were left out: nothing to chain to */
  if (rt->capturing && rt->captured++ == 0 && rt->left_out) how &= ~(unsigned)DEVICE_LAUNCH_CHAINED;
  memset(&config, 0, sizeof config);
  memset(&chained, 0, sizeof chained);
  config.gridDim.x = (unsigned)grid;
  config.blockDim.x = block;
  config.gridDim.y = config.gridDim.z = config.blockDim.y = config.blockDim.z = 1;
  config.stream = rt->stream;
  if (how & DEVICE_LAUNCH_CHAINED) {
    chained.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    chained.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &chained;
    config.numAttrs = 1;
  }
  if ((how & DEVICE_LAUNCH_SM_ALONE) && rt->alone_smem) {
    snprintf(what, sizeof what, "cudaKernelSetAttributeForDevice(%s, max dynamic shared memory)", name);
    if (rt_check(rt, cudaKernelSetAttributeForDevice((cudaKernel_t)kernel,
                                                     cudaFuncAttributeMaxDynamicSharedMemorySize, rt->alone_smem,
                                                     rt->ordinal), what))
      return 1;
    config.dynamicSmemBytes = (size_t)rt->alone_smem;
  }
  snprintf(what, sizeof what, "cudaLaunchKernelExC(%s, how %u)", name, how);
  return rt_check(rt, cudaLaunchKernelExC(&config, (const void *)kernel, args), what);
}

void device_runtime_set_skip(device_runtime *rt, launch_skip *skip) { rt->skip = skip; }

int device_runtime_launch(device_runtime *rt, void *kernel, const char *name,
                          unsigned long long grid, unsigned block, void **args) {
  return rt_launch(rt, kernel, name, grid, block, args, 0);
}

int device_runtime_launch_as(device_runtime *rt, void *kernel, const char *name,
                             unsigned long long grid, unsigned block, void **args, unsigned how) {
  return rt_launch(rt, kernel, name, grid, block, args, how);
}

int device_runtime_copy_to_host(device_runtime *rt, void *host, const void *dptr, size_t bytes) {
  if (rt_refuse_capturing(rt, "a device-to-host copy")) return 1;
  if (rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(before copy to host)"))
    return 1;
  if (bytes == 0) return 0;
  return rt_check(rt, cudaMemcpyAsync(host, dptr, bytes, cudaMemcpyDeviceToHost, rt->stream),
                  "cudaMemcpyAsync(device to host)") ||
         rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(copy to host)");
}

int device_runtime_copy_to_device(device_runtime *rt, void *dptr, const void *host, size_t bytes) {
  if (rt_refuse_capturing(rt, "a host-to-device copy")) return 1;
  if (bytes == 0) return 0;
  return rt_check(rt, cudaMemcpyAsync(dptr, host, bytes, cudaMemcpyHostToDevice, rt->stream),
                  "cudaMemcpyAsync(host to device)") ||
         rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(copy to device)");
}

/* ---- capture and replay ---------------------------------------------------------- */

int device_runtime_is_capturing(const device_runtime *rt) { return rt->capturing; }

int device_runtime_capture_begin(device_runtime *rt) {
  if (rt->capturing) return rt_fail(rt, "capture_begin: a capture is already open");
  if (rt_check(rt, cudaStreamBeginCapture(rt->stream, cudaStreamCaptureModeThreadLocal),
               "cudaStreamBeginCapture(thread-local)"))
    return 1;
  rt->capturing = 1;
  rt->captured = rt->left_out = 0;
  return 0;
}

int device_runtime_capture_end(device_runtime *rt, device_graph **out) {
  device_graph *g;
  cudaGraph_t graph = NULL;
  cudaError_t err;

  *out = NULL;
  if (!rt->capturing) return rt_fail(rt, "capture_end: no capture is open");
  err = cudaStreamEndCapture(rt->stream, &graph);
  rt->capturing = 0;
  if (rt_check(rt, err, "cudaStreamEndCapture")) {
    if (graph) cudaGraphDestroy(graph);
    return 1;
  }
  if (!graph) return rt_fail(rt, "cudaStreamEndCapture returned no graph");
  g = calloc(1, sizeof *g);
  if (!g) {
    cudaGraphDestroy(graph);
    return rt_fail(rt, "capture_end: out of memory");
  }
  g->graph = graph;
  if (rt_check(rt, cudaGraphInstantiate(&g->exec, graph, 0), "cudaGraphInstantiate")) {
    device_graph_destroy(g);
    return 1;
  }
  *out = g;
  return 0;
}

int device_graph_replay(device_runtime *rt, device_graph *g) {
  if (rt_refuse_capturing(rt, "graph replay")) return 1;
  return rt_check(rt, cudaGraphLaunch(g->exec, rt->stream), "cudaGraphLaunch") ||
         rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(after replay)");
}

/* The timer's events, and for a held replay the mapped words and bench_hold, on first use. */
static int rt_timer_ready(device_runtime *rt, int held) {
  if (!rt->timer_start && (rt_check(rt, cudaEventCreate(&rt->timer_start), "cudaEventCreate(timer start)") ||
                           rt_check(rt, cudaEventCreate(&rt->timer_stop), "cudaEventCreate(timer stop)")))
    return 1;
  if (!held || rt->hold_kernel) return 0;
  if (!rt->hold_words &&
      (rt_check(rt, cudaHostAlloc((void **)&rt->hold_words, 2 * sizeof *rt->hold_words, cudaHostAllocMapped),
                "cudaHostAlloc(mapped hold words)") ||
       rt_check(rt, cudaHostGetDevicePointer((void **)&rt->hold_words_dev, rt->hold_words, 0),
                "cudaHostGetDevicePointer(hold words)")))
    return 1;
  return device_runtime_kernel(rt, "bench_hold.cu", "bench_hold", &rt->hold_kernel);
}

int device_graph_time(device_runtime *rt, device_graph *g, int held, float *ms, int *gave_up) {
  volatile unsigned *words;
  unsigned *dev_words = NULL, *dev_gave_up = NULL;
  unsigned long long limit = DEVICE_HOLD_LIMIT_NS;
  void *args[3];
  int rc;
  *ms = 0.0f;
  *gave_up = 0;
  if (rt_refuse_capturing(rt, "a timed replay") || rt_timer_ready(rt, held)) return 1;
  words = rt->hold_words;
  if (held) {
    words[0] = words[1] = 0u;
    dev_words = rt->hold_words_dev;
    dev_gave_up = dev_words + 1;
    args[0] = &dev_words;
    args[1] = &dev_gave_up;
    args[2] = &limit;
    if (device_runtime_launch(rt, rt->hold_kernel, "bench_hold", 1, 1, args)) return 1;
  }
  rc = rt_check(rt, cudaEventRecord(rt->timer_start, rt->stream), "cudaEventRecord(timer start)") ||
       rt_check(rt, cudaGraphLaunch(g->exec, rt->stream), "cudaGraphLaunch(timed)") ||
       rt_check(rt, cudaEventRecord(rt->timer_stop, rt->stream), "cudaEventRecord(timer stop)");
  if (held) __atomic_store_n(&words[0], 1u, __ATOMIC_SEQ_CST); /* released even when a record failed */
  rc = rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(after timed replay)") || rc;
  if (rc) return 1;
  if (held) *gave_up = words[1] != 0u;
  return rt_check(rt, cudaEventElapsedTime(ms, rt->timer_start, rt->timer_stop), "cudaEventElapsedTime");
}

void device_graph_destroy(device_graph *g) {
  if (!g) return;
  if (g->exec) cudaGraphExecDestroy(g->exec);
  if (g->graph) cudaGraphDestroy(g->graph);
  free(g);
}

/* ---- the latch ------------------------------------------------------------------------ */

void *device_runtime_latch_ptr(device_runtime *rt) { return rt->latch; }

int device_runtime_latch_reset(device_runtime *rt) {
  if (rt_refuse_capturing(rt, "resetting the capture-error word")) return 1;
  return rt_check(rt, cudaMemsetAsync(rt->latch, 0, sizeof *rt->latch, rt->stream),
                  "cudaMemsetAsync(capture-error word)") ||
         rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(latch reset)");
}

int device_runtime_latch_read(device_runtime *rt, unsigned *value) {
  *value = 0;
  if (rt_refuse_capturing(rt, "reading the capture-error word")) return 1;
  return rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(latch read)") ||
         rt_check(rt, cudaMemcpyAsync(value, rt->latch, sizeof *value, cudaMemcpyDeviceToHost,
                                      rt->stream),
                  "cudaMemcpyAsync(capture-error word to host)") ||
         rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(latch read)");
}

/* ---- guarded buffers ----------------------------------------------------------------- */

int device_buffer_alloc(device_runtime *rt, size_t bytes, device_buffer *buf) {
  size_t total;
  memset(buf, 0, sizeof *buf);
  if (rt_refuse_capturing(rt, "cudaMalloc")) return 1;
  if (bytes > SIZE_MAX - 2 * (size_t)DEVICE_GUARD_BYTES)
    return rt_fail(rt, "device_buffer_alloc: %zu bytes is too large", bytes);
  total = bytes + 2 * (size_t)DEVICE_GUARD_BYTES;
  if (rt_check(rt, cudaMalloc(&buf->base, total), "cudaMalloc(guarded buffer)")) {
    buf->base = NULL;
    return 1;
  }
  buf->dptr = (unsigned char *)buf->base + DEVICE_GUARD_BYTES;
  buf->bytes = bytes;
  if (rt_check(rt, cudaMemsetAsync(buf->base, DEVICE_CANARY_BYTE, total, rt->stream),
               "cudaMemsetAsync(canaries)") ||
      rt_check(rt, cudaMemsetAsync(buf->dptr, DEVICE_JUNK_BYTE, bytes, rt->stream),
               "cudaMemsetAsync(junk payload)") ||
      rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(buffer fill)")) {
    device_buffer_free(buf);
    return 1;
  }
  return 0;
}

void device_buffer_free(device_buffer *buf) {
  if (buf->base) cudaFree(buf->base);
  memset(buf, 0, sizeof *buf);
}

int device_buffer_fill(device_runtime *rt, const device_buffer *buf, int byte) {
  if (rt_refuse_capturing(rt, "filling a buffer")) return 1;
  return rt_check(rt, cudaMemsetAsync(buf->dptr, byte & 0xff, buf->bytes, rt->stream),
                  "cudaMemsetAsync(payload fill)") ||
         rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(payload fill)");
}

int device_buffer_upload(device_runtime *rt, const device_buffer *buf, const void *host,
                         size_t bytes) {
  if (rt_refuse_capturing(rt, "a host-to-device copy")) return 1;
  if (bytes > buf->bytes)
    return rt_fail(rt, "upload of %zu bytes into a %zu-byte buffer", bytes, buf->bytes);
  if (bytes == 0) return 0;
  return rt_check(rt, cudaMemcpyAsync(buf->dptr, host, bytes, cudaMemcpyHostToDevice, rt->stream),
                  "cudaMemcpyAsync(host to device)") ||
         rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(upload)");
}

int device_buffer_download(device_runtime *rt, const device_buffer *buf, void *host,
                           size_t bytes) {
  if (rt_refuse_capturing(rt, "a device-to-host copy")) return 1;
  if (bytes > buf->bytes)
    return rt_fail(rt, "download of %zu bytes from a %zu-byte buffer", bytes, buf->bytes);
  if (bytes == 0) return device_runtime_sync(rt);
  return rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(download)") ||
         rt_check(rt, cudaMemcpyAsync(host, buf->dptr, bytes, cudaMemcpyDeviceToHost, rt->stream),
                  "cudaMemcpyAsync(device to host)") ||
         rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(download)");
}

/* Offset of the first byte of g[0..n) that is not the canary, or -1. */
static long guard_first_bad(const unsigned char *g, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (g[i] != DEVICE_CANARY_BYTE) return (long)i;
  return -1;
}

int device_buffer_check(device_runtime *rt, const device_buffer *buf, unsigned *damage,
                        long *first_bad) {
  unsigned char before[DEVICE_GUARD_BYTES], after[DEVICE_GUARD_BYTES];
  long bad_before, bad_after;
  *damage = 0;
  if (first_bad) first_bad[0] = first_bad[1] = -1;
  if (rt_refuse_capturing(rt, "checking canaries")) return 1;
  if (!buf->base) return rt_fail(rt, "device_buffer_check: buffer not allocated");
  if (rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(canary check)") ||
      rt_check(rt, cudaMemcpyAsync(before, buf->base, DEVICE_GUARD_BYTES, cudaMemcpyDeviceToHost,
                                   rt->stream),
               "cudaMemcpyAsync(leading canary to host)") ||
      rt_check(rt, cudaMemcpyAsync(after, (unsigned char *)buf->dptr + buf->bytes,
                                   DEVICE_GUARD_BYTES, cudaMemcpyDeviceToHost, rt->stream),
               "cudaMemcpyAsync(trailing canary to host)") ||
      rt_check(rt, cudaStreamSynchronize(rt->stream), "cudaStreamSynchronize(canary check)"))
    return 1;
  bad_before = guard_first_bad(before, DEVICE_GUARD_BYTES);
  bad_after = guard_first_bad(after, DEVICE_GUARD_BYTES);
  if (bad_before >= 0) *damage |= DEVICE_GUARD_BEFORE;
  if (bad_after >= 0) *damage |= DEVICE_GUARD_AFTER;
  if (first_bad) {
    first_bad[0] = bad_before;
    first_bad[1] = bad_after;
  }
  return 0;
}

/* ---- the scratch pool ----------------------------------------------------------------- */

int device_pool_create(device_runtime *rt, device_pool **out) {
  *out = calloc(1, sizeof **out);
  if (!*out) return rt_fail(rt, "device_pool_create: out of memory");
  (*out)->rt = rt;
  return 0;
}

void device_pool_destroy(device_pool *p) {
  int i;
  if (!p) return;
  for (i = 0; i < p->n_slots; i++) device_buffer_free(&p->slots[i].buf);
  free(p->slots);
  free(p);
}

static pool_slot *pool_find(const device_pool *p, const char *name) {
  int i;
  for (i = 0; i < p->n_slots; i++)
    if (!strcmp(p->slots[i].name, name)) return &p->slots[i];
  return NULL;
}

int device_pool_slot(device_pool *p, const char *name, size_t bytes, void **dptr) {
  device_runtime *rt = p->rt;
  pool_slot *s = pool_find(p, name);
  device_buffer fresh;

  *dptr = NULL;
  if (s && s->buf.base && s->buf.bytes >= bytes) {
    *dptr = s->buf.dptr;
    return 0;
  }
  if (rt->capturing)
    return rt_fail(rt,
                   "scratch slot '%s' needs %zu bytes but holds %zu; it cannot grow while "
                   "capturing (run a warm eager pass with the same shapes before capture)",
                   name, bytes, s ? s->buf.bytes : (size_t)0);
  if (strlen(name) >= RT_SLOT_NAME_MAX) return rt_fail(rt, "scratch slot name too long: %s", name);
  if (!s) {
    if (rt_grow((void **)&p->slots, p->n_slots, &p->cap_slots, sizeof *p->slots))
      return rt_fail(rt, "scratch slot '%s': out of memory", name);
    s = &p->slots[p->n_slots];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    p->n_slots++;
  }
  /* the new block first, so a failed allocation leaves the slot as it was */
  if (device_buffer_alloc(rt, bytes, &fresh)) return 1;
  device_buffer_free(&s->buf);
  s->buf = fresh;
  *dptr = s->buf.dptr;
  return 0;
}

size_t device_pool_slot_bytes(const device_pool *p, const char *name) {
  const pool_slot *s = pool_find(p, name);
  return s ? s->buf.bytes : 0;
}

int device_pool_fill(device_pool *p, int byte) {
  int i;
  for (i = 0; i < p->n_slots; i++)
    if (p->slots[i].buf.base && device_buffer_fill(p->rt, &p->slots[i].buf, byte)) return 1;
  return 0;
}

int device_pool_check(device_pool *p, int *n_damaged, char *report, size_t report_len) {
  size_t used = 0;
  int i;
  *n_damaged = 0;
  if (report_len) report[0] = '\0';
  for (i = 0; i < p->n_slots; i++) {
    unsigned damage;
    long first_bad[2];
    if (!p->slots[i].buf.base) continue;
    if (device_buffer_check(p->rt, &p->slots[i].buf, &damage, first_bad)) return 1;
    if (!damage) continue;
    (*n_damaged)++;
    if (damage & DEVICE_GUARD_BEFORE && used < report_len)
      used += (size_t)snprintf(report + used, report_len - used,
                               "%sslot '%s': leading canary overwritten at byte %ld", used ? "; " : "",
                               p->slots[i].name, first_bad[0]);
    if (damage & DEVICE_GUARD_AFTER && used < report_len)
      used += (size_t)snprintf(report + used, report_len - used,
                               "%sslot '%s': trailing canary overwritten at byte %ld past the payload",
                               used ? "; " : "", p->slots[i].name, first_bad[1]);
  }
  return 0;
}

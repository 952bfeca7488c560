/*
** runtime.h: one CUDA device as the operator launchers use it (cudart only).
**
** A device_runtime owns, for one device ordinal:
**   - one non-blocking stream, on which every launch, copy and fill is issued;
**   - an NVRTC module cache: an embedded kernel file (device/kernels/X.cu) is
**     compiled once per runtime to a CUBIN for the device's sm_XX under the
**     pinned options, loaded with cudaLibraryLoadData, and its kernels are
**     looked up by name once and cached;
**   - the persistent 4-byte capture-error word ("the latch"): kernels recorded
**     into a CUDA graph atomicOr error bits into it (INDEX_SHARE_LATCH_BIT for
**     a bad index row); the host resets and reads it outside capture;
**   - the capture state: capture_begin / capture_end record the stream into a
**     cudaGraphExec_t that device_graph_replay launches.
**
** Guarded buffers (device_buffer) are laid out as
**     [DEVICE_GUARD_BYTES canary][payload][DEVICE_GUARD_BYTES canary]
** with the canaries filled with DEVICE_CANARY_BYTE and the payload with a
** junk byte (DEVICE_JUNK_BYTE unless the caller picks another), so a write
** out of bounds, or an output element never written, shows up (DESIGN.md
** "Guards").  The payload starts 4096 bytes into a cudaMalloc block, so it
** keeps cudaMalloc's 256-byte alignment; the trailing canary starts at the
** payload's last byte + 1, so a one-byte overrun is caught.
**
** A device_pool is a set of named, guarded scratch slots with stable device
** addresses: a slot grows (a fresh allocation, then the old one is freed) only
** outside capture; while capturing, asking a slot for more than it holds is an
** error naming the slot and both sizes.  So a warm eager pass sizes the pool,
** and capture and every replay then see the same addresses.  A slot that grows
** after a graph was captured leaves that graph pointing at freed memory:
** capture again after any eager pass with larger shapes.
**
** Errors: every function that can fail returns an int rc, 0 on success and
** nonzero on failure, with a message naming the CUDA call and cudart's error
** string in device_runtime_error(rt).  Nothing aborts.  Operations that must
** not run inside a capture (allocation, fills, copies to or from the host,
** latch reset/read, replay, sync) refuse while capturing, with a message.
**
** In a build without the CUDA toolkit every entry point fails with "this
** build has no CUDA" (device_none.c); device_runtime_create's err says so.
** The runtime is not thread-safe: use one per thread.
*/
#ifndef DEVICE_RUNTIME_H
#define DEVICE_RUNTIME_H

#include <stddef.h>

#define DEVICE_GUARD_BYTES 4096
#define DEVICE_CANARY_BYTE 0xcb /* the guard regions either side of a payload */
#define DEVICE_JUNK_BYTE 0xa5   /* a payload's default fill before a launch */

typedef struct device_runtime device_runtime;
typedef struct device_graph device_graph;
typedef struct device_pool device_pool;

/* A guarded allocation; dptr is the payload, bytes its length (may be 0). */
typedef struct device_buffer {
  void *base;   /* the cudaMalloc block: leading canary, payload, trailing canary */
  void *dptr;   /* base + DEVICE_GUARD_BYTES */
  size_t bytes; /* payload bytes */
} device_buffer;

/* Which canary of a buffer was overwritten: bits of device_buffer_check's *damage. */
enum device_guard_damage {
  DEVICE_GUARD_BEFORE = 1u << 0,
  DEVICE_GUARD_AFTER = 1u << 1
};

/* ---- the runtime ---------------------------------------------------------- */

/*
** cudaSetDevice(ordinal), a non-blocking stream, the latch word (zeroed).
** 0, or nonzero with the reason in err (no GPU, no CUDA in this build, or the
** CUDA call that failed).
*/
int device_runtime_create(int ordinal, device_runtime **out, char *err, size_t err_len);

/* Frees the stream, the latch and the modules; destroy graphs and pools first.  rt may be NULL. */
void device_runtime_destroy(device_runtime *rt);

/* The last error's message, or "" when none; never NULL. */
const char *device_runtime_error(const device_runtime *rt);

int device_runtime_ordinal(const device_runtime *rt);
int device_runtime_sm(const device_runtime *rt); /* 90 for an H200 */

/* The cudaStream_t, as a void *, for launchers. */
void *device_runtime_stream(device_runtime *rt);

/* cudaStreamSynchronize; refused while capturing. */
int device_runtime_sync(device_runtime *rt);

/*
** The kernel `kernel_name` of the embedded file `file` ("index_share.cu"), as a
** cudaKernel_t (void *) for device_runtime_launch.  Compiles and loads the file
** on first use and caches both the library and the kernel; refused while
** capturing unless already cached (loading is not a stream operation).
*/
int device_runtime_kernel(device_runtime *rt, const char *file, const char *kernel_name,
                          void **kernel);

/*
** cudaLaunchKernel on the runtime's stream; legal while capturing.  grid and
** block are 1-D; args as cudaLaunchKernel wants them (pointers to each
** argument, types exactly as the kernel declares them).  name is for messages.
*/
int device_runtime_launch(device_runtime *rt, void *kernel, const char *name,
                          unsigned long long grid, unsigned block, void **args);

/*
** device_runtime_launch with options, `how` a set of:
** - DEVICE_LAUNCH_CHAINED: chained to the kernel before it in the stream
**   (programmatic dependent launch).  The kernel may start before that one
**   has finished, so it must run griddepcontrol.wait before it reads that
**   one's output or writes memory (csa_kernel_common.h, csa_chain_wait).
** - DEVICE_LAUNCH_SM_ALONE: no two of its blocks share an SM (it reserves
**   shared memory it does not use; where the device cannot, a plain launch).
*/
enum { DEVICE_LAUNCH_CHAINED = 1u, DEVICE_LAUNCH_SM_ALONE = 2u };
int device_runtime_launch_as(device_runtime *rt, void *kernel, const char *name,
                             unsigned long long grid, unsigned block, void **args, unsigned how);

/*
** Kernels left out of graphs (device/launch_skip.h; bench --skip-kernels): a
** launch of a kernel named on skip while a capture is open is not recorded
** and returns 0, and skip counts it; eager launches always run.  A chained
** launch that would be a capture's first kernel is recorded unchained.
** skip stays the caller's; NULL (the default) leaves nothing out.
*/
struct launch_skip;
void device_runtime_set_skip(device_runtime *rt, struct launch_skip *skip);

/*
** Syncs, then copies bytes from the device address dptr (any allocation on
** this device, e.g. a pool slot) to host, then syncs; refused while capturing.
*/
int device_runtime_copy_to_host(device_runtime *rt, void *host, const void *dptr, size_t bytes);

/* The reverse: host to the device address dptr, then syncs; refused while capturing. */
int device_runtime_copy_to_device(device_runtime *rt, void *dptr, const void *host, size_t bytes);

/* ---- capture and replay -------------------------------------------------- */

/* 1 between a successful capture_begin and the matching capture_end. */
int device_runtime_is_capturing(const device_runtime *rt);

/* cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal). */
int device_runtime_capture_begin(device_runtime *rt);

/*
** cudaStreamEndCapture, then cudaGraphInstantiate.  Always leaves capture
** mode, also when the capture was invalidated (then it fails, saying so).
*/
int device_runtime_capture_end(device_runtime *rt, device_graph **out);

/* cudaGraphLaunch on the runtime's stream, then cudaStreamSynchronize. */
int device_graph_replay(device_runtime *rt, device_graph *g);

/*
** One replay of g timed by CUDA events on the stream, in *ms, then synced;
** for benchmarks, not while capturing.  held 0: the start event, the launch
** and the stop event, so an idle stream's start event completes at once and
** the figure includes the host's cudaGraphLaunch.  held 1: the stream is
** first held by bench_hold.cu (a one-thread kernel polling a host-mapped
** word), the events and the launch are queued behind it, then the host
** releases it: the figure is the GPU's run of the graph alone.  *gave_up is
** 1 when the hold stopped waiting (DEVICE_HOLD_LIMIT_NS) before the release,
** so that figure includes the submission after all; else 0.  Either way the
** stop event is queued right behind the graph and the host syncs after it:
** the timer of schema 4's figures recorded its stop event only once the
** host's sync on the replay had returned, about 5 us after the graph ended.
*/
#define DEVICE_HOLD_LIMIT_NS 100000000ull /* 100 ms */
int device_graph_time(device_runtime *rt, device_graph *g, int held, float *ms, int *gave_up);

/* g may be NULL. */
void device_graph_destroy(device_graph *g);

/* ---- the capture-error latch -------------------------------------------- */

/* The 4-byte device word (unsigned *) that kernels atomicOr error bits into. */
void *device_runtime_latch_ptr(device_runtime *rt);

/* Zeroes the latch (memset + sync); refused while capturing. */
int device_runtime_latch_reset(device_runtime *rt);

/* Syncs and copies the latch to *value; refused while capturing. */
int device_runtime_latch_read(device_runtime *rt, unsigned *value);

/* ---- guarded buffers ------------------------------------------------------ */

/*
** Allocates bytes of payload between two canaries, fills the canaries with
** DEVICE_CANARY_BYTE and the payload with DEVICE_JUNK_BYTE.  *buf is zeroed on
** failure.  Refused while capturing.
*/
int device_buffer_alloc(device_runtime *rt, size_t bytes, device_buffer *buf);

/* Frees buf (a zeroed buffer is fine) and zeroes it. */
void device_buffer_free(device_buffer *buf);

/* Fills the payload with `byte` (0..255), e.g. DEVICE_JUNK_BYTE; refused while capturing. */
int device_buffer_fill(device_runtime *rt, const device_buffer *buf, int byte);

/* Copies bytes (<= buf->bytes) from host into the payload's start, then syncs. */
int device_buffer_upload(device_runtime *rt, const device_buffer *buf, const void *host,
                         size_t bytes);

/* Syncs, then copies bytes (<= buf->bytes) of the payload's start to host. */
int device_buffer_download(device_runtime *rt, const device_buffer *buf, void *host,
                           size_t bytes);

/*
** Reads both canaries back and sets *damage to the enum device_guard_damage
** bits of those that no longer hold DEVICE_CANARY_BYTE everywhere (0: intact).
** When first_bad is not NULL, first_bad[0] / [1] get the offset of the first
** wrong byte inside the leading / trailing canary, or -1.  Refused while capturing.
*/
int device_buffer_check(device_runtime *rt, const device_buffer *buf, unsigned *damage,
                        long *first_bad);

/* ---- the scratch pool ----------------------------------------------------- */

/* An empty pool whose slots live on rt. */
int device_pool_create(device_runtime *rt, device_pool **out);

/* Frees every slot; p may be NULL. */
void device_pool_destroy(device_pool *p);

/*
** The payload address of slot `name` (at most 63 characters), holding at least
** bytes.  A new or too small slot is (re)allocated only when not capturing:
** the new guarded buffer is allocated and junk-filled first, then the old one
** freed.  While capturing, a missing or too small slot is an error naming the
** slot, the bytes asked for and the bytes it holds.
*/
int device_pool_slot(device_pool *p, const char *name, size_t bytes, void **dptr);

/* Capacity in bytes of slot name, 0 when it does not exist. */
size_t device_pool_slot_bytes(const device_pool *p, const char *name);

/* Fills every slot's payload with byte; refused while capturing. */
int device_pool_fill(device_pool *p, int byte);

/*
** Checks every slot's canaries.  Sets *n_damaged to the number of slots with a
** damaged canary and writes "slot 'scores': trailing canary overwritten at
** byte 0; ..." (or "") into report.  rc is nonzero only on a CUDA error.
*/
int device_pool_check(device_pool *p, int *n_damaged, char *report, size_t report_len);

#endif /* DEVICE_RUNTIME_H */

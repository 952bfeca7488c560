/*
** csa_device_common.h: what the two CSA launchers (csa128_device.c,
** csa4_device.c) share: the instance's runtime, attributes, kernels and
** scratch pool; the claim-time contract on the tensors' metadata; the eager
** cursor readback; scratch slots sized by a product of dims; grids and
** launches; and the one way a device failure is reported.  Private to the
** launchers (the harness sees csa128_device.h and csa4_device.h).
**
** Results are enum device_csa128_rc (DEVICE_CSA_OK, DEVICE_CSA_OP_ERROR,
** DEVICE_CSA_FAILED) throughout.
*/
#ifndef DEVICE_CSA_DEVICE_COMMON_H
#define DEVICE_CSA_DEVICE_COMMON_H

#include "device/csa128_device.h" /* enum device_csa128_rc, device_tensor */
#include "device/kernels/csa_attention_abi.h" /* csa_attn_pass */
#include "device/runtime.h"
#include "oracle/csa.h"
#include "oracle/op_error.h"

#include <stddef.h>

/* Grid-stride and block-stride kernels cover work beyond this many blocks. */
#define CSA_DEVICE_MAX_GRID (1ull << 20)

typedef struct csa_device_base {
  device_runtime *rt;
  const char *label;  /* "CSA128", "CSA4": how messages name the operator */
  csa_attrs attrs;    /* attrs.cache_format is format (or NULL) */
  char *format;       /* a copy of the caller's cache_format */
  device_pool *pool;
  int warmed;         /* an eager execute has succeeded: capture may begin */
} csa_device_base;

/*
** Copies the attributes (the cache_format string too), makes an empty pool
** and loads kernels[i] = kernel_names[i] of kernel_file (NVRTC, once per
** runtime).  0, or nonzero with the reason in err (base then freed).
*/
int csa_device_base_init(csa_device_base *base, device_runtime *rt, const csa_attrs *attrs,
                         const char *label, const char *kernel_file,
                         const char *const *kernel_names, int n_kernels, void **kernels,
                         char *err, size_t err_len);
void csa_device_base_free(csa_device_base *base);

/* The launchers' capture_ready / scratch_check / scratch_fill (see csa128_device.h). */
int csa_device_capture_ready(const csa_device_base *base, char *reason, size_t reason_len);
int csa_device_scratch_check(csa_device_base *base, char *report, size_t report_len);
int csa_device_scratch_fill(csa_device_base *base, int byte);

/* Records a device failure ("LABEL device: what: runtime error") in err; returns DEVICE_CSA_FAILED. */
int csa_device_failed(const csa_device_base *base, op_error *err, const char *what);

/*
** csa_validate on the tensors' metadata (the oracle's contract, so errors
** are the oracle's), then: every tensor that holds bytes has a device
** address.  Fills *d (not the cursor).  DEVICE_CSA_OK, _OP_ERROR or _FAILED.
*/
int csa_device_validate(const csa_device_base *base, const device_tensor *const *inputs,
                        int n_inputs, device_tensor *const *outputs, int n_outputs, csa_dims *d,
                        op_error *err);

/*
** Bench support for both launchers' capture_parts: after a warm eager pass
** (else DEVICE_CSA_FAILED), opens a capture, calls run(ctx, err) (the
** launcher's execute of its parts), closes the capture into *graph.  On any
** failure *graph is NULL and the capture is closed.  Returns run's code, or
** DEVICE_CSA_FAILED when the capture itself failed.
*/
int csa_device_capture(const csa_device_base *base, int (*run)(void *ctx, op_error *err), void *ctx,
                       device_graph **graph, op_error *err);

/*
** Refuses a capture before a warm eager pass (DEVICE_CSA_FAILED, the reason
** in err); sets *latch to the runtime's capture-error word while capturing,
** NULL otherwise; returns DEVICE_CSA_OK.
*/
int csa_device_begin(const csa_device_base *base, unsigned **latch, op_error *err);

/*
** Eager only: the cursor (8 bytes at total_dptr) to the host, then the
** oracle's csa_validate_cursor, which fills d's cursor fields.
*/
int csa_device_check_cursor(const csa_device_base *base, csa_dims *d, const void *total_dptr,
                            op_error *err);

/*
** The pool slot `name` holding the product of factors[0..n) elements of
** elem_bytes each, that size into *bytes (when not NULL); *out NULL when it
** is 0 bytes.  The product is checked against size_t overflow.
** DEVICE_CSA_OK or DEVICE_CSA_FAILED.
*/
int csa_device_scratch(const csa_device_base *base, const char *name, const long long *factors,
                       int n_factors, size_t elem_bytes, void **out, size_t *bytes, op_error *err);

/* Blocks of `threads` for n items, at most CSA_DEVICE_MAX_GRID (grid-stride kernels). */
unsigned long long csa_device_grid(long long n, unsigned threads);

/* One block per work item, at most CSA_DEVICE_MAX_GRID (block-stride kernels). */
unsigned long long csa_device_blocks(long long n);

/* One cluster of `cluster` blocks per work item, at most CSA_DEVICE_MAX_GRID blocks (cluster-stride kernels). */
unsigned long long csa_device_clusters(long long n, unsigned long long cluster);

/*
** How a pass tiles its work (csa_attention_abi.h): one chain a thread, the
** narrow tiles (scores only, csa_attention_resident.h: they decode their
** own rows, so the plan then launches no gather) or the wide ones (scores
** and values); the gather and the softmax have one form, CSA_TILING_ONE.
*/
typedef enum csa_attn_tiling { CSA_TILING_ONE, CSA_TILING_NARROW, CSA_TILING_WIDE, CSA_TILINGS } csa_attn_tiling;

/*
** One pass's launch: its tiling, its blocks (one a unit; 0: not launched)
** and threads; whether it is chained to the pass before it
** (DEVICE_LAUNCH_CHAINED: every pass launched but the first), whether it releases the pass after it at its start rather than
** at its end (csa_chain_release), and whether its blocks take an SM each
** (DEVICE_LAUNCH_SM_ALONE).
*/
typedef struct csa_attn_launch {
  csa_attn_tiling tiling;
  unsigned long long blocks;
  unsigned threads;
  int chained, release_early, sm_alone;
} csa_attn_launch;

/*
** A pass releases the next one at its start only when the next one's grid
** is one wave of a block a SM on an H200's 132 SMs, and then that pass's
** blocks take an SM each.  Released early, a pass's blocks are placed while
** the pass before still holds SMs, and the scheduler doubled them up on the
** SMs left free: the pass then ran longer than the early start saved
** (ratio 4: 30 -> 34 us).  With an SM each it gains (30 -> 27).  Otherwise
** a pass releases the next at its end, which still skips the launch gap
** (docs/SPEED.md, fourteenth round).  A constant, like CSA_WIDE_MIN_UNITS:
** chaining changes when a kernel starts, never its bytes.
*/
#define CSA_CHAIN_MAX_BLOCKS 132

/*
** The launches of the four passes over bs_rows (b, s) row groups of `heads`
** heads whose scores rows are `stride` wide: the same plan for both ratios,
** whose launchers map each pass to their own kernel.
*/
void csa_device_attention_plan(long long bs_rows, long long heads, long long stride,
                               csa_attn_launch plan[CSA_ATTN_PASSES]);

/*
** Launches the plan's four passes: kernel[pass][tiling] indexes kernels and
** names (the launcher's loaded kernels), every pass with the same args, whose
** last is &*early (the passes' early_release argument), set here to the mask
** of the passes that release early (bit 1 << pass).
*/
int csa_device_launch_attention(device_runtime *rt, void *const *kernels, const char *const *names,
                                const int kernel[CSA_ATTN_PASSES][CSA_TILINGS], long long bs_rows,
                                long long heads, long long stride, void **args, unsigned *early);

#endif /* DEVICE_CSA_DEVICE_COMMON_H */

/*
** csa128_device.c: the CSA ratio-128 launcher (see csa128_device.h).
**
** The order of launches, the scratch slots and what each kernel gets are the
** whole of it; the arithmetic lives in device/kernels/csa128.cu and the
** contract in the oracle (csa_validate, csa_validate_cursor).  Kernel
** arguments are passed as cudaLaunchKernel wants them: an array of pointers
** to variables of exactly the kernel's parameter types (long long, int,
** float, pointers).  The plumbing both CSA launchers share (attributes,
** pool, contract, cursor readback, scratch slots, grids) is
** csa_device_common.c.  The reference variant (device_variant.h) loads
** csa128_compress and csa128_attention from csa128_reference.cu, same names
** and arguments, and launches the compressor with one thread per batch row.
*/
#include "device/csa128_device.h"
#include "device/csa_device_common.h"
#include "device/kernels/csa128_abi.h"
#include "device/kernels/csa_attention_abi.h"
#include "device/kernels/csa_state_abi.h"
#include "device/kernels/reference_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel file's geometry is the oracle's. */
_Static_assert(CSA128_RATIO_K == CSA128_RATIO, "ratio drifted");
_Static_assert(CSA128_DIM_K == CSA_HEAD_DIM, "head_dim drifted");
_Static_assert(CSA128_NOPE_K == CSA_NOPE_DIM, "RoPE tail start drifted");
_Static_assert(CSA128_ROPE_PAIRS_K * 2 == CSA_ROPE_DIM, "RoPE width drifted");
_Static_assert(CSA128_FP8_BLOCKS_K == CSA_FP8_BLOCKS, "FP8 block count drifted");
_Static_assert(CSA128_FP8_RECORD_K == CSA_FP8_RECORD_BYTES, "record width drifted");
_Static_assert(CSA128_F32_RECORD_K == CSA_HEAD_DIM * 4, "f32 record width drifted");
_Static_assert(CSA128_WINDOW_K == CSA_DENSE_WINDOW, "dense window drifted");

enum csa128_kernel_id {
  CSA128_K_STATE,
  CSA128_K_COMPRESS,
  CSA128_K_ATTN_GATHER,
  CSA128_K_ATTN_SCORES,
  CSA128_K_ATTN_SOFTMAX,
  CSA128_K_ATTN_VALUES,
  CSA128_K_ATTN_SCORES_NARROW,
  CSA128_K_ATTN_SCORES_WIDE,
  CSA128_K_ATTN_VALUES_WIDE,
  CSA128_K_FAST_COUNT,                      /* csa128.cu's kernels end here */
  CSA128_K_ATTENTION = CSA128_K_FAST_COUNT, /* the reference's attention, in csa128_reference.cu only */
  CSA128_K_COUNT
};

static const char *const csa128_kernel_names[CSA128_K_COUNT] = {
    [CSA128_K_STATE] = CSA128_KERNEL_STATE,
    [CSA128_K_COMPRESS] = CSA128_KERNEL_COMPRESS,
    [CSA128_K_ATTN_GATHER] = CSA128_KERNEL_ATTN_GATHER,
    [CSA128_K_ATTN_SCORES] = CSA128_KERNEL_ATTN_SCORES,
    [CSA128_K_ATTN_SOFTMAX] = CSA128_KERNEL_ATTN_SOFTMAX,
    [CSA128_K_ATTN_VALUES] = CSA128_KERNEL_ATTN_VALUES,
    [CSA128_K_ATTN_SCORES_NARROW] = CSA128_KERNEL_ATTN_SCORES_NARROW,
    [CSA128_K_ATTN_SCORES_WIDE] = CSA128_KERNEL_ATTN_SCORES_WIDE,
    [CSA128_K_ATTN_VALUES_WIDE] = CSA128_KERNEL_ATTN_VALUES_WIDE,
    [CSA128_K_ATTENTION] = CSA128_KERNEL_ATTENTION,
};

struct device_csa128 {
  csa_device_base base;
  void *kernels[CSA128_K_COUNT];
  device_variant variant;
};

/* Device addresses of one execute's tensors and scratch. */
typedef struct csa128_buffers {
  const void *query, *current_kv, *kv, *gate, *ape, *norm, *past_cache, *past_carry, *sink,
      *bias;
  const long long *total;
  void *y, *cache, *carry;
  float *scores;
  float *gathered; /* the fast attention's decoded candidates, NULL for the reference */
} csa128_buffers;

/* ---- life cycle ---------------------------------------------------------------- */

int device_csa128_create(device_runtime *rt, const csa_attrs *attrs, device_csa128 **out,
                         char *err, size_t err_len) {
  return device_csa128_create_variant(rt, attrs, DEVICE_VARIANT_FAST, out, err, err_len);
}

int device_csa128_create_variant(device_runtime *rt, const csa_attrs *attrs, device_variant variant,
                                 device_csa128 **out, char *err, size_t err_len) {
  static const int reference_ids[] = {CSA128_K_COMPRESS, CSA128_K_ATTENTION}; /* the state copy stays */
  device_csa128 *k = calloc(1, sizeof *k);
  size_t i;
  *out = NULL;
  if (!k) {
    snprintf(err, err_len, "device_csa128_create: out of memory");
    return 1;
  }
  if (csa_device_base_init(&k->base, rt, attrs, "CSA128", CSA128_KERNEL_FILE,
                           csa128_kernel_names, CSA128_K_FAST_COUNT, k->kernels, err, err_len)) {
    free(k);
    return 1;
  }
  k->variant = variant;
  for (i = 0; variant == DEVICE_VARIANT_REFERENCE && i < sizeof reference_ids / sizeof *reference_ids; i++)
    if (device_runtime_kernel(rt, CSA128_REFERENCE_FILE, csa128_kernel_names[reference_ids[i]],
                              &k->kernels[reference_ids[i]])) {
      snprintf(err, err_len, "%s", device_runtime_error(rt));
      device_csa128_destroy(k);
      return 1;
    }
  *out = k;
  return 0;
}

void device_csa128_destroy(device_csa128 *k) {
  if (!k) return;
  csa_device_base_free(&k->base);
  free(k);
}

device_runtime *device_csa128_runtime(device_csa128 *k) { return k->base.rt; }

int device_csa128_capture_ready(const device_csa128 *k, char *reason, size_t reason_len) {
  return csa_device_capture_ready(&k->base, reason, reason_len);
}

int device_csa128_scratch_check(device_csa128 *k, char *report, size_t report_len) {
  return csa_device_scratch_check(&k->base, report, report_len);
}

int device_csa128_scratch_fill(device_csa128 *k, int byte) {
  return csa_device_scratch_fill(&k->base, byte);
}

/* ---- one execute ---------------------------------------------------------------- */

/* Fills b: the tensors' addresses, then the scratch slots ("gathered" for the fast variant only). */
static int csa128_prepare(device_csa128 *k, const csa_dims *d, const device_tensor *const *in,
                          device_tensor *const *out, csa128_buffers *b, op_error *err) {
  const long long scores_dims[4] = {d->batch, d->seq, d->heads, d->score_stride};
  const long long gathered_dims[4] = {d->batch, d->seq, CSA_DENSE_WINDOW + d->present_capacity, CSA128_DIM_K};
  void *p = NULL;
  int rc;

  memset(b, 0, sizeof *b);
  b->query = in[CSA_IN_QUERY]->dptr;
  b->current_kv = in[CSA_IN_CURRENT_KV]->dptr;
  b->kv = in[CSA_IN_COMPRESSOR_KV]->dptr;
  b->gate = in[CSA_IN_COMPRESSOR_GATE]->dptr;
  b->ape = in[CSA_IN_COMPRESSOR_APE]->dptr;
  b->norm = in[CSA_IN_COMPRESSOR_NORM]->dptr;
  b->past_cache = in[CSA_IN_PAST_COMPRESSED_KV]->dptr;
  b->past_carry = in[CSA_IN_PAST_CARRY]->dptr;
  b->total = in[CSA_IN_TOTAL_SEQ]->dptr;
  b->sink = in[CSA_IN_HEAD_SINK]->dptr;
  b->bias = d->has_bias ? in[CSA_IN_BIAS]->dptr : NULL;
  b->y = out[CSA_OUT_Y]->dptr;
  b->cache = out[CSA_OUT_PRESENT_COMPRESSED_KV]->dptr;
  b->carry = out[CSA_OUT_PRESENT_CARRY]->dptr;
  rc = csa_device_scratch(&k->base, "scores", scores_dims, 4, sizeof(float), &p, NULL, err);
  b->scores = p;
  if (!rc && k->variant != DEVICE_VARIANT_REFERENCE) {
    rc = csa_device_scratch(&k->base, "gathered", gathered_dims, 4, sizeof(float), &p, NULL, err);
    b->gathered = p;
  }
  return rc;
}

static int csa128_launch(device_csa128 *k, int id, unsigned long long grid, unsigned threads,
                         void **args) {
  return device_runtime_launch(k->base.rt, k->kernels[id], csa128_kernel_names[id], grid,
                               threads, args);
}

static long long csa128_record_bytes(const csa_dims *d) {
  return d->format == CSA_CACHE_FP8 ? CSA128_FP8_RECORD_K : CSA128_F32_RECORD_K;
}

/* Present carry and the past records into outputs 2 and 1; latch: NULL unless capturing. */
static int csa128_launch_state(device_csa128 *k, const csa_dims *d, const csa128_buffers *b,
                               unsigned *latch) {
  const void *past_carry = b->past_carry, *past_cache = b->past_cache;
  void *carry = b->carry, *cache = b->cache;
  const long long *total = b->total;
  long long batch = d->batch, seq = d->seq, kv_len = d->kv_len;
  long long past_capacity = d->past_capacity, present_capacity = d->present_capacity;
  long long record_bytes = csa128_record_bytes(d);
  void *args[] = {&past_carry, &past_cache, &carry,         &cache,
                  &total,      &latch,      &batch,         &seq,
                  &kv_len,     &past_capacity, &present_capacity, &record_bytes};
  long long carry_threads = csa_copy_carry_threads(batch * CSA128_RATIO_K * 2 * CSA128_DIM_K);
  long long cache_turns = csa_copy_turns(batch * present_capacity * record_bytes);
  long long n = carry_threads > cache_turns ? carry_threads : cache_turns;
  if (n == 0) { /* nothing to copy; a bad cursor must still raise the latch */
    if (!latch) return 0;
    n = 1;
  }
  return csa128_launch(k, CSA128_K_STATE, csa_device_grid(n, CSA128_STATE_THREADS),
                       CSA128_STATE_THREADS, args);
}

/* The new tokens' carry slots and finished records, a cluster (fast) or a thread (reference) per batch row. */
static int csa128_launch_compress(device_csa128 *k, const csa_dims *d, const csa128_buffers *b) {
  const void *kv = b->kv, *gate = b->gate, *ape = b->ape, *norm = b->norm;
  void *carry = b->carry, *cache = b->cache;
  const long long *total = b->total;
  long long batch = d->batch, seq = d->seq, kv_len = d->kv_len;
  long long past_capacity = d->past_capacity, present_capacity = d->present_capacity;
  int cache_fp8 = d->format == CSA_CACHE_FP8;
  void *args[] = {&kv,     &gate,   &ape,           &norm,          &carry,
                  &cache,  &total,  &batch,         &seq,           &kv_len,
                  &past_capacity, &present_capacity, &cache_fp8};
  if (batch == 0 || seq == 0) return 0; /* csa128_run bounded batch by the grid */
  if (k->variant == DEVICE_VARIANT_REFERENCE)
    return csa128_launch(k, CSA128_K_COMPRESS, (unsigned long long)batch, REF_SERIAL_THREADS, args);
  /* fast: a cluster of CSA128_COMPRESS_CLUSTER blocks a batch row (the kernel's __cluster_dims__), cluster-stride */
  return csa128_launch(k, CSA128_K_COMPRESS, csa_device_clusters(batch, CSA128_COMPRESS_CLUSTER),
                       CSA128_COMPRESS_THREADS, args);
}

/*
** Y: the reference's one kernel, a block per (batch, query, head) row; or
** the fast four passes (csa_attention_tiles.h), the same arguments each.
*/
static int csa128_launch_attention(device_csa128 *k, const csa_dims *d, const csa128_buffers *b) {
  const void *query = b->query, *current_kv = b->current_kv, *cache = b->cache;
  const void *sink = b->sink, *bias = b->bias;
  int has_bias = d->has_bias, cache_fp8 = d->format == CSA_CACHE_FP8;
  long long bd0 = d->bias_dims[0], bd1 = d->bias_dims[1], bd2 = d->bias_dims[2];
  long long bd3 = d->bias_dims[3];
  void *y = b->y;
  float *scores = b->scores, *gathered = b->gathered;
  const long long *total = b->total;
  long long batch = d->batch, seq = d->seq, heads = d->heads, kv_len = d->kv_len;
  long long past_capacity = d->past_capacity, present_capacity = d->present_capacity;
  float scale = d->scale;
  unsigned early = 0;
  void *args[] = {&query,  &current_kv, &cache,  &sink,          &bias,
                  &has_bias, &bd0,      &bd1,    &bd2,           &bd3,
                  &y,      &scores,     &total,  &batch,         &seq,
                  &heads,  &kv_len,     &past_capacity, &present_capacity, &cache_fp8,
                  &scale,  &gathered, &early}; /* the reference's kernel takes all but the last two */
  const long long rows = batch * seq * heads, stride = CSA_DENSE_WINDOW + present_capacity;
  static const int kernel[CSA_ATTN_PASSES][CSA_TILINGS] = {
      [CSA_ATTN_GATHER] = {CSA128_K_ATTN_GATHER, CSA128_K_ATTN_GATHER, CSA128_K_ATTN_GATHER},
      [CSA_ATTN_SCORES] = {CSA128_K_ATTN_SCORES, CSA128_K_ATTN_SCORES_NARROW, CSA128_K_ATTN_SCORES_WIDE},
      [CSA_ATTN_SOFTMAX] = {CSA128_K_ATTN_SOFTMAX, CSA128_K_ATTN_SOFTMAX, CSA128_K_ATTN_SOFTMAX},
      [CSA_ATTN_VALUES] = {CSA128_K_ATTN_VALUES, CSA128_K_ATTN_VALUES, CSA128_K_ATTN_VALUES_WIDE},
  };
  if (rows == 0) return 0;
  if (k->variant == DEVICE_VARIANT_REFERENCE)
    return csa128_launch(k, CSA128_K_ATTENTION, csa_device_blocks(rows), REF_ATTN_THREADS, args);
  return csa_device_launch_attention(k->base.rt, k->kernels, csa128_kernel_names, kernel, batch * seq, heads,
                                     stride, args, &early);
}

/* The launches after the metadata passed the contract. */
static int csa128_run(device_csa128 *k, unsigned parts, csa_dims *d, const device_tensor *const *inputs,
                      device_tensor *const *outputs, op_error *err) {
  const int capturing = device_runtime_is_capturing(k->base.rt);
  unsigned *latch = NULL;
  csa128_buffers b;
  int rc = csa_device_begin(&k->base, &latch, err);
  if (rc) return rc;
  if ((unsigned long long)d->batch > CSA_DEVICE_MAX_GRID) {
    op_error_clear(err);
    snprintf(err->message, sizeof err->message,
             "CSA128 device: batch %lld exceeds the compression grid (%llu blocks)", d->batch,
             CSA_DEVICE_MAX_GRID);
    return DEVICE_CSA_FAILED;
  }
  rc = csa128_prepare(k, d, inputs, outputs, &b, err);
  if (rc) return rc;
  if (!capturing) {
    rc = csa_device_check_cursor(&k->base, d, b.total, err);
    if (rc) return rc;
  }
  if (((parts & 1u << CSA128_PART_STATE) && csa128_launch_state(k, d, &b, latch)) ||
      ((parts & 1u << CSA128_PART_COMPRESS) && csa128_launch_compress(k, d, &b)) ||
      ((parts & 1u << CSA128_PART_ATTENTION) && csa128_launch_attention(k, d, &b)))
    return csa_device_failed(&k->base, err, "");
  if (capturing) return DEVICE_CSA_OK;
  if (device_runtime_sync(k->base.rt)) return csa_device_failed(&k->base, err, "CSA128 kernels");
  k->base.warmed = 1;
  return DEVICE_CSA_OK;
}

int device_csa128_execute(device_csa128 *k, const device_tensor *const *inputs, int n_inputs,
                          device_tensor *const *outputs, int n_outputs, op_error *err) {
  csa_dims d;
  int rc = csa_device_validate(&k->base, inputs, n_inputs, outputs, n_outputs, &d, err);
  if (!rc) rc = csa128_run(k, CSA128_PARTS_ALL, &d, inputs, outputs, err);
  return rc;
}

int device_csa128_execute_parts(device_csa128 *k, unsigned parts, const device_tensor *const *inputs,
                                int n_inputs, device_tensor *const *outputs, int n_outputs, op_error *err) {
  csa_dims d;
  int rc;
  if (device_runtime_is_capturing(k->base.rt) || !k->base.warmed) {
    op_error_clear(err);
    snprintf(err->message, sizeof err->message, "CSA128 device: parts run only eagerly, after a whole execute");
    return DEVICE_CSA_FAILED;
  }
  rc = csa_device_validate(&k->base, inputs, n_inputs, outputs, n_outputs, &d, err);
  if (!rc) rc = csa128_run(k, parts, &d, inputs, outputs, err);
  return rc;
}

/* What csa_device_capture runs: the parts of a validated step. */
typedef struct csa128_parts_call {
  device_csa128 *k;
  unsigned parts;
  csa_dims d;
  const device_tensor *const *inputs;
  device_tensor *const *outputs;
} csa128_parts_call;

static int csa128_parts_run(void *ctx, op_error *err) {
  csa128_parts_call *c = ctx;
  return csa128_run(c->k, c->parts, &c->d, c->inputs, c->outputs, err);
}

int device_csa128_capture_parts(device_csa128 *k, unsigned parts, const device_tensor *const *inputs,
                                int n_inputs, device_tensor *const *outputs, int n_outputs, device_graph **graph,
                                op_error *err) {
  csa128_parts_call c = {k, parts, {0}, inputs, outputs};
  int rc = csa_device_validate(&k->base, inputs, n_inputs, outputs, n_outputs, &c.d, err);
  *graph = NULL;
  return rc ? rc : csa_device_capture(&k->base, csa128_parts_run, &c, graph, err);
}

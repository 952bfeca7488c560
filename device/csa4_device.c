/*
** csa4_device.c: the CSA ratio-4 launcher (see csa4_device.h).
**
** The order of launches, the scratch slots and what each kernel gets are the
** whole of it; the arithmetic lives in device/kernels/csa4.cu, the contract
** in the oracle (csa_validate, csa_validate_cursor), and the plumbing both
** CSA launchers share in csa_device_common.c.  Every kernel takes the step's
** shape as one csa4_shape by value (csa4_abi.h), then its pointers; kernel
** arguments are passed as cudaLaunchKernel wants them, an array of pointers
** to variables of exactly the parameters' types.
**
** Variants (device_variant.h): the reference one loads six kernels from
** csa4_reference.cu under the same names and argument lists, and launches
** them with its own geometry (one thread per batch row or (b, s) row, or
** REF_ATTN_THREADS for the attention); nothing else differs.
**
** Scratch slots: the four stage payloads (csa4_stage_slot) and "weights",
** the attention's exps and probabilities (kept apart from "scores" so that
** the CandidateAssembly payload survives the softmax), and for the fast
** variant "gathered", the attention's candidates decoded to f32 once.
*/
#include "device/csa4_device.h"
#include "device/csa_device_common.h"
#include "device/kernels/csa128_abi.h"
#include "device/kernels/csa4_abi.h"
#include "device/kernels/csa_attention_abi.h"
#include "device/kernels/csa_state_abi.h"
#include "device/kernels/reference_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel file's geometry is the oracle's. */
_Static_assert(CSA4_RATIO_K == CSA4_RATIO, "ratio drifted");
_Static_assert(CSA4_SLOTS_K == CSA4_SLOTS, "carry slots drifted");
_Static_assert(CSA4_DIM_K == CSA_HEAD_DIM, "head_dim drifted");
_Static_assert(CSA4_SOURCE_K == CSA4_SOURCE_WIDTH, "main compressor width drifted");
_Static_assert(CSA4_INDEX_DIM_K == CSA4_INDEX_DIM, "index_head_dim drifted");
_Static_assert(CSA4_INDEX_SOURCE_K == CSA4_INDEX_SOURCE, "index compressor width drifted");
_Static_assert(CSA4_INDEX_RECORD_K == CSA4_INDEX_RECORD_BYTES, "index record width drifted");
_Static_assert(CSA4_ROPE_K == CSA_ROPE_DIM, "RoPE width drifted");
_Static_assert(CSA4_FP8_RECORD_K == CSA_FP8_RECORD_BYTES, "record width drifted");
_Static_assert(CSA4_FP8_BLOCKS_K == CSA_FP8_BLOCKS, "FP8 block count drifted");
_Static_assert(CSA4_WINDOW_K == CSA_DENSE_WINDOW, "dense window drifted");
_Static_assert(CSA4_TOPK_MAX_K == CSA4_TOPK_MAX, "selection capacity drifted");
_Static_assert(CSA4_LATCH_CURSOR_BIT == CSA128_LATCH_CURSOR_BIT, "one cursor bit for both ratios");
_Static_assert(CSA4_SCORE_HEAD_CHUNK % (CSA4_SCORE_THREADS / 32) == 0, "csa4_index_score gives each warp as many heads");
_Static_assert(CSA4_SCORE_RECORDS == 32, "csa4_index_score gives each lane one record");

enum csa4_kernel_id {
  CSA4_K_STATE,
  CSA4_K_MAIN,
  CSA4_K_INDEX,
  CSA4_K_QUERY,
  CSA4_K_SCORE,
  CSA4_K_SELECT,
  CSA4_K_BROADCAST,
  CSA4_K_ATTN_GATHER,
  CSA4_K_ATTN_SCORES,
  CSA4_K_ATTN_SOFTMAX,
  CSA4_K_ATTN_VALUES,
  CSA4_K_ATTN_SCORES_NARROW,
  CSA4_K_ATTN_SCORES_WIDE,
  CSA4_K_ATTN_VALUES_WIDE,
  CSA4_K_FAST_COUNT, /* csa4.cu's kernels end here */
  CSA4_K_ATTENTION = CSA4_K_FAST_COUNT, /* the reference's attention, in csa4_reference.cu only */
  CSA4_K_COUNT
};

static const char *const csa4_kernel_names[CSA4_K_COUNT] = {
    [CSA4_K_STATE] = CSA4_KERNEL_STATE,         [CSA4_K_MAIN] = CSA4_KERNEL_MAIN_COMPRESS,
    [CSA4_K_INDEX] = CSA4_KERNEL_INDEX_COMPRESS, [CSA4_K_QUERY] = CSA4_KERNEL_INDEX_QUERY,
    [CSA4_K_SCORE] = CSA4_KERNEL_INDEX_SCORE,   [CSA4_K_SELECT] = CSA4_KERNEL_SELECT,
    [CSA4_K_BROADCAST] = CSA4_KERNEL_BROADCAST, [CSA4_K_ATTN_GATHER] = CSA4_KERNEL_ATTN_GATHER,
    [CSA4_K_ATTN_SCORES] = CSA4_KERNEL_ATTN_SCORES,
    [CSA4_K_ATTN_SOFTMAX] = CSA4_KERNEL_ATTN_SOFTMAX, [CSA4_K_ATTN_VALUES] = CSA4_KERNEL_ATTN_VALUES,
    [CSA4_K_ATTN_SCORES_NARROW] = CSA4_KERNEL_ATTN_SCORES_NARROW,
    [CSA4_K_ATTN_SCORES_WIDE] = CSA4_KERNEL_ATTN_SCORES_WIDE, [CSA4_K_ATTN_VALUES_WIDE] = CSA4_KERNEL_ATTN_VALUES_WIDE,
    [CSA4_K_ATTENTION] = CSA4_KERNEL_ATTENTION,
};

/* The kernels csa4_reference.cu replaces; state copy and broadcast stay csa4.cu's in both variants. */
static const int csa4_reference_ids[] = {CSA4_K_MAIN,  CSA4_K_INDEX,  CSA4_K_QUERY,
                                         CSA4_K_SCORE, CSA4_K_SELECT, CSA4_K_ATTENTION};

static const char *const csa4_stage_slot[CSA4_STAGE_COUNT] = {
    [CSA4_STAGE_INDEX_QUERY] = "index_query",
    [CSA4_STAGE_INDEX_SCORES] = "index_scores",
    [CSA4_STAGE_SELECTION] = "selection",
    [CSA4_STAGE_SCORES] = "scores",
};

struct device_csa4 {
  csa_device_base base;
  void *kernels[CSA4_K_COUNT];
  device_variant variant;
  size_t stage_bytes[CSA4_STAGE_COUNT]; /* of the last successful eager execute */
};

/* One execute's shape, device addresses and scratch. */
typedef struct csa4_step {
  csa4_shape shape;
  int has_selected;
  const void *in[CSA_INPUT_COUNT]; /* NULL when absent */
  void *out[CSA_OUTPUT_MAX];
  void *stage[CSA4_STAGE_COUNT];
  void *weights;
  void *gathered; /* the fast attention's decoded candidates, NULL for the reference */
  unsigned *latch; /* the capture-error word while capturing, else NULL */
  size_t stage_bytes[CSA4_STAGE_COUNT];
} csa4_step;

/* ---- life cycle ---------------------------------------------------------------- */

int device_csa4_create(device_runtime *rt, const csa_attrs *attrs, device_csa4 **out, char *err,
                       size_t err_len) {
  return device_csa4_create_variant(rt, attrs, DEVICE_VARIANT_FAST, out, err, err_len);
}

int device_csa4_create_variant(device_runtime *rt, const csa_attrs *attrs, device_variant variant,
                               device_csa4 **out, char *err, size_t err_len) {
  device_csa4 *k = calloc(1, sizeof *k);
  size_t i;
  *out = NULL;
  if (!k) {
    snprintf(err, err_len, "device_csa4_create: out of memory");
    return 1;
  }
  if (csa_device_base_init(&k->base, rt, attrs, "CSA4", CSA4_KERNEL_FILE, csa4_kernel_names,
                           CSA4_K_FAST_COUNT, k->kernels, err, err_len)) {
    free(k);
    return 1;
  }
  k->variant = variant;
  for (i = 0; variant == DEVICE_VARIANT_REFERENCE && i < sizeof csa4_reference_ids / sizeof *csa4_reference_ids; i++)
    if (device_runtime_kernel(rt, CSA4_REFERENCE_FILE, csa4_kernel_names[csa4_reference_ids[i]],
                              &k->kernels[csa4_reference_ids[i]])) {
      snprintf(err, err_len, "%s", device_runtime_error(rt));
      device_csa4_destroy(k);
      return 1;
    }
  *out = k;
  return 0;
}

void device_csa4_destroy(device_csa4 *k) {
  if (!k) return;
  csa_device_base_free(&k->base);
  free(k);
}

device_runtime *device_csa4_runtime(device_csa4 *k) { return k->base.rt; }

int device_csa4_capture_ready(const device_csa4 *k, char *reason, size_t reason_len) {
  return csa_device_capture_ready(&k->base, reason, reason_len);
}

int device_csa4_scratch_check(device_csa4 *k, char *report, size_t report_len) {
  return csa_device_scratch_check(&k->base, report, report_len);
}

int device_csa4_scratch_fill(device_csa4 *k, int byte) {
  return csa_device_scratch_fill(&k->base, byte);
}

size_t device_csa4_stage_bytes(const device_csa4 *k, csa4_stage st) {
  return (unsigned)st < CSA4_STAGE_COUNT ? k->stage_bytes[st] : 0;
}

int device_csa4_stage_copy(device_csa4 *k, csa4_stage st, void *host, size_t len) {
  size_t bytes = device_csa4_stage_bytes(k, st);
  void *p = NULL;
  if (bytes == 0) return 0;
  if (len < bytes || device_pool_slot(k->base.pool, csa4_stage_slot[st], bytes, &p) ||
      device_runtime_copy_to_host(k->base.rt, host, p, bytes))
    return -1;
  return 0;
}

int device_csa4_stage_load(device_csa4 *k, csa4_stage st, const void *host, size_t len) {
  size_t bytes = device_csa4_stage_bytes(k, st);
  void *p = NULL;
  if (len != bytes) return -1;
  if (bytes == 0) return 0; /* empty at this step (cap = 0: no record can exist); as in stage_copy */
  if (device_pool_slot(k->base.pool, csa4_stage_slot[st], bytes, &p) ||
      device_runtime_copy_to_device(k->base.rt, p, host, bytes))
    return -1;
  return 0;
}

/* ---- one step: shapes and buffers ------------------------------------------------ */

static csa4_shape csa4_shape_of(const csa_dims *d) {
  csa4_shape s;
  int i;
  memset(&s, 0, sizeof s);
  s.batch = d->batch;
  s.seq = d->seq;
  s.heads = d->heads;
  s.kv_len = d->kv_len;
  s.past_capacity = d->past_capacity;
  s.present_capacity = d->present_capacity;
  s.index_past_capacity = d->index_past_capacity;
  s.index_present_capacity = d->index_present_capacity;
  s.index_heads = d->index_heads;
  s.topk = d->topk;
  for (i = 0; i < 4; i++) s.bias_dims[i] = d->bias_dims[i];
  s.scale = d->scale;
  s.has_bias = d->has_bias;
  return s;
}

/* Fills st: the shape, the tensors' addresses, then the scratch slots. */
static int csa4_prepare(device_csa4 *k, const csa_dims *d, const device_tensor *const *inputs,
                        int n_inputs, device_tensor *const *outputs, int n_outputs, csa4_step *st,
                        op_error *err) {
  const long long b = d->batch, s = d->seq;
  const long long query_dims[4] = {b, s, d->index_heads, CSA4_INDEX_DIM};
  const long long score_dims[3] = {b, s, d->index_present_capacity};
  const long long select_dims[3] = {b, s, d->topk};
  const long long attn_dims[4] = {b, s, d->heads, CSA_DENSE_WINDOW + d->topk};
  const long long gathered_dims[4] = {b, s, CSA_DENSE_WINDOW + d->topk, CSA4_DIM_K};
  const struct {
    const long long *dims;
    int n;
  } stage_dims[CSA4_STAGE_COUNT] = {
      [CSA4_STAGE_INDEX_QUERY] = {query_dims, 4},
      [CSA4_STAGE_INDEX_SCORES] = {score_dims, 3},
      [CSA4_STAGE_SELECTION] = {select_dims, 3},
      [CSA4_STAGE_SCORES] = {attn_dims, 4},
  };
  int i, rc = DEVICE_CSA_OK;

  memset(st, 0, sizeof *st);
  st->shape = csa4_shape_of(d);
  st->has_selected = n_outputs > CSA_OUT_SELECTED;
  for (i = 0; i < n_inputs && i < CSA_INPUT_COUNT; i++)
    st->in[i] = inputs[i] && inputs[i]->meta.dt != DTYPE_NONE ? inputs[i]->dptr : NULL;
  for (i = 0; i < n_outputs && i < CSA_OUTPUT_MAX; i++) st->out[i] = outputs[i] ? outputs[i]->dptr : NULL;
  if (!d->has_bias) st->in[CSA_IN_BIAS] = NULL;
  for (i = 0; i < CSA4_STAGE_COUNT && !rc; i++) /* f32 and i32 alike: 4 bytes an element */
    rc = csa_device_scratch(&k->base, csa4_stage_slot[i], stage_dims[i].dims, stage_dims[i].n,
                            sizeof(float), &st->stage[i], &st->stage_bytes[i], err);
  if (!rc) rc = csa_device_scratch(&k->base, "weights", attn_dims, 4, sizeof(float), &st->weights, NULL, err);
  if (!rc && k->variant != DEVICE_VARIANT_REFERENCE)
    rc = csa_device_scratch(&k->base, "gathered", gathered_dims, 4, sizeof(float), &st->gathered, NULL, err);
  return rc;
}

/* ---- one step: launches ---------------------------------------------------------- */

static int csa4_launch(device_csa4 *k, int id, unsigned long long grid, unsigned threads,
                       void **args) {
  if (grid == 0) return 0; /* no work */
  return device_runtime_launch(k->base.rt, k->kernels[id], csa4_kernel_names[id], grid, threads,
                               args);
}

static long long csa4_max_ll(long long a, long long b) { return a > b ? a : b; }

/* Both carries and the past records of both caches; the only kernel that latches. */
static int csa4_launch_state(device_csa4 *k, csa4_step *st) {
  const csa4_shape *p = &st->shape;
  const void *past_carry = st->in[CSA_IN_PAST_CARRY], *past_cache = st->in[CSA_IN_PAST_COMPRESSED_KV];
  const void *past_index_carry = st->in[CSA_IN_PAST_INDEX_CARRY];
  const void *past_index_key = st->in[CSA_IN_PAST_INDEX_KEY];
  void *carry = st->out[CSA_OUT_PRESENT_CARRY], *cache = st->out[CSA_OUT_PRESENT_COMPRESSED_KV];
  void *index_carry = st->out[CSA_OUT_PRESENT_INDEX_CARRY];
  void *index_key = st->out[CSA_OUT_PRESENT_INDEX_KEY];
  const void *total = st->in[CSA_IN_TOTAL_SEQ];
  unsigned *latch = st->latch;
  void *args[] = {&st->shape,  &past_carry, &past_cache,  &past_index_carry,
                  &past_index_key, &carry,  &cache,       &index_carry,
                  &index_key,  &total,      &latch};
  long long n = csa_copy_carry_threads(p->batch * CSA4_SLOTS * 2 * CSA4_SOURCE_WIDTH); /* the larger carry */
  n = csa4_max_ll(n, csa_copy_turns(p->batch * p->present_capacity * CSA_FP8_RECORD_BYTES));
  n = csa4_max_ll(n, csa_copy_turns(p->batch * p->index_present_capacity * CSA4_INDEX_RECORD_BYTES));
  if (n == 0 && latch) n = 1; /* nothing to copy; a bad cursor must still raise the latch */
  return csa4_launch(k, CSA4_K_STATE, csa_device_grid(n, CSA4_STATE_THREADS), CSA4_STATE_THREADS,
                     args);
}

/* One compression stream: the main one (outputs 1, 2) or the index one (3, 4). */
static int csa4_launch_compress(device_csa4 *k, csa4_step *st, int index_stream) {
  const int first_in = index_stream ? CSA_IN_INDEX_KV : CSA_IN_COMPRESSOR_KV;
  const void *kv = st->in[first_in], *gate = st->in[first_in + 1];
  const void *ape = st->in[first_in + 2], *norm = st->in[first_in + 3];
  void *carry = st->out[index_stream ? CSA_OUT_PRESENT_INDEX_CARRY : CSA_OUT_PRESENT_CARRY];
  void *records = st->out[index_stream ? CSA_OUT_PRESENT_INDEX_KEY : CSA_OUT_PRESENT_COMPRESSED_KV];
  const void *total = st->in[CSA_IN_TOTAL_SEQ];
  void *args[] = {&st->shape, &kv, &gate, &ape, &norm, &carry, &records, &total};
  _Static_assert(CSA_IN_INDEX_GATE == CSA_IN_INDEX_KV + 1 && CSA_IN_INDEX_NORM == CSA_IN_INDEX_KV + 3,
                 "index compressor inputs are kv, gate, ape, norm in a row");
  _Static_assert(CSA_IN_COMPRESSOR_NORM == CSA_IN_COMPRESSOR_KV + 3,
                 "main compressor inputs are kv, gate, ape, norm in a row");
  /* fast: a cluster of `cluster` blocks a batch row (the kernels' __cluster_dims__; 1: plain blocks), cluster-stride */
  const unsigned long long cluster = index_stream ? CSA4_INDEX_CLUSTER : CSA4_MAIN_CLUSTER;
  const int id = index_stream ? CSA4_K_INDEX : CSA4_K_MAIN;
  if (st->shape.seq == 0) return 0;
  if (k->variant == DEVICE_VARIANT_REFERENCE)
    return csa4_launch(k, id, csa_device_blocks(st->shape.batch), REF_SERIAL_THREADS, args);
  return csa4_launch(k, id, csa_device_clusters(st->shape.batch, cluster),
                     index_stream ? CSA4_INDEX_THREADS : CSA4_MAIN_THREADS, args);
}

/* Index-query finalize (CSA4_PART_QUERY), scoring (_SCORE), selection and (6 outputs) the broadcast (_SELECT). */
static int csa4_launch_select(device_csa4 *k, csa4_step *st, int part) {
  const csa4_shape *p = &st->shape;
  const void *index_query = st->in[CSA_IN_INDEX_QUERY], *weight = st->in[CSA_IN_INDEX_WEIGHT];
  const void *key = st->out[CSA_OUT_PRESENT_INDEX_KEY], *total = st->in[CSA_IN_TOTAL_SEQ];
  void *query = st->stage[CSA4_STAGE_INDEX_QUERY], *scores = st->stage[CSA4_STAGE_INDEX_SCORES];
  void *selection = st->stage[CSA4_STAGE_SELECTION], *selected = st->out[CSA_OUT_SELECTED];
  void *query_args[] = {&st->shape, &index_query, &query, &total};
  void *score_args[] = {&st->shape, &query, &weight, &key, &scores, &total};
  void *select_args[] = {&st->shape, &scores, &selection, &total};
  void *broadcast_args[] = {&st->shape, &selection, &selected, &total};
  const long long rows = p->batch * p->seq;
  const long long tiles = (p->index_present_capacity + CSA4_SCORE_RECORDS - 1) / CSA4_SCORE_RECORDS;
  if (k->variant == DEVICE_VARIANT_REFERENCE && part != CSA4_PART_SELECT) /* one thread a (b, s) row */
    return csa4_launch(k, part == CSA4_PART_QUERY ? CSA4_K_QUERY : CSA4_K_SCORE, csa_device_blocks(rows),
                       REF_SERIAL_THREADS, part == CSA4_PART_QUERY ? query_args : score_args);
  if (part == CSA4_PART_QUERY)
    return csa4_launch(k, CSA4_K_QUERY, csa_device_blocks(rows * p->index_heads), CSA4_QUERY_THREADS,
                       query_args);
  if (part == CSA4_PART_SCORE)
    return csa4_launch(k, CSA4_K_SCORE, csa_device_blocks(rows * tiles), CSA4_SCORE_THREADS, score_args);
  return (k->variant == DEVICE_VARIANT_REFERENCE
              ? csa4_launch(k, CSA4_K_SELECT, csa_device_blocks(rows), REF_SERIAL_THREADS, select_args)
              : csa4_launch(k, CSA4_K_SELECT, csa_device_clusters(rows, CSA4_SELECT_CLUSTER), CSA4_SELECT_THREADS,
                            select_args)) ||
         (st->has_selected &&
          csa4_launch(k, CSA4_K_BROADCAST,
                      csa_device_grid(rows * p->index_heads * p->topk, CSA4_BROADCAST_THREADS),
                      CSA4_BROADCAST_THREADS, broadcast_args));
}

/*
** Y: the reference's one kernel, a block per (batch, query, head) row; or
** the fast four passes (csa_attention_tiles.h), the same arguments each.
*/
static int csa4_launch_attention(device_csa4 *k, csa4_step *st) {
  const csa4_shape *p = &st->shape;
  const long long bs = p->batch * p->seq, stride = CSA_DENSE_WINDOW + p->topk;
  const void *query = st->in[CSA_IN_QUERY], *current_kv = st->in[CSA_IN_CURRENT_KV];
  const void *cache = st->out[CSA_OUT_PRESENT_COMPRESSED_KV];
  const void *selection = st->stage[CSA4_STAGE_SELECTION], *sink = st->in[CSA_IN_HEAD_SINK];
  const void *bias = st->in[CSA_IN_BIAS], *total = st->in[CSA_IN_TOTAL_SEQ];
  void *y = st->out[CSA_OUT_Y], *scores = st->stage[CSA4_STAGE_SCORES], *weights = st->weights;
  void *gathered = st->gathered;
  void *args[] = {&st->shape, &query, &current_kv, &cache, &selection, &sink,
                  &bias,      &y,     &scores,     &weights, &total};
  unsigned early = 0;
  void *fast_args[] = {&st->shape, &query, &current_kv, &cache,    &selection, &sink,    &bias,
                       &y,         &scores, &weights,   &gathered, &total,     &early};
  static const int kernel[CSA_ATTN_PASSES][CSA_TILINGS] = {
      [CSA_ATTN_GATHER] = {CSA4_K_ATTN_GATHER, CSA4_K_ATTN_GATHER, CSA4_K_ATTN_GATHER},
      [CSA_ATTN_SCORES] = {CSA4_K_ATTN_SCORES, CSA4_K_ATTN_SCORES_NARROW, CSA4_K_ATTN_SCORES_WIDE},
      [CSA_ATTN_SOFTMAX] = {CSA4_K_ATTN_SOFTMAX, CSA4_K_ATTN_SOFTMAX, CSA4_K_ATTN_SOFTMAX},
      [CSA_ATTN_VALUES] = {CSA4_K_ATTN_VALUES, CSA4_K_ATTN_VALUES, CSA4_K_ATTN_VALUES_WIDE},
  };
  if (k->variant == DEVICE_VARIANT_REFERENCE)
    return csa4_launch(k, CSA4_K_ATTENTION, csa_device_blocks(bs * p->heads), REF_ATTN_THREADS, args);
  if (p->heads == 0) return 0; /* no output row */
  return csa_device_launch_attention(k->base.rt, k->kernels, csa4_kernel_names, kernel, bs, p->heads, stride,
                                     fast_args, &early);
}

static int csa4_launch_part(device_csa4 *k, csa4_step *st, int part) {
  switch (part) {
  case CSA4_PART_STATE: return csa4_launch_state(k, st);
  case CSA4_PART_MAIN: return csa4_launch_compress(k, st, 0);
  case CSA4_PART_INDEX: return csa4_launch_compress(k, st, 1);
  case CSA4_PART_ATTENTION: return csa4_launch_attention(k, st);
  default: return csa4_launch_select(k, st, part);
  }
}

/* The launches of `parts`, in the seed's stage order. */
static int csa4_launch_all(device_csa4 *k, csa4_step *st, unsigned parts) {
  static const int order[] = {CSA4_PART_STATE, CSA4_PART_MAIN,   CSA4_PART_INDEX,    CSA4_PART_QUERY,
                              CSA4_PART_SCORE, CSA4_PART_SELECT, CSA4_PART_ATTENTION};
  size_t i;
  for (i = 0; i < sizeof order / sizeof order[0]; i++)
    if ((parts & 1u << order[i]) && csa4_launch_part(k, st, order[i])) return 1;
  return 0;
}

/* One execute of `parts` (eager, or into the capture that is open). */
static int csa4_execute_parts_now(device_csa4 *k, unsigned parts, const device_tensor *const *inputs, int n_inputs,
                                  device_tensor *const *outputs, int n_outputs, op_error *err) {
  const int capturing = device_runtime_is_capturing(k->base.rt);
  unsigned *latch = NULL;
  csa_dims d;
  csa4_step st;
  int rc = csa_device_validate(&k->base, inputs, n_inputs, outputs, n_outputs, &d, err);
  if (rc) return rc;
  if (d.ratio != CSA4_RATIO) { /* as oracle_csa4_run refuses a valid ratio-128 call */
    op_error_contract(err, CSA_CONTRACT_RATIO, -1, -1, "oracle_csa4_run needs compression_ratio 4");
    return DEVICE_CSA_OP_ERROR;
  }
  rc = csa_device_begin(&k->base, &latch, err); /* before any slot could grow */
  if (!rc) rc = csa4_prepare(k, &d, inputs, n_inputs, outputs, n_outputs, &st, err);
  st.latch = latch;
  if (!rc && !capturing) rc = csa_device_check_cursor(&k->base, &d, st.in[CSA_IN_TOTAL_SEQ], err);
  if (rc) return rc;
  if (csa4_launch_all(k, &st, parts)) return csa_device_failed(&k->base, err, "");
  if (capturing) return DEVICE_CSA_OK;
  if (device_runtime_sync(k->base.rt)) return csa_device_failed(&k->base, err, "CSA4 kernels");
  memcpy(k->stage_bytes, st.stage_bytes, sizeof k->stage_bytes);
  k->base.warmed = 1;
  return DEVICE_CSA_OK;
}

int device_csa4_execute(device_csa4 *k, const device_tensor *const *inputs, int n_inputs,
                        device_tensor *const *outputs, int n_outputs, op_error *err) {
  return csa4_execute_parts_now(k, CSA4_PARTS_ALL, inputs, n_inputs, outputs, n_outputs, err);
}

int device_csa4_execute_parts(device_csa4 *k, unsigned parts, const device_tensor *const *inputs, int n_inputs,
                              device_tensor *const *outputs, int n_outputs, op_error *err) {
  if (device_runtime_is_capturing(k->base.rt) || !k->base.warmed) { /* localisation follows an eager execute */
    op_error_clear(err);
    snprintf(err->message, sizeof err->message, "CSA4 device: parts run only eagerly, after a whole execute");
    return DEVICE_CSA_FAILED;
  }
  return csa4_execute_parts_now(k, parts, inputs, n_inputs, outputs, n_outputs, err);
}

/* What csa_device_capture runs: one execute of the parts. */
typedef struct csa4_parts_call {
  device_csa4 *k;
  unsigned parts;
  const device_tensor *const *inputs;
  device_tensor *const *outputs;
  int n_inputs, n_outputs;
} csa4_parts_call;

static int csa4_parts_run(void *ctx, op_error *err) {
  const csa4_parts_call *c = ctx;
  return csa4_execute_parts_now(c->k, c->parts, c->inputs, c->n_inputs, c->outputs, c->n_outputs, err);
}

int device_csa4_capture_parts(device_csa4 *k, unsigned parts, const device_tensor *const *inputs, int n_inputs,
                              device_tensor *const *outputs, int n_outputs, device_graph **graph, op_error *err) {
  csa4_parts_call c = {k, parts, inputs, outputs, n_inputs, n_outputs};
  return csa_device_capture(&k->base, csa4_parts_run, &c, graph, err);
}

/*
** index_share_device.c: the IndexShare launcher (see index_share_device.h).
**
** The order of launches, the scratch slots and what each kernel gets are the
** whole of it; the arithmetic lives in device/kernels/index_share.cu and the
** contract in the oracle (index_share_validate).  Kernel arguments are
** passed as cudaLaunchKernel wants them: an array of pointers to variables of
** exactly the kernel's parameter types (long long, int, float, pointers).
**
** The instance's creation (which module each kernel comes from, by variant)
** is index_share_create.c.  The stage API built on these launches (stage names, the score trace, the
** stage runs, stage_copy, the payload rule) is in index_share_stages.c; the
** instance and execute with a part are shared through index_share_internal.h.
*/
#include "device/index_share_device.h"
#include "device/index_share_internal.h"
#include "device/kernels/index_share_abi.h"
#include "device/kernels/reference_abi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel's rule codes and latch bit are the oracle's. */
_Static_assert(IS_RULE_SENTINEL == INDEX_RULE_SENTINEL, "rule codes drifted");
_Static_assert(IS_RULE_AFTER_PADDING == INDEX_RULE_AFTER_PADDING, "rule codes drifted");
_Static_assert(IS_RULE_OUT_OF_RANGE == INDEX_RULE_OUT_OF_RANGE, "rule codes drifted");
_Static_assert(IS_RULE_DUPLICATE == INDEX_RULE_DUPLICATE, "rule codes drifted");
_Static_assert(IS_RULE_NOT_INCREASING == INDEX_RULE_NOT_INCREASING, "rule codes drifted");
_Static_assert(IS_RULE_ALL_PADDING == INDEX_RULE_ALL_PADDING, "rule codes drifted");
_Static_assert(IS_LATCH_INDEX_BIT == INDEX_SHARE_LATCH_BIT, "latch bit drifted");
_Static_assert(sizeof(struct is_row_params) == IS_ROW_PARAMS_BYTES, "the rows parameter block must be laid out as in NVRTC");

#define IS_MAX_GRID (1ull << 20) /* grid-stride / block-stride loops cover the rest */

/* Records a device failure in err and returns DEVICE_IS_FAILED. */
static int is_failed(device_index_share *k, op_error *err, const char *what) {
  op_error_clear(err);
  snprintf(err->message, sizeof err->message, "IndexShare device: %s%s%s", what, *what ? ": " : "",
           device_runtime_error(k->rt));
  return DEVICE_IS_FAILED;
}

static int is_storage(dtype dt) {
  return dt == DTYPE_F16 ? IS_STORAGE_F16 : dt == DTYPE_BF16 ? IS_STORAGE_BF16 : IS_STORAGE_F32;
}

/* Blocks for n items of threads each, at most IS_MAX_GRID. */
static unsigned long long is_grid(long long n, unsigned threads) {
  unsigned long long g = ((unsigned long long)n + threads - 1) / threads;
  return g > IS_MAX_GRID ? IS_MAX_GRID : g;
}

/* a * b * c * d bytes into *out; 0, or -1 when it does not fit a size_t. */
static int is_bytes(long long a, long long b, long long c, size_t d, size_t *out) {
  const long long f[3] = {a, b, c};
  size_t n = d;
  int i;
  for (i = 0; i < 3; i++) {
    if (f[i] < 0 || (f[i] && n > SIZE_MAX / (size_t)f[i])) return -1;
    n *= (size_t)f[i];
  }
  *out = n;
  return 0;
}

/* ---- the instance (created in index_share_create.c) ---------------------------- */

device_runtime *device_index_share_runtime(device_index_share *k) { return k->rt; }

int device_index_share_capture_ready(const device_index_share *k, char *reason,
                                     size_t reason_len) {
  if (k->warmed) return 1;
  if (reason && reason_len)
    snprintf(reason, reason_len,
             "IndexShare: capture needs a successful eager pass with the same shapes first "
             "(it loads the kernels and sizes the pooled scratch, whose addresses the graph keeps)");
  return 0;
}

int device_index_share_scratch_check(device_index_share *k, char *report, size_t report_len) {
  int n_damaged = 0;
  if (device_pool_check(k->pool, &n_damaged, report, report_len)) {
    snprintf(report, report_len, "%s", device_runtime_error(k->rt));
    return -1;
  }
  return n_damaged;
}

int device_index_share_scratch_fill(device_index_share *k, int byte) {
  return device_pool_fill(k->pool, byte);
}

/* ---- one execute ---------------------------------------------------------------- */

/* Every tensor that holds bytes needs a device address. */
static int is_check_pointers(const device_tensor *const *inputs, int n_inputs,
                             device_tensor *const *outputs, int n_outputs, op_error *err) {
  int i;
  for (i = 0; i < n_inputs + n_outputs; i++) {
    const device_tensor *t = i < n_inputs ? inputs[i] : outputs[i - n_inputs];
    if (!t || t->meta.dt == DTYPE_NONE || tensor_bytes(&t->meta) == 0 || t->dptr) continue;
    op_error_clear(err);
    snprintf(err->message, sizeof err->message, "IndexShare device: %s %d has no device pointer",
             i < n_inputs ? "input" : "output", i < n_inputs ? i : i - n_inputs);
    return DEVICE_IS_FAILED;
  }
  return DEVICE_IS_OK;
}

/* A scratch slot of bytes; the pool refuses to grow while capturing. */
static int is_slot(device_index_share *k, const char *name, size_t bytes, void **dptr) {
  return device_pool_slot(k->pool, name, bytes, dptr);
}

/* Fills b: the tensors' addresses, then the scratch slots this execute needs. */
static int is_prepare(device_index_share *k, const index_share_dims *d,
                      const device_tensor *const *in, device_tensor *const *out, is_buffers *b,
                      op_error *err) {
  size_t scores_bytes, status_bytes, frontier_bytes, present_bytes;
  void *p;

  memset(b, 0, sizeof *b);
  b->query = in[IS_IN_QUERY]->dptr;
  b->key = in[IS_IN_KEY]->dptr;
  b->value = in[IS_IN_VALUE]->dptr;
  b->past_key = d->has_past ? in[IS_IN_PAST_KEY]->dptr : NULL;
  b->past_value = d->has_past ? in[IS_IN_PAST_VALUE]->dptr : NULL;
  b->indices = in[IS_IN_INDICES]->dptr;
  b->bias = d->has_bias ? in[IS_IN_BIAS]->dptr : NULL;
  b->y = out[IS_OUT_Y]->dptr;
  if (is_bytes(d->batch * d->q_heads, d->q_seq, d->selected_width, sizeof(float), &scores_bytes) ||
      is_bytes(d->batch * d->index_heads, d->q_seq, IS_STATUS_WORDS, sizeof(long long),
               &status_bytes) ||
      is_bytes(d->batch, 2, 1, sizeof(long long), &frontier_bytes) ||
      is_bytes(d->batch * d->kv_heads, d->cache_seq, d->head_size, dtype_size(d->dt),
               &present_bytes)) {
    op_error_clear(err);
    snprintf(err->message, sizeof err->message, "IndexShare device: scratch size overflows size_t");
    return DEVICE_IS_FAILED;
  }
  if (is_slot(k, "scores", scores_bytes, &p)) return is_failed(k, err, "scratch");
  b->scores = p;
  if (k->trace) {
    if (is_slot(k, "score_trace", scores_bytes, &p)) return is_failed(k, err, "scratch");
    b->score_trace = p;
  }
  if (is_slot(k, "row_status", status_bytes, &p)) return is_failed(k, err, "scratch");
  b->status = p;
  if (d->capacity_mode) {
    if (is_slot(k, "frontier", frontier_bytes, &p)) return is_failed(k, err, "scratch");
    b->valid_len = p;
    b->write_pos = b->valid_len + d->batch;
  }
  if (d->n_outputs == 3) {
    b->present_key = out[IS_OUT_PRESENT_KEY]->dptr;
    b->present_value = out[IS_OUT_PRESENT_VALUE]->dptr;
  } else {
    if (is_slot(k, "present_key", present_bytes, &p)) return is_failed(k, err, "scratch");
    b->present_key = p;
    if (is_slot(k, "present_value", present_bytes, &p)) return is_failed(k, err, "scratch");
    b->present_value = p;
  }
  return DEVICE_IS_OK;
}

static int is_launch(device_index_share *k, int id, unsigned long long grid, unsigned threads,
                     void **args) {
  return device_runtime_launch(k->rt, k->kernels[id], is_kernel_names[id], grid, threads, args);
}

/* valid_len[b], write_pos[b] from the bias frontier (capacity mode). */
static int is_launch_frontier(device_index_share *k, const index_share_dims *d,
                              const is_buffers *b) {
  int storage = is_storage(d->dt);
  long long bd0 = d->bias_dims[0], bd1 = d->bias_dims[1], bd2 = d->bias_dims[2];
  long long bd3 = d->bias_dims[3], batch = d->batch, q_heads = d->q_heads, q_seq = d->q_seq;
  long long cache_seq = d->cache_seq, current_seq = d->current_seq;
  const void *bias = b->bias;
  long long *valid_len = b->valid_len, *write_pos = b->write_pos;
  void *args[] = {&bias,  &storage, &bd0,    &bd1,      &bd2,       &bd3,        &batch,
                  &q_heads, &q_seq, &cache_seq, &current_seq, &valid_len, &write_pos};
  if (batch == 0) return 0;
  if (k->variant == DEVICE_VARIANT_REFERENCE) /* one thread per batch */
    return is_launch(k, IS_K_FRONTIER, is_grid(batch, REF_IS_FRONTIER_THREADS), REF_IS_FRONTIER_THREADS, args);
  return is_launch(k, IS_K_FRONTIER, (unsigned long long)batch, IS_FRONTIER_THREADS, args);
}

/* One record per index row; latch is the capture-error word or NULL. */
static int is_launch_validate(device_index_share *k, const index_share_dims *d,
                              const is_buffers *b, unsigned *latch) {
  const void *indices = b->indices;
  int index_is_i64 = d->index_dt == DTYPE_I64;
  long long batch = d->batch, index_heads = d->index_heads, q_seq = d->q_seq;
  long long width = d->selected_width, bound = d->total_seq;
  const long long *bound_per_batch = d->capacity_mode ? b->valid_len : NULL;
  long long *status = b->status;
  void *args[] = {&indices, &index_is_i64, &batch,           &index_heads, &q_seq,
                  &width,   &bound,        &bound_per_batch, &status,      &latch};
  long long rows = batch * index_heads * q_seq;
  if (rows == 0) return 0;
  return is_launch(k, IS_K_VALIDATE,
                   rows <= IS_VALIDATE_BLOCK_ROWS ? (unsigned long long)rows : is_grid(rows, IS_VALIDATE_THREADS),
                   IS_VALIDATE_THREADS,
                   args);
}

/*
** The present builds' grid: a thread an item (index_share.cu), counting
** 16-byte units, which the kernel copies whenever the tensors allow.  When
** it copies single elements instead, each thread walks on to a unit's
** worth of them; the grid never decides what gets copied, only how fast.
*/
static unsigned long long is_copy_grid(long long n, int storage) {
  const long long per_unit = storage == IS_STORAGE_F32 ? 4 : 8;
  const unsigned long long g = is_grid((n + per_unit - 1) / per_unit, IS_COPY_THREADS);
  return g > IS_COPY_MAX_BLOCKS ? IS_COPY_MAX_BLOCKS : g;
}

/* One present (K or V): growing or fixed-capacity. */

static int is_launch_present(device_index_share *k, const index_share_dims *d,
                             const is_buffers *b, const void *past, const void *cur, void *out) {
  int storage = is_storage(d->dt);
  long long batch = d->batch, heads = d->kv_heads, past_seq = d->past_seq;
  long long cur_seq = d->current_seq, dim = d->head_size, cache_seq = d->cache_seq;
  const long long *write_pos = b->write_pos;
  long long n = batch * heads * cache_seq * dim;
  if (n == 0) return 0;
  if (d->capacity_mode) {
    void *args[] = {&past, &cur, &out, &storage, &write_pos, &batch, &heads, &cache_seq,
                    &cur_seq, &dim};
    return is_launch(k, IS_K_PRESENT_CAPACITY, is_copy_grid(n, storage), IS_COPY_THREADS, args);
  } else {
    void *args[] = {&past, &cur, &out, &storage, &batch, &heads, &past_seq, &cur_seq, &dim};
    return is_launch(k, IS_K_PRESENT, is_copy_grid(n, storage), IS_COPY_THREADS, args);
  }
}

/* Blocks of the fast rows kernel for tiles of ht heads. */
static long long is_row_tiles(const index_share_dims *d, int ht) {
  return is_row_tile_count(d->batch, d->q_heads, d->kv_heads, d->group, d->q_seq, ht);
}

/*
** Heads a fast rows block takes (tile_heads): IS_ROW_HEADS when one-head
** tiles would exceed IS_ROW_WAVE_TILES (index_share_abi.h says why) and
** the heads share an index row and, at least IS_ROW_HEADS / 2 of them, a kv
** head (fewer would leave most of a tile's chains idle); else 1, as for f32.
*/
static int is_row_tile_heads(const index_share_dims *d) {
  if (d->dt == DTYPE_F32 || d->index_heads != 1 || 2 * d->group < IS_ROW_HEADS) return 1;
  return is_row_tiles(d, 1) > IS_ROW_WAVE_TILES ? IS_ROW_HEADS : 1;
}

/*
** The attention rows into output 0.  direct: the fast kernel gathers K and
** V from past and current (a growing present's two parts); else from the
** present buffers, built or fed before it (is_row_params says how).
*/
static int is_launch_rows(device_index_share *k, const index_share_dims *d, const is_buffers *b, int direct) {
  const void *query = b->query, *present_key = b->present_key;
  const void *present_value = b->present_value, *indices = b->indices, *bias = b->bias;
  int index_is_i64 = d->index_dt == DTYPE_I64, has_bias = d->has_bias;
  int storage = is_storage(d->dt);
  long long bd0 = d->bias_dims[0], bd1 = d->bias_dims[1], bd2 = d->bias_dims[2];
  long long bd3 = d->bias_dims[3];
  float *scores = b->scores, *score_trace = b->score_trace;
  void *y = b->y;
  long long batch = d->batch, q_heads = d->q_heads, kv_heads = d->kv_heads, group = d->group;
  long long q_seq = d->q_seq, cache_seq = d->cache_seq, head_size = d->head_size;
  long long index_heads = d->index_heads, width = d->selected_width;
  float sqrt_scale = d->sqrt_scale;
  /* the reference kernel takes the values one by one, the fast one as a block */
  void *args[] = {&query,   &present_key, &present_value, &indices,     &index_is_i64, &bias,
                  &has_bias, &bd0,        &bd1,           &bd2,         &bd3,          &scores,
                  &score_trace, &y,       &storage,       &batch,       &q_heads,      &kv_heads,
                  &group,   &q_seq,       &cache_seq,     &head_size,   &index_heads,  &width,
                  &sqrt_scale};
  struct is_row_params p = {query,     present_key, present_key, present_value, present_value, indices,
                            bias,      scores,      score_trace, y,             bd0,           bd1,
                            bd2,       bd3,         batch,       q_heads,       kv_heads,      group,
                            q_seq,     cache_seq,   head_size,   index_heads,   width,         cache_seq,
                            sqrt_scale, index_is_i64, has_bias,  storage,       is_row_tile_heads(d), 0};
  void *fast_args[] = {&p};
  long long rows = batch * q_heads * q_seq, tiles = is_row_tiles(d, p.tile_heads);
  if (rows == 0) return 0;
  if (direct) {
    p.key_lo = b->past_key, p.key_hi = b->key;
    p.value_lo = b->past_value, p.value_hi = b->value;
    p.lo_seq = d->past_seq;
  }
  if (k->variant == DEVICE_VARIANT_REFERENCE)
    return is_launch(k, IS_K_ROWS, rows > (long long)IS_MAX_GRID ? IS_MAX_GRID : (unsigned long long)rows,
                     REF_IS_ROW_THREADS, args);
  return is_launch(k, p.tile_heads > 1 ? IS_K_ROWS : IS_K_ROWS_ONE,
                   tiles > (long long)IS_MAX_GRID ? IS_MAX_GRID : (unsigned long long)tiles, IS_ROW_THREADS, fast_args);
}

/* The oracle's words for a rule, from one validation record. */
static void is_describe_rule(const long long *rec, char *out, size_t len) {
  long long v = rec[IS_STATUS_VALUE], aux = rec[IS_STATUS_AUX];
  switch ((int)rec[IS_STATUS_RULE]) {
  case IS_RULE_SENTINEL: snprintf(out, len, "invalid sentinel %lld", v); break;
  case IS_RULE_AFTER_PADDING: snprintf(out, len, "index %lld follows -1 padding", v); break;
  case IS_RULE_OUT_OF_RANGE: snprintf(out, len, "index %lld out of range for length %lld", v, aux); break;
  case IS_RULE_DUPLICATE: snprintf(out, len, "duplicate index %lld", v); break;
  case IS_RULE_NOT_INCREASING: snprintf(out, len, "not strictly increasing: %lld then %lld", aux, v); break;
  case IS_RULE_ALL_PADDING: snprintf(out, len, "the row is all -1"); break;
  default: snprintf(out, len, "unknown rule %lld", rec[IS_STATUS_RULE]); break;
  }
}

/*
** Eager only: copies the records back and reports the first failing row in
** (batch, index head, query) order, as the oracle does.
*/
static int is_report_first_bad_row(device_index_share *k, const index_share_dims *d,
                                   const is_buffers *b, op_error *err) {
  long long rows = d->batch * d->index_heads * d->q_seq, row;
  size_t bytes = (size_t)rows * IS_STATUS_WORDS * sizeof(long long);
  long long *rec;
  char reason[200];
  if (rows == 0) return DEVICE_IS_OK;
  rec = malloc(bytes);
  if (!rec) {
    op_error_clear(err);
    snprintf(err->message, sizeof err->message, "IndexShare device: out of memory for %zu bytes", bytes);
    return DEVICE_IS_FAILED;
  }
  if (device_runtime_copy_to_host(k->rt, rec, b->status, bytes)) {
    free(rec);
    return is_failed(k, err, "reading the index-row records");
  }
  for (row = 0; row < rows; row++) {
    const long long *r = rec + row * IS_STATUS_WORDS;
    if (r[IS_STATUS_RULE] == IS_RULE_NONE) continue;
    op_error_clear(err);
    err->cls = OP_ERR_INDEX;
    err->rule = (int)r[IS_STATUS_RULE];
    err->batch = row / (d->index_heads * d->q_seq);
    err->head = row / d->q_seq % d->index_heads;
    err->query = row % d->q_seq;
    err->column = r[IS_STATUS_COLUMN];
    is_describe_rule(r, reason, sizeof reason);
    snprintf(err->message, sizeof err->message,
             "selected_indices [batch=%lld, head=%lld, query=%lld, column=%lld]: %s (device)",
             err->batch, err->head, err->query, err->column, reason);
    free(rec);
    return DEVICE_IS_OP_ERROR;
  }
  free(rec);
  return DEVICE_IS_OK;
}

/* Writes the host's present K and V (the oracle's payloads) into the present buffers. */
static int is_feed_present(device_index_share *k, const index_share_dims *d, const is_buffers *b,
                           const tensor *const *feed, op_error *err) {
  void *dst[2] = {b->present_key, b->present_value};
  size_t bytes;
  int i;
  if (is_bytes(d->batch * d->kv_heads, d->cache_seq, d->head_size, dtype_size(d->dt), &bytes))
    bytes = 0; /* is_prepare already refused an overflow */
  for (i = 0; i < 2; i++) {
    if (!feed || !feed[i] || feed[i]->dt != d->dt || tensor_bytes(feed[i]) != bytes ||
        (bytes && !feed[i]->data)) {
      op_error_clear(err);
      snprintf(err->message, sizeof err->message,
               "IndexShare device: the fed present %s is not %s of %zu bytes", i ? "value" : "key",
               dtype_name(d->dt), bytes);
      return DEVICE_IS_FAILED;
    }
    if (device_runtime_copy_to_device(k->rt, dst[i], feed[i]->data, bytes))
      return is_failed(k, err, "writing the fed present");
  }
  return DEVICE_IS_OK;
}

#define IS_STAGES_PRESENT \
  (IS_STAGE_BIT(DEVICE_IS_STAGE_PRESENT_KEY) | IS_STAGE_BIT(DEVICE_IS_STAGE_PRESENT_VALUE))

/*
** The launches after the metadata passed the contract.  part selects the
** whole operator or one stage (index_share_device.h, "Stage runs"); feed is
** the host present a rows-only run starts from.
*/
static int is_run(device_index_share *k, const index_share_dims *d,
                  const device_tensor *const *inputs, device_tensor *const *outputs, is_part part,
                  const tensor *const *feed, op_error *err) {
  int capturing = device_runtime_is_capturing(k->rt);
  unsigned *latch = capturing ? device_runtime_latch_ptr(k->rt) : NULL;
  /* the fast rows read a growing present's parts; it is then built only where it is seen */
  const int direct = part == IS_PART_ALL && k->variant != DEVICE_VARIANT_REFERENCE && !d->capacity_mode;
  const int built = part == IS_PART_PRESENT || (part == IS_PART_ALL && (!direct || d->n_outputs == 3 || k->trace));
  is_buffers b;
  int rc;
  if (capturing && (!k->warmed || part != IS_PART_ALL)) {
    op_error_clear(err);
    if (part != IS_PART_ALL)
      snprintf(err->message, sizeof err->message, "IndexShare device: a stage run cannot be captured");
    else
      device_index_share_capture_ready(k, err->message, sizeof err->message);
    return DEVICE_IS_FAILED;
  }
  k->last_stages = 0;
  rc = is_prepare(k, d, inputs, outputs, &b, err);
  if (rc) return rc;
  if (part != IS_PART_ROWS && d->capacity_mode && is_launch_frontier(k, d, &b))
    return is_failed(k, err, "");
  if (part == IS_PART_ALL) {
    if (is_launch_validate(k, d, &b, latch)) return is_failed(k, err, "");
    if (!capturing && (rc = is_report_first_bad_row(k, d, &b, err)) != 0) return rc;
  }
  if (part == IS_PART_ROWS) {
    if ((rc = is_feed_present(k, d, &b, feed, err)) != 0) return rc;
  } else if (built && (is_launch_present(k, d, &b, b.past_key, b.key, b.present_key) ||
                       is_launch_present(k, d, &b, b.past_value, b.value, b.present_value))) {
    return is_failed(k, err, "");
  }
  if (part != IS_PART_PRESENT && is_launch_rows(k, d, &b, direct)) return is_failed(k, err, "");
  if (capturing) return DEVICE_IS_OK;
  if (device_runtime_sync(k->rt)) return is_failed(k, err, "IndexShare kernels");
  if (part == IS_PART_ALL) k->warmed = 1;
  k->last_dims = *d;
  k->last = b;
  k->last_stages = part == IS_PART_PRESENT ? IS_STAGES_PRESENT : (1u << DEVICE_IS_STAGE_COUNT) - 1u;
  if (!b.score_trace) k->last_stages &= ~IS_STAGE_BIT(DEVICE_IS_STAGE_SCORES);
  if (!built && part != IS_PART_ROWS) k->last_stages &= ~IS_STAGES_PRESENT;
  return DEVICE_IS_OK;
}

/* The contract on the tensors' metadata (the oracle's), then is_run (index_share_internal.h). */
int index_share_device_execute_part(device_index_share *k, const device_tensor *const *inputs,
                                    int n_inputs, device_tensor *const *outputs, int n_outputs,
                                    is_part part, const tensor *const *feed, op_error *err) {
  const tensor **in_meta, **out_meta;
  index_share_dims d;
  int i, rc;

  op_error_clear(err);
  in_meta = calloc(n_inputs > 0 ? (size_t)n_inputs : 1, sizeof *in_meta);
  out_meta = calloc(n_outputs > 0 ? (size_t)n_outputs : 1, sizeof *out_meta);
  if (!in_meta || !out_meta) {
    snprintf(err->message, sizeof err->message, "IndexShare device: out of memory");
    rc = DEVICE_IS_FAILED;
    goto done;
  }
  for (i = 0; i < n_inputs; i++) in_meta[i] = inputs[i] ? &inputs[i]->meta : NULL;
  for (i = 0; i < n_outputs; i++) out_meta[i] = outputs[i] ? &outputs[i]->meta : NULL;
  if (index_share_validate(&k->attrs, in_meta, n_inputs, out_meta, n_outputs, &d, err)) {
    rc = DEVICE_IS_OP_ERROR;
    goto done;
  }
  rc = is_check_pointers(inputs, n_inputs, outputs, n_outputs, err);
  if (!rc) rc = is_run(k, &d, inputs, outputs, part, feed, err);
done:
  free(in_meta);
  free(out_meta);
  return rc;
}

int device_index_share_execute(device_index_share *k, const device_tensor *const *inputs,
                               int n_inputs, device_tensor *const *outputs, int n_outputs,
                               op_error *err) {
  return index_share_device_execute_part(k, inputs, n_inputs, outputs, n_outputs, IS_PART_ALL, NULL,
                                         err);
}

/*
** csa_device_common.c: the CSA launchers' shared plumbing (see
** csa_device_common.h).  Uses runtime.h only, so it builds without the CUDA
** toolkit too (device_none.c's runtime then refuses to start).
*/
#include "device/csa_device_common.h"
#include "device/kernels/csa_attention_abi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int csa_device_base_init(csa_device_base *base, device_runtime *rt, const csa_attrs *attrs,
                         const char *label, const char *kernel_file,
                         const char *const *kernel_names, int n_kernels, void **kernels,
                         char *err, size_t err_len) {
  int i;
  memset(base, 0, sizeof *base);
  base->rt = rt;
  base->label = label;
  base->attrs = *attrs;
  if (attrs->cache_format) { /* the caller's string need not outlive the instance */
    size_t len = strlen(attrs->cache_format) + 1;
    base->format = malloc(len);
    if (!base->format) {
      snprintf(err, err_len, "%s device: out of memory", label);
      return 1;
    }
    memcpy(base->format, attrs->cache_format, len);
    base->attrs.cache_format = base->format;
  }
  if (device_pool_create(rt, &base->pool)) goto fail;
  for (i = 0; i < n_kernels; i++)
    if (device_runtime_kernel(rt, kernel_file, kernel_names[i], &kernels[i])) goto fail;
  return 0;
fail:
  snprintf(err, err_len, "%s", device_runtime_error(rt));
  csa_device_base_free(base);
  return 1;
}

void csa_device_base_free(csa_device_base *base) {
  device_pool_destroy(base->pool);
  free(base->format);
  base->pool = NULL;
  base->format = NULL;
}

int csa_device_capture_ready(const csa_device_base *base, char *reason, size_t reason_len) {
  if (base->warmed) return 1;
  if (reason && reason_len)
    snprintf(reason, reason_len,
             "%s: capture needs a successful eager pass with the same shapes first "
             "(it loads the kernels and sizes the pooled scratch, whose addresses the graph keeps)",
             base->label);
  return 0;
}

int csa_device_scratch_check(csa_device_base *base, char *report, size_t report_len) {
  int n_damaged = 0;
  if (device_pool_check(base->pool, &n_damaged, report, report_len)) {
    snprintf(report, report_len, "%s", device_runtime_error(base->rt));
    return -1;
  }
  return n_damaged;
}

int csa_device_scratch_fill(csa_device_base *base, int byte) {
  return device_pool_fill(base->pool, byte);
}

int csa_device_failed(const csa_device_base *base, op_error *err, const char *what) {
  op_error_clear(err);
  snprintf(err->message, sizeof err->message, "%s device: %s%s%s", base->label, what,
           *what ? ": " : "", device_runtime_error(base->rt));
  return DEVICE_CSA_FAILED;
}

/* Every tensor that holds bytes needs a device address. */
static int csa_device_check_pointers(const csa_device_base *base,
                                     const device_tensor *const *inputs, int n_inputs,
                                     device_tensor *const *outputs, int n_outputs,
                                     op_error *err) {
  int i;
  for (i = 0; i < n_inputs + n_outputs; i++) {
    const device_tensor *t = i < n_inputs ? inputs[i] : outputs[i - n_inputs];
    if (!t || t->meta.dt == DTYPE_NONE || tensor_bytes(&t->meta) == 0 || t->dptr) continue;
    op_error_clear(err);
    snprintf(err->message, sizeof err->message, "%s device: %s %d has no device pointer",
             base->label, i < n_inputs ? "input" : "output", i < n_inputs ? i : i - n_inputs);
    return DEVICE_CSA_FAILED;
  }
  return DEVICE_CSA_OK;
}

int csa_device_validate(const csa_device_base *base, const device_tensor *const *inputs,
                        int n_inputs, device_tensor *const *outputs, int n_outputs, csa_dims *d,
                        op_error *err) {
  const tensor **in_meta, **out_meta;
  int i, rc;

  op_error_clear(err);
  in_meta = calloc(n_inputs > 0 ? (size_t)n_inputs : 1, sizeof *in_meta);
  out_meta = calloc(n_outputs > 0 ? (size_t)n_outputs : 1, sizeof *out_meta);
  if (!in_meta || !out_meta) {
    snprintf(err->message, sizeof err->message, "%s device: out of memory", base->label);
    rc = DEVICE_CSA_FAILED;
    goto done;
  }
  for (i = 0; i < n_inputs; i++) in_meta[i] = inputs[i] ? &inputs[i]->meta : NULL;
  for (i = 0; i < n_outputs; i++) out_meta[i] = outputs[i] ? &outputs[i]->meta : NULL;
  if (csa_validate(&base->attrs, in_meta, n_inputs, out_meta, n_outputs, d, err)) {
    rc = DEVICE_CSA_OP_ERROR;
    goto done;
  }
  rc = csa_device_check_pointers(base, inputs, n_inputs, outputs, n_outputs, err);
done:
  free(in_meta);
  free(out_meta);
  return rc;
}

int csa_device_begin(const csa_device_base *base, unsigned **latch, op_error *err) {
  int capturing = device_runtime_is_capturing(base->rt);
  *latch = capturing ? device_runtime_latch_ptr(base->rt) : NULL;
  if (capturing && !base->warmed) {
    op_error_clear(err);
    csa_device_capture_ready(base, err->message, sizeof err->message);
    return DEVICE_CSA_FAILED;
  }
  return DEVICE_CSA_OK;
}

int csa_device_check_cursor(const csa_device_base *base, csa_dims *d, const void *total_dptr,
                            op_error *err) {
  long long total = 0;
  tensor t;
  memset(&t, 0, sizeof t);
  if (device_runtime_copy_to_host(base->rt, &total, total_dptr, sizeof total))
    return csa_device_failed(base, err, "reading total_sequence_length");
  t.dt = DTYPE_I64;
  t.rank = 0;
  t.data = &total;
  return csa_validate_cursor(d, &t, err) ? DEVICE_CSA_OP_ERROR : DEVICE_CSA_OK;
}

int csa_device_scratch(const csa_device_base *base, const char *name, const long long *factors,
                       int n_factors, size_t elem_bytes, void **out, size_t *bytes, op_error *err) {
  size_t n = elem_bytes;
  int i;
  *out = NULL;
  if (bytes) *bytes = 0;
  for (i = 0; i < n_factors; i++) {
    if (factors[i] < 0 || (factors[i] && n > SIZE_MAX / (size_t)factors[i])) {
      op_error_clear(err);
      snprintf(err->message, sizeof err->message,
               "%s device: scratch slot '%s' size overflows size_t", base->label, name);
      return DEVICE_CSA_FAILED;
    }
    n *= (size_t)factors[i];
  }
  if (n && device_pool_slot(base->pool, name, n, out))
    return csa_device_failed(base, err, "scratch");
  if (bytes) *bytes = n;
  return DEVICE_CSA_OK;
}

unsigned long long csa_device_grid(long long n, unsigned threads) {
  unsigned long long g = ((unsigned long long)n + threads - 1) / threads;
  return g > CSA_DEVICE_MAX_GRID ? CSA_DEVICE_MAX_GRID : g;
}

unsigned long long csa_device_blocks(long long n) {
  return (unsigned long long)n > CSA_DEVICE_MAX_GRID ? CSA_DEVICE_MAX_GRID
                                                     : (unsigned long long)n;
}

unsigned long long csa_device_clusters(long long n, unsigned long long cluster) {
  unsigned long long clusters = csa_device_blocks(n);
  if (clusters > CSA_DEVICE_MAX_GRID / cluster) clusters = CSA_DEVICE_MAX_GRID / cluster;
  return clusters * cluster;
}

int csa_device_capture(const csa_device_base *base, int (*run)(void *ctx, op_error *err), void *ctx,
                       device_graph **graph, op_error *err) {
  int rc;
  *graph = NULL;
  if (device_runtime_is_capturing(base->rt) || !base->warmed) {
    op_error_clear(err);
    snprintf(err->message, sizeof err->message, "%s device: parts are captured only after a whole execute",
             base->label);
    return DEVICE_CSA_FAILED;
  }
  if (device_runtime_capture_begin(base->rt)) return csa_device_failed(base, err, "capture");
  rc = run(ctx, err);
  if (device_runtime_capture_end(base->rt, graph) && !rc) rc = csa_device_failed(base, err, "capture");
  if (rc && *graph) device_graph_destroy(*graph), *graph = NULL;
  return rc;
}

void csa_device_attention_plan(long long bs_rows, long long heads, long long stride,
                               csa_attn_launch plan[CSA_ATTN_PASSES]) {
  const csa_attn_tiling scores = csa_attn_wide_scores(bs_rows, heads, stride)     ? CSA_TILING_WIDE
                                 : csa_attn_narrow_scores(bs_rows, heads, stride) ? CSA_TILING_NARROW
                                                                                  : CSA_TILING_ONE;
  const csa_attn_tiling values = csa_attn_wide_values(bs_rows, heads) ? CSA_TILING_WIDE : CSA_TILING_ONE;
  const long long units[CSA_ATTN_PASSES] = {
      /* the narrow scores tiles decode their own rows: no gather launched */
      [CSA_ATTN_GATHER] = scores == CSA_TILING_NARROW ? 0 : csa_attn_gather_units(bs_rows, stride),
      [CSA_ATTN_SCORES] = scores == CSA_TILING_NARROW ? csa_attn_resident_units(bs_rows, heads, stride)
                          : csa_attn_score_units(bs_rows, heads, stride,
                                                 scores == CSA_TILING_WIDE ? CSA_WIDE_SCORE_HEADS : CSA_ONE_SCORE_HEADS),
      [CSA_ATTN_SOFTMAX] = csa_attn_softmax_units(bs_rows, heads),
      [CSA_ATTN_VALUES] = values == CSA_TILING_WIDE
                              ? csa_attn_value_units(bs_rows, heads, CSA_WIDE_VALUE_HEADS, CSA_WIDE_VALUE_DIMS)
                              : csa_attn_value_units(bs_rows, heads, CSA_NARROW_VALUE_HEADS, CSA_NARROW_VALUE_DIMS),
  };
  int i, launched = 0;
  for (i = 0; i < CSA_ATTN_PASSES; i++) {
    plan[i].tiling = i == CSA_ATTN_SCORES ? scores : i == CSA_ATTN_VALUES ? values : CSA_TILING_ONE;
    plan[i].blocks = csa_device_blocks(units[i]);
    plan[i].threads = plan[i].tiling == CSA_TILING_NARROW ? CSA_RESIDENT_THREADS : CSA_TILE_THREADS;
    plan[i].chained = launched > 0 && plan[i].blocks > 0; /* the first pass launched follows the step plainly */
    launched += plan[i].blocks > 0;
  }
  for (i = 0; i < CSA_ATTN_PASSES; i++) {
    /* what follows the values pass is launched plainly */
    plan[i].release_early = plan[i].blocks > 0 && i + 1 < CSA_ATTN_PASSES && plan[i + 1].blocks <= CSA_CHAIN_MAX_BLOCKS;
    plan[i].sm_alone = i > 0 && plan[i - 1].release_early;
  }
}

int csa_device_launch_attention(device_runtime *rt, void *const *kernels, const char *const *names,
                                const int kernel[CSA_ATTN_PASSES][CSA_TILINGS], long long bs_rows,
                                long long heads, long long stride, void **args, unsigned *early) {
  csa_attn_launch plan[CSA_ATTN_PASSES];
  int i;
  csa_device_attention_plan(bs_rows, heads, stride, plan);
  *early = 0;
  for (i = 0; i < CSA_ATTN_PASSES; i++) *early |= (unsigned)plan[i].release_early << i;
  for (i = 0; i < CSA_ATTN_PASSES; i++) {
    const int id = kernel[i][plan[i].tiling];
    const unsigned how =
        (plan[i].chained ? DEVICE_LAUNCH_CHAINED : 0u) | (plan[i].sm_alone ? DEVICE_LAUNCH_SM_ALONE : 0u);
    if (!plan[i].blocks) continue; /* a pass another does: the gather, where the scores pass decodes its rows */
    if (device_runtime_launch_as(rt, kernels[id], names[id], plan[i].blocks, plan[i].threads, args, how)) return 1;
  }
  return 0;
}

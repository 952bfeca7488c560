/*
** index_share_stages.c: the IndexShare launcher's stage API for golden
** boundaries and stage localisation (index_share_device.h, "Stage
** payloads" and "Stage runs"): the stage names, the score trace switch, the
** two stage runs, the payload rule on host data, and the copy of a stage
** payload from the last eager call.
**
** The launches themselves are index_share_device.c's: a stage run is its
** execute with a part (index_share_internal.h), and the addresses stage_copy
** reads are the ones that execute recorded in the instance.  Nothing here
** launches a kernel itself or does arithmetic on device data; the payload rule
** only writes +0 into unused columns.
*/
#include "device/index_share_device.h"
#include "device/index_share_internal.h"

#include <stdio.h>
#include <string.h>

static const char *const is_stage_names[DEVICE_IS_STAGE_COUNT] = {
    [DEVICE_IS_STAGE_PRESENT_KEY] = "PresentKey", [DEVICE_IS_STAGE_PRESENT_VALUE] = "PresentValue",
    [DEVICE_IS_STAGE_SCORES] = "Scores",          [DEVICE_IS_STAGE_PROBABILITIES] = "Probabilities",
    [DEVICE_IS_STAGE_Y] = "Y",
};

const char *device_index_share_stage_name(int stage) {
  return stage >= 0 && stage < DEVICE_IS_STAGE_COUNT ? is_stage_names[stage] : "?";
}

void device_index_share_set_trace(device_index_share *k, int on) { k->trace = on != 0; }

int device_index_share_run_present(device_index_share *k, const device_tensor *const *inputs,
                                   int n_inputs, device_tensor *const *outputs, int n_outputs,
                                   op_error *err) {
  return index_share_device_execute_part(k, inputs, n_inputs, outputs, n_outputs, IS_PART_PRESENT, NULL,
                                         err);
}

int device_index_share_run_rows(device_index_share *k, const device_tensor *const *inputs,
                                int n_inputs, device_tensor *const *outputs, int n_outputs,
                                const tensor *present_key, const tensor *present_value,
                                op_error *err) {
  const tensor *feed[2] = {present_key, present_value};
  return index_share_device_execute_part(k, inputs, n_inputs, outputs, n_outputs, IS_PART_ROWS, feed, err);
}

void device_index_share_payload_mask(tensor *rows, const tensor *indices, long long cache_seq) {
  const long long batch = rows->shape[0], heads = rows->shape[1], q_seq = rows->shape[2];
  const long long width = rows->shape[3], index_heads = indices->shape[1];
  float *p = rows->data;
  long long b, h, q, s;
  for (b = 0; b < batch; b++)
    for (h = 0; h < heads; h++)
      for (q = 0; q < q_seq; q++) {
        const long long irow = ((b * index_heads + (index_heads == 1 ? 0 : h)) * q_seq + q) * width;
        float *row = p + ((b * heads + h) * q_seq + q) * width;
        long long valid = 0;
        while (cache_seq > 0 && valid < width && tensor_load_index(indices, irow + valid) != -1)
          valid++;
        for (s = valid; s < width; s++) row[s] = 0.0f;
      }
}

/* The payload's shape and its device address in the last call. */
static const void *is_stage_source(const device_index_share *k, int stage, tensor *meta) {
  const index_share_dims *d = &k->last_dims;
  const int rows_payload = stage == DEVICE_IS_STAGE_SCORES || stage == DEVICE_IS_STAGE_PROBABILITIES;
  memset(meta, 0, sizeof *meta);
  meta->rank = 4;
  meta->dt = rows_payload ? DTYPE_F32 : d->dt;
  meta->shape[0] = d->batch;
  meta->shape[1] = stage <= DEVICE_IS_STAGE_PRESENT_VALUE ? d->kv_heads : d->q_heads;
  meta->shape[2] = stage <= DEVICE_IS_STAGE_PRESENT_VALUE ? d->cache_seq : d->q_seq;
  meta->shape[3] = rows_payload ? d->selected_width : d->head_size;
  switch (stage) {
  case DEVICE_IS_STAGE_PRESENT_KEY: return k->last.present_key;
  case DEVICE_IS_STAGE_PRESENT_VALUE: return k->last.present_value;
  case DEVICE_IS_STAGE_SCORES: return k->last.score_trace;
  case DEVICE_IS_STAGE_PROBABILITIES: return k->last.scores; /* the scratch row ends as probs */
  default: return k->last.y;
  }
}

int device_index_share_stage_copy(device_index_share *k, int stage, tensor *out, char *err,
                                  size_t err_len) {
  tensor indices;
  const void *src;
  int rc = -1;
  memset(out, 0, sizeof *out);
  memset(&indices, 0, sizeof indices);
  if (stage < 0 || stage >= DEVICE_IS_STAGE_COUNT || !(k->last_stages & IS_STAGE_BIT(stage))) {
    const int needs_trace = stage == DEVICE_IS_STAGE_SCORES || stage <= DEVICE_IS_STAGE_PRESENT_VALUE;
    snprintf(err, err_len, "stage %s was not computed by the last eager call%s", device_index_share_stage_name(stage),
             needs_trace && !k->trace ? " (it needs the trace on)" : "");
    return -1;
  }
  src = is_stage_source(k, stage, out);
  if (tensor_alloc(out) != 0) {
    snprintf(err, err_len, "out of memory for stage %s", device_index_share_stage_name(stage));
    goto done;
  }
  if (tensor_bytes(out) && device_runtime_copy_to_host(k->rt, out->data, src, tensor_bytes(out))) {
    snprintf(err, err_len, "stage %s: %s", device_index_share_stage_name(stage), device_runtime_error(k->rt));
    goto done;
  }
  rc = 0;
  if (stage != DEVICE_IS_STAGE_SCORES && stage != DEVICE_IS_STAGE_PROBABILITIES) goto done;
  indices.dt = k->last_dims.index_dt;
  indices.rank = 4;
  indices.shape[0] = k->last_dims.batch, indices.shape[1] = k->last_dims.index_heads;
  indices.shape[2] = k->last_dims.q_seq, indices.shape[3] = k->last_dims.selected_width;
  if (tensor_alloc(&indices) != 0 ||
      device_runtime_copy_to_host(k->rt, indices.data, k->last.indices, tensor_bytes(&indices))) {
    snprintf(err, err_len, "stage %s: reading the indices: %s", device_index_share_stage_name(stage),
             device_runtime_error(k->rt));
    rc = -1;
    goto done;
  }
  device_index_share_payload_mask(out, &indices, k->last_dims.cache_seq);
done:
  if (rc) tensor_free(out);
  tensor_free(&indices);
  return rc;
}

/*
** run_index_share_stages.c: IndexShare's stage payloads and stage
** localisation, for the lanes in run_index_share.c (the two share
** run_index_share_stages.h).
**
** Stage payloads (DESIGN.md "Golden boundaries"; index_share_device.h names
** and shapes them): PresentKey, PresentValue, Scores, Probabilities, Y.
** Here: the oracle's run of a step (is_step_oracle), traced when the step
** wants its payloads, and the capture of the five; handing a step's payloads
** to the payload sink; the eager lane's copy of the device's payloads and
** their comparison in pipeline order (is_stages_compare); and the
** stage-by-stage replay of a mismatching step (is_localise) that names the
** first stage whose own output differs.
*/
#include "harness/run_index_share_stages.h"
#include "harness/device_io.h"
#include "harness/diff.h"
#include "oracle/index_share.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- the oracle's payloads ------------------------------------------------------- */

void is_stages_free(is_step *s) {
  int p;
  for (p = 0; p < DEVICE_IS_STAGE_COUNT; p++) tensor_free(&s->stage[p]);
  memset(s->stage, 0, sizeof s->stage);
}

/* A zeroed payload (zero is the rule for columns a row does not use); 0 or -1. */
static int payload_alloc(tensor *t, dtype dt, long long d0, long long d1, long long d2, long long d3) {
  memset(t, 0, sizeof *t);
  t->dt = dt, t->rank = 4;
  t->shape[0] = d0, t->shape[1] = d1, t->shape[2] = d2, t->shape[3] = d3;
  if (tensor_alloc(t) == 0) return 0;
  memset(t, 0, sizeof *t);
  return -1;
}

static int payload_copy(tensor *dst, const tensor *src) {
  if (payload_alloc(dst, src->dt, src->shape[0], src->shape[1], src->shape[2], src->shape[3]) != 0) return -1;
  memcpy(dst->data, src->data, tensor_bytes(src));
  return 0;
}

static void step_views(is_step *s, const tensor **in, tensor **out) {
  int i;
  for (i = 0; i < s->n_in; i++) in[i] = s->in[i].dt == DTYPE_NONE ? NULL : &s->in[i];
  for (i = 0; i < s->n_out; i++) out[i] = &s->out[i];
}

/*
** The present payloads of a one-output step: the oracle builds no present
** there (it reads past and current directly), so it runs once more with the
** growing present outputs the operator would have, which its contract
** accepts for the same inputs; only the presents are kept.
*/
static int oracle_present(is_step *s, const index_share_dims *d) {
  const tensor *in[IS_CASE_MAX_INPUTS];
  tensor y = s->out[IS_OUT_Y], *out[IS_OUTPUT_COUNT];
  op_error err;
  int rc = -1;
  step_views(s, in, out);
  y.data = NULL;
  if (tensor_alloc(&y) == 0 &&
      payload_alloc(&s->stage[DEVICE_IS_STAGE_PRESENT_KEY], d->dt, d->batch, d->kv_heads, d->cache_seq,
                    d->head_size) == 0 &&
      payload_alloc(&s->stage[DEVICE_IS_STAGE_PRESENT_VALUE], d->dt, d->batch, d->kv_heads, d->cache_seq,
                    d->head_size) == 0) {
    out[IS_OUT_Y] = &y;
    out[IS_OUT_PRESENT_KEY] = &s->stage[DEVICE_IS_STAGE_PRESENT_KEY];
    out[IS_OUT_PRESENT_VALUE] = &s->stage[DEVICE_IS_STAGE_PRESENT_VALUE];
    rc = oracle_index_share_run(&s->attrs, in, s->n_in, out, IS_OUTPUT_COUNT, NULL, &err);
  }
  tensor_free(&y);
  return rc;
}

/* The payloads besides the trace's, after an accepted traced run; 0 or -1. */
static int stages_finish(is_step *s, const index_share_dims *d) {
  const tensor *indices = &s->in[IS_IN_INDICES];
  /* the rule the device side applies too (a no-op on the zeroed trace) */
  device_index_share_payload_mask(&s->stage[DEVICE_IS_STAGE_SCORES], indices, d->cache_seq);
  device_index_share_payload_mask(&s->stage[DEVICE_IS_STAGE_PROBABILITIES], indices, d->cache_seq);
  if (payload_copy(&s->stage[DEVICE_IS_STAGE_Y], &s->out[IS_OUT_Y]) != 0) return -1;
  if (s->n_out == 1) return oracle_present(s, d);
  return payload_copy(&s->stage[DEVICE_IS_STAGE_PRESENT_KEY], &s->out[IS_OUT_PRESENT_KEY]) != 0 ||
                 payload_copy(&s->stage[DEVICE_IS_STAGE_PRESENT_VALUE], &s->out[IS_OUT_PRESENT_VALUE]) != 0
             ? -1
             : 0;
}

/*
** Runs the oracle on the step; with want_stages, traced, keeping the five
** payloads when it accepts (none when it rejects or memory runs out).
*/
int is_step_oracle(is_step *s) {
  const tensor *in[IS_CASE_MAX_INPUTS];
  tensor *out[IS_OUTPUT_COUNT];
  index_share_trace trace = {NULL, NULL};
  index_share_dims d;
  op_error ignored;
  struct timespec t0;
  int traced;
  step_views(s, in, out);
  is_stages_free(s);
  traced = s->want_stages &&
           index_share_validate(&s->attrs, in, s->n_in, (const tensor *const *)out, s->n_out, &d, &ignored) == 0 &&
           payload_alloc(&s->stage[DEVICE_IS_STAGE_SCORES], DTYPE_F32, d.batch, d.q_heads, d.q_seq,
                         d.selected_width) == 0 &&
           payload_alloc(&s->stage[DEVICE_IS_STAGE_PROBABILITIES], DTYPE_F32, d.batch, d.q_heads, d.q_seq,
                         d.selected_width) == 0;
  if (traced) {
    trace.scores = s->stage[DEVICE_IS_STAGE_SCORES].data;
    trace.probs = s->stage[DEVICE_IS_STAGE_PROBABILITIES].data;
  }
  op_error_clear(&s->err);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  s->rc = oracle_index_share_run(&s->attrs, in, s->n_in, out, s->n_out, traced ? &trace : NULL, &s->err);
  s->ms = is_ms_since(&t0);
  if (!traced || s->rc != 0 || stages_finish(s, &d) != 0) is_stages_free(s);
  return s->rc;
}

/* Makes sure an accepted step has the oracle's payloads (reruns it traced); 0 or -1. */
static int stages_ensure(is_step *s) {
  int was = s->want_stages;
  if (s->rc == 0 && s->stage[DEVICE_IS_STAGE_Y].dt == DTYPE_NONE) {
    s->want_stages = 1;
    is_step_oracle(s);
    s->want_stages = was;
  }
  return s->stage[DEVICE_IS_STAGE_Y].dt == DTYPE_NONE ? -1 : 0;
}

/* Hands a step's payloads (from source "oracle" or "device") to the payload sink. */
void is_stages_hand(const is_ctx *x, int step, const tensor *stage, const char *source) {
  int p;
  for (p = 0; x->env->payload && p < DEVICE_IS_STAGE_COUNT; p++)
    if (stage[p].dt != DTYPE_NONE)
      x->env->payload(x->env->payload_ctx, x->id, step, device_index_share_stage_name(p), source, &stage[p]);
}

/* ---- the eager lane's payloads -------------------------------------------------- */

/*
** The eager pass's stage payloads: copied from the device, handed to the
** payload sink as "device" and compared with the oracle's in pipeline order;
** the first that differs marks the row a mismatch of that payload.
*/
void is_stages_compare(is_ctx *x, device_index_share *k, result_row *row, const is_step *s) {
  tensor dev[DEVICE_IS_STAGE_COUNT];
  char why[300];
  int p;
  memset(dev, 0, sizeof dev);
  if (s->stage[DEVICE_IS_STAGE_Y].dt == DTYPE_NONE) return; /* no oracle payloads: the outputs still count */
  for (p = 0; p < DEVICE_IS_STAGE_COUNT; p++)
    if (device_index_share_stage_copy(k, p, &dev[p], why, sizeof why) != 0) {
      snprintf(row->status, sizeof row->status, "fail");
      snprintf(row->message, sizeof row->message, "stage payload %s: %s", device_index_share_stage_name(p), why);
      goto done;
    }
  is_stages_hand(x, 0, dev, "device");
  for (p = 0; p < DEVICE_IS_STAGE_COUNT; p++) {
    tensor_diff d;
    if (tensor_diff_run(&s->stage[p], &dev[p], &d) != 0) {
      result_row_set_mismatch(row, device_index_share_stage_name(p), &d);
      break;
    }
  }
done:
  for (p = 0; p < DEVICE_IS_STAGE_COUNT; p++) tensor_free(&dev[p]);
}

/* ---- stage localisation ---------------------------------------------------------- */

/*
** Copies stages [from, to] of k's last stage run and compares each with the
** oracle's: the first that differs (detail describes it), -1 when all agree,
** or -2 when one could not be copied (why in detail).
*/
static int first_differing(device_index_share *k, const is_step *s, int from, int to, char *detail, size_t len) {
  int p, differs;
  for (p = from; p <= to; p++) {
    tensor got;
    tensor_diff d;
    char why[300];
    if (device_index_share_stage_copy(k, p, &got, why, sizeof why) != 0)
      return snprintf(detail, len, "could not copy the device's %s: %s", device_index_share_stage_name(p), why), -2;
    differs = tensor_diff_run(&s->stage[p], &got, &d) != 0;
    if (differs) tensor_diff_describe(&d, device_index_share_stage_name(p), detail, len);
    tensor_free(&got);
    if (differs) return p;
  }
  return -1;
}

/*
** Stage localisation (issue 6 item 4) of a device mismatch on step s: on a
** fresh instance and fresh buffers, the present stage runs on the step's
** inputs and its PresentKey, PresentValue are compared with the oracle's;
** then the oracle's present is written into the device's present buffers and
** only the rows kernel runs, its Scores, Probabilities, Y compared.  The
** first payload that differs names the stage: each stage saw only the
** oracle's inputs, so the divergence is its own, not inherited.  The rows
** kernel is one fused kernel, so within it the granularity is the first
** differing payload.  Eager-only launches, so it also serves the replay lanes.
*/
/* is_localise's two stage runs on k and io: returns as first_differing does. */
static int localise_stages(device_index_share *k, device_io *io, const is_step *s, char *detail, size_t len) {
  op_error derr;
  int at;
  op_error_clear(&derr);
  device_index_share_set_trace(k, 1);
  if (device_index_share_scratch_fill(k, DEVICE_JUNK_BYTE) != 0 ||
      device_index_share_run_present(k, io->in_p, io->n_in, io->out_p, io->n_out, &derr) != DEVICE_IS_OK)
    return snprintf(detail, len, "present stage run: %.250s", derr.message), -2;
  at = first_differing(k, s, DEVICE_IS_STAGE_PRESENT_KEY, DEVICE_IS_STAGE_PRESENT_VALUE, detail, len);
  if (at != -1) return at;
  if (device_index_share_scratch_fill(k, DEVICE_JUNK_BYTE) != 0 || device_io_junk_outputs(io) != 0 ||
      device_index_share_run_rows(k, io->in_p, io->n_in, io->out_p, io->n_out, &s->stage[DEVICE_IS_STAGE_PRESENT_KEY],
                                  &s->stage[DEVICE_IS_STAGE_PRESENT_VALUE], &derr) != DEVICE_IS_OK)
    return snprintf(detail, len, "rows stage run: %.250s", derr.message), -2;
  return first_differing(k, s, DEVICE_IS_STAGE_SCORES, DEVICE_IS_STAGE_Y, detail, len);
}

void is_localise(is_ctx *x, result_row *row, is_step *s) {
  device_index_share *k = NULL;
  device_io io;
  char detail[400] = "", msg[420];
  int at = -2;
  memset(&io, 0, sizeof io);
  if (stages_ensure(s) != 0)
    snprintf(detail, sizeof detail, "the oracle's payloads are unavailable (out of memory)");
  else if (device_io_open(&io, x->env->rt, s->in, s->n_in, s->out, s->n_out, detail, sizeof detail) == 0 &&
           device_index_share_create_variant(x->env->rt, &s->attrs, x->env->variant, &k, detail, sizeof detail) == 0)
    at = localise_stages(k, &io, s, detail, sizeof detail);
  if (at >= 0) {
    result_row_set_localised(row, device_index_share_stage_name(at), detail);
  } else {
    if (at == -1) snprintf(msg, sizeof msg, "every stage agrees with the oracle when run alone on its payloads");
    else snprintf(msg, sizeof msg, "could not run: %.300s", detail);
    result_row_set_localised(row, NULL, msg);
  }
  device_index_share_destroy(k);
  if (io.rt) device_io_close(&io);
}

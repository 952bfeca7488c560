/*
** run_index_share.c: the IndexShare lanes for one case.
**
** The oracle's result on the same inputs is the reference for every device
** row.  Outputs are compared only when both sides accept the inputs; when
** either rejects, the two errors must agree in class, rule and location
** (DESIGN.md "Error parity").  Every failing row's message ends with its
** one-line repro command.
**
** Stage payloads (DESIGN.md "Golden boundaries"; index_share_device.h names
** and shapes them): PresentKey, PresentValue, Scores, Probabilities, Y.  The
** oracle's go to the payload sink for step 0 always and for every later step
** when the oracle lane runs; the eager lane copies the device's, hands them
** over as "device" and compares them in pipeline order, so its row names the
** first payload that differs.  When a device lane finds a mismatch, localise
** replays the step stage by stage (see there) and names the first stage whose
** own output differs.
*/
#include "harness/run_index_share.h"
#include "cases/index_share_cases.h"
#include "harness/diff.h"
#include "harness/device_io.h"
#include "oracle/index_share.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define REPLAYS 3
#define POISON_STEP 10 /* poisoned replay of rule r is step 10 + r */
#define CLEAN_STEP 20  /* the clean replay after it is step 20 + r */

static const char *const output_names[IS_OUTPUT_COUNT] = {"Y", "present_key", "present_value"};

/* One materialized step and the oracle's verdict on it. */
typedef struct is_step {
  tensor in[IS_CASE_MAX_INPUTS], out[IS_OUTPUT_COUNT];
  tensor stage[DEVICE_IS_STAGE_COUNT]; /* the oracle's payloads, when accepted and wanted */
  int n_in, n_out, rc, want_stages;
  index_share_attrs attrs;
  op_error err;
  double ms;
} is_step;

typedef struct is_ctx {
  runner_env *env;
  const char *id;
  is_case c;
  case_report *report;
} is_ctx;

static double ms_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-6;
}

static void stages_free(is_step *s) {
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
static int step_oracle(is_step *s) {
  const tensor *in[IS_CASE_MAX_INPUTS];
  tensor *out[IS_OUTPUT_COUNT];
  index_share_trace trace = {NULL, NULL};
  index_share_dims d;
  op_error ignored;
  struct timespec t0;
  int traced;
  step_views(s, in, out);
  stages_free(s);
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
  s->ms = ms_since(&t0);
  if (!traced || s->rc != 0 || stages_finish(s, &d) != 0) stages_free(s);
  return s->rc;
}

/* Makes sure an accepted step has the oracle's payloads (reruns it traced); 0 or -1. */
static int stages_ensure(is_step *s) {
  int was = s->want_stages;
  if (s->rc == 0 && s->stage[DEVICE_IS_STAGE_Y].dt == DTYPE_NONE) {
    s->want_stages = 1;
    step_oracle(s);
    s->want_stages = was;
  }
  return s->stage[DEVICE_IS_STAGE_Y].dt == DTYPE_NONE ? -1 : 0;
}

static int step_load(const is_case *c, int step, is_step *s, int want_stages, char *err, size_t len) {
  memset(s, 0, sizeof *s);
  s->want_stages = want_stages;
  if (cases_is_materialize(c, step, s->in, &s->n_in, s->out, &s->n_out, &s->attrs, err, len) != 0) return -1;
  step_oracle(s);
  return 0;
}

static void step_free(is_step *s) {
  stages_free(s);
  cases_is_release(s->in, s->out);
}

/* Hands a step's payloads (from source "oracle" or "device") to the payload sink. */
static void hand_stages(const is_ctx *x, int step, const tensor *stage, const char *source) {
  int p;
  for (p = 0; x->env->payload && p < DEVICE_IS_STAGE_COUNT; p++)
    if (stage[p].dt != DTYPE_NONE)
      x->env->payload(x->env->payload_ctx, x->id, step, device_index_share_stage_name(p), source, &stage[p]);
}

static result_row *add_row(is_ctx *x, lane l, int step, const char *status) {
  result_row *row = case_report_add(x->report, l, step, status);
  static result_row overflow;
  if (!row) { /* more rows than a report holds: keep going, count the failure */
    memset(&overflow, 0, sizeof overflow);
    row = &overflow;
  }
  if (strcmp(status, "pass") && strcmp(status, "skipped")) x->report->failed++;
  return row;
}

/* Appends "; repro: bitgate repro ID --lanes LANE" to a failing row. */
static void finish_row(is_ctx *x, result_row *row) {
  size_t used = strlen(row->message);
  if (!strcmp(row->status, "pass") || !strcmp(row->status, "skipped")) return;
  snprintf(row->message + used, sizeof row->message - used, "%srepro: bitgate repro %s --lanes %s",
           used ? "; " : "", x->id, row->lane);
}

static void set_status(is_ctx *x, result_row *row, const char *status) {
  if (!strcmp(row->status, "pass") && strcmp(status, "pass")) x->report->failed++;
  snprintf(row->status, sizeof row->status, "%s", status);
}

/* What the case promises the oracle does with step 0. */
static void expected_outcome(const is_case *c, op_error *e) {
  long long bound[IS_CASE_MAX_BATCH];
  int b;
  op_error_clear(e);
  if (c->family == IS_FAMILY_INDEXVIOL) {
    e->cls = OP_ERR_INDEX;
    e->rule = c->viol_rule;
    e->batch = c->viol_b, e->head = c->viol_h, e->query = c->viol_q, e->column = c->viol_column;
  } else if (c->family == IS_FAMILY_CONTRACT) {
    e->cls = OP_ERR_CONTRACT;
  } else if (c->family == IS_FAMILY_CAPFRONT && c->batch <= IS_CASE_MAX_BATCH) {
    cases_is_bounds(c, bound);
    for (b = 0; b < c->batch; b++)
      if (bound[b] == 0) {
        e->cls = OP_ERR_INDEX;
        e->rule = INDEX_RULE_OUT_OF_RANGE;
        e->batch = b, e->head = 0, e->query = 0, e->column = 0;
        return;
      }
  }
}

static void lane_oracle(is_ctx *x, const is_step *s0) {
  op_error want;
  char got_text[160], want_text[160];
  result_row *row;
  int ok;
  expected_outcome(&x->c, &want);
  if (x->c.family == IS_FAMILY_BIAS) { /* is.bias: broadcastable shapes pass, others are contract errors */
    ok = s0->rc == 0 || s0->err.cls == OP_ERR_CONTRACT;
  } else if (want.cls == OP_ERR_CONTRACT) {
    ok = s0->err.cls == OP_ERR_CONTRACT;
  } else {
    ok = want.cls == OP_OK ? s0->rc == 0 : op_error_same(&want, &s0->err);
  }
  row = add_row(x, LANE_ORACLE, 0, ok ? "pass" : "fail");
  row->oracle_ms = s0->ms;
  op_error_describe(&s0->err, got_text, sizeof got_text);
  op_error_describe(&want, want_text, sizeof want_text);
  snprintf(row->message, sizeof row->message, ok ? "oracle: %s" : "oracle: %s, but the case expects %s", got_text,
           want_text);
  if (!ok) finish_row(x, row);
}

/*
** Hands the oracle's outcome of every step of the case to the outcome sink
** (the frozen-oracle digests, with the oracle lane) and its payloads to the
** payload sink (step 0 always; later steps with the oracle lane): step 0 is
** already computed; later steps are materialized and run only when a sink
** wants them, so a plain oracle lane costs what it did.
*/
static void oracle_steps(is_ctx *x, const is_step *s0) {
  const runner_env *env = x->env;
  const int lane_on = (env->lanes & LANE_BIT(LANE_ORACLE)) != 0;
  char err[512];
  int step;
  case_oracle_outcome(env, x->id, 0, s0->rc, &s0->err, s0->out, output_names, s0->n_out);
  hand_stages(x, 0, s0->stage, "oracle");
  for (step = 1; lane_on && (env->oracle_outcome || env->payload) && step < x->c.steps; step++) {
    is_step s;
    if (step_load(&x->c, step, &s, env->payload != NULL, err, sizeof err) != 0) {
      result_row *row = add_row(x, LANE_ORACLE, step, "fail");
      snprintf(row->message, sizeof row->message, "step %d: %s", step, err);
      finish_row(x, row);
    } else {
      case_oracle_outcome(env, x->id, step, s.rc, &s.err, s.out, output_names, s.n_out);
      hand_stages(x, step, s.stage, "oracle");
    }
    step_free(&s);
  }
}

/*
** Compares a device outcome with the oracle's on one row: errors by parity,
** outputs byte for byte.  dev_out holds the downloaded outputs when the
** device accepted the inputs.
*/
static void compare_into(result_row *row, const is_step *ref, int dev_rc, const op_error *derr,
                         const tensor *dev_out) {
  char a[160], b[160];
  int o;
  row->oracle_ms = ref->ms;
  if (dev_rc == DEVICE_IS_FAILED) {
    snprintf(row->status, sizeof row->status, "fail");
    snprintf(row->message, sizeof row->message, "device failure: %s", derr->message);
    return;
  }
  if (ref->rc != 0 || dev_rc != 0) {
    int same = ref->rc != 0 && dev_rc != 0 && op_error_same(&ref->err, derr);
    op_error_describe(&ref->err, a, sizeof a);
    op_error_describe(derr, b, sizeof b);
    snprintf(row->status, sizeof row->status, "%s", same ? "pass" : "error_parity");
    snprintf(row->message, sizeof row->message, "oracle %s; device %s", ref->rc ? a : "accepts",
             dev_rc ? b : "accepts");
    return;
  }
  for (o = 0; o < ref->n_out; o++) {
    tensor_diff d;
    if (tensor_diff_run(&ref->out[o], &dev_out[o], &d) == 0) {
      row->nan_equivalent += d.nan_equivalent;
      continue;
    }
    result_row_set_mismatch(row, output_names[o], &d);
    return;
  }
  snprintf(row->status, sizeof row->status, "pass");
}

/* Downloads the outputs after an accepted run and checks the guards; 0 ok. */
static int collect(is_ctx *x, device_io *io, device_index_share *k, tensor *dev_out, result_row *row) {
  char report[512] = "";
  int o;
  memset(dev_out, 0, sizeof(tensor) * IS_OUTPUT_COUNT);
  if (device_io_check(io, report, sizeof report) != 0 ||
      device_index_share_scratch_check(k, report, sizeof report) != 0) {
    set_status(x, row, "fail");
    snprintf(row->message, sizeof row->message, "%s", report[0] ? report : device_runtime_error(x->env->rt));
    return -1;
  }
  for (o = 0; o < io->n_out; o++)
    if (device_io_download(io, o, &dev_out[o]) != 0) {
      set_status(x, row, "fail");
      snprintf(row->message, sizeof row->message, "download: %s", device_runtime_error(x->env->rt));
      return -1;
    }
  return 0;
}

static void free_outputs(tensor *t) {
  int o;
  for (o = 0; o < IS_OUTPUT_COUNT; o++) tensor_free(&t[o]);
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
/* localise's two stage runs on k and io: returns as first_differing does. */
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

static void localise(is_ctx *x, result_row *row, is_step *s) {
  device_index_share *k = NULL;
  device_io io;
  char detail[400] = "", msg[420];
  int at = -2;
  memset(&io, 0, sizeof io);
  if (stages_ensure(s) != 0)
    snprintf(detail, sizeof detail, "the oracle's payloads are unavailable (out of memory)");
  else if (device_io_open(&io, x->env->rt, s->in, s->n_in, s->out, s->n_out, detail, sizeof detail) == 0 &&
           device_index_share_create(x->env->rt, &s->attrs, &k, detail, sizeof detail) == 0)
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

/* ---- eager, capture and poison lanes ----------------------------------------------- */

/*
** The eager pass's stage payloads: copied from the device, handed to the
** payload sink as "device" and compared with the oracle's in pipeline order;
** the first that differs marks the row a mismatch of that payload.
*/
static void compare_stages(is_ctx *x, device_index_share *k, result_row *row, const is_step *s) {
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
  hand_stages(x, 0, dev, "device");
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

/* Runs an eager pass, traced, and records it; returns the device rc. */
static int lane_eager(is_ctx *x, device_index_share *k, device_io *io, is_step *s0) {
  tensor dev_out[IS_OUTPUT_COUNT];
  result_row *row = add_row(x, LANE_EAGER, 0, "pass");
  struct timespec t0;
  op_error derr;
  int rc;
  op_error_clear(&derr);
  device_index_share_set_trace(k, 1);
  device_index_share_scratch_fill(k, DEVICE_JUNK_BYTE);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  rc = device_index_share_execute(k, io->in_p, io->n_in, io->out_p, io->n_out, &derr);
  row->device_ms = ms_since(&t0);
  if (rc == DEVICE_IS_OK && collect(x, io, k, dev_out, row) != 0) {
    finish_row(x, row);
    return DEVICE_IS_FAILED;
  }
  if (rc != DEVICE_IS_OK) memset(dev_out, 0, sizeof dev_out);
  row->oracle_ms = s0->ms;
  if (rc == DEVICE_IS_OK && s0->rc == 0) compare_stages(x, k, row, s0);
  if (!strcmp(row->status, "pass")) compare_into(row, s0, rc, &derr, dev_out);
  if (!strcmp(row->status, "mismatch")) localise(x, row, s0);
  if (strcmp(row->status, "pass")) x->report->failed++;
  finish_row(x, row);
  free_outputs(dev_out);
  return rc;
}

/* One graph replay of the inputs now in the buffers; compares with ref. */
static void replay_row(is_ctx *x, device_index_share *k, device_graph *g, device_io *io, is_step *ref, lane l,
                       int step, int check_outputs) {
  tensor dev_out[IS_OUTPUT_COUNT];
  result_row *row = add_row(x, l, step, "pass");
  device_runtime *rt = x->env->rt;
  struct timespec t0;
  unsigned latch = 0;
  int oracle_rejects = ref->rc != 0, raised;
  memset(dev_out, 0, sizeof dev_out);
  if (device_io_junk_outputs(io) != 0 || device_runtime_latch_reset(rt) != 0) goto cuda_failed;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (device_graph_replay(rt, g) != 0 || device_runtime_latch_read(rt, &latch) != 0) goto cuda_failed;
  row->device_ms = ms_since(&t0);
  row->oracle_ms = ref->ms;
  raised = (latch & INDEX_SHARE_LATCH_BIT) != 0;
  if (raised != oracle_rejects) {
    char a[160];
    op_error_describe(&ref->err, a, sizeof a);
    set_status(x, row, "error_parity");
    snprintf(row->message, sizeof row->message, "latch word 0x%x %s, but the oracle %s%s", latch,
             raised ? "raised" : "not raised", oracle_rejects ? "rejects: " : "accepts", oracle_rejects ? a : "");
  } else if (oracle_rejects) {
    snprintf(row->message, sizeof row->message, "latch raised, oracle rejects");
  } else if (check_outputs && collect(x, io, k, dev_out, row) == 0) {
    compare_into(row, ref, DEVICE_IS_OK, NULL, dev_out);
    if (!strcmp(row->status, "mismatch")) localise(x, row, ref);
    if (strcmp(row->status, "pass")) x->report->failed++;
  }
  finish_row(x, row);
  free_outputs(dev_out);
  return;
cuda_failed:
  set_status(x, row, "fail");
  snprintf(row->message, sizeof row->message, "replay: %s", device_runtime_error(rt));
  finish_row(x, row);
}

static int upload_step(device_io *io, const is_step *s) {
  int i;
  for (i = 0; i < s->n_in; i++)
    if (s->in[i].dt != DTYPE_NONE && device_io_upload(io, i, &s->in[i]) != 0) return -1;
  return 0;
}

static void lane_capture(is_ctx *x, device_index_share *k, device_graph *g, device_io *io) {
  char err[512];
  int step;
  for (step = 1; step <= REPLAYS && step < x->c.steps; step++) {
    is_step s;
    if (step_load(&x->c, step, &s, 0, err, sizeof err) != 0 || upload_step(io, &s) != 0) {
      result_row *row = add_row(x, LANE_CAPTURE, step, "fail");
      snprintf(row->message, sizeof row->message, "step %d: %s", step, err);
      finish_row(x, row);
      step_free(&s);
      continue;
    }
    replay_row(x, k, g, io, &s, LANE_CAPTURE, step, 1);
    step_free(&s);
  }
}

/*
** Where a violation of each rule is planted: the first, middle or last row,
** rotating with the rule and the case id so a suite covers all three; column 1
** where the rule needs an earlier valid entry, else 0.
*/
static void poison_site(const is_case *c, const char *id, int rule, long long *b, long long *h, long long *q,
                        long long *col) {
  unsigned spin = (unsigned)rule;
  long long rows = c->batch * c->index_heads * c->q_seq, r;
  const char *p;
  for (p = id; *p; p++) spin = spin * 31u + (unsigned char)*p;
  r = spin % 3 == 0 ? 0 : spin % 3 == 1 ? rows / 2 : rows - 1;
  *q = r % c->q_seq;
  *h = (r / c->q_seq) % c->index_heads;
  *b = r / (c->q_seq * c->index_heads);
  *col = rule == INDEX_RULE_ALL_PADDING ? -1
         : (rule == INDEX_RULE_DUPLICATE || rule == INDEX_RULE_NOT_INCREASING || rule == INDEX_RULE_AFTER_PADDING) ? 1
                                                                                                                   : 0;
}

static void lane_poison(is_ctx *x, device_index_share *k, device_graph *g, device_io *io, is_step *s0) {
  long long bound[IS_CASE_MAX_BATCH], b, h, q, col;
  tensor clean = s0->in[IS_IN_INDICES], poisoned = clean;
  int rule;
  if (x->c.batch > IS_CASE_MAX_BATCH || upload_step(io, s0) != 0) return;
  s0->want_stages = 0; /* the reruns below: payloads only when localise asks */
  cases_is_bounds(&x->c, bound);
  poisoned.data = NULL;
  if (tensor_alloc(&poisoned) != 0) return;
  for (rule = INDEX_RULE_SENTINEL; rule <= INDEX_RULE_ALL_PADDING; rule++) {
    result_row *row;
    memcpy(poisoned.data, clean.data, tensor_bytes(&clean));
    poison_site(&x->c, x->id, rule, &b, &h, &q, &col);
    if (cases_is_plant(&x->c, &poisoned, rule, b, h, q, col, bound) != 0) {
      row = add_row(x, LANE_POISON, POISON_STEP + rule, "skipped");
      snprintf(row->message, sizeof row->message, "rule %s cannot be planted in this shape", index_rule_name(rule));
      continue;
    }
    s0->in[IS_IN_INDICES] = poisoned;
    step_oracle(s0);
    if (device_io_upload(io, IS_IN_INDICES, &poisoned) == 0)
      replay_row(x, k, g, io, s0, LANE_POISON, POISON_STEP + rule, 0);
    s0->in[IS_IN_INDICES] = clean;
    step_oracle(s0);
    if (device_io_upload(io, IS_IN_INDICES, &clean) == 0)
      replay_row(x, k, g, io, s0, LANE_POISON, CLEAN_STEP + rule, 1);
  }
  tensor_free(&poisoned);
}

/* Eager, then (if it ran clean) capture and poison on one captured graph. */
static void device_lanes(is_ctx *x, is_step *s0) {
  device_runtime *rt = x->env->rt;
  device_index_share *k = NULL;
  device_graph *g = NULL;
  device_io io;
  op_error derr;
  char err[512];
  lane_mask want = x->env->lanes;
  int rc;
  if (device_io_open(&io, rt, s0->in, s0->n_in, s0->out, s0->n_out, err, sizeof err) != 0 ||
      device_index_share_create(rt, &s0->attrs, &k, err, sizeof err) != 0) {
    result_row *row = add_row(x, LANE_EAGER, 0, "fail");
    snprintf(row->message, sizeof row->message, "%s", err);
    finish_row(x, row);
    if (io.rt) device_io_close(&io);
    return;
  }
  rc = lane_eager(x, k, &io, s0); /* the warm pass capture needs, recorded or not */
  if (!(want & LANE_BIT(LANE_EAGER)) && x->report->n && !strcmp(x->report->rows[x->report->n - 1].lane, "eager") &&
      !strcmp(x->report->rows[x->report->n - 1].status, "pass"))
    x->report->n--; /* eager not asked for: keep its row only when it failed */
  if (rc == DEVICE_IS_OK && s0->rc == 0 && (want & (LANE_BIT(LANE_CAPTURE) | LANE_BIT(LANE_POISON)))) {
    op_error_clear(&derr);
    device_index_share_set_trace(k, 0); /* capture the production launch */
    if (!device_index_share_capture_ready(k, err, sizeof err) || device_runtime_capture_begin(rt) != 0) {
      result_row *row = add_row(x, LANE_CAPTURE, 0, "fail");
      snprintf(row->message, sizeof row->message, "capture refused: %s", err);
      finish_row(x, row);
    } else {
      rc = device_index_share_execute(k, io.in_p, io.n_in, io.out_p, io.n_out, &derr);
      if (device_runtime_capture_end(rt, &g) != 0 || rc != DEVICE_IS_OK) {
        result_row *row = add_row(x, LANE_CAPTURE, 0, "fail");
        snprintf(row->message, sizeof row->message, "capture failed: %s %s", derr.message, device_runtime_error(rt));
        finish_row(x, row);
      } else {
        if (want & LANE_BIT(LANE_CAPTURE)) lane_capture(x, k, g, &io);
        if (want & LANE_BIT(LANE_POISON)) lane_poison(x, k, g, &io, s0);
      }
    }
  }
  if (g) device_graph_destroy(g);
  device_index_share_destroy(k);
  device_io_close(&io);
}

int run_index_share(runner_env *env, const char *case_id, const char *spec, case_report *out) {
  is_ctx x;
  is_step s0;
  char err[512];
  const int device = env->rt && (env->lanes & ~LANE_BIT(LANE_ORACLE)); /* the eager lane compares payloads */
  memset(&x, 0, sizeof x);
  memset(&s0, 0, sizeof s0);
  x.env = env;
  x.id = case_id;
  x.report = out;
  if (cases_is_parse(spec, &x.c, err, sizeof err) != 0 ||
      step_load(&x.c, 0, &s0, env->payload || device, err, sizeof err) != 0) {
    result_row *row = add_row(&x, LANE_ORACLE, 0, "fail");
    snprintf(row->message, sizeof row->message, "%s", err);
    finish_row(&x, row);
    step_free(&s0);
    return -1;
  }
  if (env->lanes & LANE_BIT(LANE_ORACLE)) lane_oracle(&x, &s0);
  oracle_steps(&x, &s0);
  if (device) device_lanes(&x, &s0);
  step_free(&s0);
  return 0;
}

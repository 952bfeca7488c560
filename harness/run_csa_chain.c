/*
** run_csa_chain.c: the CSA chain driver shared by the ratios (see
** run_csa_chain.h).
**
** A chain is one row per lane: the row passes when every step of the chain
** agrees, and otherwise reports the first step that does not (its step
** number, tensor or stage, offset, values and ULP distance), after which the
** chain stops: later steps would only inherit the divergence.  Oracle and
** device each thread their own presents, so a device error never hides
** behind the oracle's state.  The capture lane runs eagerly until the first
** decode step from which every later step has the same shapes, captures that
** step once, and replays the graph for it and every step after, writing
** fresh inputs and the previous presents into the same buffers between
** replays.
*/
#include "harness/run_csa_chain.h"
#include "harness/device_io.h"
#include "harness/diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The past a chain carries from one step to the next (owned copies, by thread). */
typedef struct csa_past {
  tensor t[CSA_CHAIN_MAX_THREADS];
} csa_past;

typedef struct csa_chain {
  runner_env *env;
  const char *id;
  const csa_chain_ratio *r;
  const void *c;
  case_report *report;
  double oracle_ms, device_ms[LANE_COUNT]; /* so far: every row carries the totals at its making */
} csa_chain;

static double ms_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-6;
}

static void past_free(csa_past *p) {
  int j;
  for (j = 0; j < CSA_CHAIN_MAX_THREADS; j++) tensor_free(&p->t[j]);
}

/*
** An owned copy of src.  A contract case's impossible tensor (a negative
** dim, or no data) is copied as metadata only, as the materializer made it.
*/
static int tensor_copy(tensor *dst, const tensor *src) {
  tensor_free(dst);
  *dst = *src;
  dst->data = NULL;
  if (src->rank < 0 || tensor_numel(src) < 0 || !src->data) return 0;
  if (tensor_alloc(dst) != 0) return -1;
  memcpy(dst->data, src->data, tensor_bytes(src));
  return 0;
}

static int past_copy(const csa_chain *x, csa_past *dst, const csa_past *src) {
  int j;
  for (j = 0; j < x->r->n_threads; j++)
    if (tensor_copy(&dst->t[j], &src->t[j]) != 0) return -1;
  return 0;
}

int csa_chain_payload_alloc(tensor *t, dtype dt, int rank, long long d0, long long d1, long long d2, long long d3) {
  memset(t, 0, sizeof *t);
  t->dt = dt;
  t->rank = rank;
  t->shape[0] = d0, t->shape[1] = d1, t->shape[2] = d2, t->shape[3] = d3;
  if (tensor_alloc(t) == 0) return 0;
  memset(t, 0, sizeof *t);
  return -1;
}

void csa_chain_payload_keep_rows(tensor *t, long long first, long long end) {
  const long long batch = t->shape[0], rows = t->shape[1];
  size_t row_bytes, keep;
  unsigned char *kept = NULL;
  long long b;
  if (t->dt == DTYPE_NONE) return;
  if (end > rows) end = rows;
  if (first < 0) first = 0;
  row_bytes = batch > 0 && rows > 0 ? tensor_bytes(t) / (size_t)(batch * rows) : 0;
  keep = end > first ? (size_t)(end - first) * row_bytes : 0;
  if (!keep || !(kept = malloc(keep * (size_t)batch))) {
    tensor_free(t);
    memset(t, 0, sizeof *t);
    return;
  }
  for (b = 0; b < batch; b++)
    memcpy(kept + (size_t)b * keep, (unsigned char *)t->data + ((size_t)(b * rows + first)) * row_bytes, keep);
  free(t->data);
  t->data = kept;
  t->shape[1] = end - first;
}

/*
** Materializes a step.  At step 0 the chain's past takes over the initial
** past tensors the materializer made (past must be empty); later steps leave
** their past inputs for step_plug.
*/
static int step_load(const csa_chain *x, int step, csa_step *s, csa_past *past, char *err, size_t len) {
  int j;
  memset(s, 0, sizeof *s);
  if (x->r->materialize(x->c, step, s, err, len) != 0) {
    x->r->release(s);
    return -1;
  }
  if (step == 0 && past)
    for (j = 0; j < x->r->n_threads; j++) past->t[j] = s->in[x->r->thread_in[j]];
  return 0;
}

/* Points the step's past inputs at past (the step does not own them). */
static void step_plug(const csa_chain *x, csa_step *s, const csa_past *past) {
  int j;
  for (j = 0; j < x->r->n_threads; j++) s->in[x->r->thread_in[j]].data = past->t[j].data;
}

/* Frees what the step owns: everything but its (plugged or taken) past. */
static void step_free(const csa_chain *x, csa_step *s) {
  int j;
  for (j = 0; j < x->r->n_threads; j++) s->in[x->r->thread_in[j]].data = NULL;
  for (j = 0; j < CSA_CHAIN_MAX_STAGES; j++) tensor_free(&s->stage[j]);
  x->r->release(s);
}

/* Runs the oracle's step and hands its stage payloads to the payload sink. */
static void step_oracle(csa_chain *x, csa_step *s, int step, int want_stages) {
  runner_env *env = x->env;
  struct timespec t0;
  int p;
  op_error_clear(&s->err);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  x->r->oracle(s, want_stages);
  x->oracle_ms += ms_since(&t0);
  for (p = 0; env->payload && s->rc == 0 && p < x->r->n_stages; p++)
    if (s->stage[p].dt != DTYPE_NONE)
      env->payload(env->payload_ctx, x->id, step, x->r->stage_names[p], "oracle", &s->stage[p]);
}

/* Moves a step's present outputs into the chain's past. */
static int thread_past(const csa_chain *x, csa_past *past, const tensor *present) {
  int j;
  for (j = 0; j < x->r->n_threads; j++)
    if (tensor_copy(&past->t[j], &present[x->r->thread_out[j]]) != 0) return -1;
  return 0;
}

static result_row *add_row(csa_chain *x, lane l, int step, const char *status) {
  static result_row overflow;
  result_row *row = case_report_add(x->report, l, step, status);
  if (!row) {
    memset(&overflow, 0, sizeof overflow);
    row = &overflow;
  }
  if (strcmp(status, "pass") && strcmp(status, "skipped")) x->report->failed++;
  row->oracle_ms = x->oracle_ms;
  row->device_ms = l == LANE_ORACLE ? -1.0 : x->device_ms[l];
  return row;
}

static void fail_row(csa_chain *x, lane l, int step, const char *status, const char *what) {
  result_row *row = add_row(x, l, step, status);
  snprintf(row->message, sizeof row->message, "%.600s; repro: bitgate repro %s --lanes %s", what, x->id, lane_name(l));
}

/* Records a mismatch of `name` at step; returns -1. */
static int mismatch_row(csa_chain *x, lane l, int step, const char *name, const tensor_diff *d) {
  char msg[700];
  result_row *row = add_row(x, l, step, "mismatch");
  result_row_set_mismatch(row, name, d);
  snprintf(msg, sizeof msg, "%.600s", row->message);
  snprintf(row->message, sizeof row->message, "step %d: %.600s; repro: bitgate repro %s --lanes %s", step, msg, x->id,
           lane_name(l));
  return -1;
}

/* ---- device lanes ---------------------------------------------------------- */

typedef struct device_chain {
  device_io io;
  device_graph *g;
  void *k;       /* the ratio's device instance (shared by both chains) */
  csa_past past; /* this chain's own threaded state */
  int io_open, active, done_steps;
} device_chain;

/*
** Copies the device's stage payloads of the eager execute just run into dev
** (shaped like the oracle's) and hands them to the payload sink.  A stage the
** oracle did not capture stays DTYPE_NONE.  0, or -1 with err set.
*/
static int device_stages(csa_chain *x, void *k, const csa_step *ref, int step, tensor *dev, char *err, size_t len) {
  runner_env *env = x->env;
  int i;
  char why[400] = "out of memory";
  for (i = 0; i < x->r->n_dev_stages; i++) {
    const tensor *o = &ref->stage[x->r->dev_stages[i].oracle_stage];
    const char *name = x->r->stage_names[x->r->dev_stages[i].oracle_stage];
    memset(&dev[i], 0, sizeof dev[i]);
    if (o->dt == DTYPE_NONE) continue;
    if (csa_chain_payload_alloc(&dev[i], o->dt, o->rank, o->shape[0], o->shape[1], o->shape[2], o->shape[3]) != 0 ||
        x->r->dev_stage_copy(k, x->r->dev_stages[i].device_stage, &dev[i], why, sizeof why) != 0)
      return snprintf(err, len, "step %d: stage %s: %s", step, name, why), -1;
    if (env->payload) env->payload(env->payload_ctx, x->id, step, name, "device", &dev[i]);
  }
  return 0;
}

/*
** Compares the accepted device step with the oracle's in the ratio's
** compare order; the device's threaded outputs go to keep.  0 when identical.
*/
static int compare_accepted(csa_chain *x, lane l, int step, const csa_step *ref, device_chain *dc, csa_past *keep) {
  const csa_chain_ratio *r = x->r;
  tensor dev[CSA_CHAIN_MAX_STAGES];
  char err[700];
  int e, j, rc = 0, n = r->compare_order ? r->n_compare : ref->n_out;
  memset(dev, 0, sizeof dev);
  if (l == LANE_EAGER && r->n_dev_stages && device_stages(x, dc->k, ref, step, dev, err, sizeof err) != 0) {
    fail_row(x, l, step, "fail", err);
    rc = -1;
  }
  for (e = 0; e < n && rc == 0; e++) {
    int o = r->compare_order ? r->compare_order[e] : e;
    tensor_diff d;
    if (o < 0) { /* a device stage */
      const csa_chain_dev_stage *st = &r->dev_stages[-1 - o];
      if (l != LANE_EAGER || dev[-1 - o].dt == DTYPE_NONE) continue;
      if (tensor_diff_run(&ref->stage[st->oracle_stage], &dev[-1 - o], &d))
        rc = mismatch_row(x, l, step, r->stage_names[st->oracle_stage], &d);
      continue;
    }
    if (o >= ref->n_out) continue;
    {
      tensor got;
      memset(&got, 0, sizeof got);
      if (device_io_download(&dc->io, o, &got) != 0) {
        tensor_free(&got);
        fail_row(x, l, step, "fail", "download failed");
        rc = -1;
        break;
      }
      if (tensor_diff_run(&ref->out[o], &got, &d)) {
        tensor_free(&got);
        rc = mismatch_row(x, l, step, r->output_names[o], &d);
        break;
      }
      for (j = 0; j < r->n_threads && r->thread_out[j] != o; j++) {}
      if (j < r->n_threads) {
        tensor_free(&keep->t[j]);
        keep->t[j] = got; /* the device's own present becomes its next past */
      } else {
        tensor_free(&got);
      }
    }
  }
  for (e = 0; e < CSA_CHAIN_MAX_STAGES; e++) tensor_free(&dev[e]);
  return rc;
}

/* Compares a device step with the oracle's; returns 0 when identical, 1 when both reject. */
static int compare_step(csa_chain *x, lane l, int step, const csa_step *ref, int dev_rc, const op_error *derr,
                        device_chain *dc, int eager, csa_past *keep) {
  char a[160], b[160], msg[700];
  if (dev_rc == DEVICE_CSA_FAILED) {
    snprintf(msg, sizeof msg, "step %d: device failure: %s", step, derr->message);
    fail_row(x, l, step, "fail", msg);
    return -1;
  }
  if (ref->rc != 0 || dev_rc != 0) {
    op_error_describe(&ref->err, a, sizeof a);
    op_error_describe(derr, b, sizeof b);
    if (ref->rc != 0 && dev_rc != 0 && op_error_same(&ref->err, derr)) {
      snprintf(add_row(x, l, step, "pass")->message, sizeof msg, "both reject: %s", a);
      return 1; /* the chain ends here, in agreement */
    }
    snprintf(msg, sizeof msg, "step %d: oracle %s; device %s", step, ref->rc ? a : "accepts", dev_rc ? b : "accepts");
    fail_row(x, l, step, "error_parity", msg);
    return -1;
  }
  if (device_io_check(&dc->io, msg, sizeof msg) != 0 ||
      (eager && x->r->dev_scratch_check && x->r->dev_scratch_check(dc->k, msg, sizeof msg) != 0)) {
    fail_row(x, l, step, "fail", msg);
    return -1;
  }
  return compare_accepted(x, l, step, ref, dc, keep);
}

/* A mismatch at an accepted step: which stage's own computation diverges (csa_localise.c). */
static void localise_row(csa_chain *x, device_chain *dc, const csa_step *s, result_row *row) {
  char stage[40], detail[400], why[460];
  int rc;
  if (!x->r->n_loc || !dc->io_open) return;
  rc = csa_chain_localise(x->r, dc->k, &dc->io, s, stage, sizeof stage, detail, sizeof detail);
  if (rc == 1) {
    result_row_set_localised(row, stage, detail);
    return;
  }
  snprintf(why, sizeof why, rc == 0 ? "every stage agrees when run alone on the oracle's inputs"
                                    : "could not replay the stages: %s", detail);
  result_row_set_localised(row, NULL, why);
}

/* Makes io fit the step (reopening it when shapes change) and uploads every input. */
static int chain_upload(csa_chain *x, device_chain *dc, const csa_step *s, char *err, size_t len) {
  int i;
  if (dc->io_open && !device_io_fits(&dc->io, s->in, s->n_in, s->out, s->n_out)) {
    if (dc->g) return snprintf(err, len, "shapes changed after the capture"), -1;
    device_io_close(&dc->io);
    dc->io_open = 0;
  }
  if (!dc->io_open) {
    if (device_io_open(&dc->io, x->env->rt, s->in, s->n_in, s->out, s->n_out, err, len) != 0) return -1;
    dc->io_open = 1;
    return 0;
  }
  for (i = 0; i < s->n_in; i++)
    if (s->in[i].dt != DTYPE_NONE && device_io_upload(&dc->io, i, &s->in[i]) != 0)
      return snprintf(err, len, "upload: %s", device_runtime_error(x->env->rt)), -1;
  return device_io_junk_outputs(&dc->io) != 0 ? (snprintf(err, len, "junk fill failed"), -1) : 0;
}

/* Replays the captured graph; DEVICE_CSA_OK, or -1 after a recorded failure. */
static int chain_replay(csa_chain *x, lane l, device_chain *dc, int step) {
  device_runtime *rt = x->env->rt;
  unsigned latch = 0;
  char err[700];
  if (device_runtime_latch_reset(rt) != 0 || device_graph_replay(rt, dc->g) != 0 ||
      device_runtime_latch_read(rt, &latch) != 0) {
    snprintf(err, sizeof err, "replay: %s", device_runtime_error(rt));
    return fail_row(x, l, step, "fail", err), -1;
  }
  if (latch) {
    snprintf(err, sizeof err, "step %d: replay raised latch 0x%x on inputs the oracle accepts", step, latch);
    return fail_row(x, l, step, "error_parity", err), -1;
  }
  return DEVICE_CSA_OK;
}

/*
** One device step of a chain: its past plugged in, uploaded, run (eagerly,
** or captured now and replayed, or replayed), compared with the oracle's
** step and threaded.  Returns 0 to go on, 1 when the chain ended in agreement
** (both rejected), -1 after a recorded failure.
*/
static int chain_step(csa_chain *x, lane l, device_chain *dc, csa_step *s, int step, int capture_now) {
  const csa_chain_ratio *r = x->r;
  device_runtime *rt = x->env->rt;
  op_error derr;
  csa_past next;
  char err[700];
  struct timespec t0;
  int rc, n_rows;
  op_error_clear(&derr);
  step_plug(x, s, &dc->past);
  if (chain_upload(x, dc, s, err, sizeof err) != 0) return fail_row(x, l, step, "fail", err), -1;
  if (capture_now) {
    if (!r->dev_capture_ready(dc->k, err, sizeof err) || device_runtime_capture_begin(rt) != 0)
      return fail_row(x, l, step, "fail", "capture refused"), -1;
    rc = r->dev_execute(dc->k, dc->io.in_p, dc->io.n_in, dc->io.out_p, dc->io.n_out, &derr);
    if (device_runtime_capture_end(rt, &dc->g) != 0 || rc != DEVICE_CSA_OK) {
      snprintf(err, sizeof err, "capture failed: %s %s", derr.message, device_runtime_error(rt));
      return fail_row(x, l, step, "fail", err), -1;
    }
  }
  if (dc->g) {
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (chain_replay(x, l, dc, step) != DEVICE_CSA_OK) return -1;
    x->device_ms[l] += ms_since(&t0); /* replay and latch read, synchronised */
    rc = DEVICE_CSA_OK;
  } else {
    if (r->dev_scratch_fill && r->dev_scratch_fill(dc->k, DEVICE_JUNK_BYTE) != 0)
      return fail_row(x, l, step, "fail", "scratch junk fill failed"), -1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = r->dev_execute(dc->k, dc->io.in_p, dc->io.n_in, dc->io.out_p, dc->io.n_out, &derr);
    x->device_ms[l] += ms_since(&t0); /* an eager execute syncs before it returns */
  }
  memset(&next, 0, sizeof next);
  n_rows = x->report->n;
  rc = compare_step(x, l, step, s, rc, &derr, dc, !dc->g, &next);
  if (rc != 0) {
    result_row *row = x->report->n > n_rows ? &x->report->rows[x->report->n - 1] : NULL;
    past_free(&next);
    if (row && !strcmp(row->status, "mismatch")) localise_row(x, dc, s, row);
    return rc;
  }
  past_free(&dc->past); /* the step's inputs pointed into it: they are done */
  dc->past = next;
  dc->done_steps++;
  return 0;
}

static void chain_close(device_chain *dc) {
  if (dc->g) device_graph_destroy(dc->g);
  if (dc->io_open) device_io_close(&dc->io);
  past_free(&dc->past);
  memset(dc, 0, sizeof *dc);
}

/*
** Where the case expects the rejection: *site gets " at input I axis A"
** when the ratio's cases name one (else ""); 1 when err is there.
*/
static int site_matches(const csa_chain *x, const op_error *err, char *site, size_t len) {
  int input = -1, axis = -1;
  site[0] = '\0';
  if (!x->r->expected_site || !x->r->expected_site(x->c, &input, &axis)) return 1;
  snprintf(site, len, " at input %d axis %d", input, axis);
  return err->input == input && err->axis == axis;
}

/* The oracle's verdict on one step against what the case expects; 1 ends the chain. */
static int oracle_check(csa_chain *x, const csa_step *s, int step, int expect_reject, int code) {
  char got[160], site[64], msg[900];
  int at;
  if (!expect_reject && s->rc == 0) return 0;
  op_error_describe(&s->err, got, sizeof got);
  at = site_matches(x, &s->err, site, sizeof site);
  if (expect_reject && s->rc != 0 && s->err.cls == OP_ERR_CONTRACT && s->err.rule == code && at) {
    snprintf(add_row(x, LANE_ORACLE, step, "pass")->message, sizeof msg, "rejects as expected: %s", s->err.message);
  } else {
    snprintf(msg, sizeof msg, "step %d: oracle %s (%s), but the case expects %s %s%s", step, s->rc ? got : "accepts",
             s->err.message, expect_reject ? "contract" : "success", expect_reject ? csa_contract_name(code) : "",
             expect_reject ? site : "");
    fail_row(x, LANE_ORACLE, step, "fail", msg);
  }
  return 1;
}

/* Creates the device instance and seeds the eager chain's past; 0 or -1 (row recorded). */
static int chain_open(csa_chain *x, const csa_step *s, const csa_past *ref, device_chain *eager) {
  char err[700] = "";
  if (past_copy(x, &eager->past, ref) != 0 ||
      x->r->dev_create(x->env->rt, &s->attrs, x->env->variant, &eager->k, err, sizeof err) != 0) {
    fail_row(x, LANE_EAGER, 0, "fail", eager->k || !err[0] ? "out of memory" : err);
    return -1;
  }
  return 0;
}

/*
** The whole chain once: the oracle's step is the reference for the eager
** chain and the capture chain in the same pass.  The eager chain always runs
** on the device (it is the warm pass capture needs); its row is kept only if
** asked for.  The capture chain starts from the eager chain's state at the
** capture step.
*/
void run_csa_chain(runner_env *env, const char *case_id, const csa_chain_ratio *r, const void *c, int steps,
                   case_report *out) {
  csa_chain chain = {env, case_id, r, c, out, 0.0, {0}}, *x = &chain;
  lane_mask want = env->lanes;
  int device = env->rt && (want & (LANE_BIT(LANE_EAGER) | LANE_BIT(LANE_CAPTURE)));
  int capture_at = device && (want & LANE_BIT(LANE_CAPTURE)) ? r->capture_step(c, steps) : -1;
  int code = 0, expect_reject = r->expected(c, &code), step, ended = 0, n_rows, oracle_rows, oracle_done = 0;
  device_chain eager, captured;
  csa_past ref;
  char err[700];
  memset(&eager, 0, sizeof eager);
  memset(&captured, 0, sizeof captured);
  memset(&ref, 0, sizeof ref);
  eager.active = device;
  captured.active = capture_at >= 0;
  for (step = 0; step < steps && !ended; step++) {
    csa_step s;
    if (step_load(x, step, &s, &ref, err, sizeof err) != 0) {
      fail_row(x, LANE_ORACLE, step, "fail", err);
      oracle_done = 1;
      step_free(x, &s);
      break;
    }
    step_plug(x, &s, &ref);
    step_oracle(x, &s, step, env->payload || (eager.active && r->n_dev_stages > 0));
    case_oracle_outcome(env, case_id, step, s.rc, &s.err, s.out, r->output_names, s.n_out);
    oracle_rows = out->n;
    ended = (want & LANE_BIT(LANE_ORACLE)) ? oracle_check(x, &s, step, expect_reject, code) : s.rc != 0;
    if (out->n != oracle_rows) oracle_done = 1;
    if (step == 0 && device && chain_open(x, &s, &ref, &eager) != 0) eager.active = captured.active = 0;
    captured.k = eager.k;
    if (captured.active && step == capture_at) {
      if (eager.done_steps != step || past_copy(x, &captured.past, &eager.past) != 0) {
        snprintf(add_row(x, LANE_CAPTURE, step, "skipped")->message, sizeof err,
                 "the eager chain did not reach step %d", step);
        captured.active = 0;
      }
    }
    if (captured.active && step >= capture_at && chain_step(x, LANE_CAPTURE, &captured, &s, step, step == capture_at))
      captured.active = 0;
    n_rows = out->n;
    if (eager.active) {
      int rc = chain_step(x, LANE_EAGER, &eager, &s, step, 0);
      if (rc != 0) eager.active = 0;
      if (rc == 1 && !(want & LANE_BIT(LANE_EAGER))) out->n = n_rows; /* agreement, not asked for */
    }
    if (!ended && thread_past(x, &ref, s.out) != 0) ended = 1;
    step_free(x, &s);
  }
  if ((want & LANE_BIT(LANE_ORACLE)) && !oracle_done && step == steps)
    snprintf(add_row(x, LANE_ORACLE, steps - 1, "pass")->message, sizeof err, "%d steps", steps);
  if (eager.active && (want & LANE_BIT(LANE_EAGER)) && eager.done_steps == steps)
    snprintf(add_row(x, LANE_EAGER, steps - 1, "pass")->message, sizeof err, "%d steps identical", steps);
  if (captured.active && captured.done_steps)
    snprintf(add_row(x, LANE_CAPTURE, steps - 1, "pass")->message, sizeof err,
             "captured at step %d, %d replays identical", capture_at, captured.done_steps);
  if (device && (want & LANE_BIT(LANE_CAPTURE)) && capture_at < 0)
    snprintf(add_row(x, LANE_CAPTURE, 0, "skipped")->message, sizeof err, "no decode step to capture");
  if (eager.k) r->dev_destroy(eager.k);
  captured.k = eager.k = NULL;
  chain_close(&eager);
  chain_close(&captured);
  past_free(&ref);
}

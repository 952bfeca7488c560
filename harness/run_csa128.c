/*
** run_csa128.c: the ratio-128 CSA lanes (see run_csa128.h).
**
** A chain is one row per lane: the row passes when every step of the chain
** agrees, and otherwise reports the first step that does not (its step
** number, tensor, offset, values and ULP distance), after which the chain
** stops: later steps would only inherit the divergence.  Oracle and device
** each thread their own presents, so a device error never hides behind the
** oracle's state.  The capture lane runs eagerly until the first decode step
** from which every later step has the same shapes, captures that step once,
** and replays the graph for it and every step after, writing fresh inputs and
** the previous present into the same buffers between replays.
*/
#include "harness/run_csa128.h"
#include "cases/csa128_cases.h"
#include "device/csa128_device.h"
#include "harness/device_io.h"
#include "harness/diff.h"
#include "oracle/csa.h"

#include <stdio.h>
#include <string.h>

static const char *const output_names[CSA_OUTPUT_COUNT] = {"Y", "present_compressed_kv", "present_compression_carry"};

/* One materialized step: the case's tensors plus the past this chain threads in. */
typedef struct csa_step {
  tensor in[CSA_INPUT_COUNT], out[CSA_OUTPUT_COUNT];
  int n_in, n_out, rc;
  csa_attrs attrs;
  op_error err;
} csa_step;

/* The past a chain carries from one step to the next (owned copies). */
typedef struct csa_past {
  tensor cache, carry;
} csa_past;

typedef struct csa_ctx {
  runner_env *env;
  const char *id;
  csa_case c;
  int steps;
  case_report *report;
} csa_ctx;

static void past_free(csa_past *p) {
  tensor_free(&p->cache);
  tensor_free(&p->carry);
}

static int tensor_copy(tensor *dst, const tensor *src) {
  tensor_free(dst);
  *dst = *src;
  dst->data = NULL;
  if (tensor_alloc(dst) != 0) return -1;
  memcpy(dst->data, src->data, tensor_bytes(src));
  return 0;
}

/*
** Materializes a step.  At step 0 the chain's past takes over the initial
** past tensors the materializer made (past must be empty); later steps leave
** their past inputs for step_plug.
*/
static int step_load(const csa_ctx *x, int step, csa_step *s, csa_past *past, char *err, size_t len) {
  memset(s, 0, sizeof *s);
  if (cases_csa_materialize(&x->c, step, s->in, &s->n_in, s->out, &s->n_out, &s->attrs, err, len) != 0) return -1;
  if (step == 0 && past) {
    past->cache = s->in[CSA_IN_PAST_COMPRESSED_KV];
    past->carry = s->in[CSA_IN_PAST_CARRY];
  }
  return 0;
}

/* Points the step's past inputs at past (the step does not own them). */
static void step_plug(csa_step *s, const csa_past *past) {
  s->in[CSA_IN_PAST_COMPRESSED_KV].data = past->cache.data;
  s->in[CSA_IN_PAST_CARRY].data = past->carry.data;
}

/* Frees what the step owns: everything but its (plugged or taken) past. */
static void step_free(csa_step *s) {
  s->in[CSA_IN_PAST_COMPRESSED_KV].data = s->in[CSA_IN_PAST_CARRY].data = NULL;
  cases_csa_release(s->in, s->out);
}

/* A [d0, d1, d2, d3] f32 payload tensor (rank = number of dims given). */
static int payload_alloc(tensor *t, int rank, long long d0, long long d1, long long d2, long long d3) {
  memset(t, 0, sizeof *t);
  t->dt = DTYPE_F32;
  t->rank = rank;
  t->shape[0] = d0, t->shape[1] = d1, t->shape[2] = d2, t->shape[3] = d3;
  return tensor_alloc(t);
}

/*
** Runs the oracle's step.  With a payload sink, it also captures the seed's
** stage boundaries the oracle exposes (csa_trace): the compression records,
** the candidate scores and the attention output, and hands them over.
*/
static int step_oracle(csa_step *s, const csa_ctx *x, int step) {
  const tensor *in[CSA_INPUT_COUNT];
  tensor *out[CSA_OUTPUT_COUNT], pay[3];
  csa_trace trace, *tr = NULL;
  static const char *const stages[3] = {"CompressionUpdate", "CandidateAssembly", "SparseSinkSoftmaxAttention"};
  int i, p;
  for (i = 0; i < s->n_in; i++) in[i] = s->in[i].dt == DTYPE_NONE ? NULL : &s->in[i];
  for (i = 0; i < s->n_out; i++) out[i] = &s->out[i];
  op_error_clear(&s->err);
  memset(pay, 0, sizeof pay);
  if (x && x->env->payload && s->n_out == CSA_OUTPUT_COUNT && s->in[CSA_IN_QUERY].rank == 4 &&
      s->out[CSA_OUT_PRESENT_COMPRESSED_KV].rank == 3) {
    const long long *q = s->in[CSA_IN_QUERY].shape, rc = s->out[CSA_OUT_PRESENT_COMPRESSED_KV].shape[1];
    if (payload_alloc(&pay[0], 3, q[0], rc, CSA_HEAD_DIM, 0) == 0 &&
        payload_alloc(&pay[1], 4, q[0], q[1], q[2], CSA_DENSE_WINDOW + rc) == 0 &&
        payload_alloc(&pay[2], 4, q[0], q[1], q[2], CSA_HEAD_DIM) == 0) {
      trace.records = pay[0].data, trace.scores = pay[1].data, trace.output = pay[2].data;
      tr = &trace;
    }
  }
  s->rc = oracle_csa128_run(&s->attrs, in, s->n_in, out, s->n_out, tr, &s->err);
  for (p = 0; p < 3; p++) {
    if (tr && s->rc == 0) x->env->payload(x->env->payload_ctx, x->id, step, stages[p], "oracle", &pay[p]);
    tensor_free(&pay[p]);
  }
  return s->rc;
}

/* Moves a step's present outputs into the chain's past. */
static int thread_past(csa_past *past, const tensor *present) {
  return tensor_copy(&past->cache, &present[CSA_OUT_PRESENT_COMPRESSED_KV]) ||
         tensor_copy(&past->carry, &present[CSA_OUT_PRESENT_CARRY]);
}

static result_row *add_row(csa_ctx *x, lane l, int step, const char *status) {
  static result_row overflow;
  result_row *row = case_report_add(x->report, l, step, status);
  if (!row) {
    memset(&overflow, 0, sizeof overflow);
    row = &overflow;
  }
  if (strcmp(status, "pass") && strcmp(status, "skipped")) x->report->failed++;
  return row;
}

static void fail_row(csa_ctx *x, lane l, int step, const char *status, const char *what) {
  result_row *row = add_row(x, l, step, status);
  snprintf(row->message, sizeof row->message, "%.600s; repro: bitgate repro %s --lanes %s", what, x->id, lane_name(l));
}

/* ---- device lanes ---------------------------------------------------------- */

/*
** The decode step to capture: the first from which every later step has
** the same input shapes, or the last step when shapes never settle; -1 for a
** chain without decode steps.  Decode steps have S = 1 and current_kv holds
** min(window, total) rows (cases/csa128_cases.h), so shapes settle once total
** reaches the window.
*/
static int capture_step(const csa_ctx *x) {
  long long first = x->c.window - (x->c.start + x->c.prefill);
  if (x->steps < 2) return -1;
  if (first < 1) first = 1;
  return first < x->steps ? (int)first : x->steps - 1;
}

/* Compares a device step with the oracle's; returns 0 when identical. */
static int compare_step(csa_ctx *x, lane l, int step, const csa_step *ref, int dev_rc, const op_error *derr,
                        device_io *io, csa_past *keep) {
  char a[160], b[160], msg[700];
  int o;
  if (dev_rc == DEVICE_CSA_FAILED) {
    snprintf(msg, sizeof msg, "step %d: device failure: %s", step, derr->message);
    fail_row(x, l, step, "fail", msg);
    return -1;
  }
  if (ref->rc != 0 || dev_rc != 0) {
    op_error_describe(&ref->err, a, sizeof a);
    op_error_describe(derr, b, sizeof b);
    if (ref->rc != 0 && dev_rc != 0 && ref->err.cls == derr->cls && ref->err.rule == derr->rule) {
      snprintf(add_row(x, l, step, "pass")->message, sizeof msg, "both reject: %s", a);
      return 1; /* the chain ends here, in agreement */
    }
    snprintf(msg, sizeof msg, "step %d: oracle %s; device %s", step, ref->rc ? a : "accepts", dev_rc ? b : "accepts");
    fail_row(x, l, step, "error_parity", msg);
    return -1;
  }
  if (device_io_check(io, msg, sizeof msg) != 0) {
    fail_row(x, l, step, "fail", msg);
    return -1;
  }
  for (o = 0; o < ref->n_out; o++) {
    tensor got;
    tensor_diff d;
    long long bad;
    memset(&got, 0, sizeof got);
    if (device_io_download(io, o, &got) != 0) {
      tensor_free(&got);
      fail_row(x, l, step, "fail", "download failed");
      return -1;
    }
    bad = tensor_diff_run(&ref->out[o], &got, &d);
    if (!bad && keep && o == CSA_OUT_PRESENT_COMPRESSED_KV) {
      tensor_free(&keep->cache);
      keep->cache = got; /* the device's own present becomes its next past */
    } else if (!bad && keep && o == CSA_OUT_PRESENT_CARRY) {
      tensor_free(&keep->carry);
      keep->carry = got;
    } else {
      tensor_free(&got);
    }
    if (bad) {
      result_row *row = add_row(x, l, step, "mismatch");
      result_row_set_mismatch(row, output_names[o], &d);
      snprintf(msg, sizeof msg, "%.600s", row->message);
      snprintf(row->message, sizeof row->message, "step %d: %.600s; repro: bitgate repro %s --lanes %s", step, msg,
               x->id, lane_name(l));
      return -1;
    }
  }
  return 0;
}

typedef struct device_chain {
  device_io io;
  device_graph *g;
  csa_past past; /* this chain's own threaded state */
  int io_open, active, done_steps;
} device_chain;

/* Makes io fit the step (reopening it when shapes change) and uploads every input. */
static int chain_upload(csa_ctx *x, device_chain *dc, const csa_step *s, char *err, size_t len) {
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

/*
** One device step of a chain: its past plugged in, uploaded, run (eagerly,
** or captured now and replayed, or replayed), compared with the oracle's
** step and threaded.  Returns 0 to go on, 1 when the chain ended in agreement
** (both rejected), -1 after a recorded failure.
*/
static int chain_step(csa_ctx *x, lane l, device_csa128 *k, device_chain *dc, csa_step *s, int step, int capture_now) {
  device_runtime *rt = x->env->rt;
  op_error derr;
  char err[700];
  int rc;
  op_error_clear(&derr);
  step_plug(s, &dc->past);
  if (chain_upload(x, dc, s, err, sizeof err) != 0) return fail_row(x, l, step, "fail", err), -1;
  if (capture_now) {
    if (!device_csa128_capture_ready(k, err, sizeof err) || device_runtime_capture_begin(rt) != 0)
      return fail_row(x, l, step, "fail", "capture refused"), -1;
    rc = device_csa128_execute(k, dc->io.in_p, dc->io.n_in, dc->io.out_p, dc->io.n_out, &derr);
    if (device_runtime_capture_end(rt, &dc->g) != 0 || rc != DEVICE_CSA_OK) {
      snprintf(err, sizeof err, "capture failed: %s %s", derr.message, device_runtime_error(rt));
      return fail_row(x, l, step, "fail", err), -1;
    }
  }
  if (dc->g) {
    unsigned latch = 0;
    if (device_runtime_latch_reset(rt) != 0 || device_graph_replay(rt, dc->g) != 0 ||
        device_runtime_latch_read(rt, &latch) != 0) {
      snprintf(err, sizeof err, "replay: %s", device_runtime_error(rt));
      return fail_row(x, l, step, "fail", err), -1;
    }
    if (latch) {
      snprintf(err, sizeof err, "step %d: replay raised latch 0x%x on inputs the oracle accepts", step, latch);
      return fail_row(x, l, step, "error_parity", err), -1;
    }
    rc = DEVICE_CSA_OK;
  } else {
    rc = device_csa128_execute(k, dc->io.in_p, dc->io.n_in, dc->io.out_p, dc->io.n_out, &derr);
  }
  {
    csa_past next;
    memset(&next, 0, sizeof next);
    rc = compare_step(x, l, step, s, rc, &derr, &dc->io, &next);
    if (rc != 0) {
      past_free(&next);
      return rc;
    }
    past_free(&dc->past); /* the step's inputs pointed into it: they are done */
    dc->past = next;
  }
  dc->done_steps++;
  return 0;
}

static void chain_close(device_chain *dc) {
  if (dc->g) device_graph_destroy(dc->g);
  if (dc->io_open) device_io_close(&dc->io);
  past_free(&dc->past);
  memset(dc, 0, sizeof *dc);
}

/* The oracle's verdict on one step against what the case expects; 1 ends the chain. */
static int oracle_check(csa_ctx *x, const csa_step *s, int step, int expect_reject, int code) {
  char got[160], msg[900];
  if (!expect_reject && s->rc == 0) return 0;
  op_error_describe(&s->err, got, sizeof got);
  if (expect_reject && s->rc != 0 && s->err.cls == OP_ERR_CONTRACT && s->err.rule == code) {
    snprintf(add_row(x, LANE_ORACLE, step, "pass")->message, sizeof msg, "rejects as expected: %s", s->err.message);
  } else {
    snprintf(msg, sizeof msg, "step %d: oracle %s (%s), but the case expects %s %s", step, s->rc ? got : "accepts",
             s->err.message, expect_reject ? "contract" : "success", expect_reject ? csa_contract_name(code) : "");
    fail_row(x, LANE_ORACLE, step, "fail", msg);
  }
  return 1;
}

/*
** The whole chain once: the oracle's step is the reference for the eager
** chain and the capture chain in the same pass.  The eager chain always runs
** on the device (it is the warm pass capture needs); its row is kept only if
** asked for.  The capture chain starts from the eager chain's state at the
** capture step.
*/
static void run_chain(csa_ctx *x) {
  lane_mask want = x->env->lanes;
  int device = x->env->rt && (want & (LANE_BIT(LANE_EAGER) | LANE_BIT(LANE_CAPTURE)));
  int capture_at = device && (want & LANE_BIT(LANE_CAPTURE)) ? capture_step(x) : -1;
  int code = 0, expect_reject = cases_csa_expected(&x->c, &code), step, ended = 0, n_rows, oracle_rows;
  int oracle_done = 0;
  device_chain eager, captured;
  device_csa128 *k = NULL;
  csa_past ref;
  char err[700];
  memset(&eager, 0, sizeof eager);
  memset(&captured, 0, sizeof captured);
  memset(&ref, 0, sizeof ref);
  eager.active = device;
  captured.active = capture_at >= 0;
  for (step = 0; step < x->steps && !ended; step++) {
    csa_step s;
    if (step_load(x, step, &s, &ref, err, sizeof err) != 0) {
      fail_row(x, LANE_ORACLE, step, "fail", err);
      oracle_done = 1;
      step_free(&s);
      break;
    }
    step_plug(&s, &ref);
    step_oracle(&s, x, step);
    oracle_rows = x->report->n;
    ended = (want & LANE_BIT(LANE_ORACLE)) ? oracle_check(x, &s, step, expect_reject, code) : s.rc != 0;
    if (x->report->n != oracle_rows) oracle_done = 1;
    if (step == 0 && device) {
      if (tensor_copy(&eager.past.cache, &ref.cache) || tensor_copy(&eager.past.carry, &ref.carry) ||
          device_csa128_create(x->env->rt, &s.attrs, &k, err, sizeof err) != 0) {
        fail_row(x, LANE_EAGER, 0, "fail", k ? "out of memory" : err);
        eager.active = captured.active = 0;
      }
    }
    if (captured.active && step == capture_at) {
      if (eager.done_steps != step || tensor_copy(&captured.past.cache, &eager.past.cache) ||
          tensor_copy(&captured.past.carry, &eager.past.carry)) {
        snprintf(add_row(x, LANE_CAPTURE, step, "skipped")->message, sizeof err,
                 "the eager chain did not reach step %d", step);
        captured.active = 0;
      }
    }
    if (captured.active && step >= capture_at && chain_step(x, LANE_CAPTURE, k, &captured, &s, step, step == capture_at))
      captured.active = 0;
    n_rows = x->report->n;
    if (eager.active) {
      int rc = chain_step(x, LANE_EAGER, k, &eager, &s, step, 0);
      if (rc != 0) eager.active = 0;
      if (rc == 1 && !(want & LANE_BIT(LANE_EAGER))) x->report->n = n_rows; /* agreement, not asked for */
    }
    if (!ended && thread_past(&ref, s.out) != 0) ended = 1;
    step_free(&s);
  }
  if ((want & LANE_BIT(LANE_ORACLE)) && !oracle_done && step == x->steps)
    snprintf(add_row(x, LANE_ORACLE, x->steps - 1, "pass")->message, sizeof err, "%d steps", x->steps);
  if (eager.active && (want & LANE_BIT(LANE_EAGER)) && eager.done_steps == x->steps)
    snprintf(add_row(x, LANE_EAGER, x->steps - 1, "pass")->message, sizeof err, "%d steps identical", x->steps);
  if (captured.active && captured.done_steps)
    snprintf(add_row(x, LANE_CAPTURE, x->steps - 1, "pass")->message, sizeof err,
             "captured at step %d, %d replays identical", capture_at, captured.done_steps);
  if (device && (want & LANE_BIT(LANE_CAPTURE)) && capture_at < 0)
    snprintf(add_row(x, LANE_CAPTURE, 0, "skipped")->message, sizeof err, "no decode step to capture");
  chain_close(&eager);
  chain_close(&captured);
  if (k) device_csa128_destroy(k);
  past_free(&ref);
}

int run_csa128(runner_env *env, const char *case_id, const char *spec, case_report *out) {
  csa_ctx x;
  char err[512];
  memset(&x, 0, sizeof x);
  x.env = env;
  x.id = case_id;
  x.report = out;
  if (cases_csa_parse(spec, &x.c, err, sizeof err) != 0) {
    fail_row(&x, LANE_ORACLE, 0, "fail", err);
    return -1;
  }
  x.steps = cases_csa_steps(&x.c);
  run_chain(&x);
  return 0;
}

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
** first payload that differs.  When a device lane finds a mismatch,
** is_localise replays the step stage by stage and names the first stage
** whose own output differs.  The payload capture, that comparison and the
** replay live in run_index_share_stages.c; this file holds the lanes.
*/
#include "harness/run_index_share.h"
#include "harness/run_index_share_stages.h"
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

static int step_load(const is_case *c, int step, is_step *s, int want_stages, char *err, size_t len) {
  memset(s, 0, sizeof *s);
  s->want_stages = want_stages;
  if (cases_is_materialize(c, step, s->in, &s->n_in, s->out, &s->n_out, &s->attrs, err, len) != 0) return -1;
  is_step_oracle(s);
  return 0;
}

static void step_free(is_step *s) {
  is_stages_free(s);
  cases_is_release(s->in, s->out);
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
  is_stages_hand(x, 0, s0->stage, "oracle");
  for (step = 1; lane_on && (env->oracle_outcome || env->payload) && step < x->c.steps; step++) {
    is_step s;
    if (step_load(&x->c, step, &s, env->payload != NULL, err, sizeof err) != 0) {
      result_row *row = add_row(x, LANE_ORACLE, step, "fail");
      snprintf(row->message, sizeof row->message, "step %d: %s", step, err);
      finish_row(x, row);
    } else {
      case_oracle_outcome(env, x->id, step, s.rc, &s.err, s.out, output_names, s.n_out);
      is_stages_hand(x, step, s.stage, "oracle");
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

/* ---- eager, capture and poison lanes ----------------------------------------------- */

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
  row->device_ms = is_ms_since(&t0);
  if (rc == DEVICE_IS_OK && collect(x, io, k, dev_out, row) != 0) {
    finish_row(x, row);
    return DEVICE_IS_FAILED;
  }
  if (rc != DEVICE_IS_OK) memset(dev_out, 0, sizeof dev_out);
  row->oracle_ms = s0->ms;
  if (rc == DEVICE_IS_OK && s0->rc == 0) is_stages_compare(x, k, row, s0);
  if (!strcmp(row->status, "pass")) compare_into(row, s0, rc, &derr, dev_out);
  if (!strcmp(row->status, "mismatch")) is_localise(x, row, s0);
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
  row->device_ms = is_ms_since(&t0);
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
    if (!strcmp(row->status, "mismatch")) is_localise(x, row, ref);
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
  s0->want_stages = 0; /* the reruns below: payloads only when is_localise asks */
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
    is_step_oracle(s0);
    if (device_io_upload(io, IS_IN_INDICES, &poisoned) == 0)
      replay_row(x, k, g, io, s0, LANE_POISON, POISON_STEP + rule, 0);
    s0->in[IS_IN_INDICES] = clean;
    is_step_oracle(s0);
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
      device_index_share_create_variant(rt, &s0->attrs, x->env->variant, &k, err, sizeof err) != 0) {
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

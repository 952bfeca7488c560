/*
** case_runner.c: lane bookkeeping and dispatch by family (see case_runner.h).
*/
#include "harness/case_runner.h"
#include "cases/case_spec.h"
#include "cases/csa128_cases.h"
#include "cases/csa4_cases.h"
#include "cases/index_share_cases.h"
#include "harness/run_csa128.h"
#include "harness/run_csa4.h"
#include "harness/diff.h"
#include "harness/run_index_share.h"
#include "harness/store.h"
#include "oracle/op_error.h"
#include "oracle/tensor.h"

#include <stdio.h>
#include <string.h>

static const char *const lane_names[LANE_COUNT] = {"oracle", "eager", "capture", "poison"};

const char *lane_name(lane l) { return (unsigned)l < LANE_COUNT ? lane_names[l] : "?"; }

int lane_mask_parse(const char *list, lane_mask *out, char *err, size_t err_len) {
  const char *item = list;
  int l;
  *out = 0;
  for (;;) { /* by hand, not strtok: an empty item ('oracle,,eager') is a mistake to name, not to skip */
    const size_t len = strcspn(item, ",");
    for (l = 0; l < LANE_COUNT && (strlen(lane_names[l]) != len || strncmp(item, lane_names[l], len)); l++) {}
    if (l == LANE_COUNT) {
      if (len == 0) snprintf(err, err_len, "an empty lane name in '%s' (lanes: oracle, eager, capture, poison)", list);
      else snprintf(err, err_len, "unknown lane '%.*s' (lanes: oracle, eager, capture, poison)", (int)len, item);
      return -1;
    }
    *out |= LANE_BIT(l);
    if (!item[len]) return 0;
    item += len + 1;
  }
}

result_row *case_report_add(case_report *r, lane l, int step, const char *status) {
  result_row *row;
  if (r->n >= CASE_MAX_ROWS) return NULL;
  row = &r->rows[r->n++];
  memset(row, 0, sizeof *row);
  snprintf(row->lane, sizeof row->lane, "%s", lane_name(l));
  snprintf(row->status, sizeof row->status, "%s", status);
  row->step = step;
  row->flat_offset = row->ulp_distance = -1;
  row->oracle_ms = row->device_ms = -1.0;
  return row;
}

void case_report_add_failure(case_report *r, lane l, int step, const char *status, const char *tensor_name,
                             const char *msg) {
  result_row *row = NULL;
  int i;
  for (i = 0; i < r->n && !row; i++)
    if (r->rows[i].step == step && !strcmp(r->rows[i].lane, lane_name(l))) row = &r->rows[i];
  if (row && strcmp(row->status, "pass")) {
    size_t used = strlen(row->message);
    snprintf(row->message + used, sizeof row->message - used, "%s%s", used ? "; " : "", msg);
    return;
  }
  r->failed++;
  if (!row && !(row = case_report_add(r, l, step, status))) return;
  snprintf(row->status, sizeof row->status, "%s", status);
  snprintf(row->tensor, sizeof row->tensor, "%s", tensor_name);
  snprintf(row->message, sizeof row->message, "%s", msg);
}

int case_check_spec(const char *spec, char *err, size_t err_len) {
  char family[64] = "";
  is_case c;
  csa_case cc;
  csa4_case c4;
  case_spec_get(spec, "family", family, sizeof family);
  if (!strncmp(family, "is.", 3)) return cases_is_parse(spec, &c, err, err_len);
  if (!strncmp(family, "csa128.", 7)) return cases_csa_parse(spec, &cc, err, err_len);
  if (!strncmp(family, "csa4.", 5)) return cases_csa4_parse(spec, &c4, err, err_len);
  snprintf(err, err_len, "token 'family=%s': no generator for this family in this build", family);
  return -1;
}

int runner_env_set_variant(runner_env *env, const char *text) {
  device_variant v = DEVICE_VARIANT_FAST;
  const int both = !strcmp(text, "both");
  if (!both && device_variant_parse(text, &v) != 0) return -1;
  if (env) env->variant = v, env->both_variants = both;
  return 0;
}

static int case_run_variant(runner_env *env, const char *case_id, const char *spec, case_report *out);

/*
** --variant both (runner_env_set_variant): the fast pass into out, then the
** device lanes with the reference kernels, appended as LANE@ref rows.
*/
static int case_run_both(runner_env *env, const char *case_id, const char *spec, case_report *out) {
  static case_report ref; /* large; case_run is not reentrant anyway (suite_run.c's static reports) */
  runner_env renv = *env;
  int rc = case_run_variant(env, case_id, spec, out), i, j;
  renv.variant = DEVICE_VARIANT_REFERENCE;
  renv.both_variants = 0;
  renv.lanes &= ~LANE_BIT(LANE_ORACLE);
  renv.payload = NULL, renv.oracle_outcome = NULL; /* the fast pass already handed them over */
  case_run_variant(&renv, case_id, spec, &ref);
  for (i = 0; i < ref.n; i++) {
    const result_row *fast = NULL;
    result_row *row;
    for (j = 0; j < out->n && !fast; j++)
      if (!strcmp(out->rows[j].lane, ref.rows[i].lane) && out->rows[j].step == ref.rows[i].step) fast = &out->rows[j];
    if (out->n == CASE_MAX_ROWS) { /* no room left: the last row says so, and the case fails */
      row = &out->rows[CASE_MAX_ROWS - 1];
      snprintf(row->status, sizeof row->status, "fail");
      snprintf(row->message, sizeof row->message, "--variant both: more than %d rows; run --variant reference alone",
               CASE_MAX_ROWS);
      out->failed++;
      break;
    }
    row = &out->rows[out->n++];
    *row = ref.rows[i];
    snprintf(row->lane, sizeof row->lane, "%.11s@ref", ref.rows[i].lane);
    if (strstr(row->message, "; repro: bitgate repro ")) { /* the repro ends the message: rerun these kernels */
      size_t used = strlen(row->message);
      snprintf(row->message + used, sizeof row->message - used, " --variant reference");
    }
    if (fast && strcmp(fast->status, row->status)) {
      char note[80]; /* composed apart: the statuses live in the report being written */
      size_t used = strlen(row->message);
      snprintf(note, sizeof note, "variants disagree: fast %s, reference %s", fast->status, ref.rows[i].status);
      snprintf(row->message + used, sizeof row->message - used, "%s%s", used ? "; " : "", note);
    }
  }
  out->failed += ref.failed;
  return rc;
}

int case_run(runner_env *env, const char *case_id, const char *spec, case_report *out) {
  if (env->both_variants && env->rt && (env->lanes & ~LANE_BIT(LANE_ORACLE)))
    return case_run_both(env, case_id, spec, out);
  return case_run_variant(env, case_id, spec, out);
}

/* One case with env->variant's kernels. */
static int case_run_variant(runner_env *env, const char *case_id, const char *spec, case_report *out) {
  char family[64] = "";
  result_row *row;
  memset(out, 0, sizeof *out);
  case_spec_get(spec, "family", family, sizeof family);
  if (!strncmp(family, "is.", 3)) return run_index_share(env, case_id, spec, out);
  if (!strncmp(family, "csa128.", 7)) return run_csa128(env, case_id, spec, out);
  if (!strncmp(family, "csa4.", 5)) return run_csa4(env, case_id, spec, out);
  row = case_report_add(out, LANE_ORACLE, 0, "fail");
  snprintf(row->message, sizeof row->message, "no generator for family '%s' in this build; repro: bitgate repro %s",
           family, case_id);
  out->failed = 1;
  return -1;
}

void case_oracle_outcome(const runner_env *env, const char *case_id, int step, int rc, const op_error *err,
                         const tensor *outputs, const char *const *names, int n_out) {
  if (!env->oracle_outcome || !(env->lanes & LANE_BIT(LANE_ORACLE))) return;
  if (rc != 0)
    env->oracle_outcome(env->oracle_outcome_ctx, case_id, step, NULL, NULL, 0, err);
  else
    env->oracle_outcome(env->oracle_outcome_ctx, case_id, step, outputs, names, n_out, NULL);
}

void result_row_set_mismatch(result_row *row, const char *name, const tensor_diff *d) {
  snprintf(row->status, sizeof row->status, "mismatch");
  row->has_mismatch = 1;
  snprintf(row->tensor, sizeof row->tensor, "%s", name);
  row->flat_offset = d->first_offset;
  snprintf(row->coords, sizeof row->coords, "%s", d->coords);
  snprintf(row->expected_hex, sizeof row->expected_hex, "%s", d->expected_hex);
  snprintf(row->actual_hex, sizeof row->actual_hex, "%s", d->actual_hex);
  row->ulp_distance = d->ulp_distance;
  row->mismatch_count = d->mismatches;
  row->nan_equivalent = d->nan_equivalent;
  tensor_diff_describe(d, name, row->message, sizeof row->message);
  if (strstr(d->actual_hex, "a5a5"))
    strncat(row->message, " (device value is the junk fill: never written?)",
            sizeof row->message - strlen(row->message) - 1);
}

void result_row_set_localised(result_row *row, const char *stage, const char *detail) {
  static const char marker[] = "; repro: ";
  char tail[400] = "", *at = strstr(row->message, marker);
  size_t used;
  const int named = stage && *stage, has_detail = detail && *detail;
  if (named) snprintf(row->stage, sizeof row->stage, "%s", stage);
  if (at) {
    snprintf(tail, sizeof tail, "%s", at);
    *at = '\0';
  }
  used = strlen(row->message);
  if (named)
    snprintf(row->message + used, sizeof row->message - used, "; localised: stage %s diverges on the oracle's inputs%s%.300s%s",
             stage, has_detail ? " (" : "", has_detail ? detail : "", has_detail ? ")" : "");
  else
    snprintf(row->message + used, sizeof row->message - used, "; localised: %.300s", has_detail ? detail : "no stage");
  used = strlen(row->message);
  if (used + strlen(tail) >= sizeof row->message) used = sizeof row->message - 1 - strlen(tail);
  snprintf(row->message + used, sizeof row->message - used, "%s", tail); /* the repro stays whole, at the end */
}

void case_report_to_store(const case_report *r, const char *case_id, store_result *rows) {
  int i;
  for (i = 0; i < r->n; i++) {
    const result_row *x = &r->rows[i];
    store_result *s = &rows[i];
    memset(s, 0, sizeof *s);
    s->case_id = case_id;
    s->lane = x->lane;
    s->step = x->step;
    s->status = x->status;
    s->has_mismatch = x->has_mismatch;
    s->tensor = x->tensor;
    s->flat_offset = x->flat_offset;
    s->coords = x->coords;
    s->expected_hex = x->expected_hex;
    s->actual_hex = x->actual_hex;
    s->ulp_distance = x->ulp_distance;
    s->mismatch_count = x->mismatch_count;
    s->nan_equivalent_count = x->nan_equivalent;
    s->oracle_ms = x->oracle_ms;
    s->device_ms = x->device_ms;
    s->message = x->message[0] ? x->message : NULL;
    s->stage = x->stage[0] ? x->stage : NULL;
  }
}

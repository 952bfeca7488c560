/*
** repeat.c: see repeat.h.  Every device row of every repeat is held to the
** first run's row of the same lane and step; the first difference a row
** shows is the one recorded (later repeats cannot make it less wrong).
*/
#include "harness/repeat.h"
#include "harness/gate.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEVICE_LANES (LANE_ALL & ~LANE_BIT(LANE_ORACLE))

/* The fields compared, as a table so none is forgotten. */
static const struct {
  const char *name;
  size_t offset;
} text_fields[] = {
    {"status", offsetof(result_row, status)},           {"tensor", offsetof(result_row, tensor)},
    {"coords", offsetof(result_row, coords)},           {"expected_hex", offsetof(result_row, expected_hex)},
    {"actual_hex", offsetof(result_row, actual_hex)},   {"stage", offsetof(result_row, stage)},
    {"message", offsetof(result_row, message)},
};
static const struct {
  const char *name;
  size_t offset;
} count_fields[] = {
    {"flat_offset", offsetof(result_row, flat_offset)},
    {"ulp_distance", offsetof(result_row, ulp_distance)},
    {"mismatch_count", offsetof(result_row, mismatch_count)},
    {"nan_equivalent", offsetof(result_row, nan_equivalent)},
};

#define FIELD(row, type, off) ((const type *)((const char *)(row) + (off)))

static result_row *row_find(case_report *r, const char *lane_text, int step) {
  int i;
  for (i = 0; i < r->n; i++)
    if (r->rows[i].step == step && !strcmp(r->rows[i].lane, lane_text)) return &r->rows[i];
  return NULL;
}

static void put(char *out, size_t len, const char *fmt, const char *name, const char *a, const char *b) {
  size_t used = strlen(out);
  if (used < len) snprintf(out + used, len - used, fmt, used ? ", " : "", name, a, b);
}

/* Describes in out ("" when equal) every compared field where a and b differ. */
static void row_differences(const result_row *a, const result_row *b, char *out, size_t len) {
  char x[32], y[32];
  size_t i;
  out[0] = '\0';
  for (i = 0; i < sizeof text_fields / sizeof *text_fields; i++) {
    const char *s = FIELD(a, char, text_fields[i].offset), *t = FIELD(b, char, text_fields[i].offset);
    if (strcmp(s, t) == 0) continue;
    if (!strcmp(text_fields[i].name, "message")) /* long: its text follows in the row */
      put(out, len, "%s%s%s%s", "message", "", "");
    else
      put(out, len, "%s%s (%.40s vs %.40s)", text_fields[i].name, s, t);
  }
  for (i = 0; i < sizeof count_fields / sizeof *count_fields; i++) {
    long long s = *FIELD(a, long long, count_fields[i].offset), t = *FIELD(b, long long, count_fields[i].offset);
    if (s == t) continue;
    snprintf(x, sizeof x, "%lld", s);
    snprintf(y, sizeof y, "%lld", t);
    put(out, len, "%s%s (%s vs %s)", count_fields[i].name, x, y);
  }
}

/* How much of message to quote: at most 160 bytes, without its "; repro: ..." tail (the new message has its own). */
static int message_quote_len(const char *message) {
  const char *at = strstr(message, "repro: ");
  int n;
  if (!at) at = message + strlen(message);
  while (at > message && (at[-1] == ' ' || at[-1] == ';')) at--;
  n = (int)(at - message);
  return n > 160 ? 160 : n;
}

/* Appends "; repeat K: STATUS: MESSAGE" for row x to msg (used bytes so far); returns the new length. */
static int quote_row(char *msg, size_t len, int used, int k, const result_row *x) {
  if ((size_t)used >= len) return used;
  return used + snprintf(msg + used, len - (size_t)used, "; repeat %d: %s%s%.*s", k, x->status,
                         x->message[0] ? ": " : "", message_quote_len(x->message), x->message);
}

/*
** Makes row (the first run's, or a new one) nondeterministic: what says how
** repeat k of n differs; first is what repeat 1 recorded (NULL: no row),
** repeat_row what repeat k did (NULL: no row).
*/
static void row_mark(result_row *row, const char *case_id, int k, int n, const char *what, const result_row *first,
                     const result_row *repeat_row) {
  char msg[sizeof row->message];
  int used = snprintf(msg, sizeof msg, "nondeterministic: repeat %d of %d differs from repeat 1: %.200s", k, n, what);
  if (first) used = quote_row(msg, sizeof msg, used, 1, first);
  if (repeat_row) used = quote_row(msg, sizeof msg, used, k, repeat_row);
  if ((size_t)used > sizeof msg - 120) used = (int)(sizeof msg - 120); /* keep the repro whole */
  snprintf(msg + used, sizeof msg - (size_t)used, "; repro: bitgate repro %s --lanes %s (run it several times)",
           case_id, row->lane);
  snprintf(row->status, sizeof row->status, "nondeterministic");
  memcpy(row->message, msg, sizeof msg);
}

static lane lane_from_name(const char *name) {
  int l;
  for (l = 0; l < LANE_COUNT && strcmp(lane_name((lane)l), name); l++) {}
  return (lane)l;
}

/* Holds repeat k (rep) to the first run (first); marks rows of out. */
static void compare_repeat(case_report *out, const case_report *first, case_report *rep, const char *case_id, int k,
                           int n) {
  char what[400];
  int i;
  for (i = 0; i < rep->n; i++) {
    const result_row *b = &rep->rows[i];
    result_row *a = row_find((case_report *)first, b->lane, b->step), *dst = row_find(out, b->lane, b->step);
    if (!strcmp(b->lane, lane_name(LANE_ORACLE)) || (dst && !strcmp(dst->status, "nondeterministic"))) continue;
    if (!a) {
      snprintf(what, sizeof what, "a row repeat 1 did not have");
      if (!dst && !(dst = case_report_add(out, lane_from_name(b->lane), b->step, "nondeterministic"))) continue;
    } else {
      row_differences(a, b, what, sizeof what);
      if (!what[0]) continue;
    }
    row_mark(dst, case_id, k, n, what, a, b);
  }
  for (i = 0; i < first->n; i++) {
    const result_row *a = &first->rows[i];
    result_row *dst = row_find(out, a->lane, a->step);
    if (!strcmp(a->lane, lane_name(LANE_ORACLE)) || row_find(rep, a->lane, a->step) || !dst ||
        !strcmp(dst->status, "nondeterministic"))
      continue;
    row_mark(dst, case_id, k, n, "no row for this lane and step", a, NULL);
  }
}

static void recount_failed(case_report *r) {
  int i;
  r->failed = 0;
  for (i = 0; i < r->n; i++) r->failed += gate_status_fails(r->rows[i].status);
}

int case_run_repeated(runner_env *env, const char *case_id, const char *spec, int repeats, case_runner_fn runner,
                      case_report *out) {
  const runner_env saved = *env;
  case_report *first = NULL, *rep = NULL;
  int rc, k;
  if (!runner) runner = case_run;
  rc = runner(env, case_id, spec, out);
  if (repeats <= 1 || rc != 0 || !(env->lanes & DEVICE_LANES)) return rc;
  first = malloc(sizeof *first);
  rep = malloc(sizeof *rep);
  if (!first || !rep) {
    result_row *row = case_report_add(out, LANE_EAGER, -1, "fail");
    if (row) snprintf(row->message, sizeof row->message, "--repeat: out of memory; repro: bitgate repro %s", case_id);
    out->failed++;
    rc = -1;
    goto done;
  }
  memcpy(first, out, sizeof *first);
  env->lanes &= DEVICE_LANES; /* the oracle lane and the sinks ran in pass 1 */
  env->payload = NULL;
  env->oracle_outcome = NULL;
  for (k = 2; k <= repeats; k++) {
    runner(env, case_id, spec, rep);
    compare_repeat(out, first, rep, case_id, k, repeats);
  }
  recount_failed(out);
done:
  *env = saved;
  free(first);
  free(rep);
  return rc;
}

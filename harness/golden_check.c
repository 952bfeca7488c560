/*
** golden_check.c: stage payloads against the golden store (golden_check.h).
*/
#include "harness/golden_check.h"
#include "harness/frozen_oracle.h"
#include "harness/store.h"
#include "oracle/oracle_version.h"
#include "oracle/tensor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SOURCE_ORACLE = 0, SOURCE_DEVICE = 1 };
enum { LOADED = 0, ABSENT = 1, CORRUPT = 2, STORE_ERROR = -1 };

#define DIGEST_MAX 128

int golden_check_open(golden_check *g, const char *path, char *err, size_t err_len) {
  memset(g, 0, sizeof *g);
  snprintf(g->path, sizeof g->path, "%s", path);
  return store_open(path, &g->golden, err, err_len) ? -1 : 0;
}

/* "2,3,4" for t's shape. */
static void shape_text(const tensor *t, char *out, size_t len) {
  size_t used = 0;
  int d;
  out[0] = '\0';
  for (d = 0; d < t->rank && used < len; d++)
    used += (size_t)snprintf(out + used, len - used, d ? ",%lld" : "%lld", t->shape[d]);
}

/* Parses a stored dtype and "2,3,4" shape into t (data NULL); 0, or -1. */
static int tensor_from_text(const char *dt, const char *shape, tensor *t) {
  const char *p = shape;
  char *end;
  memset(t, 0, sizeof *t);
  if ((t->dt = dtype_parse(dt)) == DTYPE_NONE) return -1;
  while (*p) {
    if (t->rank == TENSOR_MAX_RANK) return -1;
    errno = 0;
    t->shape[t->rank] = strtoll(p, &end, 10);
    if (end == p || errno || t->shape[t->rank] < 0) return -1;
    t->rank++;
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return 0;
}

/*
** Reads the stored oracle-keyed payload (source src) and verifies it: its
** digest into digest.  LOADED, ABSENT, CORRUPT (why says how) or STORE_ERROR.
*/
static int golden_load(golden_check *g, const char *id, int step, const char *stage, const char *src,
                       char *digest, char *why, size_t why_len) {
  char dt[16], shape[256], value[DIGEST_MAX];
  void *data = NULL;
  size_t n = 0;
  tensor t;
  int rc = store_golden_describe(g->golden, id, step, stage, stage, src, ORACLE_VERSION, dt, sizeof dt, shape,
                                 sizeof shape, digest, DIGEST_MAX);
  if (rc != 0) return rc == 1 ? ABSENT : STORE_ERROR;
  if (store_golden_get(g->golden, id, step, stage, stage, src, ORACLE_VERSION, &data, &n) != 0) {
    snprintf(why, why_len, "bad blob: %.300s", store_errmsg(g->golden));
    return CORRUPT;
  }
  rc = CORRUPT;
  if (tensor_from_text(dt, shape, &t) != 0) {
    snprintf(why, why_len, "unreadable dtype '%.15s' or shape '%.200s'", dt, shape);
  } else if (tensor_bytes(&t) != n) {
    snprintf(why, why_len, "wrong length: %zu bytes, %s[%.200s] needs %zu", n, dt, shape, tensor_bytes(&t));
  } else {
    t.data = data;
    frozen_oracle_tensor_value(&t, value, sizeof value);
    if (strcmp(value, digest) != 0) snprintf(why, why_len, "digest on read %s, stored %.128s", value, digest);
    else rc = LOADED;
  }
  free(data);
  return rc;
}

static void note_finding(golden_check *g, int src, int step, const char *stage, int corrupt, const char *why) {
  golden_finding *f = &g->first[src];
  if (f->found) return;
  f->found = 1;
  f->step = step;
  f->corrupt = corrupt;
  snprintf(f->stage, sizeof f->stage, "%s", stage);
  snprintf(f->why, sizeof f->why, "%s", why);
}

static void note_store_error(golden_check *g) {
  if (!g->store_failed) snprintf(g->store_error, sizeof g->store_error, "%s", store_errmsg(g->golden));
  g->store_failed = 1;
}

/* Stores t under (id, step, stage, src); counts it in *count. */
static void golden_store(golden_check *g, const char *id, int step, const char *stage, const char *src,
                         const tensor *t, const char *value, long long *count) {
  char shape[256];
  shape_text(t, shape, sizeof shape);
  if (store_golden_put(g->golden, id, step, stage, stage, src, ORACLE_VERSION, dtype_name(t->dt), shape, t->data,
                       t->data ? tensor_bytes(t) : 0, value, 0) != 0)
    note_store_error(g);
  else
    (*count)++;
}

/* The payload sink: see the file comment of golden_check.h. */
static void on_payload(void *ctx, const char *id, int step, const char *stage, const char *source,
                       const tensor *t) {
  golden_check *g = ctx;
  char value[DIGEST_MAX], stored[DIGEST_MAX], why[384];
  int src = strcmp(source, "device") ? SOURCE_ORACLE : SOURCE_DEVICE;
  int rc = golden_load(g, id, step, stage, "oracle", stored, why, sizeof why);
  frozen_oracle_tensor_value(t, value, sizeof value);
  if (rc == ABSENT)
    golden_store(g, id, step, stage, src == SOURCE_ORACLE ? "oracle" : "device", t, value,
                 src == SOURCE_ORACLE ? &g->stored : &g->device_stored);
  else if (rc == STORE_ERROR)
    note_store_error(g);
  else if (rc == CORRUPT)
    note_finding(g, src, step, stage, 1, why);
  else if (g->compared++, strcmp(value, stored) != 0)
    note_finding(g, src, step, stage, 0, "");
}

void golden_check_attach(golden_check *g, runner_env *env) {
  env->payload = on_payload;
  env->payload_ctx = g;
}

void golden_check_begin_case(golden_check *g, const char *case_id, const char *op, const char *family,
                             const char *spec) {
  if (store_case_put(g->golden, case_id, op, family, spec, 0) != 0) note_store_error(g);
}

static void add_failure(golden_check *g, const char *id, const golden_finding *f, const char *source,
                        const char *msg) {
  golden_failure *x;
  if (g->n_failures == g->cap_failures) {
    long long cap = g->cap_failures ? 2 * g->cap_failures : 16;
    golden_failure *p = realloc(g->failures, (size_t)cap * sizeof *p);
    if (!p) return; /* the row in the results store still names it */
    g->failures = p;
    g->cap_failures = cap;
  }
  x = &g->failures[g->n_failures++];
  snprintf(x->case_id, sizeof x->case_id, "%s", id);
  snprintf(x->kind, sizeof x->kind, "%s", f->corrupt ? "corrupt" : "divergence");
  snprintf(x->stage, sizeof x->stage, "%s", f->stage);
  snprintf(x->source, sizeof x->source, "%s", source);
  x->step = f->step;
  snprintf(x->message, sizeof x->message, "%s", msg);
}

void golden_check_end_case(golden_check *g, const char *case_id, case_report *r) {
  static const char *const sources[2] = {"oracle", "device"};
  char msg[700];
  int s, diverged = 0, corrupt = 0;
  for (s = 0; s < 2; s++) {
    const golden_finding *f = &g->first[s];
    lane l = s == SOURCE_ORACLE ? LANE_ORACLE : LANE_EAGER;
    if (!f->found) continue;
    if (f->corrupt)
      snprintf(msg, sizeof msg, "golden corrupt: case %s stage %s step %d (source %s): %s", case_id, f->stage,
               f->step, sources[s], f->why);
    else
      snprintf(msg, sizeof msg, "golden boundary: first divergence at stage %s (tensor %s, step %d, source %s); "
               "repro: bitgate repro %s --lanes %s", f->stage, f->stage, f->step, sources[s], case_id, lane_name(l));
    case_report_add_failure(r, l, f->step, f->corrupt ? "fail" : "mismatch", f->stage, msg);
    add_failure(g, case_id, f, sources[s], msg);
    corrupt |= f->corrupt;
    diverged |= !f->corrupt;
  }
  if (g->store_failed) {
    snprintf(msg, sizeof msg, "golden store: %.600s", g->store_error);
    case_report_add_failure(r, LANE_ORACLE, 0, "fail", "", msg);
    g->store_errors++;
  }
  g->cases_diverged += diverged;
  g->cases_corrupt += corrupt;
  memset(g->first, 0, sizeof g->first);
  g->store_failed = 0;
}

void golden_check_close(golden_check *g) {
  store_close(g->golden);
  g->golden = NULL;
  free(g->failures);
  g->failures = NULL;
}

/*
** golden_check.c: stage payloads against the golden store (golden_check.h).
*/
#include "harness/golden_check.h"
#include "harness/frozen_oracle.h"
#include "harness/parallel.h"
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
  g->threads = parallel_default_threads();
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

/*
** New payloads wait in g->pending until the case ends (or they pass
** PENDING_FLUSH_BYTES): then store_golden_put_many compresses them on every
** core and writes them in one transaction.  Pinning is dominated by zlib
** (store_golden.c), so this is what keeps the first nightly short.
*/
#define PENDING_FLUSH_BYTES ((size_t)256 << 20)

struct golden_pending {
  int step, src;
  char stage[64], dtype[16], shape[256], digest[DIGEST_MAX];
  void *data;
  size_t n;
};

static void pending_flush(golden_check *g) {
  store_golden_item *items = calloc((size_t)g->n_pending + 1, sizeof *items);
  long long i, oracle = 0;
  if (!items) {
    snprintf(g->store_error, sizeof g->store_error, "out of memory writing %lld golden payloads", g->n_pending);
    g->store_failed = 1;
  }
  for (i = 0; items && i < g->n_pending; i++) {
    const golden_pending *p = &g->pending[i];
    store_golden_item it = {g->case_id, p->step, p->stage, p->stage, p->src ? "device" : "oracle", ORACLE_VERSION,
                            p->dtype, p->shape, p->data, p->n, p->digest, 0};
    items[i] = it;
    oracle += !p->src;
  }
  if (items && g->n_pending && store_golden_put_many(g->golden, items, (int)g->n_pending, g->threads) != 0)
    note_store_error(g);
  else if (items) {
    g->stored += oracle;
    g->device_stored += g->n_pending - oracle;
  }
  for (i = 0; i < g->n_pending; i++) free(g->pending[i].data);
  g->n_pending = 0;
  g->pending_bytes = 0;
  free(items);
}

/* Queues t to be stored under (case, step, stage, src). */
static void golden_store(golden_check *g, int step, const char *stage, int src, const tensor *t, const char *value) {
  golden_pending *p;
  size_t n = t->data ? tensor_bytes(t) : 0;
  if (g->n_pending == g->cap_pending) {
    long long cap = g->cap_pending ? 2 * g->cap_pending : 64;
    golden_pending *q = realloc(g->pending, (size_t)cap * sizeof *q);
    if (!q) {
      note_store_error(g);
      return;
    }
    g->pending = q;
    g->cap_pending = cap;
  }
  p = &g->pending[g->n_pending];
  memset(p, 0, sizeof *p);
  if (n && !(p->data = malloc(n))) {
    note_store_error(g);
    return;
  }
  if (n) memcpy(p->data, t->data, n);
  p->n = n;
  p->step = step;
  p->src = src;
  snprintf(p->stage, sizeof p->stage, "%s", stage);
  snprintf(p->dtype, sizeof p->dtype, "%s", dtype_name(t->dt));
  shape_text(t, p->shape, sizeof p->shape);
  snprintf(p->digest, sizeof p->digest, "%s", value);
  g->n_pending++;
  g->pending_bytes += n;
  if (g->pending_bytes >= PENDING_FLUSH_BYTES) pending_flush(g);
}

/* The digest of the oracle payload (step, stage) still queued, or NULL; the device's follows it closely. */
static const char *pending_oracle_digest(const golden_check *g, int step, const char *stage) {
  long long i;
  for (i = g->n_pending - 1; i >= 0; i--) {
    const golden_pending *p = &g->pending[i];
    if (!p->src && p->step == step && !strcmp(p->stage, stage)) return p->digest;
  }
  return NULL;
}

/*
** An oracle payload read back and verified in this case: the device's
** payload of the same key follows soon and needs only the digest, so its
** blob is not decompressed and hashed a second time.
*/
struct golden_verified {
  int step;
  char stage[64], digest[DIGEST_MAX];
};

static void remember_verified(golden_check *g, int step, const char *stage, const char *digest) {
  golden_verified *v;
  if (g->n_verified == g->cap_verified) {
    long long cap = g->cap_verified ? 2 * g->cap_verified : 64;
    golden_verified *q = realloc(g->verified, (size_t)cap * sizeof *q);
    if (!q) return; /* the device payload reads the blob again */
    g->verified = q;
    g->cap_verified = cap;
  }
  v = &g->verified[g->n_verified++];
  v->step = step;
  snprintf(v->stage, sizeof v->stage, "%s", stage);
  snprintf(v->digest, sizeof v->digest, "%s", digest);
}

static const char *verified_oracle_digest(const golden_check *g, int step, const char *stage) {
  long long i;
  for (i = g->n_verified - 1; i >= 0; i--)
    if (g->verified[i].step == step && !strcmp(g->verified[i].stage, stage)) return g->verified[i].digest;
  return NULL;
}

/* The payload sink: see the file comment of golden_check.h. */
static void on_payload(void *ctx, const char *id, int step, const char *stage, const char *source,
                       const tensor *t) {
  golden_check *g = ctx;
  char value[DIGEST_MAX], stored[DIGEST_MAX], why[384];
  int src = strcmp(source, "device") ? SOURCE_ORACLE : SOURCE_DEVICE, rc = ABSENT;
  const char *known = NULL;
  if (src == SOURCE_DEVICE && !(known = pending_oracle_digest(g, step, stage)))
    known = verified_oracle_digest(g, step, stage);
  frozen_oracle_tensor_value(t, value, sizeof value);
  if (known) {
    snprintf(stored, sizeof stored, "%s", known);
    rc = LOADED;
  } else {
    rc = golden_load(g, id, step, stage, "oracle", stored, why, sizeof why);
    if (rc == LOADED) remember_verified(g, step, stage, stored);
  }
  if (rc == ABSENT)
    golden_store(g, step, stage, src, t, value);
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
  snprintf(g->case_id, sizeof g->case_id, "%s", case_id);
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
  pending_flush(g);
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
  g->n_verified = 0;
}

void golden_check_close(golden_check *g) {
  pending_flush(g);
  free(g->pending);
  g->pending = NULL;
  store_close(g->golden);
  g->golden = NULL;
  free(g->failures);
  g->failures = NULL;
  free(g->verified);
  g->verified = NULL;
}

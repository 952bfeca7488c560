/*
** report_load.c: reads one run of a bitgate database into the report model.
**
** The file is opened read-only and never written: reports may run against a
** database that a run is still filling (WAL lets readers in), or against a
** copy a CI job fetched.  Before anything else it must prove to be bitgate's
** (PRAGMA application_id, harness/store.h) at a schema this code knows;
** results.stage exists from schema 3, so older files read it as NULL.
*/
#include "reports/report_build.h"

#include "harness/store.h" /* STORE_APPLICATION_ID, STORE_SCHEMA_VERSION: the contract */

#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct load_ctx {
  sqlite3 *db;
  const char *path;
  int schema;
  char *err;
  size_t err_len;
} load_ctx;

__attribute__((format(printf, 3, 4))) static report_load_rc load_fail(load_ctx *x, report_load_rc rc,
                                                                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(x->err, x->err_len, fmt, ap);
  va_end(ap);
  return rc;
}

/* One integer from a query without parameters; 0 and *value set, or a SQLite rc. */
static int query_int(load_ctx *x, const char *sql, long long *value, int *is_null) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(x->db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    *value = sqlite3_column_int64(st, 0);
    if (is_null) *is_null = sqlite3_column_type(st, 0) == SQLITE_NULL;
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc;
}

report_load_rc report_db_open(const char *path, sqlite3 **db, int *schema, char *err, size_t err_len) {
  load_ctx x = {.path = path, .err = err, .err_len = err_len};
  struct stat sb;
  long long app_id = 0, version = 0;
  int rc;
  *db = NULL;
  if (stat(path, &sb) != 0)
    return load_fail(&x, REPORT_LOAD_BAD_DB, "cannot open database '%s': %s", path, strerror(errno));
  if (!S_ISREG(sb.st_mode)) return load_fail(&x, REPORT_LOAD_BAD_DB, "database '%s' is not a regular file", path);
  rc = sqlite3_open_v2(path, &x.db, SQLITE_OPEN_READONLY, NULL);
  *db = x.db;
  if (rc == SQLITE_OK) rc = query_int(&x, "PRAGMA application_id", &app_id, NULL);
  if (rc != SQLITE_OK) /* e.g. SQLITE_NOTADB for a text file */
    return load_fail(&x, REPORT_LOAD_BAD_DB, "database '%s' is not readable as SQLite: %s", path,
                     x.db ? sqlite3_errmsg(x.db) : sqlite3_errstr(rc));
  if (app_id != STORE_APPLICATION_ID)
    return load_fail(&x, REPORT_LOAD_BAD_DB, "'%s' is not a bitgate database (application_id 0x%llx, want 0x%x)",
                     path, (unsigned long long)app_id, STORE_APPLICATION_ID);
  rc = query_int(&x, "PRAGMA user_version", &version, NULL);
  if (rc != SQLITE_OK || version < 1 || version > STORE_SCHEMA_VERSION)
    return load_fail(&x, REPORT_LOAD_BAD_DB, "database '%s' has schema %lld; this bitgate reads 1..%d", path,
                     version, STORE_SCHEMA_VERSION);
  *schema = (int)version;
  return REPORT_LOAD_OK;
}

int report_bench_db_open(const char *path, sqlite3 **db, int *schema, FILE *out, char *err, size_t err_len) {
  if (report_db_open(path, db, schema, err, err_len) != REPORT_LOAD_OK) {
    sqlite3_close(*db), *db = NULL;
    return -1;
  }
  if (*schema >= 4) return 1; /* table bench came with schema 4 */
  fprintf(out, "no bench figures in %s (its schema %d predates them)\n", path, *schema);
  sqlite3_close(*db), *db = NULL;
  return 0;
}

/*
** Resolves a run spec to an id: "latest"/NULL (or, for a baseline,
** "previous": the highest id below `below`), else a positive decimal id
** that must exist.  `what` names the option in messages.
*/
static report_load_rc run_resolve(load_ctx *x, const char *spec, const char *what, long long below,
                                  long long *id) {
  char sql[128], *end = NULL;
  long long value = 0, present = 0;
  int is_null = 1;
  int previous = below > 0 && spec && !strcmp(spec, "previous");
  if (!spec || !strcmp(spec, "latest") || previous) {
    snprintf(sql, sizeof sql, "SELECT max(id) FROM runs WHERE id < %lld", previous ? below : LLONG_MAX);
    if (query_int(x, sql, &value, &is_null) != SQLITE_OK)
      return load_fail(x, REPORT_LOAD_BAD_DB, "database '%s': %s", x->path, sqlite3_errmsg(x->db));
    if (is_null && previous)
      return load_fail(x, REPORT_LOAD_BAD_ARG, "%s previous: no run before run %lld in '%s'", what, below, x->path);
    if (is_null) return load_fail(x, REPORT_LOAD_BAD_DB, "database '%s' holds no runs yet", x->path);
    *id = value;
    return REPORT_LOAD_OK;
  }
  errno = 0;
  value = strtoll(spec, &end, 10);
  if (errno || end == spec || *end || value <= 0)
    return load_fail(x, REPORT_LOAD_BAD_ARG, "%s '%s' is not a run id (a positive number, or %s)", what, spec,
                     below > 0 ? "'latest' or 'previous'" : "'latest'");
  snprintf(sql, sizeof sql, "SELECT count(*) FROM runs WHERE id = %lld", value);
  if (query_int(x, sql, &present, NULL) != SQLITE_OK)
    return load_fail(x, REPORT_LOAD_BAD_DB, "database '%s': %s", x->path, sqlite3_errmsg(x->db));
  if (!present) return load_fail(x, REPORT_LOAD_BAD_ARG, "%s %lld: no such run in '%s'", what, value, x->path);
  *id = value;
  return REPORT_LOAD_OK;
}

/* The runs row as name/value fields, every column but id, in schema order. */
static int run_fields_read(load_ctx *x, report *r) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(x->db, "SELECT * FROM runs WHERE id = ?", -1, &st, NULL), i;
  if (rc == SQLITE_OK) sqlite3_bind_int64(st, 1, r->run_id);
  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    for (i = 0; i < sqlite3_column_count(st) && r->field_count < REPORT_FIELDS_MAX; i++) {
      const char *name = sqlite3_column_name(st, i);
      report_field *f;
      if (!strcmp(name, "id")) continue;
      f = &r->fields[r->field_count++];
      f->name = report_pool_strdup(r->pool, name);
      f->value = report_pool_strdup(r->pool, (const char *)sqlite3_column_text(st, i));
    }
  }
  sqlite3_finalize(st);
  r->run_status = report_field_value(r, "status");
  return rc;
}

static const char *col_text(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? (const char *)t : "";
}

/* The command after the last "repro: " of a message (to its end), or "ID --lanes LANE" built. */
static const char *repro_of(report_pool *p, const char *message, const char *case_id, const char *lane) {
  const char *at = NULL, *hit = message;
  char built[512];
  while ((hit = strstr(hit, "repro: ")) != NULL) at = hit, hit += 7;
  if (at) {
    size_t n = strcspn(at + 7, "\r\n");
    char *copy = report_pool_alloc(p, n + 1);
    memcpy(copy, at + 7, n);
    if (n) return copy;
  }
  snprintf(built, sizeof built, "bitgate repro %s --lanes %s", case_id, lane);
  return report_pool_strdup(p, built);
}

/* Statuses that count neither way (store.h); everything but 'pass' and these fails. */
static int status_skips(const char *s) {
  return !strcmp(s, "unavailable") || !strcmp(s, "skipped") || !strcmp(s, "waived");
}

int report_status_fails(const char *s) { return strcmp(s, "pass") != 0 && !status_skips(s); }

static report_outcome outcome_of(const char *status) {
  return report_status_fails(status) ? REPORT_OUTCOME_FAIL
         : status_skips(status)      ? REPORT_OUTCOME_SKIPPED
                                     : REPORT_OUTCOME_PASS;
}

/*
** Folds one result row (a step) into entry e; `fresh` when it is the
** entry's first row.  A failing step outranks a skipped one, which outranks
** a pass (a waived step must never read as passing).  Only the first
** failing step is described: it is where a reader starts.
*/
static void entry_add_row(report_pool *p, report_entry *e, sqlite3_stmt *st, int fresh) {
  const char *status = col_text(st, 5);
  report_outcome o = outcome_of(status);
  e->steps++;
  e->seconds += (sqlite3_column_double(st, 13) + sqlite3_column_double(st, 14)) / 1000.0;
  if (!strcmp(status, "nondeterministic")) e->nondeterministic = 1;
  if (fresh) e->step = -1, e->ulp = -1;
  if (fresh || (o == REPORT_OUTCOME_FAIL && e->outcome != REPORT_OUTCOME_FAIL) ||
      (o == REPORT_OUTCOME_SKIPPED && e->outcome == REPORT_OUTCOME_PASS)) {
    e->status = report_pool_strdup(p, status);
    e->outcome = o;
  }
  if (o != REPORT_OUTCOME_FAIL || e->step >= 0) return; /* not failing, or not the first failing step */
  e->step = sqlite3_column_int(st, 4);
  e->has_mismatch = sqlite3_column_type(st, 6) != SQLITE_NULL;
  e->tensor = report_pool_strdup(p, col_text(st, 6));
  e->flat_offset = sqlite3_column_int64(st, 7);
  e->coords = report_pool_strdup(p, col_text(st, 8));
  e->expected_hex = report_pool_strdup(p, col_text(st, 9));
  e->actual_hex = report_pool_strdup(p, col_text(st, 10));
  e->ulp = sqlite3_column_type(st, 11) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 11);
  e->mismatch_count = sqlite3_column_int64(st, 12);
  e->message = report_pool_strdup(p, col_text(st, 15));
  e->stage = report_pool_strdup(p, col_text(st, 16));
  e->repro = repro_of(p, e->message, e->case_id, e->lane);
}

/* Every case x lane of a run, in report order; *out is pool-owned. */
static int entries_read(load_ctx *x, report_pool *p, long long run_id, report_entry **out, int *count) {
  char sql[1024];
  sqlite3_stmt *st = NULL;
  report_entry *list = NULL, *e = NULL;
  int n = 0, cap = 0, rc;
  snprintf(sql, sizeof sql,
           "SELECT r.case_id, c.op, c.family, r.lane, r.step, r.status, r.tensor, r.flat_offset, r.coords,"
           " r.expected_hex, r.actual_hex, r.ulp_distance, r.mismatch_count, r.oracle_ms, r.device_ms,"
           " r.message, %s FROM results r JOIN cases c ON c.id = r.case_id WHERE r.run_id = ?"
           " ORDER BY c.op, c.family, r.case_id, CASE r.lane WHEN 'oracle' THEN 0 WHEN 'eager' THEN 1"
           " WHEN 'capture' THEN 2 WHEN 'poison' THEN 3 ELSE 4 END, r.lane, r.step",
           x->schema >= 3 ? "r.stage" : "NULL");
  rc = sqlite3_prepare_v2(x->db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) sqlite3_bind_int64(st, 1, run_id);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    int fresh = !e || strcmp(e->case_id, col_text(st, 0)) || strcmp(e->lane, col_text(st, 3));
    rc = SQLITE_OK;
    if (fresh) {
      if (n == cap) {
        report_entry *grown = report_pool_alloc(p, sizeof *grown * (size_t)(cap = cap ? cap * 2 : 256));
        if (n) memcpy(grown, list, sizeof *grown * (size_t)n); /* the old array stays in the pool */
        list = grown;
      }
      e = &list[n++];
      e->case_id = report_pool_strdup(p, col_text(st, 0));
      e->op = report_pool_strdup(p, col_text(st, 1));
      e->family = report_pool_strdup(p, col_text(st, 2));
      e->lane = report_pool_strdup(p, col_text(st, 3));
      e->tensor = e->coords = e->expected_hex = e->actual_hex = e->stage = e->message = "";
      e->repro = repro_of(p, "", e->case_id, e->lane); /* a newly passing entry is worth rerunning too */
    }
    entry_add_row(p, e, st, fresh);
  }
  if (rc == SQLITE_DONE) rc = SQLITE_OK;
  sqlite3_finalize(st);
  *out = list, *count = n;
  return rc;
}

report_load_rc report_load(const char *db_path, const char *run_spec, const char *baseline_spec, report **out,
                           char *err, size_t err_len) {
  load_ctx x = {.path = db_path, .err = err, .err_len = err_len};
  report *r = NULL;
  report_entry *base = NULL;
  int base_count = 0;
  report_load_rc rc;
  *out = NULL;
  if ((rc = report_db_open(db_path, &x.db, &x.schema, err, err_len)) != REPORT_LOAD_OK) goto done;
  r = calloc(1, sizeof *r);
  if (!r || !(r->pool = report_pool_new())) abort();
  r->db_path = report_pool_strdup(r->pool, db_path);
  if ((rc = run_resolve(&x, run_spec, "--run", 0, &r->run_id)) != REPORT_LOAD_OK) goto done;
  if (baseline_spec &&
      (rc = run_resolve(&x, baseline_spec, "--baseline", r->run_id, &r->baseline_id)) != REPORT_LOAD_OK)
    goto done;
  if (run_fields_read(&x, r) != SQLITE_OK || entries_read(&x, r->pool, r->run_id, &r->entries, &r->entry_count) ||
      (r->baseline_id && entries_read(&x, r->pool, r->baseline_id, &base, &base_count))) {
    rc = load_fail(&x, REPORT_LOAD_BAD_DB, "database '%s': reading run %lld: %s", db_path, r->run_id,
                   sqlite3_errmsg(x.db));
    goto done;
  }
  if (report_bench_read(x.db, x.schema, r->run_id, r->pool, &r->bench, &r->bench_count) != SQLITE_OK) {
    rc = load_fail(&x, REPORT_LOAD_BAD_DB, "database '%s': reading run %lld's bench figures: %s", db_path,
                   r->run_id, sqlite3_errmsg(x.db));
    goto done;
  }
  report_summarise(r);
  if (r->baseline_id) report_regressions_build(r, base, base_count);
done:
  sqlite3_close(x.db); /* NULL is a no-op */
  if (rc != REPORT_LOAD_OK) report_free(r), r = NULL;
  *out = r;
  return rc;
}

void report_free(report *r) {
  if (!r) return;
  report_pool_free(r->pool);
  free(r);
}

const char *report_field_value(const report *r, const char *name) {
  for (int i = 0; i < r->field_count; i++)
    if (!strcmp(r->fields[i].name, name)) return r->fields[i].value;
  return "";
}

int report_fail(char *err, size_t err_len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, err_len, fmt, ap);
  va_end(ap);
  return -1;
}

const char *report_text_or_dash(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t && *t ? (const char *)t : "-";
}

/*
** store_merge.c: see store_merge.h.  Inputs are ATTACHed to OUT's
** connection as merge_src, so each copy is one INSERT ... SELECT.  The
** column lists are read from OUT's schema (pragma_table_info) rather than
** spelled here: input and OUT are at the same schema version once
** store_open has accepted both, and a column a later migration adds is
** then merged without touching this file.  Column names come from our own
** schema; every value stays inside SQLite or is bound.
*/
#include "harness/store_merge.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* The state of one merge, in OUT's temp schema (see store_merge.h). */
static const char merge_temp_sql[] =
  "CREATE TEMP TABLE IF NOT EXISTS merge_specs (id TEXT PRIMARY KEY, spec TEXT NOT NULL);"
  "CREATE TEMP TABLE IF NOT EXISTS merge_runs (src_id INTEGER PRIMARY KEY, dst_id INTEGER, fresh INTEGER);"
  "CREATE TEMP TABLE IF NOT EXISTS merge_all (dst_id INTEGER PRIMARY KEY);";

/* Runs SQL without parameters; SQLite's rc. */
static int merge_exec(store *out, const char *sql) { return sqlite3_exec(store_sqlite(out), sql, NULL, NULL, NULL); }

/* One integer from a query with optional text parameter ?1; SQLite's rc. */
static int merge_query_int(store *out, const char *sql, const char *arg, long long *val) {
  sqlite3_stmt *st = NULL;
  int rc = store_prepare(out, sql, &st);
  if (!rc && arg) rc = sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_step(st) == SQLITE_ROW ? SQLITE_OK : sqlite3_errcode(store_sqlite(out));
  if (!rc) *val = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc;
}

/*
** Builds "INSERT INTO main.T (c1, ...) SELECT e1, ... " for table T: each
** ei is s."ci", except that a column named in map (pairs of a column and
** the expression it reads, ending with NULL) reads that expression.  The
** caller appends the FROM clause, which names the source rows s.
*/
static int merge_insert_head(store *out, const char *table, const char *const *map, char *sql, size_t len) {
  char cols[2048] = "", exprs[4096] = "";
  size_t nc = 0, ne = 0;
  sqlite3_stmt *st = NULL;
  int rc = store_prepare(out, "SELECT name FROM pragma_table_info(?1, 'main') ORDER BY cid", &st);
  if (!rc) rc = sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
  while (!rc && sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    const char *expr = NULL;
    int sep = nc > 0, m;
    for (m = 0; map[m]; m += 2)
      if (!strcmp(name, map[m])) expr = map[m + 1];
    nc += (size_t)snprintf(cols + nc, sizeof cols - nc, "%s\"%s\"", sep ? ", " : "", name);
    if (expr) ne += (size_t)snprintf(exprs + ne, sizeof exprs - ne, "%s%s", sep ? ", " : "", expr);
    else ne += (size_t)snprintf(exprs + ne, sizeof exprs - ne, "%ss.\"%s\"", sep ? ", " : "", name);
    if (nc >= sizeof cols || ne >= sizeof exprs) rc = store_fail(out, "merge: table %s has too many columns", table);
  }
  if (!rc && !nc) rc = store_fail(out, "merge: no table %s in the output database", table);
  if (!rc && (size_t)snprintf(sql, len, "INSERT INTO main.%s (%s) SELECT %s ", table, cols, exprs) >= len)
    rc = store_fail(out, "merge: table %s has too many columns", table);
  sqlite3_finalize(st);
  return rc;
}

/* ATTACHes path as merge_src (and makes the temp tables); store_fail's rc. */
static int merge_attach(store *out, const char *path) {
  sqlite3_stmt *st = NULL;
  int rc = merge_exec(out, merge_temp_sql);
  if (!rc) rc = store_prepare(out, "ATTACH ?1 AS merge_src", &st);
  if (!rc) rc = sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
  if (!rc) rc = store_step_done(st);
  sqlite3_finalize(st);
  return rc ? store_fail_sqlite(out, rc, "merge: cannot attach the input") : 0;
}

static void merge_detach(store *out) { merge_exec(out, "DETACH merge_src"); }

/* The input must be an existing non-empty file that store_open accepts. */
static int merge_open_input(store *out, const char *path) {
  struct stat sb;
  store *in = NULL;
  char err[600];
  if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return store_fail(out, "input '%s' is not a readable file", path);
  if (sb.st_size == 0) return store_fail(out, "input '%s' is empty, not a bitgate database; left untouched", path);
  if (store_open(path, &in, err, sizeof err) != 0) return store_fail(out, "cannot merge %s", err);
  store_close(in);
  return 0;
}

int store_merge_check(store *out, const char *in_path) {
  static const char conflict_sql[] =
    "SELECT s.id FROM merge_src.cases s JOIN main.cases m ON m.id = s.id WHERE m.spec <> s.spec"
    " UNION ALL SELECT s.id FROM merge_src.cases s JOIN temp.merge_specs t ON t.id = s.id"
    " WHERE t.spec <> s.spec LIMIT 1";
  sqlite3_stmt *st = NULL;
  int rc = merge_open_input(out, in_path);
  if (rc) return rc;
  if ((rc = merge_attach(out, in_path)) != 0) return rc;
  rc = store_prepare(out, conflict_sql, &st);
  if (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    rc = store_fail(out, "case %s is stored in '%s' with a different spec than in the output or an earlier input "
                    "(ids hash the spec: a collision or a generator bug); nothing was merged",
                    (const char *)sqlite3_column_text(st, 0), in_path);
  } else if (rc == SQLITE_DONE) {
    rc = merge_exec(out, "INSERT OR IGNORE INTO temp.merge_specs SELECT id, spec FROM merge_src.cases");
  }
  if (rc > 0) store_fail_sqlite(out, rc, "merge: cannot compare case specs");
  sqlite3_finalize(st);
  merge_detach(out);
  return rc;
}

/* Maps the input's runs to OUT ids in temp.merge_runs (see store_merge.h). */
static const char merge_map_sql[] =
  "DELETE FROM temp.merge_runs;"
  "INSERT INTO temp.merge_runs (src_id, dst_id) SELECT s.id, (SELECT min(m.id) FROM main.runs m"
  "  WHERE m.started_at = s.started_at AND m.host IS s.host AND m.command_line IS s.command_line"
  "  AND m.shard IS s.shard) FROM merge_src.runs s;"
  "UPDATE temp.merge_runs SET fresh = dst_id IS NULL;"
  "UPDATE temp.merge_runs SET dst_id = (SELECT coalesce(max(id), 0) FROM main.runs)"
  "  + (SELECT count(*) FROM temp.merge_runs f WHERE f.fresh AND f.src_id <= merge_runs.src_id) WHERE fresh;"
  "INSERT OR IGNORE INTO temp.merge_all SELECT dst_id FROM temp.merge_runs;";

/* INSERT head for table plus tail, run; *changes the rows inserted. */
static int merge_copy_table(store *out, const char *table, const char *const *map, const char *tail,
                            long long *changes) {
  char sql[8192], head[7168];
  int rc = merge_insert_head(out, table, map, head, sizeof head);
  if (rc) return rc;
  snprintf(sql, sizeof sql, "%s%s", head, tail);
  if ((rc = merge_exec(out, sql)) != 0) return store_fail_sqlite(out, rc, "merge: cannot copy");
  if (changes) *changes = sqlite3_changes(store_sqlite(out));
  return 0;
}

static int merge_copy_tables(store *out, store_merge_stats *ms) {
  static const char *const runs_map[] = {"id", "r.dst_id", NULL};
  static const char *const cases_map[] = {
    "first_run_id", "(SELECT r.dst_id FROM temp.merge_runs r WHERE r.src_id = s.first_run_id)", NULL};
  static const char *const results_map[] = {"run_id", "r.dst_id", NULL};
  static const char *const bench_map[] = {"id", "NULL", "run_id", "r.dst_id", NULL}; /* a new id in OUT */
  int rc = merge_exec(out, merge_map_sql);
  if (rc) return store_fail_sqlite(out, rc, "merge: cannot map run ids");
  rc = merge_query_int(out, "SELECT count(*) FROM temp.merge_runs WHERE fresh", NULL, &ms->runs_new);
  if (!rc) rc = merge_query_int(out, "SELECT count(*) FROM temp.merge_runs WHERE NOT fresh", NULL, &ms->runs_known);
  if (!rc) rc = merge_query_int(out, "SELECT coalesce(min(dst_id), 0) FROM temp.merge_runs WHERE fresh", NULL, &ms->first_run);
  if (!rc) rc = merge_query_int(out, "SELECT coalesce(max(dst_id), 0) FROM temp.merge_runs WHERE fresh", NULL, &ms->last_run);
  if (!rc) rc = merge_query_int(out, "SELECT count(*) FROM merge_src.cases", NULL, &ms->cases);
  if (rc) return store_fail_sqlite(out, rc, "merge: cannot count");
  rc = merge_copy_table(out, "runs", runs_map,
                        "FROM merge_src.runs s JOIN temp.merge_runs r ON r.src_id = s.id WHERE r.fresh ORDER BY s.id",
                        NULL);
  if (!rc)
    rc = merge_copy_table(out, "cases", cases_map,
                          "FROM merge_src.cases s WHERE true ON CONFLICT (id) DO NOTHING", &ms->cases_new);
  if (!rc)
    rc = merge_copy_table(out, "results", results_map,
                          "FROM merge_src.results s JOIN temp.merge_runs r ON r.src_id = s.run_id WHERE r.fresh",
                          &ms->results);
  if (!rc)
    rc = merge_copy_table(out, "bench", bench_map,
                          "FROM merge_src.bench s JOIN temp.merge_runs r ON r.src_id = s.run_id WHERE r.fresh"
                          " ORDER BY s.id",
                          &ms->bench);
  return rc;
}

int store_merge_copy(store *out, const char *in_path, store_merge_stats *ms) {
  int rc;
  memset(ms, 0, sizeof *ms);
  if ((rc = merge_open_input(out, in_path)) != 0 || (rc = merge_attach(out, in_path)) != 0) return rc;
  if ((rc = store_tx_begin(out)) != 0) store_fail_sqlite(out, rc, "merge: cannot begin");
  if (!rc) rc = merge_copy_tables(out, ms);
  if (!rc && (rc = store_tx_commit(out)) != 0) store_fail_sqlite(out, rc, "merge: cannot commit");
  if (rc) store_tx_rollback(out);
  merge_detach(out);
  return rc;
}

/* A text column of the combined run: the runs' distinct values joined by ',' in run order. */
#define MERGE_JOIN(c) "(SELECT group_concat(v, ',') FROM (SELECT " c " AS v FROM sel WHERE " c " IS NOT NULL" \
                      " GROUP BY " c " ORDER BY min(id)))"
/* An integer column: the runs' common value, NULL where they differ. */
#define MERGE_SAME(c) "(SELECT CASE WHEN count(DISTINCT " c ") = 1 THEN min(" c ") END FROM sel)"

static const char merge_one_run_sql[] =
  "WITH sel AS (SELECT * FROM main.runs WHERE id IN (SELECT dst_id FROM temp.merge_all))"
  " INSERT INTO main.runs (started_at, ended_at, status, exit_code, git_rev, bitgate_version,"
  " oracle_version, numerics_version, kernel_hash, nvrtc_version, nvrtc_options, driver_version,"
  " device_name, compute_capability, host, suite, shard, command_line) SELECT"
  " (SELECT min(started_at) FROM sel),"
  " (SELECT CASE WHEN count(ended_at) = count(*) THEN max(ended_at) END FROM sel),"
  " (SELECT CASE WHEN sum(status = 'error') THEN 'error' WHEN sum(status = 'running') THEN 'running'"
  "   WHEN sum(status = 'failed') THEN 'failed' ELSE 'passed' END FROM sel),"
  " (SELECT max(exit_code) FROM sel), " MERGE_JOIN("git_rev") ", " MERGE_JOIN("bitgate_version") ", "
  MERGE_SAME("oracle_version") ", " MERGE_SAME("numerics_version") ", " MERGE_JOIN("kernel_hash") ", "
  MERGE_JOIN("nvrtc_version") ", " MERGE_JOIN("nvrtc_options") ", " MERGE_SAME("driver_version") ", "
  MERGE_JOIN("device_name") ", " MERGE_JOIN("compute_capability") ", " MERGE_JOIN("host") ", "
  MERGE_JOIN("suite") ", " MERGE_JOIN("shard") ", ?1";

/* The union's rows: per (case, lane, step) the one of the largest run id. */
static const char merge_one_results_tail[] =
  "FROM (SELECT *, row_number() OVER (PARTITION BY case_id, lane, step ORDER BY run_id DESC) AS merge_rank"
  " FROM main.results WHERE run_id IN (SELECT dst_id FROM temp.merge_all)) s WHERE s.merge_rank = 1";

static int merge_one_run(store *out, const char *command_line, long long *run_id, long long *results) {
  char id_expr[32];
  const char *map[] = {"run_id", id_expr, NULL};
  sqlite3_stmt *st = NULL;
  long long runs = 0;
  int rc = merge_query_int(out, "SELECT count(*) FROM main.runs WHERE id IN (SELECT dst_id FROM temp.merge_all)",
                           NULL, &runs);
  if (rc) return store_fail_sqlite(out, rc, "merge: cannot count runs");
  if (!runs) return store_fail(out, "--as-one-run: the inputs hold no runs");
  rc = store_prepare(out, merge_one_run_sql, &st);
  if (!rc) rc = sqlite3_bind_text(st, 1, command_line, -1, SQLITE_STATIC);
  if (!rc) rc = store_step_done(st);
  sqlite3_finalize(st);
  if (rc) return store_fail_sqlite(out, rc, "--as-one-run: cannot add the run");
  *run_id = sqlite3_last_insert_rowid(store_sqlite(out));
  snprintf(id_expr, sizeof id_expr, "%lld", *run_id);
  return merge_copy_table(out, "results", map, merge_one_results_tail, results);
}

int store_merge_as_one_run(store *out, const char *command_line, long long *run_id, long long *results,
                           char *shards, size_t shards_len) {
  sqlite3_stmt *st = NULL;
  int rc = merge_exec(out, merge_temp_sql);
  if (!rc) rc = store_tx_begin(out);
  if (rc) return store_fail_sqlite(out, rc, "merge: cannot begin");
  if (!rc) rc = merge_one_run(out, command_line, run_id, results);
  if (!rc && (rc = store_tx_commit(out)) != 0) store_fail_sqlite(out, rc, "merge: cannot commit");
  if (rc) {
    store_tx_rollback(out);
    return rc;
  }
  if (shards_len) shards[0] = '\0';
  if (!store_prepare(out, "SELECT shard FROM main.runs WHERE id = ?1", &st) && !sqlite3_bind_int64(st, 1, *run_id) &&
      sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    snprintf(shards, shards_len, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return 0;
}

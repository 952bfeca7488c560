/*
** baseline.c: see baseline.h.  The baseline run is read once, through the
** store's connection with prepared statements (read-only), into a sorted
** array; each case of this run then looks its lanes up by binary search.
*/
#include "harness/baseline.h"
#include "harness/gate.h"
#include "harness/store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static int pair_cmp(const void *x, const void *y) {
  const baseline_pair *a = x, *b = y;
  int c = strcmp(a->case_id, b->case_id);
  return c ? c : strcmp(a->lane, b->lane);
}

static baseline_pair *pair_find(const baseline *b, const char *case_id, const char *lane_text) {
  baseline_pair key;
  snprintf(key.case_id, sizeof key.case_id, "%s", case_id);
  snprintf(key.lane, sizeof key.lane, "%s", lane_text);
  return b->n ? bsearch(&key, b->pairs, b->n, sizeof *b->pairs, pair_cmp) : NULL;
}

/* Reads the run's suite into b->suite: 0, 1 when there is no such run, or SQLite's error code. */
static int read_run(baseline *b, sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT coalesce(suite, '') FROM runs WHERE id = ?1", -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 1, b->run_id);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    snprintf(b->suite, sizeof b->suite, "%s", (const char *)sqlite3_column_text(st, 0));
    rc = 0;
  } else if (rc == SQLITE_DONE) {
    rc = 1;
  }
  sqlite3_finalize(st);
  return rc;
}

/* Reads every (case, lane) of the run with its distinct statuses; 0 or SQLite's error code. */
static int read_pairs(baseline *b, sqlite3 *db) {
  static const char sql[] = "SELECT case_id, lane, group_concat(DISTINCT status) FROM results WHERE run_id = ?1 "
                            "GROUP BY case_id, lane";
  sqlite3_stmt *st = NULL;
  size_t cap = 0;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 1, b->run_id);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    char statuses[512], *tok, *save = NULL;
    baseline_pair *p;
    rc = SQLITE_OK;
    if (b->n == cap) {
      baseline_pair *grown = realloc(b->pairs, (cap = cap ? 2 * cap : 1024) * sizeof *grown);
      if (!grown) {
        rc = SQLITE_NOMEM;
        break;
      }
      b->pairs = grown;
    }
    p = &b->pairs[b->n++];
    memset(p, 0, sizeof *p);
    snprintf(p->case_id, sizeof p->case_id, "%s", (const char *)sqlite3_column_text(st, 0));
    snprintf(p->lane, sizeof p->lane, "%s", (const char *)sqlite3_column_text(st, 1));
    snprintf(statuses, sizeof statuses, "%s", (const char *)sqlite3_column_text(st, 2));
    for (tok = strtok_r(statuses, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      p->failed |= gate_status_fails(tok) || !strcmp(tok, "waived");
      p->nondeterministic |= !strcmp(tok, "nondeterministic");
    }
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return rc;
  if (b->n) qsort(b->pairs, b->n, sizeof *b->pairs, pair_cmp);
  return 0;
}

int baseline_open(baseline *b, store *db, long long run_id, char *err, size_t err_len) {
  sqlite3 *conn = store_sqlite(db);
  int rc;
  memset(b, 0, sizeof *b);
  b->run_id = run_id;
  if ((rc = read_run(b, conn)) == 1) {
    snprintf(err, err_len, "--baseline %lld: the results database has no run %lld", run_id, run_id);
    return 1;
  }
  if (rc == 0) rc = read_pairs(b, conn);
  if (rc != 0) {
    snprintf(err, err_len, "--baseline %lld: cannot read the run: %s", run_id, sqlite3_errstr(rc));
    baseline_close(b);
    return -1;
  }
  return 0;
}

/* Keeps line in lines[count] while there is room. */
static void listed(char lines[][200], long long count, const char *case_id, const char *lane_text,
                   const char *status, const char *then) {
  if (count < BASELINE_LISTED)
    snprintf(lines[count], sizeof lines[count], "%s %s (%s%s%s)", case_id, lane_text, status, then ? "; baseline: " : "",
             then ? then : "");
}

void baseline_note_case(baseline *b, const char *case_id, const case_report *r) {
  int l, i;
  if (!b->run_id) return;
  for (l = 0; l < LANE_COUNT; l++) {
    const char *lane_text = lane_name((lane)l), *status = NULL;
    int ran = 0, failing = 0, waived = 0, nondeterministic = 0;
    baseline_pair *then;
    for (i = 0; i < r->n; i++) {
      const result_row *row = &r->rows[i];
      if (strcmp(row->lane, lane_text)) continue;
      ran = 1;
      waived |= !strcmp(row->status, "waived");
      nondeterministic |= !strcmp(row->status, "nondeterministic");
      if (gate_status_fails(row->status) && !failing++) status = row->status;
    }
    if (nondeterministic) status = "nondeterministic";
    if (!ran) continue;
    then = pair_find(b, case_id, lane_text);
    if (then) then->seen_now = 1;
    if (failing && then && then->failed && (!nondeterministic || then->nondeterministic)) {
      listed(b->known_lines, b->still_failing++, case_id, lane_text, status, NULL);
    } else if (failing) {
      listed(b->new_lines, b->new_failures++, case_id, lane_text, status,
             !then ? "absent" : !then->failed ? "passed" : "failed, but was not nondeterministic");
    } else if (!waived) { /* waived: the known-failures list speaks for it */
      b->fixed += then && then->failed;
    }
  }
}

static void print_list(FILE *out, const char *kind, char lines[][200], long long count) {
  long long i;
  for (i = 0; i < count && i < BASELINE_LISTED; i++) fprintf(out, "  %s: %s\n", kind, lines[i]);
  if (count > BASELINE_LISTED) fprintf(out, "  %s: ... and %lld more\n", kind, count - BASELINE_LISTED);
}

void baseline_print(const baseline *b, const char *suite, FILE *out) {
  size_t i;
  long long not_rerun = 0;
  if (!b->run_id) return;
  for (i = 0; i < b->n; i++) not_rerun += b->pairs[i].failed && !b->pairs[i].seen_now;
  print_list(out, "known from baseline", (char(*)[200])b->known_lines, b->still_failing);
  print_list(out, "new failure", (char(*)[200])b->new_lines, b->new_failures);
  if (strcmp(b->suite, suite))
    fprintf(out, "  baseline run %lld ran suite '%s', this run '%s': its absent cases count as new\n", b->run_id,
            b->suite, suite);
  fprintf(out, "  baseline run %lld: %lld new failures, %lld still failing (known from baseline), %lld fixed, "
               "%lld failing there not rerun\n",
          b->run_id, b->new_failures, b->still_failing, b->fixed, not_rerun);
}

void baseline_close(baseline *b) {
  free(b->pairs);
  b->pairs = NULL;
  b->n = 0;
}

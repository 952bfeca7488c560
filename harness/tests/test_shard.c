/*
** test_shard.c: --shard K/N (harness/shard.h).  The partition is disjoint,
** covering and stable (pinned values: merged shard databases depend on the
** rule never changing), bad K/N are one-line usage errors (exit 2), and a
** real sharded run takes exactly its shard and records it in runs.shard.
*/
#include "harness/shard.h"
#include "harness/tests/bitgate_process.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#define T(text, ok, norm) {__FILE__, __LINE__, text, ok, norm}
static const struct parse_row {
  const char *file;
  int line;
  const char *text;
  int ok;
  const char *norm;
} parse_rows[] = {
    T("1/1", 1, "1/1"),     T("2/3", 1, "2/3"),     T("4096/4096", 1, "4096/4096"), T("01/02", 1, "1/2"),
    T("", 0, NULL),         T("1", 0, NULL),        T("0/2", 0, NULL),              T("3/2", 0, NULL),
    T("1/0", 0, NULL),      T("a/b", 0, NULL),      T("1/2x", 0, NULL),             T("-1/2", 0, NULL),
    T("1/4097", 0, NULL),   T("1/+2", 0, NULL),     T("99999999999999999999/1", 0, NULL), T("1//2", 0, NULL),
};

Test(shard, parse) {
  for (size_t i = 0; i < sizeof parse_rows / sizeof parse_rows[0]; i++) {
    const struct parse_row *r = &parse_rows[i];
    shard s;
    char err[128] = "";
    int rc = shard_parse(r->text, &s, err, sizeof err);
    cr_expect_eq(rc == 0, r->ok, "%s:%d: '%s' -> rc %d (%s)", r->file, r->line, r->text, rc, err);
    if (r->ok && rc == 0) cr_expect_str_eq(s.text, r->norm, "%s:%d", r->file, r->line);
    if (!r->ok) cr_expect(strchr(err, '\'') && !strchr(err, '\n'), "%s:%d: one line naming it: %s", r->file, r->line, err);
  }
}

/* Disjoint and covering: every id is in exactly one shard of N; and no shard starves. */
Test(shard, partition_disjoint_covering) {
  static const unsigned ns[] = {1, 2, 3, 7, 16};
  enum { IDS = 20000 };
  for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
    unsigned n = ns[j], counts[16] = {0};
    for (int i = 0; i < IDS; i++) {
      char id[48];
      int owners = 0;
      snprintf(id, sizeof id, "is.capfront.%08x", (unsigned)i * 2654435761u);
      for (unsigned k = 1; k <= n; k++) {
        shard s;
        char err[64], text[16];
        snprintf(text, sizeof text, "%u/%u", k, n);
        cr_assert_eq(shard_parse(text, &s, err, sizeof err), 0);
        if (shard_contains(&s, id)) owners++, counts[k - 1]++;
      }
      cr_assert_eq(owners, 1, "%s is in %d shards of %u", id, owners, n);
    }
    for (unsigned k = 0; k < n; k++)
      cr_expect_gt(counts[k], IDS / n / 2, "shard %u/%u holds only %u of %d ids", k + 1, n, counts[k], IDS);
  }
}

/* Stable: the rule (XXH3-64 of the id, mod N, + 1) pinned on a few ids when it was fixed; a
** change here strands every sharded database already merged or still to merge. */
Test(shard, partition_pinned) {
  static const struct { const char *id; unsigned n, k; } pins[] = {
    {"is.capfront.1f3c9a02", 2, 1},
    {"is.capfront.1f3c9a02", 3, 1},
    {"is.capfront.1f3c9a02", 7, 1},
    {"is.capfront.1f3c9a02", 16, 9},
    {"csa128.state.00000000", 2, 1},
    {"csa128.state.00000000", 3, 2},
    {"csa128.state.00000000", 7, 6},
    {"csa128.state.00000000", 16, 15},
    {"csa4.ties.deadbeef", 2, 1},
    {"csa4.ties.deadbeef", 3, 3},
    {"csa4.ties.deadbeef", 7, 4},
    {"csa4.ties.deadbeef", 16, 3},
    {"invalid.00000000", 2, 2},
    {"invalid.00000000", 3, 1},
    {"invalid.00000000", 7, 2},
    {"invalid.00000000", 16, 8},
  };
  for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++)
    cr_expect_eq(shard_of(pins[i].id, pins[i].n), pins[i].k, "%s of %u", pins[i].id, pins[i].n);
}

TestSuite(shard_cli, .init = make_tmp, .fini = remove_tmp);

Test(shard_cli, bad_shard_is_a_usage_error) {
  static const char *const bad[] = {"3/2", "0/4", "x", "1/0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    outcome *o = RUN(tmp, "run", "--lanes", "oracle", "--shard", bad[i]);
    cr_expect_eq(o->status, 2, "--shard %s: %s", bad[i], o->err);
    cr_expect_eq(line_count(o->err), 1, "%s", o->err);
    cr_expect(strstr(o->err, "--shard") && strstr(o->err, bad[i]), "%s", o->err);
  }
}

/* The case ids a run stored, sorted, one per line, into buf. */
static void run_case_ids(const char *db, long long *n, char *buf, size_t len) {
  sqlite3 *h = NULL;
  sqlite3_stmt *st = NULL;
  size_t used = 0;
  *n = 0;
  buf[0] = '\0';
  cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "%s", db);
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT DISTINCT case_id FROM results ORDER BY 1", -1, &st, NULL), SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) {
    used += (size_t)snprintf(buf + used, len - used, "%s\n", (const char *)sqlite3_column_text(st, 0));
    (*n)++;
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
}

static void run_shard_column(const char *db, char *out, size_t len) {
  sqlite3 *h = NULL;
  sqlite3_stmt *st = NULL;
  cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT shard FROM runs", -1, &st, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(h);
}

/* A real suite split three ways: the shards' cases are disjoint and make up the unsharded run's. */
Test(shard_cli, run_takes_exactly_its_shard) {
  static char all[65536], part[3][65536];
  char db[300], text[16], col[32];
  long long n_all, n[3], sum = 0;
  outcome *o = RUN(tmp, "run", "--lanes", "oracle", "--filter", "is.masked.*", "--db", "all.db");
  cr_assert_eq(o->status, 0, "%s%s", o->out, o->err);
  snprintf(db, sizeof db, "%s/all.db", tmp);
  run_case_ids(db, &n_all, all, sizeof all);
  for (int k = 0; k < 3; k++) {
    char name[16];
    snprintf(text, sizeof text, "%d/3", k + 1);
    snprintf(name, sizeof name, "s%d.db", k + 1);
    o = RUN(tmp, "run", "--lanes", "oracle", "--filter", "is.masked.*", "--shard", text, "--db", name);
    cr_assert_eq(o->status, 0, "%s%s", o->out, o->err);
    snprintf(db, sizeof db, "%s/%s", tmp, name);
    run_case_ids(db, &n[k], part[k], sizeof part[k]);
    run_shard_column(db, col, sizeof col);
    cr_expect_str_eq(col, text, "runs.shard of shard %s", text);
    cr_expect_gt(n[k], 0, "shard %s is empty", text);
    sum += n[k];
  }
  cr_expect_eq(sum, n_all, "shards hold %lld cases, the whole run %lld", sum, n_all);
  /* Disjoint and covering: each id of the whole run is in exactly one shard's list. */
  for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
    char needle[80];
    int owners = 0;
    snprintf(needle, sizeof needle, "%s\n", line);
    for (int k = 0; k < 3; k++) owners += strstr(part[k], needle) != NULL;
    cr_expect_eq(owners, 1, "%s is in %d shards", line, owners);
  }
}

/*
** A filter that keeps one case leaves one of two shards empty: that shard
** passes (a CI matrix of N shards over a short list must not fail on it)
** and its summary says why it ran nothing.
*/
Test(shard_cli, an_empty_shard_passes_and_says_so) {
  char id[128];
  int k, empty = 0;
  outcome *o = RUN(NULL, "list", "--filter", "is.masked.*");
  cr_assert_eq(o->status, 0, "%s", o->err);
  cr_assert_eq(sscanf(o->out, "%127s", id), 1, "%s", o->out);
  for (k = 1; k <= 2; k++) {
    char text[8];
    snprintf(text, sizeof text, "%d/2", k);
    o = RUN(tmp, "run", "--lanes", "oracle", "--filter", id, "--shard", text, "--db", "one.db");
    cr_expect_eq(o->status, 0, "shard %s: %s%s", text, o->out, o->err);
    if (strstr(o->out, " 0 cases,")) {
      empty++;
      cr_expect(strstr(o->out, "shard ") && strstr(o->out, " holds none of the cases that --filter keeps"), "%s",
                o->out);
    }
  }
  cr_expect_eq(empty, 1, "one case, two shards: exactly one shard is empty");
}

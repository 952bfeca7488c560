/*
** test_reports.c: bitgate report, from a database written through the store
** API (report_fixture.h) to each format's content, and the errors a user
** meets (missing database, unknown run, a file that is not bitgate's).
**
** Every test gets a fresh scratch directory holding the fixture database.
*/
#include "harness/store.h"
#include "harness/tests/bitgate_process.h"
#include "reports/report.h"
#include "reports/tests/report_fixture.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char g_db[512];

static void fixture_setup(void) {
  char err[1024];
  make_tmp();
  snprintf(g_db, sizeof g_db, "%s/results.db", tmp);
  cr_assert_eq(report_fixture_write(g_db, err, sizeof err), 0, "fixture: %s", err);
}

TestSuite(report, .init = fixture_setup, .fini = remove_tmp);

static report *load(const char *run, const char *baseline) {
  report *r = NULL;
  char err[1024] = "";
  report_load_rc rc = report_load(g_db, run, baseline, &r, err, sizeof err);
  cr_assert_eq(rc, REPORT_LOAD_OK, "report_load: %s", err);
  return r;
}

/* The report in one format, malloc'd. */
typedef enum { F_HTML, F_JUNIT, F_MD, F_JSON } fmt;
static char *render(const report *r, fmt f, int md_max) {
  char *text = NULL;
  size_t n = 0;
  FILE *out = open_memstream(&text, &n);
  int rc;
  cr_assert_not_null(out);
  rc = f == F_HTML ? report_html_write(r, out)
       : f == F_JUNIT ? report_junit_write(r, out)
       : f == F_MD    ? report_md_write(r, md_max, out)
                      : report_json_write(r, out);
  cr_assert_eq(fclose(out), 0);
  cr_assert_eq(rc, 0);
  return text;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

/* The rows (<tr>) inside the table that starts with `open`, head row included. */
static int table_rows(const char *html, const char *open) {
  const char *start = strstr(html, open), *end;
  int n = 0;
  cr_assert_not_null(start, "no table '%s'", open);
  end = strstr(start, "</table>");
  for (const char *p = start; (p = strstr(p, "<tr>")) != NULL && p < end; p++) n++;
  return n;
}

#define expect_has(text, needle) cr_expect(strstr((text), (needle)) != NULL, "missing: %s", (needle))
#define expect_lacks(text, needle) cr_expect(strstr((text), (needle)) == NULL, "present: %s", (needle))

Test(report, model_aggregates_steps_into_case_lanes) {
  report *r = load("latest", "1");
  cr_expect_eq(r->run_id, 2);
  cr_expect_eq(r->entry_count, 10);
  cr_expect_eq(r->totals[REPORT_OUTCOME_PASS], 3);
  cr_expect_eq(r->totals[REPORT_OUTCOME_FAIL], 5);
  cr_expect_eq(r->totals[REPORT_OUTCOME_SKIPPED], 2);
  for (int i = 0; i < r->entry_count; i++) {
    const report_entry *e = &r->entries[i];
    if (!strcmp(e->case_id, "csa4.chain.0000000c")) { /* steps 0..2 pass, 3 fails: step 3 describes it */
      cr_expect_eq(e->steps, 4);
      cr_expect_eq(e->step, 3);
      cr_expect_str_eq(e->stage, "IndexScoring");
      cr_expect_eq(e->ulp, 70000);
      cr_expect_str_eq(e->repro, "bitgate repro csa4.chain.0000000c --lanes eager"); /* built */
    }
    if (!strcmp(e->case_id, "is.valid.0000000a") && !strcmp(e->lane, "eager"))
      cr_expect_str_eq(e->repro, "bitgate repro is.valid.0000000a --lanes eager"); /* from the message */
  }
  /* Stages in pipeline order, not localised last. */
  cr_assert_eq(r->stage_count, 3);
  cr_expect_str_eq(r->stages[0].stage, "CompressionUpdate");
  cr_expect_str_eq(r->stages[1].stage, "IndexScoring");
  cr_expect_str_eq(r->stages[2].stage, "");
  cr_expect_eq(r->stages[2].count, 3);
  report_free(r);
}

Test(report, regressions_by_case_and_lane) {
  static const struct { report_change change; const char *case_id, *lane, *baseline; } want[] = {
      {REPORT_CHANGE_NEWLY_FAILING, "csa128.chain.0000000d", "capture", "pass"},
      {REPORT_CHANGE_NEWLY_FAILING, FIXTURE_NASTY_ID, "oracle", "absent"},
      {REPORT_CHANGE_NEWLY_FAILING, "is.masked.0000000f", "eager", "absent"},
      {REPORT_CHANGE_NEWLY_FAILING, "is.valid.0000000a", "eager", "pass"},
      {REPORT_CHANGE_NEWLY_PASSING, "is.valid.0000000b", "eager", "mismatch"},
      {REPORT_CHANGE_NEWLY_NONDETERMINISTIC, "csa128.chain.0000000d", "capture", "pass"},
  };
  report *r = load("2", "previous");
  cr_expect_eq(r->baseline_id, 1);
  cr_assert_eq(r->regression_count, 6);
  for (int i = 0; i < 6; i++) {
    cr_expect_eq(r->regressions[i].change, want[i].change, "regression %d", i);
    cr_expect_str_eq(r->regressions[i].entry->case_id, want[i].case_id, "regression %d", i);
    cr_expect_str_eq(r->regressions[i].entry->lane, want[i].lane, "regression %d", i);
    cr_expect_str_eq(r->regressions[i].baseline_status, want[i].baseline, "regression %d", i);
  }
  report_free(r);
}

Test(report, html_lists_failures_regressions_charts_and_escapes) {
  report *r = load(NULL, "1");
  char *html = render(r, F_HTML, 0);
  cr_expect_eq(table_rows(html, "<table id=\"failing-cases\">"), 1 + 5);
  cr_expect_eq(table_rows(html, "<table class=\"newly_failing\">"), 1 + 4);
  cr_expect_eq(table_rows(html, "<table class=\"newly_passing\">"), 1 + 1);
  cr_expect_eq(table_rows(html, "<table class=\"newly_nondeterministic\">"), 1 + 1);
  expect_has(html, "<td>IndexScoring</td>");
  expect_has(html, "<td>CompressionUpdate</td>");
  expect_has(html, "<code>bitgate repro is.masked.0000000f --lanes eager</code>");
  expect_has(html, "<td class=\"mono\">attn_out[0,2,0,5] @27<br>expected 0x3f800000<br>actual&nbsp;&nbsp; 0x3f811170</td>");
  expect_has(html, "<code>bitgate repro is.valid.0000000b --lanes eager</code>"); /* newly passing: built */
  cr_expect_eq(count(html, "<svg "), 3, "two ULP histograms and the stage chart");
  /* Escaping: markup from the database is text, bad bytes are visible, nothing external loads. */
  expect_has(html, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;");
  expect_has(html, "is.contract.&lt;b&gt;&amp;&quot;q&#39;|`x`");
  expect_has(html, "pipe \\xFF bad");
  expect_has(html, "abc123&lt;dirty&gt;");
  expect_lacks(html, "<script");
  expect_lacks(html, "\xff");
  expect_lacks(html, "src=");
  expect_lacks(html, "href=\"http");
  /* Provenance. */
  expect_has(html, "kh-5eed");
  expect_has(html, "--gpu-architecture=sm_90 --fmad=false --ftz=false");
  expect_has(html, "run --filter &#39;is.*&#39; &amp; &lt;more&gt;");
  free(html);
  report_free(r);
}

Test(report, html_without_baseline_has_no_regressions) {
  report *r = load("2", NULL);
  char *html = render(r, F_HTML, 0);
  expect_lacks(html, "id=\"regressions\"");
  free(html);
  report_free(r);
}

Test(report, junit_one_testcase_per_case_lane) {
  report *r = load(NULL, NULL);
  char *xml = render(r, F_JUNIT, 0);
  cr_expect_eq(count(xml, "<testcase "), 10);
  cr_expect_eq(count(xml, "<failure "), 4);
  cr_expect_eq(count(xml, "<error "), 1, "the crash");
  cr_expect_eq(count(xml, "<skipped "), 2);
  cr_expect_eq(count(xml, "<testsuite "), 6, "one per operator.family");
  expect_has(xml, "<testsuites name=\"bitgate run 2\" tests=\"10\" failures=\"4\" errors=\"1\"");
  expect_has(xml, "classname=\"IndexShare.is.valid\" name=\"is.valid.0000000a/eager\"");
  expect_has(xml, "message=\"mismatch: step 0 tensor y at [0,1,2,3] (offset 27): expected 0x3f800000, actual "
                  "0x3f800001, 1 ulp, 3 mismatching; repro: bitgate repro is.valid.0000000a --lanes eager\"");
  expect_has(xml, "first diverging stage IndexScoring; repro: bitgate repro csa4.chain.0000000c --lanes eager");
  expect_has(xml, "<skipped message=\"unavailable\"/>");
  expect_has(xml, "name=\"is.contract.&lt;b&gt;&amp;&quot;q&#39;|`x`/oracle\"");
  expect_has(xml, "<property name=\"git_rev\" value=\"abc123&lt;dirty&gt;\"/>");
  expect_lacks(xml, "\xff");
  free(xml);
  report_free(r);
}

Test(report, markdown_is_short_and_escaped) {
  report *r = load(NULL, "1");
  char *md = render(r, F_MD, 2);
  expect_has(md, "## bitgate run 2: FAILED");
  expect_has(md, "| IndexShare | eager | 1 | 2 | 1 |");
  expect_has(md, "| CompressedSparseAttention | capture | 0 | 1 | 0 |");
  expect_has(md, "### Failing cases (5)");
  expect_has(md, "...and 3 more");
  expect_has(md, "`bitgate repro csa128.chain.0000000d --lanes capture`");
  expect_has(md, "**Newly failing: 4**");
  expect_has(md, "**Newly passing: 1**");
  expect_has(md, "**Newly nondeterministic: 1**");
  expect_has(md, "...and 2 more.");
  /* The id holds a backtick and a pipe: a longer fence, an escaped pipe. */
  expect_has(md, "`` is.contract.<b>&\"q'\\|`x` ``");
  expect_has(md, "abc123<dirty>`"); /* in a code span, markup is literal */
  free(md);
  report_free(r);
}

/* One value of the JSON report through SQLite's JSON functions; malloc'd text. */
static char *json_at(const char *json, const char *sql_expr) {
  sqlite3 *db;
  sqlite3_stmt *st;
  char sql[512], *value = NULL;
  cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
  snprintf(sql, sizeof sql, "SELECT %s FROM (SELECT ?1 AS j)", sql_expr);
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
  sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  value = strdup(sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "NULL");
  sqlite3_finalize(st);
  sqlite3_close(db);
  return value;
}

Test(report, json_is_valid_and_complete) {
  static const char *const checks[][2] = {
      {"json_valid(j)", "1"},
      {"json_extract(j, '$.run.id')", "2"},
      {"json_extract(j, '$.baseline')", "1"},
      {"json_extract(j, '$.totals.fail')", "5"},
      {"json_array_length(j, '$.entries')", "10"},
      {"json_extract(j, '$.run.provenance.git_rev')", FIXTURE_GIT_REV},
      {"json_array_length(j, '$.regressions.newly_failing')", "4"},
      {"json_extract(j, '$.regressions.newly_passing[0].baseline')", "mismatch"},
      {"json_extract(j, '$.stages[0].stage')", "CompressionUpdate"},
      {"json_type(j, '$.stages[2].stage')", "null"},
      {"json_extract(j, '$.ulp_histograms[0].buckets[1].lo')", "65536"},
      {"(SELECT json_extract(value, '$.failure.mismatch.ulp') FROM json_each(j, '$.entries')"
       " WHERE json_extract(value, '$.case_id') = 'csa4.chain.0000000c')", "70000"},
      {"(SELECT json_extract(value, '$.failure.message') FROM json_each(j, '$.entries')"
       " WHERE json_extract(value, '$.lane') = 'oracle' AND json_extract(value, '$.outcome') = 'fail')",
       "oracle rejects <script>alert(1)</script> & \"quotes\" | pipe \\xFF bad; repro: bitgate repro '"
       FIXTURE_NASTY_ID "' --lanes oracle"},
  };
  report *r = load(NULL, "1");
  char *json = render(r, F_JSON, 0);
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
    char *got = json_at(json, checks[i][0]);
    cr_expect_str_eq(got, checks[i][1], "%s", checks[i][0]);
    free(got);
  }
  free(json);
  report_free(r);
}

/* A file at path with the given bytes. */
static void file_put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
}

Test(report, bad_input_is_one_clear_error) {
  char missing[600], text[600], foreign[600], empty[600], err[1024];
  store *s = NULL;
  sqlite3 *db;
  report *r;
  snprintf(missing, sizeof missing, "%s/none.db", tmp);
  snprintf(text, sizeof text, "%s/notes.txt", tmp);
  snprintf(foreign, sizeof foreign, "%s/foreign.db", tmp);
  snprintf(empty, sizeof empty, "%s/empty.db", tmp);
  file_put(text, "these are not the results you are looking for\n");
  cr_assert_eq(sqlite3_open(foreign, &db), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  cr_assert_eq(store_open(empty, &s, err, sizeof err), 0, "%s", err);
  store_close(s);
  static const struct { int which; const char *run, *baseline; report_load_rc rc; const char *says; } rows[] = {
      {0, NULL, NULL, REPORT_LOAD_BAD_DB, "No such file"},
      {1, NULL, NULL, REPORT_LOAD_BAD_DB, "not readable as SQLite"},
      {2, NULL, NULL, REPORT_LOAD_BAD_DB, "not a bitgate database"},
      {3, NULL, NULL, REPORT_LOAD_BAD_DB, "holds no runs"},
      {4, "99", NULL, REPORT_LOAD_BAD_ARG, "--run 99: no such run"},
      {4, "two", NULL, REPORT_LOAD_BAD_ARG, "--run 'two' is not a run id"},
      {4, "1", "previous", REPORT_LOAD_BAD_ARG, "no run before run 1"},
      {4, "2", "7", REPORT_LOAD_BAD_ARG, "--baseline 7: no such run"},
  };
  const char *paths[] = {missing, text, foreign, empty, g_db};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    err[0] = '\0';
    cr_expect_eq(report_load(paths[rows[i].which], rows[i].run, rows[i].baseline, &r, err, sizeof err), rows[i].rc,
                 "row %zu: %s", i, err);
    cr_expect_null(r);
    cr_expect(strstr(err, rows[i].says) != NULL, "row %zu: '%s' lacks '%s'", i, err, rows[i].says);
    cr_expect(strchr(err, '\n') == NULL, "row %zu: one line", i);
  }
}

Test(report, cli_exit_codes_and_output_file) {
  char out_path[600], text[600], missing[600];
  outcome *o;
  snprintf(out_path, sizeof out_path, "%s/junit.xml", tmp);
  snprintf(text, sizeof text, "%s/notes.txt", tmp);
  snprintf(missing, sizeof missing, "%s/none.db", tmp);
  file_put(text, "plain text\n");
  o = RUN(NULL, "report", "--db", g_db, "--format", "junit", "-o", out_path);
  cr_expect_eq(o->status, 0, "%s", o->err);
  o = RUN(NULL, "report", "--db", g_db, "--format", "md", "--baseline", "previous");
  cr_expect_eq(o->status, 0, "%s", o->err);
  cr_expect(strstr(o->out, "## bitgate run 2: FAILED") != NULL);
  static const struct { const char *db, *run, *format; int status; const char *says; } rows[] = {
      {NULL, "latest", "html", 3, "cannot open database"},
      {"text", "latest", "html", 3, "not readable as SQLite"},
      {"fixture", "42", "html", 2, "no such run"},
      {"fixture", "latest", "pdf", 2, "--format 'pdf'"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const char *db = !rows[i].db ? missing : !strcmp(rows[i].db, "text") ? text : g_db;
    o = RUN(NULL, "report", "--db", db, "--run", rows[i].run, "--format", rows[i].format);
    cr_expect_eq(o->status, rows[i].status, "row %zu: %s", i, o->err);
    cr_expect_eq(line_count(o->err), 1, "row %zu: one line: %s", i, o->err);
    cr_expect(strstr(o->err, rows[i].says) != NULL, "row %zu: %s", i, o->err);
    cr_expect_eq(o->out[0], '\0', "row %zu: nothing on stdout", i);
  }
  FILE *f = fopen(out_path, "r");
  char head[64] = "";
  cr_assert_not_null(f, "-o wrote nothing");
  cr_expect(fgets(head, sizeof head, f) != NULL);
  fclose(f);
  cr_expect_str_eq(head, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
}

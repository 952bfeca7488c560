/*
** test_cli.c: the bitgate command line as a user meets it: versions, exit
** codes, one-line usage errors, database errors that name the path, foreign
** and corrupt databases left untouched, and a default run recorded in SQLite.
*/
#include "harness/tests/bitgate_process.h"
#include "reports/report_targets.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(cli, .init = make_tmp, .fini = remove_tmp);

Test(cli, version_names_every_component) {
  outcome *o = RUN(NULL, "--version");
  const char *keys[] = {"bitgate ", "oracle ", "numerics ", "nvrtc ", "git ", "gpu "};
  size_t i;
  cr_assert_eq(o->status, 0);
  for (i = 0; i < sizeof keys / sizeof *keys; i++) cr_expect(strstr(o->out, keys[i]), "missing '%s'", keys[i]);
  cr_expect(strcmp(o->out, RUN(NULL, "version")->out) == 0);
}

Test(cli, every_command_has_help) {
  const char *cmds[] = {"run", "numerics", "audit", "version", "list", "show", "repro", "bench", "golden"};
  size_t i;
  for (i = 0; i < sizeof cmds / sizeof *cmds; i++) {
    outcome *o = RUN(NULL, cmds[i], "--help");
    cr_expect_eq(o->status, 0, "%s --help", cmds[i]);
    cr_expect(strstr(o->out, "usage: bitgate") != NULL, "%s --help", cmds[i]);
    cr_expect(strstr(o->out, "exit codes") != NULL, "%s --help lists exit codes", cmds[i]);
  }
  cr_expect(RUN(NULL, "--help")->status == 0);
}

Test(cli, usage_errors_exit_2_with_one_line) {
  struct {
    const char *const *args;
    const char *names;
  } rows[] = {
      {(const char *const[]){"frobnicate", NULL}, "'frobnicate'"},
      {(const char *const[]){"run", "--bogus", NULL}, "'--bogus'"},
      {(const char *const[]){"run", "--db", NULL}, "'--db'"},
      {(const char *const[]){"numerics", "check", "--threads", "0", NULL}, "--threads"},
      {(const char *const[]){"numerics", "prove", NULL}, "'prove'"},
      {(const char *const[]){"numerics", "check", "--func", "tan", NULL}, "'tan'"},
      {(const char *const[]){"version", "extra", NULL}, "'extra'"},
      {(const char *const[]){"run", "--lanes", "oracle,,eager", NULL}, "an empty lane name in 'oracle,,eager'"},
      {(const char *const[]){"run", "--lanes", "oracle,", NULL}, "an empty lane name in 'oracle,'"},
  };
  size_t i;
  for (i = 0; i < sizeof rows / sizeof *rows; i++) {
    outcome *o = run_bitgate(NULL, rows[i].args);
    cr_expect_eq(o->status, 2, "row %zu: status %d", i, o->status);
    cr_expect_eq(line_count(o->err), 1, "row %zu: stderr '%s'", i, o->err);
    cr_expect(strstr(o->err, rows[i].names) != NULL, "row %zu names %s: '%s'", i, rows[i].names, o->err);
  }
  cr_expect(RUN(NULL, "run", "--bogus")->status == 2);
  cr_expect(run_bitgate(NULL, (const char *const[]){NULL})->status == 2, "no command at all");
}

/* audit --ptx-out: the PTX where asked; a folder that is not there is an environment error naming the path. */
Test(cli, audit_writes_ptx_or_names_the_path_it_could_not_write) {
  char dir[512], missing[600], path[700];
  outcome *o;
  snprintf(dir, sizeof dir, "%s/ptx", tmp);
  cr_assert_eq(mkdir(dir, 0755), 0);
  o = RUN(NULL, "audit", "--kernel", "numerics_probe.cu", "--ptx-out", dir);
  cr_expect_eq(o->status, 0, "%s%s", o->out, o->err);
  snprintf(path, sizeof path, "%s/numerics_probe.cu.ptx", dir);
  cr_expect_eq(access(path, R_OK), 0, "no %s", path);
  snprintf(missing, sizeof missing, "%s/not-there", dir);
  o = RUN(NULL, "audit", "--kernel", "numerics_probe.cu", "--ptx-out", missing);
  cr_expect_eq(o->status, 3, "%s%s", o->out, o->err);
  cr_expect(strstr(o->out, "cannot write its PTX") != NULL && strstr(o->out, missing) != NULL, "%s", o->out);
}

/*
** A filter with a typo must not pass a CI job on zero cases, nor record an
** empty run: each command that runs or times what --filter keeps refuses a
** filter that keeps nothing, naming it and what it could have matched,
** before it opens any database.
*/
Test(cli, a_filter_that_keeps_nothing_exits_2_before_anything_is_recorded) {
  struct {
    const char *const *args;
    const char *says;
  } rows[] = {
      {(const char *const[]){"run", "--filter", "is.nosuch.*", "--db", "f.db", NULL},
       "--filter 'is.nosuch.*' keeps none of the "},
      {(const char *const[]){"run", "--filter", "is.nosuch.*", "--db", "f.db", NULL},
       "cases of suite gate (ids look like is."},
      {(const char *const[]){"nightly", "--filter", "is.nosuch.*", "--db", "f.db", "--golden", "g.db", "--report",
                             "r.md", NULL},
       "--filter 'is.nosuch.*' keeps none of the "},
      {(const char *const[]){"bench", "--filter", "csa5*", "--db", "f.db", NULL},
       "--filter 'csa5*' keeps none of the shapes: 'csa128 pos 4096, B=1', "},
      {(const char *const[]){"bench", "--oracle-threads", "1,2", "--filter", "csa5*", NULL},
       "'IndexShare K=2048, heads 128, B=64'"},
  };
  const char *const files[] = {"f.db", "g.db", "r.md"};
  char path[400];
  size_t i;
  for (i = 0; i < sizeof rows / sizeof *rows; i++) {
    outcome *o = run_bitgate(tmp, rows[i].args);
    cr_expect_eq(o->status, 2, "row %zu: status %d: %s%s", i, o->status, o->out, o->err);
    cr_expect_eq(line_count(o->err), 1, "row %zu: stderr '%s'", i, o->err);
    cr_expect(strstr(o->err, rows[i].says) != NULL, "row %zu says \"%s\": '%s'", i, rows[i].says, o->err);
  }
  for (i = 0; i < sizeof files / sizeof *files; i++) {
    snprintf(path, sizeof path, "%s/%s", tmp, files[i]);
    cr_expect(access(path, F_OK) != 0, "%s was written", files[i]);
  }
  cr_expect_eq(RUN(tmp, "run", "--filter", "is.masked.*", "--lanes", "oracle", "--db", "f.db")->status, 0,
               "a filter that keeps some cases runs them");
}

/*
** The environment's settings are checked before a command runs: a thread
** count that is not one used to be ignored (every core), and a plant that
** cannot apply used to surface only where kernels compile (on a GPU) while
** the oracle lane passed as if it were unset.
*/
Test(cli, settings_in_the_environment_that_cannot_apply_are_refused_naming_them) {
  static const char *const bad_threads[] = {"abc", "0", "-2", " 3", "3x", "1025"};
  char path[400];
  outcome *o;
  size_t i;
  for (i = 0; i < sizeof bad_threads / sizeof *bad_threads; i++) {
    char want[80];
    cr_assert_eq(setenv("BITGATE_ORACLE_THREADS", bad_threads[i], 1), 0);
    o = RUN(tmp, "run", "--lanes", "oracle", "--filter", "is.masked.*", "--db", "e.db");
    snprintf(want, sizeof want, "BITGATE_ORACLE_THREADS='%s': expected a whole number from 1 to ", bad_threads[i]);
    cr_expect(o->status == 2 && strstr(o->err, want) && line_count(o->err) == 1, "'%s': %d %s", bad_threads[i],
              o->status, o->err);
  }
  cr_expect_eq(RUN(NULL, "run", "--help")->status, 0, "help still prints");
  cr_assert_eq(setenv("BITGATE_ORACLE_THREADS", "2", 1), 0);
  cr_expect_eq(RUN(tmp, "run", "--lanes", "oracle", "--filter", "is.masked.*", "--db", "ok.db")->status, 0, "a count");
  cr_assert_eq(unsetenv("BITGATE_ORACLE_THREADS"), 0);
  cr_assert_eq(setenv("BITGATE_PLANT", "nosuch.cu:a=>b", 1), 0);
  o = RUN(tmp, "run", "--lanes", "oracle", "--filter", "is.masked.*", "--db", "e.db");
  cr_expect(o->status == 3 && strstr(o->err, "BITGATE_PLANT='nosuch.cu:a=>b': no kernel source of that name"), "%d %s",
            o->status, o->err);
  cr_assert_eq(setenv("BITGATE_PLANT", "no arrow here", 1), 0);
  o = RUN(NULL, "bench", "--oracle-threads", "1,2", "--filter", "csa128 pos 4096*");
  cr_expect(o->status == 3 && strstr(o->err, "expected FILE:OLD=>NEW"), "%d %s", o->status, o->err);
  cr_expect_eq(RUN(NULL, "list")->status, 0, "a command that compiles no kernel does not read the plant");
  cr_assert_eq(unsetenv("BITGATE_PLANT"), 0);
  snprintf(path, sizeof path, "%s/e.db", tmp);
  cr_expect(access(path, F_OK) != 0, "a refused run recorded something");
}

Test(cli, unopenable_database_exits_3_naming_path) {
  char path[400];
  outcome *o;
  snprintf(path, sizeof path, "%s/missing-dir/results.db", tmp);
  o = RUN(NULL, "run", "--db", path);
  cr_expect_eq(o->status, 3);
  cr_expect(strstr(o->err, path) != NULL, "'%s'", o->err);
  o = RUN(NULL, "run", "--db", tmp); /* a directory */
  cr_expect_eq(o->status, 3);
  cr_expect(strstr(o->err, tmp) != NULL, "'%s'", o->err);
}

static void file_bytes(const char *path, char *buf, size_t cap, size_t *n) {
  FILE *f = fopen(path, "rb");
  cr_assert(f);
  *n = fread(buf, 1, cap, f);
  fclose(f);
}

Test(cli, foreign_and_corrupt_databases_are_refused_untouched) {
  static char before[65536], after[65536];
  char path[400];
  size_t nb, na;
  sqlite3 *db;
  outcome *o;
  FILE *f;
  snprintf(path, sizeof path, "%s/foreign.db", tmp);
  cr_assert(sqlite3_open(path, &db) == SQLITE_OK);
  cr_assert(sqlite3_exec(db, "CREATE TABLE invoices(id INTEGER)", 0, 0, 0) == SQLITE_OK);
  sqlite3_close(db);
  file_bytes(path, before, sizeof before, &nb);
  o = RUN(NULL, "run", "--db", path);
  cr_expect_eq(o->status, 3);
  cr_expect(strstr(o->err, "not a bitgate database") != NULL, "'%s'", o->err);
  file_bytes(path, after, sizeof after, &na);
  cr_expect(na == nb && memcmp(before, after, nb) == 0, "foreign database was modified");

  snprintf(path, sizeof path, "%s/corrupt.db", tmp);
  f = fopen(path, "wb");
  memset(before, 0xa5, 4096);
  fwrite(before, 1, 4096, f);
  fclose(f);
  o = RUN(NULL, "run", "--db", path);
  cr_expect_eq(o->status, 3);
  cr_expect(strstr(o->err, path) != NULL, "'%s'", o->err);
  file_bytes(path, after, sizeof after, &na);
  cr_expect(na == 4096 && memcmp(before, after, 4096) == 0, "corrupt file was modified");
}

static long long query_int(const char *path, const char *sql) {
  sqlite3 *db;
  sqlite3_stmt *st;
  long long v = -1;
  cr_assert(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  cr_assert(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(db));
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

Test(cli, default_run_records_provenance_in_bitgate_db) {
  char path[400];
  outcome *o = RUN(tmp, "run");
  cr_expect_eq(o->status, 0, "stdout '%s' stderr '%s'", o->out, o->err);
  snprintf(path, sizeof path, "%s/bitgate.db", tmp);
  cr_assert(access(path, F_OK) == 0, "run must default to ./bitgate.db");
  cr_expect_eq(query_int(path, "SELECT count(*) FROM runs WHERE status='passed' AND exit_code=0 AND "
                               "suite='gate' AND oracle_version=1 AND length(git_rev)>0 AND "
                               "length(kernel_hash)>0 AND length(host)>0 AND ended_at IS NOT NULL"),
               1);
  cr_expect(query_int(path, "SELECT count(*) FROM results WHERE lane='oracle' AND status='pass'") >= 1000,
            "the gate's oracle lane ran");
  cr_expect_eq(query_int(path, "SELECT count(*) FROM results WHERE status NOT IN ('pass','skipped')"), 0);
}

Test(cli, cases_without_a_generator_fail_and_are_recorded) {
  char suite[400], db[400];
  FILE *f;
  outcome *o;
  snprintf(suite, sizeof suite, "%s/tiny.suite", tmp);
  f = fopen(suite, "w");
  fputs("# a family this build does not know\nfamily=zz.none op=None seed=1\n", f);
  fclose(f);
  snprintf(db, sizeof db, "%s/r.db", tmp);
  o = RUN(NULL, "run", "--corpus", tmp, "--suite", "tiny", "--db", db);
  cr_expect_eq(o->status, 1, "'%s' '%s'", o->out, o->err);
  cr_expect(strstr(o->out, "zz.none") != NULL);
  cr_expect_eq(query_int(db, "SELECT count(*) FROM results WHERE status='fail' AND case_id LIKE 'zz.none.%'"), 1);
  o = RUN(NULL, "run", "--corpus", tmp, "--suite", "absent", "--db", db);
  cr_expect_eq(o->status, 3);
  cr_expect(strstr(o->err, "absent.suite") != NULL, "'%s'", o->err);
}

/*
** A suite file that cannot be what its author meant is exit 3 naming it,
** before anything is recorded: a line without a family used to run as case
** 'invalid.00000000', far from its line, and an empty suite passed green.
*/
Test(cli, a_malformed_or_empty_suite_is_exit_3_naming_the_file) {
  struct {
    const char *name, *text, *says;
  } rows[] = {
      {"bad", "# one good line, then a stray one\nfamily=is.valid op=IndexShare seed=1\nop=IndexShare seed=2\n",
       "/bad.suite:3: not a case spec (no family=NAME): 'op=IndexShare seed=2'"},
      {"empty", "", "suite 'empty' in "},
      {"comments", "# nothing but a comment\n\n", "suite 'comments' in "},
  };
  char path[400];
  size_t i;
  for (i = 0; i < sizeof rows / sizeof *rows; i++) {
    FILE *f;
    outcome *o;
    snprintf(path, sizeof path, "%s/%s.suite", tmp, rows[i].name);
    cr_assert((f = fopen(path, "w")));
    fputs(rows[i].text, f);
    fclose(f);
    o = RUN(tmp, "run", "--corpus", tmp, "--suite", rows[i].name, "--db", "m.db");
    cr_expect_eq(o->status, 3, "%s: %s%s", rows[i].name, o->out, o->err);
    cr_expect(strstr(o->err, rows[i].says) != NULL, "%s says \"%s\": '%s'", rows[i].name, rows[i].says, o->err);
  }
  cr_expect(RUN(tmp, "list", "--corpus", tmp, "--suite", "bad")->status == 3, "list reads suites the same way");
  snprintf(path, sizeof path, "%s/m.db", tmp);
  cr_expect(access(path, F_OK) != 0, "a run of a bad suite recorded something");
}

Test(cli, require_gpu_without_one_exits_3) {
  outcome *v = RUN(NULL, "--version");
  if (!strstr(v->out, "gpu none")) cr_skip_test("a GPU is present here");
  cr_expect_eq(RUN(tmp, "run", "--require-gpu")->status, 3);
}

/* The first IndexShare spec of the committed gate suite. */
static void first_gate_spec(char *spec, size_t len) {
  char path[512];
  FILE *f;
  snprintf(path, sizeof path, "%s/corpus/gate.suite", getenv("BITGATE_SOURCE_DIR"));
  f = fopen(path, "r");
  cr_assert(f, "%s", path);
  while (fgets(spec, (int)len, f))
    if (spec[0] != '#' && spec[0] != '\n') break;
  fclose(f);
  spec[strcspn(spec, "\n")] = '\0';
}

Test(cli, list_filter_show_and_repro) {
  char spec[4096], id[128];
  outcome *o = RUN(NULL, "list");
  cr_assert_eq(o->status, 0);
  cr_expect(line_count(o->out) >= 1000, "gate lists %d cases", line_count(o->out));
  o = RUN(NULL, "list", "--filter", "is.capfront.*");
  cr_expect(line_count(o->out) > 0 && strncmp(o->out, "is.capfront.", 12) == 0, "%.80s", o->out);
  sscanf(o->out, "%127s", id);
  o = RUN(NULL, "show", id);
  cr_expect_eq(o->status, 0);
  cr_expect(strstr(o->out, "spec  family=is.capfront") && strstr(o->out, "from  suite gate"), "%s", o->out);
  o = RUN(tmp, "repro", id, "--lanes", "oracle");
  cr_expect_eq(o->status, 0, "%s%s", o->out, o->err);
  cr_expect(strstr(o->out, "identical") != NULL, "%s", o->out);
  first_gate_spec(spec, sizeof spec);
  o = RUN(tmp, "repro", spec, "--lanes", "oracle");
  cr_expect_eq(o->status, 0, "a spec given in full: %s%s", o->out, o->err);
  o = RUN(tmp, "repro", id, "--lanes", "oracle", "--variant", "reference");
  cr_expect_eq(o->status, 0, "--variant reference: %s%s", o->out, o->err);
  o = RUN(tmp, "repro", id, "--variant", "slow");
  cr_expect(o->status == 2 && strstr(o->err, "--variant 'slow'") && line_count(o->err) == 1, "%d %s", o->status,
            o->err);
}

Test(cli, malformed_ids_and_specs_exit_2_naming_the_token) {
  outcome *o = RUN(NULL, "show", "is.valid.XYZ12345");
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "XYZ12345") != NULL, "%s", o->err);
  o = RUN(NULL, "repro", "nodots");
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "nodots") != NULL, "%s", o->err);
  o = RUN(NULL, "repro", "family=is.valid op=IndexShare dtype=f32 k=abc");
  cr_expect_eq(o->status, 2, "%s", o->err);
  cr_expect(strstr(o->err, "'") != NULL && line_count(o->err) == 1, "%s", o->err);
  o = RUN(NULL, "repro", "is.valid.00000000", "--db", "/nonexistent.db");
  cr_expect_eq(o->status, 3, "well-formed but unknown: %s", o->err);
}

Test(cli, repro_resolves_an_old_run_from_the_database) {
  char spec[4096], suite[400], db[400], empty[400], id[128];
  outcome *o;
  FILE *f;
  first_gate_spec(spec, sizeof spec);
  snprintf(suite, sizeof suite, "%s/old.suite", tmp);
  f = fopen(suite, "w");
  fprintf(f, "%s\n", spec);
  fclose(f);
  snprintf(db, sizeof db, "%s/old.db", tmp);
  o = RUN(NULL, "run", "--corpus", tmp, "--suite", "old", "--db", db, "--lanes", "oracle");
  cr_assert_eq(o->status, 0, "%s%s", o->out, o->err);
  o = RUN(NULL, "list", "--corpus", tmp, "--suite", "old");
  sscanf(o->out, "%127s", id);
  snprintf(empty, sizeof empty, "%s/empty-corpus", tmp); /* the suite has since changed */
  mkdir(empty, 0700);
  o = RUN(NULL, "repro", id, "--corpus", empty, "--db", db, "--lanes", "oracle");
  cr_expect_eq(o->status, 0, "%s%s", o->out, o->err);
  cr_expect(strstr(o->out, "database") && strstr(o->out, "identical"), "%s", o->out);
}

Test(cli, over_budget_case_is_refused_with_a_clear_message) {
  outcome *o = RUN(tmp, "repro",
                   "family=is.valid op=IndexShare dtype=f32 idx=i32 b=64 n=64 nkv=none sq=512 sc=512 sp=4096 "
                   "h=256 ih=1 k=32 out=1 present=grow vlen=none bias=none scale=none seed=7 steps=4",
                   "--lanes", "oracle");
  cr_expect_eq(o->status, 1);
  cr_expect(strstr(o->out, "over the budget") != NULL, "%s", o->out);
}

/*
** Every issue 8 target (reports/report_targets.c) names a kernel the bench
** prints, so a renamed line cannot silently lose its verdict; a B = 1
** target's shape matches a printed B = 1 line of that kernel.  out: the
** table of `bench --filter '*B=1'` (kernel and shape in the first 27 and
** next 25 columns).
*/
static void bench_targets_name_printed_lines(const char *out) {
  int i;
  for (i = 0; i < report_target_count(); i++) {
    const report_target *t = report_target_at(i);
    const int b1 = fnmatch(t->shape_glob, "pos 4096, B=1", 0) == 0 || fnmatch(t->shape_glob, "pos 65536, B=1", 0) == 0 ||
                   fnmatch(t->shape_glob, "K=2048, heads 64, B=1", 0) == 0;
    const char *line;
    int kernel_seen = 0, shape_seen = 0;
    for (line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
      char kernel[28], shape[26];
      int k;
      snprintf(kernel, sizeof kernel, "%.27s", line);
      snprintf(shape, sizeof shape, "%.25s", strlen(line) > 28 ? line + 28 : "");
      for (k = (int)strlen(kernel) - 1; k >= 0 && (kernel[k] == ' ' || kernel[k] == '\n'); k--) kernel[k] = '\0';
      for (k = (int)strlen(shape) - 1; k >= 0 && (shape[k] == ' ' || shape[k] == '\n'); k--) shape[k] = '\0';
      if (strcmp(kernel, t->kernel)) continue;
      kernel_seen = 1;
      if (fnmatch(t->shape_glob, shape, 0) == 0) shape_seen = 1;
    }
    cr_expect(kernel_seen, "target '%s' names no line the bench prints", t->kernel);
    cr_expect(!b1 || shape_seen, "target '%s' at '%s' matches no printed B=1 line", t->kernel, t->shape_glob);
  }
}

/*
** --oracle-threads: a row a shape with each count's best and median and the
** speedup over the first count, no device figures; bad lists are refused
** naming what was wrong.
*/
Test(cli, bench_oracle_threads_prints_a_scaling_row_a_shape) {
  static char out[4096];
  const char *row;
  double best1, med1, best2, med2, up_best, up_med;
  outcome *o = RUN(NULL, "bench", "--oracle-threads", "1,2", "--oracle-runs", "2", "--filter", "csa128 pos 4096*");
  cr_assert_eq(o->status, 0, "%s", o->err);
  snprintf(out, sizeof out, "%.4000s", o->out);
  cr_expect(strstr(out, "best / median of 2 runs a count") && strstr(out, "1 thread") && strstr(out, "2 threads"),
            "%s", out);
  cr_expect(strstr(out, "processors online)") != NULL, "the header says how many cores the counts ran on: %s", out);
  cr_expect(!strstr(out, "csa4") && !strstr(out, "IndexShare") && !strstr(out, "fast us"), "one shape, no table: %s",
            out);
  row = strstr(out, "csa128 pos 4096, B=1 ");
  cr_assert_not_null(row, "%s", out);
  cr_assert_eq(sscanf(row + strlen("csa128 pos 4096, B=1 "), " %lf / %lf %lf / %lf %lfx / %lfx", &best1, &med1, &best2,
                      &med2, &up_best, &up_med),
               6, "%s", row);
  cr_expect(best1 > 0 && best1 <= med1 && best2 > 0 && best2 <= med2, "%s", row);
  /* the figures print to 0.01: their quotient can miss the printed speedup by a percent or so */
  cr_expect(up_best > 0.97 * best1 / best2 && up_best < 1.03 * best1 / best2, "speedup is best / best: %s", row);
  /* under the rows, issue 8's verdict on that same figure: one shape, so it is the lowest */
  row = strstr(out, "targets (issue 8, judged on the best times");
  cr_assert_not_null(row, "%s", out);
  {
    char want[128];
    snprintf(want, sizeof want, "oracle on 2 cores: %.2fx (csa128 pos 4096, B=1), ", up_best);
    cr_expect(strstr(row, want) != NULL, "wanted '%s' in %s", want, row);
    cr_expect(strstr(row, up_best >= 1.8 ? "), reached" : "), short by ") != NULL, "%s", row);
  }
  o = RUN(NULL, "bench", "--oracle-threads", "1,2", "--oracle-runs", "1", "--filter", "csa4 pos 4096*");
  cr_expect_eq(o->status, 0, "%s", o->err);
  cr_expect(strstr(o->out, "csa4 pos 4096, B=1 ") != NULL, "%s", o->out);
  cr_expect(!strstr(o->out, "parallel call"), "the call sites print only when asked: %s", o->out);
  /* --oracle-calls: under the row, the step's time by the oracle's parallel call sites */
  o = RUN(NULL, "bench", "--oracle-threads", "1,2", "--oracle-runs", "1", "--oracle-calls", "--filter",
          "csa128 pos 4096*");
  cr_expect_eq(o->status, 0, "%s", o->err);
  row = strstr(o->out, "csa128 pos 4096, B=1 ");
  cr_assert_not_null(row, "%s", o->out);
  cr_expect(strstr(row, "parallel call") && strstr(row, "calls") && strstr(row, "items"), "%s", row);
  {
    long long calls, items;
    const char *pools = strstr(row, "  pool_dims ");
    cr_assert_not_null(pools, "the record's pools have a line: %s", row);
    cr_expect(sscanf(pools, " pool_dims %lld %lld", &calls, &items) == 2 && calls == 1 && items == 512,
              "one call over the record's 512 dims: %.120s", pools);
  }
  cr_expect(strstr(row, "  between calls ") != NULL, "%s", row);
  cr_expect(strstr(row, "targets (issue 8") > strstr(row, "between calls"), "the sites come before the verdicts");
  o = RUN(NULL, "bench", "--oracle-calls");
  cr_expect(o->status == 2 && strstr(o->err, "--oracle-calls needs --oracle-threads"), "%s", o->err);
  {
    static const char *const bad[] = {"1", "0,2", "1,2,", "1,a", "1,,2", "-1,2", "1,2,3,4,5", "1, 2"};
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      o = RUN(NULL, "bench", "--oracle-threads", bad[i]);
      cr_expect_eq(o->status, 2, "'%s' is refused", bad[i]);
      cr_expect(strstr(o->err, "--oracle-threads '") && strstr(o->err, "expected 2 to 4 thread counts"), "'%s': %s",
                bad[i], o->err);
    }
  }
  o = RUN(NULL, "bench", "--oracle-threads", "1,2", "--oracle-runs", "0");
  cr_expect(o->status == 2 && strstr(o->err, "--oracle-runs '0' is not a number from 1 to 1000"), "%s", o->err);
  o = RUN(NULL, "bench", "--oracle-runs", "3");
  cr_expect(o->status == 2 && strstr(o->err, "--oracle-runs '3' needs --oracle-threads"), "%s", o->err);
  o = RUN(NULL, "bench", "--oracle-threads", "1,2", "--variant", "fast");
  cr_expect(o->status == 2 && strstr(o->err, "--variant: --oracle-threads times the oracle alone"), "%s", o->err);
}

/*
** The exploration options: the run says first that it records nothing and
** gives no verdicts; bad kernel lists and options that time no kernel are
** refused naming what was wrong.
*/
Test(cli, bench_exploration_options_say_so_and_refuse_bad_lists) {
  static const char *const bad[][2] = {
      {",", "an empty kernel name"},       {"a,,b", "an empty kernel name"},
      {"a,a", "'a' is named twice"},       {"csa4-attn", "letters, digits and '_'"},
      {"a b", "letters, digits and '_'"},  {"k0,k1,k2,k3,k4,k5,k6,k7,k8,k9,k10,k11,k12,k13,k14,k15,k16", "more than 16"},
  };
  outcome *o = RUN(NULL, "bench", "--skip-kernels", "csa4_attn_softmax,csa4_attn_gather", "--no-check", "--filter",
                   "csa4 pos 4096, B=1");
  size_t i;
  cr_expect_eq(o->status, 0, "%s", o->err);
  cr_expect(!strncmp(o->out,
                     "exploration run (--skip-kernels csa4_attn_softmax,csa4_attn_gather, --no-check): figures print, "
                     "nothing is recorded, no verdicts\n",
                     strlen("exploration run (--skip-kernels csa4_attn_softmax,csa4_attn_gather, --no-check): ")),
            "%.300s", o->out);
  cr_expect(strstr(o->out, "csa4 sink attention") != NULL && !strstr(o->out, "<= 20 us"), "no verdicts: %.2000s",
            o->out);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o = RUN(NULL, "bench", "--skip-kernels", bad[i][0]);
    cr_expect(o->status == 2 && strstr(o->err, "--skip-kernels ") && strstr(o->err, bad[i][1]), "'%s': %s", bad[i][0],
              o->err);
  }
  o = RUN(NULL, "bench", "--no-check", "--trend");
  cr_expect(o->status == 2 && strstr(o->err, "--no-check: --trend times no kernel"), "%s", o->err);
  o = RUN(NULL, "bench", "--skip-kernels", "x", "--oracle-threads", "1,2");
  cr_expect(o->status == 2 && strstr(o->err, "--skip-kernels: --oracle-threads times no kernel"), "%s", o->err);
  o = RUN(NULL, "bench", "--skip-kernels", "x", "--targets");
  cr_expect(o->status == 2 && strstr(o->err, "--skip-kernels: --targets times no kernel"), "%s", o->err);
  if (strstr(RUN(NULL, "--version")->out, "gpu none")) return;
  /*
  ** On a GPU: a kernel with its softmax's exps planted away gets no figure, but
  ** is timed under --no-check.  The plant is in the pipelined softmax, the one a
  ** B = 1 row of 160 candidates runs (the batched one is for longer rows).
  */
  setenv("BITGATE_PLANT", "csa_attention_tiles.h:held[j] = nx_expf(held[j] - m), e = held[j];=>"
                          "held[j] = held[j] - m, e = held[j];", 1);
  o = RUN(tmp, "bench", "--variant", "fast", "--filter", "csa128 pos 4096, B=1");
  cr_expect(o->status == 1 && strstr(o->err, "differs from the oracle's: no figure"), "%d: %s", o->status, o->err);
  o = RUN(tmp, "bench", "--variant", "fast", "--no-check", "--filter", "csa128 pos 4096, B=1");
  unsetenv("BITGATE_PLANT");
  cr_expect_eq(o->status, 0, "%s", o->err);
  cr_expect(strstr(o->out, "differs from the oracle's; timed anyway (--no-check)") != NULL, "%.2000s", o->out);
  cr_expect(strstr(o->out, "csa128 sink attention       pos 4096, B=1                    -") == NULL &&
                strstr(o->out, "csa128 sink attention") != NULL,
            "the attention has a figure: %.3000s", o->out);
}

/*
** The launch floor lines: none without a GPU (there is nothing to time).  On
** one, both open the table with a figure, the three chained passes' above the
** one empty kernel's; they are recorded, and printed again after the reasons
** of a missed target (the B = 1 attention's), from the run and from --db.
*/
Test(cli, bench_opens_with_the_launch_floor_lines_on_a_gpu) {
  outcome *o;
  const char *one, *passes, *under;
  double one_us = 0, passes_us = 0;
  if (strstr(RUN(NULL, "--version")->out, "gpu none")) {
    o = RUN(tmp, "bench", "--variant", "fast", "--filter", "csa128 pos 4096, B=1");
    cr_expect_eq(o->status, 0, "%s", o->err);
    cr_expect(!strstr(o->out, "launch floor") && strstr(o->out, "device figures need a GPU"), "%s", o->out);
    return;
  }
  o = RUN(tmp, "bench", "--variant", "fast", "--filter", "csa4 pos 4096, B=1", "--db", "floor.db");
  cr_assert_eq(o->status, 0, "%s", o->err);
  one = strstr(o->out, "\nlaunch floor                one empty kernel         ");
  passes = strstr(o->out, "\nlaunch floor                attention passes, B=1    ");
  cr_assert(one && passes && one < passes && passes < strstr(o->out, "csa4 state copy"), "%s", o->out);
  cr_expect_eq(sscanf(one + 54, "%lf", &one_us), 1, "%.120s", one);
  cr_expect_eq(sscanf(passes + 54, "%lf", &passes_us), 1, "%.120s", passes);
  cr_expect(one_us > 0.5 && passes_us > one_us, "one kernel %.2f us, three passes %.2f us", one_us, passes_us);
  under = strstr(o->out, "this GPU's launch floors (the launch floor lines): one empty kernel ");
  cr_expect(under && under > strstr(o->out, "why short:") && strstr(under, "; attention passes, B=1 "), "%s",
            o->out);
  o = RUN(tmp, "bench", "--targets", "--db", "floor.db");
  cr_expect(o->status == 0 && strstr(o->out, "this GPU's launch floors (the launch floor lines): one empty kernel "),
            "%d: %s", o->status, o->out);
}

/*
** --loops: refused with options it does not take; without a GPU exit 3
** saying why.  On a GPU every probe posts a figure, and the values pass's
** two-head loop (csa_weighted_pair_in_order) planted to subtract leaves
** its three probes without one and the others, which do not run it, with
** theirs (exit 1).
*/
Test(cli, bench_loops_times_the_probes_or_says_why_not) {
  outcome *o = RUN(NULL, "bench", "--loops", "--variant", "fast");
  cr_expect(o->status == 2 && strstr(o->err, "--variant: --loops times the loop probes alone (--runs only)"), "%s",
            o->err);
  o = RUN(NULL, "bench", "--oracle-threads", "1,2", "--loops");
  cr_expect(o->status == 2 && strstr(o->err, "--oracle-threads: --loops times the loop probes alone"), "%s", o->err);
  if (strstr(RUN(NULL, "--version")->out, "gpu none")) {
    o = RUN(NULL, "bench", "--loops");
    cr_expect(o->status == 3 && strstr(o->err, "--loops runs the loops on a GPU: "), "%d: %s", o->status, o->err);
    return;
  }
  o = RUN(NULL, "bench", "--loops");
  cr_expect_eq(o->status, 0, "%s", o->err);
  cr_expect(strstr(o->out, "values chains (narrow values pass)") && strstr(o->out, "softmax sum") &&
                !strstr(o->out, "sums differ"),
            "%s", o->out);
  setenv("BITGATE_PLANT", "csa_attention_tiles.h:a0 = a0 + pa.x * x0=>a0 = a0 - pa.x * x0", 1);
  o = RUN(NULL, "bench", "--loops");
  unsetenv("BITGATE_PLANT");
  cr_expect_eq(o->status, 1, "%s", o->out);
  cr_expect(strstr(o->out, "values chains (narrow values pass): sums differ from the C sums, no figure: block 0") &&
                strstr(o->out, "values chains, one warp alone: sums differ") &&
                !strstr(o->out, "values adds, operands in registers: sums differ") &&
                !strstr(o->out, "candidate: values staged transposed: sums differ") &&
                !strstr(o->out, "scores stage (narrow resident pass, its 4 chain warps): sums differ") &&
                !strstr(o->out, "softmax sum (softmax pass, thread 0): sums differ") &&
                !strstr(o->out, "candidate: softmax sum in segments: sums differ"),
            "%s", o->out);
}

Test(cli, bench_prints_oracle_figures_and_says_what_needs_a_gpu) {
  static char out[8192];
  const char *line;
  outcome *o = RUN(NULL, "bench", "--filter", "*B=1");
  cr_expect_eq(o->status, 0, "%s", o->err);
  snprintf(out, sizeof out, "%.8000s", o->out); /* RUN reuses one outcome */
  cr_expect(strstr(out, "csa4 scoring + top-k") && strstr(out, "pos 4096") && strstr(out, "pos 65536"), "%s", out);
  cr_expect(strstr(out, "csa128 sink attention") && strstr(out, "IndexShare decode step"), "%s", out);
  cr_expect(strstr(out, "csa4 index query") && strstr(out, "csa4 index scoring") && strstr(out, "csa4 top-k selection"),
            "the scoring stage's kernels have lines of their own: %s", out);
  cr_expect(!strstr(out, "B=64"), "--filter keeps the B=1 shapes only: %s", out);
  /* the floor of ratio-4 scoring at 64K, B=1: 268 MFLOP at 33.5 T/s, the "about 8 us" */
  cr_expect(strstr(out, "8.11"), "%s", out);
  /*
  ** IndexShare's, heads 64, B=1: its FP32 work, 101 M instructions (3.02 us);
  ** its bytes are the gathered rows (1.76 us), not the two present copies a
  ** one-output step no longer makes (5.25 us with them)
  */
  line = strstr(out, "IndexShare decode step      K=2048, heads 64, B=1 ");
  cr_assert_not_null(line, "%s", out);
  cr_expect(strstr(line, " 3.02 ") != NULL && strstr(line, " 3.02 ") < strchr(line, '\n'), "%.200s", line);
  bench_targets_name_printed_lines(out);
  if (strstr(RUN(NULL, "--version")->out, "gpu none")) cr_expect(strstr(out, "device figures need a GPU") != NULL);
  cr_expect_eq(RUN(NULL, "bench", "--runs", "5")->status, 2, "fewer than 20 runs is refused");
  cr_expect_eq(RUN(NULL, "bench", "--variant", "quick")->status, 2, "an unknown variant is refused");
  o = RUN(NULL, "bench", "--timing", "wall");
  cr_expect_eq(o->status, 2, "an unknown timing is refused");
  cr_expect(strstr(o->err, "--timing 'wall': expected held or submit") != NULL, "%s", o->err);
}

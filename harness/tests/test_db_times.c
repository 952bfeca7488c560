/*
** test_db_times.c: `bitgate db times` and the suite's times file as a user
** meets them (harness/case_times.h).  A run's case times written as a times
** file come out heaviest first; saved beside the suite, they order a run
** with workers on a fresh database, which says so; a malformed file stops
** such a run naming its line; bad arguments get their message.
*/
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "harness/tests/bitgate_process.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(db_times, .init = make_tmp, .fini = remove_tmp);

static const char *in_tmp(int slot, const char *name) {
  static char paths[4][320];
  snprintf(paths[slot], sizeof paths[slot], "%s/%s", tmp, name);
  return paths[slot];
}

static void write_file(const char *path, const char *text, const char *mode) {
  FILE *f = fopen(path, mode);
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

/* tmp/tiny.suite: the committed gate suite's first n IndexShare specs. */
static void tiny_suite(int n) {
  char path[512], line[2048];
  FILE *in, *out;
  snprintf(path, sizeof path, "%s/corpus/gate.suite", getenv("BITGATE_SOURCE_DIR"));
  in = fopen(path, "r");
  cr_assert_not_null(in, "%s", path);
  out = fopen(in_tmp(0, "tiny.suite"), "w");
  cr_assert_not_null(out);
  while (n > 0 && fgets(line, sizeof line, in))
    if (!strncmp(line, "family=is.", 10)) fputs(line, out), n--;
  fclose(in);
  fclose(out);
}

Test(db_times, a_runs_times_order_a_fresh_database_from_the_suites_file) {
  char times[8192], want[512], *line;
  double last = 1e300;
  int cases = 0;
  outcome *o;
  tiny_suite(3);
  o = RUN(NULL, "run", "--corpus", tmp, "--suite", "tiny", "--db", in_tmp(1, "first.db"), "--lanes", "oracle");
  cr_assert_eq(o->status, 0, "'%s' '%s'", o->out, o->err);
  o = RUN(NULL, "db", "times", "--suite", "tiny", "--db", in_tmp(1, "first.db"));
  cr_assert_eq(o->status, 0, "'%s' '%s'", o->out, o->err);
  cr_expect(!strncmp(o->out, "# Case times of suite tiny", 26), "'%s'", o->out);
  cr_expect(strstr(o->out, "from run 1 of") != NULL, "'%s' names the run", o->out);
  cr_assert_lt(strlen(o->out), sizeof times);
  memcpy(times, o->out, strlen(o->out) + 1);
  for (line = strtok(o->out, "\n"); line; line = strtok(NULL, "\n")) {
    char id[128];
    double ms;
    if (line[0] == '#') continue;
    cr_assert_eq(sscanf(line, "%127s %lf", id, &ms), 2, "'%s'", line);
    cr_expect(!strncmp(id, "is.", 3), "'%s' is a case id", id);
    cr_expect(ms <= last, "heaviest first: %g after %g", ms, last);
    last = ms, cases++;
  }
  cr_expect_eq(cases, 3);
  write_file(in_tmp(2, "tiny.times"), times, "w");
  o = RUN(NULL, "run", "--corpus", tmp, "--suite", "tiny", "--db", in_tmp(1, "fresh.db"), "--lanes", "oracle",
          "--workers", "--jobs", "2");
  cr_expect_eq(o->status, 0, "'%s' '%s'", o->out, o->err);
  snprintf(want, sizeof want, "order: heaviest case first, by the case times in %s", in_tmp(2, "tiny.times"));
  cr_expect(strstr(o->out, want) != NULL, "'%s' says the file ordered it", o->out);
  o = RUN(NULL, "run", "--corpus", tmp, "--suite", "tiny", "--db", in_tmp(1, "fresh.db"), "--lanes", "oracle",
          "--workers", "--jobs", "2");
  cr_expect(strstr(o->out, "order: heaviest case first, by the case times of run 1") != NULL,
            "'%s': the database's run before wins", o->out);
  write_file(in_tmp(2, "tiny.times"), "is.valid.00000000 twelve\n", "a");
  o = RUN(NULL, "run", "--corpus", tmp, "--suite", "tiny", "--db", in_tmp(1, "fresh.db"), "--lanes", "oracle",
          "--workers", "--jobs", "2");
  cr_expect_eq(o->status, 3, "'%s' '%s'", o->out, o->err);
  snprintf(want, sizeof want, "%s:%d: expected '<case id> <milliseconds>'", in_tmp(2, "tiny.times"),
           line_count(times) + 1);
  cr_expect(strstr(o->err, want) != NULL, "'%s' names the file and line", o->err);
}

Test(db_times, bad_arguments_are_named) {
  outcome *o;
  tiny_suite(1);
  o = RUN(NULL, "db", "times", "--db", in_tmp(1, "absent.db"));
  cr_expect_eq(o->status, 3);
  cr_expect(strstr(o->err, "no database") != NULL, "'%s'", o->err);
  cr_assert_eq(RUN(NULL, "run", "--corpus", tmp, "--suite", "tiny", "--db", in_tmp(1, "r.db"), "--lanes", "oracle")->status, 0);
  o = RUN(NULL, "db", "times", "--db", in_tmp(1, "r.db"));
  cr_expect_eq(o->status, 3, "suite gate never ran there");
  cr_expect(strstr(o->err, "holds no ended run of suite 'gate'") != NULL, "'%s'", o->err);
  o = RUN(NULL, "db", "times", "--suite", "tiny", "--run", "7", "--db", in_tmp(1, "r.db"));
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "--run 7: not an ended run of suite 'tiny'") != NULL, "'%s'", o->err);
  o = RUN(NULL, "db", "times", "--suite", "tiny", "--run", "1", "--db", in_tmp(1, "r.db"));
  cr_expect_eq(o->status, 0, "'%s'", o->err);
  o = RUN(NULL, "db", "times", "--run", "x");
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "--run 'x'") != NULL, "'%s'", o->err);
  o = RUN(NULL, "db", "times", "--frobnicate");
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "'--frobnicate'") != NULL, "'%s'", o->err);
  o = RUN(NULL, "db");
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "merge or times") != NULL, "'%s'", o->err);
}

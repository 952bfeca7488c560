/*
** test_corpus.c: the committed suites together (DESIGN.md "Cases, ids,
** corpus"; issue 6, "Committed corpus"): nightly.suite is a superset of
** gate.suite, and every id in nightly.suite is unique.  The per-family tests
** (test_cases.c, test_csa128_cases.c, test_csa4_cases.c) check that each
** file's lines are gen_suite's.
*/
#include "cases/case_spec.h"
#include "spec_set.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* The spec lines of corpus/SUITE.suite ('#' comments and blanks skipped); skips without BITGATE_SOURCE_DIR. */
static spec_set read_suite(const char *suite) {
  const char *dir = getenv("BITGATE_SOURCE_DIR");
  spec_set s = {0};
  char path[4096], *line = NULL;
  size_t cap = 0;
  ssize_t len;
  FILE *f;
  if (!dir) cr_skip_test("BITGATE_SOURCE_DIR is not set");
  snprintf(path, sizeof path, "%s/corpus/%s.suite", dir, suite);
  cr_assert((f = fopen(path, "r")) != NULL, "cannot read %s", path);
  while ((len = getline(&line, &cap, f)) >= 0) {
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (len > 0 && line[0] != '#') spec_set_push(line, &s);
  }
  free(line);
  fclose(f);
  return s;
}

static int compare_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

Test(corpus, nightly_holds_every_gate_line) {
  spec_set gate = read_suite("gate"), nightly = read_suite("nightly");
  int i, missing = 0;
  cr_assert(gate.n > 0, "gate.suite has no specs");
  cr_assert(nightly.n > gate.n, "nightly.suite has %d specs, not more than gate's %d", nightly.n, gate.n);
  qsort(nightly.v, (size_t)nightly.n, sizeof *nightly.v, compare_str);
  for (i = 0; i < gate.n; i++)
    if (!bsearch(&gate.v[i], nightly.v, (size_t)nightly.n, sizeof *nightly.v, compare_str)) {
      if (missing++ < 5) cr_log_error("gate line %d is not in nightly.suite:\n  %s", i + 1, gate.v[i]);
    }
  cr_expect_eq(missing, 0, "%d gate lines are missing from nightly.suite (rerun gen_suite --nightly)", missing);
  spec_set_free(&gate);
  spec_set_free(&nightly);
}

Test(corpus, nightly_ids_are_unique) {
  spec_set nightly = read_suite("nightly"), ids = {0};
  char id[CASE_ID_MAX];
  int i, twice = 0;
  for (i = 0; i < nightly.n; i++) {
    cr_assert_eq(case_id_from_spec(nightly.v[i], id, sizeof id), 0, "line %d has no id:\n  %s", i + 1, nightly.v[i]);
    spec_set_push(id, &ids);
  }
  qsort(ids.v, (size_t)ids.n, sizeof *ids.v, compare_str);
  for (i = 1; i < ids.n; i++)
    if (!strcmp(ids.v[i - 1], ids.v[i]) && twice++ < 5) cr_log_error("nightly.suite: id %s appears twice", ids.v[i]);
  cr_expect_eq(twice, 0, "%d ids of nightly.suite repeat", twice);
  spec_set_free(&nightly);
  spec_set_free(&ids);
}

/*
** csa_test_util.c: see csa_test_util.h.
*/
#include "csa_test_util.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

/* The n lines a writer left in text (freed here), at least min of them. */
static spec_set written_lines(char *text, int n, int min, const char *suite, const char *what) {
  spec_set s = {0};
  char *line, *save = NULL;
  cr_assert(n >= min, "the %s suite has %d %s specs, want >= %d", suite, n, what, min);
  for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) spec_set_push(line, &s);
  free(text);
  cr_assert_eq(s.n, n);
  return s;
}

spec_set csa_test_generated_suite(int (*write_suite)(FILE *out, int per_family_scale), const char *what) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  int n = write_suite(f, 1);
  fclose(f);
  return written_lines(text, n, 300, "gate", what);
}

spec_set csa_test_generated_nightly(int (*write_nightly)(FILE *out), const char *what) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  int n = write_nightly(f);
  fclose(f);
  return written_lines(text, n, 400, "nightly", what);
}

void csa_test_expect_corpus(const spec_set *gen, const char *suite, const char *prefix, const char *what) {
  const char *dir = getenv("BITGATE_SOURCE_DIR");
  spec_set mine = {0};
  char path[4096], *line = NULL;
  size_t cap = 0;
  ssize_t len;
  FILE *f;
  int i;
  if (!dir) cr_skip_test("BITGATE_SOURCE_DIR is not set");
  snprintf(path, sizeof path, "%s/corpus/%s.suite", dir, suite);
  cr_assert((f = fopen(path, "r")) != NULL, "cannot read %s", path);
  while ((len = getline(&line, &cap, f)) >= 0) {
    while (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
    if (!strncmp(line, prefix, strlen(prefix))) spec_set_push(line, &mine);
  }
  free(line);
  fclose(f);
  cr_assert_eq(mine.n, gen->n, "%s has %d %s lines, gen_suite writes %d (rerun gen_suite, see its header)", path,
               mine.n, what, gen->n);
  for (i = 0; i < gen->n; i++) cr_assert_str_eq(mine.v[i], gen->v[i], "%s: %s line %d differs", path, what, i);
  spec_set_free(&mine);
}

void csa_test_expect_parse_rows(const csa_parse_row *rows, size_t n,
                                int (*parse)(const char *spec, char *err, size_t len)) {
  size_t i;
  for (i = 0; i < n; i++) {
    char err[512] = "";
    int rc = parse(rows[i].spec, err, sizeof err);
    if (!rows[i].want) {
      cr_assert_eq(rc, 0, "row %zu: %s\n  %s", i, err, rows[i].spec);
      continue;
    }
    cr_assert_eq(rc, -1, "row %zu parsed:\n  %s", i, rows[i].spec);
    cr_assert(strstr(err, rows[i].want), "row %zu: error '%s' does not contain '%s'", i, err, rows[i].want);
  }
}

void csa_step_bind(csa_step_tensors *t) {
  int i;
  for (i = 0; i < CSA_INPUT_COUNT; i++) t->in_p[i] = &t->in[i];
  for (i = 0; i < CSA_OUTPUT_MAX; i++) t->out_p[i] = &t->out[i];
}

int csa_tensors_equal(const tensor *a, const tensor *b) {
  if (a->dt != b->dt || a->rank != b->rank || memcmp(a->shape, b->shape, sizeof a->shape)) return 0;
  if (!a->data || !b->data) return a->data == b->data;
  return !memcmp(a->data, b->data, tensor_bytes(a));
}

double csa_test_now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*
** csa4_test_util.c: see csa4_test_util.h.
*/
#include "csa4_test_util.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

spec_set csa4_generated_suite(void) {
  spec_set s = {0};
  char *text = NULL, *line, *save = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  int n = cases_csa4_write_suite(f, 1);
  fclose(f);
  cr_assert(n >= 300, "the gate suite has %d ratio-4 specs, want >= 300", n);
  for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) spec_set_push(line, &s);
  free(text);
  cr_assert_eq(s.n, n);
  return s;
}

csa4_case csa4_parse_or_die(const char *spec) {
  csa4_case c;
  char err[512];
  cr_assert_eq(cases_csa4_parse(spec, &c, err, sizeof err), 0, "parse failed: %s\n  %s", err, spec);
  return c;
}

int csa4_step_make(const csa4_case *c, int step, csa4_step_tensors *t, char *err, size_t len) {
  int i, rc = cases_csa4_materialize(c, step, t->in, &t->n_in, t->out, &t->n_out, &t->attrs, err, len);
  for (i = 0; i < CSA_INPUT_COUNT; i++) t->in_p[i] = &t->in[i];
  for (i = 0; i < CSA_OUTPUT_MAX; i++) t->out_p[i] = &t->out[i];
  return rc;
}

int csa4_tensors_equal(const tensor *a, const tensor *b) {
  if (a->dt != b->dt || a->rank != b->rank || memcmp(a->shape, b->shape, sizeof a->shape)) return 0;
  if (!a->data || !b->data) return a->data == b->data;
  return !memcmp(a->data, b->data, tensor_bytes(a));
}

double csa4_now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

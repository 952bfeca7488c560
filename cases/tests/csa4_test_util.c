/*
** csa4_test_util.c: see csa4_test_util.h.
*/
#include "csa4_test_util.h"

#include <criterion/criterion.h>

spec_set csa4_generated_suite(void) { return csa_test_generated_suite(cases_csa4_write_suite, "ratio-4"); }

csa4_case csa4_parse_or_die(const char *spec) {
  csa4_case c;
  char err[512];
  cr_assert_eq(cases_csa4_parse(spec, &c, err, sizeof err), 0, "parse failed: %s\n  %s", err, spec);
  return c;
}

int csa4_step_make(const csa4_case *c, int step, csa4_step_tensors *t, char *err, size_t len) {
  int rc = cases_csa4_materialize(c, step, t->in, &t->n_in, t->out, &t->n_out, &t->attrs, err, len);
  csa_step_bind(t);
  return rc;
}

/*
** csa4_test_util.h: fixtures the ratio-4 case tests share
** (test_csa4_cases.c, test_csa4_oracle.c): the generated suite, strict
** parsing and one materialized step (csa_test_util.h holds what both ratios
** share).
*/
#ifndef CASES_TESTS_CSA4_TEST_UTIL_H
#define CASES_TESTS_CSA4_TEST_UTIL_H

#include "cases/csa4_cases.h"
#include "csa_test_util.h"

/* The ratio-4 gate suite as cases_csa4_write_suite writes it (asserts >= 300 specs). */
spec_set csa4_generated_suite(void);

/* Parses spec or fails the test, printing the error and the spec. */
csa4_case csa4_parse_or_die(const char *spec);

typedef csa_step_tensors csa4_step_tensors;

/* cases_csa4_materialize into t, with t's pointer arrays set; its return code. */
int csa4_step_make(const csa4_case *c, int step, csa4_step_tensors *t, char *err, size_t len);

#endif

/*
** csa_test_util.h: fixtures the CSA case tests of both ratios share
** (test_csa128_cases.c, and test_csa4_cases.c / test_csa4_oracle.c through
** csa4_test_util.h): a family's generated gate and nightly suites, the check
** that corpus/gate.suite and corpus/nightly.suite hold them, one step's tensors with the pointer arrays the
** oracle takes, tensor equality and a monotonic clock.
*/
#ifndef CASES_TESTS_CSA_TEST_UTIL_H
#define CASES_TESTS_CSA_TEST_UTIL_H

#include "oracle/csa.h"
#include "spec_set.h"

#include <stddef.h>
#include <stdio.h>

/*
** The suite write_suite writes at scale 1, one spec a line; asserts it holds
** >= 300 specs (what names them in the message: "ratio-4").
*/
spec_set csa_test_generated_suite(int (*write_suite)(FILE *out, int per_family_scale), const char *what);

/* The nightly suite write_nightly writes; asserts it holds >= 400 specs. */
spec_set csa_test_generated_nightly(int (*write_nightly)(FILE *out), const char *what);

/*
** The lines of $BITGATE_SOURCE_DIR/corpus/SUITE.suite (suite "gate" or
** "nightly") that start with prefix ("family=csa4.") must be gen's, in
** order (skips the test when the variable is not set).
*/
void csa_test_expect_corpus(const spec_set *gen, const char *suite, const char *prefix, const char *what);

/* A spec and what its parse error must contain (NULL: it must parse). */
typedef struct csa_parse_row {
  const char *spec, *want;
} csa_parse_row;

/* Runs every row through parse (0, or -1 with err set) and checks the outcome. */
void csa_test_expect_parse_rows(const csa_parse_row *rows, size_t n,
                                int (*parse)(const char *spec, char *err, size_t len));

/* One materialized step; csa_step_bind points in_p / out_p at in / out. */
typedef struct csa_step_tensors {
  tensor in[CSA_INPUT_COUNT], out[CSA_OUTPUT_MAX];
  const tensor *in_p[CSA_INPUT_COUNT];
  tensor *out_p[CSA_OUTPUT_MAX];
  int n_in, n_out;
  csa_attrs attrs;
} csa_step_tensors;

void csa_step_bind(csa_step_tensors *t);

/* Same dtype, rank, shape and bytes (two NULL data count as equal). */
int csa_tensors_equal(const tensor *a, const tensor *b);

double csa_test_now_s(void);

#endif

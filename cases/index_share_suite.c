/*
** index_share_suite.c: the IndexShare part of the gate and nightly suites
** (cases_is_write_suite, cases_is_write_nightly; index_share_cases.h): how
** many passes over each family's combinations, from which seed.  The
** nightly suite is every gate spec plus its own passes, drawn with the
** larger shapes.  tools/gen_suite writes them into corpus/.
*/
#include "cases/index_share_cases_internal.h"

#include "cases/spec_list.h"

#define CASES_IS_SUITE_SEED 0x62697467617465ull /* "bitgate" */

/* Passes over each family's combinations in the gate suite (at scale 1). */
static const int suite_passes[IS_FAMILY_COUNT] = {2, 1, 1, 2, 2, 2, 2, 1};

/* The nightly suite's added passes, drawn from their own seed with the larger shapes. */
#define CASES_IS_NIGHTLY_SEED 0x6e696768746c79ull /* "nightly" */
static const int nightly_passes[IS_FAMILY_COUNT] = {2, 1, 1, 1, 1, 1, 1, 1};

static int is_write_suite(FILE *out, int per_family_scale, int nightly) {
  spec_list l = {0};
  int f;
  for (f = 0; f < IS_FAMILY_COUNT && !l.failed; f++) {
    int combos = cases_is_family_combos(is_family_names[f]);
    is_enumerate(f, suite_passes[f] * per_family_scale * combos, CASES_IS_SUITE_SEED, 0, spec_list_push, &l);
    if (nightly) is_enumerate(f, nightly_passes[f] * combos, CASES_IS_NIGHTLY_SEED, 1, spec_list_push, &l);
  }
  return spec_list_write(&l, out);
}

int cases_is_write_suite(FILE *out, int per_family_scale) { return is_write_suite(out, per_family_scale, 0); }

int cases_is_write_nightly(FILE *out) { return is_write_suite(out, 1, 1); }

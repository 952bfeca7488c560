/*
** run_csa4.h: the CompressedSparseAttention ratio-4 lanes for one case (the
** "csa4." families, cases/csa4_cases.h): the shared CSA chain driver
** (run_csa_chain.h) with outputs 1..4 threaded into inputs 6, 7, 17, 18.
** The eager lane also compares the device's stage payloads (index query,
** index scores, selection, candidate scores) with the oracle's, in pipeline
** order, so a mismatch names the first diverging stage.
*/
#ifndef RUN_CSA4_H
#define RUN_CSA4_H

#include "harness/case_runner.h"

int run_csa4(runner_env *env, const char *case_id, const char *spec, case_report *out);

/*
** The ratio-4 descriptor itself, for tests that run the shared driver with
** one hook replaced (e.g. a tampered expectation must fail the oracle lane).
*/
struct csa_chain_ratio;
const struct csa_chain_ratio *run_csa4_ratio(void);

#endif

/*
** run_csa128.h: the CompressedSparseAttention ratio-128 lanes for one case:
** a prefill->decode chain, each step's present_* threaded back as the next
** step's past_*, run through the oracle, eagerly on the device (every output
** at every step), and as a captured decode step replayed down the chain.
*/
#ifndef RUN_CSA128_H
#define RUN_CSA128_H

#include "harness/case_runner.h"

int run_csa128(runner_env *env, const char *case_id, const char *spec, case_report *out);

struct csa_chain_ratio;

/* The ratio's descriptor for the shared chain driver (run_csa_chain.h); bench uses it too. */
const struct csa_chain_ratio *run_csa128_ratio(void);

#endif

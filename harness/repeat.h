/*
** repeat.h: determinism of the device lanes (issue 7, item 3: `--repeat N`).
**
** In exact mode a passing device row equals the oracle's bytes, so it is the
** same on every run; a failing one is the same failure every time unless the
** kernel is nondeterministic (a race, an unordered atomic sum, a read of
** memory it never wrote).  So a case is run once in all its lanes, then N-1
** more times in its device lanes only, and every device row of every repeat
** must equal the first run's row, field for field:
**   status, tensor, step, flat_offset, coords, expected_hex, actual_hex,
**   ulp_distance, mismatch_count, nan_equivalent, stage and message.
** oracle_ms and device_ms are measurements, not results, and are left out.
** A row that differs (or exists in one run and not the other) becomes status
** 'nondeterministic', its message naming the repeat, the fields that differed
** with both values, and what the first run recorded; it fails the run.
**
** There is no flaky category and no "pass on retry": a lane that passes once
** and fails once is nondeterministic, which is a failure.
**
** Limit: a row keeps only the first mismatch and the counts, not every
** output byte.  Two repeats that both fail with the same first mismatch and
** the same mismatch and NaN counts, but differ in other bytes, are not told
** apart; nor are two passing repeats, which cannot differ (both equal the
** oracle byte for byte).
**
** The oracle lane, the stage-payload sink and the oracle-outcome sink run in
** the first pass only: the oracle is checked against its frozen digests, and
** golden payloads are stored or compared once per case.
*/
#ifndef REPEAT_H
#define REPEAT_H

#include "harness/case_runner.h"

/* What runs one case: case_run, or a stand-in in tests. */
typedef int (*case_runner_fn)(runner_env *env, const char *case_id, const char *spec, case_report *out);

/*
** Runs the case with runner (NULL: case_run) repeats >= 1 times as above and
** leaves the first run's report in *out, with rows that differed made
** 'nondeterministic' and out->failed recounted.  env->lanes and env's sinks
** are restored before returning.  Returns the first run's return value, or
** -1 if memory for the repeats could not be had (then out gains a 'fail'
** row saying so).
*/
int case_run_repeated(runner_env *env, const char *case_id, const char *spec, int repeats, case_runner_fn runner,
                      case_report *out);

#endif

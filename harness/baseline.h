/*
** baseline.h: `--baseline RUN` (issue 7, item 2): only new failures fail
** the gate.
**
** The unit is a (case, lane) pair: it failed in a run when any of its rows
** (any step) failed or was waived.  A pair that fails now is
**   known from baseline  when it also failed in run RUN of the same results
**                        database, and, if it is nondeterministic now, was
**                        nondeterministic then too (a lane that turns
**                        nondeterministic is news, whatever it did before);
**   a new failure        otherwise: it passed in RUN, or RUN did not run it.
** A pair that failed in RUN and ran now without failing is fixed.  A pair
** that only has waived rows now is neither new nor fixed: the waiver list
** covers it.
**
** Only the verdict changes: every row keeps its status (the store is the
** truth, and `bitgate report --baseline` shows the same comparison), and
** the run's exit code is 1 only for new failures (or a stale digests file).
*/
#ifndef BASELINE_H
#define BASELINE_H

#include "cases/case_spec.h"
#include "harness/case_runner.h"

#include <stdio.h>

struct store;

typedef struct baseline_pair {
  char case_id[CASE_ID_MAX], lane[16];
  unsigned char failed, nondeterministic, seen_now;
} baseline_pair;

#define BASELINE_LISTED 20 /* lines of each kind printed; the rest are counted */

typedef struct baseline {
  long long run_id; /* 0: no baseline */
  char suite[64];   /* the baseline run's suite */
  baseline_pair *pairs; /* every pair RUN recorded, sorted by (case_id, lane) */
  size_t n;
  long long new_failures, still_failing, fixed;
  char new_lines[BASELINE_LISTED][200], known_lines[BASELINE_LISTED][200];
} baseline;

/*
** Loads run run_id of db.  Returns 0; 1 when the database has no such run
** (err says so: a usage error); -1 when the store failed (err says why).
*/
int baseline_open(baseline *b, struct store *db, long long run_id, char *err, size_t err_len);

/* Classifies the (case, lane) pairs of one finished case's report r. */
void baseline_note_case(baseline *b, const char *case_id, const case_report *r);

/* Prints the lists and "baseline run N: ..." counts to out (nothing without a baseline). */
void baseline_print(const baseline *b, const char *suite, FILE *out);

void baseline_close(baseline *b);

#endif

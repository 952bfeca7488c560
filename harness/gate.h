/*
** gate.h: what turns a run into a CI gate (issue 7, items 2 and 3), hooked
** into the shared loop of `bitgate run` and `bitgate nightly` (suite_run.c):
**   --repeat N              device lanes run N times (repeat.h)
**   --known-failures PATH   waivers (known_failures.h); default
**                           CORPUS/known-failures, absent file = none;
**                           "none" turns waivers off
**   --baseline RUN          only new failures fail (baseline.h)
** Per case: run (repeated), then waive, then note against the baseline.
** At the end: the waiver and baseline summaries, then the verdict.
*/
#ifndef GATE_H
#define GATE_H

#include "harness/baseline.h"
#include "harness/case_runner.h"
#include "harness/known_failures.h"
#include "harness/repeat.h"

#include <stdio.h>

struct store;

typedef struct gate_args {
  int repeat;                 /* >= 1 */
  const char *known_failures; /* NULL: the corpus default, optional */
  long long baseline_run;     /* 0: none */
} gate_args;

/* The options' help lines, for the commands' --help. */
extern const char gate_options_help[];

void gate_args_init(gate_args *a);

/*
** If argv[*i] is one of the options above, parses it (advancing *i past its
** value) and returns 1; 0 when it is not; -1 after a usage error message.
*/
int gate_option(const char *cmd, int argc, char **argv, int *i, gate_args *a);

typedef struct gate {
  gate_args args;
  known_failures kf;
  baseline base;
  case_runner_fn runner; /* NULL: case_run (tests put a stand-in here) */
  long long nondeterministic_rows;
} gate;

/*
** Loads the waivers (from args->known_failures, else corpus/known-failures)
** and the baseline run from db.  Prints "bitgate CMD: ..." on failure and
** returns the exit code: 0, 2 (no such baseline run), 3 (bad waiver file,
** store error).
*/
int gate_open(gate *g, const gate_args *args, const char *cmd, const char *corpus, struct store *db);

/* Runs one case (repeated) into r. */
int gate_case_run(gate *g, runner_env *env, const char *case_id, const char *spec, case_report *r);

/* A finished case (every check done): waivers, then the baseline. */
void gate_case_done(gate *g, const char *case_id, case_report *r);

/*
** The run's summary lines (repeats, waivers, stale waivers, baseline);
** returns whether the run's failures fail the gate: failed_cases without
** a baseline, else the new failures.
*/
int gate_end(gate *g, const char *suite, long long failed_cases, FILE *out);

void gate_close(gate *g);

/* Whether a row of this status fails a run: all but pass, skipped and waived. */
int gate_status_fails(const char *status);

/* Whether r has a waived row. */
int gate_report_has_waived(const case_report *r);

/* "FAIL ..." per failing row of r and "WAIVED ..." per waived row. */
void gate_print_rows(FILE *out, const char *case_id, const case_report *r);

#endif

/*
** suite_run.h: the job `bitgate run` does, shared with `bitgate nightly`:
** parse the common options, load the suite, open the session and the
** results store, run every case in every lane (the frozen-oracle check in the
** oracle lane), commit each case's rows at once, print the summary.
** A command adds its own work through hooks: extra options, sinks attached
** before the first case, a look at each case's report before it is stored,
** and a last word after the summary.
*/
#ifndef SUITE_RUN_H
#define SUITE_RUN_H

#include "harness/case_runner.h"
#include "harness/gate.h"
#include "harness/run_tally.h"
#include "harness/shard.h"
#include "harness/worker_pool.h"

#include <stddef.h>

typedef struct suite_run_args {
  const char *suite, *db, *corpus, *filter;
  const char *variant; /* --variant fast|reference|both (runner_env_set_variant); NULL: fast */
  lane_mask lanes;
  int require_gpu;
  long long resume_run; /* --resume RUN (harness/resume.h); 0: a new run */
  gate_args gate; /* --repeat, --known-failures, --baseline (harness/gate.h) */
  shard shard; /* --shard K/N (harness/shard.h); 1/1 without it */
  worker_args workers; /* --workers, --in-process, --devices, --timeout (harness/worker_pool.h) */
} suite_run_args;


/* What a finished run hands to the end hook. */
typedef struct suite_run_result {
  const suite_run_args *args;
  suite_run_tally tally;
  long long run_id;
  double seconds;          /* this invocation's */
  long long resumed_cases; /* --resume: cases recorded by earlier invocations (in tally, not run now) */
} suite_run_result;

typedef struct suite_run_hooks {
  void *ctx;
  /* An option of the command's own at argv[*i]: 1 taken (*i advanced past
  ** its value), 0 not ours, -1 a usage error already printed. */
  int (*option)(void *ctx, const char *cmd, int argc, char **argv, int *i);
  /* Before the first case: attach sinks to env.  Nonzero, with err, is an
  ** environment error. */
  int (*begin)(void *ctx, runner_env *env, const suite_run_args *a, char *err, size_t err_len);
  /* Around each case that passes the filter: before case_run, and after it
  ** (r may gain failing rows) before the rows are stored. */
  void (*before_case)(void *ctx, const char *case_id, const char *spec);
  void (*after_case)(void *ctx, const char *case_id, case_report *r);
  /* After the summary: an exit code (exit_codes.h) the run's must not be below. */
  int (*end)(void *ctx, const suite_run_result *res);
} suite_run_hooks;

/*
** Runs `bitgate CMD` over argv: --help prints help; options are those of
** `bitgate run` plus the hooks'.  default_suite names the suite without
** --suite.  hooks may be NULL, as may each of its functions.  Returns the
** exit code.
*/
/*
** Parses run's own options (argv[0] is the command) into a, as
** suite_run_main does, without any hook's options; returns the exit code.
** The worker process (cmd_worker.c) reads its parent's options with it.
*/
int suite_run_parse(const char *cmd, const char *default_suite, int argc, char **argv, suite_run_args *a);

int suite_run_main(const char *cmd, const char *help, const char *default_suite, int argc, char **argv,
                   const suite_run_hooks *hooks);

#endif

/*
** resume.h: `bitgate run|nightly --resume RUN` (issue 7, item 4): carry on
** with a run that was killed, in the same database, so that no finished
** case is lost and none is run twice.  suite_run.c calls these at three
** points: while parsing options, where a fresh run would begin, and per case.
**
** The rules (why in brackets):
**   - RUN must be in --db (else exit 2) and unfinished: 'running' (killed)
**     or 'error' (a store failure stopped it) resume; 'passed' and 'failed'
**     are refused, exit 2 [a verdict, once given, stays].
**   - The options are RUN's: its recorded command line (runs.command_line)
**     is parsed again, so the suite, filter, shard, lanes, gate options and
**     the command's own options are those RUN began with.  The resume line
**     may repeat them (CI may append --resume RUN to the same command), but
**     a changed suite, filter, shard, lanes, --repeat, --known-failures or
**     --baseline is refused, exit 2, naming it [they decide which cases and
**     rows the run holds, and its verdict].  --db, --corpus (the files may
**     have moved), --require-gpu and output options (nightly's --report,
**     --golden) may be given anew.
**   - The same command (run or nightly), the same planted bug
**     (BITGATE_PLANT), the same build on the same device: git revision,
**     bitgate/oracle/numerics versions, kernel hash, NVRTC version and
**     options, driver, device and compute capability must equal RUN's, else
**     exit 2 naming the first that differs [every row of a run comes from
**     one build, as its runs row says].  The host may differ.
**   - A case with result rows in RUN is not run again (its rows were
**     committed in one transaction: a case is wholly there or absent).  Its
**     stored rows count in the summary and the verdict as if it had just run:
**     FAIL and WAIVED lines are printed again, the waivers and the baseline
**     see them.  The other cases run and append their rows; RUN then ends
**     with the whole run's status.  A case that records no row at all is
**     simply run again (it has nothing to lose).
**   - Not detected: resuming a run still in progress elsewhere.  The
**     results' primary key keeps every row unique: the second process to
**     commit a shared case stops with a store error (exit 3).
*/
#ifndef RESUME_H
#define RESUME_H

#include "harness/case_runner.h"
#include "harness/frozen_oracle.h"
#include "harness/store.h"
#include "harness/suite_run.h"

/* The --resume help lines, for the commands' --help. */
extern const char resume_options_help[];

#define RESUME_ARGS_MAX 128

/*
** RUN's recorded arguments, argv[0, n_recorded) (argv[0] is the command),
** followed by those given now (without --resume RUN), argv[n_recorded,
** n_all): parsed in that order, what is given now comes last.
*/
typedef struct resume_cmdline {
  int n_recorded, n_all;
  char *argv[RESUME_ARGS_MAX];
  char buf[4096];
} resume_cmdline;

/*
** Reads RUN from the database at db_path and checks that `bitgate CMD` may
** resume it (it exists, is unfinished, was started by CMD with this
** process's BITGATE_PLANT); fills *out from its command line and argv.
** Prints the error; returns the exit code.  Does not create db_path.
*/
int resume_load(const char *cmd, const char *db_path, long long run_id, int argc, char **argv, resume_cmdline *out);

/* Exit 2, naming the option, when now's case-deciding options differ from recorded's. */
int resume_compare(const char *cmd, long long run_id, const suite_run_args *now, const suite_run_args *recorded);

/*
** Where a fresh run would begin: checks the build and device against RUN's
** provenance, reopens RUN (store_run_reopen) and sets *recorded_cases to
** the number of cases it holds.  Prints the error; returns the exit code.
*/
int resume_reopen(const char *cmd, store *db, long long run_id, const store_provenance *now,
                  long long *recorded_cases);

/* case_id's stored rows in run_id as a report: 1 (r filled), 0 when it has none, -1 on a store error. */
int resume_case_report(store *db, long long run_id, const char *case_id, case_report *r);

/* The frozen-oracle counters of a case that was checked before the resume. */
void resume_count_frozen(frozen_oracle *f, const case_report *r);

#endif

/*
** known_failures.h: the committed list of known failures (issue 7, item 2),
** corpus/known-failures by default.
**
** Format: one entry per line, fields separated by blanks:
**     CASE_ID LANE OWNER REASON...
**   CASE_ID  a case id as bitgate prints it (family, '.', 8 hex digits),
**            e.g. is.capfront.1f3c9a02; exact, no globs
**   LANE     oracle, eager, capture or poison
**   OWNER    who will fix it (one word: a handle or an e-mail)
**   REASON   the rest of the line, required (an issue link, a sentence)
** A line whose first non-blank character is '#' is a comment, as is a blank
** line; a '#' later in a line is part of the reason ("see issue #12").  A
** (case, lane) listed twice is an error.  Any bad line makes the whole file
** an error naming FILE:LINE and what is wrong; the run stops with exit 3
** (the file is an input of the environment, like a garbled digests file),
** before any case runs.
**
** Applying it: a row of a listed (case, lane) that fails becomes status
** 'waived'; its message keeps the original status and message and adds the
** owner, reason and FILE:LINE.  A waived row does not fail the run and is
** counted and printed as waived, never as passed.  Three statuses are never
** waived, because a waiver would hide the harness's own integrity checks:
** 'nondeterministic' (exact mode has no flaky category), 'frozen_changed'
** and 'unpinned' (the frozen oracle changes only by a deliberate re-pin).
** A listed (case, lane) that ran with no failing row is a stale waiver: it
** is printed, so the line can be removed, but it is not an error.
*/
#ifndef KNOWN_FAILURES_H
#define KNOWN_FAILURES_H

#include "cases/case_spec.h"
#include "harness/case_runner.h"

#include <stdio.h>

typedef struct known_failure {
  char case_id[CASE_ID_MAX], owner[64], reason[256];
  lane lane;
  int line;
  /* What this run saw: the lane ran for the case, its failing rows, those waived. */
  int ran;
  long long failing_rows, waived_rows;
} known_failure;

typedef struct known_failures {
  char path[1024]; /* "" when there is no file */
  known_failure *entries;
  int n;
  long long waived_rows, waived_cases;
} known_failures;

/*
** Reads path into *kf.  A missing file is an empty list when optional,
** else an error.  Returns 0, or -1 with err holding "PATH:LINE: what" (or
** why the file cannot be read).
*/
int known_failures_load(known_failures *kf, const char *path, int optional, char *err, size_t err_len);

/* The same for text in memory, named path in messages (tests, and load itself). */
int known_failures_parse(known_failures *kf, const char *path, const char *text, char *err, size_t err_len);

void known_failures_free(known_failures *kf);

/*
** Waives the failing rows of r that the list names (see above) and
** recounts r->failed; notes which entries ran.  Returns the rows waived.
*/
int known_failures_apply(known_failures *kf, const char *case_id, case_report *r);

/*
** Prints the list's summary to out: one "stale waiver" line per entry that
** ran without failing, then "known failures: ..." counts.  Nothing when
** the list is empty.  Returns the number of stale waivers.
*/
int known_failures_print(const known_failures *kf, FILE *out);

#endif

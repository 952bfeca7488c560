/*
** case_order.h: the order a run hands its suite's cases to its workers in
** (suite_run.c).  A run ends when its last case does, so a heavy case handed
** out late sets the wall time: the gate's 32 csa4.state cases, up to 21 s
** each with the reference lanes, sit at 83% of the suite, and on a 16-core
** H200 host whose oracle ran slower the gate's 16 workers idled behind
** them (docs/SPEED.md, nineteenth round).  Heaviest first is the classic
** cure (longest processing time first); the weights are the case times the
** store recorded for the same suite's run before, or, in a database with
** none (a CI run's fresh one), the suite's committed times file
** (case_times.h).
*/
#ifndef HARNESS_CASE_ORDER_H
#define HARNESS_CASE_ORDER_H

#include "harness/store.h"

#include <stddef.h>

/* What ordered the cases: a run of the database, a times file, both, or nothing (the suite's order). */
typedef struct case_order_source {
  long long run;   /* 0: none */
  char file[4096]; /* "": none */
  int file_cases;  /* the cases whose weight the file gave */
} case_order_source;

/*
** Fills ordered[0..count) with specs' entries, heaviest first, ties in suite
** order, the cases the weights do not name (new ones) before all others.
** A case's weight: its time in the latest ended run of suite before run_id
** in db, else (a case that run did not take, e.g. after a --filter run, or
** no such run) its time in times_path (NULL or a missing file: none); with
** neither for any case, the suite's order.  times_path is read in either
** case, so a malformed file is reported even where a run orders.
** 0; -1 the store failed (its message); -2 times_path is malformed or
** unreadable (err names the file and line).
*/
int case_order_heaviest_first(store *db, const char *suite, long long run_id, const char *times_path,
                              char *const *specs, int count, char **ordered, case_order_source *from, char *err,
                              size_t err_len);

#endif /* HARNESS_CASE_ORDER_H */

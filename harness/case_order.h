/*
** case_order.h: the order a run hands its suite's cases to its workers in
** (suite_run.c).  A run ends when its last case does, so a heavy case handed
** out late sets the wall time: the gate's 32 csa4.state cases, up to 21 s
** each with the reference lanes, sit at 83% of the suite, and on a 16-core
** H200 host whose oracle ran slower the gate's 16 workers idled behind
** them (docs/SPEED.md, nineteenth round).  Heaviest first is the classic
** cure (longest processing time first); the weights are the case times the
** store recorded for the same suite's run before.
*/
#ifndef HARNESS_CASE_ORDER_H
#define HARNESS_CASE_ORDER_H

#include "harness/store.h"

/*
** Fills ordered[0..count) with specs' entries: by the case times of the
** latest ended run of suite before run_id in db, heaviest first, the cases
** that run did not time (new ones) before all of them, ties in suite order;
** with no such run, the suite's order.  *from_run is the run whose times
** ordered them, 0 for none.  0, or -1 when the store failed (its message).
*/
int case_order_heaviest_first(store *db, const char *suite, long long run_id, char *const *specs, int count,
                              char **ordered, long long *from_run);

#endif /* HARNESS_CASE_ORDER_H */

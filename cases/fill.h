/*
** fill.h: a case tensor fill split over the oracle's threads
** (oracle/oracle_threads.h).
**
** Contract: only a fill whose every item (an element, a row, a record) is a
** pure function of its index may be split: its draws are cases_rng_u64 at
** that index (cases/rng.h: no state), it reads nothing another item writes,
** and it writes bytes no other item writes.  Then which worker takes which
** item cannot change a byte, so the tensors are the same for any thread
** count (cases/tests/test_fill_threads.c holds 1, 2 and 16 threads to it).
** A fill that draws from a cursor (cases_rng_next) carries state from item
** to item and must stay serial.
*/
#ifndef CASES_FILL_H
#define CASES_FILL_H

#include "oracle/oracle_threads.h"

/*
** Draws one worker should make at least: a thread start costs about as much
** as a few thousand draws, so smaller fills run on the calling thread alone.
*/
#define CASES_FILL_DRAWS_MIN 16384

/*
** fn(ctx, begin, end, worker) over items [0, count), each item costing about
** item_draws draws (>= 1); on as many workers as give each at least
** CASES_FILL_DRAWS_MIN draws, so a small fill is one plain call.
*/
void cases_fill_parallel(long long count, long long item_draws, oracle_range_fn fn, void *ctx);

#endif

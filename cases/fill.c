/*
** fill.c: see fill.h.
*/
#include "cases/fill.h"

void cases_fill_parallel(long long count, long long item_draws, oracle_range_fn fn, void *ctx) {
  long long grain = CASES_FILL_DRAWS_MIN / (item_draws > 0 ? item_draws : 1);
  oracle_parallel_for(count, oracle_parallel_workers(count, grain), fn, ctx);
}

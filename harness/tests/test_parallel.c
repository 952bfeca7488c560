/*
** test_parallel.c: parallel_for visits every index exactly once, on the
** requested number of workers, and calls the per-thread exit hook.
*/
#include "harness/parallel.h"

#include <criterion/criterion.h>
#include <stdatomic.h>

static atomic_int visits[10007];
static atomic_int done_calls;

static void visit(void *ctx, long long i, int thread) {
  (void)ctx;
  cr_assert(thread >= 0 && thread < 5);
  atomic_fetch_add(&visits[i], 1);
}

static void thread_done(void) { atomic_fetch_add(&done_calls, 1); }

Test(parallel, every_index_once) {
  int i;
  cr_assert(parallel_for(10007, 5, visit, NULL, thread_done) == 0);
  for (i = 0; i < 10007; i++) cr_assert(atomic_load(&visits[i]) == 1, "index %d", i);
  cr_expect(atomic_load(&done_calls) == 5);
  cr_expect(parallel_default_threads() >= 1);
}

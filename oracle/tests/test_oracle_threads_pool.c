/*
** test_oracle_threads_pool.c: oracle_parallel_for's resident helpers
** (oracle/oracle_threads.c).  The bytes of every operator at 1, 2 and 16
** threads are harness/tests/test_oracle_threads.c's; this file holds the
** mechanism to its contract: each item exactly once, worker ids below the
** call's workers, nested calls inline, and no hang or lost item when the
** helpers are reused call after call (however far apart) or shared by two
** calling threads; a
** child of fork, which has none of its parent's threads, starts its own;
** and oracle_kept_or_die, the per-thread scratch block kept between calls.
*/
#include "oracle/oracle_threads.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ITEMS_MAX 1000

/* One call's record: how often each item ran, and the worker ids seen. */
typedef struct visits {
  atomic_int hits[ITEMS_MAX];
  atomic_int bad_worker; /* ids at or above the call's workers */
  int workers;
} visits;

static void visit(void *ctx, long long begin, long long end, int worker) {
  visits *v = ctx;
  long long i;
  if (worker < 0 || worker >= v->workers) atomic_fetch_add(&v->bad_worker, 1);
  for (i = begin; i < end; i++) atomic_fetch_add(&v->hits[i], 1);
}

/* One call over count items on `workers` workers; 0 when every item ran once on a valid worker. */
static int call_once(long long count, int workers) {
  static _Thread_local visits v; /* per calling thread: the concurrent test has two */
  long long i;
  memset(&v, 0, sizeof v);
  v.workers = workers;
  oracle_parallel_for(count, workers, visit, &v);
  for (i = 0; i < count; i++)
    if (atomic_load(&v.hits[i]) != 1) return -1;
  return atomic_load(&v.bad_worker) ? -1 : 0;
}

Test(oracle_threads_pool, each_item_runs_once_on_a_valid_worker, .timeout = 60) {
  static const long long counts[] = {1, 2, 3, 17, 100, ITEMS_MAX};
  static const int workers[] = {1, 2, 3, 8, 16};
  size_t c, w;
  int round;
  for (round = 0; round < 20; round++) /* the helpers are reused, call after call */
    for (c = 0; c < sizeof counts / sizeof counts[0]; c++)
      for (w = 0; w < sizeof workers / sizeof workers[0]; w++)
        cr_assert_eq(call_once(counts[c], workers[w]), 0, "round %d, %lld items on %d workers", round, counts[c],
                     workers[w]);
}

/*
** Helpers watch for the next job for a while after each one (0.1 ms), then
** nap (20 ms), then sleep: calls that come at once, just after the watch,
** while they nap, and once they sleep must all find their helpers, every
** item once.
*/
Test(oracle_threads_pool, calls_spaced_around_the_helpers_watch, .timeout = 60) {
  static const useconds_t gaps[] = {0, 50, 90, 110, 150, 400, 0, 0, 2000, 19000, 21000, 30000};
  int round;
  size_t g;
  for (round = 0; round < 12; round++)
    for (g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
      if (gaps[g]) usleep(gaps[g]);
      cr_assert_eq(call_once(100, 4), 0, "round %d, after %u us", round, (unsigned)gaps[g]);
    }
}

/* Sleep wakes among `calls` 2-worker calls, each `gap_us` after the last. */
static long long sleep_wakes_over(int calls, useconds_t gap_us) {
  const long long before = oracle_threads_sleep_wakes();
  int i;
  for (i = 0; i < calls; i++) {
    usleep(gap_us);
    cr_assert_eq(call_once(100, 2), 0);
  }
  return oracle_threads_sleep_wakes() - before;
}

/*
** Calls a few milliseconds apart, as a run's decode steps come, find the
** helper napping and wake nobody (the caller makes no system call); calls
** far apart find it asleep and wake it.  Not all of them: a helper the
** machine leaves unscheduled past its nap window sleeps early, so the
** bounds leave room for a loaded machine while still failing a pool whose
** helper sleeps after its watch (every near call a wake) or never sleeps
** (no far call a wake).
*/
Test(oracle_threads_pool, helpers_nap_between_near_calls_and_sleep_between_far_ones, .timeout = 60) {
  long long near, far;
  cr_assert_eq(call_once(100, 2), 0); /* the helper exists from here on */
  near = sleep_wakes_over(20, 3000);
  far = sleep_wakes_over(10, 40000);
  cr_expect_leq(near, 10, "%lld of 20 calls 3 ms apart woke a sleeping helper", near);
  cr_expect_geq(far, 5, "only %lld of 10 calls 40 ms apart woke a sleeping helper", far);
}

/*
** Calls back to back with fewer seats than there are helpers: the helpers
** that come too late for a seat, or find the job closed, must take no share
** (their ids would be at or above the call's workers) and must not sit in
** the next call twice.
*/
static void visit_slowly(void *ctx, long long begin, long long end, int worker) {
  long long i;
  for (i = begin; i < end; i++) usleep(20); /* long enough for a helper past the seats to find items left */
  visit(ctx, begin, end, worker);
}

Test(oracle_threads_pool, back_to_back_calls_with_fewer_seats_than_helpers, .timeout = 60) {
  static visits v;
  int round;
  long long i;
  cr_assert_eq(call_once(ITEMS_MAX, 16), 0, "16 workers start 15 helpers");
  for (round = 0; round < 1000; round++) {
    const long long count = round % 3 ? 17 : 2;
    memset(&v, 0, sizeof v);
    v.workers = round % 2 ? 2 : 3;
    oracle_parallel_for(count, v.workers, visit_slowly, &v);
    for (i = 0; i < count; i++) cr_assert_eq(atomic_load(&v.hits[i]), 1, "round %d, item %lld", round, i);
    cr_assert_eq(atomic_load(&v.bad_worker), 0, "round %d: a helper past the seats took items", round);
  }
}

/* A nested call must run inline: one range, all of it, on worker 0. */
typedef struct nested {
  atomic_int outer_items, inline_ok, inline_bad;
} nested;

static void inner(void *ctx, long long begin, long long end, int worker) {
  nested *n = ctx;
  atomic_fetch_add(begin == 0 && end == 10 && worker == 0 ? &n->inline_ok : &n->inline_bad, 1);
}

static void outer(void *ctx, long long begin, long long end, int worker) {
  nested *n = ctx;
  long long i;
  (void)worker;
  for (i = begin; i < end; i++) {
    cr_expect_eq(oracle_threads_available(), 1, "inside a worker only the worker itself is free");
    oracle_parallel_for(10, 4, inner, n);
    atomic_fetch_add(&n->outer_items, 1);
  }
}

Test(oracle_threads_pool, nested_calls_run_inline, .timeout = 60) {
  nested n;
  memset(&n, 0, sizeof n);
  oracle_parallel_for(64, 4, outer, &n);
  cr_expect_eq(atomic_load(&n.outer_items), 64);
  cr_expect_eq(atomic_load(&n.inline_ok), 64);
  cr_expect_eq(atomic_load(&n.inline_bad), 0);
}

/* ---- the call log (oracle_call_log_set) ---------------------------------- */

static long long mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Busy for us microseconds of wall time (a sleep would free the core the pool's timing relies on). */
static void spend(long long us) {
  const long long until = mono_ns() + us * 1000;
  while (mono_ns() < until) continue;
}

static void leaf(void *ctx, long long begin, long long end, int worker) {
  (void)ctx, (void)worker;
  spend(500 * (end - begin));
}

/* One item (so it runs inline, at the top level): 2 ms of its own, then a call of its own over 4 leaves. */
static void one_item(void *ctx, long long begin, long long end, int worker) {
  (void)ctx, (void)begin, (void)end, (void)worker;
  spend(2000);
  oracle_parallel_for(4, 2, leaf, NULL);
}

static const oracle_call_site *site_named(const oracle_call_log *log, const char *name) {
  int i;
  for (i = 0; i < log->n; i++)
    if (!strcmp(log->site[i].name, name)) return &log->site[i];
  return NULL;
}

/*
** A call's own time leaves out its logged inner calls': one_item (its 2 ms,
** then 4 leaves) and the leaves together take no more than the whole call's
** wall time, where counting the leaves twice would take more.
*/
Test(oracle_threads_pool, the_call_log_counts_each_sites_own_time, .timeout = 60) {
  static oracle_call_log log;
  const oracle_call_site *item, *leaves;
  long long t0, wall;
  memset(&log, 0, sizeof log);
  cr_assert_null(oracle_call_log_set(&log), "no log before");
  t0 = mono_ns();
  oracle_parallel_for(1, 2, one_item, NULL);
  wall = mono_ns() - t0;
  oracle_call_log_set(NULL);
  cr_assert_eq(log.n, 2, "sites one_item and leaf: %d", log.n);
  cr_expect_str_eq(log.site[0].name, "one_item", "sites are listed where their first calls began");
  cr_assert_not_null(item = site_named(&log, "one_item"));
  cr_assert_not_null(leaves = site_named(&log, "leaf"));
  cr_expect(item->calls == 1 && item->items == 1 && leaves->calls == 1 && leaves->items == 4, "%lld %lld %lld %lld",
            item->calls, item->items, leaves->calls, leaves->items);
  cr_expect_geq(item->ns, 2000000, "one_item's own 2 ms: %lld ns", item->ns);
  cr_expect_geq(leaves->ns, 1000000, "4 leaves of 0.5 ms on 2 workers: %lld ns", leaves->ns);
  cr_expect_leq(item->ns + leaves->ns, wall, "own %lld + leaves %lld ns within the call's %lld", item->ns, leaves->ns,
                wall);
}

/*
** The caller's own work between calls goes to the call before it: before
** the first call to before_ns, after a call (up to the next top-level call,
** or the log's unset) to its site's after_ns.  A call nested in an inline
** call (leaf, inside one_item) is followed by its parent's time, not a gap.
*/
Test(oracle_threads_pool, the_call_log_places_the_work_between_calls, .timeout = 60) {
  static oracle_call_log log;
  const oracle_call_site *item, *leaves;
  long long a, b, c, d, e, f; /* this thread's clock around the set, the calls and the unset */
  memset(&log, 0, sizeof log);
  a = mono_ns();
  oracle_call_log_set(&log);
  spend(1000);
  b = mono_ns();
  oracle_parallel_for(1, 2, one_item, NULL); /* 2 ms, then leaf's call nested in it */
  c = mono_ns();
  spend(3000);
  d = mono_ns();
  oracle_parallel_for(2, 2, leaf, NULL);
  e = mono_ns();
  spend(1500);
  oracle_call_log_set(NULL);
  f = mono_ns();
  cr_assert_not_null(item = site_named(&log, "one_item"));
  cr_assert_not_null(leaves = site_named(&log, "leaf"));
  /* the call's own clock starts a little after b; one_item's 2 ms before its nested call would be far more */
  cr_expect(log.before_ns >= 1000000 && log.before_ns <= b - a + 1000000,
            "before the first call: %lld ns, at least the 1 ms spent and about the %lld ns to the call",
            log.before_ns, b - a);
  cr_expect(item->after_ns >= d - c && item->after_ns <= e - b, "after one_item: %lld ns, within [%lld, %lld]",
            item->after_ns, d - c, e - b);
  cr_expect(leaves->after_ns >= 1500000 && leaves->after_ns <= f - d,
            "after leaf's top-level call only (the nested one is one_item's time): %lld ns, at most %lld",
            leaves->after_ns, f - d);
  cr_expect_leq(log.before_ns + item->ns + item->after_ns + leaves->ns + leaves->after_ns, f - a,
                "calls and gaps within the wall time, none counted twice");
}

/* Sites by name across calls; calls made inside a worker's items, and calls with no log set, are not logged. */
Test(oracle_threads_pool, the_call_log_names_each_site_and_counts_its_calls, .timeout = 60) {
  static oracle_call_log log;
  const oracle_call_site *c;
  nested n;
  memset(&log, 0, sizeof log);
  memset(&n, 0, sizeof n);
  oracle_call_log_set(&log);
  oracle_parallel_for(64, 4, outer, &n); /* its items' inner calls run inside a worker: its time */
  oracle_parallel_for(3, 1, leaf, NULL);
  oracle_parallel_for(2, 2, leaf, NULL);
  cr_assert_eq(oracle_call_log_set(NULL), &log, "the log set is the one returned");
  oracle_parallel_for(2, 2, leaf, NULL); /* no log: not counted */
  cr_assert_eq(log.n, 2, "sites outer and leaf: %d", log.n);
  cr_assert_not_null(c = site_named(&log, "outer"));
  cr_expect(c->calls == 1 && c->items == 64, "outer: %lld calls, %lld items", c->calls, c->items);
  cr_expect_null(site_named(&log, "inner"), "a call from inside a worker's items is its caller's time");
  cr_assert_not_null(c = site_named(&log, "leaf"));
  cr_expect(c->calls == 2 && c->items == 5, "leaf: %lld calls, %lld items (3 + 2)", c->calls, c->items);
  cr_expect_geq(c->ns, 2000000, "leaf's time %lld ns: 1.5 ms in turn, then >= 0.5", c->ns);
  cr_expect_eq(log.dropped, 0);
}

static void *call_many(void *arg) {
  int round, *failed = arg;
  for (round = 0; round < 200; round++)
    if (call_once(ITEMS_MAX, 2) != 0) *failed = 1;
  return NULL;
}

Test(oracle_threads_pool, two_calling_threads_share_the_helpers, .timeout = 60) {
  pthread_t other;
  int failed_other = 0, failed_here = 0;
  cr_assert_eq(pthread_create(&other, NULL, call_many, &failed_other), 0);
  call_many(&failed_here);
  pthread_join(other, NULL);
  cr_expect_eq(failed_here, 0);
  cr_expect_eq(failed_other, 0);
}

/* Items slow enough (1 ms each) that a helper surely wakes before the caller has taken them all. */
static void slow_visit(void *ctx, long long begin, long long end, int worker) {
  atomic_int *helped = ctx;
  long long i;
  for (i = begin; i < end; i++) usleep(1000);
  if (worker != 0) atomic_store(helped, 1);
}

/* 1 when a 2-worker call over slow items had a helper take a share, within a few tries. */
static int helpers_answer(void) {
  atomic_int helped = 0;
  int tries;
  for (tries = 0; tries < 5 && !atomic_load(&helped); tries++) oracle_parallel_for(50, 2, slow_visit, &helped);
  return atomic_load(&helped);
}

Test(oracle_threads_pool, a_forked_child_starts_helpers_of_its_own, .timeout = 60) {
  pid_t pid;
  int status = 0;
  cr_assert_eq(helpers_answer(), 1, "the parent's helper never took a share"); /* the helper exists now */
  pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) _exit(helpers_answer() && call_once(ITEMS_MAX, 2) == 0 ? 0 : 1); /* as many workers as the parent used */
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "in the child, items were lost or no helper took a share");
  cr_expect_eq(helpers_answer(), 1, "the parent's helper still takes shares");
}

/* oracle_kept_or_die: the kept block comes back while it is large enough, contents and all, and grows when not. */
Test(oracle_threads_pool, kept_block_is_reused_then_grown) {
  oracle_kept slot = {NULL, 0};
  unsigned char *first = oracle_kept_or_die(&slot, 100, 1, __FILE__, __LINE__), *again, *grown;
  cr_assert_eq((size_t)first % ORACLE_CACHE_LINE, 0, "a kept block starts on a cache line");
  memset(first, 7, 100);
  again = oracle_kept_or_die(&slot, 50, 1, __FILE__, __LINE__);
  cr_expect_eq(again, first, "a smaller request gets the kept block");
  cr_expect_eq(again[99], 7, "the kept block is not cleared");
  grown = oracle_kept_or_die(&slot, 1000, 4, __FILE__, __LINE__);
  cr_expect_geq(slot.bytes, 4000, "a larger request grows the block");
  cr_expect_eq((size_t)grown % ORACLE_CACHE_LINE, 0);
  grown[3999] = 1; /* the whole request is there (ASan would say otherwise) */
  free(slot.block);
}

/*
** oracle_threads.h: the oracle's parallel-for over independent items.
**
** The oracle's outputs are defined by serial C (DESIGN.md "Reductions"); what
** may run in parallel is only work whose items share no sum: output rows,
** heads, records, batch rows.  Each item is still computed by the same
** sequence of float operations as on one thread, so every byte is the same
** for any thread count (harness/tests/test_oracle_threads.c holds 1, 2 and
** 16 threads to that).
**
** Thread count: oracle_threads_set(n) when n >= 1, else the environment
** variable BITGATE_ORACLE_THREADS when it is a whole number >= 1, else the
** online processors.  Helper threads are started on first need and wait
** between calls (watch, nap, then sleep); a call returns after every item
** is done.  The calling thread is worker 0 and takes items too.  A call
** made from inside a worker runs inline (nested parallelism would
** oversubscribe the cores), so callers may nest without thinking about it.
** A call made while another thread's call has the helpers runs inline too.
*/
#ifndef ORACLE_THREADS_H
#define ORACLE_THREADS_H

#include <stddef.h>

#define ORACLE_THREADS_MAX 1024 /* a sanity cap on the setting, not a tuning knob */

/* n >= 1 fixes the thread count; n <= 0 returns to the environment / processor default. */
void oracle_threads_set(int n);

/*
** BITGATE_ORACLE_THREADS as it stands: 0 when unset or empty, the count
** when it is a whole number from 1 to ORACLE_THREADS_MAX, -1 for anything
** else (which the oracle ignores; the CLI refuses it, naming the value).
*/
int oracle_threads_env(void);

/* The thread count a top-level call would use now (>= 1). */
int oracle_threads_count(void);

/* Workers free for a call from here: 1 inside a worker, else oracle_threads_count(). */
int oracle_threads_available(void);

/*
** Workers a call over count items should use, when one worker should get at
** least grain items (grain < 1 counts as 1): between 1 and
** oracle_threads_available().  Callers size per-worker scratch with it.
*/
int oracle_parallel_workers(long long count, long long grain);

/* Items [begin, end) on worker `worker` (0 <= worker < the call's workers). */
typedef void (*oracle_range_fn)(void *ctx, long long begin, long long end, int worker);

/*
** Calls fn over [0, count) in chunks handed out from a shared counter, each
** a share of the items left (so the last ones are single items), on at
** most `workers` workers (from oracle_parallel_workers).  With one worker it
** is a plain call fn(ctx, 0, count, 0).  Each item is handed out exactly once;
** if a thread cannot be started the other workers (always the caller) take
** its share, so the call never fails.  Returns after every item is done.
** A macro, so that a profile (below) names the call by its function: name
** is fn's text.
*/
void oracle_parallel_for_named(long long count, int workers, oracle_range_fn fn, void *ctx, const char *name);
#define oracle_parallel_for(count, workers, fn, ctx) oracle_parallel_for_named((count), (workers), (fn), (ctx), #fn)

/*
** A profile of the parallel calls (`bitgate bench --oracle-calls`): while a
** log is set on a thread, each oracle_parallel_for that thread makes at the
** top level (not from inside a worker's items) adds its own time to the
** log's site of its name (sites listed in the order their first calls
** began): from the call to the return
** after every item, less the time of the logged calls made inside it (a
** call that runs inline makes those at the top level).  So the sites' times
** add up to the time spent in calls, and the rest of a step is the work no
** call spreads.  That rest is placed too: the time from a top-level call's
** end to the next top-level call's start (or to the log's unset) is the
** site's after_ns, and the time from the log's set to the first call is
** before_ns.  Calls of sites past ORACLE_CALL_SITES_MAX are counted in
** dropped; their time, and the time after them, is in no site.
** Costs nothing with no log set but a thread-local load a call.
*/
#define ORACLE_CALL_SITES_MAX 32
typedef struct oracle_call_site {
  const char *name; /* the function's name, as the call wrote it */
  long long calls, items;
  long long ns;
  long long after_ns; /* the caller's own work after this site's calls, up to the next call */
} oracle_call_site;
typedef struct oracle_call_log {
  oracle_call_site site[ORACLE_CALL_SITES_MAX];
  int n, dropped;
  long long before_ns; /* from the log's set to its first call */
} oracle_call_log;

/*
** Sets this thread's log (NULL: none); returns the one it replaces, whose
** last site's after_ns it closes.  The caller clears the log.
*/
oracle_call_log *oracle_call_log_set(oracle_call_log *log);

/*
** Calls so far that found helpers asleep and woke them (a system call on
** the caller's time); a helper between jobs first watches, then naps, and
** sleeps only after milliseconds without a call (oracle_threads.c).  For the
** pool's tests and profiles.
*/
long long oracle_threads_sleep_wakes(void);

/*
** calloc that aborts naming the caller's file and line when memory runs
** out (the oracle has no error class for it).  The block starts on a cache line and owns
** whole lines, so scratch given to different workers never shares a line:
** a line that two workers write in a hot loop (the ratio-4 scorer's dot
** sums) cost that stage a third of its 2-thread speed.
*/
#define ORACLE_CACHE_LINE 64 /* bytes, on x86-64 and Arm servers alike */
void *oracle_alloc_or_die(size_t count, size_t size, const char *file, int line);

/*
** A scratch block a thread keeps from one call to the next: oracle_kept_or_die
** returns one of at least count elements of size bytes (oracle_alloc_or_die's
** alignment), the kept one when it is large enough, else a new one in its
** place; the contents are not cleared on reuse.  slot is the caller's own
** static _Thread_local oracle_kept; the block grows to the largest request
** and lives as long as the thread.  Why: fresh memory costs a page fault per
** 4 KiB on the thread that first touches it, 0.5 ms a MiB, which on a
** 64K-position decode step was a tenth of the step on 2 threads.
*/
typedef struct oracle_kept {
  void *block;
  size_t bytes;
} oracle_kept;
void *oracle_kept_or_die(oracle_kept *slot, size_t count, size_t size, const char *file, int line);

/*
** count rounded up to the next count whose elements of size bytes fill
** whole cache lines: the stride of per-worker slices cut from one oracle_alloc_or_die
** block, each slice then on lines of its own.
*/
long long oracle_worker_stride(long long count, size_t size);

#endif

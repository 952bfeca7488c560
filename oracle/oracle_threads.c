/*
** oracle_threads.c: see oracle_threads.h.  Threads are made per call: the
** oracle's calls are few and long (one per stage of an operator call), so a
** pool would buy little and cost shutdown and resizing logic.
*/
#include "oracle/oracle_threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNKS_PER_WORKER 8 /* chunks balance uneven items without a lock per item */

static atomic_int threads_fixed; /* oracle_threads_set's value, 0 when unset */
static _Thread_local int in_worker; /* set while this thread runs a parallel call's items */

void oracle_threads_set(int n) {
  if (n > ORACLE_THREADS_MAX) n = ORACLE_THREADS_MAX;
  atomic_store(&threads_fixed, n > 0 ? n : 0);
}

/* BITGATE_ORACLE_THREADS as a count, or 0 when unset or not a whole number >= 1. */
static int threads_from_env(void) {
  const char *s = getenv("BITGATE_ORACLE_THREADS");
  char *end;
  long n;
  if (!s || !*s) return 0;
  n = strtol(s, &end, 10);
  if (*end || n < 1) return 0; /* not a count: ignored, the default applies */
  return n > ORACLE_THREADS_MAX ? ORACLE_THREADS_MAX : (int)n;
}

int oracle_threads_count(void) {
  int n = atomic_load(&threads_fixed);
  long online;
  if (n > 0) return n;
  n = threads_from_env();
  if (n > 0) return n;
  online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online < 1) return 1;
  return online > ORACLE_THREADS_MAX ? ORACLE_THREADS_MAX : (int)online;
}

int oracle_threads_available(void) { return in_worker ? 1 : oracle_threads_count(); }

int oracle_parallel_workers(long long count, long long grain) {
  long long avail = oracle_threads_available(), by_grain;
  if (grain < 1) grain = 1;
  by_grain = count / grain; /* workers that each get a full grain */
  if (by_grain < avail) avail = by_grain;
  return avail < 1 ? 1 : (int)avail;
}

/* One parallel call: the shared counter and what every worker runs. */
typedef struct job {
  atomic_llong next;
  long long count, chunk;
  oracle_range_fn fn;
  void *ctx;
} job;

typedef struct worker_arg {
  job *j;
  int worker;
} worker_arg;

/* Takes chunks until none is left.  Items are independent, so who takes which does not matter. */
static void job_drain(job *j, int worker) {
  long long begin;
  while ((begin = atomic_fetch_add(&j->next, j->chunk)) < j->count) {
    long long end = begin + j->chunk < j->count ? begin + j->chunk : j->count;
    j->fn(j->ctx, begin, end, worker);
  }
}

static void *worker_main(void *arg) {
  worker_arg *w = arg;
  in_worker = 1; /* this thread is new, so there is no previous value to keep */
  job_drain(w->j, w->worker);
  return NULL;
}

void oracle_parallel_for(long long count, int workers, oracle_range_fn fn, void *ctx) {
  pthread_t *ids;
  worker_arg *args;
  job j;
  int w, started = 0, was_in_worker = in_worker;
  if (count <= 0) return;
  if (workers <= 1 || count == 1) {
    fn(ctx, 0, count, 0);
    return;
  }
  ids = malloc((size_t)workers * sizeof *ids);
  args = malloc((size_t)workers * sizeof *args);
  if (!ids || !args) workers = 1; /* no memory for bookkeeping: the caller does it all */
  atomic_init(&j.next, 0);
  j.count = count;
  j.chunk = count / ((long long)workers * CHUNKS_PER_WORKER);
  if (j.chunk < 1) j.chunk = 1;
  j.fn = fn;
  j.ctx = ctx;
  for (w = 1; w < workers; w++) {
    args[started].j = &j;
    args[started].worker = started + 1; /* dense ids, even after a failed create */
    if (pthread_create(&ids[started], NULL, worker_main, &args[started]) != 0) break;
    started++;
  }
  in_worker = 1; /* the caller is worker 0: a nested call from its items runs inline */
  job_drain(&j, 0);
  in_worker = was_in_worker;
  for (w = 0; w < started; w++) pthread_join(ids[w], NULL);
  free(ids);
  free(args);
}

void *oracle_alloc_or_die(size_t count, size_t size, const char *file, int line) {
  size_t n = count ? count : 1, bytes;
  void *p = NULL;
  if (size == 0) size = 1;
  if (n <= ((size_t)-1 - ORACLE_CACHE_LINE) / size) { /* else no such block exists: out of memory */
    bytes = (n * size + ORACLE_CACHE_LINE - 1) / ORACLE_CACHE_LINE * ORACLE_CACHE_LINE;
    p = aligned_alloc(ORACLE_CACHE_LINE, bytes);
    if (p) memset(p, 0, bytes);
  }
  if (!p) {
    fprintf(stderr, "%s:%d: out of memory\n", file, line);
    abort();
  }
  return p;
}

long long oracle_worker_stride(long long count, size_t size) {
  size_t a = ORACLE_CACHE_LINE, b = size ? size : 1, t;
  long long step;
  while (b) t = a % b, a = b, b = t; /* a = gcd(line, size) */
  step = (long long)(ORACLE_CACHE_LINE / a); /* the fewest elements that fill whole lines */
  return (count + step - 1) / step * step;
}

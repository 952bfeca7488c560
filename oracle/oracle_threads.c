/*
** oracle_threads.c: see oracle_threads.h.  The helper threads are resident:
** on the project's 2-core machine a thread from pthread_create began running
** only 1-5 ms after the call while its creator kept working, as long as a
** whole stage of the ratio-128 decode step at 64K (the record pool takes
** 1.5 ms), so per-call threads often left the caller to do a stage alone.
** A sleeping helper wakes in about 0.03 ms.  The pool only grows and is
** never shut down (its threads sleep at exit).
*/
#include "oracle/oracle_threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
** A worker's next chunk is the items left over GUIDED_SHARE times the
** call's workers (at least one item): large chunks first, single items at
** the end.  Why: a call ends when its last chunk does, so the other workers
** wait for up to a chunk.  With equal chunks of 1/8 a worker's share (the
** rule before), a B = 1 decode step's attention handed out four heads at a
** time; its caller then waited 70-160 us a step for the helper's last four
** (0.5-0.9 ms of work), 20-30 us with these chunks.
*/
#define GUIDED_SHARE 2

/*
** How long a helper that finished a job keeps watching for the next one,
** and a caller that drained its job for the helpers still in it, before
** either sleeps on a condition variable.  A step's parallel calls come a few
** microseconds apart, and a wake from sleep took tens of microseconds here,
** paid twice a call (the helpers' start, the caller's end).
*/
#define POOL_SPIN_NS 100000LL

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
  long long count, share; /* share: GUIDED_SHARE * workers, the divisor of what is left */
  oracle_range_fn fn;
  void *ctx;
} job;

/* Claims [*begin, *end), a guided chunk of the items left; 0 when none is left. */
static int job_claim(job *j, long long *begin, long long *end) {
  long long first = atomic_load(&j->next), size;
  do {
    if (first >= j->count) return 0;
    size = (j->count - first) / j->share;
    if (size < 1) size = 1;
  } while (!atomic_compare_exchange_weak(&j->next, &first, first + size)); /* a failure reloads first */
  *begin = first, *end = first + size;
  return 1;
}

/* Takes chunks until none is left.  Items are independent, so who takes which does not matter. */
static void job_drain(job *j, int worker) {
  long long begin, end;
  while (job_claim(j, &begin, &end)) j->fn(j->ctx, begin, end, worker);
}

/*
** The resident helpers.  One call at a time owns them (owner).  Its job has
** seats for workers - 1 helpers (fewer if fewer could be started); helpers
** take them in the order they wake, as worker ids 1, 2, ...  A helper that
** wakes after the caller has drained the job finds it closed and sleeps
** again, so the caller never waits for a slow wake, only for the helpers
** inside the job.
*/
static struct helper_pool {
  pthread_mutex_t owner; /* held by the top-level call using the helpers */
  pthread_mutex_t mu;    /* guards the fields below */
  pthread_cond_t wake;   /* a job opened: helpers look for a seat */
  pthread_cond_t left;   /* the last helper inside a closed job left it */
  job *open;             /* the job taking helpers, NULL when none */
  unsigned long serial;  /* jobs opened so far: a helper sits in each at most once */
  int helpers;           /* helper threads started */
  int seats, seated;     /* the open job's seats, and how many are taken */
  atomic_int inside;     /* helpers still draining a job (changed under mu, watched without it) */
  atomic_ulong posted;   /* serial, watched without mu by a helper between jobs */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
          NULL, 0, 0, 0, 0, 0, 0};

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Spins, for POOL_SPIN_NS at most, until done(arg); its last answer. */
static int spin_until(int (*done)(unsigned long arg), unsigned long arg) {
  const long long until = now_ns() + POOL_SPIN_NS;
  int k;
  for (k = 0;; k++) {
    if (done(arg)) return 1;
    if ((k & 63) == 63 && now_ns() > until) return done(arg);
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

static int job_posted_after(unsigned long seen) { return atomic_load(&pool.posted) != seen; }

static int helpers_out(unsigned long unused) { return (void)unused, atomic_load(&pool.inside) == 0; }

/* A helper watches for the next job once after each job it sat in (POOL_SPIN_NS), then sleeps. */
static void *helper_main(void *arg) {
  unsigned long seen = 0;
  int watch = 0;
  (void)arg;
  in_worker = 1; /* for good: a nested call from a helper's items runs inline */
  pthread_mutex_lock(&pool.mu);
  for (;;) {
    job *j;
    int worker;
    while (!pool.open || pool.serial == seen || pool.seated == pool.seats) {
      if (watch) { /* the predicate is checked again under mu before any sleep: no wake is lost */
        watch = 0;
        pthread_mutex_unlock(&pool.mu);
        spin_until(job_posted_after, seen);
        pthread_mutex_lock(&pool.mu);
        continue;
      }
      pthread_cond_wait(&pool.wake, &pool.mu);
    }
    seen = pool.serial, j = pool.open;
    worker = ++pool.seated; /* dense ids: the caller is 0 */
    atomic_fetch_add(&pool.inside, 1);
    pthread_mutex_unlock(&pool.mu);
    job_drain(j, worker);
    pthread_mutex_lock(&pool.mu);
    if (atomic_fetch_sub(&pool.inside, 1) == 1 && !pool.open) pthread_cond_signal(&pool.left);
    watch = 1;
  }
  return NULL;
}

/* A child of fork has none of its parent's threads: it starts with no helpers. */
static void pool_after_fork(void) {
  pthread_mutex_init(&pool.owner, NULL);
  pthread_mutex_init(&pool.mu, NULL);
  pthread_cond_init(&pool.wake, NULL);
  pthread_cond_init(&pool.left, NULL);
  pool.open = NULL;
  pool.helpers = pool.seats = pool.seated = 0;
  atomic_store(&pool.inside, 0);
}

static void pool_register_fork(void) { pthread_atfork(NULL, NULL, pool_after_fork); }

/* Starts helpers until there are n (the owner holds pool.owner); fewer if a thread cannot be made. */
static void pool_grow(int n) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_attr_t attr;
  pthread_once(&once, pool_register_fork);
  if (pool.helpers >= n || pthread_attr_init(&attr) != 0) return;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED); /* never joined: they live as long as the process */
  while (pool.helpers < n) {
    pthread_t id;
    if (pthread_create(&id, &attr, helper_main, NULL) != 0) break;
    pthread_mutex_lock(&pool.mu);
    pool.helpers++;
    pthread_mutex_unlock(&pool.mu);
  }
  pthread_attr_destroy(&attr);
}

void oracle_parallel_for(long long count, int workers, oracle_range_fn fn, void *ctx) {
  job j;
  int was_in_worker = in_worker;
  if (count <= 0) return;
  /* the helpers are busy with another call (a nested one, or another thread's): this one runs inline */
  if (workers <= 1 || count == 1 || pthread_mutex_trylock(&pool.owner) != 0) {
    fn(ctx, 0, count, 0);
    return;
  }
  pool_grow(workers - 1);
  atomic_init(&j.next, 0);
  j.count = count;
  j.share = (long long)workers * GUIDED_SHARE;
  j.fn = fn;
  j.ctx = ctx;
  pthread_mutex_lock(&pool.mu);
  pool.open = &j, pool.serial++, pool.seated = 0;
  pool.seats = workers - 1 < pool.helpers ? workers - 1 : pool.helpers;
  atomic_store(&pool.posted, pool.serial);
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.mu);
  in_worker = 1; /* the caller is worker 0: a nested call from its items runs inline */
  job_drain(&j, 0);
  in_worker = was_in_worker;
  pthread_mutex_lock(&pool.mu);
  pool.open = NULL; /* closed: a helper waking now takes no seat */
  if (atomic_load(&pool.inside) > 0) { /* watch the last chunks end before sleeping on left */
    pthread_mutex_unlock(&pool.mu);
    spin_until(helpers_out, 0);
    pthread_mutex_lock(&pool.mu);
  }
  while (atomic_load(&pool.inside) > 0) pthread_cond_wait(&pool.left, &pool.mu);
  pthread_mutex_unlock(&pool.mu);
  pthread_mutex_unlock(&pool.owner);
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

void *oracle_kept_or_die(oracle_kept *slot, size_t count, size_t size, const char *file, int line) {
  if (count && size > ((size_t)-1) / count) {
    fprintf(stderr, "%s:%d: out of memory\n", file, line);
    abort();
  }
  if (count * size > slot->bytes || !slot->block) {
    free(slot->block);
    slot->block = oracle_alloc_or_die(count, size, file, line);
    slot->bytes = count * size;
  }
  return slot->block;
}

long long oracle_worker_stride(long long count, size_t size) {
  size_t a = ORACLE_CACHE_LINE, b = size ? size : 1, t;
  long long step;
  while (b) t = a % b, a = b, b = t; /* a = gcd(line, size) */
  step = (long long)(ORACLE_CACHE_LINE / a); /* the fewest elements that fill whole lines */
  return (count + step - 1) / step * step;
}

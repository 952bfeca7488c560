/*
** oracle_threads.c: see oracle_threads.h.  The helper threads are resident:
** on the project's 2-core machine a thread from pthread_create began running
** only 1-5 ms after the call while its creator kept working, as long as a
** whole stage of the ratio-128 decode step at 64K (the record pool takes
** 1.5 ms), so per-call threads often left the caller to do a stage alone.
** A helper between calls watches, naps, then sleeps (POOL_NAP_NS); one
** asleep wakes in about 0.03 ms.  The pool only grows and is
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

/*
** A helper that watched POOL_SPIN_NS in vain naps: it sleeps POOL_NAP_NS
** at a time and looks again, for POOL_NAP_WINDOW_NS, before it sleeps on
** the condition variable.  Why: waking a helper asleep on the condition
** variable cost the caller 20-29 us of its own time on the project's 2-vCPU
** machine (the futex wake of an idle virtual CPU), and its own items ran
** slower for tens of microseconds after; the first call of every decode
** step paid it, since steps come more than POOL_SPIN_NS apart.  A napping
** helper finds the post on its own, so the caller makes no system call.
** The window covers the gap between steps of a run (milliseconds).  The
** price: a napping helper took 16-18% of one core here (a timer wake about
** every 70 us: 20 us asked, the rest the kernel's timer slack), for at most
** the window after each call.  With the slack cut to 1 us (prctl) it
** joined a call twice as soon (median 22 us against 44-50) at 33% of a
** core; not taken.
*/
#define POOL_NAP_NS 20000L
#define POOL_NAP_WINDOW_NS 20000000LL

static atomic_int threads_fixed; /* oracle_threads_set's value, 0 when unset */
static _Thread_local int in_worker; /* set while this thread runs a parallel call's items */

void oracle_threads_set(int n) {
  if (n > ORACLE_THREADS_MAX) n = ORACLE_THREADS_MAX;
  atomic_store(&threads_fixed, n > 0 ? n : 0);
}

int oracle_threads_env(void) {
  const char *s = getenv("BITGATE_ORACLE_THREADS");
  char *end;
  long n;
  if (!s || !*s) return 0;
  if (*s < '0' || *s > '9') return -1; /* strtol would take blanks and a sign */
  n = strtol(s, &end, 10);
  return *end || n < 1 || n > ORACLE_THREADS_MAX ? -1 : (int)n;
}

/* BITGATE_ORACLE_THREADS as a count, or 0 when unset or not one (ignored: the default applies). */
static int threads_from_env(void) {
  const int n = oracle_threads_env();
  return n > 0 ? n : 0;
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

/*
** One parallel call: the shared counter and what every worker runs.  The
** counter and the seats each sit on a cache line of their own, apart from
** what the workers only read.
*/
typedef struct job {
  _Alignas(ORACLE_CACHE_LINE) atomic_llong next;
  _Alignas(ORACLE_CACHE_LINE) atomic_int seated; /* seats taken so far, even past seats */
  int seats;                                      /* helpers the call takes: ids 1 .. seats */
  unsigned long serial;                           /* pool.posted's value for this call */
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
** The resident helpers.  One call at a time owns them (owner).  It publishes
** its job (open, then posted) and drains it itself; helpers that see the
** post take a seat with one atomic add, as worker ids 1, 2, ..., and helpers
** past the call's seats, or that look once the call has closed its job, go
** back to watching.  No mutex is taken on that path.  On 16 cores the
** version before took the pool's mutex for every seat and every leave: the
** helpers queued on it, and a call cost about 26 us more than its items
** (docs/SPEED.md, eighteenth round).
**
** Why a job on the caller's stack is safe: a helper counts itself in
** `inside` before it reads open, and the caller returns only after it has
** cleared open and then seen inside at 0.  In the total order of these
** sequentially consistent operations, a helper that read the job counted
** itself before the caller cleared open, so the caller waits for it; one
** that counted itself later reads NULL or a later call's job.
**
** The mutex serves the two sleeps only: a helper that watched POOL_SPIN_NS
** and napped POOL_NAP_WINDOW_NS without a post (sleepers, on wake), and a
** caller whose helpers are still inside after POOL_SPIN_NS (waiting, on
** left).  Each side announces its sleep under the mutex and then checks
** its condition; the other side changes the condition first and then
** reads the announcement, so no wake is lost.
*/
static struct helper_pool {
  pthread_mutex_t owner; /* held by the top-level call using the helpers */
  pthread_mutex_t mu;    /* the sleeps' handshakes */
  pthread_cond_t wake;   /* a job was posted */
  pthread_cond_t left;   /* inside fell to 0 */
  _Atomic(job *) open;   /* the job taking helpers, NULL when none */
  atomic_ulong posted;   /* the serial of the last job opened */
  atomic_int inside;     /* helpers that may be reading open's job */
  atomic_int sleepers;   /* helpers asleep on wake, or about to be */
  atomic_int waiting;    /* the owner asleep on left, or about to be */
  atomic_llong sleep_wakes; /* posts that woke sleepers (oracle_threads_sleep_wakes) */
  int helpers;           /* helper threads started (the owner's) */
  unsigned long serial;  /* jobs opened so far (the owner's) */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
          NULL, 0, 0, 0, 0, 0, 0, 0};

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

static int job_posted_after(unsigned long last) { return atomic_load(&pool.posted) > last; }

static int helpers_out(unsigned long unused) { return (void)unused, atomic_load(&pool.inside) == 0; }

/* Naps until a post after `last`, for POOL_NAP_WINDOW_NS at most; whether one came. */
static int nap_until_post(unsigned long last) {
  const long long until = now_ns() + POOL_NAP_WINDOW_NS;
  const struct timespec nap = {0, POOL_NAP_NS};
  do {
    nanosleep(&nap, NULL);
    if (job_posted_after(last)) return 1;
  } while (now_ns() < until);
  return 0;
}

/* A helper with nothing to do: watches for a post after `last`, naps, then sleeps until one comes. */
static void await_post(unsigned long last) {
  if (spin_until(job_posted_after, last) || nap_until_post(last)) return;
  pthread_mutex_lock(&pool.mu);
  atomic_fetch_add(&pool.sleepers, 1);
  while (!job_posted_after(last)) pthread_cond_wait(&pool.wake, &pool.mu);
  atomic_fetch_sub(&pool.sleepers, 1);
  pthread_mutex_unlock(&pool.mu);
}

/* A helper done with the job it read (or with finding none): the last one out wakes a sleeping owner. */
static void helper_leave(void) {
  if (atomic_fetch_sub(&pool.inside, 1) == 1 && atomic_load(&pool.waiting)) {
    pthread_mutex_lock(&pool.mu);
    pthread_cond_signal(&pool.left);
    pthread_mutex_unlock(&pool.mu);
  }
}

/* The owner, its job drained and closed: waits until no helper can still read it. */
static void await_helpers_out(void) {
  if (spin_until(helpers_out, 0)) return;
  pthread_mutex_lock(&pool.mu);
  atomic_store(&pool.waiting, 1);
  while (!helpers_out(0)) pthread_cond_wait(&pool.left, &pool.mu);
  atomic_store(&pool.waiting, 0);
  pthread_mutex_unlock(&pool.mu);
}

/* last: the newest serial this helper has sat in or seen closed; it sits in each job at most once. */
static void *helper_main(void *arg) {
  unsigned long last = 0;
  (void)arg;
  in_worker = 1; /* for good: a nested call from a helper's items runs inline */
  for (;;) {
    unsigned long seen;
    job *j;
    await_post(last);
    seen = atomic_load(&pool.posted);
    atomic_fetch_add(&pool.inside, 1); /* before reading open: see the block comment */
    j = atomic_load(&pool.open);
    if (j && j->serial > last) {
      const int worker = atomic_fetch_add(&j->seated, 1) + 1;
      last = j->serial;
      if (worker <= j->seats) job_drain(j, worker);
    }
    if (seen > last) last = seen; /* a job posted and already closed: nothing to sit in */
    helper_leave();
  }
  return NULL;
}

/* A child of fork has none of its parent's threads: it starts with no helpers. */
static void pool_after_fork(void) {
  pthread_mutex_init(&pool.owner, NULL);
  pthread_mutex_init(&pool.mu, NULL);
  pthread_cond_init(&pool.wake, NULL);
  pthread_cond_init(&pool.left, NULL);
  atomic_store(&pool.open, NULL);
  atomic_store(&pool.inside, 0);
  atomic_store(&pool.sleepers, 0);
  atomic_store(&pool.waiting, 0);
  pool.helpers = 0;
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
    pool.helpers++;
  }
  pthread_attr_destroy(&attr);
}

/* The call itself: oracle_parallel_for_named without the profile. */
static void parallel_for(long long count, int workers, oracle_range_fn fn, void *ctx) {
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
  atomic_init(&j.seated, 0);
  j.seats = workers - 1 < pool.helpers ? workers - 1 : pool.helpers;
  j.serial = ++pool.serial;
  j.count = count;
  j.share = (long long)workers * GUIDED_SHARE;
  j.fn = fn;
  j.ctx = ctx;
  atomic_store(&pool.open, &j);
  atomic_store(&pool.posted, j.serial);
  if (atomic_load(&pool.sleepers) > 0) {
    atomic_fetch_add(&pool.sleep_wakes, 1);
    pthread_mutex_lock(&pool.mu);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
  }
  in_worker = 1; /* the caller is worker 0: a nested call from its items runs inline */
  job_drain(&j, 0);
  in_worker = was_in_worker;
  atomic_store(&pool.open, NULL); /* closed: a helper looking now takes no seat */
  await_helpers_out();
  pthread_mutex_unlock(&pool.owner);
}

long long oracle_threads_sleep_wakes(void) { return atomic_load(&pool.sleep_wakes); }

static _Thread_local oracle_call_log *call_log; /* oracle_call_log_set's */
#define CALL_DEPTH_MAX 8 /* logged calls open at once on a thread; deeper ones count in their parent's time */
static _Thread_local int call_depth;
static _Thread_local long long call_inner_ns[CALL_DEPTH_MAX]; /* per open call: its logged inner calls' time */

/* The caller's own work since the last top-level logged call ended (or the log was set): whose it is. */
static _Thread_local oracle_call_site *gap_site; /* NULL: before the first call, or after a dropped site */
static _Thread_local int gap_began;              /* a top-level call was logged since the log was set */
static _Thread_local long long gap_from;

/* The gap up to t goes to the site before it, or to before_ns ahead of the first call. */
static void call_log_gap_close(oracle_call_log *log, long long t) {
  if (gap_site) gap_site->after_ns += t - gap_from;
  else if (!gap_began) log->before_ns += t - gap_from;
}

oracle_call_log *oracle_call_log_set(oracle_call_log *log) {
  oracle_call_log *was = call_log;
  const long long t = now_ns();
  if (was) call_log_gap_close(was, t);
  call_log = log;
  gap_site = NULL, gap_began = 0, gap_from = t;
  return was;
}

/* log's site of name (the name's text, not its address), added when new; NULL when the log is full. */
static oracle_call_site *call_log_site(oracle_call_log *log, const char *name) {
  int i;
  for (i = 0; i < log->n && strcmp(log->site[i].name, name); i++) continue;
  if (i < log->n) return &log->site[i];
  if (log->n == ORACLE_CALL_SITES_MAX) {
    log->dropped++;
    return NULL;
  }
  memset(&log->site[i], 0, sizeof log->site[i]);
  log->site[i].name = name;
  log->n++;
  return &log->site[i];
}

/*
** A logged call's own time: its wall time less its logged inner calls'.  A
** call that runs inline (one worker, one item) makes its inner calls at the
** top level, where they are logged too; without the subtraction their time
** would count twice.
*/
void oracle_parallel_for_named(long long count, int workers, oracle_range_fn fn, void *ctx, const char *name) {
  oracle_call_log *const log = in_worker ? NULL : call_log;
  oracle_call_site *site;
  long long t0, total;
  if (!log || call_depth == CALL_DEPTH_MAX) {
    parallel_for(count, workers, fn, ctx);
    return;
  }
  site = call_log_site(log, name); /* on entry: a site is listed where its first call began */
  call_inner_ns[call_depth++] = 0;
  t0 = now_ns();
  if (call_depth == 1) call_log_gap_close(log, t0);
  parallel_for(count, workers, fn, ctx);
  total = now_ns() - t0;
  call_depth--;
  if (site) site->calls++, site->items += count, site->ns += total - call_inner_ns[call_depth];
  if (call_depth) call_inner_ns[call_depth - 1] += total;
  else gap_site = site, gap_began = 1, gap_from = t0 + total;
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

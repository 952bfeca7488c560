/*
** parallel.c: see parallel.h.
*/
#include "harness/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct pool {
  atomic_llong next;
  long long count;
  parallel_fn fn;
  void *ctx;
  void (*thread_done)(void);
} pool;

typedef struct worker {
  pool *p;
  int thread;
  pthread_t id;
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  long long i;
  while ((i = atomic_fetch_add(&w->p->next, 1)) < w->p->count) w->p->fn(w->p->ctx, i, w->thread);
  if (w->p->thread_done) w->p->thread_done();
  return NULL;
}

int parallel_for(long long count, int nthreads, parallel_fn fn, void *ctx,
                 void (*thread_done)(void)) {
  pool p;
  worker *ws;
  int t, started = 0, rc = 0;
  if (nthreads < 1) nthreads = 1;
  ws = calloc((size_t)nthreads, sizeof *ws);
  if (!ws) return -1;
  atomic_init(&p.next, 0);
  p.count = count;
  p.fn = fn;
  p.ctx = ctx;
  p.thread_done = thread_done;
  for (t = 0; t < nthreads; t++) {
    ws[t].p = &p;
    ws[t].thread = t;
    if (pthread_create(&ws[t].id, NULL, worker_main, &ws[t]) != 0) {
      rc = -1;
      atomic_store(&p.next, count); /* let the started workers finish early */
      break;
    }
    started++;
  }
  for (t = 0; t < started; t++) pthread_join(ws[t].id, NULL);
  free(ws);
  return rc;
}

int parallel_default_threads(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (int)n;
}

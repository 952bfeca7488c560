/*
** parallel.h: a minimal parallel-for over pthreads.  Work items are handed out
** one index at a time from an atomic counter, so uneven items balance
** themselves; each call of fn knows its worker's thread number, which callers
** use to index per-thread tallies without locks.
*/
#ifndef PARALLEL_H
#define PARALLEL_H

typedef void (*parallel_fn)(void *ctx, long long index, int thread);

/* Calls fn(ctx, i, t) for every i in [0, count) on nthreads workers; each
** worker calls thread_done (if non-NULL) before it exits.  Returns 0, or -1 if
** threads could not be started (then nothing ran). */
int parallel_for(long long count, int nthreads, parallel_fn fn, void *ctx,
                 void (*thread_done)(void));

/* Online processors, at least 1. */
int parallel_default_threads(void);

#endif

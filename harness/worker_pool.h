/*
** worker_pool.h: the parent's side of crash and hang isolation (issue 7,
** items 4 and 5; the protocol is in worker.h).
**
** Options of `bitgate run`:
**   --workers            run the cases in worker processes even without a GPU
**   --in-process         run them in this process (debugging; a kernel fault
**                        then ends the run)
**                        default: workers when a GPU is present, else in-process
**   --devices all|LIST   one worker per GPU ("0,1"; default 0): each sees its
**                        GPU as device 0 through CUDA_VISIBLE_DEVICES (mapped
**                        through the parent's own CUDA_VISIBLE_DEVICES)
**   --jobs N             N workers per GPU (default 1), sharing it: a case is
**                        mostly host work (generation, the oracle, transfers,
**                        diffs), so several keep one GPU busy; unless
**                        BITGATE_ORACLE_THREADS is set, each worker's oracle
**                        gets an equal share of the cores
**   --timeout SECONDS    a case that has not answered by then is killed
**                        (SIGKILL) and recorded as 'timeout'; 0: no limit;
**                        default 600
**
** The pool hands each selected case to whichever worker is free, and hands
** each finished report to the sink as it arrives (so rows are stored in
** finishing order).  A worker that dies (a signal, or a nonzero exit)
** becomes one 'crash' row for its case, one that does not answer in time a
** 'timeout' row, each with the worker's last output and the repro command;
** a fresh worker is started for the next case.
*/
#ifndef WORKER_POOL_H
#define WORKER_POOL_H

#include "harness/worker.h"

#include <stdio.h>

typedef enum worker_mode { WORKER_MODE_AUTO = 0, WORKER_MODE_ON, WORKER_MODE_OFF } worker_mode;

typedef struct worker_args {
  worker_mode mode;
  const char *devices; /* NULL: device 0 */
  int jobs;            /* workers per device, 1..WORKER_JOBS_MAX */
  int timeout_s;       /* 0: none */
} worker_args;

extern const char worker_options_help[];

void worker_args_init(worker_args *a);

/* As gate_option: 1 taken (*i advanced), 0 not ours, -1 usage error printed. */
int worker_option(const char *cmd, int argc, char **argv, int *i, worker_args *a);

#define WORKER_DEVICES_MAX 16 /* GPUs in --devices */
#define WORKER_JOBS_MAX 16    /* workers a GPU */
#define WORKER_POOL_MAX 64    /* workers in all */

/*
** Each worker's CUDA_VISIBLE_DEVICES value from --devices and --jobs (one
** per worker, a device's workers next to each other); -1 when the list is
** malformed or names too many workers.
*/
int worker_pool_devices(const worker_args *a, char visible[][32], int *n_out);

/* BITGATE_ORACLE_THREADS for each of `workers` workers when the user set none: an equal share of the cores. */
int worker_pool_oracle_threads(int workers);

/* Whether cases run in workers: --workers, --in-process, else whether a GPU is present. */
int worker_pool_wanted(const worker_args *a);

typedef struct worker_pool_sink {
  void *ctx;
  /* Before a case is handed out: 1 run it (id filled in), 0 skip it, -1 stop the run. */
  int (*take)(void *ctx, const char *spec, char *id, size_t id_len);
  /* A finished case: the worker's reply, or the pool's crash/timeout row; 0, or -1 stops the run. */
  int (*done)(void *ctx, worker_reply *rep);
} worker_pool_sink;

/* What the run's summary says about the workers. */
typedef struct worker_pool_result {
  int workers, have_device;   /* have_device: the first worker's session had a GPU */
  char device_reason[640];
  long long crashes, timeouts; /* cases lost with their worker */
} worker_pool_result;

/* Where the workers come from: the command's argv (argv[0] "run"), passed on with suite and corpus. */
typedef struct worker_pool_launch {
  int argc;
  char **argv;
  const char *suite, *corpus;
  lane_mask lanes;
} worker_pool_launch;

/*
** Runs specs[0..count) on workers.  Returns 0; -1 when the sink stopped the
** run; -2 when a worker could not be started (err says why, with its last
** output: e.g. --require-gpu on a machine without one).
*/
int worker_pool_run(const worker_args *a, const worker_pool_launch *l, char *const *specs, int count,
                    const worker_pool_sink *sink, worker_pool_result *res, char *err, size_t err_len);

/* The summary line: "  workers: N, C crashed, T timed out". */
void worker_pool_print(FILE *out, const worker_pool_result *res);

#endif

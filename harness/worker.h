/*
** worker.h: the worker process of `bitgate run` (issue 7, item 4: crash and
** hang isolation) and the protocol it speaks with the parent
** (worker_pool.h).
**
** Why a process: a kernel fault (an illegal address) poisons the CUDA
** context for good, and a hung kernel never returns, so the device lanes run
** where dying costs one case, not the run.  CUDA contexts do not survive
** fork, so the parent starts each worker with posix_spawn of its own binary
** (exec), as the hidden subcommand
**     bitgate worker --fd N run RUN-OPTIONS... --suite S --corpus DIR
** where N is the worker's end of a socketpair.
**
** Protocol: fixed-size structs written whole, in host byte order (both ends
** are the same binary on the same host), each opening with WORKER_MAGIC.
**   worker -> parent  worker_hello, once, after the session is open
**   parent -> worker  worker_request, one case
**   worker -> parent  worker_reply, that case's finished report
** The worker runs each case exactly as the in-process loop does (every lane,
** --repeat, the frozen-oracle check), so rows are the same either way; the
** parent keeps the store, the tally, the gate policy and the printing.  EOF
** on the socket ends the worker.
**
** A kernel fault does not kill the process: CUDA reports it as a sticky
** error and every later call fails.  So after each case the worker syncs the
** device; when that fails the case's row becomes 'crash' and the reply has
** retire set: the worker exits and the parent starts a fresh one.
*/
#ifndef WORKER_H
#define WORKER_H

#include "cases/case_spec.h"
#include "harness/case_runner.h"

#include <stdint.h>
#include <stddef.h>

#define WORKER_MAGIC 0x31776762u /* "bgw1" */
#define WORKER_SPEC_MAX 2048     /* the longest committed spec is 232 bytes */

typedef struct worker_hello {
  uint32_t magic;
  int have_device;
  char device_reason[640]; /* why the device lanes do not run here */
  char kernel_hash[33];    /* the parent refuses a worker whose kernels are not its own (a tree edited meanwhile) */
} worker_hello;

typedef struct worker_request {
  uint32_t magic;
  char case_id[CASE_ID_MAX];
  char spec[WORKER_SPEC_MAX];
} worker_request;

typedef struct worker_reply {
  uint32_t magic;
  int retire; /* the device context is lost: this worker exits after the reply */
  char case_id[CASE_ID_MAX];
  long long frozen_checked, frozen_changed, frozen_unpinned; /* this case's frozen-oracle counts */
  case_report report;
} worker_reply;

struct frozen_oracle;

/* What one worker runs each case with. */
typedef struct worker_context {
  runner_env *env;
  struct frozen_oracle *frozen; /* may be checking or not */
  int repeat;
} worker_context;

/* Writes / reads exactly len bytes on a blocking fd (EINTR retried); 0, or -1 (EOF, error). */
int worker_write_all(int fd, const void *buf, size_t len);
int worker_read_all(int fd, void *buf, size_t len);

/*
** The worker's loop on fd: sends the hello, then answers each request until
** EOF.  Returns the worker's exit code: 0 at EOF, 3 on a protocol or I/O
** error, 0 after a retiring reply.
*/
int worker_serve(int fd, const worker_context *w, int have_device, const char *device_reason);

/*
** Turns a case whose worker was lost into its one failing row: status
** ("crash" or "timeout") in the lane that was running (the first device lane
** of lanes, else oracle; a worker cannot say which lane it was in when it
** died), message what, then "; repro: bitgate repro ID".  Used by the parent
** for a dead or hung worker and by the worker for a lost device context.
*/
void worker_report_lost(case_report *r, lane_mask lanes, const char *case_id, const char *status, const char *what);

/*
** Test-only hooks (worker_test_hooks.c), active only inside a worker and only
** when an environment variable names the case:
**   BITGATE_TEST_CRASH_CASE=ID  raise SIGSEGV on that case (a host crash)
**   BITGATE_TEST_HANG_CASE=ID   sleep forever on that case (a hang)
*/
void worker_test_hooks_case(const char *case_id);

/*
** At the worker's start, before anything reads a kernel source:
**   BITGATE_TEST_WORKER_KERNEL_TREE=DIR  this worker takes DIR as its kernel
**                               tree, as if the parent's had been edited
*/
void worker_test_hooks_start(void);

#endif

/*
** worker.c: see worker.h.  The worker's side of the protocol: the hello,
** then one case per request, run as the in-process loop runs it.
*/
#include "harness/worker.h"
#include "device/device.h"
#include "device/runtime.h"
#include "harness/frozen_oracle.h"
#include "harness/repeat.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int worker_write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

/* 0, 1 at EOF before the first byte (the parent hung up), -1 otherwise. */
int worker_read_all(int fd, void *buf, size_t len) {
  char *p = buf;
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, p + got, len - got);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && got == 0) return 1;
    if (n <= 0) return -1;
    got += (size_t)n;
  }
  return 0;
}

void worker_report_lost(case_report *r, lane_mask lanes, const char *case_id, const char *status, const char *what) {
  lane l = LANE_ORACLE, d;
  result_row *row;
  for (d = LANE_EAGER; d < LANE_COUNT && l == LANE_ORACLE; d++)
    if (lanes & LANE_BIT(d)) l = d;
  if (!(row = case_report_add(r, l, 0, status))) return;
  r->failed++;
  snprintf(row->message, sizeof row->message, "%.650s; repro: bitgate repro %s", what, case_id);
}

/*
** The device context died during this case (a sticky CUDA error such as an
** illegal address): the lane that saw it fails as 'crash' (the fault's
** message first), or a crash row is added when no lane noticed.
*/
static void mark_context_lost(case_report *r, lane_mask lanes, const char *case_id, const char *why) {
  char what[700];
  int i;
  for (i = 0; i < r->n; i++) {
    result_row *row = &r->rows[i];
    const char *tail;
    int keep;
    if (!strcmp(row->lane, "oracle") || !strcmp(row->status, "pass") || !strcmp(row->status, "skipped")) continue;
    tail = strstr(row->message, "; repro: "); /* keep the lane's own message, less its repro tail */
    keep = tail ? (int)(tail - row->message) : (int)strlen(row->message);
    snprintf(what, sizeof what, "kernel fault, device context lost (%.200s); the lane said: %.*s", why,
             keep > 300 ? 300 : keep, row->message);
    snprintf(row->status, sizeof row->status, "crash");
    snprintf(row->message, sizeof row->message, "%s; repro: bitgate repro %s", what, case_id);
    return;
  }
  snprintf(what, sizeof what, "kernel fault, device context lost after the case (%.300s)", why);
  worker_report_lost(r, lanes, case_id, "crash", what);
}

/* Runs one request into rep. */
static void serve_case(const worker_context *w, const worker_request *req, worker_reply *rep) {
  frozen_oracle *f = w->frozen;
  long long checked = f->cases_checked, changed = f->cases_changed, unpinned = f->cases_unpinned;
  memset(rep, 0, sizeof *rep);
  rep->magic = WORKER_MAGIC;
  snprintf(rep->case_id, sizeof rep->case_id, "%s", req->case_id);
  worker_test_hooks_case(req->case_id);
  case_run_repeated(w->env, req->case_id, req->spec, w->repeat, NULL, &rep->report);
  if (f->checking) frozen_oracle_check_case(f, req->case_id, &rep->report);
  rep->frozen_checked = f->cases_checked - checked;
  rep->frozen_changed = f->cases_changed - changed;
  rep->frozen_unpinned = f->cases_unpinned - unpinned;
  if (w->env->rt && device_runtime_sync(w->env->rt) != 0) { /* a sticky error outlives the case */
    mark_context_lost(&rep->report, w->env->lanes, req->case_id, device_runtime_error(w->env->rt));
    rep->retire = 1;
  }
}

int worker_serve(int fd, const worker_context *w, int have_device, const char *device_reason) {
  static worker_hello hello;
  static worker_request req;
  static worker_reply rep; /* about 50 KiB: not on the stack */
  int rc;
  hello.magic = WORKER_MAGIC;
  hello.have_device = have_device;
  snprintf(hello.device_reason, sizeof hello.device_reason, "%s", device_reason);
  snprintf(hello.kernel_hash, sizeof hello.kernel_hash, "%s", device_kernel_hash());
  if (worker_write_all(fd, &hello, sizeof hello) != 0) return 3;
  while ((rc = worker_read_all(fd, &req, sizeof req)) == 0) {
    if (req.magic != WORKER_MAGIC) return 3;
    req.case_id[sizeof req.case_id - 1] = '\0';
    req.spec[sizeof req.spec - 1] = '\0';
    serve_case(w, &req, &rep);
    if (worker_write_all(fd, &rep, sizeof rep) != 0) return 3;
    if (rep.retire) return 0;
  }
  return rc == 1 ? 0 : 3;
}

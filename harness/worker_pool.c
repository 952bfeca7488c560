/*
** worker_pool.c: see worker_pool.h.  One slot per worker; the parent is a
** single-threaded poll loop: hand a case to every idle worker, then wait for
** a reply, a death (EOF on the socket) or the earliest deadline.
**
** Each worker is started with posix_spawn of /proc/self/exe (an exec: CUDA
** contexts do not survive fork).  Its stdout and stderr go to a pipe whose
** last bytes are kept, so that a crash row can quote what the worker said
** before it died (an ASan report, a CUDA message, an abort's assertion).
*/
#include "harness/worker_pool.h"
#include "device/device.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define TAIL_BYTES 2048     /* a worker's last output, for its crash message */
#define START_TIMEOUT_S 120 /* the hello comes after the session opens; no kernel is compiled by then */

typedef struct worker_slot {
  pid_t pid;        /* 0: no worker */
  int fd, out_fd;   /* the socket; the worker's stdout and stderr */
  const char *visible; /* its CUDA_VISIBLE_DEVICES */
  int busy;         /* a case is in flight */
  char case_id[CASE_ID_MAX];
  double deadline;  /* the case in flight times out then; 0: never */
  size_t got;       /* bytes of rep read so far */
  worker_reply rep;
  char tail[TAIL_BYTES];
  size_t tail_len;
} worker_slot;

typedef struct pool {
  worker_slot *slots;
  int n;
  const worker_args *args;
  const worker_pool_launch *launch;
  const worker_pool_sink *sink;
  lane_mask lanes; /* less the device lanes once a hello says there is no GPU */
  worker_pool_result *res;
  int hello_seen;
} pool;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Keeps the last TAIL_BYTES of what the worker wrote. */
static void drain_output(worker_slot *w) {
  char buf[4096];
  ssize_t n;
  while ((n = read(w->out_fd, buf, sizeof buf)) > 0) {
    size_t k = (size_t)n, drop;
    const char *p = buf;
    if (k > TAIL_BYTES) p += k - TAIL_BYTES, k = TAIL_BYTES;
    drop = w->tail_len + k > TAIL_BYTES ? w->tail_len + k - TAIL_BYTES : 0;
    memmove(w->tail, w->tail + drop, w->tail_len - drop);
    w->tail_len -= drop;
    memcpy(w->tail + w->tail_len, p, k);
    w->tail_len += k;
  }
}

/* The last bytes of the worker's output on one line ("(none)" when silent), for a message. */
static void tail_text(const worker_slot *w, char *out, size_t cap) {
  size_t n = w->tail_len, start, i, o = 0;
  while (n && (w->tail[n - 1] == '\n' || w->tail[n - 1] == ' ')) n--;
  start = n > 240 ? n - 240 : 0;
  for (i = start; i < n && o + 4 < cap; i++) {
    char c = w->tail[i];
    if (c == '\n') out[o++] = ' ', out[o++] = '|', out[o++] = ' ';
    else out[o++] = (c >= 32 && c < 127) ? c : '?';
  }
  out[o] = '\0';
  if (!o) snprintf(out, cap, "(none)");
}

/* Waits for the dead or killed worker, keeps its last output, closes its ends; returns its wait status. */
static int slot_reap(worker_slot *w, int kill_it) {
  int status = 0;
  if (kill_it) kill(w->pid, SIGKILL);
  while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
  drain_output(w);
  close(w->fd);
  close(w->out_fd);
  w->pid = 0;
  w->busy = 0;
  return status;
}

/* The worker's argv: bitgate worker --fd N ARGV... --suite S --corpus DIR. */
static char **worker_argv(const worker_pool_launch *l, const char *fd_text) {
  char **v = calloc((size_t)l->argc + 9, sizeof *v);
  int k = 0, i;
  if (!v) return NULL;
  v[k++] = "bitgate", v[k++] = "worker", v[k++] = "--fd", v[k++] = (char *)fd_text;
  for (i = 0; i < l->argc; i++) v[k++] = l->argv[i];
  v[k++] = "--suite", v[k++] = (char *)l->suite, v[k++] = "--corpus", v[k++] = (char *)l->corpus;
  return v;
}

/*
** environ with CUDA_VISIBLE_DEVICES=visible in place of the parent's, and
** threads_entry (BITGATE_ORACLE_THREADS=N) unless the parent sets its own.
*/
static char **worker_envp(char *visible_entry, char *threads_entry) {
  size_t n = 0, k = 0, i;
  char **v;
  while (environ[n]) n++;
  if (!(v = calloc(n + 3, sizeof *v))) return NULL;
  for (i = 0; i < n; i++)
    if (strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21)) v[k++] = environ[i];
  v[k++] = visible_entry;
  if (!getenv("BITGATE_ORACLE_THREADS")) v[k++] = threads_entry;
  return v;
}

/*
** Reads exactly len bytes of the slot's socket by the deadline, keeping its
** output meanwhile: 0, or -1 (EOF, error, or too late).
*/
static int slot_read(worker_slot *w, void *buf, size_t len, double deadline) {
  size_t got = 0;
  while (got < len) {
    struct pollfd fds[2] = {{w->fd, POLLIN, 0}, {w->out_fd, POLLIN, 0}};
    double left = deadline - now_s();
    ssize_t n;
    if (left <= 0) return -1;
    if (poll(fds, 2, (int)(left * 1000.0) + 1) < 0 && errno != EINTR) return -1;
    drain_output(w);
    n = recv(w->fd, (char *)buf + got, len - got, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return -1;
    if (n > 0) got += (size_t)n;
  }
  return 0;
}

/* Starts the slot's worker and reads its hello; 0, or -1 with err. */
static int slot_start(pool *p, worker_slot *w, char *err, size_t err_len) {
  int sv[2], out[2], rc;
  char fd_text[16], visible_entry[64], threads_entry[64], why[300];
  char **argv = NULL, **envp = NULL;
  worker_hello hello;
  posix_spawn_file_actions_t fa;
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || pipe(out) != 0)
    return snprintf(err, err_len, "cannot start a worker: %s", strerror(errno)), -1;
  fcntl(sv[0], F_SETFD, FD_CLOEXEC); /* the worker keeps only its own end, sv[1] */
  fcntl(out[0], F_SETFD, FD_CLOEXEC);
  fcntl(out[1], F_SETFD, FD_CLOEXEC); /* dup2 onto 1 and 2 clears it there */
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  snprintf(fd_text, sizeof fd_text, "%d", sv[1]);
  snprintf(visible_entry, sizeof visible_entry, "CUDA_VISIBLE_DEVICES=%s", w->visible);
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, out[1], 2);
  argv = worker_argv(p->launch, fd_text);
  snprintf(threads_entry, sizeof threads_entry, "BITGATE_ORACLE_THREADS=%d", worker_pool_oracle_threads(p->n));
  envp = worker_envp(visible_entry, threads_entry);
  rc = argv && envp ? posix_spawn(&w->pid, "/proc/self/exe", &fa, NULL, argv, envp) : ENOMEM;
  posix_spawn_file_actions_destroy(&fa);
  free(argv);
  free(envp);
  close(sv[1]);
  close(out[1]);
  w->fd = sv[0], w->out_fd = out[0], w->tail_len = 0, w->busy = 0;
  if (rc != 0) {
    close(sv[0]), close(out[0]), w->pid = 0;
    return snprintf(err, err_len, "cannot start a worker: posix_spawn: %s", strerror(rc)), -1;
  }
  if (slot_read(w, &hello, sizeof hello, now_s() + START_TIMEOUT_S) != 0 || hello.magic != WORKER_MAGIC) {
    int st = slot_reap(w, 1);
    tail_text(w, why, sizeof why);
    snprintf(err, err_len, "a worker (CUDA_VISIBLE_DEVICES=%s) did not start (wait status %d): %s", w->visible, st,
             why);
    return -1;
  }
  if (strncmp(hello.kernel_hash, device_kernel_hash(), sizeof hello.kernel_hash)) {
    slot_reap(w, 1);
    snprintf(err, err_len,
             "a worker (CUDA_VISIBLE_DEVICES=%s) read other kernel sources (hash %.32s) than this run's (%s): "
             "was BITGATE_KERNEL_TREE edited during the run?",
             w->visible, hello.kernel_hash, device_kernel_hash());
    return -1;
  }
  if (!p->hello_seen) { /* the first worker's session speaks for the summary */
    p->hello_seen = 1;
    p->res->have_device = hello.have_device;
    snprintf(p->res->device_reason, sizeof p->res->device_reason, "%s", hello.device_reason);
    if (!hello.have_device) p->lanes &= LANE_BIT(LANE_ORACLE);
  }
  return 0;
}

/* How a case's worker was lost. */
enum lost { LOST_DIED, LOST_TIMEOUT, LOST_GARBLED };

/* The slot's worker died, hung (it is killed) or broke the protocol: its case gets one crash or timeout row. */
static int slot_lost(pool *p, worker_slot *w, enum lost why) {
  static worker_reply rep;
  char what[700], tail[300], how[96];
  int st = slot_reap(w, why != LOST_DIED); /* a dying worker may still be writing its last words */
  tail_text(w, tail, sizeof tail);
  if (why == LOST_TIMEOUT)
    snprintf(how, sizeof how, "no answer within --timeout %d s, worker killed (SIGKILL)", p->args->timeout_s);
  else if (why == LOST_GARBLED)
    snprintf(how, sizeof how, "worker sent a garbled reply (killed)");
  else if (WIFSIGNALED(st))
    snprintf(how, sizeof how, "worker died of signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
  else
    snprintf(how, sizeof how, "worker exited with status %d", WEXITSTATUS(st));
  snprintf(what, sizeof what, "%s while running this case (CUDA_VISIBLE_DEVICES=%s); its last output: %s", how,
           w->visible, tail);
  memset(&rep, 0, sizeof rep);
  rep.magic = WORKER_MAGIC;
  snprintf(rep.case_id, sizeof rep.case_id, "%s", w->case_id);
  worker_report_lost(&rep.report, p->lanes, w->case_id, why == LOST_TIMEOUT ? "timeout" : "crash", what);
  if (why == LOST_TIMEOUT) p->res->timeouts++;
  else p->res->crashes++;
  return p->sink->done(p->sink->ctx, &rep);
}

/*
** Hands the next case the sink takes to the idle slot w, starting its
** worker if needed.  0 (also when no case is left), -1 the sink stopped,
** -2 no worker could start (err).
*/
static int slot_assign(pool *p, worker_slot *w, char *const *specs, int count, int *next, char *err, size_t err_len) {
  static worker_request req;
  size_t off = 0;
  int take = 0;
  memset(&req, 0, sizeof req);
  while (*next < count && !take)
    if ((take = p->sink->take(p->sink->ctx, specs[(*next)++], req.case_id, sizeof req.case_id)) < 0) return -1;
  if (!take) return 0;
  if (!w->pid && slot_start(p, w, err, err_len) != 0) return -2;
  req.magic = WORKER_MAGIC;
  snprintf(req.spec, sizeof req.spec, "%s", specs[*next - 1]);
  snprintf(w->case_id, sizeof w->case_id, "%s", req.case_id);
  w->busy = 1, w->got = 0;
  w->deadline = p->args->timeout_s ? now_s() + p->args->timeout_s : 0.0;
  while (off < sizeof req) { /* MSG_NOSIGNAL: a dead worker is an error here, not SIGPIPE for the parent */
    ssize_t n = send(w->fd, (const char *)&req + off, sizeof req - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return slot_lost(p, w, LOST_DIED);
    off += (size_t)n;
  }
  return 0;
}

/* Reads what the busy slot w has sent; its case is done on a whole reply, lost on EOF or past its deadline. */
static int slot_poll(pool *p, worker_slot *w, double t) {
  ssize_t n = recv(w->fd, (char *)&w->rep + w->got, sizeof w->rep - w->got, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return slot_lost(p, w, LOST_DIED);
  if (n > 0 && (w->got += (size_t)n) == sizeof w->rep) {
    int rc;
    w->busy = 0;
    if (w->rep.magic != WORKER_MAGIC || strcmp(w->rep.case_id, w->case_id)) return slot_lost(p, w, LOST_GARBLED);
    rc = p->sink->done(p->sink->ctx, &w->rep);
    if (w->rep.retire) slot_reap(w, 0); /* its device context is gone: it exits, the next case gets a fresh one */
    return rc;
  }
  if (w->deadline > 0.0 && t >= w->deadline) return slot_lost(p, w, LOST_TIMEOUT);
  return 0;
}

/* One round: poll every worker until something arrives or the earliest deadline, then read. */
static int pool_wait(pool *p) {
  struct pollfd fds[2 * WORKER_POOL_MAX];
  double soonest = 0.0, t;
  int i, k = 0, rc = 0, ms = -1;
  for (i = 0; i < p->n; i++) {
    worker_slot *w = &p->slots[i];
    if (!w->pid) continue;
    fds[k++] = (struct pollfd){w->out_fd, POLLIN, 0};
    if (!w->busy) continue;
    fds[k++] = (struct pollfd){w->fd, POLLIN, 0};
    if (w->deadline > 0.0 && (soonest == 0.0 || w->deadline < soonest)) soonest = w->deadline;
  }
  if (soonest > 0.0) ms = soonest > now_s() ? (int)((soonest - now_s()) * 1000.0) + 1 : 0;
  if (poll(fds, (nfds_t)k, ms) < 0 && errno != EINTR) return 0;
  t = now_s();
  for (i = 0; i < p->n && rc == 0; i++) {
    worker_slot *w = &p->slots[i];
    if (w->pid) drain_output(w);
    if (w->pid && w->busy) rc = slot_poll(p, w, t);
  }
  return rc;
}

int worker_pool_run(const worker_args *a, const worker_pool_launch *l, char *const *specs, int count,
                    const worker_pool_sink *sink, worker_pool_result *res, char *err, size_t err_len) {
  static char visible[WORKER_POOL_MAX][32];
  pool p;
  int i, rc = 0, next = 0, busy = 1;
  memset(&p, 0, sizeof p);
  memset(res, 0, sizeof *res);
  p.args = a, p.launch = l, p.sink = sink, p.lanes = l->lanes, p.res = res;
  if (worker_pool_devices(a, visible, &p.n) != 0)
    return snprintf(err, err_len, "--devices '%s' with --jobs %d: not a GPU list, or more than %d workers",
                    a->devices ? a->devices : "0", a->jobs, WORKER_POOL_MAX), -2;
  if (!(p.slots = calloc((size_t)p.n, sizeof *p.slots))) return snprintf(err, err_len, "out of memory"), -2;
  for (i = 0; i < p.n; i++) p.slots[i].visible = visible[i];
  res->workers = p.n;
  while (rc == 0 && busy) {
    for (i = 0; rc == 0 && i < p.n && next < count; i++)
      if (!p.slots[i].busy) rc = slot_assign(&p, &p.slots[i], specs, count, &next, err, err_len);
    for (i = 0, busy = 0; i < p.n; i++) busy |= p.slots[i].busy;
    if (rc == 0 && busy) rc = pool_wait(&p);
  }
  for (i = 0; i < p.n; i++) /* EOF ends an idle worker; one still busy (the run stopped) is killed */
    if (p.slots[i].pid) {
      if (!p.slots[i].busy) shutdown(p.slots[i].fd, SHUT_WR);
      slot_reap(&p.slots[i], p.slots[i].busy);
    }
  free(p.slots);
  return rc;
}

void worker_pool_print(FILE *out, const worker_pool_result *res) {
  fprintf(out, "  workers: %d, %lld cases crashed their worker, %lld timed out\n", res->workers, res->crashes,
          res->timeouts);
}

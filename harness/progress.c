/*
** progress.c: see progress.h.
*/
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fileno, isatty, clock_gettime */
#endif
#include "harness/progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double progress_real_clock(void *ctx) {
  struct timespec ts;
  (void)ctx;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_begin(progress *p, FILE *out, int tty, long long total, progress_clock clock, void *clock_ctx) {
  memset(p, 0, sizeof *p);
  p->out = out;
  p->tty = tty;
  p->total = total;
  p->clock = clock ? clock : progress_real_clock;
  p->clock_ctx = clock_ctx;
  p->start = p->last = p->clock(p->clock_ctx);
  p->next_decile = 1;
}

void progress_begin_stderr(progress *p, long long total) {
  progress_begin(p, stderr, isatty(fileno(stderr)), total, NULL, NULL);
}

/* Seconds as "14s", "2m24s" or "1h02m". */
static void progress_duration(double s, char *buf, size_t len) {
  long long t = (long long)(s + 0.5);
  if (t < 60) snprintf(buf, len, "%llds", t);
  else if (t < 3600) snprintf(buf, len, "%lldm%02llds", t / 60, t % 60);
  else snprintf(buf, len, "%lldh%02lldm", t / 3600, t / 60 % 60);
}

void progress_format(const progress *p, double now, char *buf, size_t len) {
  double elapsed = now - p->start, rate = elapsed > 0 ? (double)p->done / elapsed : 0;
  char eta[32] = "?";
  int width = snprintf(NULL, 0, "%lld", p->total); /* so the line does not jitter */
  if (p->done >= p->total) snprintf(eta, sizeof eta, "0s");
  else if (rate > 0) progress_duration((double)(p->total - p->done) / rate, eta, sizeof eta);
  snprintf(buf, len, "[%*lld/%lld] %3lld%% %lld failed, %.1f cases/s, ETA %s", width, p->done, p->total,
           p->total > 0 ? p->done * 100 / p->total : 100, p->failed, rate, eta);
}

/* Draws the live line: back to column 0, the text, then erase the rest of the old line. */
static void progress_draw(progress *p, double now) {
  char line[160];
  progress_format(p, now, line, sizeof line);
  fprintf(p->out, "\r%s\033[K", line);
  fflush(p->out);
  p->shown = 1;
  p->last = now;
}

static void progress_log(progress *p, double now) {
  char line[160];
  progress_format(p, now, line, sizeof line);
  fprintf(p->out, "progress: %s\n", line);
  fflush(p->out);
  p->last = now;
}

void progress_case_done(progress *p, int failed) {
  double now;
  int decile_crossed;
  if (p->total <= 0) return;
  p->done++;
  p->failed += failed != 0;
  now = p->clock(p->clock_ctx);
  if (p->tty) {
    if (!p->shown || failed || p->done >= p->total || now - p->last >= PROGRESS_TTY_REDRAW_S) progress_draw(p, now);
    return;
  }
  decile_crossed = p->done * 10 >= p->next_decile * p->total; /* done/total >= next_decile/10 */
  if (decile_crossed || now - p->last >= PROGRESS_LOG_EVERY_S) {
    progress_log(p, now);
    p->next_decile = p->done * 10 / p->total + 1; /* several deciles crossed at once log once */
  }
}

void progress_pause(progress *p) {
  if (!p->shown) return;
  fputs("\r\033[K", p->out);
  fflush(p->out);
  p->shown = 0;
}

void progress_end(progress *p) { progress_pause(p); }

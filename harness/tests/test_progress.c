/*
** test_progress.c: the progress line (harness/progress.h) with a fake
** clock: the TTY line's exact bytes, redraw throttling and erasing, and the
** off-TTY cadence (every 10% or 30 s, whichever comes first).
*/
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#endif
#include "harness/progress.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double fake_now;
static double fake_clock(void *ctx) {
  (void)ctx;
  return fake_now;
}

static FILE *mem;
static char *mem_buf;
static size_t mem_len, mem_taken;

static void mem_open(void) {
  fake_now = 100.0;
  mem_taken = 0;
  mem = open_memstream(&mem_buf, &mem_len);
  cr_assert_not_null(mem);
}
static void mem_close(void) {
  fclose(mem);
  free(mem_buf);
}
/* What was written since the last call. */
static const char *mem_take(void) {
  static char copy[65536];
  fflush(mem);
  snprintf(copy, sizeof copy, "%s", mem_buf + mem_taken);
  mem_taken = mem_len;
  return copy;
}

TestSuite(progress, .init = mem_open, .fini = mem_close);

Test(progress, tty_line) {
  progress p;
  progress_begin(&p, mem, 1, 1823, fake_clock, NULL);
  fake_now += 10.0;
  for (int i = 0; i < 183; i++) progress_case_done(&p, i < 2); /* no time passes: only the first draws... */
  cr_expect_str_eq(mem_take(), "\r[   1/1823]   0% 1 failed, 0.1 cases/s, ETA 5h03m\033[K"
                               "\r[   2/1823]   0% 2 failed, 0.2 cases/s, ETA 2h31m\033[K",
                   "...and the failures, which redraw at once");
  fake_now += 0.5; /* past PROGRESS_TTY_REDRAW_S */
  progress_case_done(&p, 0);
  cr_expect_str_eq(mem_take(), "\r[ 184/1823]  10% 2 failed, 17.5 cases/s, ETA 1m34s\033[K");
  progress_pause(&p);
  cr_expect_str_eq(mem_take(), "\r\033[K", "pause erases the line");
  progress_pause(&p);
  cr_expect_str_eq(mem_take(), "", "a hidden line is not erased again");
  progress_case_done(&p, 0);
  cr_expect(strncmp(mem_take(), "\r[ 185/1823]", 12) == 0, "after a pause the next case redraws at once");
  progress_end(&p);
  cr_expect_str_eq(mem_take(), "\r\033[K", "the end erases the line");
}

Test(progress, tty_last_case_always_drawn) {
  progress p;
  progress_begin(&p, mem, 1, 2, fake_clock, NULL);
  fake_now += 1.0;
  progress_case_done(&p, 0);
  progress_case_done(&p, 0);
  cr_expect_str_eq(mem_take(), "\r[1/2]  50% 0 failed, 1.0 cases/s, ETA 1s\033[K"
                               "\r[2/2] 100% 0 failed, 2.0 cases/s, ETA 0s\033[K");
}

Test(progress, format) {
  progress p;
  char buf[160];
  progress_begin(&p, mem, 0, 10, fake_clock, NULL);
  progress_format(&p, fake_now, buf, sizeof buf);
  cr_expect_str_eq(buf, "[ 0/10]   0% 0 failed, 0.0 cases/s, ETA ?", "no rate yet: no ETA");
  p.done = 1;
  progress_format(&p, fake_now + 400.0, buf, sizeof buf);
  cr_expect_str_eq(buf, "[ 1/10]  10% 0 failed, 0.0 cases/s, ETA 1h00m");
}

/* The `done` of each logged line, comma-separated. */
static void logged_dones(const char *log, char *out, size_t len) {
  size_t used = 0;
  out[0] = '\0';
  for (const char *p = strstr(log, "progress: ["); p; p = strstr(p + 1, "progress: [")) {
    long long done = strtoll(p + strlen("progress: ["), NULL, 10);
    used += (size_t)snprintf(out + used, len - used, "%s%lld", used ? "," : "", done);
  }
}

Test(progress, log_every_tenth_when_fast) {
  progress p;
  char dones[512];
  const char *log;
  progress_begin(&p, mem, 0, 95, fake_clock, NULL);
  for (int i = 0; i < 95; i++) {
    fake_now += 0.1;
    progress_case_done(&p, 0);
  }
  log = mem_take();
  logged_dones(log, dones, sizeof dones);
  cr_expect_str_eq(dones, "10,19,29,38,48,57,67,76,86,95", "each 10%%, rounded up: %s", log);
  cr_expect(strstr(log, "\r") == NULL && strstr(log, "\033") == NULL, "no terminal codes off a TTY");
  cr_expect_str_eq(strrchr(log, '\n') + 1, "", "whole lines");
}

Test(progress, log_every_30s_when_slow) {
  progress p;
  char dones[512];
  progress_begin(&p, mem, 0, 1000, fake_clock, NULL);
  for (int i = 0; i < 250; i++) {
    fake_now += 7.0; /* 30 s pass every 5th case (35 s), 10% every 100 cases */
    progress_case_done(&p, 0);
  }
  logged_dones(mem_take(), dones, sizeof dones);
  cr_expect_str_eq(dones, "5,10,15,20,25,30,35,40,45,50,55,60,65,70,75,80,85,90,95,100,105,110,115,120,125,"
                          "130,135,140,145,150,155,160,165,170,175,180,185,190,195,200,205,210,215,220,225,"
                          "230,235,240,245,250");
}

Test(progress, log_whichever_comes_first) {
  progress p;
  char dones[512];
  progress_begin(&p, mem, 0, 100, fake_clock, NULL);
  for (int i = 0; i < 30; i++) {
    fake_now += i < 10 ? 0.5 : 4.0; /* fast to 10%, then 30 s pass after 8 cases (32 s) */
    progress_case_done(&p, 0);
  }
  logged_dones(mem_take(), dones, sizeof dones);
  cr_expect_str_eq(dones, "10,18,20,28,30");
}

Test(progress, nothing_for_an_empty_run) {
  progress p;
  progress_begin(&p, mem, 1, 0, fake_clock, NULL);
  progress_case_done(&p, 1);
  progress_end(&p);
  cr_expect_str_eq(mem_take(), "");
}

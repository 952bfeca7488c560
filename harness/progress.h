/*
** progress.h: the progress of a suite run, on stderr (stdout keeps the
** FAIL lines and the summary, which tools and tests read).
**
** On a TTY: one live line, redrawn in place with a carriage return at most
** every PROGRESS_TTY_REDRAW_S (and whenever a case fails or the last one
** finishes), erased by progress_pause before other output and by
** progress_end:
**   [ 183/1823] 10% 2 failed, 11.4 cases/s, ETA 2m24s
** Off a TTY (CI logs): the same text as a line of its own, prefixed
** "progress: ", whenever a finished case crosses the next 10% of the total
** or PROGRESS_LOG_EVERY_S have passed since the last line, whichever comes
** first.  Both are decided as cases finish: a single case running longer
** than 30 s prints nothing until it ends (no timer thread).
** The rate is the mean since progress_begin; ETA = cases left / rate.
*/
#ifndef PROGRESS_H
#define PROGRESS_H

#include <stdio.h>

#define PROGRESS_TTY_REDRAW_S 0.1
#define PROGRESS_LOG_EVERY_S 30.0

/* Seconds on a monotonic clock; injectable so that tests can fake time. */
typedef double (*progress_clock)(void *ctx);

typedef struct progress {
  FILE *out;
  int tty, shown; /* shown: the live line is on screen */
  long long total, done, failed, next_decile;
  double start, last; /* clock readings: begin, last line drawn or logged */
  progress_clock clock;
  void *clock_ctx;
} progress;

/*
** Starts tracking total cases, writing to out as a TTY (tty != 0) or a log.
** clock NULL is CLOCK_MONOTONIC.  total <= 0 prints nothing ever.
*/
void progress_begin(progress *p, FILE *out, int tty, long long total, progress_clock clock, void *clock_ctx);

/* progress_begin on stderr, a TTY when isatty says so, the real clock. */
void progress_begin_stderr(progress *p, long long total);

/* One more case finished; failed when any of its rows failed. */
void progress_case_done(progress *p, int failed);

/* Erases the live line (if shown) so that other output starts a clean line. */
void progress_pause(progress *p);

/* The run is over: erases the live line. */
void progress_end(progress *p);

/* The progress text at time now, without prefix or newline (for tests too). */
void progress_format(const progress *p, double now, char *buf, size_t len);

#endif

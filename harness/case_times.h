/*
** case_times.h: a suite's committed case times, <corpus>/<suite>.times,
** the order a run's workers take the cases in that its database has not
** timed (case_order.h): all of them in a fresh one.  A fresh database is
** the common case in CI, and there the suite's own order leaves the heavy
** cases last (the gate's csa4.state cases sit at 83% of it: 37-104 s on an
** H200 against 25 s heaviest first; docs/SPEED.md, twentieth round).
**
** The file is text: '#' comment lines and blank lines, then one case a
** line, "<case id> <milliseconds>", the milliseconds its rows' oracle and
** device times summed in the run it was written from (`bitgate db times`).
** Only the order of the figures matters, so times from another host serve.
*/
#ifndef HARNESS_CASE_TIMES_H
#define HARNESS_CASE_TIMES_H

#include <stddef.h>
#include <stdio.h>

/* path = dir/suite.times */
void case_times_path(const char *dir, const char *suite, char *path, size_t len);

/*
** Calls each(ctx, case_id, ms) for every case line of path, in file order.
** 0 read; 1 there is no such file (each not called); -1 the file cannot be
** read or a line is not "<case id> <ms>" (err names the file and line).
*/
int case_times_read(const char *path, void (*each)(void *ctx, const char *case_id, double ms), void *ctx,
                    char *err, size_t err_len);

typedef struct case_time {
  const char *case_id;
  double ms;
} case_time;

/*
** Writes a times file to f: the header lines (each prefixed with "# "), then
** times[0..n) heaviest first (sorted in place), ties by id.  0, or -1 when
** f fails.
*/
int case_times_write(FILE *f, const char *header, case_time *times, int n);

#endif /* HARNESS_CASE_TIMES_H */

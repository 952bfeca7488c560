/*
** report_targets.h: issue 8's targets for the lines of `bitgate bench`, and
** each measured line's verdict against its target: reached, or how far off
** and why.  The bench prints the verdicts under its table, so that a run
** says where the kernels stand without docs/SPEED.md at hand.  Plain data
** and text, no device: the verdicts are unit-tested on made-up figures.
**
** The same verdicts come from a results database's recorded figures
** (report_targets_write, `bitgate bench --targets`).
**
** A target is either a ceiling on the fast variant's median (the ratio-4
** scoring + top-k, the sink attention) or a floor on the speedup of fast
** over reference (the compressors, IndexShare), which needs both variants'
** figures of the same call.
*/
#ifndef REPORT_TARGETS_H
#define REPORT_TARGETS_H

#include <stddef.h>
#include <stdio.h>

typedef enum report_target_kind {
  REPORT_TARGET_MAX_US,      /* the fast median at most `value` us */
  REPORT_TARGET_MIN_SPEEDUP, /* reference / fast at least `value` */
} report_target_kind;

typedef struct report_target {
  const char *kernel;     /* a bench line's kernel column, exactly */
  const char *shape_glob; /* fnmatch pattern over its shape column */
  report_target_kind kind;
  double value;
  const char *why_short; /* what holds it back, when it is not reached */
} report_target;

/*
** Issue 8's targets for the oracle's speedup on `cores` cores over one
** (>= 1.8x on 2, >= 10x on 16): the factor, or 0 for a count it sets none for.
*/
double report_target_oracle_speedup(int cores);

/*
** That target's verdict into buf (one line, no newline), judged on one
** `bench --oracle-threads` call: first, the count the speedups are over
** (the target is over 1); online, the processors online; shapes, how many
** were timed; lowest and lowest_shape, the lowest best-time speedup on
** `cores` threads and its shape; reached, the shapes at or over the target.
** The line: the target, the lowest figure and its shape, then "reached on
** all N shapes" or how far short and on how many it was reached ("reached"
** or how far short, for one shape), or "not judged" and why.  1, or 0 (buf empty) when the issue sets no target for
** the count.
*/
int report_target_oracle_verdict(int cores, int first, long online, int shapes, double lowest,
                                 const char *lowest_shape, int reached, char *buf, size_t len);

/* The targets, in the bench's line order: count, and target i (0 <= i < count). */
int report_target_count(void);
const report_target *report_target_at(int i);

/* The target that applies to a line, or NULL for a line the issue sets none for. */
const report_target *report_target_find(const char *kernel, const char *shape);

/*
** The verdict on one line in two parts: goal ("<= 20 us", ">= 50x") and
** status (the figure, then "reached", how far off, or "not measured" with
** what is missing); *why as for report_target_verdict.  1 when a target
** applies, 0 (both empty) when none does.
*/
int report_target_judge(const char *kernel, const char *shape, int have_fast, double fast_us, int have_ref,
                        double ref_us, char *goal, size_t goal_len, char *status, size_t status_len,
                        const char **why);

/*
** The verdict on one line into buf (one line of text, no newline): the
** target, the figure it is judged on, and "reached", or how far off (us
** over a ceiling; for a speedup, the factor short and the fast time it
** needs), or "not measured" with what is missing.  *why: the target's
** why_short when it is missed, else NULL.  fast_us and ref_us are medians,
** have_* whether they were measured.  1 when a target applies, 0 (buf
** empty) when none does.
*/
int report_target_verdict(const char *kernel, const char *shape, int have_fast, double fast_us, int have_ref,
                          double ref_us, char *buf, size_t len, const char **why);

/*
** The verdicts of a bench call, printed after its table
** (report_target_log_print); a missed target's line ends " [k]", reason k
** of why[], each reason printed once.
*/
#define REPORT_TARGET_LOG_MAX 64
typedef struct report_target_log {
  char line[REPORT_TARGET_LOG_MAX][512];
  const char *why[REPORT_TARGET_LOG_MAX];
  int n, dropped, n_why;
  char floors[256]; /* the launch floor lines' figures, "shape us; ...", for under the reasons */
} report_target_log;

/*
** The kernel column of the bench's launch floor lines (harness/bench.h,
** bench_launch_floor_lines): graphs of kernels that do nothing, timed on the
** GPU at hand.  They have no target; the log keeps their figures and prints
** them under the reasons, whose figures are one card's.
*/
#define REPORT_LAUNCH_FLOOR_KERNEL "launch floor"

/* Adds the line's verdict to log when a target applies (a launch floor line's figure to log->floors). */
void report_target_log_add(report_target_log *log, const char *kernel, const char *shape, int have_fast,
                          double fast_us, int have_ref, double ref_us);

/*
** Prints "targets (issue 8): ..." and the verdicts to out, or nothing for an
** empty log; after the reasons, when a target was missed and launch floor
** lines were added, this GPU's launch floors.
*/
void report_target_log_print(const report_target_log *log, FILE *out);

/*
** `bitgate bench --targets`: the verdicts of one recorded bench run of the
** database at db_path, with no GPU.  run_spec: a run id, or "latest" (or
** NULL) for the highest run that recorded bench figures.  A line's fast and
** reference figures are those of that run.  0 (also when the run has no
** figure with a target: a line says so), or -1 with one line in err (the
** database missing or not bitgate's, the run naming no bench run, a query
** failing).  Opens the database read-only and never creates it.
*/
int report_targets_write(const char *db_path, const char *run_spec, FILE *out, char *err, size_t err_len);

#endif

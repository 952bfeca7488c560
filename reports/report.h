/*
** report.h: bitgate's reports, built from a results database alone.
**
** reports/ depends on nothing of the harness but the schema (harness/store.h
** and harness/store_schema.c are the contract): it opens the SQLite file
** read-only, checks that it is a bitgate database, reads one run (and
** optionally a baseline run) with plain SQL into the model below, and renders
** that model as HTML, JUnit XML, Markdown or JSON.
**
** The unit of a report is the *entry*: one case in one lane of one run.  The
** store keeps one row per step; a case x lane fails when any of its steps
** fails, and its first failing step (the lowest) gives the first mismatch.
**
** Errors: report_load returns a report_load_rc and writes one line to err.
** The writers return 0, or -1 when the output stream reports an error.
*/
#ifndef REPORT_H
#define REPORT_H

#include <stddef.h>
#include <stdio.h>

/* How an entry counts in the summaries. */
typedef enum report_outcome {
  REPORT_OUTCOME_PASS,
  REPORT_OUTCOME_FAIL,    /* a status that fails a run (store.h, store_run_counts) */
  REPORT_OUTCOME_SKIPPED, /* unavailable, skipped or waived: neither pass nor fail */
  REPORT_OUTCOME_COUNT
} report_outcome;

/* One case x lane.  Strings are never NULL ("" when the store holds NULL). */
typedef struct report_entry {
  const char *case_id, *op, *family, *lane;
  const char *status;   /* the deciding status: the first failing step's, else the first step's */
  report_outcome outcome;
  int nondeterministic; /* any step recorded 'nondeterministic' */
  int steps;
  double seconds;       /* oracle_ms + device_ms over all steps, in seconds */
  /* The first failing step; meaningful when outcome == REPORT_OUTCOME_FAIL. */
  int step;
  int has_mismatch;     /* tensor..ulp below are set */
  const char *tensor, *coords, *expected_hex, *actual_hex;
  long long flat_offset, mismatch_count;
  long long ulp;        /* < 0: not applicable */
  const char *stage;    /* the first diverging stage (results.stage); "" unknown */
  const char *message;
  const char *repro;    /* the message's "repro: ..." tail, else built from id and lane */
} report_entry;

/* Counts of one summary row; keys that do not apply are "". */
typedef struct report_tally {
  const char *op, *family, *lane;
  long long count[REPORT_OUTCOME_COUNT];
} report_tally;

/* ULP-distance histogram of one operator: bucket 0 holds ulp 0, bucket b >= 1 holds [2^(b-1), 2^b). */
#define REPORT_ULP_BUCKETS 65
typedef struct report_histogram {
  const char *op;
  long long bucket[REPORT_ULP_BUCKETS];
  long long total;
} report_histogram;

/* Failing entries by first diverging stage ("" = not localised). */
typedef struct report_stage_count {
  const char *stage;
  long long count;
} report_stage_count;

/* One change between the baseline and the reported run, by case x lane. */
typedef enum report_change {
  REPORT_CHANGE_NEWLY_FAILING,
  REPORT_CHANGE_NEWLY_PASSING,
  REPORT_CHANGE_NEWLY_NONDETERMINISTIC,
  REPORT_CHANGE_COUNT
} report_change;

typedef struct report_regression {
  report_change change;
  const report_entry *entry;   /* in the reported run */
  const char *baseline_status; /* "absent" when the baseline lacks the case x lane */
} report_regression;

/* One provenance field of the runs table, in schema order. */
typedef struct report_field {
  const char *name, *value; /* value "" when NULL */
} report_field;

#define REPORT_FIELDS_MAX 24

/*
** One line of a bench run (table bench, schema 4 on): a kernel at a shape,
** both variants' figures, its verdict against issue 8's targets
** (report_targets.h) and the fast median's history up to this run.
*/
#define REPORT_BENCH_HISTORY 10
typedef struct report_bench_line {
  const char *kernel, *shape, *timing; /* timing 'sync' for rows before schema 5 */
  int have_fast, have_ref;
  double fast_us, fast_min_us, ref_us, ref_min_us; /* medians and minima */
  const char *goal, *status, *why; /* report_target_judge's; "" when no target applies, why "" unless missed */
  double history[REPORT_BENCH_HISTORY]; /* fast medians of this line and timing, oldest first, this run's last */
  int history_count;
} report_bench_line;

typedef struct report_pool report_pool;

typedef struct report {
  const char *db_path;
  long long run_id, baseline_id; /* baseline_id 0: none */
  const char *run_status;        /* runs.status: running, passed, failed, error */
  report_field fields[REPORT_FIELDS_MAX];
  int field_count;
  report_entry *entries;         /* ordered by op, family, case id, lane */
  int entry_count;
  long long totals[REPORT_OUTCOME_COUNT];
  double seconds;
  report_tally *by_op, *by_op_lane, *by_group; /* group = op x family x lane */
  int by_op_count, by_op_lane_count, by_group_count;
  report_histogram *histograms;  /* one per operator with a known ULP distance */
  int histogram_count;
  report_stage_count *stages;    /* pipeline order, then others, then "" */
  int stage_count;
  report_regression *regressions; /* grouped by change, in entry order */
  int regression_count;
  report_bench_line *bench;       /* a bench run's lines in the bench's order; none for other runs */
  int bench_count;
  report_pool *pool;             /* owns every string and array above */
} report;

typedef enum report_load_rc {
  REPORT_LOAD_OK = 0,
  REPORT_LOAD_BAD_ARG, /* the run or baseline names no run of this database */
  REPORT_LOAD_BAD_DB   /* missing, unreadable, not bitgate's, newer schema, or no runs */
} report_load_rc;

/*
** Opens path read-only as a bitgate results database: a regular file whose
** application_id is bitgate's and whose schema this build reads.  *db is
** the connection (close it with sqlite3_close, also after a failure, when
** it is not NULL) and *schema its PRAGMA user_version.  REPORT_LOAD_OK, or
** REPORT_LOAD_BAD_DB with one line in err naming the path and the fault.
** Never creates the file.
*/
struct sqlite3;
report_load_rc report_db_open(const char *path, struct sqlite3 **db, int *schema, char *err, size_t err_len);

/*
** report_db_open for the readers of table bench (schema 4 on): 1 with *db
** open and *schema set; 0 when the database predates the table (a line
** says so on out); -1 with err.  Unless 1, *db is closed and NULL.
*/
int report_bench_db_open(const char *path, struct sqlite3 **db, int *schema, FILE *out, char *err, size_t err_len);

/* Formats one line into err; returns -1, the readers' failure. */
__attribute__((format(printf, 3, 4))) int report_fail(char *err, size_t err_len, const char *fmt, ...);

/* Column i of a stepped row as text, or "-" when NULL or empty. */
struct sqlite3_stmt;
const char *report_text_or_dash(struct sqlite3_stmt *st, int i);

/*
** Loads a run.  run_spec: a run id, or "latest" (or NULL) for the highest id.
** baseline_spec: NULL for none, a run id, or "previous" for the highest id
** below the reported run.  On success *out is set; free it with report_free.
*/
report_load_rc report_load(const char *db_path, const char *run_spec, const char *baseline_spec,
                           report **out, char *err, size_t err_len);
void report_free(report *r);

/*
** Run run_id's bench lines from db (schema `schema`) into *lines (pool-owned)
** and *n: 0, or a SQLite error code.  A schema before 4 has none.
*/
int report_bench_read(struct sqlite3 *db, int schema, long long run_id, report_pool *p, report_bench_line **lines,
                      int *n);

/* A provenance value by field name ("" when absent). */
const char *report_field_value(const report *r, const char *name);

/* Bucket label of a ULP histogram ("0", "1", "2-3", "4-7", "2^10-2^11-1" ...). */
void report_ulp_bucket_label(int bucket, char *buf, size_t len);

/* Human names of outcomes and changes. */
const char *report_outcome_name(report_outcome o);
const char *report_change_name(report_change c);
const char *report_change_title(report_change c);

/* The writers.  md_max_failures bounds the failing cases listed in Markdown. */
int report_html_write(const report *r, FILE *out);
int report_junit_write(const report *r, FILE *out);
int report_md_write(const report *r, int md_max_failures, FILE *out);
int report_json_write(const report *r, FILE *out);

#endif

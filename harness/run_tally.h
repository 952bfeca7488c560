/*
** run_tally.h: a run's counts of cases and of result rows per lane, as the
** summary prints them.  The row counts have a column per lane and then one
** per lane of the reference kernels (--variant both's LANE@ref rows): column
** l + LANE_COUNT is lane l's @ref, so a failing reference row is counted
** apart from the fast one it sits beside.
*/
#ifndef RUN_TALLY_H
#define RUN_TALLY_H

#include "harness/case_runner.h"

#include <stddef.h>

#define TALLY_COLUMNS (2 * LANE_COUNT)

typedef struct suite_run_tally {
  long long cases, failed_cases, rows[TALLY_COLUMNS], failed_rows[TALLY_COLUMNS];
  long long waived_cases, waived_rows[TALLY_COLUMNS]; /* waived: neither passed nor failed */
} suite_run_tally;

/* Adds one finished case's report to t; rows of no known lane are not counted. */
void suite_run_tally_add(suite_run_tally *t, const case_report *r);

/* Column c's lane name ("eager", "eager@ref") into buf; returns buf. */
const char *run_tally_column_name(int c, char *buf, size_t size);

#endif

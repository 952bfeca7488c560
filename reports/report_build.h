/*
** report_build.h: internals shared by the files that build a report model
** (report_load.c, report_pool.c, report_summary.c, report_regress.c).  The
** writers only read report.h.
*/
#ifndef REPORT_BUILD_H
#define REPORT_BUILD_H

#include "reports/report.h"

/*
** An arena: the model is built once and freed at once, so every string and
** array is carved from it instead of being tracked one by one.  Allocation
** failure aborts with the file and line (an internal invariant: reports are
** small next to the memory of any machine that runs them).
*/
report_pool *report_pool_new(void);
void report_pool_free(report_pool *p);
void *report_pool_alloc(report_pool *p, size_t n); /* zeroed */
const char *report_pool_strdup(report_pool *p, const char *s); /* NULL -> "" */

/* Summary tallies, ULP histograms and the stage chart, from r->entries. */
void report_summarise(report *r);

/* r->regressions from the baseline's entries (same order as r->entries). */
void report_regressions_build(report *r, const report_entry *base, int base_count);

/* True for the statuses that fail a run (store.h, store_run_counts). */
int report_status_fails(const char *status);

#endif

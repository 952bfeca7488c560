/*
** report_compare.h: builds side by side from `bitgate bench`'s recorded
** figures, as text: `bitgate bench --compare`.
**
** An A/B round alternates two builds' bench calls in one sitting (one
** binary over two kernel trees, or two binaries) into one database, so that
** a machine's drift falls on both.  This report groups that database's
** figures by build, a build being one (git revision, kernel hash): the
** kernel hash tells kernel trees and planted builds apart, the revision
** host-code changes.  Builds are lettered A, B, ... in the order of their
** first figure and listed with their runs and where their kernels came
** from (the run's command line names a kernel tree or a plant).
**
** For each line, variant and timing (in the bench's line order), each
** build's figures: the median of its medians, their range and count, and
** for B, C, ... the ratio to A's and a word on the ranges: "apart" when the
** two builds' ranges do not meet, so the runs taken separate them, and
** "overlap" when they do, so more alternated runs are needed to tell.
*/
#ifndef REPORT_COMPARE_H
#define REPORT_COMPARE_H

#include "reports/report_trend.h"

#include <stddef.h>
#include <stdio.h>

/*
** Writes the comparison of the database at db_path to out, the figures
** narrowed as by --trend (o's filter, variant, timing; its last is not
** used).  0 (also when no figure matches: a line says so), or -1 with one
** line in err (the database missing, unreadable or not bitgate's, a query
** failing, out of memory).  Opens the database read-only.
*/
int report_compare_write(const char *db_path, const report_trend_opts *o, FILE *out, char *err, size_t err_len);

#endif /* REPORT_COMPARE_H */

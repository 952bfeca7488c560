/*
** report_trend.h: the trend of `bitgate bench`'s recorded figures (table
** bench, schema 4 on) across the runs of one results database, as text:
** `bitgate bench --trend`.
**
** A series is one (kernel, shape, variant, timing): the figures of one
** bench line and variant, timed one way, in the order they were recorded.
** Series come in the order of their first figure (the bench's own line
** order); each shows its last `last` figures with the run, when it was
** recorded, the git revision and kernel hash of the build that measured it
** (the hash tells builds of one revision apart), the median and minimum,
** and the change of the median against the figure before it and against
** the first one shown.  Rows recorded before schema 5 read timing 'sync'.
*/
#ifndef REPORT_TREND_H
#define REPORT_TREND_H

#include <stddef.h>
#include <stdio.h>

typedef struct report_trend_opts {
  const char *filter;  /* fnmatch glob over "KERNEL, SHAPE" ("csa4 sink attention, pos 65536, B=1"); NULL: all */
  const char *variant; /* "fast", "reference"; NULL: both */
  const char *timing;  /* "held", "submit", "sync"; NULL: every timing */
  int last;            /* figures a series shows, its latest (>= 1) */
} report_trend_opts;

/*
** Writes the trend of the database at db_path to out.  0 (also when no
** figure matches: a line says so), or -1 with one line in err (the
** database missing, unreadable or not bitgate's, or a query failing).
** Opens the database read-only and never creates it.
*/
int report_trend_write(const char *db_path, const report_trend_opts *o, FILE *out, char *err, size_t err_len);

#endif /* REPORT_TREND_H */

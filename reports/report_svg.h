/*
** report_svg.h: inline SVG charts for the HTML report.  No script, no
** external font or stylesheet: the page must render the same offline and in
** a CI artifact viewer.
*/
#ifndef REPORT_SVG_H
#define REPORT_SVG_H

#include <stdio.h>

typedef struct report_bar {
  const char *label;
  long long value;
} report_bar;

/*
** A horizontal bar chart, one row per bar, labels on the left and the value
** after each bar; bars scale to the largest value.  title becomes the
** chart's accessible name (<title>); labels are escaped.
*/
void report_svg_bars(FILE *out, const char *title, const report_bar *bars, int n);

/*
** A small line of values[0..n) in order (a bench line's medians, oldest
** first), scaled between their minimum and maximum, the last one marked:
** the trend at a glance, its numbers in title (the accessible name).
*/
void report_svg_sparkline(FILE *out, const char *title, const double *values, int n);

/* The least and greatest of values[0..n), n >= 1: the span a sparkline is drawn over. */
void report_values_span(const double *values, int n, double *lo, double *hi);

#endif

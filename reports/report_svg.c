/*
** report_svg.c: the one chart shape the report needs (report_svg.h).
**
** Geometry is fixed in user units and the SVG scales through its viewBox,
** so a chart stays legible at any page width.
*/
#include "reports/report_svg.h"

#include "reports/report_escape.h"

enum {
  SVG_WIDTH = 640,
  SVG_LABEL_W = 230, /* fits "SparseSinkSoftmaxAttention" at 12px */
  SVG_BAR_MAX = 330,
  SVG_ROW_H = 22,
  SVG_PAD = 8,
  SPARK_W = 120,
  SPARK_H = 24,
  SPARK_PAD = 3
};

void report_svg_bars(FILE *out, const char *title, const report_bar *bars, int n) {
  long long max = 1;
  int height = 2 * SVG_PAD + (n > 0 ? n : 1) * SVG_ROW_H;
  for (int i = 0; i < n; i++)
    if (bars[i].value > max) max = bars[i].value;
  fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" viewBox=\"0 0 %d %d\" "
               "width=\"%d\" height=\"%d\"><title>", SVG_WIDTH, height, SVG_WIDTH, height);
  report_put_xml(out, title);
  fputs("</title>\n", out);
  if (n == 0)
    fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"none\">nothing to chart</text>\n", SVG_PAD, SVG_PAD + 15);
  for (int i = 0; i < n; i++) {
    int y = SVG_PAD + i * SVG_ROW_H;
    /* A nonzero value keeps at least one unit of bar, so it never looks like zero. */
    long long w = bars[i].value > 0 ? 1 + (bars[i].value * (SVG_BAR_MAX - 1)) / max : 0;
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"label\">", SVG_LABEL_W - 6, y + 15);
    report_put_xml(out, bars[i].label);
    fprintf(out, "</text><rect x=\"%d\" y=\"%d\" width=\"%lld\" height=\"%d\" class=\"bar\"/>"
                 "<text x=\"%lld\" y=\"%d\" class=\"value\">%lld</text>\n",
            SVG_LABEL_W, y + 3, w, SVG_ROW_H - 6, SVG_LABEL_W + w + 6, y + 15, bars[i].value);
  }
  fputs("</svg>\n", out);
}

void report_values_span(const double *values, int n, double *lo, double *hi) {
  int i;
  *lo = *hi = values[0];
  for (i = 1; i < n; i++) {
    if (values[i] < *lo) *lo = values[i];
    if (values[i] > *hi) *hi = values[i];
  }
}

void report_svg_sparkline(FILE *out, const char *title, const double *values, int n) {
  double lo = 0, hi = 0;
  int i;
  if (n > 0) report_values_span(values, n, &lo, &hi);
  fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"spark\" role=\"img\" viewBox=\"0 0 %d %d\" "
               "width=\"%d\" height=\"%d\"><title>", SPARK_W, SPARK_H, SPARK_W, SPARK_H);
  report_put_xml(out, title);
  fputs("</title>", out);
  if (n > 1) fputs("<polyline points=\"", out);
  for (i = 0; i < n; i++) {
    /* a flat series sits mid-height; otherwise the maximum (slowest) is at the top */
    const double x = SPARK_PAD + (n > 1 ? (double)i * (SPARK_W - 2 * SPARK_PAD) / (n - 1) : (SPARK_W - 2 * SPARK_PAD));
    const double y = hi > lo ? SPARK_PAD + (hi - values[i]) * (SPARK_H - 2 * SPARK_PAD) / (hi - lo) : SPARK_H / 2.0;
    if (n > 1) fprintf(out, "%s%.1f,%.1f", i ? " " : "", x, y);
    if (i == n - 1) {
      if (n > 1) fputs("\"/>", out);
      fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>", x, y);
    }
  }
  fputs("</svg>", out);
}

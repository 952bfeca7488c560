/*
** report_html.c: the HTML report, one self-contained file (issue 7 item 1).
**
** No script, no external stylesheet, font or image: CSS and SVG are inline,
** so the page renders the same from a CI artifact, an e-mail attachment or
** a disconnected laptop.  Every string from the database goes through
** report_put_xml.  Element ids (summary, regressions, failing-cases,
** charts, provenance) are stable: the Chromium test looks for them.
*/
#include "reports/report.h"

#include "reports/report_escape.h"
#include "reports/report_svg.h"

#include <string.h>

static const char html_css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2329;background:#fff}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}"
    "h3{font-size:15px;margin:16px 0 6px}"
    "table{border-collapse:collapse;margin:4px 0 12px}th,td{border:1px solid #d0d7de;padding:3px 8px;"
    "text-align:left;vertical-align:top}th{background:#f3f5f7}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "code,.mono{font-family:ui-monospace,monospace;font-size:12px}td.fail,.badge.failed,.badge.error{color:#b3261e}"
    "td.pass,.badge.passed{color:#1a7f37}td.skipped{color:#6e7781}"
    ".badge{font-size:14px;border:1px solid currentColor;border-radius:4px;padding:1px 6px;margin-left:8px}"
    "nav a{margin-right:12px}.chart .bar{fill:#cf5c36}.stages .bar{fill:#4a6fa5}"
    ".chart text{font:12px system-ui,sans-serif;fill:#1d2329}.muted{color:#6e7781}"
    "details summary{cursor:pointer;color:#4a6fa5}.scroll{overflow-x:auto}td code{overflow-wrap:anywhere}"
    "td.mono{white-space:nowrap}.spark polyline{fill:none;stroke:#4a6fa5;stroke-width:1.5}"
    ".spark circle{fill:#cf5c36}td.missed{color:#b3261e}td.reached{color:#1a7f37}";

static void put_th_row(FILE *out, const char *const *heads, int n) {
  fputs("<thead><tr>", out);
  for (int i = 0; i < n; i++) fprintf(out, "<th>%s</th>", heads[i]);
  fputs("</tr></thead>\n", out);
}

static void put_td(FILE *out, const char *cls, const char *text) {
  fprintf(out, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
  report_put_xml(out, *text ? text : "-");
  fputs("</td>", out);
}

static void put_td_n(FILE *out, long long v) { fprintf(out, "<td class=\"n\">%lld</td>", v); }

/* A summary table; family and lane columns only when the tallies have them. */
static void tally_table(FILE *out, const char *title, const report_tally *t, int n, int family, int lane) {
  const char *heads[] = {"Operator", "Family", "Lane", "Pass", "Fail", "Skipped"};
  fprintf(out, "<h3>%s</h3>\n<table class=\"tally\"><thead><tr><th>%s</th>", title, heads[0]);
  if (family) fprintf(out, "<th>%s</th>", heads[1]);
  if (lane) fprintf(out, "<th>%s</th>", heads[2]);
  fprintf(out, "<th>%s</th><th>%s</th><th>%s</th></tr></thead>\n<tbody>\n", heads[3], heads[4], heads[5]);
  for (int i = 0; i < n; i++) {
    fputs("<tr>", out);
    put_td(out, NULL, t[i].op);
    if (family) put_td(out, NULL, t[i].family);
    if (lane) put_td(out, NULL, t[i].lane);
    for (int o = 0; o < REPORT_OUTCOME_COUNT; o++) put_td_n(out, t[i].count[o]);
    fputs("</tr>\n", out);
  }
  fputs("</tbody></table>\n", out);
}

static void put_case_cells(FILE *out, const report_entry *e) {
  fputs("<td class=\"mono\">", out);
  report_put_xml(out, e->case_id);
  fputs("</td>", out);
  put_td(out, NULL, e->family); /* the family names its operator (is.*, csa*); the summary has both */
  put_td(out, NULL, e->lane);
}

static void put_repro_cell(FILE *out, const report_entry *e) {
  fputs("<td><code>", out);
  report_put_xml(out, e->repro);
  fputs("</code>", out);
  if (*e->message) {
    fputs("<details><summary>message</summary><span class=\"mono\">", out);
    report_put_xml(out, e->message);
    fputs("</span></details>", out);
  }
  fputs("</td>", out);
}

/* Where the first mismatch is and both values, in one cell so the table fits a screen. */
static void put_mismatch_cell(FILE *out, const report_entry *e) {
  if (!e->has_mismatch) {
    fputs("<td>-</td>", out);
    return;
  }
  fputs("<td class=\"mono\">", out);
  report_put_xml(out, e->tensor);
  report_put_xml(out, e->coords);
  fprintf(out, " @%lld<br>expected ", e->flat_offset);
  report_put_xml(out, e->expected_hex);
  fputs("<br>actual&nbsp;&nbsp; ", out);
  report_put_xml(out, e->actual_hex);
  fputs("</td>", out);
}

static void failures_section(FILE *out, const report *r) {
  static const char *const heads[] = {"Case", "Family", "Lane", "Status", "Step", "First diverging stage",
                                      "First mismatch", "ULP", "Mismatches", "Repro"};
  long long n = r->totals[REPORT_OUTCOME_FAIL];
  fprintf(out, "<section id=\"failures\"><h2>Failing cases (%lld)</h2>\n", n);
  if (n == 0) {
    fputs("<p id=\"no-failures\">No case failed in any lane.</p></section>\n", out);
    return;
  }
  fputs("<div class=\"scroll\"><table id=\"failing-cases\">", out);
  put_th_row(out, heads, (int)(sizeof heads / sizeof heads[0]));
  fputs("<tbody>\n", out);
  for (int i = 0; i < r->entry_count; i++) {
    const report_entry *e = &r->entries[i];
    char ulp[32] = "";
    if (e->outcome != REPORT_OUTCOME_FAIL) continue;
    if (e->has_mismatch && e->ulp >= 0) snprintf(ulp, sizeof ulp, "%lld", e->ulp);
    fputs("<tr>", out);
    put_case_cells(out, e);
    put_td(out, "fail", e->status);
    fprintf(out, "<td class=\"n\">%d</td>", e->step);
    put_td(out, NULL, e->stage);
    put_mismatch_cell(out, e);
    put_td(out, "n", ulp);
    if (e->has_mismatch) put_td_n(out, e->mismatch_count);
    else put_td(out, "n", "");
    put_repro_cell(out, e);
    fputs("</tr>\n", out);
  }
  fputs("</tbody></table></div></section>\n", out);
}

static void regressions_section(FILE *out, const report *r) {
  static const char *const heads[] = {"Case", "Family", "Lane", "Baseline", "Now", "Repro"};
  if (!r->baseline_id) return;
  fprintf(out, "<section id=\"regressions\"><h2>Regressions against run %lld</h2>\n", r->baseline_id);
  for (int c = 0; c < REPORT_CHANGE_COUNT; c++) {
    int shown = 0;
    fprintf(out, "<h3 id=\"%s\">%s</h3>\n", report_change_name((report_change)c), report_change_title((report_change)c));
    for (int i = 0; i < r->regression_count; i++) {
      const report_regression *g = &r->regressions[i];
      if (g->change != (report_change)c) continue;
      if (!shown++) {
        fprintf(out, "<div class=\"scroll\"><table class=\"%s\">", report_change_name((report_change)c));
        put_th_row(out, heads, 6);
        fputs("<tbody>\n", out);
      }
      fputs("<tr>", out);
      put_case_cells(out, g->entry);
      put_td(out, NULL, g->baseline_status);
      put_td(out, report_outcome_name(g->entry->outcome), g->entry->status);
      put_repro_cell(out, g->entry);
      fputs("</tr>\n", out);
    }
    fputs(shown ? "</tbody></table></div>\n" : "<p class=\"muted\">none</p>\n", out);
  }
  fputs("</section>\n", out);
}

static void charts_section(FILE *out, const report *r) {
  char labels[REPORT_ULP_BUCKETS][24], title[256];
  report_bar bars[REPORT_ULP_BUCKETS > 64 ? REPORT_ULP_BUCKETS : 64];
  fputs("<section id=\"charts\"><h2>Charts</h2>\n<h3>ULP distance of the first mismatch (log2 buckets)</h3>\n"
        "<p class=\"muted\">One count per failing case x lane; bucket a-b holds distances a..b, 2^k.. holds "
        "2^k..2^(k+1)-1.</p>\n", out);
  if (r->histogram_count == 0) fputs("<p class=\"muted\">No failing case has a ULP distance.</p>\n", out);
  for (int h = 0; h < r->histogram_count; h++) {
    const report_histogram *hist = &r->histograms[h];
    int lo = REPORT_ULP_BUCKETS, hi = -1, n = 0;
    for (int b = 0; b < REPORT_ULP_BUCKETS; b++)
      if (hist->bucket[b]) lo = lo < b ? lo : b, hi = b;
    for (int b = lo; b <= hi; b++) { /* the occupied range, gaps kept so the scale reads true */
      report_ulp_bucket_label(b, labels[n], sizeof labels[n]);
      bars[n].label = labels[n], bars[n].value = hist->bucket[b], n++;
    }
    snprintf(title, sizeof title, "%s: ULP distance histogram, %lld failing case x lane", hist->op, hist->total);
    fputs("<h4>", out);
    report_put_xml(out, title);
    fputs("</h4>\n", out);
    report_svg_bars(out, title, bars, n);
  }
  fputs("<h3>Failing case x lane by first diverging stage</h3>\n<div class=\"stages\">", out);
  int n = 0;
  for (int i = 0; i < r->stage_count && n < 64; i++, n++)
    bars[n].label = *r->stages[i].stage ? r->stages[i].stage : "(not localised)", bars[n].value = r->stages[i].count;
  report_svg_bars(out, "Failing case x lane by first diverging stage", bars, n);
  fputs("</div></section>\n", out);
}

/* A bench line's median / minimum cell, or "-". */
static void put_td_us(FILE *out, int have, double median, double min) {
  if (have) fprintf(out, "<td class=\"n\">%.1f / %.1f</td>", median, min);
  else fputs("<td class=\"n\">-</td>", out);
}

/*
** A bench run's lines: both variants' figures, the speedup, the verdict
** against issue 8's target (reasons numbered once, under the table) and
** the fast median's trend over the runs up to this one.
*/
static void bench_section(FILE *out, const report *r) {
  static const char *const heads[] = {"Kernel", "Shape", "Fast us (median / min)", "Reference us", "Speedup",
                                      "Target", "Verdict", "Trend (fast median)"};
  const char *reasons[64];
  int n_reasons = 0;
  if (!r->bench_count) return;
  fprintf(out, "<section id=\"bench\"><h2>Bench figures (%d lines, timing ", r->bench_count);
  report_put_xml(out, r->bench[0].timing);
  fputs(")</h2>\n<p class=\"muted\">CUDA-event-timed replays of each stage captured alone as a graph. The "
        "target is issue 8's for that line; the trend is the line's fast median over the last runs that "
        "measured it, up to this one, the newest marked.</p>\n<div class=\"scroll\"><table><thead>",
        out);
  put_th_row(out, heads, (int)(sizeof heads / sizeof heads[0]));
  fputs("</thead><tbody>\n", out);
  for (int i = 0; i < r->bench_count; i++) {
    const report_bench_line *l = &r->bench[i];
    char title[600], speedup[32] = "-";
    int k = 0;
    fputs("<tr>", out);
    put_td(out, NULL, l->kernel);
    put_td(out, "mono", l->shape);
    put_td_us(out, l->have_fast, l->fast_us, l->fast_min_us);
    put_td_us(out, l->have_ref, l->ref_us, l->ref_min_us);
    if (l->have_fast && l->have_ref && l->fast_us > 0)
      snprintf(speedup, sizeof speedup, "%.1fx", l->ref_us / l->fast_us);
    put_td(out, "n", speedup);
    put_td(out, "mono", *l->goal ? l->goal : "-");
    if (*l->why) {
      for (k = 0; k < n_reasons && strcmp(reasons[k], l->why); k++) continue;
      if (k == n_reasons && n_reasons < 64) reasons[n_reasons++] = l->why;
      fputs("<td class=\"missed\">", out);
      report_put_xml(out, l->status);
      fprintf(out, " <a href=\"#why-%d\">[%d]</a></td>", k + 1, k + 1);
    } else {
      put_td(out, strstr(l->status, "reached") ? "reached" : NULL, *l->status ? l->status : "-");
    }
    fputs("<td>", out);
    snprintf(title, sizeof title, "%s, %s: fast median over %d runs, oldest first", l->kernel, l->shape,
             l->history_count);
    for (int h = 0; h < l->history_count; h++) {
      const size_t used = strlen(title);
      snprintf(title + used, sizeof title - used, "%s%.1f", h ? ", " : ": ", l->history[h]);
    }
    if (l->history_count) report_svg_sparkline(out, title, l->history, l->history_count);
    if (l->history_count > 1) { /* the sparkline spans min..max, however close: say how close */
      double lo, hi;
      report_values_span(l->history, l->history_count, &lo, &hi);
      fprintf(out, "<br><span class=\"muted\">%.1f-%.1f us</span>", lo, hi);
    }
    fputs("</td></tr>\n", out);
  }
  fputs("</tbody></table></div>\n", out);
  if (n_reasons) fputs("<h3>Why short</h3>\n<ol>\n", out);
  for (int k = 0; k < n_reasons; k++) {
    fprintf(out, "<li id=\"why-%d\">", k + 1);
    report_put_xml(out, reasons[k]);
    fputs("</li>\n", out);
  }
  if (n_reasons) fputs("</ol>\n", out);
  fputs("</section>\n", out);
}

static void provenance_section(FILE *out, const report *r) {
  fputs("<section id=\"provenance\"><h2>Provenance</h2>\n<table><tbody>\n<tr><th>database</th>", out);
  put_td(out, "mono", r->db_path);
  fputs("</tr>\n", out);
  for (int i = 0; i < r->field_count; i++) {
    fputs("<tr><th>", out);
    report_put_xml(out, r->fields[i].name);
    fputs("</th>", out);
    put_td(out, "mono", r->fields[i].value);
    fputs("</tr>\n", out);
  }
  fputs("</tbody></table></section>\n", out);
}

int report_html_write(const report *r, FILE *out) {
  const char *status = *r->run_status ? r->run_status : "unknown";
  fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
               "<title>bitgate run %lld: ", r->run_id);
  report_put_xml(out, status);
  fprintf(out, "</title>\n<style>%s</style></head><body>\n<header><h1>bitgate run %lld<span class=\"badge ",
          html_css, r->run_id);
  report_put_xml(out, status);
  fputs("\">", out);
  report_put_xml(out, status);
  fputs("</span></h1>\n<p id=\"totals\">", out);
  fprintf(out, "%lld case x lane results: %lld passed, %lld failed, %lld skipped; %.3f s of oracle and device time",
          r->totals[0] + r->totals[1] + r->totals[2], r->totals[REPORT_OUTCOME_PASS], r->totals[REPORT_OUTCOME_FAIL],
          r->totals[REPORT_OUTCOME_SKIPPED], r->seconds);
  fputs(". Suite <b>", out);
  report_put_xml(out, report_field_value(r, "suite"));
  fputs("</b>, git <code>", out);
  report_put_xml(out, report_field_value(r, "git_rev"));
  fputs("</code>, started ", out);
  report_put_xml(out, report_field_value(r, "started_at"));
  fputs(".</p></header>\n<nav><a href=\"#summary\">Summary</a>", out);
  if (r->bench_count) fputs("<a href=\"#bench\">Bench</a>", out);
  if (r->baseline_id) fputs("<a href=\"#regressions\">Regressions</a>", out);
  fputs("<a href=\"#failures\">Failing cases</a><a href=\"#charts\">Charts</a>"
        "<a href=\"#provenance\">Provenance</a></nav>\n<section id=\"summary\"><h2>Summary</h2>\n",
        out);
  if (r->entry_count == 0) {
    fputs(r->bench_count ? "<p class=\"muted\">No case results: a bench run (its figures are below).</p>\n"
                         : "<p class=\"muted\">No case results.</p>\n",
          out);
  } else {
    tally_table(out, "Per operator", r->by_op, r->by_op_count, 0, 0);
    tally_table(out, "Per operator and lane", r->by_op_lane, r->by_op_lane_count, 0, 1);
    tally_table(out, "Per operator, family and lane", r->by_group, r->by_group_count, 1, 1);
  }
  fputs("</section>\n", out);
  bench_section(out, r);
  regressions_section(out, r);
  failures_section(out, r);
  charts_section(out, r);
  provenance_section(out, r);
  fputs("</body></html>\n", out);
  return ferror(out) ? -1 : 0;
}

/*
** report_md.c: the short Markdown summary for a pull-request comment.
**
** Bounded on purpose (a PR comment has a size limit and a reader's
** patience): the verdict line, counts per operator and lane, at most
** max_failures failing cases with their repro commands, and the regressions
** against the baseline (each list bounded the same way); a bench run's
** lines with their verdicts against issue 8's targets.  The HTML report
** holds the rest.  Text from the database is escaped for GitHub/GitLab
** flavoured Markdown (report_put_md), commands are code spans.
*/
#include "reports/report.h"

#include "reports/report_escape.h"

static void md_counts(FILE *out, const report *r) {
  fputs("| operator | lane | pass | fail | skipped |\n|---|---|--:|--:|--:|\n", out);
  for (int i = 0; i < r->by_op_lane_count; i++) {
    const report_tally *t = &r->by_op_lane[i];
    fputs("| ", out);
    report_put_md(out, t->op);
    fputs(" | ", out);
    report_put_md(out, t->lane);
    fprintf(out, " | %lld | %lld | %lld |\n", t->count[REPORT_OUTCOME_PASS], t->count[REPORT_OUTCOME_FAIL],
            t->count[REPORT_OUTCOME_SKIPPED]);
  }
}

/* One failing-case row: case, lane, status, first mismatch, stage, repro. */
static void md_entry_row(FILE *out, const report_entry *e, const char *extra) {
  char where[160] = "";
  fputs("| ", out);
  report_put_md_code(out, e->case_id);
  fputs(" | ", out);
  report_put_md(out, e->lane);
  fputs(" | ", out);
  if (extra) {
    report_put_md(out, extra);
    fputs(" &rarr; ", out);
  }
  report_put_md(out, e->status);
  fputs(" | ", out);
  if (e->outcome == REPORT_OUTCOME_FAIL && e->has_mismatch) {
    snprintf(where, sizeof where, "step %d %s%s: ", e->step, e->tensor, e->coords);
    report_put_md(out, where);
    report_put_md_code(out, e->expected_hex);
    fputs(" vs ", out);
    report_put_md_code(out, e->actual_hex);
    if (e->ulp >= 0) fprintf(out, " (%lld ulp)", e->ulp);
  } else if (e->outcome == REPORT_OUTCOME_FAIL) {
    fprintf(out, "step %d", e->step);
  }
  fputs(" | ", out);
  report_put_md(out, *e->stage ? e->stage : "-");
  fputs(" | ", out);
  report_put_md_code(out, e->repro);
  fputs(" |\n", out);
}

static const char md_entry_head[] = "| case | lane | status | first mismatch | stage | repro |\n|---|---|---|---|---|---|\n";

static void md_failures(FILE *out, const report *r, int max) {
  int shown = 0;
  long long n = r->totals[REPORT_OUTCOME_FAIL];
  if (n == 0) return;
  fprintf(out, "\n### Failing cases (%lld)\n\n%s", n, md_entry_head);
  for (int i = 0; i < r->entry_count && shown < max; i++)
    if (r->entries[i].outcome == REPORT_OUTCOME_FAIL) md_entry_row(out, &r->entries[i], NULL), shown++;
  if (n > shown) fprintf(out, "\n...and %lld more (see the HTML report).\n", n - shown);
}

static void md_regressions(FILE *out, const report *r, int max) {
  if (!r->baseline_id) return;
  fprintf(out, "\n### Regressions against run %lld\n", r->baseline_id);
  for (int c = 0; c < REPORT_CHANGE_COUNT; c++) {
    int total = 0, shown = 0;
    for (int i = 0; i < r->regression_count; i++) total += r->regressions[i].change == (report_change)c;
    fprintf(out, "\n**%s: %d**\n", report_change_title((report_change)c), total);
    if (total == 0) continue;
    fprintf(out, "\n%s", md_entry_head);
    for (int i = 0; i < r->regression_count && shown < max; i++)
      if (r->regressions[i].change == (report_change)c)
        md_entry_row(out, r->regressions[i].entry, r->regressions[i].baseline_status), shown++;
    if (total > shown) fprintf(out, "\n...and %d more.\n", total - shown);
  }
}

/* A bench run's lines: fast and reference medians and the verdict against issue 8's target. */
static void md_bench(FILE *out, const report *r) {
  if (!r->bench_count) return;
  fputs("\n### Bench\n\n| kernel | shape | fast us | reference us | target | verdict |\n|---|---|--:|--:|---|---|\n",
        out);
  for (int i = 0; i < r->bench_count; i++) {
    const report_bench_line *l = &r->bench[i];
    fputs("| ", out);
    report_put_md(out, l->kernel);
    fputs(" | ", out);
    report_put_md(out, l->shape);
    if (l->have_fast) fprintf(out, " | %.1f", l->fast_us);
    else fputs(" | -", out);
    if (l->have_ref) fprintf(out, " | %.1f | ", l->ref_us);
    else fputs(" | - | ", out);
    report_put_md(out, *l->goal ? l->goal : "-");
    fputs(" | ", out);
    report_put_md(out, *l->status ? l->status : "-");
    fputs(" |\n", out);
  }
}

int report_md_write(const report *r, int max_failures, FILE *out) {
  long long fail = r->totals[REPORT_OUTCOME_FAIL];
  fprintf(out, "## bitgate run %lld: %s\n\n", r->run_id, fail ? "FAILED" : "passed");
  fprintf(out, "%lld passed, %lld failed, %lld skipped (case x lane). Suite ", r->totals[REPORT_OUTCOME_PASS], fail,
          r->totals[REPORT_OUTCOME_SKIPPED]);
  report_put_md_code(out, report_field_value(r, "suite"));
  fputs(", git ", out);
  report_put_md_code(out, report_field_value(r, "git_rev"));
  fputs(", device ", out);
  report_put_md(out, *report_field_value(r, "device_name") ? report_field_value(r, "device_name") : "none");
  fputs(".\n\n", out);
  md_counts(out, r);
  md_bench(out, r);
  md_failures(out, r, max_failures);
  md_regressions(out, r, max_failures);
  return ferror(out) ? -1 : 0;
}

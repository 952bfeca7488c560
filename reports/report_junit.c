/*
** report_junit.c: JUnit XML for CI (Jenkins' junit plugin, GitLab's
** artifacts:reports:junit), valid against reports/schema/junit.xsd.
**
**   testsuites          the run: totals over every suite
**   testsuite           one operator.family, with the run's provenance as properties
**   testcase            one case x lane: classname "op.family", name "CASE_ID/LANE"
**     failure           a failing status, message = first mismatch + repro command
**     error             'crash' and 'timeout': the case did not finish, so JUnit's
**                       "error" (did not complete) fits better than "failure"
**     skipped           unavailable, skipped, waived: message = the status
**
** Times are seconds of oracle plus device time; timestamp is the run's start
** in UTC without zone (the form the Jenkins schema accepts).
*/
#include "reports/report.h"

#include "reports/report_escape.h"

#include <string.h>

static int is_error_status(const char *s) { return !strcmp(s, "crash") || !strcmp(s, "timeout"); }

/* The one-line failure message: where the first mismatch is, its stage, and the repro command. */
static void put_failure_message(FILE *out, const report_entry *e) {
  char line[1024];
  if (e->has_mismatch) {
    int n = snprintf(line, sizeof line, "%s: step %d tensor %s at %s (offset %lld): expected %s, actual %s", e->status,
                     e->step, e->tensor, e->coords, e->flat_offset, e->expected_hex, e->actual_hex);
    if (e->ulp >= 0 && n > 0 && (size_t)n < sizeof line)
      n += snprintf(line + n, sizeof line - (size_t)n, ", %lld ulp", e->ulp);
    if (n > 0 && (size_t)n < sizeof line)
      snprintf(line + n, sizeof line - (size_t)n, ", %lld mismatching", e->mismatch_count);
  } else {
    snprintf(line, sizeof line, "%s at step %d", e->status, e->step);
  }
  report_put_xml(out, line);
  if (*e->stage) {
    fputs("; first diverging stage ", out);
    report_put_xml(out, e->stage);
  }
  fputs("; repro: ", out);
  report_put_xml(out, e->repro);
}

static void put_testcase(FILE *out, const report_entry *e) {
  fputs("    <testcase classname=\"", out);
  report_put_xml(out, e->op);
  fputc('.', out);
  report_put_xml(out, e->family);
  fputs("\" name=\"", out);
  report_put_xml(out, e->case_id);
  fputc('/', out);
  report_put_xml(out, e->lane);
  fprintf(out, "\" time=\"%.3f\"", e->seconds);
  if (e->outcome == REPORT_OUTCOME_PASS) {
    fputs("/>\n", out);
    return;
  }
  if (e->outcome == REPORT_OUTCOME_SKIPPED) {
    fputs("><skipped message=\"", out);
    report_put_xml(out, e->status);
    fputs("\"/></testcase>\n", out);
    return;
  }
  const char *tag = is_error_status(e->status) ? "error" : "failure";
  fprintf(out, ">\n      <%s type=\"", tag);
  report_put_xml(out, e->status);
  fputs("\" message=\"", out);
  put_failure_message(out, e);
  fputs("\">", out);
  put_failure_message(out, e);
  if (*e->message) {
    fputs("\n", out);
    report_put_xml(out, e->message);
  }
  fprintf(out, "</%s>\n    </testcase>\n", tag);
}

static void put_properties(FILE *out, const report *r) {
  fputs("    <properties>\n", out);
  for (int i = 0; i < r->field_count; i++) {
    fputs("      <property name=\"", out);
    report_put_xml(out, r->fields[i].name);
    fputs("\" value=\"", out);
    report_put_xml(out, r->fields[i].value);
    fputs("\"/>\n", out);
  }
  fputs("    </properties>\n", out);
}

typedef struct suite_counts {
  long long tests, failures, errors, skipped;
  double seconds;
} suite_counts;

static void count_add(suite_counts *c, const report_entry *e) {
  c->tests++;
  c->seconds += e->seconds;
  if (e->outcome == REPORT_OUTCOME_SKIPPED) c->skipped++;
  else if (e->outcome == REPORT_OUTCOME_FAIL && is_error_status(e->status)) c->errors++;
  else if (e->outcome == REPORT_OUTCOME_FAIL) c->failures++;
}

/* Jenkins' schema has no skipped count on testsuites, only on each testsuite. */
static void put_counts(FILE *out, const suite_counts *c, int with_skipped) {
  fprintf(out, " tests=\"%lld\" failures=\"%lld\" errors=\"%lld\"", c->tests, c->failures, c->errors);
  if (with_skipped) fprintf(out, " skipped=\"%lld\"", c->skipped);
  fprintf(out, " time=\"%.3f\"", c->seconds);
}

static int same_suite(const report_entry *a, const report_entry *b) {
  return !strcmp(a->op, b->op) && !strcmp(a->family, b->family);
}

int report_junit_write(const report *r, FILE *out) {
  suite_counts all = {0};
  char stamp[20] = "";
  const char *started = report_field_value(r, "started_at");
  if (strlen(started) >= 19) memcpy(stamp, started, 19); /* 2024-05-01T12:00:00 of ...00.123Z */
  for (int i = 0; i < r->entry_count; i++) count_add(&all, &r->entries[i]);
  fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"bitgate run %lld\"", r->run_id);
  put_counts(out, &all, 0);
  fputs(">\n", out);
  for (int i = 0, id = 0; i < r->entry_count; id++) {
    suite_counts c = {0};
    int end = i;
    while (end < r->entry_count && same_suite(&r->entries[i], &r->entries[end])) count_add(&c, &r->entries[end++]);
    fputs("  <testsuite name=\"", out);
    report_put_xml(out, r->entries[i].op);
    fputc('.', out);
    report_put_xml(out, r->entries[i].family);
    fputc('"', out);
    put_counts(out, &c, 1);
    fprintf(out, " id=\"%d\"", id);
    if (*stamp) {
      fputs(" timestamp=\"", out);
      report_put_xml(out, stamp);
      fputc('"', out);
    }
    fputs(" hostname=\"", out);
    report_put_xml(out, *report_field_value(r, "host") ? report_field_value(r, "host") : "unknown");
    fputs("\" package=\"bitgate\">\n", out);
    put_properties(out, r);
    for (; i < end; i++) put_testcase(out, &r->entries[i]);
    fputs("  </testsuite>\n", out);
  }
  fputs("</testsuites>\n", out);
  return ferror(out) ? -1 : 0;
}

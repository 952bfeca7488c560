/*
** run_tally.c: see run_tally.h.
*/
#include "harness/run_tally.h"
#include "harness/gate.h"

#include <stdio.h>
#include <string.h>

/* The column of a row's lane name ("eager", "eager@ref"), or -1. */
static int tally_column(const char *row_lane) {
  int l;
  size_t n;
  for (l = 0; l < LANE_COUNT; l++) {
    n = strlen(lane_name((lane)l));
    if (strncmp(row_lane, lane_name((lane)l), n)) continue;
    if (!row_lane[n]) return l;
    if (!strcmp(row_lane + n, "@ref")) return l + LANE_COUNT;
  }
  return -1;
}

void suite_run_tally_add(suite_run_tally *t, const case_report *r) {
  int i, c;
  t->cases++;
  t->failed_cases += r->failed != 0;
  t->waived_cases += !r->failed && gate_report_has_waived(r);
  for (i = 0; i < r->n; i++)
    if ((c = tally_column(r->rows[i].lane)) >= 0) {
      t->rows[c]++;
      t->failed_rows[c] += gate_status_fails(r->rows[i].status);
      t->waived_rows[c] += !strcmp(r->rows[i].status, "waived");
    }
}

const char *run_tally_column_name(int c, char *buf, size_t size) {
  snprintf(buf, size, "%s%s", lane_name((lane)(c % LANE_COUNT)), c < LANE_COUNT ? "" : "@ref");
  return buf;
}

/*
** report_regress.c: what changed between a baseline run and the reported
** run, by case x lane (issue 7, "regressions against a baseline run").
**
**   newly failing:          fails now; passed, was skipped, or was absent then
**   newly passing:          passes now; failed then
**   newly nondeterministic: a step is 'nondeterministic' now; none was then
**
** A case x lane absent from the reported run is not a change: a run over a
** smaller suite or a shard says nothing about the cases it did not run.
*/
#include "reports/report_build.h"

#include <stdlib.h>
#include <string.h>

static int entry_key_cmp(const void *a, const void *b) {
  const report_entry *x = *(const report_entry *const *)a, *y = *(const report_entry *const *)b;
  int c = strcmp(x->case_id, y->case_id);
  return c ? c : strcmp(x->lane, y->lane);
}

static const report_entry *baseline_find(const report_entry **sorted, int n, const report_entry *e) {
  const report_entry **hit = bsearch(&e, sorted, (size_t)n, sizeof *sorted, entry_key_cmp);
  return hit ? *hit : NULL;
}

/* The change of one entry against its baseline counterpart (NULL: absent), or -1 for none. */
static int change_of(const report_entry *now, const report_entry *then, report_change c) {
  switch (c) {
  case REPORT_CHANGE_NEWLY_FAILING: return now->outcome == REPORT_OUTCOME_FAIL && (!then || then->outcome != REPORT_OUTCOME_FAIL);
  case REPORT_CHANGE_NEWLY_PASSING: return now->outcome == REPORT_OUTCOME_PASS && then && then->outcome == REPORT_OUTCOME_FAIL;
  case REPORT_CHANGE_NEWLY_NONDETERMINISTIC: return now->nondeterministic && (!then || !then->nondeterministic);
  default: return 0;
  }
}

void report_regressions_build(report *r, const report_entry *base, int base_count) {
  const report_entry **sorted = malloc(sizeof *sorted * (size_t)(base_count ? base_count : 1));
  int n = 0;
  if (!sorted) abort(); /* an internal invariant, as in report_pool.c */
  for (int i = 0; i < base_count; i++) sorted[i] = &base[i];
  qsort(sorted, (size_t)base_count, sizeof *sorted, entry_key_cmp);
  /* Two passes: count, then fill, so the array is allocated once and grouped by change. */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) r->regressions = report_pool_alloc(r->pool, sizeof *r->regressions * (size_t)(n ? n : 1));
    n = 0;
    for (int c = 0; c < REPORT_CHANGE_COUNT; c++)
      for (int i = 0; i < r->entry_count; i++) {
        const report_entry *then = baseline_find(sorted, base_count, &r->entries[i]);
        if (!change_of(&r->entries[i], then, (report_change)c)) continue;
        if (pass == 1) {
          report_regression *g = &r->regressions[n];
          g->change = (report_change)c;
          g->entry = &r->entries[i];
          g->baseline_status = then ? then->status : "absent";
        }
        n++;
      }
  }
  r->regression_count = n;
  free(sorted);
}

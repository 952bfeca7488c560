/*
** report_summary.c: the aggregates a report shows, computed once from the
** entries (report.h): pass/fail/skipped tallies per operator, per operator x
** lane and per operator x family x lane; a log2 ULP histogram per operator
** over the first mismatch of each failing entry; and failing entries counted
** by their first diverging stage, in pipeline order (DESIGN.md "Golden
** boundaries"), other names after, not localised last.
*/
#include "reports/report_build.h"

#include <stdlib.h>
#include <string.h>

/* The eight CSA stage boundaries, in pipeline order. */
static const char *const pipeline_stages[] = {
    "CompressionUpdate", "IndexKeyUpdate",   "IndexQueryFinalize",         "IndexScoring",
    "Selection",         "CandidateAssembly", "SparseSinkSoftmaxAttention", "Writeback"};
#define PIPELINE_STAGE_COUNT ((int)(sizeof pipeline_stages / sizeof pipeline_stages[0]))

/* Grows a pool-owned array of elem-sized items to hold one more; returns the new slot. */
static void *slot_add(report_pool *p, void **items, int *n, int *cap, size_t elem) {
  if (*n == *cap) {
    int grown = *cap ? *cap * 2 : 16;
    void *bigger = report_pool_alloc(p, elem * (size_t)grown);
    if (*n) memcpy(bigger, *items, elem * (size_t)*n);
    *items = bigger, *cap = grown;
  }
  return (char *)*items + elem * (size_t)(*n)++;
}

static report_tally *tally_find(report_pool *p, report_tally **list, int *n, int *cap, const char *op,
                                const char *family, const char *lane) {
  for (int i = 0; i < *n; i++)
    if (!strcmp((*list)[i].op, op) && !strcmp((*list)[i].family, family) && !strcmp((*list)[i].lane, lane))
      return &(*list)[i];
  report_tally *t = slot_add(p, (void **)list, n, cap, sizeof **list);
  t->op = op, t->family = family, t->lane = lane;
  return t;
}

/* Lanes in the order a run executes them; unknown lanes after, by name. */
static int lane_rank(const char *lane) {
  static const char *const order[] = {"oracle", "eager", "capture", "poison"};
  for (int i = 0; i < 4; i++)
    if (!strcmp(lane, order[i])) return i;
  return 4;
}

static int tally_cmp(const void *a, const void *b) {
  const report_tally *x = a, *y = b;
  int c = strcmp(x->op, y->op);
  if (!c) c = strcmp(x->family, y->family);
  if (!c) c = lane_rank(x->lane) - lane_rank(y->lane);
  if (!c) c = strcmp(x->lane, y->lane);
  return c;
}

static int ulp_bucket(long long ulp) {
  int b = 0;
  while (ulp > 0) ulp >>= 1, b++; /* ulp in [2^(b-1), 2^b) */
  return b;
}

static void histogram_add(report *r, int *cap, const char *op, long long ulp) {
  report_histogram *h = NULL;
  for (int i = 0; i < r->histogram_count && !h; i++)
    if (!strcmp(r->histograms[i].op, op)) h = &r->histograms[i];
  if (!h) {
    h = slot_add(r->pool, (void **)&r->histograms, &r->histogram_count, cap, sizeof *h);
    h->op = op;
  }
  h->bucket[ulp_bucket(ulp)]++;
  h->total++;
}

static int stage_rank(const char *stage) {
  if (!*stage) return PIPELINE_STAGE_COUNT + 1; /* not localised: last */
  for (int i = 0; i < PIPELINE_STAGE_COUNT; i++)
    if (!strcmp(stage, pipeline_stages[i])) return i;
  return PIPELINE_STAGE_COUNT;
}

static int stage_cmp(const void *a, const void *b) {
  const report_stage_count *x = a, *y = b;
  int c = stage_rank(x->stage) - stage_rank(y->stage);
  return c ? c : strcmp(x->stage, y->stage);
}

static void stage_add(report *r, int *cap, const char *stage) {
  for (int i = 0; i < r->stage_count; i++)
    if (!strcmp(r->stages[i].stage, stage)) {
      r->stages[i].count++;
      return;
    }
  report_stage_count *s = slot_add(r->pool, (void **)&r->stages, &r->stage_count, cap, sizeof *s);
  s->stage = stage, s->count = 1;
}

void report_summarise(report *r) {
  int cap_op = 0, cap_lane = 0, cap_group = 0, cap_hist = 0, cap_stage = 0;
  for (int i = 0; i < r->entry_count; i++) {
    const report_entry *e = &r->entries[i];
    r->totals[e->outcome]++;
    r->seconds += e->seconds;
    tally_find(r->pool, &r->by_op, &r->by_op_count, &cap_op, e->op, "", "")->count[e->outcome]++;
    tally_find(r->pool, &r->by_op_lane, &r->by_op_lane_count, &cap_lane, e->op, "", e->lane)->count[e->outcome]++;
    tally_find(r->pool, &r->by_group, &r->by_group_count, &cap_group, e->op, e->family, e->lane)
        ->count[e->outcome]++;
    if (e->outcome != REPORT_OUTCOME_FAIL) continue;
    if (e->has_mismatch && e->ulp >= 0) histogram_add(r, &cap_hist, e->op, e->ulp);
    stage_add(r, &cap_stage, e->stage);
  }
  if (r->by_op_lane_count) qsort(r->by_op_lane, (size_t)r->by_op_lane_count, sizeof *r->by_op_lane, tally_cmp);
  if (r->by_group_count) qsort(r->by_group, (size_t)r->by_group_count, sizeof *r->by_group, tally_cmp);
  if (r->stage_count) qsort(r->stages, (size_t)r->stage_count, sizeof *r->stages, stage_cmp);
}

void report_ulp_bucket_label(int bucket, char *buf, size_t len) {
  if (bucket <= 1) snprintf(buf, len, "%d", bucket);
  else if (bucket <= 10) snprintf(buf, len, "%lld-%lld", 1LL << (bucket - 1), (1LL << bucket) - 1);
  else snprintf(buf, len, "2^%d..", bucket - 1); /* wide buckets: the exponent reads better */
}

const char *report_outcome_name(report_outcome o) {
  static const char *const names[] = {"pass", "fail", "skipped"};
  return (unsigned)o < REPORT_OUTCOME_COUNT ? names[o] : "?";
}

const char *report_change_name(report_change c) {
  static const char *const names[] = {"newly_failing", "newly_passing", "newly_nondeterministic"};
  return (unsigned)c < REPORT_CHANGE_COUNT ? names[c] : "?";
}

const char *report_change_title(report_change c) {
  static const char *const titles[] = {"Newly failing", "Newly passing", "Newly nondeterministic"};
  return (unsigned)c < REPORT_CHANGE_COUNT ? titles[c] : "?";
}

/*
** case_order.c: see case_order.h.
*/
#include "harness/case_order.h"

#include "cases/case_spec.h"

#include <stdlib.h>
#include <string.h>

typedef struct timed_case {
  char id[CASE_ID_MAX];
  int index;  /* in the suite */
  double ms;  /* the run before's time, < 0 when it did not time the case */
} timed_case;

typedef struct timed_cases {
  timed_case *v;
  int n;
} timed_cases;

static int by_id(const void *a, const void *b) { return strcmp(((const timed_case *)a)->id, ((const timed_case *)b)->id); }

/* Unknown first, then heaviest first; ties in suite order. */
static int by_weight(const void *a, const void *b) {
  const timed_case *x = a, *y = b;
  const int ux = x->ms < 0, uy = y->ms < 0;
  if (ux != uy) return uy - ux;
  if (x->ms != y->ms) return x->ms < y->ms ? 1 : -1;
  return (x->index > y->index) - (x->index < y->index);
}

/* store_case_times's callback: the time of each case of the suite (v sorted by id). */
static void note_time(void *ctx, const char *case_id, double ms) {
  timed_cases *t = ctx;
  timed_case key, *hit;
  if (!case_id || strlen(case_id) >= sizeof key.id) return;
  strcpy(key.id, case_id);
  hit = bsearch(&key, t->v, (size_t)t->n, sizeof *t->v, by_id);
  if (hit) hit->ms = ms;
}

int case_order_heaviest_first(store *db, const char *suite, long long run_id, char *const *specs, int count,
                              char **ordered, long long *from_run) {
  timed_cases t = {NULL, count};
  int i, rc = 0;
  *from_run = 0;
  for (i = 0; i < count; i++) ordered[i] = specs[i];
  if (count < 2 || !(t.v = calloc((size_t)count, sizeof *t.v))) return 0; /* no memory: the suite's order */
  for (i = 0; i < count; i++) {
    if (case_id_from_spec(specs[i], t.v[i].id, sizeof t.v[i].id) != 0) t.v[i].id[0] = '\0';
    t.v[i].index = i;
    t.v[i].ms = -1;
  }
  qsort(t.v, (size_t)count, sizeof *t.v, by_id);
  if (store_case_times(db, suite, run_id, from_run, note_time, &t) != 0) {
    rc = -1;
  } else if (*from_run) {
    qsort(t.v, (size_t)count, sizeof *t.v, by_weight);
    for (i = 0; i < count; i++) ordered[i] = specs[t.v[i].index];
  }
  free(t.v);
  return rc;
}

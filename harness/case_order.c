/*
** case_order.c: see case_order.h.
*/
#include "harness/case_order.h"

#include "cases/case_spec.h"
#include "harness/case_times.h"

#include <stdlib.h>
#include <string.h>

typedef struct timed_case {
  char id[CASE_ID_MAX];
  int index;     /* in the suite */
  double ms;     /* the run before's time, < 0 when it did not time the case */
  double ms_file; /* the times file's, < 0 when it does not name the case */
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

static timed_case *find(timed_cases *t, const char *case_id) {
  timed_case key;
  if (!case_id || strlen(case_id) >= sizeof key.id) return NULL;
  strcpy(key.id, case_id);
  return bsearch(&key, t->v, (size_t)t->n, sizeof *t->v, by_id);
}

/* store_case_times's and case_times_read's callbacks (v sorted by id). */
static void note_run_time(void *ctx, const char *case_id, double ms) {
  timed_case *hit = find(ctx, case_id);
  if (hit) hit->ms = ms;
}
static void note_file_time(void *ctx, const char *case_id, double ms) {
  timed_case *hit = find(ctx, case_id);
  if (hit) hit->ms_file = ms;
}

int case_order_heaviest_first(store *db, const char *suite, long long run_id, const char *times_path,
                              char *const *specs, int count, char **ordered, case_order_source *from, char *err,
                              size_t err_len) {
  timed_cases t = {NULL, count};
  int i, rc = 0, have_file = 0;
  from->run = from->file_cases = 0;
  from->file[0] = '\0';
  for (i = 0; i < count; i++) ordered[i] = specs[i];
  if (count < 2 || !(t.v = calloc((size_t)count, sizeof *t.v))) return 0; /* no memory: the suite's order */
  for (i = 0; i < count; i++) {
    if (case_id_from_spec(specs[i], t.v[i].id, sizeof t.v[i].id) != 0) t.v[i].id[0] = '\0';
    t.v[i].index = i;
    t.v[i].ms = t.v[i].ms_file = -1;
  }
  qsort(t.v, (size_t)count, sizeof *t.v, by_id);
  if (times_path && (rc = case_times_read(times_path, note_file_time, &t, err, err_len)) >= 0) {
    have_file = rc == 0;
    rc = 0;
  } else if (times_path) {
    rc = -2;
  }
  if (!rc && store_case_times(db, suite, run_id, &from->run, note_run_time, &t) != 0) rc = -1;
  if (!rc && have_file) { /* the file's figure for each case the run before did not time, or all with no run */
    for (i = 0; i < count; i++)
      if (t.v[i].ms < 0 && t.v[i].ms_file >= 0) t.v[i].ms = t.v[i].ms_file, from->file_cases++;
    if (from->file_cases) snprintf(from->file, sizeof from->file, "%s", times_path);
  }
  if (!rc && (from->run || from->file[0])) {
    qsort(t.v, (size_t)count, sizeof *t.v, by_weight);
    for (i = 0; i < count; i++) ordered[i] = specs[t.v[i].index];
  }
  free(t.v);
  return rc;
}

/*
** spec_list.c: see spec_list.h.
*/
#include "cases/spec_list.h"
#include "cases/case_spec.h"

#include <stdlib.h>
#include <string.h>

void spec_list_push(const char *spec, void *ctx) {
  spec_list *l = ctx;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 1024;
    char **grown = realloc(l->specs, (size_t)cap * sizeof *grown);
    if (!grown) {
      l->failed = 1;
      return;
    }
    l->specs = grown, l->cap = cap;
  }
  if (!(l->specs[l->n] = strdup(spec))) l->failed = 1;
  else l->n++;
}

static int compare_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* 0 when every spec's id is distinct; else -1, naming the pair on stderr. */
static int spec_list_ids_unique(const spec_list *l) {
  char **ids = calloc((size_t)l->n + 1, sizeof *ids);
  int i, rc = 0;
  if (!ids) return -1;
  for (i = 0; i < l->n && !rc; i++) {
    char id[CASE_ID_MAX];
    if (case_id_from_spec(l->specs[i], id, sizeof id) || !(ids[i] = strdup(id))) rc = -1;
  }
  if (!rc) qsort(ids, (size_t)l->n, sizeof *ids, compare_str);
  for (i = 1; i < l->n && !rc; i++)
    if (!strcmp(ids[i - 1], ids[i])) fprintf(stderr, "suite: id %s appears twice\n", ids[i]), rc = -1;
  for (i = 0; i < l->n; i++) free(ids[i]);
  free(ids);
  return rc;
}

int spec_list_write(spec_list *l, FILE *out) {
  int i, rc = l->failed || spec_list_ids_unique(l) ? -1 : 0;
  for (i = 0; i < l->n && !rc; i++)
    if (fprintf(out, "%s\n", l->specs[i]) < 0) rc = -1;
  for (i = 0; i < l->n; i++) free(l->specs[i]);
  free(l->specs);
  rc = rc ? -1 : l->n;
  memset(l, 0, sizeof *l);
  return rc;
}

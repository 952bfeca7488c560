/*
** spec_set.c: see spec_set.h.
*/
#include "spec_set.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

void spec_set_push(const char *spec, void *ctx) {
  spec_set *s = ctx;
  s->v = realloc(s->v, (size_t)(s->n + 1) * sizeof *s->v);
  cr_assert(s->v);
  s->v[s->n++] = strdup(spec);
}

void spec_set_free(spec_set *s) {
  int i;
  for (i = 0; i < s->n; i++) free(s->v[i]);
  free(s->v);
  s->v = NULL, s->n = 0;
}

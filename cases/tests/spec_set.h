/*
** spec_set.h: a growable list of spec lines for the case-family tests, filled
** by an enumerator's emit callback.
*/
#ifndef CASES_TESTS_SPEC_SET_H
#define CASES_TESTS_SPEC_SET_H

typedef struct spec_set {
  char **v;
  int n;
} spec_set;

/* An emit callback: appends a copy of spec to the spec_set ctx. */
void spec_set_push(const char *spec, void *ctx);
void spec_set_free(spec_set *s);

#endif

/*
** spec_list.h: the specs a suite writer collects from the family
** enumerators, checked for unique ids before they are written.
*/
#ifndef CASES_SPEC_LIST_H
#define CASES_SPEC_LIST_H

#include <stdio.h>

typedef struct spec_list {
  char **specs;
  int n, cap, failed; /* failed: an allocation failed while collecting */
} spec_list;

/* An enumerator's emit callback: appends a copy of spec to the list ctx. */
void spec_list_push(const char *spec, void *ctx);

/*
** Writes the specs to out, one a line, if collecting succeeded and every id
** is distinct (a repeated id is named on stderr); frees the list either way.
** The number of lines, or -1.
*/
int spec_list_write(spec_list *l, FILE *out);

#endif

/*
** case_spec.h: canonical case specs and case ids (DESIGN.md "Cases, ids,
** corpus").
**
** A spec is one line of space-separated key=value tokens, for example
**   family=is.valid op=IndexShare dtype=f16 seed=7 steps=1
** Every family writes its keys in one fixed order, so equal cases have equal
** text.  The id is the family, a dot, and the first 8 hex digits of the
** XXH3-64 digest of the whole spec: `is.valid.1f3c9a02`.  Ids therefore stay
** stable across versions for as long as the spec text does.
*/
#ifndef CASE_SPEC_H
#define CASE_SPEC_H

#include <stddef.h>

#define CASE_ID_MAX 96

/* Copies the value of `key` into out; returns 0, or -1 if absent or too long. */
int case_spec_get(const char *spec, const char *key, char *out, size_t out_len);

/* Writes the case id of spec; returns 0, or -1 if the spec has no family. */
int case_id_from_spec(const char *spec, char *out, size_t out_len);

#endif

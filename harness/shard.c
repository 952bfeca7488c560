/*
** shard.c: see shard.h for the partition rule.
*/
#include "harness/shard.h"

#include <stdio.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

void shard_all(shard *s) {
  s->k = s->n = 1;
  snprintf(s->text, sizeof s->text, "1/1");
}

/* A whole decimal number in [1, SHARD_MAX] from [p, end); 0 when it is not one. */
static unsigned shard_number(const char *p, const char *end) {
  unsigned long v = 0;
  if (p == end) return 0;
  for (; p < end; p++) {
    if (*p < '0' || *p > '9') return 0;
    v = v * 10 + (unsigned long)(*p - '0');
    if (v > SHARD_MAX) return 0; /* also stops overflow on long digit strings */
  }
  return (unsigned)v;
}

int shard_parse(const char *text, shard *out, char *err, size_t err_len) {
  const char *slash = strchr(text, '/');
  unsigned k, n;
  if (!slash) {
    snprintf(err, err_len, "'%s' is not K/N (1-based, e.g. 1/4)", text);
    return -1;
  }
  k = shard_number(text, slash);
  n = shard_number(slash + 1, slash + strlen(slash));
  if (!n) {
    snprintf(err, err_len, "'%s': N must be a whole number from 1 to %u", text, SHARD_MAX);
    return -1;
  }
  if (!k || k > n) {
    snprintf(err, err_len, "'%s': K must be a whole number from 1 to N (K is 1-based)", text);
    return -1;
  }
  out->k = k;
  out->n = n;
  snprintf(out->text, sizeof out->text, "%u/%u", k, n);
  return 0;
}

unsigned shard_of(const char *case_id, unsigned n) {
  return (unsigned)(XXH3_64bits(case_id, strlen(case_id)) % n) + 1;
}

int shard_contains(const shard *s, const char *case_id) {
  return s->n <= 1 || shard_of(case_id, s->n) == s->k;
}

/*
** case_spec.c: see case_spec.h.
*/
#include "cases/case_spec.h"

#include <stdio.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

int case_spec_get(const char *spec, const char *key, char *out, size_t out_len) {
  size_t klen = strlen(key);
  const char *p = spec;
  while (*p) {
    const char *end;
    size_t vlen;
    while (*p == ' ') p++;
    end = p + strcspn(p, " ");
    if ((size_t)(end - p) > klen && !strncmp(p, key, klen) && p[klen] == '=') {
      vlen = (size_t)(end - p) - klen - 1;
      if (vlen + 1 > out_len) return -1;
      memcpy(out, p + klen + 1, vlen);
      out[vlen] = '\0';
      return 0;
    }
    p = end;
  }
  return -1;
}

int case_id_from_spec(const char *spec, char *out, size_t out_len) {
  char family[64];
  int n;
  if (case_spec_get(spec, "family", family, sizeof family) != 0 || !family[0]) return -1;
  n = snprintf(out, out_len, "%s.%08x", family, (unsigned)(XXH3_64bits(spec, strlen(spec)) >> 32));
  return n < 0 || (size_t)n >= out_len ? -1 : 0;
}

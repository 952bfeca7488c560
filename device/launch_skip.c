/*
** launch_skip.c: see launch_skip.h.
*/
#include "device/launch_skip.h"

#include <stdio.h>
#include <string.h>

static int is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

int launch_skip_parse(launch_skip *l, const char *csv, char *err, size_t len) {
  const char *p = csv ? csv : "";
  memset(l, 0, sizeof *l);
  for (;;) {
    size_t n = strcspn(p, ",");
    int i;
    if (n == 0) return snprintf(err, len, "'%s': an empty kernel name", csv ? csv : ""), -1;
    if (n >= LAUNCH_SKIP_NAME_MAX)
      return snprintf(err, len, "'%.40s...': a kernel name is at most %d characters", p, LAUNCH_SKIP_NAME_MAX - 1), -1;
    for (i = 0; i < (int)n; i++)
      if (!is_name_char(p[i]))
        return snprintf(err, len, "'%.*s': a kernel name is letters, digits and '_'", (int)n, p), -1;
    for (i = 0; i < l->n; i++)
      if (strlen(l->name[i]) == n && !memcmp(l->name[i], p, n))
        return snprintf(err, len, "'%.*s' is named twice", (int)n, p), -1;
    if (l->n == LAUNCH_SKIP_MAX) return snprintf(err, len, "more than %d kernel names", LAUNCH_SKIP_MAX), -1;
    memcpy(l->name[l->n], p, n);
    l->name[l->n++][n] = '\0';
    if (!p[n]) return 0;
    p += n + 1;
  }
}

int launch_skip_hit(launch_skip *l, const char *name) {
  int i;
  if (!l || !name) return 0;
  for (i = 0; i < l->n; i++)
    if (!strcmp(l->name[i], name)) return l->left_out[i]++, 1;
  for (i = 0; i < l->n_seen; i++)
    if (!strcmp(l->seen[i], name)) return 0;
  if (l->n_seen < LAUNCH_SKIP_SEEN_MAX && strlen(name) < LAUNCH_SKIP_NAME_MAX) strcpy(l->seen[l->n_seen++], name);
  return 0;
}

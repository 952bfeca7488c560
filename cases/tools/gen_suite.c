/*
** gen_suite: (re)writes the IndexShare cases of a suite file.
**
**   gen_suite [--scale N] [PATH]
**
** Without PATH the specs go to stdout.  With PATH, the file's other lines
** (its '#' header, other operators' specs) are kept where they are and the
** IndexShare specs (lines starting "family=is.") are replaced by
** cases_is_write_suite's, at the place the first of them stood (after the
** rest when there were none).  The new file replaces the old by rename, so a
** failure leaves the old one whole.
**
**   gen_suite corpus/gate.suite     # what CI's committed gate suite holds
*/
#include "cases/index_share_cases.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IS_PREFIX "family=is."

typedef struct lines {
  char **v;
  int n;
} lines;

/* Reads path's lines (without newlines); a missing file gives none. */
static int lines_read(const char *path, lines *out) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  FILE *f = fopen(path, "r");
  out->v = NULL, out->n = 0;
  if (!f) return errno == ENOENT ? 0 : -1;
  while ((len = getline(&line, &cap, f)) >= 0) {
    char **grown = realloc(out->v, (size_t)(out->n + 1) * sizeof *grown);
    if (!grown) break;
    out->v = grown;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (!(out->v[out->n] = strdup(line))) break;
    out->n++;
  }
  free(line);
  fclose(f);
  return 0;
}

static int is_spec_line(const char *s) { return !strncmp(s, IS_PREFIX, strlen(IS_PREFIX)); }

static int write_merged(const char *path, const lines *old, int scale) {
  char tmp[4096];
  int i, at = old->n, n = -1;
  FILE *f;
  for (i = old->n - 1; i >= 0; i--)
    if (is_spec_line(old->v[i])) at = i;
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if (!(f = fopen(tmp, "w"))) return fprintf(stderr, "gen_suite: cannot write %s: %s\n", tmp, strerror(errno)), -1;
  for (i = 0; i < old->n; i++) {
    if (i == at) n = cases_is_write_suite(f, scale);
    if (!is_spec_line(old->v[i])) fprintf(f, "%s\n", old->v[i]);
  }
  if (at == old->n) n = cases_is_write_suite(f, scale);
  if (fclose(f) || n < 0 || rename(tmp, path)) {
    fprintf(stderr, "gen_suite: writing %s failed\n", path);
    remove(tmp);
    return -1;
  }
  fprintf(stderr, "gen_suite: %d IndexShare specs in %s\n", n, path);
  return 0;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  int scale = 1, i, rc;
  lines old;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--scale") && i + 1 < argc) scale = atoi(argv[++i]);
    else if (argv[i][0] != '-' && !path) path = argv[i];
    else return fprintf(stderr, "usage: gen_suite [--scale N] [PATH]\n"), 2;
  }
  if (scale < 1) return fprintf(stderr, "gen_suite: --scale must be >= 1\n"), 2;
  if (!path) return cases_is_write_suite(stdout, scale) < 0;
  if (lines_read(path, &old)) return fprintf(stderr, "gen_suite: cannot read %s: %s\n", path, strerror(errno)), 1;
  rc = write_merged(path, &old, scale);
  for (i = 0; i < old.n; i++) free(old.v[i]);
  free(old.v);
  return rc ? 1 : 0;
}

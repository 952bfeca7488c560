/*
** gen_suite: (re)writes the generated cases of a suite file: IndexShare
** (lines starting "family=is.", cases_is_write_suite), CSA ratio 128
** ("family=csa128.", cases_csa_write_suite) and CSA ratio 4 ("family=csa4.",
** cases_csa4_write_suite); with --nightly, the nightly suite's
** (cases_*_write_nightly: every gate line plus the nightly additions).
**
**   gen_suite [--scale N | --nightly] [PATH]
**
** Without PATH the specs go to stdout, IndexShare first.  With PATH, the
** file's other lines (its '#' header, other operators' specs) are kept where
** they are and each group's specs are replaced by its writer's, at the place
** the first of them stood (after the rest when there were none).  The whole
** file is generated in memory first and only then written to PATH.tmp and
** renamed over PATH, so a failure, or a generator that aborts, leaves the old
** file whole and no PATH.tmp behind.
**
** GEN_SUITE_ABORT_IN=NAME (a group's name, "IndexShare", ...) aborts the
** process while that group is generated: cases/tests/gen_suite_abort.cmake's
** stand-in for a generator that crashes.
**
**   gen_suite corpus/gate.suite                # the committed gate suite
**   gen_suite --nightly corpus/nightly.suite   # the committed nightly suite
*/
#include "cases/csa128_cases.h"
#include "cases/csa4_cases.h"
#include "cases/index_share_cases.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One generated group of lines: the prefix that marks them and their gate and nightly writers. */
typedef struct suite_group {
  const char *prefix, *name;
  int (*write)(FILE *out, int scale);
  int (*write_nightly)(FILE *out);
} suite_group;

static const suite_group groups[] = {
    {"family=is.", "IndexShare", cases_is_write_suite, cases_is_write_nightly},
    {"family=csa128.", "CSA ratio-128", cases_csa_write_suite, cases_csa_write_nightly},
    {"family=csa4.", "CSA ratio-4", cases_csa4_write_suite, cases_csa4_write_nightly},
};
#define GROUP_COUNT ((int)(sizeof groups / sizeof groups[0]))

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

/* Group g's lines: the nightly suite's (scale 0) or the gate's at scale. */
static int group_write(int g, FILE *out, int scale) {
  const char *abort_in = getenv("GEN_SUITE_ABORT_IN");
  if (abort_in && !strcmp(abort_in, groups[g].name)) abort();
  return scale ? groups[g].write(out, scale) : groups[g].write_nightly(out);
}

/* The group whose line s is; -1 for a line of no group. */
static int line_group(const char *s) {
  int g;
  for (g = 0; g < GROUP_COUNT; g++)
    if (!strncmp(s, groups[g].prefix, strlen(groups[g].prefix))) return g;
  return -1;
}

/* The merged file's text (see the header) into *text, *len bytes; nonzero when a group failed. */
static int merge_to_memory(const lines *old, int scale, int n[GROUP_COUNT], char **text, size_t *len) {
  int i, g, at[GROUP_COUNT], failed = 0;
  FILE *f = open_memstream(text, len);
  if (!f) return -1;
  for (g = 0; g < GROUP_COUNT; g++) at[g] = old->n, n[g] = -1;
  for (i = old->n - 1; i >= 0; i--)
    if ((g = line_group(old->v[i])) >= 0) at[g] = i;
  for (i = 0; i <= old->n; i++) {
    for (g = 0; g < GROUP_COUNT; g++)
      if (at[g] == i) n[g] = group_write(g, f, scale);
    if (i < old->n && line_group(old->v[i]) < 0) fprintf(f, "%s\n", old->v[i]);
  }
  for (g = 0; g < GROUP_COUNT; g++)
    if (n[g] < 0) failed = 1;
  return fclose(f) || failed ? -1 : 0;
}

static int write_merged(const char *path, const lines *old, int scale) {
  char tmp[4096], *text = NULL;
  size_t len = 0;
  int g, n[GROUP_COUNT], bad;
  FILE *f;
  if (merge_to_memory(old, scale, n, &text, &len)) {
    free(text);
    return fprintf(stderr, "gen_suite: generating %s failed; it is unchanged\n", path), -1;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if (!(f = fopen(tmp, "w"))) {
    free(text);
    return fprintf(stderr, "gen_suite: cannot write %s: %s\n", tmp, strerror(errno)), -1;
  }
  bad = fwrite(text, 1, len, f) != len;
  bad |= fclose(f) != 0; /* closed even when the write fell short */
  if (bad || rename(tmp, path)) {
    fprintf(stderr, "gen_suite: writing %s failed; it is unchanged\n", path);
    remove(tmp);
    free(text);
    return -1;
  }
  free(text);
  for (g = 0; g < GROUP_COUNT; g++) fprintf(stderr, "gen_suite: %d %s specs in %s\n", n[g], groups[g].name, path);
  return 0;
}

/* Every group to stdout, in table order. */
static int write_stdout(int scale) {
  int g;
  for (g = 0; g < GROUP_COUNT; g++)
    if (group_write(g, stdout, scale) < 0) return -1;
  return 0;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  int scale = 1, nightly = 0, i, rc;
  lines old;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--scale") && i + 1 < argc) scale = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--nightly")) nightly = 1;
    else if (argv[i][0] != '-' && !path) path = argv[i];
    else return fprintf(stderr, "usage: gen_suite [--scale N | --nightly] [PATH]\n"), 2;
  }
  if (scale < 1) return fprintf(stderr, "gen_suite: --scale must be >= 1\n"), 2;
  if (nightly && scale != 1) return fprintf(stderr, "gen_suite: --nightly has no --scale\n"), 2;
  if (nightly) scale = 0; /* group_write: the nightly writers */
  if (!path) return write_stdout(scale) ? 1 : 0;
  if (lines_read(path, &old)) return fprintf(stderr, "gen_suite: cannot read %s: %s\n", path, strerror(errno)), 1;
  rc = write_merged(path, &old, scale);
  for (i = 0; i < old.n; i++) free(old.v[i]);
  free(old.v);
  return rc ? 1 : 0;
}

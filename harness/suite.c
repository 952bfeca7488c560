/*
** suite.c: see suite.h.
*/
#include "harness/suite.h"
#include "cases/case_spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *suite_default_dir(void) {
  const char *env = getenv("BITGATE_CORPUS");
  return env && *env ? env : BITGATE_SOURCE_DIR "/corpus";
}

static int suite_push(suite *s, const char *line) {
  char **grown = realloc(s->specs, (size_t)(s->count + 1) * sizeof *grown);
  if (!grown) return -1;
  s->specs = grown;
  if (!(s->specs[s->count] = strdup(line))) return -1;
  s->count++;
  return 0;
}

/* Appends the specs of the file at path to out; 1 when it does not exist, 0, or -1 (err set). */
static int suite_read_file(const char *path, suite *out, char *err, size_t err_len) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  FILE *f;
  char family[64];
  int rc = 0, number = 0;
  if (!(f = fopen(path, "r"))) {
    if (errno == ENOENT) return 1;
    snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
    return -1;
  }
  while ((len = getline(&line, &cap, f)) >= 0) {
    number++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
      line[--len] = '\0';
    if (len == 0 || line[0] == '#') continue;
    /* without a family a line has no case id: it would run as 'invalid.00000000', far from its line */
    if (case_spec_get(line, "family", family, sizeof family) != 0 || !family[0]) {
      snprintf(err, err_len, "%s:%d: not a case spec (no family=NAME): '%.60s%s'", path, number, line,
               len > 60 ? "..." : "");
      rc = -1;
      break;
    }
    if (suite_push(out, line) != 0) {
      snprintf(err, err_len, "out of memory reading %s", path);
      rc = -1;
      break;
    }
  }
  free(line);
  fclose(f);
  return rc;
}

int suite_load(const char *dir, const char *name, suite *out, char *err, size_t err_len) {
  char path[4096];
  int rc;
  out->specs = NULL;
  out->count = 0;
  if (!*name || strchr(name, '/')) {
    snprintf(err, err_len, "suite name '%s' is not a plain name", name);
    return -1;
  }
  snprintf(path, sizeof path, "%s/%s.suite", dir, name);
  if ((rc = suite_read_file(path, out, err, err_len)) == 1)
    snprintf(err, err_len, "cannot read suite '%s' at %s: %s", name, path, strerror(ENOENT));
  if (rc == 0 && !strcmp(name, "gate")) { /* shrunk regressions join gate (bitgate shrink) */
    snprintf(path, sizeof path, "%s/%s", dir, SUITE_REGRESSIONS);
    rc = suite_read_file(path, out, err, err_len) < 0 ? -1 : 0;
  }
  if (rc) suite_free(out);
  return rc ? -1 : 0;
}

void suite_free(suite *s) {
  int i;
  for (i = 0; i < s->count; i++) free(s->specs[i]);
  free(s->specs);
  s->specs = NULL;
  s->count = 0;
}

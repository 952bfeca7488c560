/*
** case_times.c: see case_times.h.
*/
#include "harness/case_times.h"

#include "cases/case_spec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void case_times_path(const char *dir, const char *suite, char *path, size_t len) {
  snprintf(path, len, "%s/%s.times", dir, suite);
}

/* One case line: "<id> <ms>", blanks around either; 0 parsed, -1 not such a line. */
static int parse_line(char *line, char **id, double *ms) {
  char *end, *p = line + strspn(line, " \t");
  size_t n = strcspn(p, " \t\r\n");
  if (n == 0 || n >= CASE_ID_MAX) return -1;
  *id = p;
  p += n;
  if (*p != ' ' && *p != '\t') return -1; /* the id ends the line (or the file): no time */
  *p++ = '\0';
  errno = 0;
  *ms = strtod(p, &end);
  if (end == p || errno || !isfinite(*ms) || *ms < 0) return -1;
  return end[strspn(end, " \t\r\n")] == '\0' ? 0 : -1;
}

int case_times_read(const char *path, void (*each)(void *ctx, const char *case_id, double ms), void *ctx,
                    char *err, size_t err_len) {
  char line[512];
  int lineno = 0, rc = 0;
  FILE *f = fopen(path, "r");
  if (!f && errno == ENOENT) return 1;
  if (!f) {
    snprintf(err, err_len, "cannot read case times '%s': %s", path, strerror(errno));
    return -1;
  }
  while (!rc && fgets(line, sizeof line, f)) {
    const char *p = line + strspn(line, " \t\r\n");
    char shown[81], *id;
    double ms;
    lineno++;
    snprintf(shown, sizeof shown, "%.*s", (int)strcspn(p, "\r\n"), p); /* parse_line cuts the line */
    if (!strchr(line, '\n') && !feof(f)) {
      snprintf(err, err_len, "%s:%d: line longer than %d characters", path, lineno, (int)sizeof line - 2);
      rc = -1;
    } else if (*p == '\0' || *p == '#') {
      continue;
    } else if (parse_line(line, &id, &ms) != 0) {
      snprintf(err, err_len, "%s:%d: expected '<case id> <milliseconds>' (a time >= 0), got '%s'", path, lineno,
               shown);
      rc = -1;
    } else {
      each(ctx, id, ms);
    }
  }
  if (!rc && ferror(f)) {
    snprintf(err, err_len, "cannot read case times '%s': %s", path, strerror(errno));
    rc = -1;
  }
  fclose(f);
  return rc;
}

static int heaviest_first(const void *a, const void *b) {
  const case_time *x = a, *y = b;
  if (x->ms != y->ms) return x->ms < y->ms ? 1 : -1;
  return strcmp(x->case_id, y->case_id);
}

int case_times_write(FILE *f, const char *header, case_time *times, int n) {
  const char *p = header;
  int i;
  while (p && *p) {
    const size_t len = strcspn(p, "\n");
    fprintf(f, "# %.*s\n", (int)len, p);
    p += len + (p[len] == '\n');
  }
  if (n > 0) qsort(times, (size_t)n, sizeof *times, heaviest_first);
  for (i = 0; i < n; i++) fprintf(f, "%s %.1f\n", times[i].case_id, times[i].ms);
  return fflush(f) || ferror(f) ? -1 : 0;
}

/*
** known_failures.c: see known_failures.h.  The list is short (a handful of
** lines a team keeps on purpose), so lookups are linear scans.
*/
#include "harness/known_failures.h"
#include "harness/gate.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Statuses no waiver may hide (known_failures.h says why). */
static int status_unwaivable(const char *s) {
  return !strcmp(s, "nondeterministic") || !strcmp(s, "frozen_changed") || !strcmp(s, "unpinned");
}

static int bad_line(char *err, size_t err_len, const char *path, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int bad_line(char *err, size_t err_len, const char *path, int line, const char *fmt, ...) {
  va_list ap;
  int used = snprintf(err, err_len, "%s:%d: ", path, line);
  va_start(ap, fmt);
  if (used >= 0 && (size_t)used < err_len) vsnprintf(err + used, err_len - (size_t)used, fmt, ap);
  va_end(ap);
  return -1;
}

/* A case id: lowercase words joined by '.', the last one 8 hex digits. */
static int case_id_valid(const char *id) {
  const char *dot = strrchr(id, '.');
  const char *p;
  if (!dot || dot == id || strlen(dot + 1) != 8) return 0;
  for (p = dot + 1; *p; p++)
    if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p)) return 0;
  for (p = id; p < dot; p++)
    if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '.' || *p == '_' || *p == '-')) return 0;
  return 1;
}

/* Splits off the next blank-separated word of *s (NUL-terminating it); NULL at the end. */
static char *next_word(char **s) {
  char *w = *s;
  while (*w == ' ' || *w == '\t') w++;
  if (!*w) return NULL;
  *s = w + strcspn(w, " \t");
  if (**s) *(*s)++ = '\0';
  return w;
}

/* Parses one non-comment line (modified in place) into e; 0 or -1 with err. */
static int parse_entry(char *text, const char *path, int line, known_failure *e, char *err, size_t err_len) {
  char *id = next_word(&text), *lane_text = next_word(&text), *owner = next_word(&text), *reason = text;
  int l;
  memset(e, 0, sizeof *e);
  e->line = line;
  if (!owner) return bad_line(err, err_len, path, line, "expected CASE_ID LANE OWNER REASON..., got too few fields");
  if (!case_id_valid(id) || strlen(id) >= sizeof e->case_id)
    return bad_line(err, err_len, path, line, "'%s' is not a case id (family.hex8, e.g. is.capfront.1f3c9a02)", id);
  for (l = 0; l < LANE_COUNT && strcmp(lane_text, lane_name((lane)l)); l++) {}
  if (l == LANE_COUNT)
    return bad_line(err, err_len, path, line, "unknown lane '%s' (lanes: oracle, eager, capture, poison)", lane_text);
  while (*reason == ' ' || *reason == '\t') reason++;
  if (!*reason) return bad_line(err, err_len, path, line, "entry %s %s has no reason after the owner", id, lane_text);
  if (strlen(owner) >= sizeof e->owner) return bad_line(err, err_len, path, line, "owner '%.40s...' is too long", owner);
  snprintf(e->case_id, sizeof e->case_id, "%s", id);
  snprintf(e->owner, sizeof e->owner, "%s", owner);
  snprintf(e->reason, sizeof e->reason, "%s", reason); /* a longer reason is cut: the file keeps it whole */
  e->lane = (lane)l;
  return 0;
}

int known_failures_parse(known_failures *kf, const char *path, const char *text, char *err, size_t err_len) {
  char buf[2048];
  int line = 0, i;
  memset(kf, 0, sizeof *kf);
  snprintf(kf->path, sizeof kf->path, "%s", path);
  while (*text) {
    size_t len = strcspn(text, "\n");
    known_failure e, *grown;
    const char *first;
    line++;
    if (len >= sizeof buf) {
      bad_line(err, err_len, path, line, "line too long");
      goto fail;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    text += len + (text[len] == '\n');
    if (len && buf[len - 1] == '\r') buf[len - 1] = '\0';
    for (first = buf; *first == ' ' || *first == '\t'; first++) {}
    if (!*first || *first == '#') continue; /* blank or comment */
    if (parse_entry(buf, path, line, &e, err, err_len) != 0) goto fail;
    for (i = 0; i < kf->n; i++)
      if (kf->entries[i].lane == e.lane && !strcmp(kf->entries[i].case_id, e.case_id)) {
        bad_line(err, err_len, path, line, "%s %s is already listed at line %d", e.case_id, lane_name(e.lane),
                 kf->entries[i].line);
        goto fail;
      }
    if (!(grown = realloc(kf->entries, (size_t)(kf->n + 1) * sizeof *grown))) {
      bad_line(err, err_len, path, line, "out of memory");
      goto fail;
    }
    kf->entries = grown;
    kf->entries[kf->n++] = e;
  }
  return 0;
fail:
  known_failures_free(kf);
  return -1;
}

int known_failures_load(known_failures *kf, const char *path, int optional, char *err, size_t err_len) {
  FILE *f = fopen(path, "rb");
  char *text;
  long n;
  int rc;
  memset(kf, 0, sizeof *kf);
  if (!f) {
    if (errno == ENOENT && optional) return 0;
    snprintf(err, err_len, "cannot read the known-failures file %s: %s", path, strerror(errno));
    return -1;
  }
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
      !(text = malloc((size_t)n + 1))) {
    fclose(f);
    snprintf(err, err_len, "cannot read the known-failures file %s", path);
    return -1;
  }
  text[fread(text, 1, (size_t)n, f)] = '\0';
  fclose(f);
  if (strlen(text) != (size_t)n) {
    free(text);
    snprintf(err, err_len, "%s: not a text file (it holds a NUL byte)", path);
    return -1;
  }
  rc = known_failures_parse(kf, path, text, err, err_len);
  free(text);
  return rc;
}

void known_failures_free(known_failures *kf) {
  free(kf->entries);
  kf->entries = NULL;
  kf->n = 0;
}

/* The row's message becomes "waived STATUS (...): MESSAGE"; the repro at its end stays whole. */
static void row_waive(result_row *row, const known_failures *kf, const known_failure *e) {
  char msg[sizeof row->message];
  const char *repro = strstr(row->message, "; repro: ");
  size_t used = (size_t)snprintf(msg, sizeof msg, "waived %s (known failure, owner %s: %.200s; %.200s:%d): ",
                                 row->status, e->owner, e->reason, kf->path, e->line);
  size_t tail = repro ? strlen(repro) : 0, room;
  if (used >= sizeof msg) used = sizeof msg - 1;
  room = sizeof msg - 1 - used;
  if (strlen(row->message) <= room || tail >= room) {
    snprintf(msg + used, sizeof msg - used, "%s", row->message);
  } else { /* too long: cut the middle, keep the repro command */
    snprintf(msg + used, room - tail + 1, "%s", row->message);
    snprintf(msg + used + room - tail, tail + 1, "%s", repro);
  }
  snprintf(row->status, sizeof row->status, "waived");
  memcpy(row->message, msg, sizeof msg);
}

int known_failures_apply(known_failures *kf, const char *case_id, case_report *r) {
  int i, j, waived = 0;
  for (j = 0; j < kf->n; j++) {
    known_failure *e = &kf->entries[j];
    if (strcmp(e->case_id, case_id)) continue;
    for (i = 0; i < r->n; i++) {
      result_row *row = &r->rows[i];
      if (strcmp(row->lane, lane_name(e->lane))) continue;
      e->ran = 1;
      if (!gate_status_fails(row->status)) continue;
      e->failing_rows++;
      if (status_unwaivable(row->status)) continue;
      row_waive(row, kf, e);
      e->waived_rows++;
      waived++;
    }
  }
  if (!waived) return 0;
  kf->waived_rows += waived;
  r->failed = 0;
  for (i = 0; i < r->n; i++) r->failed += gate_status_fails(r->rows[i].status);
  if (!r->failed) kf->waived_cases++;
  return waived;
}

int known_failures_print(const known_failures *kf, FILE *out) {
  int j, stale = 0, not_run = 0;
  for (j = 0; j < kf->n; j++) {
    const known_failure *e = &kf->entries[j];
    if (!e->ran) {
      not_run++;
    } else if (!e->failing_rows) {
      fprintf(out, "  stale waiver: %s %s (owner %s, %s:%d) no longer fails as listed; remove the line\n", e->case_id,
              lane_name(e->lane), e->owner, kf->path, e->line);
      stale++;
    }
  }
  if (kf->n)
    fprintf(out, "  known failures (%s): %d listed, %lld results waived in %lld cases, %d stale, %d not run\n",
            kf->path, kf->n, kf->waived_rows, kf->waived_cases, stale, not_run);
  return stale;
}

/*
** golden_digests.c: reading and writing corpus/NAME.digests (see
** golden_digests.h).
**
** The reader trusts nothing: every header line, every entry's four fields,
** the entry count and the final newline are checked, and the first problem
** is reported as "PATH:LINE: what", so a truncated or garbled file is a
** clear error rather than a crash, a silent pass or a flood of "changed".
*/
#include "harness/golden_digests.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY_GROWTH 4096

void golden_digests_path(const char *dir, const char *suite, char *path, size_t len) {
  snprintf(path, len, "%s/%s.digests", dir, suite);
}

/* ---- building ---------------------------------------------------------- */

static int copy_field(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n == 0 || n >= cap) return -1;
  memcpy(dst, src, n + 1);
  return 0;
}

int golden_digests_append(golden_digests *d, const char *case_id, int step, const char *name, const char *value) {
  golden_entry *e;
  if (d->n == d->cap) {
    long long cap = d->cap + ENTRY_GROWTH;
    golden_entry *grown = realloc(d->entries, (size_t)cap * sizeof *grown);
    if (!grown) return -1;
    d->entries = grown;
    d->cap = cap;
  }
  e = &d->entries[d->n];
  e->step = step;
  if (copy_field(e->case_id, sizeof e->case_id, case_id) || copy_field(e->name, sizeof e->name, name) ||
      copy_field(e->value, sizeof e->value, value))
    return -1;
  d->n++;
  return 0;
}

void golden_digests_clear(golden_digests *d) {
  free(d->cases);
  d->cases = NULL;
  d->n_cases = 0;
  d->n = 0;
}

void golden_digests_free(golden_digests *d) {
  free(d->entries);
  free(d->cases);
  memset(d, 0, sizeof *d);
}

/* ---- the case index -------------------------------------------------------- */

static int case_index_order(const void *a, const void *b) {
  const golden_case_index *x = a, *y = b;
  int c = strcmp(x->case_id, y->case_id);
  return c ? c : (x->first > y->first) - (x->first < y->first);
}

/*
** Indexes each case's run of entries by id.  A case whose entries are split
** in two places is an error (lines: entry i is on line first_line + i).
*/
static int build_case_index(golden_digests *d, long long first_line, char *why, size_t len) {
  long long i, k = 0;
  free(d->cases);
  d->cases = NULL;
  d->n_cases = 0;
  for (i = 0; i < d->n; i++) k += i == 0 || strcmp(d->entries[i].case_id, d->entries[i - 1].case_id) != 0;
  if (k && !(d->cases = malloc((size_t)k * sizeof *d->cases))) return snprintf(why, len, "out of memory"), -1;
  for (i = 0; i < d->n; i++) {
    if (i && !strcmp(d->entries[i].case_id, d->entries[i - 1].case_id)) {
      d->cases[d->n_cases - 1].count++;
      continue;
    }
    d->cases[d->n_cases].case_id = d->entries[i].case_id;
    d->cases[d->n_cases].first = i;
    d->cases[d->n_cases].count = 1;
    d->n_cases++;
  }
  if (d->n_cases > 0) qsort(d->cases, (size_t)d->n_cases, sizeof *d->cases, case_index_order); /* NULL when empty */
  for (i = 1; i < d->n_cases; i++)
    if (!strcmp(d->cases[i].case_id, d->cases[i - 1].case_id))
      return snprintf(why, len, "%lld: case %s appears again (first at line %lld); each case's entries go together",
                      first_line + d->cases[i].first, d->cases[i].case_id, first_line + d->cases[i - 1].first),
             -1;
  return 0;
}

const golden_entry *golden_digests_find_case(const golden_digests *d, const char *case_id, long long *count) {
  long long lo = 0, hi = d->n_cases;
  while (lo < hi) {
    long long mid = lo + (hi - lo) / 2;
    int c = strcmp(d->cases[mid].case_id, case_id);
    if (c == 0) {
      *count = d->cases[mid].count;
      return &d->entries[d->cases[mid].first];
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  *count = 0;
  return NULL;
}

/* ---- reading --------------------------------------------------------------- */

static int all_chars(const char *s, const char *extra) {
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr(extra, *s)) return 0;
  return 1;
}

static int parse_count(const char *s, long long *out) {
  char *end;
  if (!isdigit((unsigned char)*s)) return -1;
  errno = 0;
  *out = strtoll(s, &end, 10);
  return errno || *end || *out > 1000000000LL ? -1 : 0;
}

/* What is wrong with a tensor or rejection value, or NULL. */
static const char *value_problem(const char *name, const char *value) {
  size_t n = strlen(value), i;
  if (!strcmp(name, GOLDEN_REJECTED)) {
    int known = !strncmp(value, "contract:", 9) || !strncmp(value, "index:", 6);
    return known ? NULL : "a rejection must start 'contract:' or 'index:'";
  }
  if (!strchr(value, '[') || n < 34 || value[n - 33] != ':' || value[n - 34] != ']')
    return "a tensor value must be DTYPE[SHAPE]:HEX with 32 hex digits";
  for (i = n - 32; i < n; i++)
    if (!isxdigit((unsigned char)value[i]) || isupper((unsigned char)value[i]))
      return "the digest must be 32 lowercase hex digits";
  return NULL;
}

/* Parses one entry line into d; NULL, or what is wrong with it. */
static const char *parse_entry(golden_digests *d, char *line) {
  char *field[5], *save = NULL;
  const char *why;
  long long step, i;
  int n = 0;
  for (field[n] = strtok_r(line, " ", &save); field[n] && n < 5; field[n] = strtok_r(NULL, " ", &save)) n++;
  if (n != 4) return "an entry needs four fields: ID STEP NAME VALUE";
  if (strlen(field[0]) >= sizeof d->entries->case_id || !strchr(field[0], '.') || !all_chars(field[0], "._-"))
    return "the case id is not an id (family.hash)";
  if (parse_count(field[1], &step) != 0) return "the step is not a whole number";
  if (strlen(field[2]) >= sizeof d->entries->name || !all_chars(field[2], "_")) return "the tensor name is not a name";
  if (strlen(field[3]) >= sizeof d->entries->value) return "the value is too long";
  if ((why = value_problem(field[2], field[3]))) return why;
  for (i = d->n - 1; i >= 0 && !strcmp(d->entries[i].case_id, field[0]); i--) {
    if (d->entries[i].step > step) return "steps of a case must not go backwards";
    if (d->entries[i].step == step && !strcmp(d->entries[i].name, field[2]))
      return "this case, step and tensor already has an entry";
  }
  return golden_digests_append(d, field[0], (int)step, field[2], field[3]) ? "out of memory" : NULL;
}

static const char *const header_keys[] = {"bitgate-digests", "oracle", "numerics", "algorithm", "suite", "entries"};
#define HEADER_LINES ((int)(sizeof header_keys / sizeof header_keys[0]))

/* Parses header line k ("KEY VALUE") into d; NULL, or what is wrong. */
static const char *parse_header(golden_digests *d, int k, char *line, long long *entries, const char *expect_suite) {
  char *key, *value, *extra, *save = NULL;
  long long v = 0;
  key = strtok_r(line, " ", &save);
  value = strtok_r(NULL, " ", &save);
  extra = strtok_r(NULL, " ", &save);
  if (!key || !value || extra || strcmp(key, header_keys[k])) return "expected the header line"; /* caller names it */
  if (k == 3) return strcmp(value, GOLDEN_DIGESTS_ALGORITHM) ? "unknown digest algorithm (expected xxh3-128)" : NULL;
  if (k == 4) {
    if (strlen(value) >= sizeof d->suite || !all_chars(value, "_-")) return "the suite is not a plain name";
    if (expect_suite && strcmp(value, expect_suite)) return "the file pins another suite";
    snprintf(d->suite, sizeof d->suite, "%s", value);
    return NULL;
  }
  if (parse_count(value, &v) != 0) return "the value is not a whole number";
  if (k == 0 && v != GOLDEN_DIGESTS_FORMAT) return "unknown format version (expected 1)";
  if (k == 1) d->oracle_version = (int)v;
  if (k == 2) d->numerics_version = (int)v;
  if (k == 5) *entries = v;
  return NULL;
}

int golden_digests_read(const char *path, int header_only, const char *expect_suite, golden_digests *out, char *err,
                        size_t err_len) {
  char *line = NULL, why_index[256];
  const char *why = NULL;
  size_t cap = 0;
  ssize_t len;
  long long lineno = 0, entries = -1, first_entry_line = 0;
  int k = 0, newline = 1;
  FILE *f;
  memset(out, 0, sizeof *out);
  if (!(f = fopen(path, "r"))) {
    if (errno == ENOENT) return GOLDEN_DIGESTS_ABSENT;
    snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
    return GOLDEN_DIGESTS_BAD;
  }
  while (!why && (len = getline(&line, &cap, f)) >= 0) {
    lineno++;
    newline = len > 0 && line[len - 1] == '\n';
    if (newline) line[--len] = '\0';
    if ((size_t)len != strlen(line)) why = "the line holds a NUL byte (binary data?)";
    else if (line[0] == '#' && k < HEADER_LINES) continue;
    else if (k < HEADER_LINES) {
      if ((why = parse_header(out, k, line, &entries, expect_suite)) && !strcmp(why, "expected the header line"))
        snprintf(why_index, sizeof why_index, "expected the header line '%s VALUE'", header_keys[k]), why = why_index;
      if (++k == HEADER_LINES) {
        first_entry_line = lineno + 1;
        if (header_only) break;
      }
    } else if (out->n >= entries) {
      why = "more entries than the header's 'entries' count";
    } else {
      why = parse_entry(out, line);
    }
  }
  free(line);
  fclose(f);
  if (!why && k < HEADER_LINES) why = "the header is incomplete (file cut short?)";
  if (!why && !header_only && !newline) why = "the last line has no newline (file cut short?)";
  if (!why && !header_only && out->n != entries) {
    snprintf(why_index, sizeof why_index, "the header promises %lld entries, the file holds %lld (file cut short?)",
             entries, out->n);
    why = why_index;
  }
  if (!why && !header_only && build_case_index(out, first_entry_line, why_index, sizeof why_index) != 0) {
    snprintf(err, err_len, "%s:%s", path, why_index);
    golden_digests_free(out);
    return GOLDEN_DIGESTS_BAD;
  }
  if (why) {
    snprintf(err, err_len, "%s:%lld: %s", path, lineno ? lineno : 1, why);
    golden_digests_free(out);
    return GOLDEN_DIGESTS_BAD;
  }
  return 0;
}

/* ---- writing --------------------------------------------------------------- */

int golden_digests_write(const golden_digests *d, const char *path, char *err, size_t err_len) {
  char tmp[4200];
  long long i;
  FILE *f;
  int bad;
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if (!(f = fopen(tmp, "w"))) return snprintf(err, err_len, "cannot write %s: %s", tmp, strerror(errno)), -1;
  fprintf(f,
          "# bitgate frozen-oracle digests (harness/golden_digests.h describes the format).\n"
          "# Do not edit: re-pin with `bitgate golden pin --suite %s --reason TEXT` after an\n"
          "# oracle version bump; corpus/CHANGES says why each pin was made.\n"
          "bitgate-digests %d\noracle %d\nnumerics %d\nalgorithm %s\nsuite %s\nentries %lld\n",
          d->suite, GOLDEN_DIGESTS_FORMAT, d->oracle_version, d->numerics_version, GOLDEN_DIGESTS_ALGORITHM, d->suite,
          d->n);
  for (i = 0; i < d->n; i++)
    fprintf(f, "%s %d %s %s\n", d->entries[i].case_id, d->entries[i].step, d->entries[i].name, d->entries[i].value);
  bad = ferror(f);
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    snprintf(err, err_len, "cannot write %s: %s", bad ? tmp : path, strerror(errno));
    remove(tmp);
    return -1;
  }
  return 0;
}

/*
** test_golden.c: the frozen oracle as CI and a kernel developer meet it
** (issue "Corpus and goldens", item 2): a tampered digest in a copy of the
** committed corpus/gate.digests fails the oracle lane naming exactly that
** case, step and tensor (or rejection); a truncated or garbled digests file
** is exit 3 naming the file and the line, never a crash; a suite case
** without digests fails as "unpinned"; and `bitgate golden pin` refuses
** without a version bump or a one-line reason, and logs each pin in CHANGES.
** Digests honour DESIGN.md's one equivalence: NaNs of one dtype are equal.
*/
#include "harness/frozen_oracle.h"
#include "harness/tests/bitgate_process.h"
#include "oracle/oracle_version.h"
#include "oracle/tensor.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(golden, .init = make_tmp, .fini = remove_tmp);

static char *read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *text;
  long n;
  cr_assert(f, "cannot read %s", path);
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  rewind(f);
  text = malloc((size_t)n + 1);
  cr_assert(text && fread(text, 1, (size_t)n, f) == (size_t)n);
  text[n] = '\0';
  fclose(f);
  if (len) *len = (size_t)n;
  return text;
}

static void write_text(const char *name, const char *text, size_t len) {
  char path[512];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  f = fopen(path, "wb");
  cr_assert(f, "%s", path);
  cr_assert(fwrite(text, 1, len, f) == len);
  fclose(f);
}

/* Copies corpus/gate.{suite,digests} into tmp; returns the digests' text. */
static char *copy_gate(size_t *len) {
  char path[512];
  char *suite, *digests;
  size_t n;
  snprintf(path, sizeof path, "%s/corpus/gate.suite", getenv("BITGATE_SOURCE_DIR"));
  suite = read_text(path, &n);
  write_text("gate.suite", suite, n);
  free(suite);
  snprintf(path, sizeof path, "%s/corpus/gate.digests", getenv("BITGATE_SOURCE_DIR"));
  digests = read_text(path, len);
  write_text("gate.digests", digests, *len);
  return digests;
}

/* The start of 1-based line n of text. */
static char *line_at(char *text, int n) {
  while (--n > 0) {
    text = strchr(text, '\n');
    cr_assert(text, "no such line");
    text++;
  }
  return text;
}

/* The first entry of a case whose id starts with prefix, named name, at a step >= min_step. */
static char *find_entry(char *digests, const char *prefix, const char *name, int min_step) {
  char *line, field[128];
  int step;
  for (line = digests; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
    if (!strncmp(line, prefix, strlen(prefix)) && sscanf(line, "%*s %d %127s", &step, field) == 2 &&
        step >= min_step && !strcmp(field, name))
      return line;
  cr_assert_fail("no %s entry %s at step >= %d in gate.digests", prefix, name, min_step);
  return NULL;
}

static int fail_lines(const char *out) {
  int n = 0;
  for (; (out = strstr(out, "FAIL ")); out++) n++;
  return n;
}

/*
** Tampers the last character of the entry (a digest's last hex digit, or a
** rejection's column) in the copy, runs that one case, and expects one
** failure naming it.  want_fmt gets id, step, the value now and the pinned one.
*/
static void expect_tamper_named(const char *prefix, const char *name, int min_step, const char *want_fmt) {
  char db[400], id[96], value[128], tampered[128], want[1024];
  size_t len;
  char *digests = copy_gate(&len), *line = find_entry(digests, prefix, name, min_step), *last;
  int step;
  outcome *o;
  cr_assert(sscanf(line, "%95s %d %*s %127s", id, &step, value) == 3);
  snprintf(db, sizeof db, "%s/r.db", tmp);
  o = RUN(NULL, "run", "--corpus", tmp, "--lanes", "oracle", "--filter", id, "--db", db);
  cr_assert_eq(o->status, 0, "untampered copy: %s%s", o->out, o->err);
  last = strchr(line, '\n') - 1;
  *last = *last == '0' ? '1' : '0';
  sscanf(line, "%*s %*d %*s %127s", tampered);
  write_text("gate.digests", digests, len);
  o = RUN(NULL, "run", "--corpus", tmp, "--lanes", "oracle", "--filter", id, "--db", db);
  snprintf(want, sizeof want, want_fmt, id, step, value, tampered);
  cr_expect_eq(o->status, 1, "%s%s", o->out, o->err);
  cr_expect(strstr(o->out, want) != NULL, "wanted '%s' in:\n%s", want, o->out);
  cr_expect_eq(fail_lines(o->out), 1, "%s", o->out);
  cr_expect(strstr(o->out, "1 changed, 0 unpinned") != NULL, "%s", o->out);
  free(digests);
}

Test(golden, tampered_digest_fails_naming_case_step_and_tensor) {
  expect_tamper_named("csa4.chain.", "present_index_key", 2,
                      "frozen oracle changed: %s step %d tensor present_index_key: digest %s, pinned %s; "
                      "re-pin with bitgate golden pin");
}

Test(golden, tampered_rejection_fails_naming_case_and_step) {
  expect_tamper_named("is.indexviol.", "rejected", 1,
                      "frozen oracle changed: %s step %d rejection: now %s, pinned %s; re-pin with bitgate golden pin");
}

/* ---- the digest itself ------------------------------------------------------ */

/* The entry value of a rank-1 tensor of n elements of dtype dt holding bytes. */
static void value_of(dtype dt, const void *bytes, long long n, char *out, size_t len) {
  tensor t = {.dt = dt, .rank = 1, .shape = {n}, .data = (void *)bytes};
  frozen_oracle_tensor_value(&t, out, len);
}

Test(golden, digests_treat_nans_of_one_dtype_as_equal_and_nothing_else) {
  /* Per dtype: a value, another NaN payload or sign, and +0 / -0 (which differ). */
  static const uint32_t f32_a[] = {0x3f800000u, 0x7fc00000u, 0x00000000u}, f32_b[] = {0x3f800000u, 0xffc00001u, 0u},
                        f32_z[] = {0x3f800000u, 0x7fc00000u, 0x80000000u};
  static const uint16_t f16_a[] = {0x3c00u, 0x7e00u, 0x0000u}, f16_b[] = {0x3c00u, 0x7c01u, 0x0000u},
                        f16_z[] = {0x3c00u, 0x7e00u, 0x8000u};
  static const uint16_t bf_a[] = {0x3f80u, 0x7fc0u, 0x0000u}, bf_b[] = {0x3f80u, 0xff81u, 0x0000u},
                        bf_z[] = {0x3f80u, 0x7fc0u, 0x8000u};
  static const uint16_t inf16[] = {0x3c00u, 0x7c00u, 0x0000u}; /* f16 infinity is not a NaN */
  char a[128], b[128];
  value_of(DTYPE_F32, f32_a, 3, a, sizeof a);
  value_of(DTYPE_F32, f32_b, 3, b, sizeof b);
  cr_expect_str_eq(a, b, "f32 NaN payloads");
  cr_expect(!strncmp(a, "f32[3]:", 7) && strlen(a) == 7 + 32, "%s", a);
  value_of(DTYPE_F32, f32_z, 3, b, sizeof b);
  cr_expect_str_neq(a, b, "f32 +0 and -0");
  value_of(DTYPE_F16, f16_a, 3, a, sizeof a);
  value_of(DTYPE_F16, f16_b, 3, b, sizeof b);
  cr_expect_str_eq(a, b, "f16 NaN payloads");
  value_of(DTYPE_F16, f16_z, 3, b, sizeof b);
  cr_expect_str_neq(a, b, "f16 +0 and -0");
  value_of(DTYPE_F16, inf16, 3, b, sizeof b);
  cr_expect_str_neq(a, b, "f16 infinity");
  value_of(DTYPE_BF16, bf_a, 3, a, sizeof a);
  value_of(DTYPE_BF16, bf_b, 3, b, sizeof b);
  cr_expect_str_eq(a, b, "bf16 NaN payloads");
  value_of(DTYPE_BF16, bf_z, 3, b, sizeof b);
  cr_expect_str_neq(a, b, "bf16 +0 and -0");
  value_of(DTYPE_U8, f32_a, 12, a, sizeof a); /* packed codes: bytes as they are */
  value_of(DTYPE_U8, f32_b, 12, b, sizeof b);
  cr_expect_str_neq(a, b, "u8 is not a float");
}

/* ---- truncated and garbled files ------------------------------------------ */

typedef enum damage { CUT_MID_LINE, CUT_AT_LINE, GARBAGE_LINE, NUL_BYTE, BAD_ALGORITHM, EMPTY, EXTRA_ENTRY } damage;

/* Writes a damaged copy of digests (len bytes) into tmp; returns the line the error must name. */
static int write_damaged(char *digests, size_t len, damage d) {
  static char buf[1 << 23];
  char *at;
  size_t n;
  int total = line_count(digests);
  cr_assert(len + 256 < sizeof buf);
  memcpy(buf, digests, len);
  n = len;
  switch (d) {
  case CUT_MID_LINE:
    n = (size_t)(line_at(buf, 200) - buf) + 20; /* line 200 loses its tail and newline */
    write_text("gate.digests", buf, n);
    return 200;
  case CUT_AT_LINE:
    n = (size_t)(line_at(buf, 201) - buf); /* entries promised but missing */
    write_text("gate.digests", buf, n);
    return 200;
  case GARBAGE_LINE:
    at = line_at(buf, 100);
    memset(at, 'x', (size_t)(strchr(at, '\n') - at));
    at[3] = ' ';
    write_text("gate.digests", buf, n);
    return 100;
  case NUL_BYTE:
    line_at(buf, 50)[10] = '\0';
    write_text("gate.digests", buf, n);
    return 50;
  case BAD_ALGORITHM:
    at = line_at(buf, 7);
    cr_assert(!strncmp(at, "algorithm xxh3-128\n", 19), "line 7 is the algorithm");
    memcpy(at, "algorithm md5-1234\n", 19);
    write_text("gate.digests", buf, n);
    return 7;
  case EMPTY:
    write_text("gate.digests", buf, 0);
    return 1;
  case EXTRA_ENTRY:
    at = line_at(buf, 20);
    memcpy(buf + n, at, (size_t)(strchr(at, '\n') - at) + 1);
    n += (size_t)(strchr(at, '\n') - at) + 1;
    write_text("gate.digests", buf, n);
    return total + 1;
  }
  cr_assert_fail("unknown damage %d", (int)d);
  return 0;
}

Test(golden, truncated_or_garbled_digests_are_exit_3_naming_file_and_line) {
  static const char *const names[] = {"cut mid-line", "cut at a line", "garbage line", "NUL byte",
                                      "bad algorithm", "empty",        "extra entry"};
  char db[400], want[600];
  size_t len;
  char *digests = copy_gate(&len);
  int d, line;
  snprintf(db, sizeof db, "%s/r.db", tmp);
  for (d = CUT_MID_LINE; d <= EXTRA_ENTRY; d++) {
    outcome *o;
    line = write_damaged(digests, len, (damage)d);
    o = RUN(NULL, "run", "--corpus", tmp, "--lanes", "oracle", "--filter", "none.*", "--db", db);
    snprintf(want, sizeof want, "%s/gate.digests:%d: ", tmp, line);
    cr_expect_eq(o->status, 3, "%s: status %d: %s", names[d], o->status, o->err);
    cr_expect(strstr(o->err, want) != NULL, "%s: wanted '%s' in '%s'", names[d], want, o->err);
    cr_expect_eq(line_count(o->err), 1, "%s: one line: '%s'", names[d], o->err);
  }
  free(digests);
}

/* ---- pinning ---------------------------------------------------------------- */

/* The first spec of the committed gate suite whose family starts with family. */
static void gate_spec(const char *family, char *spec, size_t len) {
  char path[512], key[80];
  FILE *f;
  snprintf(path, sizeof path, "%s/corpus/gate.suite", getenv("BITGATE_SOURCE_DIR"));
  snprintf(key, sizeof key, "family=%s", family);
  f = fopen(path, "r");
  cr_assert(f, "%s", path);
  while (fgets(spec, (int)len, f))
    if (spec[0] != '#' && strstr(spec, key)) break;
  fclose(f);
  cr_assert(strstr(spec, key), "no %s case in the gate", family);
}

static void write_suite(const char *const *families, int n) {
  static char text[65536];
  char spec[4096];
  int i;
  text[0] = '\0';
  for (i = 0; i < n; i++) {
    gate_spec(families[i], spec, sizeof spec);
    strncat(text, spec, sizeof text - strlen(text) - 1);
  }
  write_text("mini.suite", text, strlen(text));
}

static void set_pinned_version(int version) {
  char path[512], *text, *at, *end;
  size_t len;
  snprintf(path, sizeof path, "%s/mini.digests", tmp);
  text = read_text(path, &len);
  at = strstr(text, "\noracle ") + 8;
  end = strchr(at, '\n');
  {
    char *rebuilt = malloc(len + 32);
    int head = (int)(at - text);
    len = (size_t)sprintf(rebuilt, "%.*s%d%s", head, text, version, end);
    write_text("mini.digests", rebuilt, len);
    free(rebuilt);
  }
  free(text);
}

/* Flips the last hex digit of the first entry (the line after "entries N") in tmp/name. */
static void tamper_first_digest(const char *name) {
  char path[512], *text, *line, *eol;
  size_t len;
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  text = read_text(path, &len);
  line = strstr(text, "\nentries ");
  cr_assert(line && (line = strchr(line + 1, '\n')) != NULL, "no entries in %s", path);
  eol = strchr(++line, '\n');
  cr_assert(eol && eol > line, "no digest line in %s", path);
  eol[-1] = eol[-1] == '0' ? '1' : '0';
  write_text(name, text, len);
  free(text);
}

Test(golden, pin_needs_a_reason_and_a_version_bump_and_logs_changes) {
  static const char *const families[] = {"is.indexviol", "csa4.chain", "is.valid"};
  char db[400], path[512], want[200];
  char *changes;
  outcome *o;
  snprintf(db, sizeof db, "%s/r.db", tmp);
  snprintf(path, sizeof path, "%s/CHANGES", tmp);
  write_suite(families, 2);
  o = RUN(NULL, "golden", "pin", "--corpus", tmp, "--suite", "mini");
  cr_expect(o->status == 2 && strstr(o->err, "--reason") && line_count(o->err) == 1, "%d %s", o->status, o->err);
  cr_expect_eq(RUN(NULL, "golden", "pin", "--corpus", tmp, "--suite", "mini", "--reason", " ")->status, 2);
  cr_expect_eq(RUN(NULL, "golden", "pin", "--corpus", tmp, "--suite", "mini", "--reason", "two\nlines")->status, 2);
  cr_expect_eq(RUN(NULL, "golden", "frobnicate")->status, 2);

  o = RUN(NULL, "golden", "pin", "--corpus", tmp, "--suite", "mini", "--reason", "first pin");
  cr_assert_eq(o->status, 0, "no digests yet: the first pin is allowed: %s%s", o->out, o->err);
  o = RUN(NULL, "run", "--corpus", tmp, "--suite", "mini", "--lanes", "oracle", "--db", db);
  cr_expect_eq(o->status, 0, "%s%s", o->out, o->err);
  cr_expect(strstr(o->out, "frozen oracle: all 2 cases match") != NULL, "%s", o->out);

  o = RUN(NULL, "golden", "pin", "--corpus", tmp, "--suite", "mini", "--reason", "again");
  cr_expect_eq(o->status, 2, "same oracle version: refused: %s", o->err);
  cr_expect(strstr(o->err, "oracle_version.h") && line_count(o->err) == 1, "%s", o->err);

  set_pinned_version(ORACLE_VERSION + 1000); /* as if pinned by another oracle */
  o = RUN(NULL, "run", "--corpus", tmp, "--suite", "mini", "--lanes", "oracle", "--db", db);
  snprintf(want, sizeof want, "pins oracle %d", ORACLE_VERSION + 1000);
  cr_expect_eq(o->status, 1, "a stale pin fails the lane: %s", o->out);
  cr_expect(strstr(o->out, want) != NULL, "%s", o->out);
  o = RUN(NULL, "golden", "pin", "--corpus", tmp, "--suite", "mini", "--reason", "bumped the oracle");
  cr_expect_eq(o->status, 0, "%s%s", o->out, o->err);

  changes = read_text(path, NULL);
  cr_expect(strstr(changes, "mini: oracle none -> ") && strstr(changes, ": first pin\n"), "%s", changes);
  snprintf(want, sizeof want, "mini: oracle %d -> %d", ORACLE_VERSION + 1000, ORACLE_VERSION);
  cr_expect(strstr(changes, want) && strstr(changes, ": bumped the oracle\n"), "%s", changes);
  cr_expect(!strstr(changes, "again"), "a refused pin is not logged: %s", changes);
  free(changes);

  write_suite(families, 3); /* a case added to the suite since the pin */
  o = RUN(NULL, "run", "--corpus", tmp, "--suite", "mini", "--lanes", "oracle", "--db", db);
  cr_expect_eq(o->status, 1, "%s", o->out);
  cr_expect(strstr(o->out, "(unpinned): frozen oracle: is.valid.") != NULL, "%s", o->out);
  cr_expect(strstr(o->out, "0 changed, 1 unpinned") != NULL, "%s", o->out);

  /* Same version: adding cases may be pinned, changing a pinned one may not. */
  o = RUN(NULL, "golden", "pin", "--corpus", tmp, "--suite", "mini", "--reason", "a new regression case");
  cr_expect_eq(o->status, 0, "an additive pin at the same version: %s%s", o->out, o->err);
  o = RUN(NULL, "run", "--corpus", tmp, "--suite", "mini", "--lanes", "oracle", "--db", db);
  cr_expect(o->status == 0 && strstr(o->out, "frozen oracle: all 3 cases match"), "%s", o->out);
  changes = read_text(path, NULL);
  snprintf(want, sizeof want, "mini: oracle %d -> %d (numerics", ORACLE_VERSION, ORACLE_VERSION);
  cr_expect(strstr(changes, want) && strstr(changes, ": added 1: a new regression case\n"), "%s", changes);
  free(changes);
  tamper_first_digest("mini.digests");
  write_suite(families, 2); /* nothing new, and a pinned digest no longer reproduces */
  o = RUN(NULL, "golden", "pin", "--corpus", tmp, "--suite", "mini", "--reason", "sneaky");
  cr_expect_eq(o->status, 2, "a changed pinned digest needs a version bump: %s", o->err);
  cr_expect(strstr(o->err, "no longer matches its pinned digest") && strstr(o->err, "oracle_version.h"), "%s",
            o->err);
}

Test(golden, a_digests_file_without_entries_reads_as_empty) {
  /* UBSan found qsort called with NULL when a file pinned no case (a new suite, or shrink's first regression). */
  static const char text[] = "bitgate-digests 1\noracle 1\nnumerics 1\nalgorithm xxh3-128\nsuite gate\nentries 0\n";
  golden_digests d;
  char path[512], err[512];
  long long count = -1;
  write_text("empty.digests", text, sizeof text - 1);
  snprintf(path, sizeof path, "%s/empty.digests", tmp);
  cr_assert_eq(golden_digests_read(path, 0, "gate", &d, err, sizeof err), 0, "%s", err);
  cr_expect_eq(d.n, 0);
  cr_expect_null(golden_digests_find_case(&d, "is.valid.00000001", &count));
  golden_digests_free(&d);
}

/*
** shrink_corpus.c: where a shrunk case goes (see shrink.h):
** corpus/regressions, which suite gate includes (harness/suite.h), and the
** frozen oracle's digests of gate, so the oracle lane holds the new case to
** its digests from its first run instead of failing it as unpinned.
**
** The digests are added the way a same-version `bitgate golden pin` adds
** cases (harness/cmd_golden.c): entries already pinned stay byte for byte,
** the new case's are appended, and CHANGES gets a dated line.  Unlike the
** pin, the pinned cases are not rerun: the oracle lane (and the CTest
** gate_oracle_lane) holds every one of them to its digests anyway, and a
** shrink should not cost a whole gate run on the CPU.
*/
#include "harness/shrink.h"
#include "harness/frozen_oracle.h"
#include "harness/suite.h"
#include "oracle/numerics/nx_base.h"
#include "oracle/oracle_version.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void today(char *out, size_t len) {
  time_t now = time(NULL);
  strftime(out, len, "%Y-%m-%d", gmtime(&now));
}

/* 1 when suite gate (gate.suite and regressions) of dir holds id; -1 when it cannot be read. */
static int gate_holds(const char *dir, const char *id, int *count, char *err, size_t len) {
  char sid[CASE_ID_MAX];
  suite s;
  int i, found = 0;
  if (suite_load(dir, "gate", &s, err, len) != 0) return -1;
  for (i = 0; i < s.count && !found; i++) found = case_id_from_spec(s.specs[i], sid, sizeof sid) == 0 && !strcmp(sid, id);
  if (count) *count = s.count;
  suite_free(&s);
  return found;
}

int shrink_regression_append(const char *dir, const char *orig_id, const shrink_result *r, char *err, size_t len) {
  char path[4096], date[16], sig[200];
  FILE *f;
  int held = gate_holds(dir, r->id, NULL, err, len);
  if (held) return held;
  snprintf(path, sizeof path, "%s/%s", dir, SUITE_REGRESSIONS);
  if (!(f = fopen(path, "a"))) return snprintf(err, len, "cannot append to %s: %s", path, strerror(errno)), -1;
  today(date, sizeof date);
  shrink_sig_text(&r->sig, sig, sizeof sig);
  fprintf(f, "# %s: shrunk from %s by bitgate shrink; signature %s; size %llu -> %llu bytes\n%s\n", date, orig_id,
          sig, r->size_before, r->size_after, r->spec);
  if (fclose(f) != 0) return snprintf(err, len, "writing %s: %s", path, strerror(errno)), -1;
  return 0;
}

/* Runs the oracle lane over the case with a pin-mode recorder; 0, or -1 with err set. */
static int record_case(const char *id, const char *spec, frozen_oracle *f, char *err, size_t len) {
  static case_report report;
  runner_env env;
  memset(&env, 0, sizeof env);
  env.lanes = LANE_BIT(LANE_ORACLE);
  frozen_oracle_open_pin(f);
  frozen_oracle_attach(f, &env);
  case_run(&env, id, spec, &report);
  if (report.failed || f->out_of_memory || f->observed.n == 0)
    return snprintf(err, len, "case %s fails the oracle lane (%.300s): its digests cannot be pinned", id,
                    report.n ? report.rows[0].message : "no outcome"), -1;
  return 0;
}

static int changes_line(const char *dir, const char *id, const char *orig_id, int cases, long long digests) {
  char path[4096], date[16];
  FILE *f;
  snprintf(path, sizeof path, "%s/CHANGES", dir);
  if (!(f = fopen(path, "a"))) return -1;
  today(date, sizeof date);
  fprintf(f, "%s gate: oracle %d -> %d (numerics %d, %d cases, %lld digests): added 1: %s, shrunk from %s by bitgate shrink\n",
          date, ORACLE_VERSION, ORACLE_VERSION, NX_NUMERICS_VERSION, cases, digests, id, orig_id);
  return fclose(f) == 0 ? 0 : -1;
}

int shrink_digests_add(const char *dir, const char *id, const char *spec, const char *orig_id, char *note,
                       size_t note_len, char *err, size_t len) {
  char path[4096];
  golden_digests d;
  frozen_oracle f;
  long long i, n;
  int rc, cases = 0;
  golden_digests_path(dir, "gate", path, sizeof path);
  rc = golden_digests_read(path, 0, "gate", &d, err, len);
  if (rc == GOLDEN_DIGESTS_ABSENT) return snprintf(note, note_len, "no %s: nothing to pin", path), 1;
  if (rc != 0) return -1;
  if (golden_digests_find_case(&d, id, &n)) {
    golden_digests_free(&d);
    return snprintf(note, note_len, "%s already pins %s", path, id), 1;
  }
  if (d.oracle_version != ORACLE_VERSION || d.numerics_version != NX_NUMERICS_VERSION) {
    snprintf(err, len, "%s was pinned by oracle %d (numerics %d), this build is %d (%d): re-pin gate first with "
             "bitgate golden pin --reason TEXT", path, d.oracle_version, d.numerics_version, ORACLE_VERSION,
             NX_NUMERICS_VERSION);
    golden_digests_free(&d);
    return -1;
  }
  rc = record_case(id, spec, &f, err, len);
  for (i = 0; rc == 0 && i < f.observed.n; i++) {
    const golden_entry *e = &f.observed.entries[i];
    if (golden_digests_append(&d, e->case_id, e->step, e->name, e->value) != 0)
      rc = (snprintf(err, len, "out of memory adding the digests of %s", id), -1);
  }
  if (rc == 0 && golden_digests_write(&d, path, err, len) != 0) rc = -1;
  if (rc == 0 && gate_holds(dir, id, &cases, err, len) >= 0 && changes_line(dir, id, orig_id, cases, d.n) != 0)
    rc = (snprintf(err, len, "pinned %s, but appending to %s/CHANGES failed: %s", id, dir, strerror(errno)), -1);
  if (rc == 0) snprintf(note, note_len, "pinned %lld digests of %s into %s", f.observed.n, id, path);
  frozen_oracle_close(&f);
  golden_digests_free(&d);
  return rc;
}

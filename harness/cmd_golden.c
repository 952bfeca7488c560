/*
** cmd_golden.c: `bitgate golden pin`, the one deliberate way to change the
** frozen oracle's committed digests (DESIGN.md "Cases, ids, corpus").
**
** Pinning reruns the oracle lane over the suite, with the frozen-oracle
** recorder attached (frozen_oracle.h), and rewrites corpus/NAME.digests.  It
** is refused unless the oracle's version differs from the one the current
** file was pinned with (or there is no file yet): a change of oracle bits
** must come with a version bump, and the reason goes into corpus/CHANGES,
** one dated line per pin.  One exception keeps the suite growable (a shrunk
** regression joins gate): at the same version a pin may add cases, as long
** as every case the file already pins reproduces its digests exactly.
*/
#include "cases/case_spec.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/frozen_oracle.h"
#include "harness/session.h"
#include "harness/suite.h"
#include "oracle/numerics/nx_base.h"
#include "oracle/oracle_version.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char golden_help[] =
    "usage: bitgate golden pin [--suite NAME] [--corpus DIR] --reason TEXT\n\n"
    "Reruns the oracle over a suite (default gate) and rewrites its committed\n"
    "digests, corpus/NAME.digests: one XXH3-128 digest per case, step and\n"
    "output tensor (or the rejection, for a step the oracle rejects), which\n"
    "`bitgate run` checks in the oracle lane.  The oracle is frozen: pinning\n"
    "is refused (exit 2) unless ORACLE_VERSION (oracle/oracle_version.h)\n"
    "differs from the version the current file was pinned with, or the file\n"
    "does not exist yet, or (same version) the suite has new cases and every\n"
    "case already pinned reproduces its digests.  TEXT, one non-empty line, is appended to\n"
    "corpus/CHANGES with the date, the old and new oracle versions and the suite.\n"
    "  --suite NAME   corpus/NAME.suite (default gate)\n"
    "  --corpus DIR   where the suites are (default: $BITGATE_CORPUS or the\n"
    "                 source tree's corpus/)\n"
    "  --reason TEXT  why the oracle changed (required)\n\n" EXIT_CODES_HELP;

static const char changes_header[] =
    "# corpus/CHANGES: why each frozen-oracle pin was made, one line per pin,\n"
    "# appended by `bitgate golden pin --suite NAME --reason TEXT`:\n"
    "#   DATE SUITE: oracle OLD -> NEW (numerics N, C cases, E digests): REASON\n"
    "# A re-pin needs an oracle version bump (oracle/oracle_version.h); at the\n"
    "# same version a pin may only add cases (OLD == NEW, \"added N\").\n";

typedef struct pin_args {
  const char *suite, *corpus, *reason;
} pin_args;

/* NULL when reason is one non-empty line, else what is wrong with it. */
static const char *reason_problem(const char *reason) {
  const char *p;
  int printable = 0;
  for (p = reason; *p; p++) {
    if ((unsigned char)*p < 0x20 || *p == 0x7f) return "must be a single line without control characters";
    printable |= *p != ' ';
  }
  return printable ? NULL : "must not be empty";
}

static int parse_pin_args(int argc, char **argv, pin_args *a) {
  const char *why;
  int i, r;
  a->suite = "gate";
  a->corpus = suite_default_dir();
  a->reason = NULL;
  if (argc < 2 || strcmp(argv[1], "pin") != 0)
    return argc < 2 ? cli_usage_error("golden", "missing subcommand 'pin'")
                    : cli_usage_error("golden", "unknown subcommand '%s'", argv[1]);
  for (i = 2; i < argc; i++) {
    if ((r = cli_option_value("golden", argc, argv, &i, "--suite", &a->suite)) ||
        (r = cli_option_value("golden", argc, argv, &i, "--corpus", &a->corpus)) ||
        (r = cli_option_value("golden", argc, argv, &i, "--reason", &a->reason))) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else {
      return cli_usage_error("golden", "unknown argument '%s'", argv[i]);
    }
  }
  if (!a->reason) return cli_usage_error("golden", "--reason TEXT is required: say why the oracle changed");
  if ((why = reason_problem(a->reason))) return cli_usage_error("golden", "--reason %s", why);
  return EXIT_CODE_PASS;
}

/*
** Runs the oracle lane over every case of s with f recording; returns the
** number of cases that fail the oracle lane (their failures printed).
*/
static int record_suite(const suite *s, frozen_oracle *f) {
  static case_report report;
  runner_env env;
  char id[CASE_ID_MAX];
  int i, failed = 0;
  memset(&env, 0, sizeof env);
  env.lanes = LANE_BIT(LANE_ORACLE);
  frozen_oracle_attach(f, &env);
  for (i = 0; i < s->count; i++) {
    if (case_id_from_spec(s->specs[i], id, sizeof id) != 0) snprintf(id, sizeof id, "invalid.00000000");
    case_run(&env, id, s->specs[i], &report);
    if (report.failed) session_print_failures(stderr, id, &report);
    failed += report.failed != 0;
  }
  return failed;
}

/*
** Opens DIR/CHANGES for appending before anything is pinned, so a corpus
** that cannot take the reason is refused up front; NULL with err set.
*/
static FILE *changes_open(const char *dir, char *path, size_t path_len, char *err, size_t err_len) {
  FILE *f;
  snprintf(path, path_len, "%s/CHANGES", dir);
  if (!(f = fopen(path, "a"))) snprintf(err, err_len, "cannot append to %s: %s", path, strerror(errno));
  return f;
}

/* Appends the pin's line (after the file's header, when the file is new); 0 or -1. */
static int changes_append(FILE *f, const char *reason, const char *suite, const char *old_version, int cases,
                          long long digests) {
  char date[16];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  if (fseek(f, 0, SEEK_END) != 0) return -1;
  if (ftell(f) == 0) fputs(changes_header, f);
  fprintf(f, "%s %s: oracle %s -> %d (numerics %d, %d cases, %lld digests): %s\n", date, suite, old_version,
          ORACLE_VERSION, NX_NUMERICS_VERSION, cases, digests, reason);
  return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

/*
** Reads the current digests (if any) into *old; *have says whether there
** were any.  Exit code (a damaged file is refused, not overwritten).
*/
static int read_old(const char *path, const char *suite, golden_digests *old, int *have, char *old_version,
                    size_t len) {
  char err[4400];
  int rc = golden_digests_read(path, 0, suite, old, err, sizeof err);
  *have = rc == 0;
  snprintf(old_version, len, "none");
  if (rc == GOLDEN_DIGESTS_ABSENT) return EXIT_CODE_PASS;
  if (rc != 0) return cli_env_error("golden", "%s (fix or remove it to pin afresh)", err);
  snprintf(old_version, len, "%d", old->oracle_version);
  return EXIT_CODE_PASS;
}

/*
** A same-version pin: every case of observed that old pins must have the
** same entries; the others are new.  The recorder appends a case's entries
** together, so observed is a run of groups.  Exit code; *added counts the
** new cases.
*/
static int check_additive(const char *path, const golden_digests *old, const golden_digests *observed,
                          int *added) {
  long long i = 0, j, n, pinned;
  *added = 0;
  while (i < observed->n) {
    const golden_entry *e = &observed->entries[i], *was;
    for (n = 1; i + n < observed->n && !strcmp(observed->entries[i + n].case_id, e->case_id); n++) {
    }
    if (!(was = golden_digests_find_case(old, e->case_id, &pinned))) {
      ++*added;
    } else {
      for (j = 0; j < n && j < pinned; j++)
        if (e[j].step != was[j].step || strcmp(e[j].name, was[j].name) || strcmp(e[j].value, was[j].value)) break;
      if (j < n || n != pinned)
        return cli_usage_error("golden",
                               "refusing to re-pin %s at oracle %d: %s step %d %s no longer matches its pinned "
                               "digest; the oracle is frozen, so bump ORACLE_VERSION in oracle/oracle_version.h",
                               path, ORACLE_VERSION, e->case_id, j < n ? e[j].step : was[j].step,
                               j < n ? e[j].name : was[j].name);
    }
    i += n;
  }
  if (*added == 0)
    return cli_usage_error("golden",
                           "refusing to re-pin %s: it already pins every case at oracle %d, the version this build "
                           "has; a re-pin needs a bump of ORACLE_VERSION in oracle/oracle_version.h",
                           path, ORACLE_VERSION);
  return EXIT_CODE_PASS;
}

static int pin(const pin_args *a) {
  char path[4096], changes_path[4096], err[4400], old_version[16], reason[600];
  golden_digests old;
  frozen_oracle f;
  suite s;
  FILE *changes;
  int rc, failed, have_old, added = 0;
  golden_digests_path(a->corpus, a->suite, path, sizeof path);
  if (suite_load(a->corpus, a->suite, &s, err, sizeof err) != 0) return cli_env_error("golden", "%s", err);
  if ((rc = read_old(path, a->suite, &old, &have_old, old_version, sizeof old_version)) != EXIT_CODE_PASS) {
    suite_free(&s);
    return rc;
  }
  if (!(changes = changes_open(a->corpus, changes_path, sizeof changes_path, err, sizeof err))) {
    if (have_old) golden_digests_free(&old);
    suite_free(&s);
    return cli_env_error("golden", "%s", err);
  }
  frozen_oracle_open_pin(&f);
  if ((failed = record_suite(&s, &f)) != 0 || f.out_of_memory) {
    fprintf(stderr, "bitgate golden: %s; nothing pinned\n",
            failed ? "cases fail the oracle lane (above)" : "out of memory recording the digests");
    rc = EXIT_CODE_FAIL;
    goto done;
  }
  if (have_old && old.oracle_version == ORACLE_VERSION &&
      (rc = check_additive(path, &old, &f.observed, &added)) != EXIT_CODE_PASS)
    goto done;
  f.observed.oracle_version = ORACLE_VERSION;
  f.observed.numerics_version = NX_NUMERICS_VERSION;
  snprintf(f.observed.suite, sizeof f.observed.suite, "%s", a->suite);
  if (golden_digests_write(&f.observed, path, err, sizeof err) != 0) {
    rc = cli_env_error("golden", "%s", err);
    goto done;
  }
  if (added) snprintf(reason, sizeof reason, "added %d: %s", added, a->reason);
  if (changes_append(changes, added ? reason : a->reason, a->suite, old_version, s.count, f.observed.n) != 0) {
    rc = cli_env_error("golden", "pinned %s, but appending to %s failed: %s", path, changes_path, strerror(errno));
    goto done;
  }
  printf("pinned %lld digests of %d cases (suite %s, oracle %s -> %d) to %s\nreason appended to %s\n", f.observed.n,
         s.count, a->suite, old_version, ORACLE_VERSION, path, changes_path);
  rc = EXIT_CODE_PASS;
done:
  fclose(changes);
  if (have_old) golden_digests_free(&old);
  frozen_oracle_close(&f);
  suite_free(&s);
  return rc;
}

int cmd_golden(int argc, char **argv) {
  pin_args a;
  int i, rc;
  for (i = 1; i < argc; i++)
    if (cli_is_help(argv[i])) {
      fputs(golden_help, stdout);
      return EXIT_CODE_PASS;
    }
  if ((rc = parse_pin_args(argc, argv, &a)) != EXIT_CODE_PASS) return rc;
  return pin(&a);
}

/*
** cmd_run.c: `bitgate run`, the main job.  Runs every case of a suite in
** every lane the machine can run, diffs, and commits each finished case's
** rows at once, so a run killed at any moment keeps what it had finished.
** The oracle lane also holds the oracle to the suite's committed digests
** (corpus/NAME.digests, frozen_oracle.h) when the suite has them.
*/
#include "cases/case_spec.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/frozen_oracle.h"
#include "harness/provenance.h"
#include "harness/session.h"
#include "harness/store.h"
#include "harness/suite.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char run_help[] =
    "usage: bitgate run [--suite NAME] [--db PATH] [--corpus DIR] [--lanes LIST]\n"
    "                   [--filter GLOB] [--require-gpu]\n\n"
    "Runs every case of a suite against the oracle in every lane the machine\n"
    "can run and records each case's results in SQLite as soon as it finishes.\n"
    "  --suite NAME   corpus/NAME.suite (default gate)\n"
    "  --db PATH      results database (default ./bitgate.db)\n"
    "  --corpus DIR   where the suites are (default: $BITGATE_CORPUS or the\n"
    "                 source tree's corpus/)\n"
    "  --lanes LIST   comma-separated subset of oracle,eager,capture,poison\n"
    "                 (default: all; device lanes need a GPU)\n"
    "  --filter GLOB  only the cases whose id matches (e.g. 'is.capfront.*')\n"
    "  --require-gpu  exit 3 when no GPU is usable instead of running the\n"
    "                 oracle lane alone\n\n"
    "The oracle lane compares every step's outputs (or rejection) with the\n"
    "suite's committed digests, corpus/NAME.digests, when it has them: a\n"
    "difference fails as frozen_changed, a case without digests as unpinned\n"
    "(bitgate golden --help).\n\n" EXIT_CODES_HELP;

typedef struct run_args {
  const char *suite, *db, *corpus, *filter;
  lane_mask lanes;
  int require_gpu;
} run_args;

static int parse_run_args(int argc, char **argv, run_args *a) {
  const char *lanes = NULL;
  char err[256];
  int i, r;
  a->suite = "gate";
  a->db = "bitgate.db";
  a->corpus = suite_default_dir();
  a->filter = NULL;
  a->require_gpu = 0;
  a->lanes = LANE_ALL;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--require-gpu")) a->require_gpu = 1;
    else if ((r = cli_option_value("run", argc, argv, &i, "--suite", &a->suite)) ||
             (r = cli_option_value("run", argc, argv, &i, "--db", &a->db)) ||
             (r = cli_option_value("run", argc, argv, &i, "--corpus", &a->corpus)) ||
             (r = cli_option_value("run", argc, argv, &i, "--lanes", &lanes)) ||
             (r = cli_option_value("run", argc, argv, &i, "--filter", &a->filter))) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else {
      return cli_usage_error("run", "unknown argument '%s'", argv[i]);
    }
  }
  if (lanes && lane_mask_parse(lanes, &a->lanes, err, sizeof err) != 0)
    return cli_usage_error("run", "--lanes: %s", err);
  return EXIT_CODE_PASS;
}

typedef struct run_tally {
  long long cases, failed_cases, rows[LANE_COUNT], failed_rows[LANE_COUNT];
} run_tally;

static void tally_report(run_tally *t, const case_report *r) {
  int i, l;
  t->cases++;
  t->failed_cases += r->failed != 0;
  for (i = 0; i < r->n; i++)
    for (l = 0; l < LANE_COUNT; l++)
      if (!strcmp(r->rows[i].lane, lane_name((lane)l))) {
        t->rows[l]++;
        t->failed_rows[l] += strcmp(r->rows[i].status, "pass") && strcmp(r->rows[i].status, "skipped");
      }
}

/* Runs and records one case; returns 0, or -1 when the store failed. */
static int run_one(store *db, long long run_id, session *ses, frozen_oracle *frozen, const char *spec,
                   const char *filter, run_tally *t) {
  static case_report report;
  static store_result rows[CASE_MAX_ROWS];
  char id[CASE_ID_MAX], family[64] = "", op[64] = "";
  if (case_id_from_spec(spec, id, sizeof id) != 0) snprintf(id, sizeof id, "invalid.00000000");
  if (filter && fnmatch(filter, id, 0) != 0) return 0;
  case_spec_get(spec, "family", family, sizeof family);
  case_spec_get(spec, "op", op, sizeof op);
  if (store_case_put(db, id, op, family, spec, run_id) != 0) return -1;
  case_run(&ses->env, id, spec, &report);
  if (frozen) frozen_oracle_check_case(frozen, id, &report);
  session_print_failures(stdout, id, &report);
  tally_report(t, &report);
  case_report_to_store(&report, id, rows);
  return store_results_commit(db, run_id, rows, report.n);
}

/* The frozen-oracle check's summary line; returns 1 when the check failed. */
static int print_frozen(const frozen_oracle *frozen, const run_args *a) {
  char why[4400];
  if (!(a->lanes & LANE_BIT(LANE_ORACLE))) return 0;
  if (!frozen->checking) {
    printf("  frozen oracle: suite %s has no digests file (%s.digests); not checked\n", a->suite, a->suite);
    return 0;
  }
  if (frozen_oracle_stale(frozen, why, sizeof why)) {
    printf("  frozen oracle: FAIL %s\n", why);
    return 1;
  }
  if (frozen->cases_changed || frozen->cases_unpinned)
    printf("  frozen oracle: %lld cases checked against %s, %lld changed, %lld unpinned\n", frozen->cases_checked,
           frozen->path, frozen->cases_changed, frozen->cases_unpinned);
  else
    printf("  frozen oracle: all %lld cases match %s\n", frozen->cases_checked, frozen->path);
  return 0;
}

static void print_summary(const run_tally *t, long long run_id, const run_args *a, const session *ses,
                          double seconds) {
  int l;
  printf("run %lld: suite %s, %lld cases, %lld passed, %lld failed (%.1f s)\n", run_id, a->suite, t->cases,
         t->cases - t->failed_cases, t->failed_cases, seconds);
  for (l = 0; l < LANE_COUNT; l++)
    if (t->rows[l]) printf("  lane %-8s %lld results, %lld failed\n", lane_name((lane)l), t->rows[l], t->failed_rows[l]);
  if (!ses->have_device) printf("  device lanes not run: %s\n", ses->device_reason);
}

int cmd_run(int argc, char **argv) {
  run_args a;
  suite s;
  store *db = NULL;
  session ses;
  frozen_oracle frozen;
  provenance pv;
  run_tally t;
  struct timespec t0, t1;
  long long run_id = 0;
  char err[1024];
  int i, rc, stale;
  for (i = 1; i < argc; i++)
    if (cli_is_help(argv[i])) {
      fputs(run_help, stdout);
      return EXIT_CODE_PASS;
    }
  if ((rc = parse_run_args(argc, argv, &a)) != EXIT_CODE_PASS) return rc;
  if (suite_load(a.corpus, a.suite, &s, err, sizeof err) != 0) return cli_env_error("run", "%s", err);
  memset(&frozen, 0, sizeof frozen);
  if ((a.lanes & LANE_BIT(LANE_ORACLE)) &&
      frozen_oracle_open(&frozen, a.corpus, a.suite, err, sizeof err) == GOLDEN_DIGESTS_BAD) {
    suite_free(&s);
    return cli_env_error("run", "%s", err);
  }
  if (session_open(&ses, a.lanes, a.require_gpu) != 0) {
    suite_free(&s);
    frozen_oracle_close(&frozen);
    return cli_env_error("run", "a GPU is required (--require-gpu) but none is usable: %s", ses.device_reason);
  }
  if (frozen.checking) frozen_oracle_attach(&frozen, &ses.env);
  provenance_collect(&pv, a.suite, "1/1", argc, argv);
  if (store_open(a.db, &db, err, sizeof err) != 0) {
    session_close(&ses);
    suite_free(&s);
    frozen_oracle_close(&frozen);
    return cli_env_error("run", "%s", err);
  }
  memset(&t, 0, sizeof t);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  rc = store_run_begin(db, &pv.p, &run_id);
  for (i = 0; rc == 0 && i < s.count; i++)
    rc = run_one(db, run_id, &ses, frozen.checking ? &frozen : NULL, s.specs[i], a.filter, &t);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc != 0) {
    fprintf(stderr, "bitgate run: recording results failed: %s\n", store_errmsg(db));
    store_run_end(db, run_id, "error", EXIT_CODE_ENV);
    rc = EXIT_CODE_ENV;
  } else {
    print_summary(&t, run_id, &a, &ses, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
    stale = print_frozen(&frozen, &a);
    printf("results in %s\n", a.db);
    rc = t.failed_cases || stale ? EXIT_CODE_FAIL : EXIT_CODE_PASS;
    store_run_end(db, run_id, rc ? "failed" : "passed", rc);
  }
  store_close(db);
  session_close(&ses);
  suite_free(&s);
  frozen_oracle_close(&frozen);
  return rc;
}

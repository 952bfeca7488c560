/*
** cmd_run.c: `bitgate run`, the main job.  Runs every case of a suite in
** every lane, diffs, and records each finished case at once, so a run killed
** at any moment keeps what it had finished.
**
** Lanes come with the operators (issues 3-5).  Until a family's generator is
** registered, its cases are recorded as failures naming the missing family,
** never as passes.
*/
#include "cases/case_spec.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/provenance.h"
#include "harness/store.h"
#include "harness/suite.h"

#include <stdio.h>
#include <string.h>

static const char run_help[] =
    "usage: bitgate run [--suite NAME] [--db PATH] [--corpus DIR] [--require-gpu]\n\n"
    "Runs every case of a suite (default: gate) against the oracle in every lane\n"
    "and records each result in SQLite as soon as its case finishes.\n"
    "  --suite NAME   corpus/NAME.suite (default gate)\n"
    "  --db PATH      results database (default ./bitgate.db)\n"
    "  --corpus DIR   where the suites are (default: $BITGATE_CORPUS or the\n"
    "                 source tree's corpus/)\n"
    "  --require-gpu  exit 3 when no GPU is present instead of skipping device lanes\n\n" EXIT_CODES_HELP;

typedef struct run_args {
  const char *suite, *db, *corpus;
  int require_gpu;
} run_args;

static int parse_run_args(int argc, char **argv, run_args *a) {
  int i, r;
  a->suite = "gate";
  a->db = "bitgate.db";
  a->corpus = suite_default_dir();
  a->require_gpu = 0;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--require-gpu")) a->require_gpu = 1;
    else if ((r = cli_option_value("run", argc, argv, &i, "--suite", &a->suite)) ||
             (r = cli_option_value("run", argc, argv, &i, "--db", &a->db)) ||
             (r = cli_option_value("run", argc, argv, &i, "--corpus", &a->corpus))) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else {
      return cli_usage_error("run", "unknown argument '%s'", argv[i]);
    }
  }
  return EXIT_CODE_PASS;
}

/* Records one case whose family has no generator in this build. */
static int run_case(store *db, long long run_id, const char *spec, long long *failed) {
  char id[CASE_ID_MAX], family[64] = "", op[64] = "", message[256];
  store_result row;
  if (case_id_from_spec(spec, id, sizeof id) != 0) {
    snprintf(id, sizeof id, "invalid.spec");
    snprintf(message, sizeof message, "spec has no family: %s", spec);
  } else {
    case_spec_get(spec, "family", family, sizeof family);
    snprintf(message, sizeof message, "no generator for family '%s' in this build", family);
  }
  case_spec_get(spec, "op", op, sizeof op);
  if (store_case_put(db, id, op, family, spec, run_id) != 0) return -1;
  memset(&row, 0, sizeof row);
  row.case_id = id;
  row.lane = "oracle";
  row.status = "fail";
  row.message = message;
  *failed += 1;
  printf("FAIL %s: %s\n", id, message);
  return store_results_commit(db, run_id, &row, 1);
}

int cmd_run(int argc, char **argv) {
  run_args a;
  suite s;
  store *db = NULL;
  provenance pv;
  long long run_id = 0, failed = 0;
  char err[1024];
  int i, rc;
  for (i = 1; i < argc; i++)
    if (cli_is_help(argv[i])) {
      fputs(run_help, stdout);
      return EXIT_CODE_PASS;
    }
  if ((rc = parse_run_args(argc, argv, &a)) != EXIT_CODE_PASS) return rc;
  if (suite_load(a.corpus, a.suite, &s, err, sizeof err) != 0) return cli_env_error("run", "%s", err);
  provenance_collect(&pv, a.suite, "1/1", argc, argv);
  if (a.require_gpu && !pv.dev.available) {
    suite_free(&s);
    return cli_env_error("run", "a GPU is required (--require-gpu) but none is usable: %s", pv.dev.reason);
  }
  if (store_open(a.db, &db, err, sizeof err) != 0) {
    suite_free(&s);
    return cli_env_error("run", "%s", err);
  }
  rc = store_run_begin(db, &pv.p, &run_id);
  for (i = 0; rc == 0 && i < s.count; i++) rc = run_case(db, run_id, s.specs[i], &failed);
  if (rc != 0) {
    fprintf(stderr, "bitgate run: recording results failed: %s\n", store_errmsg(db));
    store_run_end(db, run_id, "error", EXIT_CODE_ENV);
    store_close(db);
    suite_free(&s);
    return EXIT_CODE_ENV;
  }
  rc = failed ? EXIT_CODE_FAIL : EXIT_CODE_PASS;
  store_run_end(db, run_id, failed ? "failed" : "passed", rc);
  printf("run %lld: suite %s, %d case%s, %lld passed, %lld failed; device %s; results in %s\n", run_id,
         a.suite, s.count, s.count == 1 ? "" : "s", (long long)s.count - failed, failed,
         pv.dev.available ? pv.dev.name : "unavailable", a.db);
  if (s.count == 0) printf("(suite %s has no cases yet)\n", a.suite);
  store_close(db);
  suite_free(&s);
  return rc;
}

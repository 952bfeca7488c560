/*
** suite_run.c: see suite_run.h.  Runs every case of a suite in every lane
** the machine can run, diffs, and commits each finished case's rows at once,
** so a run killed at any moment keeps what it had finished.  The oracle lane
** also holds the oracle to the suite's committed digests (corpus/NAME.digests,
** frozen_oracle.h) when the suite has them.
*/
#include "harness/suite_run.h"
#include "cases/case_spec.h"
#include "harness/cli.h"
#include "harness/exit_codes.h"
#include "harness/frozen_oracle.h"
#include "harness/gate.h"
#include "harness/progress.h"
#include "harness/provenance.h"
#include "harness/session.h"
#include "harness/store.h"
#include "harness/suite.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const suite_run_hooks no_hooks;

static int parse_args(const char *cmd, const char *default_suite, int argc, char **argv, const suite_run_hooks *h,
                      suite_run_args *a) {
  const char *lanes = NULL, *shard_text = NULL;
  char err[256];
  int i, r;
  a->suite = default_suite;
  a->db = "bitgate.db";
  a->corpus = suite_default_dir();
  a->filter = NULL;
  a->require_gpu = 0;
  a->lanes = LANE_ALL;
  gate_args_init(&a->gate);
  shard_all(&a->shard);
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--require-gpu")) a->require_gpu = 1;
    else if ((r = cli_option_value(cmd, argc, argv, &i, "--suite", &a->suite)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--db", &a->db)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--corpus", &a->corpus)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--lanes", &lanes)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--filter", &a->filter)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--shard", &shard_text)) ||
             (r = gate_option(cmd, argc, argv, &i, &a->gate)) ||
             (h->option && (r = h->option(h->ctx, cmd, argc, argv, &i)))) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else {
      return cli_usage_error(cmd, "unknown argument '%s'", argv[i]);
    }
  }
  if (lanes && lane_mask_parse(lanes, &a->lanes, err, sizeof err) != 0)
    return cli_usage_error(cmd, "--lanes: %s", err);
  if (shard_text && shard_parse(shard_text, &a->shard, err, sizeof err) != 0)
    return cli_usage_error(cmd, "--shard %s", err);
  return EXIT_CODE_PASS;
}

static void tally_report(suite_run_tally *t, const case_report *r) {
  int i, l;
  t->cases++;
  t->failed_cases += r->failed != 0;
  t->waived_cases += !r->failed && gate_report_has_waived(r);
  for (i = 0; i < r->n; i++)
    for (l = 0; l < LANE_COUNT; l++)
      if (!strcmp(r->rows[i].lane, lane_name((lane)l))) {
        t->rows[l]++;
        t->failed_rows[l] += gate_status_fails(r->rows[i].status);
        t->waived_rows[l] += !strcmp(r->rows[i].status, "waived");
      }
}

/* Everything one run holds open. */
typedef struct suite_run_state {
  store *db;
  long long run_id;
  session ses;
  frozen_oracle frozen;
  const suite_run_hooks *h;
  const char *filter;
  gate gate;
  const shard *shard;
  progress pg;
  suite_run_tally t;
} suite_run_state;

/* Fills id with spec's case id; true when this run takes the case (--filter, --shard). */
static int case_selected(const suite_run_state *st, const char *spec, char *id, size_t id_len) {
  if (case_id_from_spec(spec, id, id_len) != 0) snprintf(id, id_len, "invalid.00000000");
  return (!st->filter || fnmatch(st->filter, id, 0) == 0) && shard_contains(st->shard, id);
}

/* Runs and records one case; returns 0, or -1 when the store failed. */
static int run_one(suite_run_state *st, const char *spec) {
  static case_report report;
  static store_result rows[CASE_MAX_ROWS];
  char id[CASE_ID_MAX], family[64] = "", op[64] = "";
  if (!case_selected(st, spec, id, sizeof id)) return 0;
  case_spec_get(spec, "family", family, sizeof family);
  case_spec_get(spec, "op", op, sizeof op);
  if (store_case_put(st->db, id, op, family, spec, st->run_id) != 0) return -1;
  if (st->h->before_case) st->h->before_case(st->h->ctx, id, spec);
  gate_case_run(&st->gate, &st->ses.env, id, spec, &report);
  if (st->frozen.checking) frozen_oracle_check_case(&st->frozen, id, &report);
  if (st->h->after_case) st->h->after_case(st->h->ctx, id, &report);
  gate_case_done(&st->gate, id, &report); /* waivers and baseline see every check's rows */
  if (report.failed || gate_report_has_waived(&report)) progress_pause(&st->pg); /* FAIL lines start on a clean line */
  gate_print_rows(stdout, id, &report);
  tally_report(&st->t, &report);
  progress_case_done(&st->pg, report.failed);
  case_report_to_store(&report, id, rows);
  return store_results_commit(st->db, st->run_id, rows, report.n);
}

/* The frozen-oracle check's summary line; returns 1 when the check failed. */
static int print_frozen(const frozen_oracle *frozen, const suite_run_args *a) {
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

static void print_summary(const suite_run_state *st, const suite_run_args *a, double seconds) {
  const suite_run_tally *t = &st->t;
  int l;
  char waived[48] = ""; /* waived is its own count: never folded into passed */
  if (t->waived_cases) snprintf(waived, sizeof waived, ", %lld waived", t->waived_cases);
  printf("run %lld: suite %s, %lld cases, %lld passed, %lld failed%s (%.1f s)\n", st->run_id, a->suite, t->cases,
         t->cases - t->failed_cases - t->waived_cases, t->failed_cases, waived, seconds);
  for (l = 0; l < LANE_COUNT; l++)
    if (t->rows[l]) {
      printf("  lane %-8s %lld results, %lld failed", lane_name((lane)l), t->rows[l], t->failed_rows[l]);
      if (t->waived_rows[l]) printf(", %lld waived", t->waived_rows[l]);
      putchar('\n');
    }
  if (!st->ses.have_device) printf("  device lanes not run: %s\n", st->ses.device_reason);
}

/* Runs the loaded suite s; returns the exit code. */
static int run_suite(const char *cmd, suite_run_state *st, const suite_run_args *a, const suite *s, int argc,
                     char **argv) {
  provenance pv;
  suite_run_result res;
  struct timespec t0, t1;
  char err[1024];
  char id[CASE_ID_MAX];
  int i, rc, stale, hook_rc;
  long long selected = 0;
  provenance_collect(&pv, a->suite, a->shard.text, argc, argv);
  if (store_open(a->db, &st->db, err, sizeof err) != 0) return cli_env_error(cmd, "%s", err);
  if ((rc = gate_open(&st->gate, &a->gate, cmd, a->corpus, st->db)) != EXIT_CODE_PASS) {
    store_close(st->db);
    return rc;
  }
  if (st->h->begin && st->h->begin(st->h->ctx, &st->ses.env, a, err, sizeof err) != 0) {
    store_close(st->db);
    return cli_env_error(cmd, "%s", err);
  }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  rc = store_run_begin(st->db, &pv.p, &st->run_id);
  for (i = 0; i < s->count; i++) selected += case_selected(st, s->specs[i], id, sizeof id);
  progress_begin_stderr(&st->pg, selected);
  for (i = 0; rc == 0 && i < s->count; i++) rc = run_one(st, s->specs[i]);
  progress_end(&st->pg);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc != 0) {
    fprintf(stderr, "bitgate %s: recording results failed: %s\n", cmd, store_errmsg(st->db));
    store_run_end(st->db, st->run_id, "error", EXIT_CODE_ENV);
    store_close(st->db);
    return EXIT_CODE_ENV;
  }
  res.args = a;
  res.tally = st->t;
  res.run_id = st->run_id;
  res.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  print_summary(st, a, res.seconds);
  stale = print_frozen(&st->frozen, a);
  const int failing = gate_end(&st->gate, a->suite, st->t.failed_cases, stdout);
  hook_rc = st->h->end ? st->h->end(st->h->ctx, &res) : EXIT_CODE_PASS;
  printf("results in %s\n", a->db);
  rc = failing || stale ? EXIT_CODE_FAIL : EXIT_CODE_PASS;
  if (hook_rc > rc) rc = hook_rc;
  store_run_end(st->db, st->run_id, rc ? "failed" : "passed", rc);
  store_close(st->db);
  return rc;
}

int suite_run_main(const char *cmd, const char *help, const char *default_suite, int argc, char **argv,
                   const suite_run_hooks *hooks) {
  suite_run_args a;
  suite_run_state st;
  suite s;
  char err[1024];
  int i, rc;
  memset(&st, 0, sizeof st);
  st.h = hooks ? hooks : &no_hooks;
  for (i = 1; i < argc; i++)
    if (cli_is_help(argv[i])) {
      fputs(help, stdout);
      fputs(gate_options_help, stdout);
      return EXIT_CODE_PASS;
    }
  if ((rc = parse_args(cmd, default_suite, argc, argv, st.h, &a)) != EXIT_CODE_PASS) return rc;
  st.filter = a.filter;
  st.shard = &a.shard;
  if (suite_load(a.corpus, a.suite, &s, err, sizeof err) != 0) return cli_env_error(cmd, "%s", err);
  if ((a.lanes & LANE_BIT(LANE_ORACLE)) &&
      frozen_oracle_open(&st.frozen, a.corpus, a.suite, err, sizeof err) == GOLDEN_DIGESTS_BAD) {
    suite_free(&s);
    return cli_env_error(cmd, "%s", err);
  }
  if (session_open(&st.ses, a.lanes, a.require_gpu) != 0) {
    rc = cli_env_error(cmd, "a GPU is required (--require-gpu) but none is usable: %s", st.ses.device_reason);
  } else {
    if (st.frozen.checking) frozen_oracle_attach(&st.frozen, &st.ses.env);
    rc = run_suite(cmd, &st, &a, &s, argc, argv);
  }
  session_close(&st.ses);
  suite_free(&s);
  frozen_oracle_close(&st.frozen);
  gate_close(&st.gate);
  return rc;
}

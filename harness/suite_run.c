/*
** suite_run.c: see suite_run.h.  Runs every case of a suite in every lane
** the machine can run, diffs, and commits each finished case's rows at once,
** so a run killed at any moment keeps what it had finished.  The oracle lane
** also holds the oracle to the suite's committed digests (corpus/NAME.digests,
** frozen_oracle.h) when the suite has them.
*/
#include "harness/suite_run.h"
#include "cases/case_spec.h"
#include "device/kernel_sources.h"
#include "harness/case_order.h"
#include "harness/case_times.h"
#include "harness/cli.h"
#include "harness/exit_codes.h"
#include "harness/frozen_oracle.h"
#include "harness/gate.h"
#include "harness/progress.h"
#include "harness/provenance.h"
#include "harness/resume.h"
#include "harness/session.h"
#include "harness/store.h"
#include "harness/suite.h"
#include "harness/worker_pool.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const suite_run_hooks no_hooks;

static int parse_args(const char *cmd, const char *default_suite, int argc, char **argv, const suite_run_hooks *h,
                      suite_run_args *a) {
  const char *lanes = NULL, *shard_text = NULL, *resume_text = NULL;
  unsigned long long run;
  char err[256];
  int i, r;
  a->suite = default_suite;
  a->db = "bitgate.db";
  a->corpus = suite_default_dir();
  a->filter = NULL;
  a->variant = NULL;
  a->require_gpu = 0;
  a->resume_run = 0;
  a->lanes = LANE_ALL;
  gate_args_init(&a->gate);
  shard_all(&a->shard);
  worker_args_init(&a->workers);
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--require-gpu")) a->require_gpu = 1;
    else if ((r = cli_option_value(cmd, argc, argv, &i, "--suite", &a->suite)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--db", &a->db)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--corpus", &a->corpus)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--lanes", &lanes)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--filter", &a->filter)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--variant", &a->variant)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--shard", &shard_text)) ||
             (r = cli_option_value(cmd, argc, argv, &i, "--resume", &resume_text)) ||
             (r = gate_option(cmd, argc, argv, &i, &a->gate)) ||
             (r = worker_option(cmd, argc, argv, &i, &a->workers)) ||
             (h->option && (r = h->option(h->ctx, cmd, argc, argv, &i)))) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else {
      return cli_usage_error(cmd, "unknown argument '%s'", argv[i]);
    }
  }
  if (lanes && lane_mask_parse(lanes, &a->lanes, err, sizeof err) != 0)
    return cli_usage_error(cmd, "--lanes: %s", err);
  if (a->variant && runner_env_set_variant(NULL, a->variant) != 0)
    return cli_usage_error(cmd, "--variant '%s': expected fast, reference or both", a->variant);
  if (shard_text && shard_parse(shard_text, &a->shard, err, sizeof err) != 0)
    return cli_usage_error(cmd, "--shard %s", err);
  if (resume_text && (cli_parse_u64(resume_text, &run) != 0 || run < 1 || run > 1ull << 62))
    return cli_usage_error(cmd, "--resume '%s': expected a run id (a positive number)", resume_text);
  if (resume_text) a->resume_run = (long long)run;
  return EXIT_CODE_PASS;
}

int suite_run_parse(const char *cmd, const char *default_suite, int argc, char **argv, suite_run_args *a) {
  return parse_args(cmd, default_suite, argc, argv, &no_hooks, a);
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
  int resuming;            /* --resume RUN: cases RUN holds are recalled, not run */
  long long resumed_cases; /* how many */
  int use_workers;         /* cases run in worker processes (worker_pool.h) */
  worker_pool_result pool; /* what they did */
  case_order_source order; /* what ordered the workers' cases (neither run nor file: the suite's order) */
} suite_run_state;

/* Fills id with spec's case id; true when this run takes the case (--filter, --shard). */
static int case_selected(const suite_run_state *st, const char *spec, char *id, size_t id_len) {
  if (case_id_from_spec(spec, id, id_len) != 0) snprintf(id, id_len, "invalid.00000000");
  return (!st->filter || fnmatch(st->filter, id, 0) == 0) && shard_contains(st->shard, id);
}

/*
** A --filter that keeps none of the suite's cases is a usage error, found
** before anything is recorded: a CI job whose filter has a typo would
** otherwise pass on zero cases.  An empty shard of a filter that keeps some
** is not: N shards of a short list may leave one empty (the summary says so).
*/
static int filter_keeps_some(const char *cmd, const suite_run_args *a, const suite *s) {
  char id[CASE_ID_MAX], example[CASE_ID_MAX] = "";
  int i;
  if (!a->filter) return EXIT_CODE_PASS;
  for (i = 0; i < s->count; i++) {
    if (case_id_from_spec(s->specs[i], id, sizeof id) != 0) continue;
    if (fnmatch(a->filter, id, 0) == 0) return EXIT_CODE_PASS;
    if (!example[0]) snprintf(example, sizeof example, "%s", id);
  }
  return cli_usage_error(cmd, "--filter '%s' keeps none of the %d cases of suite %s (ids look like %s; "
                              "'bitgate list --suite %s' prints them)",
                         a->filter, s->count, a->suite, example[0] ? example : "family.0123abcd", a->suite);
}

/*
** --resume (resume.h): RUN's stored rows of case id count as if it had just
** run.  1 when RUN holds the case, 0 when it must run, -1 the store failed.
*/
static int case_recall(suite_run_state *st, const char *id) {
  static case_report report;
  int got = resume_case_report(st->db, st->run_id, id, &report);
  if (got <= 0) return got;
  gate_case_done(&st->gate, id, &report); /* the waivers and the baseline see every case of the run */
  resume_count_frozen(&st->frozen, &report);
  if (report.failed || gate_report_has_waived(&report)) progress_pause(&st->pg);
  gate_print_rows(stdout, id, &report);
  suite_run_tally_add(&st->t, &report);
  st->resumed_cases++;
  return 1;
}

/* Takes a case for this run (id filled in): stores it, then before_case; 1, 0 not selected, -1 store failed. */
static int case_take(suite_run_state *st, const char *spec, char *id, size_t id_len) {
  char family[64] = "", op[64] = "";
  int got;
  if (!case_selected(st, spec, id, id_len)) return 0;
  if (st->resuming && (got = case_recall(st, id)) != 0) return got < 0 ? -1 : 0; /* RUN holds it: not taken */
  case_spec_get(spec, "family", family, sizeof family);
  case_spec_get(spec, "op", op, sizeof op);
  if (store_case_put(st->db, id, op, family, spec, st->run_id) != 0) return -1;
  if (st->h->before_case) st->h->before_case(st->h->ctx, id, spec);
  return 1;
}

/* Records a case that ran (here or in a worker); returns 0, or -1 when the store failed. */
static int case_record(suite_run_state *st, const char *id, case_report *report) {
  static store_result rows[CASE_MAX_ROWS];
  if (st->h->after_case) st->h->after_case(st->h->ctx, id, report);
  gate_case_done(&st->gate, id, report); /* waivers and baseline see every check's rows */
  if (report->failed || gate_report_has_waived(report)) progress_pause(&st->pg); /* FAIL lines start on a clean line */
  gate_print_rows(stdout, id, report);
  suite_run_tally_add(&st->t, report);
  progress_case_done(&st->pg, report->failed);
  case_report_to_store(report, id, rows);
  return store_results_commit(st->db, st->run_id, rows, report->n);
}

/* Runs and records one case in this process; returns 0, or -1 when the store failed. */
static int run_one(suite_run_state *st, const char *spec) {
  static case_report report;
  char id[CASE_ID_MAX];
  int rc = case_take(st, spec, id, sizeof id);
  if (rc <= 0) return rc;
  gate_case_run(&st->gate, &st->ses.env, id, spec, &report);
  if (st->frozen.checking) frozen_oracle_check_case(&st->frozen, id, &report);
  return case_record(st, id, &report);
}

/* The worker pool's sink: a worker ran the case and its frozen-oracle check; the counts join ours. */
static int pool_take(void *ctx, const char *spec, char *id, size_t id_len) { return case_take(ctx, spec, id, id_len); }
static int pool_done(void *ctx, worker_reply *rep) {
  suite_run_state *st = ctx;
  st->frozen.cases_checked += rep->frozen_checked;
  st->frozen.cases_changed += rep->frozen_changed;
  st->frozen.cases_unpinned += rep->frozen_unpinned;
  return case_record(st, rep->case_id, &rep->report);
}

/*
** Runs the suite's cases on workers, heaviest first by the run before or
** the suite's times file (case_order.h); 0, -1 the store failed, -2 no
** worker started or the times file is malformed (printed).
*/
static int run_on_workers(const char *cmd, suite_run_state *st, const suite_run_args *a, const suite *s, int argc,
                          char **argv) {
  const worker_pool_launch launch = {argc, argv, a->suite, a->corpus, a->lanes};
  const worker_pool_sink sink = {st, pool_take, pool_done};
  char err[1024], times_path[4096];
  char **order = malloc((size_t)(s->count > 0 ? s->count : 1) * sizeof *order);
  int rc;
  if (!order) return store_fail(st->db, "out of memory ordering %d cases", s->count);
  case_times_path(a->corpus, a->suite, times_path, sizeof times_path);
  if ((rc = case_order_heaviest_first(st->db, a->suite, st->run_id, times_path, s->specs, s->count, order,
                                      &st->order, err, sizeof err)) != 0) {
    if (rc == -2) fprintf(stderr, "bitgate %s: %s\n", cmd, err);
    free(order);
    return rc;
  }
  rc = worker_pool_run(&a->workers, &launch, order, s->count, &sink, &st->pool, err, sizeof err);
  free(order);
  st->ses.have_device = st->pool.have_device; /* the summary speaks of the workers' sessions */
  snprintf(st->ses.device_reason, sizeof st->ses.device_reason, "%s", st->pool.device_reason);
  if (rc == -2) fprintf(stderr, "bitgate %s: %s\n", cmd, err);
  return rc;
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
  int c, width = 8;
  char waived[48] = ""; /* waived is its own count: never folded into passed */
  if (t->waived_cases) snprintf(waived, sizeof waived, ", %lld waived", t->waived_cases);
  printf("run %lld: suite %s, %lld cases, %lld passed, %lld failed%s (%.1f s)\n", st->run_id, a->suite, t->cases,
         t->cases - t->failed_cases - t->waived_cases, t->failed_cases, waived, seconds);
  for (c = LANE_COUNT; c < TALLY_COLUMNS; c++)
    if (t->rows[c]) width = 11; /* "capture@ref" */
  for (c = 0; c < TALLY_COLUMNS; c++)
    if (t->rows[c]) {
      char name[24];
      printf("  lane %-*s %lld results, %lld failed", width, run_tally_column_name(c, name, sizeof name), t->rows[c],
             t->failed_rows[c]);
      if (t->waived_rows[c]) printf(", %lld waived", t->waived_rows[c]);
      putchar('\n');
    }
  if (!t->cases && a->shard.n > 1)
    printf("  shard %s holds none of the cases%s\n", a->shard.text, a->filter ? " that --filter keeps" : "");
  if (!st->ses.have_device) printf("  device lanes not run: %s\n", st->ses.device_reason);
  kernel_sources_print_origin(stdout, "  ");
  if (st->use_workers) worker_pool_print(stdout, &st->pool);
  if (st->order.run && st->order.file[0])
    printf("  order: heaviest case first, by the case times of run %lld and, for %d cases it did not take, %s\n",
           st->order.run, st->order.file_cases, st->order.file);
  else if (st->order.run)
    printf("  order: heaviest case first, by the case times of run %lld\n", st->order.run);
  else if (st->order.file[0])
    printf("  order: heaviest case first, by the case times in %s\n", st->order.file);
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
  long long selected = 0, recorded = 0;
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
  if (!(st->resuming = a->resume_run != 0)) {
    rc = store_run_begin(st->db, &pv.p, &st->run_id);
  } else if ((rc = resume_reopen(cmd, st->db, st->run_id = a->resume_run, &pv.p, &recorded)) != EXIT_CODE_PASS) {
    store_close(st->db);
    return rc;
  }
  for (i = 0; i < s->count; i++) selected += case_selected(st, s->specs[i], id, sizeof id);
  progress_begin_stderr(&st->pg, selected > recorded ? selected - recorded : 0); /* what is left to run */
  if (rc == 0 && st->use_workers) rc = run_on_workers(cmd, st, a, s, argc, argv);
  for (i = 0; rc == 0 && !st->use_workers && i < s->count; i++) rc = run_one(st, s->specs[i]);
  progress_end(&st->pg);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc != 0) {
    if (rc != -2) fprintf(stderr, "bitgate %s: recording results failed: %s\n", cmd, store_errmsg(st->db));
    store_run_end(st->db, st->run_id, "error", EXIT_CODE_ENV);
    store_close(st->db);
    return EXIT_CODE_ENV;
  }
  res.args = a;
  res.tally = st->t;
  res.run_id = st->run_id;
  res.resumed_cases = st->resumed_cases;
  res.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  print_summary(st, a, res.seconds);
  if (st->resuming)
    printf("  resumed: %lld cases recorded before, %lld run now\n", st->resumed_cases, st->t.cases - st->resumed_cases);
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

/*
** --resume RUN (resume.h): the options become RUN's recorded ones, then those
** given now on top, which may only repeat them; --db stays the one given now.
*/
static resume_cmdline resume_cl; /* the options' strings point into it */
static int resume_args(const char *cmd, const char *default_suite, int argc, char **argv, const suite_run_hooks *h,
                       suite_run_args *a) {
  suite_run_args recorded;
  const char *db = a->db;
  long long run = a->resume_run;
  int rc = resume_load(cmd, db, run, argc, argv, &resume_cl);
  if (rc == EXIT_CODE_PASS) rc = parse_args(cmd, default_suite, resume_cl.n_recorded, resume_cl.argv, h, &recorded);
  if (rc == EXIT_CODE_PASS) rc = parse_args(cmd, default_suite, resume_cl.n_all, resume_cl.argv, h, a);
  a->db = db;
  a->resume_run = run;
  return rc == EXIT_CODE_PASS ? resume_compare(cmd, run, a, &recorded) : rc;
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
      if (st.h == &no_hooks) fputs(worker_options_help, stdout);
      fputs(resume_options_help, stdout);
      return EXIT_CODE_PASS;
    }
  if ((rc = parse_args(cmd, default_suite, argc, argv, st.h, &a)) != EXIT_CODE_PASS) return rc;
  if (a.resume_run) { /* RUN's options from here on, workers included: they parse argv */
    if ((rc = resume_args(cmd, default_suite, argc, argv, st.h, &a)) != EXIT_CODE_PASS) return rc;
    argc = resume_cl.n_all, argv = resume_cl.argv;
  }
  if ((a.workers.mode == WORKER_MODE_ON || a.workers.jobs > 1) && st.h != &no_hooks) /* hooks keep state here */
    return cli_usage_error(cmd, "%s: bitgate %s runs its cases in-process (its golden check counts here)",
                           a.workers.mode == WORKER_MODE_ON ? "--workers" : "--jobs", cmd);
  st.filter = a.filter;
  st.shard = &a.shard;
  if (suite_load(a.corpus, a.suite, &s, err, sizeof err) != 0) return cli_env_error(cmd, "%s", err);
  if (!s.count) /* an emptied or truncated suite file must not pass as a green run */
    rc = cli_env_error(cmd, "suite '%s' in %s holds no cases", a.suite, a.corpus);
  else if ((a.lanes & LANE_BIT(LANE_ORACLE)) &&
           frozen_oracle_open(&st.frozen, a.corpus, a.suite, err, sizeof err) == GOLDEN_DIGESTS_BAD)
    rc = cli_env_error(cmd, "%s", err);
  else /* after the corpus's own files: a damaged corpus is named whatever the filter */
    rc = filter_keeps_some(cmd, &a, &s);
  if (rc != EXIT_CODE_PASS) {
    suite_free(&s);
    frozen_oracle_close(&st.frozen);
    return rc;
  }
  st.use_workers = st.h == &no_hooks && worker_pool_wanted(&a.workers);
  if (!st.use_workers && session_open(&st.ses, a.lanes, a.require_gpu) != 0) {
    rc = cli_env_error(cmd, "a GPU is required (--require-gpu) but none is usable: %s", st.ses.device_reason);
  } else {
    if (st.frozen.checking) frozen_oracle_attach(&st.frozen, &st.ses.env);
    if (a.variant) runner_env_set_variant(&st.ses.env, a.variant); /* parse_args checked it */
    rc = run_suite(cmd, &st, &a, &s, argc, argv);
  }
  session_close(&st.ses);
  suite_free(&s);
  frozen_oracle_close(&st.frozen);
  gate_close(&st.gate);
  return rc;
}

/*
** gate.c: see gate.h.  Glue only: the rules live in repeat.c,
** known_failures.c and baseline.c.
*/
#include "harness/gate.h"
#include "harness/cli.h"
#include "harness/exit_codes.h"
#include "harness/store.h"

#include <stdlib.h>
#include <string.h>

#define GATE_REPEAT_MAX 1000 /* a typo guard: more would run for days */

const char gate_options_help[] =
    "gate options (bitgate run and nightly):\n"
    "  --repeat N     run the device lanes of every case N times (default 1); any\n"
    "                 difference between repeats is 'nondeterministic', a failure\n"
    "  --known-failures PATH\n"
    "                 waivers, one 'CASE_ID LANE OWNER REASON...' per line (default\n"
    "                 CORPUS/known-failures; absent = none; 'none' = off): a listed\n"
    "                 failing row is 'waived', which does not fail the run\n"
    "  --baseline RUN only failures new since run RUN of the same database fail the\n"
    "                 run; failures RUN had too are 'known from baseline'\n";

void gate_args_init(gate_args *a) {
  a->repeat = 1;
  a->known_failures = NULL;
  a->baseline_run = 0;
}

int gate_option(const char *cmd, int argc, char **argv, int *i, gate_args *a) {
  const char *value = NULL;
  unsigned long long n;
  int r;
  if ((r = cli_option_value(cmd, argc, argv, i, "--known-failures", &a->known_failures))) return r;
  if ((r = cli_option_value(cmd, argc, argv, i, "--repeat", &value))) {
    if (r < 0) return r;
    if (cli_parse_u64(value, &n) != 0 || n < 1 || n > GATE_REPEAT_MAX)
      return cli_usage_error(cmd, "--repeat '%s': expected a whole number from 1 to %d", value, GATE_REPEAT_MAX), -1;
    a->repeat = (int)n;
    return 1;
  }
  if ((r = cli_option_value(cmd, argc, argv, i, "--baseline", &value))) {
    if (r < 0) return r;
    if (cli_parse_u64(value, &n) != 0 || n < 1 || n > (unsigned long long)1 << 62)
      return cli_usage_error(cmd, "--baseline '%s': expected a run id (a positive number)", value), -1;
    a->baseline_run = (long long)n;
    return 1;
  }
  return 0;
}

int gate_open(gate *g, const gate_args *args, const char *cmd, const char *corpus, store *db) {
  char path[4096], err[1024];
  int rc;
  memset(g, 0, sizeof *g);
  g->args = *args;
  if (!args->known_failures)
    snprintf(path, sizeof path, "%s/known-failures", corpus);
  else
    snprintf(path, sizeof path, "%s", args->known_failures);
  if ((!args->known_failures || strcmp(args->known_failures, "none")) &&
      known_failures_load(&g->kf, path, !args->known_failures, err, sizeof err) != 0)
    return cli_env_error(cmd, "%s", err);
  if (args->baseline_run && (rc = baseline_open(&g->base, db, args->baseline_run, err, sizeof err)) != 0) {
    known_failures_free(&g->kf);
    return rc > 0 ? cli_usage_error(cmd, "%s", err) : cli_env_error(cmd, "%s", err);
  }
  return EXIT_CODE_PASS;
}

int gate_case_run(gate *g, runner_env *env, const char *case_id, const char *spec, case_report *r) {
  return case_run_repeated(env, case_id, spec, g->args.repeat, g->runner, r);
}

void gate_case_done(gate *g, const char *case_id, case_report *r) {
  int i;
  for (i = 0; i < r->n; i++) g->nondeterministic_rows += !strcmp(r->rows[i].status, "nondeterministic");
  known_failures_apply(&g->kf, case_id, r);
  baseline_note_case(&g->base, case_id, r);
}

int gate_end(gate *g, const char *suite, long long failed_cases, FILE *out) {
  if (g->args.repeat > 1)
    fprintf(out, "  repeat: device lanes run %d times per case, %lld results nondeterministic\n", g->args.repeat,
            g->nondeterministic_rows);
  known_failures_print(&g->kf, out);
  baseline_print(&g->base, suite, out);
  return g->base.run_id ? g->base.new_failures > 0 : failed_cases > 0;
}

void gate_close(gate *g) {
  known_failures_free(&g->kf);
  baseline_close(&g->base);
}

int gate_status_fails(const char *status) {
  return strcmp(status, "pass") && strcmp(status, "skipped") && strcmp(status, "waived");
}

int gate_report_has_waived(const case_report *r) {
  int i;
  for (i = 0; i < r->n; i++)
    if (!strcmp(r->rows[i].status, "waived")) return 1;
  return 0;
}

/* session_print_failures' FAIL lines, plus WAIVED lines: a waived row must not read as a failure, nor vanish. */
void gate_print_rows(FILE *out, const char *case_id, const case_report *r) {
  int i;
  for (i = 0; i < r->n; i++) {
    const result_row *row = &r->rows[i];
    if (gate_status_fails(row->status))
      fprintf(out, "FAIL %s %s step %d (%s): %s\n", case_id, row->lane, row->step, row->status, row->message);
    else if (!strcmp(row->status, "waived"))
      fprintf(out, "WAIVED %s %s step %d: %s\n", case_id, row->lane, row->step, row->message);
  }
}

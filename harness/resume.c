/*
** resume.c: see resume.h.  The checks that decide whether a run may be
** resumed, the recorded command line turned back into arguments, and a
** stored case turned back into the report it was stored from.
*/
#include "harness/resume.h"
#include "harness/cli.h"
#include "harness/exit_codes.h"
#include "harness/gate.h"
#include "harness/provenance.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char resume_options_help[] =
    "resume (bitgate run and nightly):\n"
    "  --resume RUN   carry on with run RUN of --db, killed or stopped by an error:\n"
    "                 its recorded options, the cases it holds not run again, the\n"
    "                 rest appended, RUN ended with the whole run's verdict.  Options\n"
    "                 given again must keep RUN's values; a finished RUN is refused\n";

/* ---- The recorded command line ---------------------------------------- */

/*
** The command line after the kernel settings provenance.c writes ahead of
** it ("BITGATE_KERNEL_TREE='D' BITGATE_PLANT='P' ", those set), or NULL
** with *which naming the first setting whose recorded value is not this
** process's: other kernels would write the rest of the rows.
*/
static const char *strip_settings(const char *line, const char **which) {
  int i;
  for (i = 0; i < PROVENANCE_SETTINGS; i++) {
    const char *var = provenance_settings[i], *now = getenv(var);
    size_t n = strlen(var), p;
    int recorded = !strncmp(line, var, n) && !strncmp(line + n, "='", 2);
    *which = var;
    if (!now || !*now) {
      if (recorded) return NULL;
      continue;
    }
    p = strlen(now);
    if (!recorded || strncmp(line + n + 2, now, p) || strncmp(line + n + 2 + p, "' ", 2)) return NULL;
    line += n + 2 + p + 2;
  }
  return line;
}

/* Splits line at spaces into out->argv (provenance.c joined argv with single spaces); -1 when too long. */
static int split_recorded(const char *line, resume_cmdline *out) {
  char *tok, *save = NULL;
  if (strlen(line) >= sizeof out->buf) return -1;
  snprintf(out->buf, sizeof out->buf, "%s", line);
  out->n_recorded = 0;
  for (tok = strtok_r(out->buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    if (out->n_recorded == RESUME_ARGS_MAX) return -1;
    out->argv[out->n_recorded++] = tok;
  }
  return 0;
}

/* Appends argv[1, argc) without --resume RUN; -1 when there is no room. */
static int append_given(int argc, char **argv, resume_cmdline *out) {
  int i;
  out->n_all = out->n_recorded;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--resume")) { /* and its value */
      i++;
      continue;
    }
    if (!strncmp(argv[i], "--resume=", 9)) continue;
    if (out->n_all == RESUME_ARGS_MAX) return -1;
    out->argv[out->n_all++] = argv[i];
  }
  return 0;
}

/* Checks RUN's row for load; the exit code, the error printed. */
static int check_run(const char *cmd, long long run_id, const char *db_path, const store_run_record *run,
                     int argc, char **argv, resume_cmdline *out) {
  const char *line = run->p.command_line ? run->p.command_line : "", *setting = NULL;
  if (strcmp(run->status, "running") && strcmp(run->status, "error"))
    return cli_usage_error(cmd, "--resume %lld: run %lld has finished (status %s); only a run that was killed "
                           "or stopped by an error resumes", run_id, run_id, run->status);
  if (!(line = strip_settings(line, &setting)))
    return cli_usage_error(cmd, "--resume %lld: %s differs from run %lld's (its command line: %s)", run_id, setting,
                           run_id, run->p.command_line);
  if (split_recorded(line, out) != 0 || append_given(argc, argv, out) != 0)
    return cli_usage_error(cmd, "--resume %lld: run %lld's command line is too long to read back", run_id, run_id);
  if (out->n_recorded == 0 || strcmp(out->argv[0], cmd))
    return cli_usage_error(cmd, "--resume %lld: run %lld in %s was not started by bitgate %s (its command line: %s)",
                           run_id, run_id, db_path, cmd, run->p.command_line ? run->p.command_line : "none");
  return EXIT_CODE_PASS;
}

int resume_load(const char *cmd, const char *db_path, long long run_id, int argc, char **argv, resume_cmdline *out) {
  static store_run_record run; /* 8 KiB: off the stack */
  store *db = NULL;
  char err[1024];
  int rc, got;
  if (access(db_path, F_OK) != 0) /* store_open would create it */
    return cli_usage_error(cmd, "--resume %lld: no database %s", run_id, db_path);
  if (store_open(db_path, &db, err, sizeof err) != 0) return cli_env_error(cmd, "%s", err);
  got = store_run_read(db, run_id, &run);
  if (got < 0)
    rc = cli_env_error(cmd, "%s", store_errmsg(db));
  else if (got > 0)
    rc = cli_usage_error(cmd, "--resume %lld: no run %lld in %s", run_id, run_id, db_path);
  else
    rc = check_run(cmd, run_id, db_path, &run, argc, argv, out);
  store_close(db);
  return rc;
}

/* ---- Options that must not change ------------------------------------- */

static const char *const option_names[] = {"--suite", "--filter", "--shard", "--lanes",
                                           "--repeat", "--known-failures", "--baseline"};
#define OPTION_COUNT ((int)(sizeof option_names / sizeof option_names[0]))

/* Option i's effective value in a, as text. */
static void option_text(const suite_run_args *a, int i, char *out, size_t len) {
  int l;
  out[0] = '\0';
  switch (i) {
  case 0: snprintf(out, len, "%s", a->suite); break;
  case 1: snprintf(out, len, "%s", a->filter ? a->filter : "(none)"); break;
  case 2: snprintf(out, len, "%s", a->shard.text); break;
  case 3:
    for (l = 0; l < LANE_COUNT; l++)
      if (a->lanes & LANE_BIT(l))
        snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? "," : "", lane_name((lane)l));
    break;
  case 4: snprintf(out, len, "%d", a->gate.repeat); break;
  case 5: snprintf(out, len, "%s", a->gate.known_failures ? a->gate.known_failures : "(corpus default)"); break;
  default: snprintf(out, len, a->gate.baseline_run ? "%lld" : "(none)", a->gate.baseline_run); break;
  }
}

int resume_compare(const char *cmd, long long run_id, const suite_run_args *now, const suite_run_args *recorded) {
  char was[1024], is[1024];
  int i;
  for (i = 0; i < OPTION_COUNT; i++) {
    option_text(recorded, i, was, sizeof was);
    option_text(now, i, is, sizeof is);
    if (strcmp(was, is))
      return cli_usage_error(cmd, "--resume %lld: %s %s differs from run %lld's %s; a resumed run keeps the "
                             "options it began with", run_id, option_names[i], is, run_id, was);
  }
  return EXIT_CODE_PASS;
}

/* ---- Same build, same device ------------------------------------------ */

static const struct {
  const char *name;
  size_t off;
  int is_text; /* else an int */
} build_fields[] = {
  {"git revision", offsetof(store_provenance, git_rev), 1},
  {"bitgate version", offsetof(store_provenance, bitgate_version), 1},
  {"oracle version", offsetof(store_provenance, oracle_version), 0},
  {"numerics version", offsetof(store_provenance, numerics_version), 0},
  {"kernel hash", offsetof(store_provenance, kernel_hash), 1},
  {"NVRTC version", offsetof(store_provenance, nvrtc_version), 1},
  {"NVRTC options", offsetof(store_provenance, nvrtc_options), 1},
  {"driver version", offsetof(store_provenance, driver_version), 0},
  {"device", offsetof(store_provenance, device_name), 1},
  {"compute capability", offsetof(store_provenance, compute_capability), 1},
};

/* Field i of p as text; a NULL string reads as "" (the store keeps NULL, provenance may pass ""). */
static void build_text(const store_provenance *p, int i, char *out, size_t len) {
  const char *base = (const char *)p + build_fields[i].off;
  const char *text = build_fields[i].is_text ? *(const char *const *)(const void *)base : NULL;
  if (build_fields[i].is_text)
    snprintf(out, len, "%s", text ? text : "");
  else
    snprintf(out, len, "%d", *(const int *)(const void *)base);
}

int resume_reopen(const char *cmd, store *db, long long run_id, const store_provenance *now,
                  long long *recorded_cases) {
  static store_run_record run;
  char was[1024], is[1024];
  int i, got = store_run_read(db, run_id, &run);
  if (got) return got < 0 ? cli_env_error(cmd, "%s", store_errmsg(db))
                          : cli_usage_error(cmd, "--resume %lld: run %lld has gone", run_id, run_id);
  for (i = 0; i < (int)(sizeof build_fields / sizeof build_fields[0]); i++) {
    build_text(&run.p, i, was, sizeof was);
    build_text(now, i, is, sizeof is);
    if (strcmp(was, is))
      return cli_usage_error(cmd, "--resume %lld: run %lld was recorded with %s '%s', this is '%s'; a run's "
                             "rows come from one build on one device", run_id, run_id, build_fields[i].name, was, is);
  }
  if (store_run_reopen(db, run_id) != 0 || store_run_case_count(db, run_id, recorded_cases) != 0)
    return cli_env_error(cmd, "%s", store_errmsg(db));
  return EXIT_CODE_PASS;
}

/* ---- Stored cases ------------------------------------------------------ */

/* store_results_each's callback: case_report_to_store backwards. */
static void add_row(void *ctx, const store_result *s) {
  case_report *r = ctx;
  result_row *x;
  if (r->n++ >= CASE_MAX_ROWS) return; /* counted, and refused by resume_case_report */
  x = &r->rows[r->n - 1];
  memset(x, 0, sizeof *x);
  snprintf(x->lane, sizeof x->lane, "%s", s->lane ? s->lane : "");
  snprintf(x->status, sizeof x->status, "%s", s->status ? s->status : "");
  snprintf(x->tensor, sizeof x->tensor, "%s", s->tensor ? s->tensor : "");
  snprintf(x->coords, sizeof x->coords, "%s", s->coords ? s->coords : "");
  snprintf(x->expected_hex, sizeof x->expected_hex, "%s", s->expected_hex ? s->expected_hex : "");
  snprintf(x->actual_hex, sizeof x->actual_hex, "%s", s->actual_hex ? s->actual_hex : "");
  snprintf(x->message, sizeof x->message, "%s", s->message ? s->message : "");
  snprintf(x->stage, sizeof x->stage, "%s", s->stage ? s->stage : "");
  x->step = s->step;
  x->has_mismatch = s->has_mismatch;
  x->flat_offset = s->flat_offset;
  x->ulp_distance = s->ulp_distance;
  x->mismatch_count = s->mismatch_count;
  x->nan_equivalent = s->nan_equivalent_count;
  x->oracle_ms = s->oracle_ms;
  x->device_ms = s->device_ms;
}

int resume_case_report(store *db, long long run_id, const char *case_id, case_report *r) {
  int i;
  r->n = r->failed = 0;
  if (store_results_each(db, run_id, case_id, add_row, r) != 0) return -1;
  if (r->n > CASE_MAX_ROWS) { /* the rows came from one case_report: cannot be */
    fprintf(stderr, "%s:%d: case %s has %d rows in run %lld, more than %d\n", __FILE__, __LINE__, case_id, r->n,
            run_id, CASE_MAX_ROWS);
    abort();
  }
  for (i = 0; i < r->n; i++) r->failed += gate_status_fails(r->rows[i].status); /* as after the waivers */
  return r->n > 0;
}

/*
** From the stored statuses: a row that had failed before the check keeps
** its own status (case_report_add_failure), so such a case counts as
** checked but not as changed; it fails the run either way.
*/
void resume_count_frozen(frozen_oracle *f, const case_report *r) {
  int i, changed = 0, unpinned = 0;
  if (!f->checking) return;
  for (i = 0; i < r->n; i++) {
    changed |= !strcmp(r->rows[i].status, "frozen_changed");
    unpinned |= !strcmp(r->rows[i].status, "unpinned");
  }
  f->cases_checked++;
  f->cases_changed += changed;
  f->cases_unpinned += unpinned;
}

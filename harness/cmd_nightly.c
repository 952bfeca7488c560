/*
** cmd_nightly.c: `bitgate nightly` (issue "Corpus and goldens", item 3):
** `bitgate run` (suite_run.h) with the golden-boundary check
** (golden_check.h) on every stage payload, then a Markdown report.
*/
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/golden_check.h"
#include "harness/suite_run.h"
#include "cases/case_spec.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char nightly_help[] =
    "usage: bitgate nightly [--suite NAME] [--db PATH] [--golden PATH] [--corpus DIR]\n"
    "                       [--filter GLOB] [--lanes LIST] [--report FILE] [--require-gpu]\n\n"
    "Runs a suite like `bitgate run` and holds every stage payload to the\n"
    "golden store: an oracle payload not yet there is stored (the first\n"
    "nightly pins the baseline), one that is must have the same digest, and a\n"
    "device payload must have its oracle golden's.  Each failing case names\n"
    "its first diverging stage; a stored payload that does not read back\n"
    "intact is \"golden corrupt\".\n"
    "  --suite NAME   corpus/NAME.suite (default nightly)\n"
    "  --golden PATH  the golden store (default ./bitgate-golden.db)\n"
    "  --report FILE  the Markdown report (default nightly-report.md)\n"
    "  other options as in bitgate run --help\n\n" EXIT_CODES_HELP;

typedef struct nightly {
  const char *golden_path, *report_path;
  golden_check g;
} nightly;

static int nightly_option(void *ctx, const char *cmd, int argc, char **argv, int *i) {
  nightly *n = ctx;
  int r;
  if ((r = cli_option_value(cmd, argc, argv, i, "--golden", &n->golden_path)) ||
      (r = cli_option_value(cmd, argc, argv, i, "--report", &n->report_path)))
    return r;
  return 0;
}

static int nightly_begin(void *ctx, runner_env *env, const suite_run_args *a, char *err, size_t err_len) {
  nightly *n = ctx;
  (void)a;
  if (golden_check_open(&n->g, n->golden_path, err, err_len) != 0) return -1;
  golden_check_attach(&n->g, env);
  return 0;
}

static void nightly_before_case(void *ctx, const char *id, const char *spec) {
  nightly *n = ctx;
  char family[64] = "", op[64] = "";
  case_spec_get(spec, "family", family, sizeof family);
  case_spec_get(spec, "op", op, sizeof op);
  golden_check_begin_case(&n->g, id, op, family, spec);
}

static void nightly_after_case(void *ctx, const char *id, case_report *r) {
  golden_check_end_case(&((nightly *)ctx)->g, id, r);
}

/* Bytes of path plus its -wal file (the store is in WAL mode); 0 when absent. */
static long long file_bytes(const char *path) {
  char wal[4200];
  struct stat st;
  long long n = stat(path, &st) == 0 ? (long long)st.st_size : 0;
  snprintf(wal, sizeof wal, "%s-wal", path);
  if (stat(wal, &st) == 0) n += (long long)st.st_size;
  return n;
}

/* Escapes '|' so a message stays in its table cell. */
static void put_cell(FILE *f, const char *s) {
  for (; *s; s++) fputs(*s == '|' ? "\\|" : (char[]){*s, 0}, f);
}

static int write_report(const nightly *n, const suite_run_result *res, long long golden_bytes) {
  const golden_check *g = &n->g;
  const suite_run_tally *t = &res->tally;
  FILE *f = fopen(n->report_path, "w");
  long long i;
  if (!f) return -1;
  fprintf(f, "# bitgate nightly: run %lld\n\n", res->run_id);
  fprintf(f, "- suite: %s\n- results: %s\n- golden store: %s (%.2f MiB)\n", res->args->suite, res->args->db,
          n->golden_path, (double)golden_bytes / (1024.0 * 1024.0));
  fprintf(f, "- cases: %lld, passed %lld, failed %lld (%.1f s)\n", t->cases, t->cases - t->failed_cases,
          t->failed_cases, res->seconds);
  if (res->resumed_cases) /* the golden counters saw only the cases run now */
    fprintf(f, "- resumed: %lld cases were recorded by earlier invocations of this run; the golden figures and "
            "the table below cover the %lld run now (%.1f s); the case counts above cover them all\n",
            res->resumed_cases, t->cases - res->resumed_cases, res->seconds);
  fprintf(f, "- golden payloads: %lld stored (oracle), %lld stored (device, no oracle golden), %lld compared\n",
          g->stored, g->device_stored, g->compared);
  fprintf(f, "- golden divergences: %lld cases; golden corrupt: %lld cases; golden store errors: %lld cases\n\n",
          g->cases_diverged, g->cases_corrupt, g->store_errors);
  if (!g->n_failures) {
    fputs("No golden-boundary failures.\n", f);
  } else {
    fputs("| case | kind | first stage | step | source | repro |\n|---|---|---|---|---|---|\n", f);
    for (i = 0; i < g->n_failures; i++) {
      const golden_failure *x = &g->failures[i];
      fprintf(f, "| %s | %s | %s | %d | %s | `bitgate repro %s --lanes %s` |\n", x->case_id,
              strcmp(x->kind, "corrupt") ? "divergence" : "golden corrupt", x->stage, x->step, x->source,
              x->case_id, strcmp(x->source, "device") ? "oracle" : "eager");
    }
    fputs("\nMessages:\n\n", f);
    for (i = 0; i < g->n_failures; i++) {
      fputs("- ", f);
      put_cell(f, g->failures[i].message);
      fputc('\n', f);
    }
  }
  return fclose(f) ? -1 : 0;
}

static int nightly_end(void *ctx, const suite_run_result *res) {
  nightly *n = ctx;
  const golden_check *g = &n->g;
  long long bytes = file_bytes(n->golden_path);
  int rc = g->cases_diverged ? EXIT_CODE_FAIL : EXIT_CODE_PASS;
  printf("  golden: %lld payloads stored, %lld device-only stored, %lld compared, %lld cases diverged, "
         "%lld golden corrupt (%s, %.2f MiB)\n", g->stored, g->device_stored, g->compared, g->cases_diverged,
         g->cases_corrupt, n->golden_path, (double)bytes / (1024.0 * 1024.0));
  if (g->cases_corrupt || g->store_errors) rc = EXIT_CODE_ENV;
  if (write_report(n, res, bytes) != 0) {
    fprintf(stderr, "bitgate nightly: cannot write the report '%s'\n", n->report_path);
    return EXIT_CODE_ENV;
  }
  printf("report in %s\n", n->report_path);
  return rc;
}

int cmd_nightly(int argc, char **argv) {
  nightly n;
  suite_run_hooks h = {0};
  int rc;
  memset(&n, 0, sizeof n);
  n.golden_path = "bitgate-golden.db";
  n.report_path = "nightly-report.md";
  h.ctx = &n;
  h.option = nightly_option;
  h.begin = nightly_begin;
  h.before_case = nightly_before_case;
  h.after_case = nightly_after_case;
  h.end = nightly_end;
  rc = suite_run_main("nightly", nightly_help, "nightly", argc, argv, &h);
  golden_check_close(&n.g);
  return rc;
}

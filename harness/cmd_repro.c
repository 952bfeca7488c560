/*
** cmd_repro.c: `bitgate repro ID` and `bitgate show ID`.
**
** repro reruns one case (by id, or a spec given in full) in the chosen lanes
** and prints "identical" or the first mismatch with all its details; it
** writes nothing to the database.  show prints the case's spec and where it
** was found.  Both accept ids from old runs: the database keeps every spec.
*/
#include "harness/case_lookup.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/session.h"
#include "harness/suite.h"

#include <stdio.h>
#include <string.h>

static const char repro_help[] =
    "usage: bitgate repro ID|SPEC [--lanes LIST] [--variant V] [--db PATH] [--corpus DIR]\n"
    "       bitgate show ID|SPEC [--db PATH] [--corpus DIR]\n\n"
    "repro reruns one case and prints 'identical' or the first mismatch (exit 0\n"
    "or 1).  show prints the case's spec and where it was found.  An id is\n"
    "looked up in every corpus suite, then in the results database (default\n"
    "./bitgate.db), so ids from old runs still resolve.\n"
    "  --lanes LIST   oracle,eager,capture,poison (default: all the machine can run)\n"
    "  --variant V    the device lanes' kernels: fast (default), reference or both\n\n" EXIT_CODES_HELP;

typedef struct repro_args {
  const char *target, *db, *corpus, *variant;
  lane_mask lanes;
} repro_args;

static int parse_repro_args(const char *cmd, int argc, char **argv, repro_args *a) {
  const char *lanes = NULL;
  char err[256];
  int i, r;
  a->target = NULL;
  a->db = "bitgate.db";
  a->corpus = suite_default_dir();
  a->lanes = LANE_ALL;
  a->variant = NULL;
  for (i = 1; i < argc; i++) {
    if ((r = cli_option_value(cmd, argc, argv, &i, "--db", &a->db)) ||
        (r = cli_option_value(cmd, argc, argv, &i, "--corpus", &a->corpus)) ||
        (!strcmp(cmd, "repro") && (r = cli_option_value(cmd, argc, argv, &i, "--lanes", &lanes))) ||
        (!strcmp(cmd, "repro") && (r = cli_option_value(cmd, argc, argv, &i, "--variant", &a->variant)))) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else if (argv[i][0] == '-' && argv[i][1] == '-') {
      return cli_usage_error(cmd, "unknown option '%s'", argv[i]);
    } else if (a->target) {
      return cli_usage_error(cmd, "unexpected argument '%s' (one case at a time)", argv[i]);
    } else {
      a->target = argv[i];
    }
  }
  if (!a->target) return cli_usage_error(cmd, "missing the case id");
  if (lanes && lane_mask_parse(lanes, &a->lanes, err, sizeof err) != 0) return cli_usage_error(cmd, "--lanes: %s", err);
  if (a->variant && runner_env_set_variant(NULL, a->variant) != 0)
    return cli_usage_error(cmd, "--variant '%s': expected fast, reference or both", a->variant);
  return EXIT_CODE_PASS;
}

/* Resolves the target; returns EXIT_CODE_PASS or the exit code to leave with. */
static int resolve(const char *cmd, const repro_args *a, char *spec, size_t spec_len, char *id, size_t id_len,
                   char *where, size_t where_len) {
  char err[1024];
  int rc = case_lookup(a->target, a->corpus, a->db, spec, spec_len, id, id_len, where, where_len, err, sizeof err);
  if (rc == 2) return cli_usage_error(cmd, "%s", err);
  if (rc == 1) return cli_env_error(cmd, "case %s is in no suite under %s and not in %s", a->target, a->corpus, a->db);
  if (rc < 0) return cli_env_error(cmd, "%s", err);
  if (case_check_spec(spec, err, sizeof err) != 0) return cli_usage_error(cmd, "case %s: %s", id, err);
  return EXIT_CODE_PASS;
}

static int is_help(int argc, char **argv) {
  int i;
  for (i = 1; i < argc; i++)
    if (cli_is_help(argv[i])) return 1;
  return 0;
}

int cmd_show(int argc, char **argv) {
  repro_args a;
  char spec[4096], id[128], where[512];
  int rc;
  if (is_help(argc, argv)) return fputs(repro_help, stdout), EXIT_CODE_PASS;
  if ((rc = parse_repro_args("show", argc, argv, &a)) != EXIT_CODE_PASS) return rc;
  if ((rc = resolve("show", &a, spec, sizeof spec, id, sizeof id, where, sizeof where)) != EXIT_CODE_PASS) return rc;
  printf("id    %s\nspec  %s\nfrom  %s\nrepro bitgate repro %s\n", id, spec, where, id);
  return EXIT_CODE_PASS;
}

int cmd_repro(int argc, char **argv) {
  static case_report report;
  repro_args a;
  session ses;
  char spec[4096], id[128], where[512];
  int rc, i;
  if (is_help(argc, argv)) return fputs(repro_help, stdout), EXIT_CODE_PASS;
  if ((rc = parse_repro_args("repro", argc, argv, &a)) != EXIT_CODE_PASS) return rc;
  if ((rc = resolve("repro", &a, spec, sizeof spec, id, sizeof id, where, sizeof where)) != EXIT_CODE_PASS) return rc;
  session_open(&ses, a.lanes, 0);
  if (a.variant) runner_env_set_variant(&ses.env, a.variant); /* checked while parsing */
  printf("case %s (%s)\n", id, where);
  case_run(&ses.env, id, spec, &report);
  for (i = 0; i < report.n; i++)
    printf("  %-7s step %2d  %s\n", report.rows[i].lane, report.rows[i].step, report.rows[i].status);
  if (!ses.have_device && (a.lanes & ~LANE_BIT(LANE_ORACLE))) printf("  device lanes not run: %s\n", ses.device_reason);
  session_close(&ses);
  for (i = 0; i < report.n; i++)
    if (strcmp(report.rows[i].status, "pass") && strcmp(report.rows[i].status, "skipped")) {
      printf("first mismatch: %s step %d (%s): %s\n", report.rows[i].lane, report.rows[i].step,
             report.rows[i].status, report.rows[i].message);
      return EXIT_CODE_FAIL;
    }
  printf("identical\n");
  return EXIT_CODE_PASS;
}

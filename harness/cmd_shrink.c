/*
** cmd_shrink.c: `bitgate shrink ID|SPEC` (issue "Corpus and goldens", item
** 5): makes a failing case smaller while it keeps failing the same way
** (harness/shrink.h), then appends the minimal case to corpus/regressions,
** which is part of suite gate, and pins its frozen-oracle digests.
**
** Exit codes: 0 shrunk (or already minimal: nothing written); 1 the case
** does not fail in the lanes that ran, so there is nothing to shrink; 2 a
** bad argument or a spec that does not parse; 3 environment: an unknown id
** (as repro), device lanes asked for on a machine without a usable GPU when
** the case passes in the others, an unwritable corpus.
*/
#include "cases/shrink_reduce.h"
#include "harness/case_lookup.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/session.h"
#include "harness/shrink.h"
#include "harness/suite.h"

#include <stdio.h>
#include <string.h>

static const char shrink_help[] =
    "usage: bitgate shrink ID|SPEC [--max-tries N] [--lanes LIST] [--corpus DIR]\n"
    "                      [--db PATH] [--dry-run]\n\n"
    "Makes a failing case smaller while its mismatch signature (lane, stage,\n"
    "tensor, kind of difference: value, nan, inf, index, junk, shape,\n"
    "error_parity, fail) stays the same: batch, heads, index heads, sequence\n"
    "and prefill, decode steps, topk, capacity, bias rank and (csa4) value\n"
    "magnitude, each tried at its floor, halfway and one less, greedily to a\n"
    "fixpoint.  Size is the bytes of every input at every step of the chain.\n"
    "The minimal case is appended to DIR/regressions (part of suite gate) with\n"
    "a '#' line (original id, signature, date, sizes), and its oracle digests\n"
    "are added to DIR/gate.digests (a same-version additive pin, noted in\n"
    "DIR/CHANGES).  Device lanes need a GPU.\n"
    "  --max-tries N  candidate runs at most (default 200)\n"
    "  --lanes LIST   where the original is run (default: all the machine can run);\n"
    "                 candidates run in the lane of its signature only\n"
    "  --corpus DIR   the corpus (default: $BITGATE_CORPUS or the source tree's corpus/)\n"
    "  --db PATH      where old runs' ids resolve (default ./bitgate.db)\n"
    "  --dry-run      print the result, write nothing\n\n"
    "exit codes: 0 shrunk (or already minimal); 1 the case does not fail, nothing\n"
    "to shrink; 2 usage error; 3 environment (unknown id, no GPU for the lanes\n"
    "asked, corpus not writable)\n";

typedef struct shrink_args {
  const char *target, *corpus, *db;
  lane_mask lanes;
  int max_tries, dry_run;
} shrink_args;

static int parse_shrink_args(int argc, char **argv, shrink_args *a) {
  const char *lanes = NULL, *tries = NULL;
  unsigned long long n;
  char err[256];
  int i, r;
  memset(a, 0, sizeof *a);
  a->corpus = suite_default_dir();
  a->db = "bitgate.db";
  a->lanes = LANE_ALL;
  a->max_tries = 200;
  for (i = 1; i < argc; i++) {
    if ((r = cli_option_value("shrink", argc, argv, &i, "--corpus", &a->corpus)) ||
        (r = cli_option_value("shrink", argc, argv, &i, "--db", &a->db)) ||
        (r = cli_option_value("shrink", argc, argv, &i, "--lanes", &lanes)) ||
        (r = cli_option_value("shrink", argc, argv, &i, "--max-tries", &tries))) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else if (!strcmp(argv[i], "--dry-run")) {
      a->dry_run = 1;
    } else if (argv[i][0] == '-' && argv[i][1] == '-') {
      return cli_usage_error("shrink", "unknown option '%s'", argv[i]);
    } else if (a->target) {
      return cli_usage_error("shrink", "unexpected argument '%s' (one case at a time)", argv[i]);
    } else {
      a->target = argv[i];
    }
  }
  if (!a->target) return cli_usage_error("shrink", "missing the case id");
  if (tries && (cli_parse_u64(tries, &n) != 0 || n < 1 || n > 100000))
    return cli_usage_error("shrink", "--max-tries '%s' is not a number in 1..100000", tries);
  if (tries) a->max_tries = (int)n;
  if (lanes && lane_mask_parse(lanes, &a->lanes, err, sizeof err) != 0)
    return cli_usage_error("shrink", "--lanes: %s", err);
  return EXIT_CODE_PASS;
}

/* The case's canonical spec and id; EXIT_CODE_PASS or the code to leave with. */
static int resolve(const shrink_args *a, char *spec, size_t spec_len, char *id, size_t id_len) {
  char raw[SHRINK_SPEC_MAX], where[512], err[1024];
  int rc = case_lookup(a->target, a->corpus, a->db, raw, sizeof raw, id, id_len, where, sizeof where, err, sizeof err);
  if (rc == 2) return cli_usage_error("shrink", "%s", err);
  if (rc == 1) return cli_env_error("shrink", "case %s is in no suite under %s and not in %s", a->target, a->corpus, a->db);
  if (rc < 0) return cli_env_error("shrink", "%s", err);
  if (case_check_spec(raw, err, sizeof err) != 0 || shrink_canonical(raw, spec, spec_len, err, sizeof err) != 0)
    return cli_usage_error("shrink", "case %s: %s", id, err);
  return case_id_from_spec(spec, id, id_len) != 0 ? cli_usage_error("shrink", "case %s: no family", a->target)
                                                  : EXIT_CODE_PASS;
}

/* Writes the regression and its digests; exit code. */
static int record(const shrink_args *a, const char *orig_id, const shrink_result *r) {
  char err[1200], note[600];
  int rc = shrink_regression_append(a->corpus, orig_id, r, err, sizeof err);
  if (rc < 0) return cli_env_error("shrink", "%s", err);
  if (rc == 1) return printf("suite gate already holds %s: nothing appended\n", r->id), EXIT_CODE_PASS;
  printf("appended %s to %s/%s (suite gate)\n", r->id, a->corpus, SUITE_REGRESSIONS);
  if ((rc = shrink_digests_add(a->corpus, r->id, r->spec, orig_id, note, sizeof note, err, sizeof err)) < 0)
    return cli_env_error("shrink", "%s; pin it with: bitgate golden pin --suite gate --reason 'add %s'", err, r->id);
  printf("%s\n", note);
  return EXIT_CODE_PASS;
}

static int shrink_case(const shrink_args *a, const char *spec, const char *id) {
  static shrink_result r;
  shrink_opts o = {a->max_tries, a->lanes, stdout};
  session ses;
  char err[1200], sig[200];
  int rc;
  session_open(&ses, a->lanes, 0);
  o.lanes = ses.env.lanes;
  rc = shrink_run(spec, shrink_probe_cases, &ses.env, &o, &r, err, sizeof err);
  session_close(&ses);
  if (rc == SHRINK_ERROR) return cli_env_error("shrink", "%s: %s", id, err);
  if (rc == SHRINK_NOT_FAILING && !ses.have_device && (a->lanes & ~LANE_BIT(LANE_ORACLE)))
    return cli_env_error("shrink", "case %s passes the oracle lane and the device lanes cannot run here: %s", id,
                         ses.device_reason);
  if (rc == SHRINK_NOT_FAILING)
    return printf("case %s does not fail in the lanes run: nothing to shrink\n", id), EXIT_CODE_FAIL;
  shrink_sig_text(&r.sig, sig, sizeof sig);
  if (!strcmp(r.id, id)) {
    printf("%s is already minimal: no smaller case keeps signature %s (%d tries)\n", id, sig, r.tries);
    return EXIT_CODE_PASS;
  }
  printf("shrunk %s -> %s: size %llu -> %llu bytes (%.1fx smaller), signature %s, %d tries%s\n%s\n", id, r.id,
         r.size_before, r.size_after, r.size_after ? (double)r.size_before / (double)r.size_after : 0.0, sig, r.tries,
         r.exhausted ? " (--max-tries reached)" : "", r.spec);
  if (a->dry_run) return printf("dry run: nothing written\n"), EXIT_CODE_PASS;
  return record(a, id, &r);
}

int cmd_shrink(int argc, char **argv) {
  shrink_args a;
  char spec[SHRINK_SPEC_MAX], id[CASE_ID_MAX];
  int i, rc;
  for (i = 1; i < argc; i++)
    if (cli_is_help(argv[i])) return fputs(shrink_help, stdout), EXIT_CODE_PASS;
  if ((rc = parse_shrink_args(argc, argv, &a)) != EXIT_CODE_PASS) return rc;
  if ((rc = resolve(&a, spec, sizeof spec, id, sizeof id)) != EXIT_CODE_PASS) return rc;
  return shrink_case(&a, spec, id);
}

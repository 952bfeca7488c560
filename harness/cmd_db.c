/*
** cmd_db.c: `bitgate db merge OUT IN... [--as-one-run]`, sharded result
** databases combined into one (harness/store_merge.h holds the rules), and
** `bitgate db times`, a run's case times as a suite's times file
** (harness/case_times.h).  Every input is checked before anything is
** copied; an OUT this command created is removed again when the merge
** fails, so a failed merge leaves no half-made database behind.
*/
#include "harness/case_times.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/shard.h"
#include "harness/store_merge.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char db_help[] =
    "usage: bitgate db merge OUT IN... [--as-one-run]\n"
    "       bitgate db times [--suite NAME] [--run N] [--db PATH]\n\n"
    "`db merge` combines result databases, e.g. those of `bitgate run --shard\n"
    "K/N`, into OUT (created if absent).  Every run of each IN is copied with its\n"
    "provenance under a new id (a run OUT already holds is skipped, so merging\n"
    "twice adds nothing); cases are added unless known; results follow their\n"
    "runs.  A case id whose spec differs between databases, a file that is not a\n"
    "bitgate database, or one with a newer schema is refused (exit 3) and OUT is\n"
    "left as it was.  Golden payloads are not merged.\n"
    "  --as-one-run  also add one run standing for all the merged runs: its\n"
    "                results are their union (the latest run's row wins where\n"
    "                two hold the same case, lane and step), its shard column\n"
    "                lists theirs (e.g. 1/2,2/2), so `bitgate report` (run\n"
    "                latest) reports the shards as one run.\n\n"
    "`db times` prints the case times of a run (default: the latest ended run\n"
    "of suite NAME, default gate, in PATH, default ./bitgate.db) as a times file:\n"
    "a case a line, heaviest first, its rows' oracle and device milliseconds\n"
    "summed.  Saved as corpus/NAME.times, it orders a run's cases heaviest\n"
    "first where the run's database has not timed them (a fresh one, as in CI),\n"
    "e.g. after a suite change:\n"
    "  bitgate run --suite gate --variant both --jobs 16 --db t.db\n"
    "  bitgate db times --suite gate --db t.db > corpus/gate.times\n\n" EXIT_CODES_HELP;

/* True when a and b name the same existing file. */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Prints which shards of N a combined run lacks, when its shards are all K/N of one N. */
static void print_missing_shards(const char *shards) {
  static unsigned char seen[SHARD_MAX + 1];
  char buf[1024], err[128];
  unsigned n = 0, k, missing = 0;
  shard sh;
  memset(seen, 0, sizeof seen);
  snprintf(buf, sizeof buf, "%s", shards);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    if (shard_parse(tok, &sh, err, sizeof err) != 0 || (n && sh.n != n)) return; /* mixed: nothing to say */
    n = sh.n;
    seen[sh.k] = 1;
  }
  for (k = 1; k <= n; k++) missing += !seen[k];
  if (!missing) return;
  printf("  note: %u of %u shards missing:", missing, n);
  for (k = 1; k <= n; k++)
    if (!seen[k]) printf(" %u/%u", k, n);
  printf("\n");
}

/* "db " + argv (argv[0] is "merge"), space-joined: the combined run's command line. */
static void join_args(int argc, char **argv, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, "db");
  for (int i = 0; i < argc && used < len; i++) used += (size_t)snprintf(buf + used, len - used, " %s", argv[i]);
}

static int db_merge(int argc, char **argv) {
  const char *out_path = NULL, *in[256];
  int n_in = 0, as_one = 0, created, i, rc = 0;
  store *out = NULL;
  store_merge_stats ms;
  char err[1024], cmdline[2048], shards[1024];
  long long run_id = 0, results = 0;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--as-one-run")) as_one = 1;
    else if (argv[i][0] == '-') return cli_usage_error("db merge", "unknown option '%s'", argv[i]);
    else if (!out_path) out_path = argv[i];
    else if (n_in < (int)(sizeof in / sizeof in[0])) in[n_in++] = argv[i];
    else return cli_usage_error("db merge", "more than %d inputs", (int)(sizeof in / sizeof in[0]));
  }
  if (!out_path || !n_in) return cli_usage_error("db merge", "needs OUT and at least one IN");
  for (i = 0; i < n_in; i++)
    if (same_file(out_path, in[i])) return cli_usage_error("db merge", "input '%s' is the output", in[i]);
  created = access(out_path, F_OK) != 0;
  if (store_open(out_path, &out, err, sizeof err) != 0) return cli_env_error("db merge", "%s", err);
  for (i = 0; !rc && i < n_in; i++) rc = store_merge_check(out, in[i]);
  for (i = 0; !rc && i < n_in; i++) {
    if ((rc = store_merge_copy(out, in[i], &ms)) != 0) break;
    printf("merged %s: %lld runs", in[i], ms.runs_new);
    if (ms.runs_new) printf(" (ids %lld-%lld)", ms.first_run, ms.last_run);
    if (ms.runs_known) printf(", %lld already in %s", ms.runs_known, out_path);
    printf(", %lld cases (%lld new), %lld results\n", ms.cases, ms.cases_new, ms.results);
  }
  if (!rc && as_one) {
    join_args(argc, argv, cmdline, sizeof cmdline);
    if ((rc = store_merge_as_one_run(out, cmdline, &run_id, &results, shards, sizeof shards)) == 0) {
      printf("combined run %lld: shards %s, %lld results (bitgate report --db %s --run %lld)\n", run_id,
             shards[0] ? shards : "-", results, out_path, run_id);
      print_missing_shards(shards);
    }
  }
  if (rc) {
    snprintf(err, sizeof err, "%s", store_errmsg(out));
    store_close(out);
    if (created) { /* leave no half-made output behind */
      char side[4200];
      unlink(out_path);
      snprintf(side, sizeof side, "%s-wal", out_path), unlink(side);
      snprintf(side, sizeof side, "%s-shm", out_path), unlink(side);
    }
    return cli_env_error("db merge", "%s", err);
  }
  store_close(out);
  printf("merged %d database%s into %s\n", n_in, n_in == 1 ? "" : "s", out_path);
  return EXIT_CODE_PASS;
}

typedef struct collected_times {
  case_time *v;
  int n, cap, out_of_memory;
} collected_times;

static void collect_time(void *ctx, const char *case_id, double ms) {
  collected_times *c = ctx;
  char *id;
  if (c->n == c->cap) {
    const int cap = c->cap ? 2 * c->cap : 1024;
    case_time *v = realloc(c->v, (size_t)cap * sizeof *v);
    if (!v) {
      c->out_of_memory = 1;
      return;
    }
    c->v = v, c->cap = cap;
  }
  if (!case_id || !(id = strdup(case_id))) {
    c->out_of_memory |= case_id != NULL;
    return;
  }
  c->v[c->n].case_id = id;
  c->v[c->n++].ms = ms;
}

/* The header of the times file written from run_id: what the figures are and where they came from. */
static void times_header(store *db, const char *path, const char *suite, long long run_id, char *buf, size_t len) {
  static store_run_record rec;
  const int known = store_run_read(db, run_id, &rec) == 0;
  snprintf(buf, len,
           "Case times of suite %s (harness/case_times.h): the order `bitgate run` hands\n"
           "cases to its workers in where its database has not timed them.\n"
           "Milliseconds, a case's rows' oracle and device times summed, from run %lld of %s\n"
           "(%s): %s\n"
           "device: %s; host: %s; git %s.  Written by `bitgate db times`.",
           suite, run_id, path, known ? rec.status : "?", known && rec.p.command_line ? rec.p.command_line : "?",
           known && rec.p.device_name ? rec.p.device_name : "none", known && rec.p.host ? rec.p.host : "?",
           known && rec.p.git_rev ? rec.p.git_rev : "?");
}

static int db_times(int argc, char **argv) {
  const char *suite = "gate", *path = "bitgate.db", *run_text = NULL;
  collected_times c = {NULL, 0, 0, 0};
  unsigned long long run = 0;
  long long from = 0;
  store *db = NULL;
  char err[1024], header[2048];
  int i, rc;
  for (i = 1; i < argc; i++) {
    if ((rc = cli_option_value("db times", argc, argv, &i, "--suite", &suite)) ||
        (rc = cli_option_value("db times", argc, argv, &i, "--run", &run_text)) ||
        (rc = cli_option_value("db times", argc, argv, &i, "--db", &path))) {
      if (rc < 0) return EXIT_CODE_USAGE;
    } else {
      return cli_usage_error("db times", "unknown argument '%s'", argv[i]);
    }
  }
  if (run_text && (cli_parse_u64(run_text, &run) != 0 || run < 1 || run > 1ull << 62))
    return cli_usage_error("db times", "--run '%s': expected a run id (a positive number)", run_text);
  if (access(path, F_OK) != 0) return cli_env_error("db times", "no database '%s'", path);
  if (store_open(path, &db, err, sizeof err) != 0) return cli_env_error("db times", "%s", err);
  rc = store_case_times(db, suite, run ? (long long)run + 1 : LLONG_MAX, &from, collect_time, &c);
  if (rc) {
    rc = cli_env_error("db times", "%s", store_errmsg(db));
  } else if (c.out_of_memory) {
    rc = cli_env_error("db times", "out of memory collecting the case times of run %lld", from);
  } else if (run && from != (long long)run) {
    rc = cli_usage_error("db times", "--run %llu: not an ended run of suite '%s' in '%s'", run, suite, path);
  } else if (!from) {
    rc = cli_env_error("db times", "'%s' holds no ended run of suite '%s'", path, suite);
  } else {
    times_header(db, path, suite, from, header, sizeof header);
    rc = case_times_write(stdout, header, c.v, c.n) == 0 ? EXIT_CODE_PASS
                                                           : cli_env_error("db times", "cannot write the times");
  }
  for (i = 0; i < c.n; i++) free((void *)c.v[i].case_id);
  free(c.v);
  store_close(db);
  return rc;
}

int cmd_db(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (cli_is_help(argv[i])) {
      fputs(db_help, stdout);
      return EXIT_CODE_PASS;
    }
  if (argc < 2) return cli_usage_error("db", "needs a subcommand: merge or times");
  if (!strcmp(argv[1], "merge")) return db_merge(argc - 1, argv + 1);
  if (!strcmp(argv[1], "times")) return db_times(argc - 1, argv + 1);
  return cli_usage_error("db", "unknown subcommand '%s' (merge or times)", argv[1]);
}

/*
** main.c: the bitgate command line.  Dispatches to one subcommand; each
** subcommand has its own --help.  Exit codes are in exit_codes.h.
*/
#include "device/kernel_sources.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/worker.h"
#include "oracle/oracle_threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *bitgate_version = BITGATE_VERSION;

static const struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
  int kernels; /* compiles kernels or records their hash: refused while BITGATE_KERNEL_TREE or _PLANT is unusable */
} commands[] = {
    {"run", cmd_run, "run a suite: oracle against device, every lane, results into SQLite", 1},
    {"nightly", cmd_nightly, "run a suite and hold every stage payload to the golden store; write a report", 1},
    {"report", cmd_report, "render a run of the results database: html, junit, md or json", 0},
    {"db", cmd_db, "merge result databases (e.g. --shard K/N's); print a run's case times", 0},
    {"list", cmd_list, "list the case ids of a suite", 0},
    {"show", cmd_show, "print a case's spec and where it comes from", 0},
    {"repro", cmd_repro, "rerun one case by id; print 'identical' or the first mismatch", 1},
    {"shrink", cmd_shrink, "shrink a failing case, keeping its signature; append it to corpus/regressions", 1},
    {"golden", cmd_golden, "re-pin the frozen oracle's digests after a version bump (with a reason)", 1},
    {"bench", cmd_bench, "time the kernels against the oracle (figures, never a verdict); --trend: their history", 1},
    {"numerics", cmd_numerics, "prove the frozen numerics correctly rounded (MPFR, GPU)", 1},
    {"audit", cmd_audit, "compile every kernel with the pinned NVRTC options and audit the PTX", 1},
    {"version", cmd_version, "print versions, git revision and whether a GPU is present", 0},
    {"worker", cmd_worker, NULL, 1}, /* hidden: run's worker process (worker.h) */
};
#define COMMAND_COUNT ((int)(sizeof commands / sizeof commands[0]))

static void print_help(FILE *out) {
  int i;
  fprintf(out, "usage: bitgate [--version] [--help] COMMAND [ARGS]\n\n"
               "bit-exact conformance harness: a frozen C oracle against the CUDA kernels\n\n"
               "commands:\n");
  for (i = 0; i < COMMAND_COUNT; i++)
    if (commands[i].summary) fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nEach command takes --help.  Results go to ./bitgate.db unless --db PATH.\n\n"
               "environment:\n"
               "  BITGATE_KERNEL_TREE=DIR  compile the kernels of the source tree DIR (another\n"
               "                           checkout) instead of the embedded ones\n"
               "  BITGATE_PLANT=FILE:OLD=>NEW  plant a bug: the first OLD in kernel FILE becomes NEW\n"
               "  BITGATE_ORACLE_THREADS=N  the oracle's threads (default: every core)\n"
               "  BITGATE_CORPUS=DIR       the corpus directory (default: the source tree's)\n\n%s",
          EXIT_CODES_HELP);
}

int main(int argc, char **argv) {
  int i;
  if (argc < 2) {
    print_help(stderr);
    return EXIT_CODE_USAGE;
  }
  if (cli_is_help(argv[1])) {
    print_help(stdout);
    return EXIT_CODE_PASS;
  }
  if (!strcmp(argv[1], "--version")) return cmd_version(argc - 1, argv + 1);
  if (!strcmp(argv[1], "worker")) worker_test_hooks_start(); /* before the check below reads the sources */
  for (i = 0; i < COMMAND_COUNT; i++) {
    const int help = argc > 2 && cli_is_help(argv[2]);
    if (strcmp(argv[1], commands[i].name)) continue;
    /*
    ** The settings that change what is run are checked before any command
    ** runs: a mistyped one would otherwise be ignored (the thread count) or
    ** surface only where kernels compile, on a GPU, while the oracle lane
    ** passed as if it were unset (the plant).
    */
    if (!help && oracle_threads_env() < 0)
      return cli_usage_error(argv[1], "BITGATE_ORACLE_THREADS='%.40s': expected a whole number from 1 to %d, or unset "
                                      "for every core",
                             getenv("BITGATE_ORACLE_THREADS"), ORACLE_THREADS_MAX);
    if (commands[i].kernels && kernel_tree_error() && !help)
      return cli_env_error(argv[1], "BITGATE_KERNEL_TREE: %s", kernel_tree_error());
    if (commands[i].kernels && kernel_plant_error() && !help) return cli_env_error(argv[1], "%s", kernel_plant_error());
    return commands[i].run(argc - 1, argv + 1);
  }
  fprintf(stderr, "bitgate: unknown command '%s' (try 'bitgate --help')\n", argv[1]);
  return EXIT_CODE_USAGE;
}

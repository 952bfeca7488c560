/*
** cmd_run.c: `bitgate run`, the main job (harness/suite_run.h does it).
*/
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/suite_run.h"

static const char run_help[] =
    "usage: bitgate run [--suite NAME] [--db PATH] [--corpus DIR] [--lanes LIST]\n"
    "                   [--filter GLOB] [--variant fast|reference|both] [--require-gpu]\n\n"
    "Runs every case of a suite against the oracle in every lane the machine\n"
    "can run and records each case's results in SQLite as soon as it finishes.\n"
    "  --suite NAME   corpus/NAME.suite (default gate)\n"
    "  --db PATH      results database (default ./bitgate.db)\n"
    "  --corpus DIR   where the suites are (default: $BITGATE_CORPUS or the\n"
    "                 source tree's corpus/)\n"
    "  --lanes LIST   comma-separated subset of oracle,eager,capture,poison\n"
    "                 (default: all; device lanes need a GPU)\n"
    "  --filter GLOB  only the cases whose id matches (e.g. 'is.capfront.*'); one\n"
    "                 that keeps no case is exit 2, before anything is recorded\n"
    "  --variant V    the device lanes' kernels: fast (default), reference (the\n"
    "                 seed's serial design) or both: the device lanes once per\n"
    "                 variant, the reference's rows as LANE@ref\n"
    "  --require-gpu  exit 3 when no GPU is usable instead of running the\n"
    "                 oracle lane alone\n\n"
    "The oracle lane compares every step's outputs (or rejection) with the\n"
    "suite's committed digests, corpus/NAME.digests, when it has them: a\n"
    "difference fails as frozen_changed, a case without digests as unpinned\n"
    "(bitgate golden --help).\n\n" EXIT_CODES_HELP;

int cmd_run(int argc, char **argv) { return suite_run_main("run", run_help, "gate", argc, argv, NULL); }

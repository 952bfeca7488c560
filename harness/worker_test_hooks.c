/*
** worker_test_hooks.c: test-only faults for the crash, hang and kernel-tree
** tests (worker.h).  Kept apart from the worker so that a reader of worker.c sees
** only the real protocol.  Called only from the worker loop, so an exported
** variable cannot crash an in-process run or `bitgate repro`.
*/
#include "harness/worker.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the environment variable var names case_id. */
static int names_case(const char *var, const char *case_id) {
  const char *v = getenv(var);
  return v && !strcmp(v, case_id);
}

void worker_test_hooks_case(const char *case_id) {
  if (names_case("BITGATE_TEST_CRASH_CASE", case_id)) {
    signal(SIGSEGV, SIG_DFL); /* die of it, as a host-side fault would */
    raise(SIGSEGV);
  }
  if (names_case("BITGATE_TEST_HANG_CASE", case_id))
    for (;;) pause(); /* only SIGKILL from the parent's --timeout ends this */
}

void worker_test_hooks_start(void) {
  const char *dir = getenv("BITGATE_TEST_WORKER_KERNEL_TREE");
  if (dir) setenv("BITGATE_KERNEL_TREE", dir, 1);
}

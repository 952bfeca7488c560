/*
** cmd_worker.c: `bitgate worker --fd N run RUN-OPTIONS...`, the hidden
** worker process of `bitgate run` (worker.h).  Only the parent starts it
** (worker_pool.c), so it is not in `bitgate --help`.  It parses run's
** options as run does, opens its own session (the GPU its
** CUDA_VISIBLE_DEVICES shows as device 0) and frozen-oracle check, and
** serves cases on fd N until the parent hangs up.
*/
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/frozen_oracle.h"
#include "harness/session.h"
#include "harness/suite_run.h"
#include "harness/worker.h"

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int cmd_worker(int argc, char **argv) {
  suite_run_args a;
  session ses;
  frozen_oracle frozen;
  worker_context w;
  unsigned long long fd;
  char err[1024];
  int rc;
  if (argc < 4 || strcmp(argv[1], "--fd") || cli_parse_u64(argv[2], &fd) != 0 || fd > 65535)
    return cli_usage_error("worker", "internal command, started by bitgate run: bitgate worker --fd N run OPTIONS");
  if ((rc = suite_run_parse("worker", "gate", argc - 3, argv + 3, &a)) != EXIT_CODE_PASS) return rc;
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* a parent killed mid-run (then --resume) must not leave a hung kernel behind */
  memset(&frozen, 0, sizeof frozen);
  if ((a.lanes & LANE_BIT(LANE_ORACLE)) &&
      frozen_oracle_open(&frozen, a.corpus, a.suite, err, sizeof err) == GOLDEN_DIGESTS_BAD)
    return cli_env_error("worker", "%s", err);
  if (session_open(&ses, a.lanes, a.require_gpu) != 0) {
    rc = cli_env_error("worker", "a GPU is required (--require-gpu) but none is usable: %s", ses.device_reason);
  } else {
    if (frozen.checking) frozen_oracle_attach(&frozen, &ses.env);
    if (a.variant) runner_env_set_variant(&ses.env, a.variant); /* the parent's --variant, checked there */
    w.env = &ses.env;
    w.frozen = &frozen;
    w.repeat = a.gate.repeat;
    rc = worker_serve((int)fd, &w, ses.have_device, ses.device_reason);
  }
  session_close(&ses);
  frozen_oracle_close(&frozen);
  close((int)fd);
  return rc;
}

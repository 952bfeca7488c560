/*
** worker_options.c: the worker options of `bitgate run` (worker_pool.h):
** parsing, whether workers run, and which GPU each worker gets.
*/
#include "harness/worker_pool.h"
#include "device/device.h"
#include "harness/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char worker_options_help[] =
    "  --workers      run the cases in worker processes even without a GPU\n"
    "  --in-process   run them in this process (debugging: a kernel fault or a\n"
    "                 hang then ends the run); default: workers when a GPU is\n"
    "                 present, so a crash or hang costs one case, not the run\n"
    "  --devices all|LIST  one worker per GPU, e.g. 0,1 (default 0)\n"
    "  --jobs N       N workers per GPU (1-16, default 1) sharing it; each\n"
    "                 worker's oracle gets cores / workers threads unless\n"
    "                 BITGATE_ORACLE_THREADS is set.  Without MPS\n"
    "                 (nvidia-cuda-mps-control -d) the workers' kernels take\n"
    "                 turns on the GPU; with it they run at once (the serial\n"
    "                 reference kernels of --variant both need that)\n"
    "  --timeout SECONDS   a case running longer is killed and recorded as\n"
    "                 'timeout' (workers only; default 600, 0: no limit)\n"
    "  Workers take the cases heaviest first by the case times of the same\n"
    "  suite's latest ended run in --db, and, for the cases it did not take\n"
    "  (all in a fresh database), by the suite's committed times file,\n"
    "  corpus/NAME.times (`bitgate db times` writes one; a malformed one is\n"
    "  exit 3); cases neither times first; with neither, the suite's order.\n"
    "  No long case starts last.\n";

void worker_args_init(worker_args *a) {
  a->mode = WORKER_MODE_AUTO;
  a->devices = NULL;
  a->jobs = 1;
  a->timeout_s = 600;
}

/* Parses "all" or a comma list of GPU ordinals into out (n_out entries); -1 when malformed. */
static int parse_devices(const char *text, int *out, int *n_out, int device_count) {
  const char *p = text;
  int n = 0;
  if (!strcmp(text, "all")) {
    for (n = 0; n < device_count && n < WORKER_DEVICES_MAX; n++) out[n] = n;
    if (n == 0) out[n++] = 0; /* no GPU: one worker still runs the oracle lane */
    *n_out = n;
    return 0;
  }
  while (*p) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 0 || v > 255 || n == WORKER_DEVICES_MAX || (*end && *end != ',')) return -1;
    out[n++] = (int)v;
    p = *end ? end + 1 : end;
    if (*end && !*p) return -1; /* a trailing comma */
  }
  *n_out = n;
  return n ? 0 : -1;
}

int worker_option(const char *cmd, int argc, char **argv, int *i, worker_args *a) {
  const char *value = NULL;
  unsigned long long n;
  int r, ids[WORKER_DEVICES_MAX], count;
  if (!strcmp(argv[*i], "--workers") || !strcmp(argv[*i], "--in-process")) {
    a->mode = argv[*i][2] == 'w' ? WORKER_MODE_ON : WORKER_MODE_OFF;
    return 1;
  }
  if ((r = cli_option_value(cmd, argc, argv, i, "--devices", &a->devices))) {
    if (r > 0 && parse_devices(a->devices, ids, &count, 1) != 0)
      return cli_usage_error(cmd, "--devices '%s': expected all or GPU numbers like 0,1 (at most %d)", a->devices,
                             WORKER_DEVICES_MAX), -1;
    return r;
  }
  if ((r = cli_option_value(cmd, argc, argv, i, "--jobs", &value))) {
    if (r < 0) return r;
    if (cli_parse_u64(value, &n) != 0 || n < 1 || n > WORKER_JOBS_MAX)
      return cli_usage_error(cmd, "--jobs '%s': expected workers per GPU from 1 to %d", value, WORKER_JOBS_MAX), -1;
    a->jobs = (int)n;
    return 1;
  }
  if ((r = cli_option_value(cmd, argc, argv, i, "--timeout", &value))) {
    if (r < 0) return r;
    if (cli_parse_u64(value, &n) != 0 || n > 86400)
      return cli_usage_error(cmd, "--timeout '%s': expected whole seconds from 0 (no limit) to 86400", value), -1;
    a->timeout_s = (int)n;
    return 1;
  }
  return 0;
}

int worker_pool_wanted(const worker_args *a) {
  device_info dev;
  if (a->mode != WORKER_MODE_AUTO) return a->mode == WORKER_MODE_ON;
  device_probe(&dev); /* the probe creates no context, so exec'd workers are unaffected */
  return dev.available;
}

/*
** The CUDA_VISIBLE_DEVICES value of each worker: the GPUs of --devices, as
** the parent's own CUDA_VISIBLE_DEVICES (if set) numbers them, so that
** `CUDA_VISIBLE_DEVICES=2,3 bitgate run --devices 1` uses GPU 3.
*/
int worker_pool_devices(const worker_args *a, char visible[][32], int *n_out) {
  device_info dev;
  const char *parent = getenv("CUDA_VISIBLE_DEVICES");
  const int jobs = a->jobs > 0 ? a->jobs : 1;
  int ids[WORKER_DEVICES_MAX], n, i, j;
  device_probe(&dev);
  if (parse_devices(a->devices ? a->devices : "0", ids, &n, dev.available ? dev.device_count : 0) != 0 ||
      n * jobs > WORKER_POOL_MAX)
    return -1;
  for (i = 0; i < n; i++) {
    const char *p = parent;
    int k;
    snprintf(visible[i * jobs], 32, "%d", ids[i]);
    for (k = 0; p && *p && k < ids[i]; k++) /* the ids[i]-th entry of the parent's list */
      p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p);
    if (p && *p) snprintf(visible[i * jobs], 32, "%.*s", (int)strcspn(p, ","), p);
    for (j = 1; j < jobs; j++) memcpy(visible[i * jobs + j], visible[i * jobs], 32);
  }
  *n_out = n * jobs;
  return 0;
}

int worker_pool_oracle_threads(int workers) {
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int share;
  if (workers < 1) workers = 1;
  share = online > 0 ? (int)(online / workers) : 1;
  return share > 0 ? share : 1;
}

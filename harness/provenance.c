/*
** provenance.c: see provenance.h.
*/
#include "harness/provenance.h"
#include "harness/commands.h"
#include "oracle/numerics/nx_base.h"
#include "oracle/oracle_version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const provenance_settings[PROVENANCE_SETTINGS] = {"BITGATE_KERNEL_TREE", "BITGATE_PLANT"};

/* The command line, led by the kernel settings in use (provenance.h). */
static void join_args(char *out, size_t cap, int argc, char **argv) {
  size_t used = 0;
  int i;
  out[0] = '\0';
  for (i = 0; i < PROVENANCE_SETTINGS; i++) {
    const char *value = getenv(provenance_settings[i]);
    if (value && *value) used += (size_t)snprintf(out + used, cap - used, "%s='%s' ", provenance_settings[i], value);
    if (used >= cap) used = cap - 1;
  }
  for (i = 0; i < argc && used + 1 < cap; i++) {
    int n = snprintf(out + used, cap - used, "%s%s", i ? " " : "", argv[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
}

void provenance_collect(provenance *pv, const char *suite, const char *shard, int argc, char **argv) {
  memset(pv, 0, sizeof *pv);
  device_probe(&pv->dev);
  if (gethostname(pv->host, sizeof pv->host - 1) != 0) strcpy(pv->host, "unknown");
  snprintf(pv->bitgate_version, sizeof pv->bitgate_version, "%s", bitgate_version);
  if (pv->dev.available)
    snprintf(pv->compute_capability, sizeof pv->compute_capability, "%d.%d", pv->dev.cc_major,
             pv->dev.cc_minor);
  join_args(pv->command_line, sizeof pv->command_line, argc, argv);
  pv->p.git_rev = bitgate_git_revision;
  pv->p.bitgate_version = pv->bitgate_version;
  pv->p.oracle_version = ORACLE_VERSION;
  pv->p.numerics_version = NX_NUMERICS_VERSION;
  pv->p.kernel_hash = device_kernel_hash();
  pv->p.nvrtc_version = device_nvrtc_version();
  pv->p.nvrtc_options = device_nvrtc_options();
  pv->p.driver_version = pv->dev.driver_version;
  pv->p.device_name = pv->dev.available ? pv->dev.name : "none";
  pv->p.compute_capability = pv->dev.available ? pv->compute_capability : "";
  pv->p.host = pv->host;
  pv->p.suite = suite;
  pv->p.shard = shard;
  pv->p.command_line = pv->command_line;
}

/*
** provenance.h: everything a run records about where and how it ran
** (issue "Foundation" item 4): revisions, versions, kernel hash, NVRTC, driver,
** device, host, suite, shard and the command line.
*/
#ifndef PROVENANCE_H
#define PROVENANCE_H

#include "device/device.h"
#include "harness/store.h"

typedef struct provenance {
  store_provenance p; /* points into the buffers below */
  device_info dev;
  char host[256], compute_capability[16], command_line[2048], bitgate_version[32];
} provenance;

/*
** The environment settings that change which kernels run, in the order a
** recorded command line starts with them (VAR='value' each, when set and
** not empty): the run says how to reproduce it, and --resume holds a
** resumed run to the same settings (resume.c).
*/
extern const char *const provenance_settings[];
enum { PROVENANCE_SETTINGS = 2 };

/* Fills *pv for a run of `suite` (shard "K/N" or "1/1") started by argv. */
void provenance_collect(provenance *pv, const char *suite, const char *shard, int argc, char **argv);

#endif

/*
** session.c: see session.h.
*/
#include "harness/session.h"
#include "device/device.h"
#include "device/runtime.h"

#include <string.h>

int session_open(session *s, lane_mask wanted, int require_gpu) {
  device_info dev;
  char err[512];
  memset(s, 0, sizeof *s);
  s->env.lanes = wanted;
  device_probe(&dev);
  if (dev.available && device_runtime_create(0, &s->env.rt, err, sizeof err) == 0) {
    s->have_device = 1;
    return 0;
  }
  snprintf(s->device_reason, sizeof s->device_reason, "%s", dev.available ? err : dev.reason);
  s->env.rt = NULL;
  s->env.lanes &= LANE_BIT(LANE_ORACLE);
  return require_gpu ? -1 : 0;
}

void session_close(session *s) {
  if (s->env.rt) device_runtime_destroy(s->env.rt);
  s->env.rt = NULL;
}

void session_print_failures(FILE *out, const char *case_id, const case_report *r) {
  int i;
  for (i = 0; i < r->n; i++) {
    const result_row *row = &r->rows[i];
    if (!strcmp(row->status, "pass") || !strcmp(row->status, "skipped")) continue;
    fprintf(out, "FAIL %s %s step %d (%s): %s\n", case_id, row->lane, row->step, row->status, row->message);
  }
}

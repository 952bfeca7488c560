/*
** session.h: what run and repro share: opening the device runtime when the
** machine has a GPU, choosing lanes, and printing a case's failures.
*/
#ifndef SESSION_H
#define SESSION_H

#include "harness/case_runner.h"

#include <stdio.h>

typedef struct session {
  runner_env env;
  char device_reason[640]; /* why device lanes do not run, when env.rt is NULL */
  int have_device;
} session;

/* Opens the runtime on GPU 0 if there is one; env.lanes = wanted, less the
** device lanes when there is no GPU.  Returns 0, or -1 when require_gpu and
** no GPU is usable (device_reason says why). */
int session_open(session *s, lane_mask wanted, int require_gpu);
void session_close(session *s);

/* Prints one line per failing row of r ("FAIL id lane step: message"). */
void session_print_failures(FILE *out, const char *case_id, const case_report *r);

#endif

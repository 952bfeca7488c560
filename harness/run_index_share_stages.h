/*
** run_index_share_stages.h: what the IndexShare lanes (run_index_share.c)
** and their stage payloads and localisation (run_index_share_stages.c)
** share: the step and context they pass around, and the payload functions
** the lanes call.  Internal to those two files.
*/
#ifndef RUN_INDEX_SHARE_STAGES_H
#define RUN_INDEX_SHARE_STAGES_H

#include "cases/index_share_cases.h"
#include "device/index_share_device.h"
#include "harness/case_runner.h"

#include <time.h>

/* One materialized step and the oracle's verdict on it. */
typedef struct is_step {
  tensor in[IS_CASE_MAX_INPUTS], out[IS_OUTPUT_COUNT];
  tensor stage[DEVICE_IS_STAGE_COUNT]; /* the oracle's payloads, when accepted and wanted */
  int n_in, n_out, rc, want_stages;
  index_share_attrs attrs;
  op_error err;
  double ms;
} is_step;

typedef struct is_ctx {
  runner_env *env;
  const char *id;
  is_case c;
  case_report *report;
} is_ctx;

/* Milliseconds since t0 (CLOCK_MONOTONIC). */
static inline double is_ms_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-6;
}

/*
** Runs the oracle on the step (sets rc, err, ms); with want_stages, traced,
** keeping the five payloads in s->stage when it accepts.  Returns s->rc.
*/
int is_step_oracle(is_step *s);

/* Frees the step's payloads (they become DTYPE_NONE). */
void is_stages_free(is_step *s);

/* Hands a step's payloads (from source "oracle" or "device") to the payload sink. */
void is_stages_hand(const is_ctx *x, int step, const tensor *stage, const char *source);

/*
** After an accepted eager execute on k, traced: copies the device's payloads,
** hands them over as "device" and compares them with s's in pipeline order;
** the first that differs marks row a mismatch of that payload.
*/
void is_stages_compare(is_ctx *x, device_index_share *k, result_row *row, const is_step *s);

/*
** Stage localisation of a device mismatch on step s, on a fresh instance:
** records the first stage whose own output differs (or why none could be
** named) on row.
*/
void is_localise(is_ctx *x, result_row *row, is_step *s);

#endif

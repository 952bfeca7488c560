/*
** csa_localise.c: stage localisation for the CSA chains (run_csa_chain.h,
** csa_chain_localise).
**
** A device step that differs from the oracle's is run again on the same
** buffers, one stage at a time, each stage fed the oracle's boundary
** payloads instead of the device's own upstream results: the oracle's
** presents are written into the device's output buffers and its stage
** payloads into the device's scratch slots, then only that stage's kernels
** run, and only that stage's own outputs are compared.  The first stage that
** still differs is the one whose own computation diverges; everything after
** it in the full run may only have inherited the error.
**
** A whole eager execute comes first: it sizes the scratch slots for this
** step's shapes (the capture lane may not have run one at this step).
*/
#include "harness/device_io.h"
#include "harness/diff.h"
#include "harness/run_csa_chain.h"

#include <stdio.h>
#include <string.h>

typedef struct localiser {
  const csa_chain_ratio *r;
  void *k;
  device_io *io;
  const csa_step *s;
} localiser;

/* Writes one oracle payload (a compare_order entry) over the device's own; 0 or -1. */
static int load_entry(const localiser *L, int e, char *why, size_t len) {
  if (e >= 0) {
    if (e >= L->s->n_out || device_io_upload_output(L->io, e, &L->s->out[e]) == 0) return 0;
    return snprintf(why, len, "cannot write the oracle's %s", L->r->output_names[e]), -1;
  }
  {
    const csa_chain_dev_stage *st = &L->r->dev_stages[-1 - e];
    const tensor *t = &L->s->stage[st->oracle_stage];
    if (t->dt == DTYPE_NONE) return snprintf(why, len, "the oracle's %s payload is missing",
                                             L->r->stage_names[st->oracle_stage]), -1;
    return L->r->dev_stage_load(L->k, st->device_stage, t, why, len);
  }
}

/*
** Compares one entry's device value with the oracle's: 0 equal, 1 differs
** (detail describes it), -1 could not read it (why in detail).
*/
static int check_entry(const localiser *L, int e, char *detail, size_t len) {
  const tensor *want;
  const char *name;
  tensor got;
  tensor_diff d;
  int rc;
  memset(&got, 0, sizeof got);
  if (e >= 0) {
    if (e >= L->s->n_out) return 0;
    want = &L->s->out[e];
    name = L->r->output_names[e];
    if (device_io_download(L->io, e, &got) != 0) {
      tensor_free(&got);
      return snprintf(detail, len, "cannot read the device's %s", name), -1;
    }
  } else {
    const csa_chain_dev_stage *st = &L->r->dev_stages[-1 - e];
    want = &L->s->stage[st->oracle_stage];
    name = L->r->stage_names[st->oracle_stage];
    if (want->dt == DTYPE_NONE) return 0;
    if (csa_chain_payload_alloc(&got, want->dt, want->rank, want->shape[0], want->shape[1], want->shape[2],
                                want->shape[3]) != 0)
      return snprintf(detail, len, "out of memory"), -1;
    if (L->r->dev_stage_copy(L->k, st->device_stage, &got, detail, len) != 0) {
      tensor_free(&got);
      return -1;
    }
  }
  rc = tensor_diff_run(want, &got, &d) ? 1 : 0;
  if (rc) tensor_diff_describe(&d, name, detail, len);
  tensor_free(&got);
  return rc;
}

int csa_chain_localise(const csa_chain_ratio *r, void *k, device_io *io, const csa_step *s, char *stage,
                       size_t stage_len, char *detail, size_t detail_len) {
  localiser L = {r, k, io, s};
  op_error err;
  int i, j, rc;
  stage[0] = detail[0] = '\0';
  if (!r->n_loc || s->rc != 0) return 0;
  op_error_clear(&err);
  if (r->dev_execute(k, io->in_p, io->n_in, io->out_p, io->n_out, &err) != DEVICE_CSA_OK)
    return snprintf(detail, detail_len, "whole execute: %s", err.message), -1;
  for (i = 0; i < r->n_loc; i++) {
    const csa_chain_loc_step *p = &r->loc[i];
    for (j = 0; j < p->n_loads; j++)
      if (load_entry(&L, p->loads[j], detail, detail_len) != 0) return -1;
    if (r->dev_execute_parts(k, p->parts, io->in_p, io->n_in, io->out_p, io->n_out, &err) != DEVICE_CSA_OK)
      return snprintf(detail, detail_len, "stage %s alone: %s", p->stage, err.message), -1;
    for (j = 0; j < p->n_checks; j++) {
      rc = check_entry(&L, p->checks[j], detail, detail_len);
      if (rc == 0) continue;
      if (rc == 1) snprintf(stage, stage_len, "%s", p->stage);
      return rc;
    }
  }
  return 0;
}

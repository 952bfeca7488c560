/*
** shrink.c: the greedy search of `bitgate shrink` (see shrink.h).
*/
#include "harness/shrink.h"
#include "cases/shrink_reduce.h"
#include "cases/spec_text.h"

#include <string.h>

int shrink_probe_cases(void *ctx, const char *id, const char *spec, lane_mask lanes, shrink_sig *out) {
  static case_report report; /* ~40 KiB: kept off the stack */
  runner_env env = *(const runner_env *)ctx;
  int rc;
  env.lanes &= lanes;
  rc = case_run(&env, id, spec, &report);
  shrink_sig_of_report(&report, out);
  return rc;
}

typedef struct shrink_state {
  shrink_probe_fn probe;
  void *ctx;
  const shrink_opts *o;
  shrink_result *r;
  lane_mask lanes; /* the signature's */
} shrink_state;

/* Probes one candidate; 1 when it keeps the signature, 0 when not, -1 when it cannot run. */
static int try_candidate(shrink_state *st, const char *knob, const char *cand) {
  char id[CASE_ID_MAX], was[64] = "(absent)", now[64] = "(absent)", text[200];
  shrink_sig sig;
  int keep;
  if (case_id_from_spec(cand, id, sizeof id) != 0) return -1;
  st->r->tries++;
  if (st->probe(st->ctx, id, cand, st->lanes, &sig) != 0 && !sig.failed) return 0;
  keep = shrink_sig_equal(&sig, &st->r->sig);
  if (st->o->log) {
    case_spec_get(st->r->spec, knob, was, sizeof was);
    case_spec_get(cand, knob, now, sizeof now);
    shrink_sig_text(&sig, text, sizeof text);
    fprintf(st->o->log, "  try %3d: %s %s -> %s: %s (%s)\n", st->r->tries, knob, was, now,
            keep ? "same signature, kept" : "signature changed", text);
    fflush(st->o->log);
  }
  if (keep) {
    snprintf(st->r->spec, sizeof st->r->spec, "%s", cand);
    st->r->accepted++;
  }
  return keep;
}

/*
** One knob: floor, half, minus one; after an acceptance start again from the
** floor.  Candidates equal to one already tried from this spec are skipped
** (near the floor the three moves coincide).  1 when anything was accepted.
*/
static int shrink_knob(shrink_state *st, const shrink_family *f, int k) {
  char cand[SHRINK_SPEC_MAX], tried[SHRINK_HOW_COUNT][SHRINK_SPEC_MAX];
  int how, n_tried = 0, any = 0, i, dup;
  for (how = 0; how < SHRINK_HOW_COUNT; how++) {
    if (st->r->tries >= st->o->max_tries) return (st->r->exhausted = 1), any;
    if (shrink_reduce(st->r->spec, k, (shrink_how)how, cand, sizeof cand) != 0) continue;
    for (i = dup = 0; i < n_tried; i++) dup |= !strcmp(tried[i], cand);
    if (dup) continue;
    snprintf(tried[n_tried++], sizeof tried[0], "%s", cand);
    if (try_candidate(st, f->knob_names[k], cand) == 1) {
      any = 1;
      how = -1, n_tried = 0; /* from the floor again, on the smaller case */
    }
  }
  return any;
}

int shrink_run(const char *spec, shrink_probe_fn probe, void *ctx, const shrink_opts *o, shrink_result *r, char *err,
               size_t err_len) {
  const shrink_family *f = shrink_family_of(spec);
  shrink_state st = {probe, ctx, o, r, 0};
  char text[200];
  int k, changed = 1;
  memset(r, 0, sizeof *r);
  if (!f) return spec_set_err(err, err_len, "no shrinker for this spec's family"), SHRINK_ERROR;
  snprintf(r->spec, sizeof r->spec, "%s", spec);
  if (case_id_from_spec(spec, r->id, sizeof r->id) != 0 || shrink_spec_size(spec, &r->size_before, err, err_len) != 0)
    return SHRINK_ERROR;
  if (probe(ctx, r->id, spec, o->lanes, &r->sig) != 0 && !r->sig.failed)
    return spec_set_err(err, err_len, "case %s could not be run", r->id), SHRINK_ERROR;
  if (!r->sig.failed) return SHRINK_NOT_FAILING;
  st.lanes = shrink_sig_lanes(&r->sig);
  shrink_sig_text(&r->sig, text, sizeof text);
  if (o->log) fprintf(o->log, "shrinking %s: signature %s, size %llu bytes\n", r->id, text, r->size_before);
  while (changed && !r->exhausted) {
    changed = 0;
    for (k = 0; k < f->n_knobs && !r->exhausted; k++) changed |= shrink_knob(&st, f, k);
  }
  if (case_id_from_spec(r->spec, r->id, sizeof r->id) != 0 || shrink_spec_size(r->spec, &r->size_after, err, err_len))
    return SHRINK_ERROR;
  return SHRINK_OK;
}

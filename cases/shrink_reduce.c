/*
** shrink_reduce.c: see shrink_reduce.h (dispatch and the helpers the
** family reducers share).
*/
#include "cases/shrink_reduce.h"
#include "cases/case_spec.h"
#include "cases/spec_text.h"

#include <stdlib.h>
#include <string.h>

const shrink_family *shrink_family_of(const char *spec) {
  static const shrink_family *const all[] = {&shrink_family_is, &shrink_family_csa128, &shrink_family_csa4};
  char family[64] = "";
  size_t i;
  if (case_spec_get(spec, "family", family, sizeof family) != 0) return NULL;
  for (i = 0; i < sizeof all / sizeof all[0]; i++)
    if (!strncmp(family, all[i]->prefix, strlen(all[i]->prefix))) return all[i];
  return NULL;
}

/*
** One knob one step toward its floor; a bias that broadcast against the old
** shape follows the new one (unless the bias level is the knob itself).
*/
int shrink_reduce(const char *spec, int knob, shrink_how how, char *out, size_t len) {
  const shrink_family *f = shrink_family_of(spec);
  const shrink_case_ops *ops = f ? f->ops : NULL;
  char err[512];
  long long v, t, before[4], after[4], *shape;
  int rc = -1, *rank;
  void *c;
  if (!f || knob < 0 || knob >= f->n_knobs || (unsigned)how >= SHRINK_HOW_COUNT) return -1;
  if (!(c = malloc(ops->case_bytes))) return -1;
  if (ops->parse(spec, c, err, sizeof err) != 0) goto done;
  v = ops->get(c, knob);
  rc = 1;
  if ((t = shrink_target(v, ops->floor(c, knob), how)) >= v) goto done;
  ops->bias_target(c, before);
  ops->set(c, knob, t);
  ops->bias_target(c, after);
  ops->bias(c, &rank, &shape);
  if (knob != ops->bias_knob) shrink_bias_follow(*rank, shape, before, after);
  rc = -1;
  if (ops->format(c, out, len) != 0) goto done;
  rc = ops->parse(out, c, err, sizeof err) != 0 ? 1 : 0; /* a candidate the grammar refuses is none */
done:
  free(c);
  return rc;
}

int shrink_spec_size(const char *spec, unsigned long long *bytes, char *err, size_t len) {
  const shrink_family *f = shrink_family_of(spec);
  *bytes = 0;
  if (!f) return spec_set_err(err, len, "no case family for this spec"), -1;
  return f->size(spec, bytes, err, len);
}

int shrink_canonical(const char *spec, char *out, size_t len, char *err, size_t err_len) {
  const shrink_family *f = shrink_family_of(spec);
  void *c;
  int rc = -1;
  if (!f) return spec_set_err(err, err_len, "no case family for this spec"), -1;
  if (!(c = malloc(f->ops->case_bytes))) return spec_set_err(err, err_len, "out of memory"), -1;
  if (f->ops->parse(spec, c, err, err_len) == 0) {
    rc = f->ops->format(c, out, len) != 0 ? -1 : 0;
    if (rc) spec_set_err(err, err_len, "spec too long");
  }
  free(c);
  return rc;
}

long long shrink_target(long long v, long long lo, shrink_how how) {
  if (v <= lo) return v;
  switch (how) {
  case SHRINK_HOW_MIN: return lo;
  case SHRINK_HOW_HALF: return lo + (v - lo) / 2;
  default: return v - 1;
  }
}

void shrink_bias_follow(int rank, long long shape[4], const long long old4[4], const long long new4[4]) {
  int j;
  for (j = 0; j < rank && rank <= 4; j++) {
    int axis = 4 - rank + j; /* right-aligned */
    if (shape[j] != 1 && shape[j] == old4[axis]) shape[j] = new4[axis];
  }
}

long long shrink_bias_level(int rank) { return rank < 0 ? 0 : 1 + rank; }

void shrink_bias_set_level(int *rank, long long shape[4], long long level) {
  int want = (int)level - 1, drop = *rank - want, j;
  if (want < 0) {
    *rank = -1;
    return;
  }
  for (j = 0; j < want; j++) shape[j] = shape[j + drop];
  for (; j < 4; j++) shape[j] = 0;
  *rank = want;
}

/*
** shrink_reduce.h: the spec edits `bitgate shrink` tries (issue "Corpus and
** goldens", item 5).  Each case family names its knobs, the spec keys that
** make a case bigger (batch, heads, sequence, chain length, topk, bias rank,
** value magnitude), and reduces one knob at a time toward its floor.
**
** A candidate is always a canonical spec that its family parses (so its id
** is the hash of its own text); couplings are carried along, e.g. a bias
** dim that equalled the batch follows the new batch, index heads that
** equalled the heads follow the heads, and capacity-present valid lengths
** are cut to the new batch and capacity.  Whether a candidate still fails
** the same way is the harness's business (harness/shrink.h).
**
** Families: cases/index_share_shrink.c, cases/csa128_shrink.c,
** cases/csa4_shrink.c.
*/
#ifndef CASES_SHRINK_REDUCE_H
#define CASES_SHRINK_REDUCE_H

#include <stddef.h>

/* How far one step goes: to the floor, halfway there, or one less. */
typedef enum shrink_how { SHRINK_HOW_MIN = 0, SHRINK_HOW_HALF, SHRINK_HOW_DEC, SHRINK_HOW_COUNT } shrink_how;

/*
** A family's parsed case seen through void pointers, so that reducing a knob
** and canonicalising are written once (shrink_reduce.c) for every family.
*/
typedef struct shrink_case_ops {
  size_t case_bytes; /* sizeof the family's parsed case */
  int bias_knob;     /* the knob that sets the bias level itself */
  int (*parse)(const char *spec, void *c, char *err, size_t len);
  int (*format)(const void *c, char *out, size_t len);
  long long (*get)(const void *c, int knob); /* "smaller" is lower for every knob */
  long long (*floor)(const void *c, int knob);
  void (*set)(void *c, int knob, long long v); /* with its couplings */
  void (*bias_target)(const void *c, long long t[4]); /* the shape the bias broadcasts against */
  void (*bias)(void *c, int **rank, long long **shape);
} shrink_case_ops;

typedef struct shrink_family {
  const char *prefix; /* "is.", "csa128.", "csa4." */
  int n_knobs;
  const char *const *knob_names; /* spec keys */
  const shrink_case_ops *ops;
  /* See shrink_spec_size. */
  int (*size)(const char *spec, unsigned long long *bytes, char *err, size_t len);
} shrink_family;

extern const shrink_family shrink_family_is, shrink_family_csa128, shrink_family_csa4;

/* The family of spec (by its family= prefix), or NULL. */
const shrink_family *shrink_family_of(const char *spec);

/*
** Writes into out spec with knob `knob` reduced as `how` says, canonical.
** 0 when out holds a candidate; 1 when there is none (the knob is at its
** floor, or the reduced case does not parse); -1 when spec itself does not
** parse or out is too small.
*/
int shrink_reduce(const char *spec, int knob, shrink_how how, char *out, size_t len);

/*
** A case's size: the bytes of every input tensor at every step of its
** chain, as materializing each step gives them (a threaded past counts at
** every step it is fed; absent inputs and dims <= 0 count nothing).  0, or
** -1 with err set.
*/
int shrink_spec_size(const char *spec, unsigned long long *bytes, char *err, size_t len);

/*
** The canonical text of spec (its family's parse, then format): a spec typed
** by hand may order its tokens differently, and only the canonical text's
** hash is the case's id.  0, or -1 with err set.
*/
int shrink_canonical(const char *spec, char *out, size_t len, char *err, size_t err_len);

/* ---- for the family files ---------------------------------------------- */

/* The value `how` moves v to, toward lo; v itself when it cannot move. */
long long shrink_target(long long v, long long lo, shrink_how how);

/*
** Keeps a bias following the shape it broadcasts against: each of the four
** right-aligned dims that equalled old4[i] (and was not 1) becomes new4[i].
*/
void shrink_bias_follow(int rank, long long shape[4], const long long old4[4], const long long new4[4]);

/*
** The bias knob's level: 0 none, 1 + rank otherwise.  Setting a lower level
** drops the leading dims (a right-aligned bias still broadcasts).
*/
long long shrink_bias_level(int rank);
void shrink_bias_set_level(int *rank, long long shape[4], long long level);

#endif

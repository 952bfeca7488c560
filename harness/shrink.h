/*
** shrink.h: `bitgate shrink`'s engine (issue "Corpus and goldens", item 5):
** greedy reduction of a failing case that keeps its mismatch signature
** (harness/shrink_signature.h), and the corpus bookkeeping of the result.
**
** The search: probe the original (its signature is the one to keep); then,
** knob after knob of the case's family (cases/shrink_reduce.h), try the knob
** at its floor, halfway there, and one less, accepting the first candidate
** whose signature is unchanged and retrying the same knob after each
** acceptance; passes repeat until one accepts nothing (a fixpoint) or
** max_tries probes have been spent.  Candidates run only in the lane of the
** signature.
**
** Size: the bytes of every input at every step of the chain, as
** materializing gives them (shrink_spec_size), so a 300-step chain counts
** its threaded caches 300 times.
*/
#ifndef SHRINK_H
#define SHRINK_H

#include "cases/case_spec.h"
#include "harness/shrink_signature.h"

#include <stdio.h>

/*
** Runs spec (whose id is id) in `lanes` and fills *out with its signature.
** 0, or -1 when it could not be run at all.  Production: shrink_probe_cases
** (case_run); tests plug in their own.
*/
typedef int (*shrink_probe_fn)(void *ctx, const char *id, const char *spec, lane_mask lanes, shrink_sig *out);

/* The production probe: case_run in ctx's runner_env, with lanes replaced. */
int shrink_probe_cases(void *env, const char *id, const char *spec, lane_mask lanes, shrink_sig *out);

typedef struct shrink_opts {
  int max_tries;     /* probes of candidates, at most (the original's is extra) */
  lane_mask lanes;   /* where the original is probed */
  FILE *log;         /* progress lines, or NULL */
} shrink_opts;

#define SHRINK_SPEC_MAX 4096

typedef struct shrink_result {
  char spec[SHRINK_SPEC_MAX], id[CASE_ID_MAX]; /* the smallest case found */
  shrink_sig sig;                              /* the original's, kept */
  unsigned long long size_before, size_after;
  int tries, accepted, exhausted; /* exhausted: max_tries ran out before a fixpoint */
} shrink_result;

enum { SHRINK_OK = 0, SHRINK_NOT_FAILING = 1, SHRINK_ERROR = -1 };

/*
** Shrinks spec (canonical, parsed by its family).  SHRINK_OK with *r filled
** (r->spec may be the original when nothing smaller fails the same way);
** SHRINK_NOT_FAILING when the original passes in o->lanes; SHRINK_ERROR
** with err set.
*/
int shrink_run(const char *spec, shrink_probe_fn probe, void *ctx, const shrink_opts *o, shrink_result *r, char *err,
               size_t err_len);

/*
** Appends r's case to DIR/regressions (SUITE_REGRESSIONS, so it joins
** suite gate): a "#" line (original id, signature, date, sizes) and the
** spec.  1 when gate already holds the id (nothing written), 0, or -1 with
** err set.
*/
int shrink_regression_append(const char *dir, const char *orig_id, const shrink_result *r, char *err, size_t len);

/*
** Pins the new case's oracle digests into DIR/gate.digests the way a
** same-version `bitgate golden pin` adds cases: the pinned entries are kept
** as they are, the case's are appended, and corpus/CHANGES gets a dated
** "added 1" line.  0 pinned; 1 nothing to do (no digests file, or the case
** is pinned already: *note says which); -1 with err set (a file pinned by
** another oracle version, an oracle failure, an I/O error).
*/
int shrink_digests_add(const char *dir, const char *id, const char *spec, const char *orig_id, char *note,
                       size_t note_len, char *err, size_t len);

#endif

/*
** shrink_signature.h: a failing case's mismatch signature, what `bitgate
** shrink` must keep while it makes the case smaller (issue "Corpus and
** goldens", item 5): the lane, the stage, the tensor and the kind of
** difference of the case's first failing row.
**
** The first failing row is the earliest failing row of the lowest lane in
** lane order (oracle, eager, capture, poison), so the choice does not depend
** on which step a lane reached first.  Its
**   stage   result_row.stage when the failure was localised, else the
**           tensor (for a CSA step compared in pipeline order, the tensor
**           is the first diverging stage or output);
**   tensor  result_row.tensor ("" for failures that name none);
**   kind    one of the names below, from the row's status and its first
**           mismatching element:
**     value         both finite, a ULP distance apart
**     nan           one side NaN (two NaNs compare equal)
**     inf           one side infinite, the other not the same infinity
**     index         integers or bytes (no ULP distance): indices, records
**     junk          the device value is still the 0xa5 junk fill (never written)
**     shape         the dtype or shape differs
**     error_parity  one side rejects, or the two reject differently
**     fail          the lane failed (device error, guard, capture, download)
**     other statuses (frozen_changed, unpinned, ...) are their own kind.
** The step, offsets, values and counts are not part of it: they move as the
** case shrinks.
*/
#ifndef SHRINK_SIGNATURE_H
#define SHRINK_SIGNATURE_H

#include "harness/case_runner.h"

#include <stddef.h>

typedef struct shrink_sig {
  int failed; /* 0: the case passes (the other fields are empty) */
  char lane[16], stage[40], tensor[32], kind[24];
} shrink_sig;

/* The kind of difference of one failing row (one of the names above). */
const char *shrink_sig_kind(const result_row *row);

/* The signature of a report: its first failing row's, or failed 0. */
void shrink_sig_of_report(const case_report *r, shrink_sig *out);

/* 1 when a and b are the same signature (both passing counts as the same). */
int shrink_sig_equal(const shrink_sig *a, const shrink_sig *b);

/* "eager/CandidateAssembly/CandidateAssembly/value", or "pass". */
void shrink_sig_text(const shrink_sig *s, char *out, size_t len);

/* The lanes a signature needs run: its own lane (all lanes for "pass"). */
lane_mask shrink_sig_lanes(const shrink_sig *s);

#endif

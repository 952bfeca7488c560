/*
** frozen_oracle.h: the frozen-oracle check of the oracle lane (DESIGN.md
** "Cases, ids, corpus"; issue "Corpus and goldens", item 2).
**
** A frozen_oracle plugs into runner_env's oracle-outcome sink and turns each
** step's outcome into digest entries (golden_digests.h): one per output
** tensor, or one "rejected" entry naming the error.  In check mode it then
** compares a finished case's entries with the pinned ones and, on the first
** difference, adds a failing oracle row that names the case, step and tensor:
**   frozen oracle changed: csa4.chain.1234abcd step 3 tensor
**   present_index_key: digest X, pinned Y; re-pin with bitgate golden pin
** A case the file does not pin fails as "unpinned".  In pin mode it only
** collects every case's entries, which `bitgate golden pin` writes out.
*/
#ifndef FROZEN_ORACLE_H
#define FROZEN_ORACLE_H

#include "harness/case_runner.h"
#include "harness/golden_digests.h"

#include <stddef.h>

typedef struct frozen_oracle {
  golden_digests pinned;   /* check mode: the committed file (empty in pin mode) */
  golden_digests observed; /* the current case's entries (pin mode: every case's) */
  char path[4096];         /* the digests file */
  int checking, out_of_memory;
  long long cases_checked, cases_changed, cases_unpinned;
} frozen_oracle;

/*
** Check mode: loads DIR/SUITE.digests.  Returns 0; GOLDEN_DIGESTS_ABSENT
** when the suite has no digests file (nothing to check); or
** GOLDEN_DIGESTS_BAD with err naming the file, line and problem.
*/
int frozen_oracle_open(frozen_oracle *f, const char *dir, const char *suite, char *err, size_t err_len);

/* Pin mode: collects entries only. */
void frozen_oracle_open_pin(frozen_oracle *f);

/* Routes env's oracle outcomes into f (f must outlive the runs). */
void frozen_oracle_attach(frozen_oracle *f, runner_env *env);

/*
** Check mode: compares the case just run (case_run into r) with its pinned
** entries; on a difference adds one failing oracle row to r.  Then forgets
** the case's entries.  Returns 0 when identical.
*/
int frozen_oracle_check_case(frozen_oracle *f, const char *case_id, case_report *r);

/*
** When the file was pinned by another oracle or numerics version than this
** build's, writes why (with the re-pin hint) and returns 1; else 0.
*/
int frozen_oracle_stale(const frozen_oracle *f, char *why, size_t len);

void frozen_oracle_close(frozen_oracle *f);

struct tensor;
struct op_error;

/* An entry's VALUE for an output tensor: "f32[2,3]:<xxh3-128 hex>". */
void frozen_oracle_tensor_value(const struct tensor *t, char *out, size_t len);
/* An entry's VALUE for a rejection: "index:rule=out_of_range:input=-1:axis=-1:at=0,1,2,3". */
void frozen_oracle_rejection_value(const struct op_error *e, char *out, size_t len);

#endif

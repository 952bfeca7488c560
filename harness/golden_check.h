/*
** golden_check.h: the nightly's golden-boundary check (DESIGN.md "Golden
** boundaries"; issue "Corpus and goldens", item 3).
**
** A golden_check plugs into runner_env's payload sink and holds every stage
** payload to a golden store (a store.h file of its own), keyed at this
** build's ORACLE_VERSION.  Payloads are identified by digest: XXH3-128 with
** NaNs of one dtype equal, as frozen_oracle_tensor_value writes it.
**   oracle payload, absent:  stored (the first nightly pins the baseline);
**   oracle payload, present: must have the stored digest;
**   device payload:          must have the stored oracle digest of its key;
**                            with no oracle golden it is stored as 'device'.
** A stored payload is verified on read: its blob must decompress to exactly
** the length of its dtype and shape and hash to its stored digest, else it is
** "golden corrupt" (never a pass, never a divergence).
** The sink carries no tensor name: a stage payload is one tensor, so the
** tensor column holds the stage name.
*/
#ifndef GOLDEN_CHECK_H
#define GOLDEN_CHECK_H

#include "harness/case_runner.h"

#include <stddef.h>

struct store;

/* One failing case, for the report. */
typedef struct golden_failure {
  char case_id[96];
  char kind[16];   /* "divergence" or "corrupt" */
  char stage[64];
  char source[8];  /* "oracle" or "device" */
  int step;
  char message[768];
} golden_failure;

/* The current case's first finding per source (0 oracle, 1 device). */
typedef struct golden_finding {
  int found, step, corrupt;
  char stage[64], why[384];
} golden_finding;

typedef struct golden_pending golden_pending; /* a payload queued for the store (golden_check.c) */
typedef struct golden_verified golden_verified; /* an oracle golden read back in this case (golden_check.c) */

typedef struct golden_check {
  struct store *golden;
  char case_id[96]; /* the case between begin_case and end_case */
  golden_pending *pending;
  long long n_pending, cap_pending;
  size_t pending_bytes;
  golden_verified *verified;
  long long n_verified, cap_verified;
  int threads; /* compression workers */
  char path[4096];
  golden_finding first[2];
  int store_failed; /* a store error in this case (not corruption) */
  char store_error[512];
  long long stored, device_stored, compared, cases_diverged, cases_corrupt, store_errors;
  golden_failure *failures;
  long long n_failures, cap_failures;
} golden_check;

/* Opens (creating) the golden store at path; 0, or -1 with err. */
int golden_check_open(golden_check *g, const char *path, char *err, size_t err_len);

/* Routes env's stage payloads into g (g must outlive the runs). */
void golden_check_attach(golden_check *g, runner_env *env);

/* Before a case runs: records its spec in the golden store (its payloads' key). */
void golden_check_begin_case(golden_check *g, const char *case_id, const char *op, const char *family,
                             const char *spec);

/*
** After a case ran: adds one failing row per source with a finding (oracle
** lane for oracle payloads, eager for device ones):
**   mismatch  "golden boundary: first divergence at stage S (tensor T, step N, source X)"
**   fail      "golden corrupt: case ID stage S step N (source X): why"
** and forgets the case.
*/
void golden_check_end_case(golden_check *g, const char *case_id, case_report *r);

void golden_check_close(golden_check *g);

#endif

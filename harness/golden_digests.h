/*
** golden_digests.h: the frozen oracle's committed digests file,
** corpus/NAME.digests (DESIGN.md "Cases, ids, corpus": the oracle is frozen;
** a change that alters any digest fails until it is re-pinned on purpose,
** with an oracle version bump and a reason in corpus/CHANGES).
**
** The file is text.  Lines starting with '#' are comments.  A header of six
** "KEY VALUE" lines comes first, in this order:
**   bitgate-digests 1    the format of this file (GOLDEN_DIGESTS_FORMAT)
**   oracle 1             ORACLE_VERSION the digests were pinned with
**   numerics 1           NX_NUMERICS_VERSION they were pinned with
**   algorithm xxh3-128   the digest (GOLDEN_DIGESTS_ALGORITHM)
**   suite gate           the suite they pin
**   entries N            how many entry lines follow, so a file cut short
**                        at a line boundary is caught too
** then one entry per (case id, step, output tensor), each case's entries
** together, in the order the oracle lane produces them:
**   ID STEP NAME VALUE
** VALUE is "DTYPE[D0,D1,..]:HEX" for an output tensor, HEX being the XXH3-128
** digest of the tensor's bytes in canonical (big-endian) hex; a step the
** oracle rejects has NAME "rejected" and VALUE
** "CLASS:rule=R:input=I:axis=A:at=B,H,Q,C" (op_error's fields), so a change
** in error behaviour is caught as well as a change in output bits.
*/
#ifndef GOLDEN_DIGESTS_H
#define GOLDEN_DIGESTS_H

#include <stddef.h>

#define GOLDEN_DIGESTS_FORMAT 1
#define GOLDEN_DIGESTS_ALGORITHM "xxh3-128"
#define GOLDEN_REJECTED "rejected" /* the NAME of a rejected step's entry */

typedef struct golden_entry {
  char case_id[96]; /* CASE_ID_MAX */
  int step;
  char name[32];
  char value[128];
} golden_entry;

typedef struct golden_case_index {
  const char *case_id; /* points into entries[first] */
  long long first, count;
} golden_case_index;

typedef struct golden_digests {
  int oracle_version, numerics_version;
  char suite[64];
  golden_entry *entries;
  long long n, cap;
  golden_case_index *cases; /* sorted by id; built by golden_digests_read */
  long long n_cases;
} golden_digests;

/* What golden_digests_read returns besides 0. */
enum { GOLDEN_DIGESTS_ABSENT = 1, GOLDEN_DIGESTS_BAD = -1 };

/* DIR/SUITE.digests into path. */
void golden_digests_path(const char *dir, const char *suite, char *path, size_t len);

/*
** Reads the digests file at path into *out (zeroed first).  header_only stops
** after the header.  Returns 0; GOLDEN_DIGESTS_ABSENT when there is no such
** file; or GOLDEN_DIGESTS_BAD with err naming the file, the line and what is
** wrong with it ("corpus/gate.digests:12: ...").  expect_suite, when not
** NULL, must be the suite the header names.
*/
int golden_digests_read(const char *path, int header_only, const char *expect_suite, golden_digests *out, char *err,
                        size_t err_len);

/* Appends one entry (fields longer than an entry holds are an error); 0 or -1. */
int golden_digests_append(golden_digests *d, const char *case_id, int step, const char *name, const char *value);

/* Forgets the entries, keeping the memory and the header. */
void golden_digests_clear(golden_digests *d);

/* The entries pinned for case_id (*count of them), or NULL when it has none. */
const golden_entry *golden_digests_find_case(const golden_digests *d, const char *case_id, long long *count);

/*
** Writes d to path through a temporary file renamed into place, so a reader
** never sees half a file.  0, or -1 with err naming the path.
*/
int golden_digests_write(const golden_digests *d, const char *path, char *err, size_t err_len);

void golden_digests_free(golden_digests *d);

#endif

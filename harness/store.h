/*
** store.h: bitgate's SQLite results store.
**
** One database file holds every run (with its full provenance), every case
** spec ever seen, one result row per (run, case, lane, step), and the
** zlib-compressed golden stage payloads.  reports/ reads the same file with
** plain SQL, so the schema below is part of the contract.
**
** File identity and versioning
**   PRAGMA application_id = STORE_APPLICATION_ID marks the file as ours;
**   PRAGMA user_version is the schema version.  store_open applies the
**   missing migrations (harness/store_schema.c) in one transaction.  A file
**   that is not ours, not SQLite, or newer than this binary is refused and
**   left byte-for-byte untouched: it is only ever read before it has been
**   verified.
**
** Durability
**   WAL journal, synchronous=NORMAL: a killed process keeps every
**   transaction that committed (only a power loss may drop the last few).
**   store_results_commit writes one finished case in one transaction, so a
**   run killed at any moment keeps every case that had finished.
**
** Errors
**   Every int function returns 0 on success and nonzero on failure (a SQLite
**   result code, or -1 for errors found by the store itself); the message,
**   one line naming the file, is then in store_errmsg.  All values reach
**   SQLite through bound parameters of prepared statements.
**
** A store is one SQLite connection: use it from one thread at a time.
** Several processes may share a file (WAL, 5 s busy timeout).
*/
#ifndef STORE_H
#define STORE_H

#include <stddef.h>

typedef struct store store;

#define STORE_SCHEMA_VERSION 5
#define STORE_APPLICATION_ID 0x62677431 /* "bgt1" in ASCII */
#define STORE_BUSY_TIMEOUT_MS 5000

/*
** Opens (creating it if absent or empty) the store at path.  0 on success;
** on failure *out is NULL and err holds one line naming the path and the
** SQLite error (or why the file was refused).
*/
int store_open(const char *path, store **out, char *err, size_t err_len);

/* Closes the connection and frees s; NULL is a no-op. */
void store_close(store *s);

/* The last error, one line; "" if none. */
const char *store_errmsg(const store *s);

/* PRAGMA user_version of the open file (STORE_SCHEMA_VERSION after open); -1 on error. */
int store_schema_version(store *s);

/*
** Provenance of a run: everything needed to say what was tested where.
** NULL strings are stored as NULL.
*/
typedef struct store_provenance {
  const char *git_rev, *bitgate_version;
  int oracle_version, numerics_version;
  const char *kernel_hash, *nvrtc_version, *nvrtc_options;
  int driver_version;
  const char *device_name, *compute_capability, *host, *suite, *shard, *command_line;
} store_provenance;

/* Inserts a run with status 'running' and started_at = now (UTC); sets *run_id. */
int store_run_begin(store *s, const store_provenance *p, long long *run_id);

/*
** Closes a run: status is one of 'passed', 'failed', 'error'; sets ended_at.
** An unknown run_id is an error.
*/
int store_run_end(store *s, long long run_id, const char *status, int exit_code);

/*
** A run as stored (store_run_read): its status and provenance.  The strings
** of p point into text (NULL where the column is NULL, truncated when text
** runs out) and live as long as the record.
*/
typedef struct store_run_record {
  char status[16];
  store_provenance p;
  char text[8192];
} store_run_record;

/* Reads run run_id: 0 and *out filled, 1 when there is no such run, -1 on error. */
int store_run_read(store *s, long long run_id, store_run_record *out);

/*
** Reopens a run that stopped before its end so that more results can be
** appended (bitgate run --resume): status 'running' (it was killed) or
** 'error' (a store failure stopped it) becomes 'running' with ended_at and
** exit_code NULL.  A finished run ('passed', 'failed': a verdict was given)
** or an unknown run_id is an error.
*/
int store_run_reopen(store *s, long long run_id);

/* *n = the number of distinct cases with result rows in run_id. */
int store_run_case_count(store *s, long long run_id, long long *n);

/*
** The case times of the latest run of suite before run `before` that
** ended (passed or failed): each(ctx, case_id, ms) once a case, ms its rows'
** oracle and device milliseconds summed.  *run_id is that run, 0 when there
** is none (each is not called).  0, or -1 (the store failed) with the message.
*/
int store_case_times(store *s, const char *suite, long long before, long long *run_id,
                     void (*each)(void *ctx, const char *case_id, double ms), void *ctx);

/*
** Records a case (insert or ignore; first_run_id is the run that first saw
** it, NULL when run_id <= 0, e.g. for a corpus import).  A case id already stored with a different spec is an error: ids are
** hashes of the spec, so this is a collision or a generator bug.
*/
int store_case_put(store *s, const char *case_id, const char *op, const char *family,
                   const char *spec, long long run_id);

/*
** One result row.  status is one of 'pass', 'mismatch', 'error_parity',
** 'crash', 'timeout', 'unavailable', 'skipped', 'nondeterministic',
** 'waived', 'fail', and (schema 2, the frozen-oracle check)
** 'frozen_changed', 'unpinned'.
**   has_mismatch == 0: tensor, flat_offset, coords, expected_hex, actual_hex
**                      and ulp_distance are stored as NULL.
**   ulp_distance < 0:  not applicable (e.g. an index tensor), stored NULL.
**   oracle_ms, device_ms < 0 or NaN: lane not timed, stored NULL.
** NULL strings are stored as NULL; case_id, lane and status are required.
** stage (schema 3) is the stage a failure was localised to (DESIGN.md
** "Golden boundaries"; harness/localise.h), stored NULL when unknown.
*/
/* The stored spec of a case: 0 and spec filled, 1 when absent, -1 on error. */
int store_case_spec(store *s, const char *case_id, char *spec, size_t spec_len);

typedef struct store_result {
  const char *case_id, *lane;
  int step;
  const char *status;
  const char *tensor;
  long long flat_offset;
  const char *coords, *expected_hex, *actual_hex;
  long long ulp_distance;
  int has_mismatch;
  long long mismatch_count, nan_equivalent_count;
  double oracle_ms, device_ms;
  const char *message;
  const char *stage; /* schema 3: the first stage whose own computation diverges; NULL or "" unknown */
} store_result;

/*
** All rows of one finished case, in one transaction: either every row is
** stored or none is.  A (run, case, lane, step) already stored, or repeated
** within rows, is an error.  The case must have been recorded with
** store_case_put first.
*/
int store_results_commit(store *s, long long run_id, const store_result *rows, int n);

/*
** Calls each(ctx, row) for every result row of (run_id, case_id), in the
** order they were stored; row and its strings live during the call only.
** Columns stored NULL read back as the store_result contract writes them:
** has_mismatch 0, ulp_distance -1, timings -1, strings NULL.
*/
int store_results_each(store *s, long long run_id, const char *case_id,
                       void (*each)(void *ctx, const store_result *row), void *ctx);

/*
** Stores a golden stage payload, zlib-compressed.  The key is (case_id,
** step, stage, tensor, source, oracle_version); source is 'oracle' or
** 'device'.  Storing the same digest again is a no-op.  A different digest
** under an existing key replaces a 'device' payload (the latest capture
** wins) but is an error for an 'oracle' one: the oracle is frozen, so its
** goldens change only with an oracle_version bump.  The case must have been
** recorded with store_case_put; created_run_id is NULL when run_id <= 0.
*/
int store_golden_put(store *s, const char *case_id, int step, const char *stage,
                     const char *tensor, const char *source, int oracle_version,
                     const char *dtype, const char *shape, const void *data, size_t n,
                     const char *digest, long long run_id);

/* One payload of store_golden_put_many: store_golden_put's arguments. */
typedef struct store_golden_item {
  const char *case_id;
  int step;
  const char *stage, *tensor, *source;
  int oracle_version;
  const char *dtype, *shape;
  const void *data;
  size_t n;
  const char *digest;
  long long run_id;
} store_golden_item;

/*
** store_golden_put for n payloads: compressed on `threads` workers, then
** written in one transaction (every item, or none on an error).
*/
int store_golden_put_many(store *s, const store_golden_item *items, int n, int threads);

/* Reads and decompresses; *data is malloc'd, caller frees. Returns 0, or 1 when absent, or -1 on error. */
int store_golden_get(store *s, const char *case_id, int step, const char *stage,
                     const char *tensor, const char *source, int oracle_version, void **data,
                     size_t *n);

/*
** The stored dtype, shape and digest of a golden payload (each truncated to
** its buffer), without reading the blob.  Returns 0, 1 when absent, -1 on error.
*/
int store_golden_describe(store *s, const char *case_id, int step, const char *stage,
                          const char *tensor, const char *source, int oracle_version, char *dtype,
                          size_t dtype_len, char *shape, size_t shape_len, char *digest,
                          size_t digest_len);

/*
** One figure of `bitgate bench` (schema 4, table bench): what was timed
** (kernel, variant, shape; each required, non-empty), how (timing, "held"
** or "submit", harness/bench.h bench_timing; schema 5), the device's median
** and minimum in microseconds over `runs` (> 0) timings, and the oracle's
** milliseconds for the same step.  min_us, oracle_ms and floor_fraction
** < 0 or NaN: not measured, stored NULL.  median_us must be finite and >= 0.
*/
typedef struct store_bench_row {
  const char *kernel, *variant, *shape, *timing;
  double median_us, min_us;
  int runs;
  double oracle_ms, floor_fraction;
} store_bench_row;

/*
** Stores one bench row of run run_id (which must exist) with recorded_at =
** now.  A row that breaks the contract above is refused with a message
** naming the field and the row's kernel; nothing is stored.
*/
int store_bench_put(store *s, long long run_id, const store_bench_row *row);

/*
** Counts the result rows of a run (one per case, lane and step): *passed
** those with status 'pass'; *failed those that fail the run ('mismatch',
** 'error_parity', 'crash', 'timeout', 'nondeterministic', 'fail',
** 'frozen_changed', 'unpinned'); *total
** all rows.  'unavailable', 'skipped' and 'waived' are in neither.  Any
** out-pointer may be NULL.  Returns 0.
*/
int store_run_counts(store *s, long long run_id, long long *passed, long long *failed,
                     long long *total);

/*
** The underlying connection, for read-only queries by tests and tools.
** Writing through it bypasses the store's contracts.
*/
struct sqlite3;
struct sqlite3 *store_sqlite(store *s);

/* ---- Internal: shared by harness/store*.c only ------------------------ */

/* SQL expression for "now" as ISO-8601 UTC text, e.g. 2024-05-01T12:00:00.123Z. */
#define STORE_NOW_SQL "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

/* Migration i takes user_version i to i + 1 (harness/store_schema.c). */
extern const char *const store_schema_migrations[STORE_SCHEMA_VERSION];

/*
** Error convention inside the store: a positive rc is a SQLite result code
** whose message is still in sqlite3_errmsg and is formatted at the cleanup
** label; -1 means store_fail has already written the message.
*/

/* Sets the store's message to "store 'PATH': " + the formatted text; returns -1. */
int store_fail(store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets the message to "store 'PATH': WHAT: " + SQLite's last message; returns rc. */
int store_fail_sqlite(store *s, int rc, const char *what);

/* sqlite3_prepare_v2 on the store's connection; SQLite's rc. */
struct sqlite3_stmt;
int store_prepare(store *s, const char *sql, struct sqlite3_stmt **stmt);

/* Steps a statement that returns no row: 0, or SQLite's error code. */
int store_step_done(struct sqlite3_stmt *stmt);

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK (only if a transaction is open); SQLite's rc. */
int store_tx_begin(store *s);
int store_tx_commit(store *s);
void store_tx_rollback(store *s);

/* ---- Test hooks ------------------------------------------------------- */

/*
** When non-NULL, store_results_commit calls this after inserting every row
** and before COMMIT.  Tests set it to kill the process mid-transaction; it
** is NULL in production.
*/
extern void (*store_test_hook_before_commit)(void);

#endif

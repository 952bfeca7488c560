/*
** store_schema.c: the store's migrations, oldest first.
**
** store_schema_migrations[i] takes a bitgate database from user_version i to
** i + 1.  store_open runs every missing one, then checks the version, in a
** single transaction, so a file is always at some whole version.
**
** Rules for a new migration:
**   - append it, bump STORE_SCHEMA_VERSION in store.h; never edit a shipped one;
**   - end it with "PRAGMA user_version = N;" (PRAGMA takes no bound
**     parameters, so the version is a literal here, and store_open checks it);
**   - reports/ reads these tables: renaming a column breaks reports.
**
** Timestamps are ISO-8601 UTC text with milliseconds, e.g.
** 2024-05-01T12:00:00.123Z, produced by SQLite itself (STORE_NOW_SQL).
*/
#include "harness/store.h"

/* Version 0 -> 1: the first schema. */
static const char store_schema_v1[] =
  /* 1650947121 == 0x62677431 == STORE_APPLICATION_ID, "bgt1" */
  "PRAGMA application_id = 1650947121;\n"

  "CREATE TABLE runs (\n"
  "  id                 INTEGER PRIMARY KEY,\n"
  "  started_at         TEXT NOT NULL,\n"
  "  ended_at           TEXT,\n"
  "  status             TEXT NOT NULL DEFAULT 'running'\n"
  "                     CHECK (status IN ('running','passed','failed','error')),\n"
  "  exit_code          INTEGER,\n"
  "  git_rev            TEXT,\n"
  "  bitgate_version    TEXT,\n"
  "  oracle_version     INTEGER,\n"
  "  numerics_version   INTEGER,\n"
  "  kernel_hash        TEXT,\n"
  "  nvrtc_version      TEXT,\n"
  "  nvrtc_options      TEXT,\n"
  "  driver_version     INTEGER,\n"
  "  device_name        TEXT,\n"
  "  compute_capability TEXT,\n"
  "  host               TEXT,\n"
  "  suite              TEXT,\n"
  "  shard              TEXT,\n"
  "  command_line       TEXT\n"
  ");\n"

  "CREATE TABLE cases (\n"
  "  id           TEXT PRIMARY KEY,\n" /* e.g. is.valid.1f3c9a02 */
  "  op           TEXT NOT NULL,\n"
  "  family       TEXT NOT NULL,\n"
  "  spec         TEXT NOT NULL,\n" /* the canonical one-line spec */
  "  first_run_id INTEGER REFERENCES runs(id)\n"
  ");\n"

  "CREATE TABLE results (\n"
  "  run_id               INTEGER NOT NULL REFERENCES runs(id),\n"
  "  case_id              TEXT NOT NULL REFERENCES cases(id),\n"
  "  lane                 TEXT NOT NULL,\n"
  "  step                 INTEGER NOT NULL,\n"
  "  status               TEXT NOT NULL CHECK (status IN ('pass','mismatch',\n"
  "                         'error_parity','crash','timeout','unavailable','skipped',\n"
  "                         'nondeterministic','waived','fail')),\n"
  /* First mismatch; all NULL when there is none. */
  "  tensor               TEXT,\n"
  "  flat_offset          INTEGER,\n"
  "  coords               TEXT,\n" /* e.g. [0,3,1,7] */
  "  expected_hex         TEXT,\n"
  "  actual_hex           TEXT,\n"
  "  ulp_distance         INTEGER,\n" /* NULL when not applicable */
  "  mismatch_count       INTEGER NOT NULL DEFAULT 0,\n"
  "  nan_equivalent_count INTEGER NOT NULL DEFAULT 0,\n"
  "  oracle_ms            REAL,\n"
  "  device_ms            REAL,\n"
  "  message              TEXT,\n"
  "  recorded_at          TEXT NOT NULL,\n"
  "  PRIMARY KEY (run_id, case_id, lane, step)\n"
  ");\n"
  /* A case's history across runs; a run's failures for summaries. */
  "CREATE INDEX results_by_case ON results (case_id);\n"
  "CREATE INDEX results_by_run_status ON results (run_id, status);\n"

  "CREATE TABLE golden_payloads (\n"
  "  id             INTEGER PRIMARY KEY,\n"
  "  case_id        TEXT NOT NULL REFERENCES cases(id),\n"
  "  step           INTEGER NOT NULL,\n"
  "  stage          TEXT NOT NULL,\n"
  "  tensor         TEXT NOT NULL,\n"
  "  source         TEXT NOT NULL CHECK (source IN ('oracle','device')),\n"
  "  oracle_version INTEGER NOT NULL,\n"
  "  dtype          TEXT NOT NULL,\n"
  "  shape          TEXT NOT NULL,\n"
  "  raw_bytes      INTEGER NOT NULL CHECK (raw_bytes >= 0),\n" /* uncompressed size */
  "  digest         TEXT NOT NULL,\n"
  "  payload        BLOB NOT NULL,\n" /* zlib stream (store_golden.c: golden_deflate) */
  "  created_run_id INTEGER REFERENCES runs(id),\n"
  "  UNIQUE (case_id, step, stage, tensor, source, oracle_version)\n"
  ");\n"

  "PRAGMA user_version = 1;\n";

/*
** Version 1 -> 2: two result statuses of the frozen-oracle check
** (harness/frozen_oracle.h): 'frozen_changed', an oracle output or rejection
** whose digest differs from the committed one, and 'unpinned', a case the
** committed digests do not cover.  SQLite cannot alter a CHECK constraint, so
** the results table is rebuilt with the same columns and its indexes remade.
*/
static const char store_schema_v2[] =
  "CREATE TABLE results_v2 (\n"
  "  run_id               INTEGER NOT NULL REFERENCES runs(id),\n"
  "  case_id              TEXT NOT NULL REFERENCES cases(id),\n"
  "  lane                 TEXT NOT NULL,\n"
  "  step                 INTEGER NOT NULL,\n"
  "  status               TEXT NOT NULL CHECK (status IN ('pass','mismatch',\n"
  "                         'error_parity','crash','timeout','unavailable','skipped',\n"
  "                         'nondeterministic','waived','fail','frozen_changed','unpinned')),\n"
  "  tensor               TEXT,\n"
  "  flat_offset          INTEGER,\n"
  "  coords               TEXT,\n"
  "  expected_hex         TEXT,\n"
  "  actual_hex           TEXT,\n"
  "  ulp_distance         INTEGER,\n"
  "  mismatch_count       INTEGER NOT NULL DEFAULT 0,\n"
  "  nan_equivalent_count INTEGER NOT NULL DEFAULT 0,\n"
  "  oracle_ms            REAL,\n"
  "  device_ms            REAL,\n"
  "  message              TEXT,\n"
  "  recorded_at          TEXT NOT NULL,\n"
  "  PRIMARY KEY (run_id, case_id, lane, step)\n"
  ");\n"
  "INSERT INTO results_v2 SELECT * FROM results;\n"
  "DROP TABLE results;\n"
  "ALTER TABLE results_v2 RENAME TO results;\n"
  "CREATE INDEX results_by_case ON results (case_id);\n"
  "CREATE INDEX results_by_run_status ON results (run_id, status);\n"
  "PRAGMA user_version = 2;\n";

/*
** Version 2 -> 3: results.stage, the pipeline stage a failing row was
** localised to (the first stage whose own computation diverges when fed the
** oracle's boundary payloads), NULL when not known.  Reports chart failures
** by it.
*/
static const char store_schema_v3[] =
  "ALTER TABLE results ADD COLUMN stage TEXT;\n"
  "PRAGMA user_version = 3;\n";

/*
** Version 3 -> 4: bench, the figures of `bitgate bench` (issue 8 item 2),
** one row per printed line, so that reports can show the trend over time.
** A row belongs to the run that measured it (suite 'bench'), whose
** provenance says on what device and at what revision.  kernel names what
** was timed (e.g. "csa4 decode step", "csa4 stage attention"), variant the
** kernel variant (device/device_variant.h), shape the problem in spec
** words (e.g. "b=1 heads=64 pos=65536").  median_us and min_us are the
** device's microseconds over `runs` timings; min_us is NULL where only a
** median is measured (a stage), oracle_ms NULL where the oracle is not
** timed for the line, floor_fraction NULL until a kernel's floor is known.
** The index serves a (kernel, variant, shape) series across runs.
*/
static const char store_schema_v4[] =
  "CREATE TABLE bench (\n"
  "  id             INTEGER PRIMARY KEY,\n"
  "  run_id         INTEGER NOT NULL REFERENCES runs(id),\n"
  "  kernel         TEXT NOT NULL CHECK (kernel <> ''),\n"
  "  variant        TEXT NOT NULL CHECK (variant <> ''),\n"
  "  shape          TEXT NOT NULL CHECK (shape <> ''),\n"
  "  median_us      REAL NOT NULL CHECK (median_us >= 0),\n"
  "  min_us         REAL CHECK (min_us >= 0),\n"
  "  runs           INTEGER NOT NULL CHECK (runs > 0),\n"
  "  oracle_ms      REAL CHECK (oracle_ms >= 0),\n"
  "  floor_fraction REAL CHECK (floor_fraction >= 0),\n"
  "  recorded_at    TEXT NOT NULL\n"
  ");\n"
  "CREATE INDEX bench_by_series ON bench (kernel, variant, shape);\n"
  "PRAGMA user_version = 4;\n";

/*
** Version 4 -> 5: bench.timing, how the row's replays were timed
** (harness/bench.h bench_timing): 'held', the GPU's run of the graph alone,
** behind a kernel that holds the stream while the host queues the replay;
** 'submit', which also counts the host's cudaGraphLaunch; or 'sync', every
** row before this version (hence their default): the stop event was
** recorded only after the host had synchronised on the replay, so its
** figures also count the host's wake-up and the stop event's own launch,
** about 5 us more.  A series is now (kernel, variant, shape, timing).
*/
static const char store_schema_v5[] =
  "ALTER TABLE bench ADD COLUMN timing TEXT NOT NULL DEFAULT 'sync'"
  " CHECK (timing IN ('held', 'submit', 'sync'));\n"
  "DROP INDEX bench_by_series;\n"
  "CREATE INDEX bench_by_series ON bench (kernel, variant, shape, timing);\n"
  "PRAGMA user_version = 5;\n";

const char *const store_schema_migrations[STORE_SCHEMA_VERSION] = {
  store_schema_v1,
  store_schema_v2,
  store_schema_v3,
  store_schema_v4,
  store_schema_v5,
};

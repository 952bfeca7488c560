/*
** store_merge.h: `bitgate db merge`, sharded result databases combined.
**
** A merge copies, from each input into OUT:
**   runs     every run, with its provenance, under a new id: OUT's largest
**            run id plus the run's rank among the input's new runs (so
**            ids keep their order).  A run OUT already holds (same
**            started_at, host, command_line and shard) is not copied again,
**            so merging the same input twice adds nothing.
**   cases    insert or ignore; first_run_id is mapped to the new run id.  A
**            case id stored with a different spec in OUT or in another
**            input is an error naming the id (ids hash the spec).
**   results  every row of the copied runs, run_id mapped.
**   bench    (schema 4) every bench figure of the copied runs, run_id
**            mapped, under a new id, in the input's order.
** golden_payloads are not merged: they belong to the golden store
** (bitgate-golden.db), which shards share rather than split.
**
** Inputs are checked first (store_merge_check, every input, before any
** copy): each must exist, be non-empty, and be accepted by store_open (a
** bitgate database no newer than this binary; an older one is migrated in
** place, as by any bitgate command).  A refused file is left untouched.
** Then each input is copied in one transaction (store_merge_copy), so a
** failure there (I/O, disk full) leaves OUT with whole inputs only.
**
** The state of one merge (specs seen, runs copied) lives in temporary
** tables of OUT's connection: check and copy one OUT with one store.
*/
#ifndef STORE_MERGE_H
#define STORE_MERGE_H

#include "harness/store.h"

typedef struct store_merge_stats {
  long long runs_new, runs_known;    /* copied; already in OUT (not copied) */
  long long first_run, last_run;     /* OUT ids of the copied runs (0 when none) */
  long long cases, cases_new, results;
  long long bench; /* bench rows copied */
} store_merge_stats;

/* Checks that in_path can be merged into out (see above).  0, or nonzero
** with the reason in store_errmsg(out). */
int store_merge_check(store *out, const char *in_path);

/* Copies in_path into out (checked first); fills *stats. */
int store_merge_copy(store *out, const char *in_path, store_merge_stats *stats);

/*
** --as-one-run: adds one run to out standing for every run this merge
** copied or found already there (the union), so reports see the shards as
** one run.  Its provenance: started_at the earliest, ended_at the latest
** (NULL while any run is 'running'), status the worst ('error' > 'running'
** > 'failed' > 'passed'), exit_code the largest; each text column the
** runs' distinct values joined by ',' in run order (so shard reads e.g.
** "1/2,2/2"); each integer column the common value, NULL where the runs
** differ; command_line is the merge's.  Its results: the union of those
** runs' rows, and where several runs hold the same (case, lane, step) the
** row of the latest run (largest id) wins.  Bench rows stay with the runs
** that measured them: a bench run is one machine's, not a shard.  Sets *run_id, *results, and
** shards (the new run's shard text, truncated to shards_len).
*/
int store_merge_as_one_run(store *out, const char *command_line, long long *run_id, long long *results,
                           char *shards, size_t shards_len);

#endif

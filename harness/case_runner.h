/*
** case_runner.h: runs one case in the requested lanes and reports one row
** per lane and step, the shape the results table stores.
**
** Lanes (DESIGN.md; issue "IndexShare end to end"):
**   oracle   the frozen CPU oracle, checked against what the case expects;
**   eager    the device kernels, every output byte diffed, errors compared;
**   capture  a warm eager pass, a CUDA-graph capture, then replays with fresh
**            inputs written into the same buffers, each diffed;
**   poison   replays with index violations planted: the latch must be raised
**            iff the oracle rejects, and a clean replay after must be exact.
** Device lanes need a device runtime; without one they are not run.
*/
#ifndef CASE_RUNNER_H
#define CASE_RUNNER_H

#include "device/device_variant.h"

#include <stddef.h>

struct device_runtime;
struct store_result;

typedef enum lane { LANE_ORACLE = 0, LANE_EAGER, LANE_CAPTURE, LANE_POISON, LANE_COUNT } lane;
typedef unsigned lane_mask;
#define LANE_BIT(l) (1u << (l))
#define LANE_ALL ((1u << LANE_COUNT) - 1u)

const char *lane_name(lane l);
/* "oracle,eager" -> mask; -1 and err naming the token when unknown. */
int lane_mask_parse(const char *list, lane_mask *out, char *err, size_t err_len);

typedef struct result_row {
  char lane[16], status[24], tensor[32], coords[64], expected_hex[24], actual_hex[24];
  int step, has_mismatch;
  long long flat_offset, ulp_distance, mismatch_count, nan_equivalent;
  double oracle_ms, device_ms;
  char message[768]; /* for failures: what went wrong, then the repro command */
  char stage[40];    /* a failure's localised stage (results.stage), "" when unknown */
} result_row;

#define CASE_MAX_ROWS 48

typedef struct case_report {
  result_row rows[CASE_MAX_ROWS];
  int n, failed; /* failed: rows whose status is not pass or skipped */
} case_report;

struct tensor;

/*
** Where stage payloads go (DESIGN.md "Golden boundaries"): when set, a lane
** hands each payload it captures (stage name, "oracle" or "device") to it.
** The golden-boundary store plugs in here; the payload is only valid during
** the call.
*/
typedef void (*payload_sink)(void *ctx, const char *case_id, int step, const char *stage, const char *source,
                             const struct tensor *payload);

struct op_error;

/*
** Where the oracle lane's outcome of every step goes (the frozen-oracle
** digests, harness/frozen_oracle.h): when set, the oracle lane hands over
** each step of the case it computes, in step order: the named outputs when
** the oracle accepts the step (rejection NULL), or its error when it rejects
** (outputs NULL, n_out 0).  Everything is only valid during the call.
*/
typedef void (*oracle_outcome_sink)(void *ctx, const char *case_id, int step, const struct tensor *outputs,
                                    const char *const *names, int n_out, const struct op_error *rejection);

typedef struct runner_env {
  struct device_runtime *rt; /* NULL: device lanes are not run */
  lane_mask lanes;
  payload_sink payload; /* NULL: no payloads are captured */
  void *payload_ctx;
  oracle_outcome_sink oracle_outcome; /* NULL: outcomes are not handed over */
  void *oracle_outcome_ctx;
  device_variant variant; /* the kernels the device lanes run (zeroed: fast) */
  int both_variants;      /* --variant both: the device lanes run once more, with the reference */
} runner_env;

/*
** --variant TEXT into env (NULL: only checks TEXT): "fast" (the default),
** "reference", or "both".  With both, case_run runs the case with the fast
** kernels in every lane, then its device lanes again with the reference
** kernels; their rows join the report with the lane named LANE@ref
** ("eager@ref", "capture@ref", "poison@ref").  Each variant is diffed byte
** for byte against the oracle, so two passing rows are byte-identical to
** each other (up to DESIGN.md's NaN equivalence); a @ref row whose status
** differs from its fast row says so ("variants disagree").  Payload and
** oracle-outcome sinks see the fast pass only.  0, or -1 for unknown text.
*/
int runner_env_set_variant(runner_env *env, const char *text);

/*
** Hands one oracle step to env->oracle_outcome when the oracle lane runs and
** a sink is set: the outputs when rc is 0, else err.
*/
void case_oracle_outcome(const runner_env *env, const char *case_id, int step, int rc, const struct op_error *err,
                         const struct tensor *outputs, const char *const *names, int n_out);

/* Runs spec (whose id is case_id) in env->lanes; fills *out; returns 0, or -1
** if the case could not be run at all (then out holds one failing row). */
int case_run(runner_env *env, const char *case_id, const char *spec, case_report *out);

/* 0 if spec parses for its family; else -1 and err names the offending token. */
int case_check_spec(const char *spec, char *err, size_t err_len);

/* Appends a row; returns it (zeroed, lane/step/status set), or NULL when full. */
result_row *case_report_add(case_report *r, lane l, int step, const char *status);

/*
** Records a failure found after the lanes ran (frozen digests, golden
** boundaries) in lane l's row of that step.  A row is keyed by lane and step,
** so when the lane already has one: a passing row becomes this failure (status,
** tensor, msg); a row that already failed keeps its own status and gets msg
** appended.  Otherwise a row is added.
*/
void case_report_add_failure(case_report *r, lane l, int step, const char *status, const char *tensor_name,
                             const char *msg);

struct tensor_diff;

/*
** Marks row as a mismatch of tensor `name` and copies the first mismatch's
** details from d (offset, coordinates, both values, ULP distance, counts),
** with a description in row->message.  A device value that is still the junk
** fill is called out as probably never written.
*/
void result_row_set_mismatch(result_row *row, const char *name, const struct tensor_diff *d);

/*
** Stage localisation (DESIGN.md "Golden boundaries"; issue "Corpus and
** goldens", item 4): when a device lane has replayed the device pipeline
** stage by stage, each stage fed the oracle's boundary payloads, the first
** stage whose own output differs goes here: row->stage = stage, and the
** message gains "; localised: stage S diverges on the oracle's inputs
** (detail)" just before its "; repro: ..." tail, which stays whole.  With
** no stage (NULL or "") only "; localised: detail" is added (e.g. every
** stage agrees alone, or localisation could not run), row->stage unchanged.
*/
void result_row_set_localised(result_row *row, const char *stage, const char *detail);

/* Points store rows at the report's rows (rows must hold r->n entries). */
void case_report_to_store(const case_report *r, const char *case_id, struct store_result *rows);

#endif

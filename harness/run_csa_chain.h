/*
** run_csa_chain.h: the CompressedSparseAttention lanes of one case, for
** every compression ratio: a prefill->decode chain whose presents are
** threaded back as the next step's pasts, run through the oracle, eagerly on
** the device (every output at every step) and as a captured decode step
** replayed down the chain.
**
** What differs between the ratios is data, not control flow: a
** csa_chain_ratio says which outputs thread into which past inputs, how the
** outputs are named, how the case module makes a step, how the oracle runs
** one (and which stage payloads it exposes), and how the device layer is
** driven.  run_csa128.c and run_csa4.c hold the two descriptors.
*/
#ifndef RUN_CSA_CHAIN_H
#define RUN_CSA_CHAIN_H

#include "device/csa128_device.h" /* device_tensor, enum device_csa128_rc (shared by both ratios) */
#include "device/runtime.h"
#include "harness/case_runner.h"
#include "oracle/csa.h"

#define CSA_CHAIN_MAX_THREADS 4 /* ratio 4 threads outputs 1..4 */
#define CSA_CHAIN_MAX_STAGES 8  /* DESIGN.md's eight stage boundaries */

/* One materialized step: the case's tensors, plus the oracle's verdict and stage payloads. */
typedef struct csa_step {
  tensor in[CSA_INPUT_COUNT], out[CSA_OUTPUT_MAX];
  int n_in, n_out, rc;
  csa_attrs attrs;
  op_error err;
  tensor stage[CSA_CHAIN_MAX_STAGES]; /* dt == DTYPE_NONE where not captured */
} csa_step;

/* A device stage payload the eager lane compares with an oracle stage. */
typedef struct csa_chain_dev_stage {
  int device_stage; /* the device layer's stage number */
  int oracle_stage; /* index into csa_step.stage with the same layout */
} csa_chain_dev_stage;

/*
** One step of stage localisation (csa_chain_localise): write the oracle's
** payloads `loads` over the device's, run the device `parts` alone, compare
** `checks`.  Entries are encoded as in compare_order.
*/
typedef struct csa_chain_loc_step {
  const char *stage; /* reported when a check differs */
  unsigned parts;    /* the device layer's part mask */
  int loads[3], n_loads;
  int checks[3], n_checks;
} csa_chain_loc_step;

/* What one compression ratio's lanes need; see the file comment. */
typedef struct csa_chain_ratio {
  const char *const *output_names; /* by output index, CSA_OUTPUT_MAX entries */
  int n_threads;                   /* pairs: out thread_out[i] becomes in thread_in[i] */
  int thread_out[CSA_CHAIN_MAX_THREADS], thread_in[CSA_CHAIN_MAX_THREADS];
  const char *const *stage_names; /* the oracle's stage payloads, in pipeline order */
  int n_stages;

  /* The case module (c is the ratio's parsed case). */
  int (*materialize)(const void *c, int step, csa_step *s, char *err, size_t len);
  void (*release)(csa_step *s);
  int (*expected)(const void *c, int *code);
  /* Optional: the op_error.input and .axis a contract case's rejection names (1), or 0. */
  int (*expected_site)(const void *c, int *input, int *axis);
  /* The decode step to capture (first with settled shapes), or -1. */
  int (*capture_step)(const void *c, int steps);

  /*
  ** Runs the oracle on s (sets s->rc and s->err).  With stages, it also
  ** allocates s->stage[0 .. n_stages) and fills them on success (a stage it
  ** cannot allocate stays DTYPE_NONE).
  */
  int (*oracle)(csa_step *s, int stages);

  /* The device layer (k is the ratio's instance). */
  int (*dev_create)(device_runtime *rt, const csa_attrs *a, device_variant variant, void **k, char *err, size_t len);
  void (*dev_destroy)(void *k);
  int (*dev_execute)(void *k, const device_tensor *const *in, int n_in, device_tensor *const *out, int n_out,
                     op_error *err);
  int (*dev_capture_ready)(const void *k, char *why, size_t len);
  /* Optional scratch guards around eager executes (NULL: none). */
  int (*dev_scratch_fill)(void *k, int byte);
  int (*dev_scratch_check)(void *k, char *report, size_t len);
  /*
  ** Optional: copies device stage st of the last eager execute into t,
  ** already shaped and allocated like the oracle's payload; 0, or -1 with
  ** err saying why (a size that differs from t's, a CUDA error).
  */
  int (*dev_stage_copy)(void *k, int st, tensor *t, char *err, size_t len);
  const csa_chain_dev_stage *dev_stages;
  int n_dev_stages;

  /*
  ** The order in which a device step is compared: entries >= 0 are outputs
  ** (skipped when the step has fewer), entries < 0 are dev_stages[-1 - e]
  ** (eager lane only).  The first difference in this order is reported, so
  ** pipeline order names the first diverging stage.  NULL: outputs 0, 1, ...
  */
  const int *compare_order;
  int n_compare;

  /*
  ** Optional stage localisation: loc[0 .. n_loc) in pipeline order, run
  ** with dev_execute_parts; stage loads go through dev_stage_load (the
  ** reverse of dev_stage_copy).
  */
  const csa_chain_loc_step *loc;
  int n_loc;
  int (*dev_execute_parts)(void *k, unsigned parts, const device_tensor *const *in, int n_in,
                           device_tensor *const *out, int n_out, op_error *err);
  int (*dev_stage_load)(void *k, int st, const tensor *t, char *err, size_t len);
  /* Bench support: the device parts alone captured as a graph, after an eager execute. */
  int (*dev_capture_parts)(void *k, unsigned parts, const device_tensor *const *in, int n_in,
                           device_tensor *const *out, int n_out, device_graph **graph, op_error *err);
} csa_chain_ratio;

#define CSA_CHAIN_STAGE_ENTRY(i) (-1 - (i))

/*
** Runs the chain of a parsed case with `steps` steps in env->lanes and adds
** its rows to out (one per lane; a failure row names its step).
*/
void run_csa_chain(runner_env *env, const char *case_id, const csa_chain_ratio *r, const void *c, int steps,
                   case_report *out);

struct device_io;

/*
** Stage localisation of an accepted step s (the oracle's, with its stage
** payloads) on a device instance k whose io holds the step's inputs: r->loc
** in order, each step's parts run alone on the oracle's payloads.  1 when a
** stage's own output differs (stage names it, detail the first difference),
** 0 when every stage agrees (or the ratio has no localisation), -1 when it
** could not be done (detail says why).
*/
int csa_chain_localise(const csa_chain_ratio *r, void *k, struct device_io *io, const csa_step *s, char *stage,
                       size_t stage_len, char *detail, size_t detail_len);

/* A zeroed [d0, .., d(rank-1)] tensor of dtype dt; 0, or -1 (t stays empty). */
int csa_chain_payload_alloc(tensor *t, dtype dt, int rank, long long d0, long long d1, long long d2, long long d3);

/*
** Cuts a [B, R, ...] record payload down to rows [first, end) of axis 1 of
** every batch row: the records a step emits, where the compression stages
** write (the rest of the cache is the past, copied, and is compared as an
** output).  An empty range, or no memory for the cut, leaves t empty
** (DTYPE_NONE: not captured).
*/
void csa_chain_payload_keep_rows(tensor *t, long long first, long long end);

#endif

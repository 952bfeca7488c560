/*
** index_share_device.h: the IndexShare operator on the GPU (seed
** 000_7dfea7c512118af3.txt; kernels in device/kernels/index_share.cu).
**
** Contract parity by construction: execute hands the tensors' metadata to the
** oracle's own index_share_validate, as the seed's CUDA provider delegates to
** the CPU oracle, and launches nothing on a contract error.
**
** One execute, eager (the stream is not capturing):
**   1. capacity mode: index_share_frontier -> valid_len[b], write_pos[b];
**   2. index_share_validate_rows against total_seq (growing) or the device's
**      valid_len[b] (capacity), one record per index row, no latch;
**   3. sync, copy the records to the host, and report the first failing row
**      in (batch, index head, query) order as OP_ERR_INDEX with the oracle's
**      rule, batch, head, query and column (all_padding: column -1; input
**      and axis -1) -- nothing further is launched, so the outputs stay as
**      they were, as the oracle leaves them;
**   4. the present builds (into outputs 1 and 2 when there are 3 outputs,
**      else into pooled scratch), then index_share_rows into output 0;
**   5. sync; the instance is now warmed.
** While capturing, the same launches are recorded without step 3's sync and
** copy, with the validation kernel latching INDEX_SHARE_LATCH_BIT into the
** runtime's capture-error word on any bad row, and no allocation at all.
**
** Finding (documented divergence from the seed): the seed's capture path
** validates capacity-mode indices against the full capacity cache_seq; the
** oracle rejects indices in [valid_len, cache_seq).  Here both paths use the
** device-computed valid_len[b], so the latch is raised iff the oracle rejects.
**
** Scratch (a device_pool, one per instance): "scores" [rows, K] f32,
** "row_status" (index_share_abi.h records), "frontier" (2 * B i64, capacity
** mode), and "present_key"/"present_value" when there is only one output.
** Capture is refused until an eager pass succeeded (capture_ready), which is
** what sized the pool; a capture with larger shapes than that pass fails,
** naming the slot.  With the trace on (set_trace) there is one more slot,
** "score_trace" [rows, K] f32; set it before the eager pass a capture follows.
*/
#ifndef DEVICE_INDEX_SHARE_DEVICE_H
#define DEVICE_INDEX_SHARE_DEVICE_H

#include "device/device_variant.h"
#include "device/runtime.h"
#include "oracle/index_share.h"
#include "oracle/op_error.h"
#include "oracle/tensor.h"

#include <stddef.h>

/* A tensor living on the device: meta gives dtype and shape (meta.data unused). */
typedef struct device_tensor {
  tensor meta;
  void *dptr;
} device_tensor;

/* execute's results: 0, an operator error (err->cls set), or a device failure. */
enum device_index_share_rc {
  DEVICE_IS_OK = 0,
  DEVICE_IS_OP_ERROR = -1, /* contract or index error, exactly as the oracle reports it */
  DEVICE_IS_FAILED = -2    /* a CUDA/NVRTC failure or a bad device pointer: err->cls is
                              OP_OK and err->message says what failed */
};

typedef struct device_index_share device_index_share;

/*
** Compiles and loads every kernel of index_share.cu on rt (NVRTC, once per
** runtime) and makes an empty scratch pool.  The attributes are copied; they
** are checked by execute (through index_share_validate), not here.
** 0, or nonzero with the reason in err.
*/
int device_index_share_create(device_runtime *rt, const index_share_attrs *attrs,
                              device_index_share **out, char *err, size_t err_len);

/*
** As device_index_share_create, with the kernel variant (device_variant.h):
** FAST is index_share.cu; REFERENCE takes index_share_frontier (one thread
** per batch) and index_share_rows (thread 0 takes the softmax) from
** index_share_reference.cu, the present builds and validation from
** index_share.cu.  Same contract, scratch and stage payloads.
*/
int device_index_share_create_variant(device_runtime *rt, const index_share_attrs *attrs,
                                      device_variant variant, device_index_share **out, char *err,
                                      size_t err_len);

/* Frees the pool; k may be NULL. */
void device_index_share_destroy(device_index_share *k);

/*
** Runs the operator on device tensors (see above).  inputs: n_inputs entries
** in enum index_share_input order, NULL or meta.dt == DTYPE_NONE for absent
** ones; outputs: n_outputs entries (1 or 3).  Returns enum
** device_index_share_rc; err is always set (op_error_clear on success).
*/
int device_index_share_execute(device_index_share *k, const device_tensor *const *inputs,
                               int n_inputs, device_tensor *const *outputs, int n_outputs,
                               op_error *err);

/*
** 1 once an eager execute has succeeded on this instance (kernels loaded,
** scratch sized); before that 0, with why into reason when it is not NULL.
*/
int device_index_share_capture_ready(const device_index_share *k, char *reason,
                                     size_t reason_len);

/*
** Checks the canaries of every scratch slot.  Returns the number of damaged
** slots (0: intact), with a description in report, or -1 on a CUDA error
** (the error in report).
*/
int device_index_share_scratch_check(device_index_share *k, char *report, size_t report_len);

/* Fills every scratch slot's payload with byte (e.g. DEVICE_JUNK_BYTE); 0 or nonzero. */
int device_index_share_scratch_fill(device_index_share *k, int byte);

/*
** ---- Stage payloads (golden boundaries; debug mode) ----
** IndexShare's stage boundaries, in pipeline order, each one tensor shaped
** exactly as the oracle's payload (harness/run_index_share_stages.c):
**   PresentKey, PresentValue  [B, Nkv, cache_seq, H], the storage dtype (the
**                             outputs, or the pooled present with one output);
**   Scores, Probabilities     [B, N, Sq, K] f32: per row, the selected keys'
**                             scores after the bias and their softmax;
**   Y                         [B, N, Sq, H], the storage dtype.
** Rule for the columns a row does not use (shared with the oracle's side,
** device_index_share_payload_mask): columns at and after the row's first -1
** (all of them when cache_seq is 0) are +0.  An all-masked row's
** probabilities are +0, written so by the kernel as by the oracle.
** Scores and Probabilities come out of the fused rows kernel, so a planted
** difference inside it is localised to the first differing payload, not to
** an instruction.
*/
enum device_index_share_stage {
  DEVICE_IS_STAGE_PRESENT_KEY = 0,
  DEVICE_IS_STAGE_PRESENT_VALUE,
  DEVICE_IS_STAGE_SCORES,
  DEVICE_IS_STAGE_PROBABILITIES,
  DEVICE_IS_STAGE_Y,
  DEVICE_IS_STAGE_COUNT
};

/* "PresentKey", "PresentValue", "Scores", "Probabilities", "Y"; "?" otherwise. */
const char *device_index_share_stage_name(int stage);

/*
** Trace on: later executes also keep each row's raw scores in the pooled
** "score_trace" slot, which the rows kernel otherwise overwrites with exps
** (and Scores cannot be copied), and build the present even where nothing
** reads it.  Off (the default) passes the kernel NULL: the production
** launch, the one to capture.  There the fast variant skips the present
** builds of a growing present with one output (the present is then pooled
** scratch, and its rows gather past and current directly), so PresentKey
** and PresentValue cannot be copied either.
*/
void device_index_share_set_trace(device_index_share *k, int on);

/*
** Downloads stage `stage` of the last successful eager call (execute or a
** stage run; a graph replay does not count) into out, which is allocated
** here with the payload's dtype and shape, unused columns set by the rule
** above.  0, or -1 with err (e.g. the stage was not computed by that call,
** or Scores without the trace); out is then empty.
*/
int device_index_share_stage_copy(device_index_share *k, int stage, tensor *out, char *err,
                                  size_t err_len);

/*
** The payload rule on host data: rows [B, N, Sq, K] f32, indices [B, 1|N,
** Sq, K]: every column at or after its index row's first -1, or every column
** when cache_seq is 0, becomes +0.
*/
void device_index_share_payload_mask(tensor *rows, const tensor *indices, long long cache_seq);

/*
** Stage runs, for stage localisation: eager only, same arguments and
** contract as execute, no index-row validation (the oracle accepted these
** inputs).  run_present launches only the present builds (and the capacity
** frontier they need); run_rows writes present_key / present_value (host,
** the present's dtype and shape) into the present buffers and launches only
** index_share_rows.  Returns enum device_index_share_rc; stage_copy then
** reads their stages.
*/
int device_index_share_run_present(device_index_share *k, const device_tensor *const *inputs,
                                   int n_inputs, device_tensor *const *outputs, int n_outputs,
                                   op_error *err);
int device_index_share_run_rows(device_index_share *k, const device_tensor *const *inputs,
                                int n_inputs, device_tensor *const *outputs, int n_outputs,
                                const tensor *present_key, const tensor *present_value,
                                op_error *err);

/* The instance's runtime, for its error message after a failure. */
device_runtime *device_index_share_runtime(device_index_share *k);

#endif /* DEVICE_INDEX_SHARE_DEVICE_H */

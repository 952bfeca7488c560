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
** naming the slot.
*/
#ifndef DEVICE_INDEX_SHARE_DEVICE_H
#define DEVICE_INDEX_SHARE_DEVICE_H

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

/* The instance's runtime, for its error message after a failure. */
device_runtime *device_index_share_runtime(device_index_share *k);

#endif /* DEVICE_INDEX_SHARE_DEVICE_H */

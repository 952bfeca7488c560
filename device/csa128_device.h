/*
** csa128_device.h: the CompressedSparseAttention operator, compression ratio
** 128, on the GPU (seed 003_9308a65268dfd821.txt; kernels in
** device/kernels/csa128.cu; the oracle is oracle/csa.h).
**
** Contract parity by construction: execute hands the tensors' metadata to
** the oracle's own csa_validate (claim-time contract), and on the eager path
** the cursor to csa_validate_cursor, and launches nothing on an error.
**
** One execute, eager (the stream is not capturing):
**   1. csa_validate on the metadata;
**   2. copy total_sequence_length (input 9, 8 bytes) to the host and run
**      csa_validate_cursor on it -- the only device-to-host copy, and only
**      here;
**   3. csa128_state_copy: present carry and the past records into outputs
**      2 and 1 (records from total / 128 on are zeroed);
**   4. csa128_compress: one block per batch row, the new tokens' carry
**      slots and every record they finish, into outputs 2 and 1;
**   5. csa128_attention: Y (output 0) from current_kv and output 1;
**   6. sync; the instance is now warmed.
** While capturing, steps 3-5 are recorded with no copy, sync or allocation;
** the kernels read the cursor on the device and, on a cursor that breaks
** csa_validate_cursor's rules, csa128_state_copy raises
** CSA128_LATCH_CURSOR_BIT (1024) in the runtime's capture-error word and no
** kernel touches memory.  So in a replay the latch is raised iff the oracle
** would reject the replayed cursor, and the outputs are then garbage by
** contract (the host discards them on the latch).
**
** Decisions (where the seed's device path and its host path differ, the
** oracle -- the host path -- wins):
**   - current_kv is read as its logical prefix of min(L, total) rows
**     (csa_dims.kv_used), as the seed's host path trims it; the seed's device
**     kernel used all L rows.
**   - present records from total / 128 to the capacity Rc are written as
**     zero bytes, as the host path's zero-initialised outputs hold them; the
**     seed's device path left them as they were.
**
** Scratch (a device_pool, one per instance): "scores" [B * S * heads,
** 128 + Rc] f32.  Capture is refused until an eager pass succeeded
** (capture_ready), which sized the pool; a capture with larger shapes than
** that pass fails, naming the slot.
*/
#ifndef DEVICE_CSA128_DEVICE_H
#define DEVICE_CSA128_DEVICE_H

/* device_tensor (a tensor's metadata plus its device address) lives there. */
#include "device/device_variant.h"
#include "device/index_share_device.h"
#include "device/runtime.h"
#include "oracle/csa.h"
#include "oracle/op_error.h"

#include <stddef.h>

/* execute's results; the same values as enum device_index_share_rc. */
enum device_csa128_rc {
  DEVICE_CSA_OK = 0,
  DEVICE_CSA_OP_ERROR = -1, /* a contract or cursor error, exactly as the oracle reports it */
  DEVICE_CSA_FAILED = -2    /* a CUDA/NVRTC failure or a missing device pointer: err->cls is
                               OP_OK and err->message says what failed */
};

typedef struct device_csa128 device_csa128;

/*
** Compiles and loads every kernel of csa128.cu on rt (NVRTC, once per
** runtime) and makes an empty scratch pool.  The attributes are copied (the
** cache_format string too); execute checks them, through csa_validate.
** 0, or nonzero with the reason in err.
*/
int device_csa128_create(device_runtime *rt, const csa_attrs *attrs, device_csa128 **out,
                         char *err, size_t err_len);

/*
** As device_csa128_create, with the kernel variant (device_variant.h): FAST
** is csa128.cu; REFERENCE takes csa128_compress (one thread per batch row)
** and csa128_attention (thread 0 scores a row) from csa128_reference.cu and
** the state copy from csa128.cu.  Same contract, scratch and outputs.
*/
int device_csa128_create_variant(device_runtime *rt, const csa_attrs *attrs, device_variant variant,
                                 device_csa128 **out, char *err, size_t err_len);

/* Frees the pool; k may be NULL. */
void device_csa128_destroy(device_csa128 *k);

/*
** One step (see above).  inputs: n_inputs entries in enum csa_input order,
** NULL or meta.dt == DTYPE_NONE for absent ones; outputs: n_outputs entries
** (3).  Returns enum device_csa128_rc; err is always set (op_error_clear on
** success).
*/
int device_csa128_execute(device_csa128 *k, const device_tensor *const *inputs, int n_inputs,
                          device_tensor *const *outputs, int n_outputs, op_error *err);

/*
** 1 once an eager execute has succeeded on this instance (kernels loaded,
** scratch sized); before that 0, with why into reason when it is not NULL.
*/
/*
** Stage localisation (as device_csa4_execute_parts): runs only the parts in
** the mask, eagerly, after a whole execute.
*/
typedef enum csa128_part {
  CSA128_PART_STATE = 0, /* past records and carry into the presents */
  CSA128_PART_COMPRESS,  /* CompressionUpdate: outputs 1, 2 */
  CSA128_PART_ATTENTION, /* CandidateAssembly + attention: output 1 -> Y */
  CSA128_PART_COUNT
} csa128_part;
#define CSA128_PARTS_ALL ((1u << CSA128_PART_COUNT) - 1u)

int device_csa128_execute_parts(device_csa128 *k, unsigned parts, const device_tensor *const *inputs,
                                int n_inputs, device_tensor *const *outputs, int n_outputs, op_error *err);

/* Bench support, as device_csa4_capture_parts: the parts alone as a graph, after an eager execute. */
int device_csa128_capture_parts(device_csa128 *k, unsigned parts, const device_tensor *const *inputs,
                                int n_inputs, device_tensor *const *outputs, int n_outputs,
                                struct device_graph **graph, op_error *err);

int device_csa128_capture_ready(const device_csa128 *k, char *reason, size_t reason_len);

/*
** Checks the canaries of every scratch slot.  Returns the number of damaged
** slots (0: intact), with a description in report, or -1 on a CUDA error
** (the error in report).
*/
int device_csa128_scratch_check(device_csa128 *k, char *report, size_t report_len);

/* Fills every scratch slot's payload with byte (e.g. DEVICE_JUNK_BYTE); 0 or nonzero. */
int device_csa128_scratch_fill(device_csa128 *k, int byte);

/* The instance's runtime, for its error message after a failure. */
device_runtime *device_csa128_runtime(device_csa128 *k);

#endif /* DEVICE_CSA128_DEVICE_H */

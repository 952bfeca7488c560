/*
** csa4_device.h: the CompressedSparseAttention operator, compression ratio
** 4, on the GPU (seed 003_9308a65268dfd821.txt; kernels in
** device/kernels/csa4.cu; the oracle is oracle_csa4_run in oracle/csa.h).
**
** Contract parity by construction, as for ratio 128: execute hands the
** tensors' metadata to csa_validate, and on the eager path the cursor to
** csa_validate_cursor, and launches nothing on an error.
**
** One execute runs the whole step on the device, for the 6-output and the
** 5-output configuration alike (the seed falls back to the host for 5):
**   1. csa_validate on the metadata;
**   2. eager only: copy total_sequence_length (8 bytes) to the host and run
**      csa_validate_cursor -- the only device-to-host copy;
**   3. state copy: present carries and past records of both caches into
**      outputs 1-4 (records from total / 4 on are zero bytes);
**   4. main compression (outputs 1, 2) and index-key compression (3, 4);
**   5. index-query finalize, scoring and top-k selection into pooled
**      scratch; in the 6-output configuration the selection is broadcast
**      over the index heads into selected_indices (output 5);
**   6. sparse sink attention: Y (output 0), reading the selection from
**      scratch and the selected records straight from the packed cache.
** While capturing, steps 3-6 are recorded with no copy, sync or allocation;
** the kernels read the cursor on the device and, on a cursor that breaks
** csa_validate_cursor's rules, raise CSA4_LATCH_CURSOR_BIT (1024) in the
** runtime's capture-error word and touch no memory.
**
** Scratch (a device_pool per instance, sized by the eager pass; capture is
** refused before one succeeded): the stage payloads below, and "weights",
** the attention's exps and probabilities, kept apart so that the scores
** payload survives the softmax.  A topk above the selection's capacity
** (CSA4_TOPK_MAX, the csa4_select kernel's shared arrays) is refused by the
** contract (CSA_CONTRACT_TOPK), so the oracle refuses it too.  A valid call
** whose compression_ratio is 128 is refused as oracle_csa4_run refuses it
** (CSA_CONTRACT_RATIO).
*/
#ifndef DEVICE_CSA4_DEVICE_H
#define DEVICE_CSA4_DEVICE_H

#include "device/csa128_device.h" /* enum device_csa128_rc (DEVICE_CSA_OK, ...) */
#include "device/device_variant.h"
#include "device/index_share_device.h"
#include "device/runtime.h"
#include "oracle/csa.h"
#include "oracle/op_error.h"

#include <stddef.h>

typedef struct device_csa4 device_csa4;

/*
** The scratch stage payloads an eager execute leaves behind, in the layouts
** of oracle/csa.h's csa4_trace (the same bytes when the kernels agree).
*/
typedef enum csa4_stage {
  CSA4_STAGE_INDEX_QUERY = 0, /* [B, S, IH, 128] f32 (IndexQueryFinalize) */
  CSA4_STAGE_INDEX_SCORES,    /* [B, S, Rci] f32, -inf past the causal limit (IndexScoring) */
  CSA4_STAGE_SELECTION,       /* [B, S, topk] i32, -1 padded (Selection) */
  CSA4_STAGE_SCORES,          /* [B, S, heads, 128 + topk] f32, -inf when not live (CandidateAssembly) */
  CSA4_STAGE_COUNT
} csa4_stage;

int device_csa4_create(device_runtime *rt, const csa_attrs *attrs, device_csa4 **out, char *err,
                       size_t err_len);

/*
** As device_csa4_create, with the kernel variant (device_variant.h): FAST is
** csa4.cu; REFERENCE takes the compressions, the index query, scoring,
** selection and the attention from csa4_reference.cu (the seed's serial
** design, one thread per batch row or (b, s) row) and the state copy and
** broadcast from csa4.cu.  Same contract, scratch and stage payloads.
*/
int device_csa4_create_variant(device_runtime *rt, const csa_attrs *attrs, device_variant variant,
                               device_csa4 **out, char *err, size_t err_len);
void device_csa4_destroy(device_csa4 *k);

/*
** One step (see above).  inputs: n_inputs entries in enum csa_input order;
** outputs: n_outputs (5 or 6) entries.  Returns enum device_csa128_rc; err is
** always set (op_error_clear on success).
*/
int device_csa4_execute(device_csa4 *k, const device_tensor *const *inputs, int n_inputs,
                        device_tensor *const *outputs, int n_outputs, op_error *err);

/*
** Stage localisation (DESIGN.md "Golden boundaries"): the launches fall
** into parts, in pipeline order, and device_csa4_execute_parts runs only
** those in `parts` (a mask of 1u << part) on the step's buffers.  The
** harness loads the oracle's boundary payloads first (into the outputs, or
** with device_csa4_stage_load) so each part runs on the oracle's inputs.
** Eager only, and only after a whole execute sized the scratch.
*/
typedef enum csa4_part {
  CSA4_PART_STATE = 0, /* past records and carries into the presents */
  CSA4_PART_MAIN,      /* CompressionUpdate: outputs 1, 2 */
  CSA4_PART_INDEX,     /* IndexKeyUpdate: outputs 3, 4 */
  CSA4_PART_QUERY,     /* IndexQueryFinalize: stage INDEX_QUERY */
  CSA4_PART_SCORE,     /* IndexScoring: INDEX_QUERY, output 3 -> INDEX_SCORES */
  CSA4_PART_SELECT,    /* Selection: INDEX_SCORES -> SELECTION (and output 5) */
  CSA4_PART_ATTENTION, /* CandidateAssembly + attention: SELECTION, output 1 -> SCORES, Y */
  CSA4_PART_COUNT
} csa4_part;
#define CSA4_PARTS_ALL ((1u << CSA4_PART_COUNT) - 1u)

int device_csa4_execute_parts(device_csa4 *k, unsigned parts, const device_tensor *const *inputs, int n_inputs,
                              device_tensor *const *outputs, int n_outputs, op_error *err);

/* Writes host into stage st's slot (len must be stage_bytes; an empty stage takes nothing); 0 or -1. */
int device_csa4_stage_load(device_csa4 *k, csa4_stage st, const void *host, size_t len);

/*
** Bytes of stage st after the last successful eager execute (0 before one);
** a captured graph's replays refill the same slots with the same shapes.
*/
size_t device_csa4_stage_bytes(const device_csa4 *k, csa4_stage st);

/* Copies stage st of the last execute to host (len >= stage_bytes); 0 or -1 (CUDA error). */
int device_csa4_stage_copy(device_csa4 *k, csa4_stage st, void *host, size_t len);

/*
** Bench support: captures the launches of `parts` alone (as execute_parts
** runs them, after an eager execute of the same tensors) into *graph, so
** that a stage can be timed as graph replays without launch latency.
** Returns enum device_csa128_rc; the caller destroys the graph.
*/
int device_csa4_capture_parts(device_csa4 *k, unsigned parts, const device_tensor *const *inputs, int n_inputs,
                              device_tensor *const *outputs, int n_outputs, struct device_graph **graph,
                              op_error *err);

int device_csa4_capture_ready(const device_csa4 *k, char *reason, size_t reason_len);
int device_csa4_scratch_check(device_csa4 *k, char *report, size_t report_len);
int device_csa4_scratch_fill(device_csa4 *k, int byte);
device_runtime *device_csa4_runtime(device_csa4 *k);

#endif /* DEVICE_CSA4_DEVICE_H */

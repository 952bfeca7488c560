/*
** index_share_internal.h: what the IndexShare launcher (index_share_device.c)
** and its stage API (index_share_stages.c) share: the instance, the device
** addresses an execute records for stage_copy, and execute with a part, which
** the stage runs call.  Private to those two files (the harness sees
** index_share_device.h).
*/
#ifndef DEVICE_INDEX_SHARE_INTERNAL_H
#define DEVICE_INDEX_SHARE_INTERNAL_H

#include "device/index_share_device.h"
#include "device/runtime.h"
#include "oracle/index_share.h"

enum is_kernel_id { IS_K_FRONTIER, IS_K_PRESENT, IS_K_PRESENT_CAPACITY, IS_K_VALIDATE, IS_K_ROWS,
                    IS_K_ROWS_ONE, IS_K_COUNT };

/*
** The kernels' names by id (index_share_create.c), the same in both
** variants' modules but for IS_K_ROWS_ONE, which only the fast module has
** (a reference instance loads it from there and never launches it).
*/
extern const char *const is_kernel_names[IS_K_COUNT];

/* Device addresses of one execute's tensors and scratch. */
typedef struct is_buffers {
  const void *query, *key, *value, *past_key, *past_value, *indices, *bias;
  void *y, *present_key, *present_value;
  float *scores, *score_trace; /* score_trace: NULL unless tracing */
  long long *status;               /* IS_STATUS_WORDS per index row */
  long long *valid_len, *write_pos; /* capacity mode: the "frontier" slot's halves */
} is_buffers;

/* What one call runs: the whole operator, or one stage of it for localisation. */
typedef enum is_part { IS_PART_ALL, IS_PART_PRESENT, IS_PART_ROWS } is_part;

struct device_index_share {
  device_runtime *rt;
  index_share_attrs attrs;
  device_pool *pool;
  void *kernels[IS_K_COUNT];
  device_variant variant; /* which module the frontier and rows kernels come from */
  int warmed, trace;
  /* the last eager call, for device_index_share_stage_copy */
  index_share_dims last_dims;
  is_buffers last;
  unsigned last_stages; /* bit s: stage s of that call is readable */
};

#define IS_STAGE_BIT(s) (1u << (s))

/*
** execute's contract on the tensors' metadata (the oracle's
** index_share_validate), then the launches of part: IS_PART_ALL is
** device_index_share_execute; IS_PART_PRESENT and IS_PART_ROWS are the stage
** runs (index_share_device.h, "Stage runs"), feed the host present
** {key, value} a rows-only run starts from (NULL otherwise).  Returns enum
** device_index_share_rc.
*/
int index_share_device_execute_part(device_index_share *k, const device_tensor *const *inputs,
                                    int n_inputs, device_tensor *const *outputs, int n_outputs,
                                    is_part part, const tensor *const *feed, op_error *err);

#endif /* DEVICE_INDEX_SHARE_INTERNAL_H */

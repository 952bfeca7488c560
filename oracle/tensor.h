/*
** tensor.h: the host tensor every layer passes around: a dtype, a rank-0..4
** shape and contiguous row-major bytes.  Oracle, cases, device launchers and
** the harness all speak this one type.
*/
#ifndef ORACLE_TENSOR_H
#define ORACLE_TENSOR_H

#include <stddef.h>

#define TENSOR_MAX_RANK 4

typedef enum dtype {
  DTYPE_NONE = 0, /* absent optional input */
  DTYPE_F32,
  DTYPE_F16,
  DTYPE_BF16,
  DTYPE_I32,
  DTYPE_I64,
  DTYPE_U8 /* raw bytes: packed caches */
} dtype;

typedef struct tensor {
  dtype dt;
  int rank;
  long long shape[TENSOR_MAX_RANK];
  void *data; /* contiguous row-major, tensor_bytes() long; owned by whoever allocated it */
} tensor;

/* Bytes per element (0 for DTYPE_NONE). */
size_t dtype_size(dtype dt);
/* "f32", "f16", "bf16", "i32", "i64", "u8", "none". */
const char *dtype_name(dtype dt);
/* Parses a dtype_name; DTYPE_NONE when unknown. */
dtype dtype_parse(const char *name);
/* 1 for f32/f16/bf16. */
int dtype_is_float(dtype dt);

long long tensor_numel(const tensor *t);
size_t tensor_bytes(const tensor *t);

/* Element i of a float tensor widened to f32 (f16/bf16 exactly). */
float tensor_load_f32(const tensor *t, long long i);
/* Stores v into element i, rounding with the storage conversion (nx_*_from_f32). */
void tensor_store_f32(tensor *t, long long i, float v);
/* Element i of an i32/i64 tensor. */
long long tensor_load_index(const tensor *t, long long i);

/* inputs[i] when it is given: NULL when i >= n, the entry is NULL, or its
** dtype is DTYPE_NONE (an absent optional input). */
const tensor *tensor_optional(const tensor *const *inputs, int n, int i);

/* Allocates zeroed data for t (dt, rank, shape set); 0 or -1 on overflow/OOM. */
int tensor_alloc(tensor *t);
void tensor_free(tensor *t);

#endif

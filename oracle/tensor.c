/*
** tensor.c: see tensor.h.
*/
#include "oracle/tensor.h"
#include "oracle/numerics/numerics.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const dtype_names[] = {"none", "f32", "f16", "bf16", "i32", "i64", "u8"};
static const size_t dtype_sizes[] = {0, 4, 2, 2, 4, 8, 1};

size_t dtype_size(dtype dt) { return (unsigned)dt <= DTYPE_U8 ? dtype_sizes[dt] : 0; }
const char *dtype_name(dtype dt) { return (unsigned)dt <= DTYPE_U8 ? dtype_names[dt] : "?"; }
int dtype_is_float(dtype dt) { return dt == DTYPE_F32 || dt == DTYPE_F16 || dt == DTYPE_BF16; }

dtype dtype_parse(const char *name) {
  int i;
  for (i = 1; i <= DTYPE_U8; i++)
    if (!strcmp(name, dtype_names[i])) return (dtype)i;
  return DTYPE_NONE;
}

long long tensor_numel(const tensor *t) {
  long long n = 1;
  int i;
  for (i = 0; i < t->rank; i++) n *= t->shape[i];
  return n;
}

size_t tensor_bytes(const tensor *t) { return (size_t)tensor_numel(t) * dtype_size(t->dt); }

float tensor_load_f32(const tensor *t, long long i) {
  switch (t->dt) {
  case DTYPE_F32: return ((const float *)t->data)[i];
  case DTYPE_F16: return nx_f16_to_f32(((const uint16_t *)t->data)[i]);
  default: return nx_bf16_to_f32(((const uint16_t *)t->data)[i]);
  }
}

void tensor_store_f32(tensor *t, long long i, float v) {
  switch (t->dt) {
  case DTYPE_F32: ((float *)t->data)[i] = v; break;
  case DTYPE_F16: ((uint16_t *)t->data)[i] = nx_f16_from_f32(v); break;
  default: ((uint16_t *)t->data)[i] = nx_bf16_from_f32(v); break;
  }
}

long long tensor_load_index(const tensor *t, long long i) {
  return t->dt == DTYPE_I64 ? ((const int64_t *)t->data)[i] : (long long)((const int32_t *)t->data)[i];
}

int tensor_alloc(tensor *t) {
  long long n = 1;
  int i;
  for (i = 0; i < t->rank; i++) {
    if (t->shape[i] < 0 || (t->shape[i] && n > (1ll << 40) / t->shape[i])) return -1;
    n *= t->shape[i];
  }
  t->data = calloc((size_t)(n ? n : 1), dtype_size(t->dt) ? dtype_size(t->dt) : 1);
  return t->data ? 0 : -1;
}

void tensor_free(tensor *t) {
  free(t->data);
  t->data = NULL;
}

const tensor *tensor_optional(const tensor *const *inputs, int n, int i) {
  if (i >= n || !inputs[i] || inputs[i]->dt == DTYPE_NONE) return NULL;
  return inputs[i];
}
